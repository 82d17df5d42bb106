//! `streambloom-bench repro compact`: the compact counter store (the
//! string-array index of the Spectral Bloom filter report, §4) against the
//! report's §6.4 (Figs. 11–14) and against fixed-width counters and a hash
//! table.
//!
//! **Storage** (Figs. 13–14). For each `N` (10^3 to 10^6, `--max-exp 7`
//! adds 10^7) a [`StringArray`] of `N` counters saturating at `2^32 − 1`,
//! measured empty, after `10·N` increments at uniformly random positions
//! (the report's "10n random insertions": counters about Poisson(10), an
//! average frequency of 10), and rebuilt from those values in one pass
//! ([`StringArray::from_values`], fresh slack). Bits a counter of the index
//! (C¹, C², level-3 slots, offset vectors) and of the base array (counters
//! and slack), beside fixed 8, 16 and 32-bit counters.
//!
//! **Time per action** (Fig. 11): for the same arrays, `new` per counter,
//! the `10·N` increments per increment (rebuilds included, the random
//! position drawn inline), `from_values` per counter, and `N` lookups (every
//! counter once, in order) per lookup; the median of several runs at small
//! `N` (at least 10^6 counters in all, at most `--reps` runs).
//!
//! **Against fixed width and a hash table** (Fig. 12), for `N` up to 10^6,
//! interleaved: the
//! structures take turns (A, B, C, A, B, C, …, `--reps` turns each), each
//! turn `--ops` operations at random indices from a fixed-seed generator
//! (fresh indices each round, the same for the three), medians reported.
//! Turns are short (4 096 operations by default), so that on a loaded
//! machine a preempted turn is an outlier the median drops. Two levels:
//!
//! - counters: `StringArray` against `Vec<u32>` and `HashMap<u64, u32>`
//!   holding the same `N` values (average 10): `get`, and `add(i, 1)`;
//! - filters, the report's comparison: a `Spectral<MinimumSelection>` with
//!   `m = N` counters and `k = 5` on the compact store, the same on
//!   `Blocked<W32>`, and a `HashMap<u64, u32>` counting the items
//!   themselves, after `10·N` insertions of items drawn uniformly from
//!   `0..N`: `estimate` and `insert` of random items (std's SipHash for
//!   the map, the library's hasher for the filters).
//!
//! After each timed increment turn the same operations are undone untimed
//! (`sub`, `remove`, decrement), so every turn starts from the same state.
//! The thread is pinned to one core (`--core`, the last by default).
//!
//! **Same answers.** The compact store must answer as `Blocked<W32>`:
//! after the timing, both filters' estimates of every item in `0..2N` are
//! compared; and Minimum Selection, Minimal Increase and Recurring Minimum
//! are run on both stores over a skewed stream (density ∝ 1/x) with
//! removals where the policy allows them. Any difference fails the run.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use streambloom::hash::{seeded_hasher, DefaultHasher};
use streambloom::rng::Rng;
use streambloom::spectral::{
    Compact, CounterStore, Footprint, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum,
    Removable, Spectral, SpectralParams, StringArray,
};
use streambloom::{Layout, W32};

use crate::output::{num, pinned, Align, Output, Report, Table};
use crate::plot::{Axis, Chart, Kind, Series};
use crate::stats::median;

/// `repro compact`'s options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The largest N as a power of ten, 3 to 7: 6 (10^6 counters) by
    /// default; 7 adds 10^7 to the storage and time-per-action sections
    /// (10^8 increments: minutes)
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(3..=7))]
    pub max_exp: u32,
    /// Timed turns per structure (interleaved; medians reported)
    #[arg(long, default_value_t = 31)]
    pub reps: usize,
    /// Operations per timed turn (short turns: on a loaded machine a
    /// preempted turn is an outlier the median drops)
    #[arg(long, default_value_t = 4096)]
    pub ops: usize,
    /// A smoke run: N = 10^3 and 10^4, 3 turns of 512 operations
    #[arg(long)]
    pub quick: bool,
    /// Core to pin the thread to (default: the last one)
    #[arg(long)]
    pub core: Option<usize>,
}

/// The method, for `repro compact --help`.
pub const LONG_ABOUT: &str = "\
Reruns §6.4 of the Spectral Bloom filter report (Figs. 11-14) on the compact
counter store (the string-array index of §4): for N = 10^3 to 10^6 counters
(--max-exp 7 adds 10^7), the bits a counter of the index and of the base
array, empty and at an average frequency of 10 (10·N increments at uniformly
random positions, as the report), beside fixed 8, 16 and 32-bit counters;
the time per action of building (new, increments, from_values) and of
lookups; then, up to 10^6, lookup and increment ns/op against Vec<u32> and
HashMap<u64, u32> counters, and a k = 5 Spectral filter on the compact store
against the same filter on Blocked<W32> counters and a HashMap counting the
items (the report's Fig. 12: about 2x slower than a hash table), interleaved
turns on a pinned thread, medians. Checks that the filter answers alike on
both stores (Minimum Selection, Minimal Increase, Recurring Minimum).";

/// Seeds: the increments' positions, the timed indices, the filters'
/// hasher, the policies' stream.
const FILL_SEED: u64 = 0xC0_11AC7;
const OPS_SEED: u64 = 0x0_95EED;
const HASH_SEED: u64 = 5;
const STREAM_SEED: u64 = 0x5_7EA4;

/// Average frequency after the insertions (the report's 10).
const FREQUENCY: usize = 10;
/// Counters an item in the filter comparison (the report's `k = 5`).
const K: u32 = 5;
/// Counter width: saturating at `2^32 − 1`, as `u32`.
const MAX_BITS: u32 = 32;
/// The largest `N` of the interleaved comparison (at 10^7 its filters'
/// 10^8 insertions alone take minutes).
const MAX_COMPARED: usize = 1_000_000;
/// The time-per-action runs cover at least this many counters in all.
const BUILD_COUNTERS: usize = 1_000_000;

/// Bits a counter, part by part.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bits {
    /// The coarse offset array C¹.
    pub coarse: f64,
    /// The level-2 coarse arrays C² with their chunk flags.
    pub level2: f64,
    /// The level-3 slots (length codes and pool indices).
    pub level3: f64,
    /// The offset vectors' pool.
    pub offset_vectors: f64,
    /// The whole index.
    pub index: f64,
    /// The base array: counters and slack.
    pub base: f64,
    /// Index and base array.
    pub total: f64,
    /// The one allocation, in whole words.
    pub allocated: f64,
}

impl Bits {
    fn of(a: &StringArray) -> Bits {
        let f: Footprint = a.footprint();
        let n = a.len() as f64;
        let per = |b: usize| b as f64 / n;
        Bits {
            coarse: per(f.coarse),
            level2: per(f.level2),
            level3: per(f.level3),
            offset_vectors: per(f.offset_vectors),
            index: per(f.index()),
            base: per(f.base),
            total: per(f.index() + f.base),
            allocated: per(a.words().len() * 64),
        }
    }
}

/// One array size: storage and time per action.
#[derive(Debug, Serialize)]
pub struct Size {
    /// Counters `N`.
    pub counters: usize,
    /// Bits a counter, all counters 0.
    pub empty: Bits,
    /// Bits a counter after `10·N` increments.
    pub incremented: Bits,
    /// Bits a counter of the same values built in one pass.
    pub static_build: Bits,
    /// Rebuilds during the `10·N` increments (of the last run).
    pub rebuilds: u64,
    /// `ΣN⌈log₂(C_i + 1)⌉ / N` at the end: the report's `N` over `m`.
    pub log_counters: f64,
    /// Runs of the time-per-action measurement (medians below).
    pub runs: usize,
    /// `StringArray::new`, ns a counter.
    pub new_ns: f64,
    /// The increments, ns an increment (rebuilds and drawing the position
    /// included).
    pub increment_ns: f64,
    /// `StringArray::from_values`, ns a counter.
    pub from_values_ns: f64,
    /// Every counter looked up once in order, ns a lookup.
    pub lookup_ns: f64,
}

/// Median ns/op of one operation on three structures, interleaved.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Three {
    /// The compact store (or the filter on it).
    pub compact: f64,
    /// Fixed-width: `Vec<u32>` (or the filter on `Blocked<W32>`).
    pub fixed: f64,
    /// `HashMap<u64, u32>`.
    pub hash_map: f64,
}

impl Three {
    /// compact / HashMap.
    pub fn vs_map(&self) -> f64 {
        self.compact / self.hash_map
    }
    /// compact / fixed width.
    pub fn vs_fixed(&self) -> f64 {
        self.compact / self.fixed
    }
}

/// The interleaved comparison at one size.
#[derive(Debug, Serialize)]
pub struct Speed {
    /// Counters `N` (and the map's keys).
    pub counters: usize,
    /// Counters: lookup.
    pub counter_lookup: Three,
    /// Counters: increment.
    pub counter_increment: Three,
    /// Filters (`k = 5`): estimate.
    pub filter_estimate: Three,
    /// Filters (`k = 5`): insert.
    pub filter_insert: Three,
    /// Operations each filter took: the `10·N` insertions, then the timed
    /// insertions and their removals.
    pub filter_operations: usize,
    /// Items (of `0..2N`) whose estimates differ between the two stores.
    pub differing_estimates: usize,
}

/// One policy's run on both stores.
#[derive(Debug, Serialize)]
pub struct SameAnswers {
    /// The policy.
    pub policy: &'static str,
    /// Counters `m` (the budget).
    pub counters: usize,
    /// Operations of the stream (insertions and removals).
    pub operations: usize,
    /// Whether removals were in the stream.
    pub removals: bool,
    /// Items queried.
    pub queried: usize,
    /// Items whose estimates differ.
    pub differing: usize,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct CompactReport {
    /// Where the timings ran.
    pub pinned: String,
    /// Timed turns per structure.
    pub reps: usize,
    /// Operations per turn.
    pub ops: usize,
    /// Storage and time per action per size.
    pub sizes: Vec<Size>,
    /// The interleaved comparison per size.
    pub speed: Vec<Speed>,
    /// The policies on both stores.
    pub policies: Vec<SameAnswers>,
}

impl CompactReport {
    /// Whether the filter answered alike on both stores everywhere.
    pub fn same_answers(&self) -> bool {
        self.speed.iter().all(|s| s.differing_estimates == 0)
            && self.policies.iter().all(|p| p.differing == 0)
    }
}

impl Report for CompactReport {
    /// Four panels against the counters N: storage in bits a counter
    /// (Figs. 13-14) with the sum of ⌈log₂(C + 1)⌉ as a limit; time per
    /// action (Fig. 11); and ns/op of the compact store against fixed
    /// width and a hash table (Fig. 12), counters and filters apart.
    fn charts(&self) -> Vec<Chart> {
        let sizes = |name: &str, get: fn(&Size) -> f64| {
            let points = self.sizes.iter().map(|s| (s.counters as f64, get(s)));
            Series::new(name, points.collect())
        };
        let n = || Axis::log("counters N");
        let storage = vec![
            sizes("total, empty", |s| s.empty.total),
            sizes("total, avg 10", |s| s.incremented.total),
            sizes("total, static (avg 10 in one pass)", |s| {
                s.static_build.total
            }),
            sizes("index, avg 10", |s| s.incremented.index),
            sizes("allocated, avg 10", |s| s.incremented.allocated),
            sizes("Σ⌈log₂(C + 1)⌉ / N, avg 10", |s| s.log_counters).with_kind(Kind::Limit),
        ];
        let actions = vec![
            sizes("new, per counter", |s| s.new_ns),
            sizes("increment", |s| s.increment_ns),
            sizes("from_values, per counter", |s| s.from_values_ns),
            sizes("lookup", |s| s.lookup_ns),
        ];
        let chart = |title: &str, y: &str, series| Chart {
            title: title.to_owned(),
            x: n(),
            y: Axis::log(y),
            series,
        };
        vec![
            chart("Storage (Figs. 13-14)", "bits a counter", storage),
            chart(
                "Time per action (Fig. 11)",
                "ns (median of the runs)",
                actions,
            ),
            chart(
                "Counters against fixed width and a HashMap (Fig. 12)",
                "ns/op (interleaved medians)",
                self.speed_series(&[
                    ("lookup", |s| s.counter_lookup),
                    ("increment", |s| s.counter_increment),
                ]),
            ),
            chart(
                "Filters, k = 5, on each store (Fig. 12)",
                "ns/op (interleaved medians)",
                self.speed_series(&[
                    ("estimate", |s| s.filter_estimate),
                    ("insert", |s| s.filter_insert),
                ]),
            ),
        ]
    }

    fn table(&self) -> String {
        let mut out = String::from(
            "Compact counters (string-array index), the report's §6.4: N counters of at \
             most 32 bits; \"avg 10\" after 10·N increments at uniformly random positions \
             (the report's procedure), \"static\" the same values built in one pass.\n\
             Storage, bits a counter (Figs. 13-14):\n",
        );
        let mut t = Table::new(&[
            ("N", Align::Right),
            ("state", Align::Left),
            ("C1", Align::Right),
            ("C2", Align::Right),
            ("L3 slots", Align::Right),
            ("offset vecs", Align::Right),
            ("index", Align::Right),
            ("base", Align::Right),
            ("index/base", Align::Right),
            ("total", Align::Right),
            ("allocated", Align::Right),
            ("vs 8-bit", Align::Right),
            ("vs 16-bit", Align::Right),
            ("vs 32-bit", Align::Right),
        ]);
        for s in &self.sizes {
            for (state, b) in [
                ("empty", &s.empty),
                ("avg 10", &s.incremented),
                ("static", &s.static_build),
            ] {
                t.row(vec![
                    s.counters.to_string(),
                    state.to_owned(),
                    num(Some(b.coarse), 2),
                    num(Some(b.level2), 2),
                    num(Some(b.level3), 2),
                    num(Some(b.offset_vectors), 2),
                    num(Some(b.index), 2),
                    num(Some(b.base), 2),
                    num(Some(b.index / b.base), 2),
                    num(Some(b.total), 2),
                    num(Some(b.allocated), 2),
                    num(Some(b.total / 8.0), 2),
                    num(Some(b.total / 16.0), 2),
                    num(Some(b.total / 32.0), 2),
                ]);
            }
        }
        out += &t.render();
        out += "fixed-width counters: N·8, N·16, N·32 bits (8, 16, 32 a counter); \"vs\" is \
                compact total / fixed.\n\
                report (Figs. 13-14, §6.4): for a bit vector (base array, slack 0.5 bits \
                an item) of N bits, the index about 1.5 N bits empty and about 2 N at avg \
                10, settling at 2-2.5 N: compare index/base (or index, if N is read as \
                the number of counters).\n";
        out += "sum of ⌈log2(C+1)⌉ a counter at avg 10 (the report's N / m): ";
        out += &self
            .sizes
            .iter()
            .map(|s| format!("{} at N = {}", num(Some(s.log_counters), 2), s.counters))
            .collect::<Vec<_>>()
            .join(", ");
        out += "\n\nTime per action (Fig. 11), ns; median of the runs:\n";
        let mut t = Table::new(&[
            ("N", Align::Right),
            ("runs", Align::Right),
            ("new /counter", Align::Right),
            ("increment", Align::Right),
            ("rebuilds", Align::Right),
            ("from_values /counter", Align::Right),
            ("lookup", Align::Right),
        ]);
        for s in &self.sizes {
            t.row(vec![
                s.counters.to_string(),
                s.runs.to_string(),
                num(Some(s.new_ns), 1),
                num(Some(s.increment_ns), 1),
                s.rebuilds.to_string(),
                num(Some(s.from_values_ns), 1),
                num(Some(s.lookup_ns), 1),
            ]);
        }
        out += &t.render();
        out += "report: constant per action from 10^3 to 10^6 (Fig. 11).\n";
        out += &format!(
            "\nAgainst fixed width and a hash table (Fig. 12), ns/op: median of {} interleaved \
             turns of {} random operations each, {}.\n",
            self.reps, self.ops, self.pinned
        );
        let mut t = Table::new(&[
            ("N", Align::Right),
            ("level", Align::Left),
            ("op", Align::Left),
            ("compact", Align::Right),
            ("fixed", Align::Right),
            ("HashMap", Align::Right),
            ("compact/fixed", Align::Right),
            ("compact/HashMap", Align::Right),
        ]);
        for s in &self.speed {
            for (level, op, x) in [
                ("counters", "lookup", &s.counter_lookup),
                ("counters", "increment", &s.counter_increment),
                ("filter k=5", "estimate", &s.filter_estimate),
                ("filter k=5", "insert", &s.filter_insert),
            ] {
                t.row(vec![
                    s.counters.to_string(),
                    level.to_owned(),
                    op.to_owned(),
                    num(Some(x.compact), 1),
                    num(Some(x.fixed), 1),
                    num(Some(x.hash_map), 1),
                    num(Some(x.vs_fixed()), 2),
                    num(Some(x.vs_map()), 2),
                ]);
            }
        }
        out += &t.render();
        out += "fixed: Vec<u32> for counters, Spectral on Blocked<W32> for the filter; \
                HashMap: std's, SipHash, keyed by index or item.\n\
                report (Fig. 12, k = 5, LEDA's chained hash table): the SBF about 2x \
                slower than the hash table at the larger sizes.\n";
        out += "\nSame answers, Spectral on the compact store against Blocked<W32>:\n";
        let mut t = Table::new(&[
            ("policy", Align::Left),
            ("m", Align::Right),
            ("operations", Align::Right),
            ("removals", Align::Left),
            ("items queried", Align::Right),
            ("differing", Align::Right),
        ]);
        for s in &self.speed {
            t.row(vec![
                "MinimumSelection (timed filters)".to_owned(),
                s.counters.to_string(),
                s.filter_operations.to_string(),
                "yes".to_owned(),
                (2 * s.counters).to_string(),
                s.differing_estimates.to_string(),
            ]);
        }
        for p in &self.policies {
            t.row(vec![
                p.policy.to_owned(),
                p.counters.to_string(),
                p.operations.to_string(),
                if p.removals { "yes" } else { "no" }.to_owned(),
                p.queried.to_string(),
                p.differing.to_string(),
            ]);
        }
        out += &t.render();
        out += &format!(
            "same answers: {}\n",
            if self.same_answers() { "yes" } else { "no" }
        );
        out
    }
}

/// An operation of the interleaved comparison: its name and its timings.
type Compared = (&'static str, fn(&Speed) -> Three);

impl CompactReport {
    /// ns/op against N of each of `ops` on the three structures.
    fn speed_series(&self, ops: &[Compared]) -> Vec<Series> {
        let mut out = Vec::new();
        for &(op, get) in ops {
            for (i, name) in ["compact", "fixed", "HashMap"].into_iter().enumerate() {
                let points = self.speed.iter().map(|s| {
                    let t = get(s);
                    (s.counters as f64, [t.compact, t.fixed, t.hash_map][i])
                });
                out.push(Series::new(format!("{op}, {name}"), points.collect()));
            }
        }
        out
    }
}

/// Runs the experiments and prints the report; an error when the filter
/// answered differently on the two stores (after printing it).
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    let core = crate::latency::pin(args.core)?;
    let r = report(args, out, core)?;
    out.emit(&r)?;
    if r.same_answers() {
        Ok(())
    } else {
        Err("the compact store answered differently from Blocked<W32>".to_owned())
    }
}

/// The sizes, reps and ops of a run.
fn plan(args: &Args) -> (Vec<usize>, usize, usize) {
    let top = if args.quick {
        4
    } else {
        args.max_exp.clamp(3, 7)
    };
    let sizes = (3..=top).map(|e| 10usize.pow(e)).collect();
    if args.quick {
        (sizes, 3, 512)
    } else {
        (sizes, args.reps.max(1), args.ops.max(1))
    }
}

/// Runs everything (progress on `out`'s bar).
fn report(args: &Args, out: &Output, core: Option<usize>) -> Result<CompactReport, String> {
    let (sizes, reps, ops) = plan(args);
    let bar = out.progress(2 * sizes.len() + 3);
    let mut storage = Vec::new();
    for &n in &sizes {
        bar.set_message(format!("storage and build, N = {n}"));
        storage.push(size(n, reps)?);
        bar.inc(1);
    }
    let mut speed = Vec::new();
    for &n in sizes.iter().filter(|&&n| n <= MAX_COMPARED) {
        bar.set_message(format!("interleaved timing, N = {n}"));
        speed.push(compare(n, reps, ops)?);
        bar.inc(1);
    }
    bar.set_message("policies on both stores");
    let (m, items) = (10_000, if args.quick { 20_000 } else { 200_000 });
    let policies = vec![
        same_answers(
            "MinimumSelection",
            MinimumSelection,
            m,
            items,
            Some(remove_both),
        )?,
        same_answers("MinimalIncrease", MinimalIncrease, m, items, None)?,
        same_answers(
            "RecurringMinimum",
            RecurringMinimum::new(),
            m,
            items,
            Some(remove_both),
        )?,
    ];
    bar.inc(3);
    bar.finish_and_clear();
    Ok(CompactReport {
        pinned: pinned(core),
        reps,
        ops,
        sizes: storage,
        speed,
        policies,
    })
}

/// Storage and time per action at `n` counters.
fn size(n: usize, reps: usize) -> Result<Size, String> {
    let err = |e: streambloom::Error| e.to_string();
    let runs = (BUILD_COUNTERS / n).clamp(1, reps);
    let (mut new_ns, mut inc_ns, mut fv_ns, mut look_ns) = (vec![], vec![], vec![], vec![]);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let mut a = StringArray::new(n, MAX_BITS).map_err(err)?;
        new_ns.push(per(start, n));
        let empty = Bits::of(&a);
        let mut rng = Rng::new(FILL_SEED);
        let start = Instant::now();
        for _ in 0..FREQUENCY * n {
            a.add(rng.below(n as u64) as usize, 1).map_err(err)?;
        }
        inc_ns.push(per(start, FREQUENCY * n));
        let start = Instant::now();
        let mut sum = 0u64;
        for i in 0..n {
            sum += u64::from(a.get(i).unwrap_or(0));
        }
        look_ns.push(per(start, n));
        if sum != (FREQUENCY * n) as u64 {
            return Err(format!(
                "N = {n}: the counters sum to {sum}, not {}",
                FREQUENCY * n
            ));
        }
        let values: Vec<u32> = (0..n).map(|i| a.get(i).unwrap_or(0)).collect();
        let start = Instant::now();
        let s = StringArray::from_values(black_box(&values), MAX_BITS).map_err(err)?;
        fv_ns.push(per(start, n));
        if (0..n).any(|i| s.get(i) != Some(values[i])) {
            return Err(format!("N = {n}: from_values does not hold its values"));
        }
        last = Some((empty, a, s, values));
    }
    let (empty, a, s, values) = last.ok_or("no run")?;
    let log_bits: u64 = values
        .iter()
        .map(|&v| u64::from(u32::BITS - v.leading_zeros()))
        .sum();
    let med = |v: Vec<f64>| median(v).unwrap_or(f64::NAN);
    Ok(Size {
        counters: n,
        empty,
        incremented: Bits::of(&a),
        static_build: Bits::of(&s),
        rebuilds: a.rebuilds(),
        log_counters: log_bits as f64 / n as f64,
        runs,
        new_ns: med(new_ns),
        increment_ns: med(inc_ns),
        from_values_ns: med(fv_ns),
        lookup_ns: med(look_ns),
    })
}

/// ns per operation since `start` for `ops` operations.
fn per(start: Instant, ops: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / ops.max(1) as f64
}

/// One structure under timing: a lookup, an increment and its undoing.
trait Timed {
    fn lookup(&self, i: u64) -> u32;
    fn increment(&mut self, i: u64);
    fn decrement(&mut self, i: u64);
}

impl Timed for StringArray {
    #[inline]
    fn lookup(&self, i: u64) -> u32 {
        self.get(i as usize).unwrap_or(0)
    }
    #[inline]
    fn increment(&mut self, i: u64) {
        let _ = self.add(i as usize, 1);
    }
    #[inline]
    fn decrement(&mut self, i: u64) {
        let _ = self.sub(i as usize, 1);
    }
}

impl Timed for Vec<u32> {
    #[inline]
    fn lookup(&self, i: u64) -> u32 {
        self.get(i as usize).copied().unwrap_or(0)
    }
    #[inline]
    fn increment(&mut self, i: u64) {
        if let Some(c) = self.get_mut(i as usize) {
            *c = c.saturating_add(1);
        }
    }
    #[inline]
    fn decrement(&mut self, i: u64) {
        if let Some(c) = self.get_mut(i as usize) {
            *c = c.saturating_sub(1);
        }
    }
}

impl Timed for HashMap<u64, u32> {
    #[inline]
    fn lookup(&self, i: u64) -> u32 {
        self.get(&i).copied().unwrap_or(0)
    }
    #[inline]
    fn increment(&mut self, i: u64) {
        let c = self.entry(i).or_insert(0);
        *c = c.saturating_add(1);
    }
    #[inline]
    fn decrement(&mut self, i: u64) {
        if let Some(c) = self.get_mut(&i) {
            *c = c.saturating_sub(1);
        }
    }
}

impl<C: CounterStore> Timed for Spectral<MinimumSelection, C, DefaultHasher> {
    #[inline]
    fn lookup(&self, i: u64) -> u32 {
        self.estimate(&i)
    }
    #[inline]
    fn increment(&mut self, i: u64) {
        self.insert(&i);
    }
    #[inline]
    fn decrement(&mut self, i: u64) {
        self.remove(&i);
    }
}

/// ns a lookup of `s` over `idx`.
fn lookups<T: Timed>(s: &T, idx: &[u64]) -> f64 {
    let start = Instant::now();
    let mut sum = 0u32;
    for &i in idx {
        sum = sum.wrapping_add(s.lookup(black_box(i)));
    }
    black_box(sum);
    per(start, idx.len())
}

/// ns an increment of `s` over `idx`; then undoes them, untimed.
fn increments<T: Timed>(s: &mut T, idx: &[u64]) -> f64 {
    let start = Instant::now();
    for &i in idx {
        s.increment(black_box(i));
    }
    let ns = per(start, idx.len());
    for &i in idx {
        s.decrement(i);
    }
    ns
}

/// Median ns/op of lookups and of increments of `a`, `b` and `c` at
/// `ops` random indices below `n` (fresh ones each turn, the same for the
/// three), in `reps` interleaved turns.
fn interleave<A: Timed, B: Timed, C: Timed>(
    (a, b, c): (&mut A, &mut B, &mut C),
    n: usize,
    ops: usize,
    reps: usize,
) -> (Three, Three) {
    let mut rng = Rng::new(OPS_SEED);
    let mut idx = vec![0u64; ops];
    let mut look = [vec![], vec![], vec![]];
    let mut inc = [vec![], vec![], vec![]];
    for _ in 0..reps {
        idx.fill_with(|| rng.below(n as u64));
        look[0].push(lookups(a, &idx));
        look[1].push(lookups(b, &idx));
        look[2].push(lookups(c, &idx));
        idx.fill_with(|| rng.below(n as u64));
        inc[0].push(increments(a, &idx));
        inc[1].push(increments(b, &idx));
        inc[2].push(increments(c, &idx));
    }
    let three = |[x, y, z]: [Vec<f64>; 3]| Three {
        compact: median(x).unwrap_or(f64::NAN),
        fixed: median(y).unwrap_or(f64::NAN),
        hash_map: median(z).unwrap_or(f64::NAN),
    };
    (three(look), three(inc))
}

/// The interleaved comparison at `n` counters.
pub fn compare(n: usize, reps: usize, ops: usize) -> Result<Speed, String> {
    let err = |e: streambloom::Error| e.to_string();
    // The 10·N insertions, drawn again for each use.
    let fill = || {
        let mut rng = Rng::new(FILL_SEED);
        (0..FREQUENCY * n).map(move |_| rng.below(n as u64))
    };

    // Counters: the same N values (average 10) in each structure.
    let mut vec = vec![0u32; n];
    for i in fill() {
        vec.increment(i);
    }
    let mut array = StringArray::from_values(&vec, MAX_BITS).map_err(err)?;
    let mut map: HashMap<u64, u32> = (0..n as u64).map(|i| (i, vec[i as usize])).collect();
    let (counter_lookup, counter_increment) =
        interleave((&mut array, &mut vec, &mut map), n, ops, reps);
    drop((array, vec, map));

    // Filters: k = 5 over m = N counters, and a map of the items, after
    // 10·N insertions of items from 0..N.
    let params = SpectralParams::<MinimumSelection>::new(n, K);
    let store = Compact::<W32>::new(&params).map_err(err)?;
    let mut compact =
        Spectral::from_store(store, MinimumSelection, seeded_hasher(HASH_SEED)).map_err(err)?;
    let mut blocked = Spectral::<MinimumSelection>::new(params, HASH_SEED).map_err(err)?;
    let mut items: HashMap<u64, u32> = HashMap::new();
    for x in fill() {
        compact.increment(x);
        blocked.increment(x);
        items.increment(x);
    }
    let (filter_estimate, filter_insert) =
        interleave((&mut compact, &mut blocked, &mut items), n, ops, reps);
    let differing_estimates = (0..2 * n as u64)
        .filter(|x| compact.estimate(x) != blocked.estimate(x))
        .count();
    Ok(Speed {
        counters: n,
        counter_lookup,
        counter_increment,
        filter_estimate,
        filter_insert,
        filter_operations: FREQUENCY * n + 2 * reps * ops,
        differing_estimates,
    })
}

/// The two filters of one policy: on the compact store, on `Blocked<W32>`.
type Pair<P> = (Spectral<P, Compact<W32>>, Spectral<P>);

/// Removes `x` from both filters of a pair.
fn remove_both<P: Removable>(pair: &mut Pair<P>, x: u64) {
    pair.0.remove(&x);
    pair.1.remove(&x);
}

/// `policy` on the compact store and on `Blocked<W32>` with `m` counters
/// over a stream of `ops` operations (items with density ∝ 1/x over
/// `0..m`; with `remove`, every fourth operation removes an item inserted
/// before): the number of items of `0..2m` whose estimates differ.
fn same_answers<P: Policy + Clone>(
    name: &'static str,
    policy: P,
    m: usize,
    ops: usize,
    remove: Option<fn(&mut Pair<P>, u64)>,
) -> Result<SameAnswers, String> {
    let err = |e: streambloom::Error| e.to_string();
    let params = SpectralParams {
        counters: m,
        k: K,
        policy: policy.clone(),
        layout: Layout::TwoBlocks,
    };
    let store = Compact::<W32>::new(&params).map_err(err)?;
    let mut pair: Pair<P> = (
        Spectral::from_store(store, policy, seeded_hasher(HASH_SEED)).map_err(err)?,
        Spectral::<P>::new(params, HASH_SEED).map_err(err)?,
    );
    let mut rng = Rng::new(STREAM_SEED);
    let ln_m = (m as f64).ln();
    let mut inserted = Vec::with_capacity(ops);
    for t in 0..ops {
        match remove {
            Some(remove) if t % 4 == 3 && !inserted.is_empty() => {
                let x = inserted.swap_remove(rng.below(inserted.len() as u64) as usize);
                remove(&mut pair, x);
            }
            _ => {
                let x = ((rng.unit() * ln_m).exp() as u64).saturating_sub(1);
                pair.0.insert(&x);
                pair.1.insert(&x);
                inserted.push(x);
            }
        }
    }
    let queried = 2 * m;
    let differing = (0..queried as u64)
        .filter(|x| pair.0.estimate(x) != pair.1.estimate(x))
        .count();
    Ok(SameAnswers {
        policy: name,
        counters: m,
        operations: ops,
        removals: remove.is_some(),
        queried,
        differing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smoke run: every section present, the counters and filters
    /// consistent, the same answers on both stores, and a table that
    /// prints them.
    #[test]
    fn quick_report_is_complete() {
        let args = Args {
            max_exp: 6,
            reps: 9,
            ops: 1 << 16,
            quick: true,
            core: None,
        };
        let out = Output {
            json: false,
            quiet: true,
            plot: None,
        };
        let r = report(&args, &out, None).unwrap();
        assert_eq!(r.sizes.len(), 2);
        assert_eq!(r.speed.len(), 2);
        assert_eq!(r.policies.len(), 3);
        assert!(r.same_answers(), "{r:?}");
        for s in &r.sizes {
            assert!(s.empty.base < 1.0 && s.incremented.base > s.empty.base);
            assert!(s.incremented.base >= s.log_counters);
            assert!((s.empty.index + s.empty.base - s.empty.total).abs() < 1e-9);
            assert!(s.incremented.allocated >= s.incremented.total);
            assert!(s.increment_ns > 0.0 && s.lookup_ns > 0.0);
        }
        for s in &r.speed {
            for x in [
                s.counter_lookup,
                s.counter_increment,
                s.filter_estimate,
                s.filter_insert,
            ] {
                assert!(x.compact > 0.0 && x.fixed > 0.0 && x.hash_map > 0.0);
            }
        }
        let text = r.table();
        assert!(text.contains("same answers: yes") && text.contains("compact/HashMap"));
        assert!(text.contains("Recurring"));
    }

    /// `--max-exp` bounds the sizes, `--quick` overrides it.
    #[test]
    fn sizes_follow_the_options() {
        let args = |max_exp, quick| Args {
            max_exp,
            reps: 5,
            ops: 100,
            quick,
            core: None,
        };
        assert_eq!(plan(&args(6, false)).0, [1_000, 10_000, 100_000, 1_000_000]);
        assert_eq!(plan(&args(7, false)).0.last(), Some(&10_000_000));
        assert_eq!(plan(&args(7, true)), (vec![1_000, 10_000], 3, 512));
    }

    /// The plot from a hand-made report: storage, time per action and the
    /// two Fig. 12 panels against N; the SVG names curves and axes.
    #[test]
    fn charts_from_a_report() {
        let bits = |total| Bits {
            coarse: 1.0,
            level2: 1.0,
            level3: 1.0,
            offset_vectors: 1.0,
            index: 4.0,
            base: total - 4.0,
            total,
            allocated: total + 1.0,
        };
        let size = |counters| Size {
            counters,
            empty: bits(6.0),
            incremented: bits(20.0),
            static_build: bits(19.0),
            rebuilds: 1,
            log_counters: 3.8,
            runs: 1,
            new_ns: 40.0,
            increment_ns: 3000.0,
            from_values_ns: 50.0,
            lookup_ns: 40.0,
        };
        let three = |compact| Three {
            compact,
            fixed: 10.0,
            hash_map: 100.0,
        };
        let speed = |counters| Speed {
            counters,
            counter_lookup: three(40.0),
            counter_increment: three(400.0),
            filter_estimate: three(410.0),
            filter_insert: three(800.0),
            filter_operations: 10,
            differing_estimates: 0,
        };
        let report = CompactReport {
            pinned: "not pinned".into(),
            reps: 1,
            ops: 1,
            sizes: vec![size(1000), size(10_000)],
            speed: vec![speed(1000), speed(10_000)],
            policies: Vec::new(),
        };
        let charts = report.charts();
        assert_eq!(charts.len(), 4);
        assert_eq!(
            charts[0].series[1].points,
            [(1000.0, 20.0), (10_000.0, 20.0)]
        );
        assert_eq!(charts[0].series[5].kind, Kind::Limit);
        let names: Vec<&str> = charts[3].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "estimate, compact",
                "estimate, fixed",
                "estimate, HashMap",
                "insert, compact",
                "insert, fixed",
                "insert, HashMap"
            ]
        );
        assert_eq!(
            charts[3].series[3].points,
            [(1000.0, 800.0), (10_000.0, 800.0)]
        );
        crate::plot::assert_draws(
            "compact",
            &charts,
            &[
                "Storage",
                "bits a counter",
                "counters N",
                "lookup, HashMap",
                "Fig. 11",
            ],
        );
    }
}
