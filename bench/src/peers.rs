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
//! rate (the share of distinct keys whose estimate exceeds their count), so
//! speed is never bought with accuracy unseen.
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
//! - `Spectral<MinimalIncrease>` against `count-min-sketch` 0.2
//!   (`CountMinSketch32`, conservative update): its width × depth 32-bit
//!   counters, `k` = its depth, both keyed (it hashes with SipHash).
//! - `Spectral<MinimumSelection>` against `cmsketch` 0.2 (`CMSketchU32`):
//!   its width × depth counters, `k` = depth, pre-hashed on both sides.
//!
//! Not compared yet: `bloom-filters` 0.1's stable filter, and
//! `probabilistic-rs` 0.6 against the timing filter (merged after this
//! command was written); see the README.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use streambloom::rng::Rng;
use streambloom::spectral::{Blocked, MinimalIncrease, MinimumSelection, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
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
0.17, StableBloom against stable-bloom-filter 0.3 (4-bit and 1-bit cells),
Spectral Minimal Increase against count-min-sketch 0.2 (conservative update)
and Minimum Selection against cmsketch 0.2. Rounds alternate ours and theirs
on a pinned thread; the report gives medians, the ratio theirs/ours (above
1: streambloom is faster) and each side's false-positive or over-count rate
at those parameters.";

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
    }
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
    // Warm both on fresh keys (to their stable state where 4·cells items
    // take at most 2^21: larger filters are compared at the same point of
    // the stream, before it), then measure the FPR of fresh keys (every
    // key below is new).
    let warm = (4 * cells).min(1 << 21) as u64;
    for i in 0..warm {
        ours.observe(&i);
        theirs.test_and_add(&i.to_le_bytes());
    }
    let ops = a.ops.max(10_000);
    let ours_fpr = fresh_rate(warm, ops, |i| ours.observe(&i));
    let theirs_fpr = fresh_rate(warm, ops, |i| theirs.test_and_add(&i.to_le_bytes()));
    let (o, t) = alternate(
        a.rounds,
        a.ops,
        warm + ops as u64,
        |i| {
            black_box(ours.observe(&i));
        },
        |i| {
            black_box(theirs.test_and_add(&i.to_le_bytes()));
        },
    );
    let label = format!("StableBloom d={d}");
    let p = format!(
        "{cells} cells of {d} bits, K = {}, P = {}, keyed",
        params.k, params.p
    );
    rows.push(row(
        &label,
        "stable-bloom-filter 0.3",
        "observe",
        bytes,
        &p,
        (o, t),
        "FPR",
        (ours_fpr, theirs_fpr),
    ));
    let (o, t) = alternate(
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
    rows.push(row(
        &label,
        "stable-bloom-filter 0.3",
        "contains",
        bytes,
        &p,
        (o, t),
        "FPR",
        (ours_fpr, theirs_fpr),
    ));
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
    let bar = out.progress(sizes.len() * 4);
    let mut rows = Vec::new();
    for &bytes in &sizes {
        bar.set_message(crate::size::size_name(bytes));
        classic(bytes, a, &mut rows)?;
        bar.inc(1);
        stable::<W4>(4, bytes, a, &mut rows)?;
        bar.inc(1);
        stable::<W1>(1, bytes, a, &mut rows)?;
        bar.inc(1);
        spectral(bytes, a, &mut rows)?;
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

    /// The quick run: every pair measured, times positive, rates in [0, 1].
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
        };
        let r = report(&args, &out).unwrap();
        assert_eq!(r.rows.len(), 4 + 2 + 2 + 4);
        for row in &r.rows {
            assert!(row.ours_ns > 0.0 && row.theirs_ns > 0.0, "{row:?}");
            assert!((0.0..=1.0).contains(&row.ours_rate), "{row:?}");
            assert!((0.0..=1.0).contains(&row.theirs_rate), "{row:?}");
        }
    }
}
