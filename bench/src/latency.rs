//! `latency`: what one item costs, per target operation, kernel
//! implementation ([`Isa`]) and filter size, on a pinned core.
//!
//! # Method
//!
//! An operation on one pre-hashed item takes a few nanoseconds, less than
//! reading the clock (`Instant::now()` costs about 20 ns), so items are not
//! timed one at a time. Instead:
//!
//! 1. The thread is pinned to one core (`core_affinity`; `--core` picks it,
//!    the last core by default).
//! 2. The clock's own cost is calibrated: the median of 10 000 empty
//!    `Instant` measurements.
//! 3. Each target is built over its memory (every page written), then warmed
//!    up with twice as many items as its memory has cache lines (at least
//!    2^20 items; 2^16 with `--quick`).
//! 4. Samples: the hashes of a batch of 64 items are drawn (SplitMix64 of a
//!    counter) before the clock starts; the 64 operations are timed with one
//!    `Instant` pair; the clock's cost is subtracted and the rest divided by
//!    64. One sample is the mean per-item cost of one batch.
//! 5. Reported: p50, p99 and p99.9 of these samples, their mean, and the
//!    throughput 1 / mean (items per second).
//!
//! The 64 items of a batch are independent, so the CPU overlaps their
//! memory accesses as it would in a stream: a sample is the per-item cost a
//! stream processor sees, not the latency of one isolated item, and one slow
//! item is diluted by its 63 neighbours, so the high percentiles show slow
//! batches (page walks, interrupts), not single slow items.
//!
//! # Targets
//!
//! The operations measured are listed in one place, [`targets`].

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use streambloom::hash;
use streambloom::spectral::{MinimumSelection, Spectral};
use streambloom::stable::{Eviction, StableBloom, StableParams};
use streambloom::store::Cells;
use streambloom::{Block, Isa, Width, W8};

const HELP: &str = "\
streambloom-bench latency: per-item latency and throughput on a pinned core

Usage: streambloom-bench latency [options]

Options:
  --sizes LIST    filter sizes, comma-separated, with an optional K, M or G
                  suffix (KiB, MiB, GiB) [default: 16K,1M,64M; --quick: 16K,1M]
  --batches N     timed batches of 64 items per target, ISA and size
                  [default: 100000; --quick: 256]
  --core N        the core to pin the thread to [default: the last core]
  --quick         a tiny smoke run
  --json          print the results as JSON instead of a table
  -h, --help      print this help

Targets:
  probe-set       kernel-level proxy of a one-line filter: pick a block and 5
                  8-bit cells from the hash, any_zero on them, then assign
                  them 255 (one run per available kernel implementation)
  stable-observe  StableBloom::<W8>::observe_hash: d = 3 (Max = 7), K = 5,
                  P the smallest whose blocked false-positive rate
                  (predicted_fpr) is at most 1 % (random-start eviction)
  stable-batch    the same filter through observe_batch_hash, 64 items a
                  call, prefetching 16 items ahead
  stable-sweep    the same filter with sweep eviction
  spectral-insert Spectral<MinimumSelection, W32>::insert_hash, k = 5
  spectral-estimate
                  Spectral<MinimumSelection, W32>::estimate_hash, k = 5,
                  on a filter loaded to γ = nk/m = 0.7
  spectral-insert-batch, spectral-estimate-batch
                  the same through insert_batch_hash / estimate_batch_hash,
                  64 items a call, prefetching 16 items ahead
  line-rmw        the memory limit: one random cache-line read-modify-write
                  per item in a buffer of the same size

Method:
  One operation costs a few ns, less than reading the clock (~20 ns), so
  items are timed in batches of 64: the batch's hashes are drawn before the
  clock starts, the 64 operations are timed with one Instant pair, the
  clock's own cost (median of 10000 empty timings) is subtracted and the
  rest divided by 64. Each sample is the mean per-item cost of one batch;
  p50/p99/p99.9 are percentiles of these samples and items/s is 1 / mean.
  Items of a batch overlap in the CPU as in a stream, so this is the
  per-item cost in a stream, not the latency of one isolated item. Before
  sampling, every target is warmed up with twice as many items as it has
  cache lines (at least 2^20; 2^16 with --quick).
";

/// Items timed together by one `Instant` pair.
const BATCH: usize = 64;
/// Cells each item selects in its block (the prototype's k).
const K: u32 = 5;
/// Seed of the item stream, fixed so runs repeat.
const SEED: u64 = 0x5EED_B100_u64;

/// A measured operation, built for a filter size and a kernel
/// implementation.
struct Target {
    /// Name in the report.
    name: &'static str,
    /// Whether the operation runs kernels, so it is measured once per
    /// available [`Isa`]; otherwise once per size.
    per_isa: bool,
    /// Builds the operation over `bytes` of memory with `isa`'s kernels and
    /// measures it with `plan`.
    run: fn(bytes: usize, isa: Isa, plan: &Plan) -> Result<Summary, String>,
}

/// Every operation `latency` measures.
///
/// **This is the one place to add a target.** A filter is measured by
/// building it for `bytes` and `isa` and handing [`Plan::measure`] a closure
/// that runs its operation on one pre-hashed item (the closure's result is
/// kept from the optimiser).
fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "probe-set",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut t = ProbeSet::new(bytes, isa)?;
                Ok(plan.measure(bytes, |h| t.op(h)))
            },
        },
        Target {
            name: "stable-observe",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Random)?;
                Ok(plan.measure(bytes, |h| f.observe_hash(h)))
            },
        },
        Target {
            name: "stable-batch",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Random)?;
                let mut out = [false; BATCH];
                Ok(plan.measure_batches(bytes, |batch| {
                    // Equal lengths: the call cannot fail.
                    let _ = f.observe_batch_hash(batch, &mut out);
                    black_box(&out);
                }))
            },
        },
        Target {
            name: "stable-sweep",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Sweep)?;
                Ok(plan.measure(bytes, |h| f.observe_hash(h)))
            },
        },
        Target {
            name: "spectral-insert",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                Ok(plan.measure(bytes, |h| f.insert_hash(h)))
            },
        },
        Target {
            name: "spectral-estimate",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                // Load it to γ = nk/m = 0.7, the paper's operating point.
                let items = (bytes / 4) as u64 * 7 / (10 * u64::from(K));
                (0..items).for_each(|i| f.insert_hash(hash::mix64(i)));
                Ok(plan.measure(bytes, |h| f.estimate_hash(h)))
            },
        },
        Target {
            name: "spectral-insert-batch",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                Ok(plan.measure_batches(bytes, |batch| f.insert_batch_hash(batch)))
            },
        },
        Target {
            name: "spectral-estimate-batch",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                let items = (bytes / 4) as u64 * 7 / (10 * u64::from(K));
                (0..items).for_each(|i| f.insert_hash(hash::mix64(i)));
                let mut counts = [0u32; BATCH];
                Ok(plan.measure_batches(bytes, |batch| {
                    // Equal lengths: the call cannot fail.
                    let _ = f.estimate_batch_hash(batch, &mut counts);
                    black_box(&counts);
                }))
            },
        },
        Target {
            name: "line-rmw",
            per_isa: false,
            run: |bytes, _, plan| {
                let mut t = LineRmw::new(bytes)?;
                Ok(plan.measure(bytes, |h| t.op(h)))
            },
        },
    ]
}

/// The Stable Bloom filter measured: `bytes` of 8-bit cells, d = 3, K = 5,
/// P the smallest that delivers at most 1 % false positives (the blocked
/// model, [`StableParams::with_smallest_p`]).
fn stable(bytes: usize, isa: Isa, eviction: Eviction) -> Result<StableBloom<W8>, String> {
    let params = StableParams {
        cells: bytes,
        bits: 3,
        k: K,
        p: 1,
        eviction,
    }
    .with_smallest_p::<W8>(0.01)
    .map_err(|e| e.to_string())?;
    let mut f = StableBloom::<W8>::new(params, SEED).map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// The Spectral filter measured: `bytes` of 32-bit counters, k = 5.
fn spectral(bytes: usize, isa: Isa) -> Result<Spectral<MinimumSelection>, String> {
    let mut f = Spectral::<MinimumSelection>::new(bytes / 4, K, SEED).map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// Kernel-level proxy of a one-line filter: probe `K` 8-bit cells of one
/// block, then set them to the maximum, through the kernel table of one
/// [`Isa`] (what a Stable Bloom filter's observe does, less the eviction).
struct ProbeSet {
    cells: Cells<W8, Vec<Block>>,
}

impl ProbeSet {
    fn new(bytes: usize, isa: Isa) -> Result<ProbeSet, String> {
        let blocks = bytes / Block::BYTES;
        let mut cells = Cells::new(vec![Block::ZERO; blocks], blocks).map_err(|e| e.to_string())?;
        cells.set_isa(isa).map_err(|e| e.to_string())?;
        Ok(ProbeSet { cells })
    }

    /// Whether every cell of `h` was set before (then sets them all).
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let probe = hash::probe::<W8>(h, self.cells.block_count(), K);
        let kernels = self.cells.kernels();
        let block = self.cells.block_mut(probe.block);
        let seen = !kernels.any_zero(block, probe.mask);
        kernels.assign(block, probe.mask, W8::MAX);
        seen
    }
}

/// The memory limit: one random cache-line read-modify-write per item, the
/// least any filter that touches one line per item can cost.
struct LineRmw {
    lines: Vec<Block>,
}

impl LineRmw {
    fn new(bytes: usize) -> Result<LineRmw, String> {
        let lines = bytes / Block::BYTES;
        if lines == 0 {
            return Err(format!("{bytes} bytes hold no cache line"));
        }
        Ok(LineRmw {
            lines: vec![Block::ZERO; lines],
        })
    }

    /// Increments the first byte of the line of `h`; whether it wrapped.
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let i = hash::block_of(h, self.lines.len());
        let byte = &mut self.lines[i].0[0];
        *byte = byte.wrapping_add(1);
        *byte == 0
    }
}

/// How much to measure.
struct Plan {
    /// Timed batches per measurement.
    batches: usize,
    /// Fewest items to warm up with.
    min_warmup: usize,
    /// Median cost of an empty `Instant` measurement, in ns.
    overhead_ns: f64,
}

impl Plan {
    /// Warms `op` up over a target of `bytes`, then samples it (see the
    /// module docs).
    fn measure<R>(&self, bytes: usize, mut op: impl FnMut(u64) -> R) -> Summary {
        self.measure_batches(bytes, |batch| {
            for &h in batch {
                black_box(op(h));
            }
        })
    }

    /// [`Plan::measure`] for an operation that takes a whole batch of
    /// hashes at once (the `*_batch` APIs).
    fn measure_batches(&self, bytes: usize, mut op: impl FnMut(&[u64; BATCH])) -> Summary {
        let mut stream = Stream(SEED);
        let mut batch = [0u64; BATCH];
        let warmup = (2 * bytes / Block::BYTES).max(self.min_warmup);
        for _ in 0..warmup.div_ceil(BATCH) {
            stream.fill(&mut batch);
            op(&batch);
        }
        let mut per_item = Vec::with_capacity(self.batches);
        for _ in 0..self.batches {
            stream.fill(&mut batch);
            // The hashes must exist before the clock starts.
            black_box(&mut batch);
            let start = Instant::now();
            op(&batch);
            let ns = start.elapsed().as_nanos() as f64;
            per_item.push((ns - self.overhead_ns).max(0.0) / BATCH as f64);
        }
        Summary::of(per_item)
    }
}

/// The item stream: SplitMix64 of a counter, standing for pre-hashed keys.
struct Stream(u64);

impl Stream {
    fn fill(&mut self, batch: &mut [u64; BATCH]) {
        for h in batch {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            *h = hash::mix64(self.0);
        }
    }
}

/// Median cost of an empty `Instant` measurement, in ns.
fn timer_overhead_ns() -> f64 {
    let mut ns: Vec<u128> = (0..10_000)
        .map(|_| Instant::now().elapsed().as_nanos())
        .collect();
    ns.sort_unstable();
    ns[ns.len() / 2] as f64
}

/// Percentiles and mean of per-item samples, in ns.
struct Summary {
    p50: f64,
    p99: f64,
    p999: f64,
    mean: f64,
}

impl Summary {
    fn of(mut samples: Vec<f64>) -> Summary {
        samples.sort_unstable_by(f64::total_cmp);
        // Nearest rank: the smallest sample with at least `permille` of
        // them at or below it.
        let rank = |permille: usize| {
            let i = (permille * samples.len()).div_ceil(1000);
            samples[i.clamp(1, samples.len()) - 1]
        };
        Summary {
            p50: rank(500),
            p99: rank(990),
            p999: rank(999),
            mean: samples.iter().sum::<f64>() / samples.len() as f64,
        }
    }

    /// Items per second, 1 / mean; `None` when the mean is zero.
    fn items_per_s(&self) -> Option<f64> {
        (self.mean > 0.0).then(|| 1e9 / self.mean)
    }
}

/// One line of the report.
struct Row {
    target: &'static str,
    isa: Option<Isa>,
    bytes: usize,
    summary: Summary,
}

/// Parsed command line.
struct Options {
    sizes: Vec<usize>,
    batches: usize,
    core: Option<usize>,
    quick: bool,
    json: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let mut sizes = None;
        let mut batches = None;
        let mut core = None;
        let mut quick = false;
        let mut json = false;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f, Some(v.to_owned())),
                None => (arg.as_str(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next().cloned())
                    .ok_or(format!("`{flag}` needs a value"))
            };
            match flag {
                "-h" | "--help" => return Ok(None),
                "--quick" => quick = true,
                "--json" => json = true,
                "--sizes" => {
                    sizes = Some(
                        value()?
                            .split(',')
                            .map(parse_size)
                            .collect::<Result<_, _>>()?,
                    )
                }
                "--batches" => match parse_usize(&value()?, flag)? {
                    0 => return Err("`--batches` must be at least 1".to_owned()),
                    n => batches = Some(n),
                },
                "--core" => core = Some(parse_usize(&value()?, flag)?),
                other => return Err(format!("unknown option `{other}`\n\n{HELP}")),
            }
        }
        let default_sizes: &[usize] = if quick {
            &[16 << 10, 1 << 20]
        } else {
            &[16 << 10, 1 << 20, 64 << 20]
        };
        Ok(Some(Options {
            sizes: sizes.unwrap_or_else(|| default_sizes.to_vec()),
            batches: batches.unwrap_or(if quick { 256 } else { 100_000 }),
            core,
            quick,
            json,
        }))
    }
}

/// A size in bytes: a number with an optional K/KiB, M/MiB or G/GiB
/// suffix, a positive multiple of 64.
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(format!("size `{s}`: unknown unit `{unit}`")),
    };
    let bytes = n
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or(format!("size `{s}` is not a number of bytes"))?;
    if bytes == 0 || !bytes.is_multiple_of(Block::BYTES) {
        return Err(format!(
            "size `{s}` must be a positive multiple of 64 bytes"
        ));
    }
    Ok(bytes)
}

fn parse_usize(s: &str, flag: &str) -> Result<usize, String> {
    s.parse()
        .map_err(|_| format!("`{flag}` takes a whole number, not `{s}`"))
}

/// `16KiB`, `1MiB`, `100B`: the largest binary unit that divides `bytes`.
fn size_name(bytes: usize) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// Pins the thread to `wanted` or the last core; the core pinned to, if any.
fn pin(wanted: Option<usize>) -> Result<Option<usize>, String> {
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    let id = match wanted {
        Some(n) => Some(
            *ids.iter()
                .find(|c| c.id == n)
                .ok_or(format!("no core {n} to pin to"))?,
        ),
        None => ids.last().copied(),
    };
    Ok(id
        .filter(|&id| core_affinity::set_for_current(id))
        .map(|id| id.id))
}

/// Runs `streambloom-bench latency` with `args` (after the command name).
pub fn main(args: &[String]) -> Result<(), String> {
    let Some(opts) = Options::parse(args)? else {
        print!("{HELP}");
        return Ok(());
    };
    let core = pin(opts.core)?;
    if core.is_none() {
        eprintln!("warning: could not pin the thread to a core; figures will be noisier");
    }
    let plan = Plan {
        batches: opts.batches,
        min_warmup: if opts.quick { 1 << 16 } else { 1 << 20 },
        overhead_ns: timer_overhead_ns(),
    };

    let mut jobs = Vec::new();
    for &bytes in &opts.sizes {
        for target in targets() {
            if target.per_isa {
                jobs.extend(
                    Isa::available().map(|isa| (bytes, Some(isa), target.name, target.run)),
                );
            } else {
                jobs.push((bytes, None, target.name, target.run));
            }
        }
    }
    let mut rows = Vec::with_capacity(jobs.len());
    for (i, &(bytes, isa, name, run)) in jobs.iter().enumerate() {
        let isa_name = isa.map_or("-", Isa::name);
        eprintln!(
            "[{}/{}] {name} {isa_name} {}",
            i + 1,
            jobs.len(),
            size_name(bytes)
        );
        let summary = run(bytes, isa.unwrap_or(Isa::Scalar), &plan)
            .map_err(|e| format!("{name} ({isa_name}, {}): {e}", size_name(bytes)))?;
        rows.push(Row {
            target: name,
            isa,
            bytes,
            summary,
        });
    }

    if opts.json {
        print!("{}", json(&rows, &plan, core));
    } else {
        print!("{}", table(&rows, &plan, core));
    }
    Ok(())
}

fn table(rows: &[Row], plan: &Plan, core: Option<usize>) -> String {
    let mut out = String::new();
    let pinned = core.map_or("not pinned".to_owned(), |c| format!("pinned to core {c}"));
    let _ = writeln!(
        out,
        "# latency: {pinned}; {} batches of {BATCH} items per line; clock cost {:.1} ns per batch, subtracted",
        plan.batches, plan.overhead_ns
    );
    let _ = writeln!(
        out,
        "{:<10} {:<9} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "target", "isa", "size", "p50 ns", "p99 ns", "p99.9 ns", "mean ns", "Mitems/s"
    );
    for r in rows {
        let s = &r.summary;
        let rate = s
            .items_per_s()
            .map_or("-".to_owned(), |r| format!("{:.1}", r / 1e6));
        let _ = writeln!(
            out,
            "{:<10} {:<9} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>10}",
            r.target,
            r.isa.map_or("-", Isa::name),
            size_name(r.bytes),
            s.p50,
            s.p99,
            s.p999,
            s.mean,
            rate
        );
    }
    out
}

fn json(rows: &[Row], plan: &Plan, core: Option<usize>) -> String {
    let num = |x: Option<f64>| match x {
        Some(x) if x.is_finite() => format!("{x:.3}"),
        _ => "null".to_owned(),
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"command\":\"latency\",\"core\":{},\"batch_items\":{BATCH},\"batches\":{},\"timer_overhead_ns\":{},\"results\":[",
        core.map_or("null".to_owned(), |c| c.to_string()),
        plan.batches,
        num(Some(plan.overhead_ns)),
    );
    for (i, r) in rows.iter().enumerate() {
        let s = &r.summary;
        let _ = write!(
            out,
            "{}{{\"target\":\"{}\",\"isa\":{},\"bytes\":{},\"p50_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"mean_ns\":{},\"items_per_s\":{}}}",
            if i == 0 { "" } else { "," },
            r.target,
            r.isa.map_or("null".to_owned(), |isa| format!("\"{}\"", isa.name())),
            r.bytes,
            num(Some(s.p50)),
            num(Some(s.p99)),
            num(Some(s.p999)),
            num(Some(s.mean)),
            num(s.items_per_s()),
        );
    }
    out.push_str("]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("16K"), Ok(16 << 10));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("128"), Ok(128));
        assert!(parse_size("100").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("1T").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert_eq!(size_name(16 << 10), "16KiB");
        assert_eq!(size_name(64 << 20), "64MiB");
        assert_eq!(size_name(192), "192B");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = Summary::of((1..=1000).rev().map(f64::from).collect());
        assert_eq!((s.p50, s.p99, s.p999), (500.0, 990.0, 999.0));
        assert_eq!(s.mean, 500.5);
        let one = Summary::of(vec![3.0]);
        assert_eq!((one.p50, one.p999), (3.0, 3.0));
    }

    #[test]
    fn options_parse() {
        let args: Vec<String> = ["--quick", "--sizes=16K,1M", "--batches", "10", "--json"]
            .map(String::from)
            .to_vec();
        let o = Options::parse(&args).unwrap().unwrap();
        assert_eq!(o.sizes, vec![16 << 10, 1 << 20]);
        assert_eq!(o.batches, 10);
        assert!(o.quick && o.json && o.core.is_none());
        assert!(Options::parse(&["--help".to_owned()]).unwrap().is_none());
        assert!(Options::parse(&["--batches".to_owned()]).is_err());
        assert!(Options::parse(&["--bogus".to_owned()]).is_err());
    }

    /// A per-ISA target measures the kernels it is asked for: it runs on
    /// every available implementation and refuses every other one (a target
    /// that ignored `isa`, or fell back to another implementation, would
    /// report figures under the wrong name). A target that runs no kernel
    /// runs whatever `isa` says. Each run yields positive, finite timings.
    #[test]
    fn every_target_runs_on_every_isa() {
        let plan = Plan {
            batches: 4,
            min_warmup: 64,
            overhead_ns: 0.0,
        };
        for t in targets() {
            for isa in Isa::ALL {
                match (t.run)(4096, isa, &plan) {
                    Ok(s) => {
                        assert!(
                            !t.per_isa || isa.is_available(),
                            "{} ran on {isa:?}",
                            t.name
                        );
                        assert!(s.mean > 0.0 && s.mean.is_finite(), "{} {isa:?}", t.name);
                    }
                    Err(e) => {
                        assert!(t.per_isa && !isa.is_available(), "{} {isa:?}: {e}", t.name);
                        assert!(e.contains("not available"), "{} {isa:?}: {e}", t.name);
                    }
                }
            }
        }
    }

    #[test]
    fn probe_set_sees_what_it_set() {
        let mut t = ProbeSet::new(4096, Isa::Scalar).unwrap();
        assert!(!t.op(42));
        assert!(t.op(42));
    }

    #[test]
    fn json_is_well_formed() {
        let plan = Plan {
            batches: 1,
            min_warmup: 0,
            overhead_ns: 20.0,
        };
        let rows = [Row {
            target: "line-rmw",
            isa: None,
            bytes: 64,
            summary: Summary::of(vec![0.0]),
        }];
        assert_eq!(
            json(&rows, &plan, Some(1)),
            "{\"command\":\"latency\",\"core\":1,\"batch_items\":64,\"batches\":1,\"timer_overhead_ns\":20.000,\"results\":[{\"target\":\"line-rmw\",\"isa\":null,\"bytes\":64,\"p50_ns\":0.000,\"p99_ns\":0.000,\"p999_ns\":0.000,\"mean_ns\":0.000,\"items_per_s\":null}]}\n"
        );
    }
}
