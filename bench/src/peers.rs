//! `peers`: each filter beside the crates a user would pick instead, at
//! equal memory and equal parameters, in one run, interleaved.
//!
//! **Method.** For each pair and size both filters are built, then timed in
//! alternating rounds (ours, theirs, ours, theirs, …; `--rounds` each), each
//! round one pass of a fixed number of operations item by item on a pinned
//! thread; the report gives each side's median ns per operation and the
//! ratio theirs/ours (above 1: streambloom is faster). Alternation and
//! medians keep a shared, noisy machine from biasing the ratio. Beside the
//! speed, each side's accuracy at those parameters: the false-positive rate
//! of fresh keys (membership and duplicate detection) or the over-count
//! rate (the share of distinct keys whose estimate exceeds their count),
//! and, for the filters that forget (Stable, Timing), the false-negative
//! rate, so speed is never bought with accuracy unseen.
//!
//! **Equal parameters**, per pair:
//!
//! - `Classic` against `sbbf-rs-safe` 0.3 (split-block, 8 bits per key in
//!   a 256-bit bucket) and `fastbloom` 0.17 (`hashes(8)`): the same bits,
//!   `k = 8`, pre-hashed `u64` keys on both sides (`insert_hash`,
//!   `contains_hash`), filled to 10 bits per key.
//! - `StableBloom` against `stable-bloom-filter` 0.3: its cells, cell width
//!   `d`, `K` and `P` (it derives `K` and `P` from a target rate: we read
//!   them back), random eviction; both keyed (it hashes bytes with FNV, we
//!   hash the `u64` with the default hasher); one block an item (the
//!   library's default is two).
//! - `StableBloom` against `bloom-filters` 0.1 (`StableBloomFilter`, a port
//!   of Go's BoomFilters): its cells and `d`, and the `K` and `P` it
//!   derives from a 1 % target, which it does not expose: [`boom_k_p`]
//!   repeats its two formulas, and the test `boom_k_p_is_its_own` checks
//!   them against its measured rate; random eviction, one block an item;
//!   both keyed (it hashes with its `DefaultBuildHasher`, SipHash, we
//!   with the default hasher). It offers `insert` and `contains`, no
//!   observe: its rates are measured with `contains` then `insert`.
//! - Both Stable pairs, accuracy ([`dedup_rates`]): the same keys through
//!   both sides, warmed to the stable state (or to the same point of the
//!   stream, before it, for filters past 2^21 items), then the FPR of
//!   fresh keys and the false-negative rate of repeats at a gap of half a
//!   set cell's expected lifetime, `Max·m/2P` (the `accuracy` command's;
//!   at most 2^21 items, like the warm-up).
//! - `Spectral<MinimalIncrease>` against `count-min-sketch` 0.2
//!   (`CountMinSketch32`, conservative update): its width × depth 32-bit
//!   counters, `k` = its depth, both keyed (it hashes with SipHash).
//! - `Spectral<MinimumSelection>` against `cmsketch` 0.2 (`CMSketchU32`):
//!   its width × depth counters, `k` = depth, pre-hashed on both sides.
//! - `TimingBloom` (a sliding window of the last `w` insertions) against
//!   `probabilistic-rs` 0.6's `ExpiringBloomFilter` (levels of a Bloom
//!   filter, the oldest cleared as the next becomes current; a query
//!   checks every level), at its defaults of 3 levels and a 1 % target a
//!   level: each level takes a third of the memory, `L` insertions a level
//!   (the most its 1 % sizing fits in that third) and the window
//!   `w = 2L`, the longest in which it forgets nothing. Its levels turn on
//!   wall-clock time, which only its `cleanup_expired_levels` reads: here
//!   its clock is the count, `rotate_levels` every `L` insertions (timed
//!   with its inserts), so both forget by insertions. Ours: the same
//!   memory in 4-bit timers, window `w`, clock block and padding by
//!   [`TimingParams::plan`]; `k` by its rule (`optimal_num_hashes`) on
//!   each side, per level for it, over the window for ours. Both keyed
//!   (it hashes bytes with Murmur3 and FNV). Accuracy: the FPR of fresh
//!   keys and the false-negative rate of keys among the last `w`
//!   insertions (0 on both sides by construction).

use std::f64::consts::LN_2;
use std::future::Future;
use std::hint::black_box;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use probabilistic_rs::ebloom::{ExpiringBloomFilter, ExpiringBloomFilterOps, ExpiringFilterConfig};

use serde::Serialize;

use streambloom::rng::Rng;
use streambloom::spectral::{Blocked, MinimalIncrease, MinimumSelection, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::timing::{TimingBloom, TimingParams};
use streambloom::{Classic, ClassicParams, W1, W32, W4};

use crate::output::{num, Align, Output, Report, Table};

/// `peers`' options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Filter sizes, comma-separated (K, M, G suffixes)
    #[arg(long, default_value = "16K,1M,64M")]
    pub sizes: String,
    /// Timed rounds per side (alternating)
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Operations per round
    #[arg(long, default_value_t = 1 << 16)]
    pub ops: usize,
    /// A smoke run: 16 KiB, 3 rounds of 4 096 operations
    #[arg(long)]
    pub quick: bool,
    /// Core to pin the thread to (default: the last one)
    #[arg(long)]
    pub core: Option<usize>,
}

/// The method, for `peers --help`.
pub const LONG_ABOUT: &str = "\
Each filter beside the crates a user would pick instead, at equal memory and
equal parameters, in one run: Classic against sbbf-rs-safe 0.3 and fastbloom
0.17, StableBloom against stable-bloom-filter 0.3 and bloom-filters 0.1
(4-bit and 1-bit cells), Spectral Minimal Increase against count-min-sketch
0.2 (conservative update) and Minimum Selection against cmsketch 0.2, and
TimingBloom against probabilistic-rs 0.6's expiring filter (3 levels, turned
by count; a window of two levels). Rounds alternate ours and theirs on a
pinned thread; the report gives medians, the ratio theirs/ours (above 1:
streambloom is faster), each side's false-positive or over-count rate at
those parameters and, for the Stable and Timing filters, each side's
false-negative rate (Stable: repeats at half a set cell's lifetime; Timing:
keys within the window).";

/// One operation of one pair at one size.
#[derive(Debug, Serialize)]
struct Row {
    ours: String,
    theirs: &'static str,
    op: &'static str,
    bytes: usize,
    /// What "equal parameters" means here.
    params: String,
    ours_ns: f64,
    theirs_ns: f64,
    /// `theirs_ns / ours_ns`.
    ratio: f64,
    /// `"FPR"` or `"over-count"`.
    rate: &'static str,
    ours_rate: f64,
    theirs_rate: f64,
    /// The false-negative rates, for the filters that forget: a Stable
    /// filter's repeats reported new, a Timing filter's keys within its
    /// window reported absent.
    ours_fnr: Option<f64>,
    theirs_fnr: Option<f64>,
}

impl Row {
    /// The row with both sides' false-negative rates.
    fn with_fnr(self, (ours, theirs): (f64, f64)) -> Row {
        Row {
            ours_fnr: Some(ours),
            theirs_fnr: Some(theirs),
            ..self
        }
    }
}

/// Everything `peers` prints.
#[derive(Debug, Serialize)]
struct PeersReport {
    core: Option<usize>,
    rounds: usize,
    ops: usize,
    rows: Vec<Row>,
}

impl Report for PeersReport {
    fn table(&self) -> String {
        let out = format!(
            "# peers: {}, {} alternating rounds of {} operations per side, medians; ratio = theirs / ours (> 1: streambloom faster)\n",
            crate::output::pinned(self.core),
            self.rounds,
            self.ops
        );
        let mut t = Table::new(&[
            ("ours", Align::Left),
            ("theirs", Align::Left),
            ("op", Align::Left),
            ("size", Align::Right),
            ("params", Align::Left),
            ("ours (ns)", Align::Right),
            ("theirs (ns)", Align::Right),
            ("ratio", Align::Right),
            ("rate", Align::Left),
            ("ours", Align::Right),
            ("theirs", Align::Right),
            ("FNR ours", Align::Right),
            ("FNR theirs", Align::Right),
        ]);
        for r in &self.rows {
            t.row(vec![
                r.ours.clone(),
                r.theirs.to_owned(),
                r.op.to_owned(),
                crate::size::size_name(r.bytes),
                r.params.clone(),
                num(Some(r.ours_ns), 2),
                num(Some(r.theirs_ns), 2),
                num(Some(r.ratio), 2),
                r.rate.to_owned(),
                num(Some(r.ours_rate), 5),
                num(Some(r.theirs_rate), 5),
                num(r.ours_fnr, 5),
                num(r.theirs_fnr, 5),
            ]);
        }
        out + &t.render()
    }
}

/// Times `op` over `ops` keys starting at `*next` (advanced), in ns per op.
fn round(ops: usize, next: &mut u64, mut op: impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    for _ in 0..ops {
        op(*next);
        *next += 1;
    }
    start.elapsed().as_nanos() as f64 / ops as f64
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Alternates `rounds` timed rounds of `ours` and `theirs`, each over its
/// own key sequence from `start`; returns the medians.
fn alternate(
    rounds: usize,
    ops: usize,
    start: u64,
    mut ours: impl FnMut(u64),
    mut theirs: impl FnMut(u64),
) -> (f64, f64) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut na, mut nb) = (start, start);
    for _ in 0..rounds {
        a.push(round(ops, &mut na, &mut ours));
        b.push(round(ops, &mut nb, &mut theirs));
    }
    (median(a), median(b))
}

/// Key `i` of a run as the pre-hashed forms take it (a fixed bijection of
/// `i`, so consecutive keys are unrelated).
fn key(i: u64) -> u64 {
    streambloom::hash::mix64(i ^ 0x9E37_79B9_7F4A_7C15)
}

/// The share of `ops` fresh keys (from `from`) `query` reports present.
fn fresh_rate(from: u64, ops: usize, mut query: impl FnMut(u64) -> bool) -> f64 {
    (from..from + ops as u64).filter(|&i| query(i)).count() as f64 / ops as f64
}

/// `Classic` against `sbbf-rs-safe` and `fastbloom`.
fn classic(bytes: usize, a: &Args, rows: &mut Vec<Row>) -> Result<(), String> {
    let bits = bytes * 8;
    let n = bits / 10;
    let e = |e: streambloom::Error| e.to_string();
    let mut ours = Classic::new(ClassicParams::new(bits, 8), 1).map_err(e)?;
    let mut sbbf = sbbf_rs_safe::Filter::new(8, bytes);
    let mut fast = fastbloom::BloomFilter::with_num_bits(bits).hashes(8);
    for i in 0..n as u64 {
        ours.insert_hash(key(i));
        sbbf.insert_hash(key(i));
        fast.insert_hash(key(i));
    }
    let fresh = 1u64 << 40;
    let ours_fpr = fresh_rate(fresh, n.max(a.ops), |i| ours.contains_hash(key(i)));
    let params = format!("{bits} bits, k = 8, {n} keys, pre-hashed");
    for (theirs, theirs_fpr) in [
        (
            "sbbf-rs-safe 0.3",
            fresh_rate(fresh, n.max(a.ops), |i| sbbf.contains_hash(key(i))),
        ),
        (
            "fastbloom 0.17",
            fresh_rate(fresh, n.max(a.ops), |i| fast.contains_hash(key(i))),
        ),
    ] {
        let is_sbbf = theirs.starts_with("sbbf");
        // Inserts re-insert the filled keys (the state stays put).
        let (o, t) = alternate(
            a.rounds,
            a.ops,
            0,
            |i| {
                black_box(ours.insert_hash(key(i % n as u64)));
            },
            |i| {
                if is_sbbf {
                    black_box(sbbf.insert_hash(key(i % n as u64)));
                } else {
                    black_box(fast.insert_hash(key(i % n as u64)));
                }
            },
        );
        rows.push(row(
            "Classic",
            theirs,
            "insert",
            bytes,
            &params,
            (o, t),
            "FPR",
            (ours_fpr, theirs_fpr),
        ));
        let (o, t) = alternate(
            a.rounds,
            a.ops,
            fresh,
            |i| {
                black_box(ours.contains_hash(key(i)));
            },
            |i| {
                if is_sbbf {
                    black_box(sbbf.contains_hash(key(i)));
                } else {
                    black_box(fast.contains_hash(key(i)));
                }
            },
        );
        rows.push(row(
            "Classic",
            theirs,
            "contains",
            bytes,
            &params,
            (o, t),
            "FPR",
            (ours_fpr, theirs_fpr),
        ));
    }
    Ok(())
}

/// A [`Row`].
#[allow(clippy::too_many_arguments)]
fn row(
    ours: &str,
    theirs: &'static str,
    op: &'static str,
    bytes: usize,
    params: &str,
    (ours_ns, theirs_ns): (f64, f64),
    rate: &'static str,
    (ours_rate, theirs_rate): (f64, f64),
) -> Row {
    Row {
        ours: ours.to_owned(),
        theirs,
        op,
        bytes,
        params: params.to_owned(),
        ours_ns,
        theirs_ns,
        ratio: theirs_ns / ours_ns,
        rate,
        ours_rate,
        theirs_rate,
        ours_fnr: None,
        theirs_fnr: None,
    }
}

/// Both sides' accuracy as duplicate detectors, each observing the same
/// keys (`observe`: whether the key was reported seen, then it is
/// recorded): warmed on `warm` fresh keys, then the FPR of `q` fresh keys
/// (reported seen though new), then the FNR of repeats at `gap` (blocks of
/// `gap` new keys, each block followed by its first keys again, each
/// `gap` items after its first occurrence, until `q` repeats): the share
/// reported new. Returns `(ours, theirs)` FPRs and FNRs and the first key
/// the stream did not use.
fn dedup_rates(
    warm: u64,
    q: usize,
    gap: u64,
    mut ours: impl FnMut(u64) -> bool,
    mut theirs: impl FnMut(u64) -> bool,
) -> ((f64, f64), (f64, f64), u64) {
    let run = |observe: &mut dyn FnMut(u64) -> bool| {
        (0..warm).for_each(|i| {
            observe(i);
        });
        let fpr = fresh_rate(warm, q, &mut *observe);
        let (mut next, mut repeats, mut lost) = (warm + q as u64, 0u64, 0u64);
        while repeats < q as u64 {
            (next..next + gap).for_each(|i| {
                observe(i);
            });
            let again = gap.min(q as u64 - repeats);
            lost += (next..next + again).filter(|&i| !observe(i)).count() as u64;
            repeats += again;
            next += gap;
        }
        (fpr, lost as f64 / repeats as f64, next)
    };
    let (ours_fpr, ours_fnr, next) = run(&mut ours);
    let (theirs_fpr, theirs_fnr, _) = run(&mut theirs);
    ((ours_fpr, theirs_fpr), (ours_fnr, theirs_fnr), next)
}

/// The Stable pairs' stream: warm-up on `4·cells` fresh keys (the stable
/// state), at most 2^21 (larger filters are compared at the same point of
/// the stream, before it); repeats at half a set cell's expected lifetime,
/// `Max·m/2P` items (the `accuracy` command's gap), at most 2^21 as well;
/// `ops`, at least 10 000, fresh keys and repeats.
fn dedup_stream(cells: usize, d: u8, p: usize, a: &Args) -> (u64, usize, u64) {
    let max = (1u64 << d) - 1;
    let warm = (4 * cells).min(1 << 21) as u64;
    let gap = (max * cells as u64 / (2 * p.max(1) as u64)).clamp(1, 1 << 21);
    (warm, a.ops.max(10_000), gap)
}

/// `StableBloom<W>` (cells of `d` bits) against `stable-bloom-filter`.
fn stable<W: streambloom::Width>(
    d: u8,
    bytes: usize,
    a: &Args,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    use stable_bloom_filter::Filter as _;
    let cells = bytes * 8 / usize::from(d);
    let mut theirs = stable_bloom_filter::stable::StableBloomFilter::new(cells, d, 0.01);
    let params = StableParams {
        cells,
        bits_per_cell: u32::from(d),
        k: theirs.k() as u32,
        p: theirs.p(),
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
    };
    let mut ours = StableBloom::<W>::new(params, 1).map_err(|e| e.to_string())?;
    let (warm, q, gap) = dedup_stream(cells, d, params.p, a);
    let (fpr, fnr, next) = dedup_rates(
        warm,
        q,
        gap,
        |i| ours.observe(&i),
        |i| theirs.test_and_add(&i.to_le_bytes()),
    );
    let observe = alternate(
        a.rounds,
        a.ops,
        next,
        |i| {
            black_box(ours.observe(&i));
        },
        |i| {
            black_box(theirs.test_and_add(&i.to_le_bytes()));
        },
    );
    let contains = alternate(
        a.rounds,
        a.ops,
        1 << 40,
        |i| {
            black_box(ours.contains(&i));
        },
        |i| {
            black_box(theirs.test(&i.to_le_bytes()));
        },
    );
    let p = format!(
        "{cells} cells of {d} bits, K = {}, P = {}, keyed, repeats at gap {gap}",
        params.k, params.p
    );
    let label = format!("StableBloom d={d}");
    for (op, t) in [("observe", observe), ("contains", contains)] {
        rows.push(
            row(
                &label,
                "stable-bloom-filter 0.3",
                op,
                bytes,
                &p,
                t,
                "FPR",
                fpr,
            )
            .with_fnr(fnr),
        );
    }
    Ok(())
}

/// `bloom-filters` 0.1's `K` and `P` for `m` cells of `d` bits and a
/// target rate `fp`: its `compute_k_num` (`K = ⌈-log2 fp⌉`, taken into
/// `1..=m`) and `compute_p_num` (`P = ⌈1 / ((1/(1 - fp^{1/K})^{1/Max} - 1)
/// (1/K - 1/m))⌉`, at least 1, `Max = 2^d - 1`), which it keeps private
/// (`hash.rs`, `stable.rs`), so that ours is set identically.
fn boom_k_p(m: usize, d: u8, fp: f64) -> (u32, usize) {
    let k = (fp.log2().abs().ceil() as usize).clamp(1, m);
    let (mf, kf) = (m as f64, k as f64);
    let max = 2f64.powi(i32::from(d)) - 1.0;
    let sub_denom = (1.0 - fp.powf(1.0 / kf)).powf(1.0 / max);
    let denom = (1.0 / sub_denom - 1.0) * (1.0 / kf - 1.0 / mf);
    let p = (1.0 / denom).ceil();
    (k as u32, if p <= 0.0 { 1 } else { p as usize })
}

/// `bloom-filters`' Stable filter as this module builds it: hashing with
/// its own `DefaultBuildHasher` (SipHash-1-3), seed 0.
type BoomStable = bloom_filters::StableBloomFilter<
    bloom_filters::DefaultBuildHashKernels<bloom_filters::DefaultBuildHasher>,
>;

/// `bloom-filters`' Stable filter of `cells` cells of `d` bits, its `K`
/// and `P` derived from a 1 % target ([`boom_k_p`]).
fn boom_stable(cells: usize, d: u8) -> BoomStable {
    BoomStable::new(
        cells,
        d,
        0.01,
        bloom_filters::DefaultBuildHashKernels::new(0, bloom_filters::DefaultBuildHasher),
    )
}

/// `StableBloom<W>` (cells of `d` bits) against `bloom-filters`.
fn boom<W: streambloom::Width>(
    d: u8,
    bytes: usize,
    a: &Args,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    use bloom_filters::BloomFilter as _;
    let cells = bytes * 8 / usize::from(d);
    let mut theirs = boom_stable(cells, d);
    let (k, p) = boom_k_p(cells, d, 0.01);
    let params = StableParams {
        cells,
        bits_per_cell: u32::from(d),
        k,
        p,
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
    };
    let mut ours = StableBloom::<W>::new(params, 1).map_err(|e| e.to_string())?;
    let (warm, q, gap) = dedup_stream(cells, d, p, a);
    let (fpr, fnr, next) = dedup_rates(
        warm,
        q,
        gap,
        |i| ours.observe(&i),
        |i| {
            let seen = theirs.contains(&i);
            theirs.insert(&i);
            seen
        },
    );
    let insert = alternate(
        a.rounds,
        a.ops,
        next,
        |i| ours.insert(&i),
        |i| theirs.insert(&i),
    );
    let contains = alternate(
        a.rounds,
        a.ops,
        1 << 40,
        |i| {
            black_box(ours.contains(&i));
        },
        |i| {
            black_box(theirs.contains(&i));
        },
    );
    let p = format!("{cells} cells of {d} bits, K = {k}, P = {p}, keyed, repeats at gap {gap}");
    let label = format!("StableBloom d={d}");
    for (op, t) in [("insert", insert), ("contains", contains)] {
        rows.push(row(&label, "bloom-filters 0.1", op, bytes, &p, t, "FPR", fpr).with_fnr(fnr));
    }
    Ok(())
}

/// A skewed stream over `0..u`: `⌊u^x⌋` for uniform `x` (density about
/// `1/key`, a Zipf-1-like law), `n` keys.
fn skewed(n: usize, u: u64, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| ((u as f64).powf(rng.unit()) as u64).min(u - 1))
        .collect()
}

/// The share of distinct keys of `stream` whose estimate exceeds their
/// count.
fn over_count(stream: &[u64], mut estimate: impl FnMut(u64) -> u64) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for &k in stream {
        *counts.entry(k).or_insert(0u64) += 1;
    }
    let over = counts.iter().filter(|&(&k, &c)| estimate(k) > c).count();
    over as f64 / counts.len() as f64
}

/// `Spectral` against `count-min-sketch` (Minimal Increase) and `cmsketch`
/// (Minimum Selection), their width × depth counters of 32 bits.
fn spectral(bytes: usize, a: &Args, rows: &mut Vec<Row>) -> Result<(), String> {
    let e = |e: streambloom::Error| e.to_string();
    // count-min-sketch: width 2·capacity/tolerance, depth from probability
    // (0.96875: 5 rows); a power-of-two width (it masks the hash).
    let depth = 5usize;
    let width = (bytes / 4 / depth).next_power_of_two() / 2;
    let mut cms = count_min_sketch::CountMinSketch32::<u64>::new(width / 2, 0.968_75, 1.0)
        .map_err(str::to_owned)?;
    let counters = width * depth;
    let mut mi = Spectral::<MinimalIncrease, Blocked<W32>>::new(
        SpectralParams::new(counters, depth as u32).with_policy(MinimalIncrease),
        1,
    )
    .map_err(e)?;
    // cmsketch: width ⌈2/eps⌉, depth from the confidence; the width that
    // fills `bytes` at the depth 0.99 gives.
    let rows_at = cmsketch::CMSketchU32::new(1.0, 0.99).depth();
    let cm_width = (bytes / 4 / rows_at).max(2);
    let mut cm = cmsketch::CMSketchU32::new(2.0 / cm_width as f64, 0.99);
    let cm_counters = cm.width() * cm.depth();
    let mut ms = Spectral::<MinimumSelection, Blocked<W32>>::new(
        SpectralParams::new(cm_counters, cm.depth() as u32),
        1,
    )
    .map_err(e)?;
    // A stream of 2 keys per counter over a universe of one per counter.
    let stream = skewed(2 * counters, counters as u64, 7);
    for &k in &stream {
        cms.increment(&k);
        mi.insert(&k);
        cm.inc(key(k));
        ms.insert_hash(key(k));
    }
    let over_mi = over_count(&stream, |k| u64::from(mi.estimate(&k)));
    let over_cms = over_count(&stream, |k| u64::from(cms.estimate(&k)));
    let over_ms = over_count(&stream, |k| u64::from(ms.estimate_hash(key(k))));
    let over_cm = over_count(&stream, |k| u64::from(cm.estimate(key(k))));
    let u = counters as u64;
    let p = format!("{width} × {depth} u32 counters, k = {depth}, keyed");
    let (o, t) = alternate(
        a.rounds,
        a.ops,
        0,
        |i| mi.insert(&(i % u)),
        |i| cms.increment(&(i % u)),
    );
    rows.push(row(
        "Spectral<MinimalIncrease>",
        "count-min-sketch 0.2",
        "insert",
        bytes,
        &p,
        (o, t),
        "over-count",
        (over_mi, over_cms),
    ));
    let (o, t) = alternate(
        a.rounds,
        a.ops,
        0,
        |i| {
            black_box(mi.estimate(&(i % u)));
        },
        |i| {
            black_box(cms.estimate(&(i % u)));
        },
    );
    rows.push(row(
        "Spectral<MinimalIncrease>",
        "count-min-sketch 0.2",
        "estimate",
        bytes,
        &p,
        (o, t),
        "over-count",
        (over_mi, over_cms),
    ));
    let p = format!(
        "{} × {} u32 counters, k = {}, pre-hashed",
        cm.width(),
        cm.depth(),
        cm.depth()
    );
    let (o, t) = alternate(
        a.rounds,
        a.ops,
        0,
        |i| ms.insert_hash(key(i % u)),
        |i| cm.inc(key(i % u)),
    );
    rows.push(row(
        "Spectral<MinimumSelection>",
        "cmsketch 0.2",
        "insert",
        bytes,
        &p,
        (o, t),
        "over-count",
        (over_ms, over_cm),
    ));
    let (o, t) = alternate(
        a.rounds,
        a.ops,
        0,
        |i| {
            black_box(ms.estimate_hash(key(i % u)));
        },
        |i| {
            black_box(cm.estimate(key(i % u)));
        },
    );
    rows.push(row(
        "Spectral<MinimumSelection>",
        "cmsketch 0.2",
        "estimate",
        bytes,
        &p,
        (o, t),
        "over-count",
        (over_ms, over_cm),
    ));
    Ok(())
}

/// `probabilistic-rs`' expiring filter at its defaults: 3 levels (its
/// `num_levels`), each sized for a 1 % rate (its `target_fpr`).
const LEVELS: usize = 3;
const LEVEL_FPR: f64 = 0.01;

/// `probabilistic-rs`' expiring filter with a count for its clock: its
/// levels rotate every `per_level` insertions (`rotate_levels`, which
/// without persistence completes at once), so it forgets by insertions as
/// ours does; its wall-clock expiry (`cleanup_expired_levels`) is never
/// called. Keys are the `u64`'s bytes. Its operations return `Result`s:
/// the first error is kept for [`check`](Self::check).
struct Expiring {
    filter: ExpiringBloomFilter,
    per_level: u64,
    /// Insertions into the current level.
    since: u64,
    error: Option<String>,
}

impl Expiring {
    /// An empty filter of `LEVELS` levels of `per_level` insertions.
    fn new(per_level: usize) -> Result<Expiring, String> {
        let config = ExpiringFilterConfig {
            capacity_per_level: per_level,
            target_fpr: LEVEL_FPR,
            // Its default; only `cleanup_expired_levels` reads it.
            level_duration: Duration::from_secs(3600),
            num_levels: LEVELS,
            persistence: None,
        };
        Ok(Expiring {
            filter: ExpiringBloomFilter::new(config).map_err(|e| e.to_string())?,
            per_level: per_level as u64,
            since: 0,
            error: None,
        })
    }

    /// Inserts `key` into the current level, first rotating if that level
    /// is full.
    fn insert(&mut self, key: u64) {
        if self.since == self.per_level {
            self.rotate();
            self.since = 0;
        }
        if let Err(e) = self.filter.insert(&key.to_le_bytes()) {
            self.fail(e.to_string());
        }
        self.since += 1;
    }

    /// Clears the oldest level and makes it current, polling its async
    /// `rotate_levels` once: with no persistence it awaits nothing.
    fn rotate(&mut self) {
        let polled = std::pin::pin!(self.filter.rotate_levels())
            .poll(&mut Context::from_waker(Waker::noop()));
        match polled {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => self.fail(e.to_string()),
            Poll::Pending => self.fail("its rotate_levels waited, with no persistence".to_owned()),
        }
    }

    /// Whether any level holds `key`.
    fn contains(&mut self, key: u64) -> bool {
        match self.filter.contains(&key.to_le_bytes()) {
            Ok(found) => found,
            Err(e) => {
                self.fail(e.to_string());
                false
            }
        }
    }

    /// Keeps `e` unless an error came first (the first one is the cause).
    fn fail(&mut self, e: String) {
        self.error.get_or_insert(format!("probabilistic-rs: {e}"));
    }

    /// The first error it returned, if any.
    fn check(&self) -> Result<(), String> {
        self.error.clone().map_or(Ok(()), Err)
    }
}

/// `TimingBloom` against `probabilistic-rs`' expiring filter, in `bytes`
/// each: its `LEVELS` levels of a third each, `L` insertions a level (the
/// most its `LEVEL_FPR` sizing fits), window `w = (LEVELS - 1)·L`, the
/// longest it forgets nothing of; ours, 4-bit timers over the same window.
fn timing(bytes: usize, a: &Args, rows: &mut Vec<Row>) -> Result<(), String> {
    use probabilistic_rs::{optimal_bit_vector_size, optimal_num_hashes};
    let e = |e: streambloom::Error| e.to_string();
    let level_bits = bytes * 8 / LEVELS;
    let fits = |n: usize| optimal_bit_vector_size(n, LEVEL_FPR) <= level_bits;
    // Its sizing, m = ⌈-n ln fpr / ln² 2⌉, solved for n, then stepped
    // down past its rounding.
    let mut per_level = (level_bits as f64 * LN_2 * LN_2 / -LEVEL_FPR.ln()) as usize;
    while per_level > 0 && !fits(per_level) {
        per_level -= 1;
    }
    if per_level < 2 {
        return Err(format!(
            "{bytes} bytes: too small for probabilistic-rs' levels of at least 2 insertions"
        ));
    }
    let m = optimal_bit_vector_size(per_level, LEVEL_FPR);
    let k = optimal_num_hashes(per_level, m);
    let mut theirs = Expiring::new(per_level)?;
    let window = (LEVELS - 1) as u64 * per_level as u64;
    let cells = bytes * 2;
    let ours_k = optimal_num_hashes(window as usize, cells).max(1) as u32;
    let params = TimingParams::plan::<W4>(cells, ours_k, window, 4, Layout::OneBlock).map_err(e)?;
    let mut ours = TimingBloom::<W4>::new(params, 1).map_err(e)?;
    // Warm both on fresh keys past a full turn of its levels (at most 2^21,
    // as the Stable pairs'), then: keys among the last w insertions,
    // spread over the window (none may be missed), and fresh keys.
    let warm = (2 * window).min(1 << 21);
    for i in 0..warm {
        ours.insert(&i);
        theirs.insert(i);
    }
    let q = a.ops.max(10_000);
    let span = window.min(warm);
    let stride = (span / q as u64).max(1) as usize;
    let recent = || (warm - span..warm).step_by(stride);
    let lost = |found: &mut dyn FnMut(u64) -> bool| {
        recent().filter(|&i| !found(i)).count() as f64 / recent().count() as f64
    };
    let fnr = (
        lost(&mut |i| ours.contains(&i)),
        lost(&mut |i| theirs.contains(i)),
    );
    let fpr = (
        fresh_rate(1 << 40, q, |i| ours.contains(&i)),
        fresh_rate(1 << 40, q, |i| theirs.contains(i)),
    );
    let insert = alternate(
        a.rounds,
        a.ops,
        warm,
        |i| ours.insert(&i),
        |i| theirs.insert(i),
    );
    let contains = alternate(
        a.rounds,
        a.ops,
        1 << 40,
        |i| {
            black_box(ours.contains(&i));
        },
        |i| {
            black_box(theirs.contains(i));
        },
    );
    theirs.check()?;
    let p = format!(
        "w = {window}: {LEVELS} levels × {m} bits, L = {per_level}, k = {k} | \
         {} 4-bit timers, k = {ours_k}, B = {}, keyed",
        ours.cells(),
        params.block
    );
    for (op, t) in [("insert", insert), ("contains", contains)] {
        rows.push(
            row(
                "TimingBloom 4-bit",
                "probabilistic-rs 0.6",
                op,
                bytes,
                &p,
                t,
                "FPR",
                fpr,
            )
            .with_fnr(fnr),
        );
    }
    Ok(())
}

/// Runs every pair at every size and prints the report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&report(args, out)?)
}

/// Measures every pair at every size.
fn report(args: &Args, out: &Output) -> Result<PeersReport, String> {
    let quick = Args {
        sizes: "16K".to_owned(),
        rounds: 3,
        ops: 4096,
        quick: true,
        core: args.core,
    };
    let a = if args.quick { &quick } else { args };
    if a.rounds == 0 || a.ops == 0 {
        return Err("--rounds and --ops must be at least 1".to_owned());
    }
    let sizes = a
        .sizes
        .split(',')
        .map(crate::size::parse_size)
        .collect::<Result<Vec<_>, _>>()?;
    let core = crate::latency::pin(a.core)?;
    let bar = out.progress(sizes.len() * 7);
    let mut rows = Vec::new();
    for &bytes in &sizes {
        bar.set_message(crate::size::size_name(bytes));
        classic(bytes, a, &mut rows)?;
        bar.inc(1);
        stable::<W4>(4, bytes, a, &mut rows)?;
        bar.inc(1);
        stable::<W1>(1, bytes, a, &mut rows)?;
        bar.inc(1);
        boom::<W4>(4, bytes, a, &mut rows)?;
        bar.inc(1);
        boom::<W1>(1, bytes, a, &mut rows)?;
        bar.inc(1);
        spectral(bytes, a, &mut rows)?;
        bar.inc(1);
        timing(bytes, a, &mut rows)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(PeersReport {
        core,
        rounds: a.rounds,
        ops: a.ops,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick run: every pair measured, times positive, rates in
    /// [0, 1]; the Stable and Timing pairs with both sides' false-negative
    /// rates, none for the Timing pair's keys within the window (ours by
    /// its guarantee, theirs as `w` is the span its levels keep), and
    /// fresh-key FPRs that are rates, not noise: above 0, below a half.
    #[test]
    fn quick_run_measures_every_pair() {
        let args = Args {
            sizes: String::new(),
            rounds: 1,
            ops: 1,
            quick: true,
            core: None,
        };
        let out = Output {
            json: false,
            quiet: true,
            plot: None,
        };
        let r = report(&args, &out).unwrap();
        assert_eq!(r.rows.len(), 4 + 2 + 2 + 2 + 2 + 4 + 2);
        for row in &r.rows {
            assert!(row.ours_ns > 0.0 && row.theirs_ns > 0.0, "{row:?}");
            assert!((0.0..=1.0).contains(&row.ours_rate), "{row:?}");
            assert!((0.0..=1.0).contains(&row.theirs_rate), "{row:?}");
            let forgets = row.ours.starts_with("StableBloom") || row.ours.starts_with("Timing");
            assert_eq!(row.ours_fnr.is_some(), forgets, "{row:?}");
            assert_eq!(row.theirs_fnr.is_some(), forgets, "{row:?}");
            for fnr in [row.ours_fnr, row.theirs_fnr].into_iter().flatten() {
                assert!((0.0..=1.0).contains(&fnr), "{row:?}");
            }
            if forgets {
                assert!(row.ours_rate > 0.0 && row.ours_rate < 0.5, "{row:?}");
                assert!(row.theirs_rate > 0.0 && row.theirs_rate < 0.5, "{row:?}");
            }
            if row.ours.starts_with("Timing") {
                assert_eq!(
                    (row.ours_fnr, row.theirs_fnr),
                    (Some(0.0), Some(0.0)),
                    "{row:?}"
                );
            }
        }
    }

    /// [`boom_k_p`] gives `bloom-filters`' own `K` and `P`: `K = 7` for
    /// 1 %, and the least `P` whose paper's bound (the model it solves for
    /// `P`) meets 1 %; and its filter, unblocked as the bound assumes,
    /// delivers that rate at the stable state: within 30 % over 200 000
    /// fresh keys (reruns spread by ±5 %: its eviction draws from the
    /// thread's random generator, unseeded).
    #[test]
    fn boom_k_p_is_its_own() {
        use bloom_filters::BloomFilter as _;
        for (cells, d) in [(1 << 15, 4u8), (1 << 17, 1)] {
            let (k, p) = boom_k_p(cells, d, 0.01);
            assert_eq!(k, 7);
            let params = StableParams {
                cells,
                bits_per_cell: u32::from(d),
                k,
                p,
                eviction: Eviction::Random,
                layout: Layout::OneBlock,
            };
            let bound = params.paper_false_positive_bound(cells).unwrap();
            let looser = StableParams { p: p - 1, ..params }
                .paper_false_positive_bound(cells)
                .unwrap();
            assert!(bound <= 0.01 && looser > 0.01, "{bound} {looser}");
            let mut theirs = boom_stable(cells, d);
            for i in 0..4 * cells as u64 {
                theirs.insert(&i);
            }
            let fpr = fresh_rate(1 << 40, 200_000, |i| {
                let seen = theirs.contains(&i);
                theirs.insert(&i);
                seen
            });
            assert!(
                (fpr / bound - 1.0).abs() < 0.3,
                "d = {d}: {fpr} against {bound}"
            );
        }
    }
}
