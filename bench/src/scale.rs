//! `scale`: items per second with 1..N pinned threads, share-nothing.
//!
//! # Method
//!
//! A filter of `--memory` bytes is split into `t` shards of `memory / t`
//! bytes each (the same total memory at every thread count; with
//! `--per-shard`, `memory` bytes each: weak scaling), one per thread;
//! thread `i` is pinned to core `i mod cores` and is the only one to touch
//! shard `i`. An item goes to shard `⌊h·t / 2^64⌋`, the high bits of its hash
//! `h` (the filters place an item by `mix64(h)`, so the shard and the place
//! inside it use independent bits, and every shard's cells are all in use).
//!
//! Each round draws `--items` fresh hashes (SplitMix64 of a counter) and
//! routes them into one list per shard before the clock starts (the router
//! is the producer's work, not the filters'). The `t` threads then wait at a
//! barrier, and each runs its shard's list through the filter's batch API
//! (64 items a call) and reads its own clock. A round lasts as long as its
//! slowest thread; its rate is `items / that time`. The thread counts take
//! turns, round by round (1, 2, …, N, 1, 2, …), so that a shared machine's
//! load falls on every count alike. The first round warms the shards up
//! (every page written, the filter past its first fill) and is not
//! counted; the report gives the median rate over `--rounds` rounds and its
//! ratio to the median rate of one thread.
//!
//! Rounds are short (2^16 items, a few ms) and many (51) on purpose: on a
//! machine shared with other jobs, a long round is cut by the scheduler in
//! proportion to the load, and one thread's twice-longer rounds would be
//! cut more often than two threads' halves. The median of short rounds is
//! the rate when the threads hold their cores; `min` in the table shows
//! what preemption cost.
//!
//! **Adding a filter** is one entry in [`filters`]: a name, what it runs,
//! and a function building one shard of `bytes` that runs a batch.

use std::sync::Barrier;
use std::time::Instant;

use serde::Serialize;
use streambloom::classic::{Classic, ClassicParams};
use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
use streambloom::spectral::{MinimalIncrease, MinimumSelection, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::timing::{TimingBloom, TimingParams};
use streambloom::{hash, Block, W8};

use crate::output::{num, Align, Output, Table};
use crate::plot::{group, Axis, Chart, Kind, Series};
use crate::size::{parse_size, size_name};
use crate::stats::median;

/// The method, for `scale --help`.
pub const LONG_ABOUT: &str = "\
Items per second of every filter with 1..N pinned threads, share-nothing.

The filter's memory (--memory) is split into t shards, one per thread
(with --per-shard, every shard has --memory bytes instead)
(thread i pinned to core i mod cores). An item goes to shard
floor(h*t/2^64), the high bits of its hash. Each round draws --items
fresh hashes and routes them into one list per shard before the clock
starts; the threads start at a barrier, run their list through the
filter's batch API (64 items a call) and read their own clock. A round's
rate is items / the slowest thread's time. Thread counts take turns round
by round (1, 2, .., N, 1, 2, ..) so a shared machine's load falls on all
alike. Rounds are short (2^16 items) and many (51), so that the median is
the rate while the threads hold their cores on a shared machine (a long
round is preempted in proportion to the load). The first round is a
warm-up (at least twice as many items as the shards have cache lines);
the report gives the median rate over --rounds rounds and the ratio to one
thread's.

Build with --release: a debug build's timings mean nothing.";

/// Items a batch call takes.
const BATCH: usize = 64;
/// Cells an item selects (as in `latency`).
const K: u32 = 5;
/// Seed of the filters and of the item stream.
const SEED: u64 = 0x5CA1_E000;

/// The options of `scale`.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// Most threads to run [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub threads: Option<usize>,
    /// Total memory of a filter, split evenly over the shards (K, M or G
    /// suffix) [default: 64M; with --quick: 1M]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<usize>,
    /// `--memory` is each shard's, not the total: every thread count gets
    /// shards of one size, so more threads gain no cache advantage (weak
    /// scaling)
    #[arg(long)]
    pub per_shard: bool,
    /// Items a timed round (the warm-up round has at least twice as many
    /// as the shards have cache lines) [default: 65536]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub items: Option<usize>,
    /// Timed rounds per filter and thread count, after one warm-up round
    /// [default: 51; with --quick: 5]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub rounds: Option<usize>,
    /// Only the filters whose name contains one of these substrings
    /// (comma-separated) [default: every filter]
    #[arg(long = "filter", value_name = "SUBSTRING", value_delimiter = ',', value_parser = parse_filter)]
    pub filters: Vec<String>,
    /// A smoke run of a few seconds: less memory, fewer items and rounds
    #[arg(long)]
    pub quick: bool,
}

fn parse_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

fn parse_filter(s: &str) -> Result<String, String> {
    if !s.is_empty() && filters().iter().any(|f| f.name.contains(s)) {
        Ok(s.to_owned())
    } else {
        let names: Vec<&str> = filters().iter().map(|f| f.name).collect();
        Err(format!(
            "no filter's name contains `{s}`; the filters are: {}",
            names.join(", ")
        ))
    }
}

/// One shard of a filter: runs a batch of pre-hashed items.
trait Shard: Send {
    fn run(&mut self, batch: &[u64]);
}

/// A filter `scale` measures.
#[derive(Clone, Copy)]
pub struct Filter {
    /// Name in the report and for `--filter`.
    pub name: &'static str,
    /// The operation each item goes through.
    pub op: &'static str,
    build: fn(bytes: usize) -> Result<Box<dyn Shard>, String>,
}

/// Every filter, in report order.
pub fn filters() -> Vec<Filter> {
    vec![
        Filter {
            name: "classic",
            op: "insert_batch_hash, k = 5",
            build: |bytes| {
                let params = ClassicParams::new(bytes * 8, K);
                Ok(Box::new(
                    Classic::new(params, SEED).map_err(|e| e.to_string())?,
                ))
            },
        },
        Filter {
            name: "stable",
            op: "observe_batch_hash, W8, d = 3, K = 5, P for 1 % FPR",
            build: |bytes| {
                let f = StableBloom::<W8>::new(stable_params(bytes)?, SEED)
                    .map_err(|e| e.to_string())?;
                Ok(Box::new(Dedup(f, [false; BATCH])))
            },
        },
        Filter {
            name: "spectral-ms",
            op: "Spectral<MinimumSelection> insert_batch_hash, 32-bit counters, k = 5",
            build: |bytes| {
                let params = SpectralParams::new(bytes / 4, K);
                Ok(Box::new(
                    Spectral::<MinimumSelection>::new(params, SEED).map_err(|e| e.to_string())?,
                ))
            },
        },
        Filter {
            name: "spectral-mi",
            op: "Spectral<MinimalIncrease> insert_batch_hash, 32-bit counters, k = 5",
            build: |bytes| {
                let params = SpectralParams::new(bytes / 4, K);
                Ok(Box::new(
                    Spectral::<MinimalIncrease>::new(params, SEED).map_err(|e| e.to_string())?,
                ))
            },
        },
        Filter {
            name: "importance",
            op: "observe_batch_hash, stable's cells and P, Imp-insert, importance 1..=50",
            build: |bytes| {
                let s = stable_params(bytes)?;
                let params = ImportanceParams {
                    cells: s.cells,
                    bits_per_cell: s.bits_per_cell,
                    k: s.k,
                    p: s.p,
                    eviction: streambloom::importance::Eviction::Random,
                    layout: Layout::OneBlock,
                    insert: Insert::ByImportance,
                    map: ImportanceMap::Linear { top: 50 },
                };
                let f = ImportanceBloom::<W8>::new(params, SEED).map_err(|e| e.to_string())?;
                let importances = std::array::from_fn(|i| (i % 50) as u32 + 1);
                Ok(Box::new(Important(f, importances, [false; BATCH])))
            },
        },
        Filter {
            name: "reservoir",
            op: "observe_batch_hash, planned for FPR_t = 0.1",
            build: |bytes| {
                let params = ReservoirParams::plan(bytes * 8, 0.1).map_err(|e| e.to_string())?;
                let f = ReservoirBloom::new(params, SEED).map_err(|e| e.to_string())?;
                Ok(Box::new(Reservoir(f, [false; BATCH])))
            },
        },
        Filter {
            name: "timing",
            op: "contains_batch_hash then insert_batch_hash, W8 timers, k = 5, w = cells/4",
            build: |bytes| {
                let window = (bytes / 4).max(1) as u64;
                let params = TimingParams::plan::<W8>(bytes, K, window, 8, Layout::OneBlock)
                    .map_err(|e| e.to_string())?;
                let f = TimingBloom::<W8>::new(params, SEED).map_err(|e| e.to_string())?;
                Ok(Box::new(Timing(f, [false; BATCH])))
            },
        },
    ]
}

/// `bytes` of 8-bit cells, d = 3, K = 5, P the smallest for 1 % false
/// positives (as `latency`'s stable targets).
fn stable_params(bytes: usize) -> Result<StableParams, String> {
    StableParams {
        cells: bytes,
        bits_per_cell: 3,
        k: K,
        p: 1,
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
    }
    .with_smallest_p::<W8>(0.01)
    .map_err(|e| e.to_string())
}

impl Shard for Classic {
    fn run(&mut self, batch: &[u64]) {
        self.insert_batch_hash(batch);
    }
}

impl<P: streambloom::spectral::Policy + Send> Shard for Spectral<P> {
    fn run(&mut self, batch: &[u64]) {
        self.insert_batch_hash(batch);
    }
}

struct Dedup(StableBloom<W8>, [bool; BATCH]);

impl Shard for Dedup {
    fn run(&mut self, batch: &[u64]) {
        // At most BATCH items a call, so the lengths match: never an error.
        let _ = self.0.observe_batch_hash(batch, &mut self.1[..batch.len()]);
        std::hint::black_box(&self.1);
    }
}

struct Important(ImportanceBloom<W8>, [u32; BATCH], [bool; BATCH]);

impl Shard for Important {
    fn run(&mut self, batch: &[u64]) {
        let n = batch.len();
        // Matching lengths, importances in the map's domain: never an error.
        let _ = self
            .0
            .observe_batch_hash(batch, &self.1[..n], &mut self.2[..n]);
        std::hint::black_box(&self.2);
    }
}

struct Reservoir(ReservoirBloom, [bool; BATCH]);

impl Shard for Reservoir {
    fn run(&mut self, batch: &[u64]) {
        // Matching lengths: never an error.
        let _ = self.0.observe_batch_hash(batch, &mut self.1[..batch.len()]);
        std::hint::black_box(&self.1);
    }
}

struct Timing(TimingBloom<W8>, [bool; BATCH]);

impl Shard for Timing {
    fn run(&mut self, batch: &[u64]) {
        // Matching lengths: never an error.
        let _ = self
            .0
            .contains_batch_hash(batch, &mut self.1[..batch.len()]);
        std::hint::black_box(&self.1);
        self.0.insert_batch_hash(batch);
    }
}

/// The shard of hash `h` among `shards`: its high bits.
pub fn shard_of(h: u64, shards: usize) -> usize {
    ((u128::from(h) * shards as u128) >> 64) as usize
}

/// `hashes` split into one list per shard, each in stream order.
pub fn route(hashes: &[u64], shards: usize) -> Vec<Vec<u64>> {
    let mut lists = vec![Vec::with_capacity(hashes.len() / shards + BATCH); shards];
    for &h in hashes {
        lists[shard_of(h, shards)].push(h);
    }
    lists
}

/// One filter at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The filter's name.
    pub filter: &'static str,
    /// Threads (and shards).
    pub threads: usize,
    /// Bytes of one shard.
    pub shard_bytes: usize,
    /// Median items per second over the rounds, all threads together.
    pub items_per_s: f64,
    /// Items per second over the rounds, in round order.
    pub rounds: Vec<f64>,
    /// `items_per_s` over the one-thread row's.
    pub speedup: f64,
}

/// What `scale` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `"scale"`.
    pub command: &'static str,
    /// `"release"` or `"debug"`.
    pub build: &'static str,
    /// Cores the threads were pinned to, in thread order (fewer than the
    /// threads when pinning failed).
    pub cores: Vec<usize>,
    /// Total memory of a filter, bytes (of each shard with `per_shard`).
    pub memory: usize,
    /// Whether `memory` is each shard's rather than the total.
    pub per_shard: bool,
    /// Items a round.
    pub items: usize,
    /// The operation of each filter, by name.
    pub ops: Vec<(&'static str, &'static str)>,
    /// One row per filter and thread count.
    pub results: Vec<Row>,
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let mut out = format!(
            "# scale: {} build, {} {}, {} items a round, threads pinned to cores {:?}\n",
            self.build,
            size_name(self.memory),
            if self.per_shard {
                "a shard (weak scaling)"
            } else {
                "a filter split over the threads"
            },
            self.items,
            self.cores
        );
        for (name, op) in &self.ops {
            out += &format!("# {name}: {op}\n");
        }
        let mut t = Table::new(&[
            ("filter", Align::Left),
            ("threads", Align::Right),
            ("shard", Align::Right),
            ("Mitems/s", Align::Right),
            ("min", Align::Right),
            ("max", Align::Right),
            ("× 1 thread", Align::Right),
        ]);
        for r in &self.results {
            let fold = |f: fn(f64, f64) -> f64, x0| r.rounds.iter().copied().fold(x0, f) / 1e6;
            t.row(vec![
                r.filter.to_owned(),
                r.threads.to_string(),
                size_name(r.shard_bytes),
                num(Some(r.items_per_s / 1e6), 1),
                num(Some(fold(f64::min, f64::INFINITY)), 1),
                num(Some(fold(f64::max, 0.0)), 1),
                num(Some(r.speedup), 2),
            ]);
        }
        out + &t.render()
    }

    /// Two panels against threads: items/s, one line per filter with its
    /// ideal (the one-thread rate × threads) dashed beside it; and the
    /// speed-up over one thread, with the linear ideal as a limit.
    fn charts(&self) -> Vec<Chart> {
        let mut rates = Vec::new();
        for s in group(
            self.results
                .iter()
                .map(|r| (r.filter.to_owned(), r.threads as f64, r.items_per_s / 1e6)),
        ) {
            let ideal = self
                .results
                .iter()
                .filter(|r| r.filter == s.name)
                .map(|r| {
                    (
                        r.threads as f64,
                        r.items_per_s / r.speedup / 1e6 * r.threads as f64,
                    )
                })
                .collect();
            let name = format!("{} ideal (1 thread × n)", s.name);
            rates.push(s);
            rates.push(Series::new(name, ideal).with_kind(Kind::Reference));
        }
        let mut speedups = group(
            self.results
                .iter()
                .map(|r| (r.filter.to_owned(), r.threads as f64, r.speedup)),
        );
        let threads: Vec<f64> = self.results.iter().map(|r| r.threads as f64).collect();
        let (lo, hi) = threads
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
                (lo.min(t), hi.max(t))
            });
        speedups
            .push(Series::new("ideal (linear)", vec![(lo, lo), (hi, hi)]).with_kind(Kind::Limit));
        let memory = format!(
            "{} {}",
            size_name(self.memory),
            if self.per_shard {
                "a shard"
            } else {
                "a filter"
            }
        );
        vec![
            Chart {
                title: format!("scale: items/s by threads ({memory}, {} build)", self.build),
                x: Axis::linear("threads").whole(),
                y: Axis::log("Mitems/s (median of the rounds, all threads)"),
                series: rates,
            },
            Chart {
                title: format!("scale: speed-up over one thread ({memory})"),
                x: Axis::linear("threads").whole(),
                y: Axis::linear("× 1 thread"),
                series: speedups,
            },
        ]
    }
}

impl Args {
    fn threads(&self) -> usize {
        self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1)
        })
    }
    fn memory(&self) -> usize {
        self.memory
            .unwrap_or(if self.quick { 1 << 20 } else { 64 << 20 })
    }
    /// The bytes of each of `threads` shards, a multiple of a cache line.
    fn shard_bytes(&self, threads: usize) -> usize {
        let bytes = if self.per_shard {
            self.memory()
        } else {
            self.memory() / threads
        };
        (bytes / Block::BYTES * Block::BYTES).max(Block::BYTES)
    }
    fn items(&self) -> usize {
        self.items.unwrap_or(1 << 16)
    }
    fn rounds(&self) -> usize {
        self.rounds.unwrap_or(if self.quick { 5 } else { 51 })
    }
    fn selected(&self) -> Vec<Filter> {
        filters()
            .into_iter()
            .filter(|f| self.filters.is_empty() || self.filters.iter().any(|s| f.name.contains(s)))
            .collect()
    }
}

/// Runs `streambloom-bench scale` and prints its report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&measure(args, out)?)
}

/// Measures every selected filter at 1..=threads threads.
fn measure(args: &Args, out: &Output) -> Result<Report, String> {
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    let max = args.threads();
    let filters = args.selected();
    let bar = out.progress(filters.len());
    let mut stream = 0u64;
    let mut results = Vec::new();
    let mut cores = Vec::new();
    for f in &filters {
        bar.set_message(f.name);
        let mut sets = (1..=max)
            .map(|threads| {
                let shard_bytes = args.shard_bytes(threads);
                (0..threads)
                    .map(|_| (f.build)(shard_bytes))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|shards| (shard_bytes, shards))
                    .map_err(|e| format!("{} over {}: {e}", f.name, size_name(shard_bytes)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut rates = vec![Vec::with_capacity(args.rounds()); max];
        for round in 0..=args.rounds() {
            for (i, (shard_bytes, shards)) in sets.iter_mut().enumerate() {
                // The warm-up: twice as many items as the shards have lines.
                let items = if round == 0 {
                    args.items()
                        .max(2 * *shard_bytes / Block::BYTES * shards.len())
                } else {
                    args.items()
                };
                let hashes: Vec<u64> = (0..items)
                    .map(|_| {
                        stream = stream.wrapping_add(0x9E37_79B9_7F4A_7C15);
                        hash::mix64(stream ^ SEED)
                    })
                    .collect();
                let lists = route(&hashes, shards.len());
                let (secs, pinned) = run_round(shards, &lists, &ids);
                if pinned.len() > cores.len() {
                    cores = pinned;
                }
                if round > 0 {
                    rates[i].push(args.items() as f64 / secs.max(f64::MIN_POSITIVE));
                }
            }
        }
        let medians: Vec<f64> = rates
            .iter()
            .map(|r| median(r.clone()).unwrap_or(0.0))
            .collect();
        for (i, rounds) in rates.into_iter().enumerate() {
            results.push(Row {
                filter: f.name,
                threads: i + 1,
                shard_bytes: sets[i].0,
                items_per_s: medians[i],
                rounds,
                speedup: medians[i] / medians[0],
            });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Report {
        command: "scale",
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        cores,
        memory: args.memory(),
        per_shard: args.per_shard,
        items: args.items(),
        ops: filters.iter().map(|f| (f.name, f.op)).collect(),
        results,
    })
}

/// Runs shard `i` over `lists[i]` on thread `i`, pinned to core
/// `ids[i mod ids.len()]`; the slowest thread's seconds, and the cores the
/// threads were pinned to.
fn run_round(
    shards: &mut [Box<dyn Shard>],
    lists: &[Vec<u64>],
    ids: &[core_affinity::CoreId],
) -> (f64, Vec<usize>) {
    let barrier = Barrier::new(shards.len());
    let results: Vec<(f64, Option<usize>)> = std::thread::scope(|s| {
        let handles: Vec<_> = shards
            .iter_mut()
            .zip(lists)
            .enumerate()
            .map(|(i, (shard, list))| {
                let barrier = &barrier;
                let id = (!ids.is_empty()).then(|| ids[i % ids.len()]);
                s.spawn(move || {
                    let pinned = id.filter(|&id| core_affinity::set_for_current(id));
                    barrier.wait();
                    let start = Instant::now();
                    for batch in list.chunks(BATCH) {
                        shard.run(batch);
                    }
                    (start.elapsed().as_secs_f64(), pinned.map(|id| id.id))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((f64::INFINITY, None)))
            .collect()
    });
    let slowest = results.iter().map(|r| r.0).fold(0.0, f64::max);
    (slowest, results.iter().filter_map(|r| r.1).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        match Cli::try_parse_from(line.split_whitespace())?.command {
            Command::Scale(args) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    /// Every item goes to exactly one shard, in stream order, and the high
    /// bits split a uniform stream evenly (within 5 standard errors).
    #[test]
    fn routing_splits_the_stream() {
        let hashes: Vec<u64> = (0..20_000u64).map(hash::mix64).collect();
        for shards in [1, 2, 3, 7] {
            let lists = route(&hashes, shards);
            assert_eq!(lists.len(), shards);
            let mut merged: Vec<u64> = lists.concat();
            merged.sort_unstable();
            let mut all = hashes.clone();
            all.sort_unstable();
            assert_eq!(merged, all);
            let p = 1.0 / shards as f64;
            let n = hashes.len() as f64;
            let sd = (n * p * (1.0 - p)).sqrt();
            for (i, list) in lists.iter().enumerate() {
                assert!(list.iter().all(|&h| shard_of(h, shards) == i));
                let order: Vec<u64> = hashes
                    .iter()
                    .copied()
                    .filter(|&h| shard_of(h, shards) == i)
                    .collect();
                assert_eq!(list, &order);
                assert!((list.len() as f64 - n * p).abs() <= 5.0 * sd + 1.0);
            }
        }
        assert_eq!(shard_of(u64::MAX, 4), 3);
        assert_eq!(shard_of(0, 4), 0);
        assert_eq!(shard_of(1 << 63, 2), 1);
    }

    #[test]
    fn options_parse() {
        let a =
            parse("streambloom-bench scale --quick --threads 2 --filter stable,timing").unwrap();
        assert!(a.quick);
        assert_eq!((a.threads(), a.memory(), a.rounds()), (2, 1 << 20, 5));
        assert_eq!(
            a.selected().iter().map(|f| f.name).collect::<Vec<_>>(),
            ["stable", "timing"]
        );
        let a = parse("streambloom-bench scale --memory 4M --items 1000").unwrap();
        assert_eq!((a.memory(), a.items(), a.rounds()), (4 << 20, 1000, 51));
        assert_eq!((a.shard_bytes(1), a.shard_bytes(3)), (4 << 20, 1398080));
        let a = parse("streambloom-bench scale --memory 4M --per-shard").unwrap();
        assert_eq!((a.shard_bytes(1), a.shard_bytes(3)), (4 << 20, 4 << 20));
        assert_eq!(a.selected().len(), filters().len());
        let err = |line: &str| parse(line).unwrap_err().to_string();
        assert!(err("streambloom-bench scale --threads 0").contains("at least 1"));
        assert!(err("streambloom-bench scale --filter bogus").contains("spectral-mi"));
    }

    /// A tiny run of every filter at one and two threads, in process: a
    /// row per filter and thread count, positive finite rates, the
    /// one-thread row's speedup exactly 1, and the JSON holding the rows.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn quick_run_reports_every_filter() {
        let a = parse(
            "streambloom-bench scale --quick --threads 2 --memory 64K --items 4096 --rounds 2",
        )
        .unwrap();
        let report = measure(
            &a,
            &Output {
                json: false,
                quiet: true,
                plot: None,
            },
        )
        .unwrap();
        assert_eq!(report.results.len(), 2 * filters().len());
        for (r, f) in report.results.chunks(2).zip(filters()) {
            assert_eq!((r[0].filter, r[1].filter), (f.name, f.name));
            assert_eq!((r[0].threads, r[1].threads), (1, 2));
            assert_eq!((r[0].shard_bytes, r[1].shard_bytes), (64 << 10, 32 << 10));
            assert_eq!(r[0].speedup, 1.0);
            for row in r {
                assert_eq!(row.rounds.len(), 2);
                assert!(row.items_per_s > 0.0 && row.items_per_s.is_finite());
                assert!(row.speedup > 0.0 && row.speedup.is_finite());
            }
        }
        let json: serde_json::Value = serde_json::from_str(
            &Output {
                json: true,
                quiet: true,
                plot: None,
            }
            .render(&report)
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            json["results"].as_array().unwrap().len(),
            report.results.len()
        );
        let table = crate::output::Report::table(&report);
        assert!(table.contains("spectral-mi") && table.contains("× 1 thread"));
    }

    /// The plot's two panels from a hand-made report: each filter's rate
    /// with its ideal line from its one-thread rate, and the speed-ups
    /// with the linear ideal; the SVG names them and its axes.
    #[test]
    fn charts_from_a_report() {
        let row = |filter, threads, items_per_s, speedup| Row {
            filter,
            threads,
            shard_bytes: 1 << 20,
            items_per_s,
            rounds: vec![items_per_s],
            speedup,
        };
        let report = Report {
            command: "scale",
            build: "release",
            cores: vec![0, 1],
            memory: 2 << 20,
            per_shard: false,
            items: 4096,
            ops: vec![("stable", "observe"), ("timing", "insert")],
            results: vec![
                row("stable", 1, 100e6, 1.0),
                row("stable", 2, 150e6, 1.5),
                row("timing", 1, 10e6, 1.0),
                row("timing", 2, 20e6, 2.0),
            ],
        };
        let charts = crate::output::Report::charts(&report);
        let names = crate::plot::series_names(&charts);
        assert_eq!(
            names,
            [
                vec![
                    "stable",
                    "stable ideal (1 thread × n)",
                    "timing",
                    "timing ideal (1 thread × n)"
                ],
                vec!["stable", "timing", "ideal (linear)"],
            ]
        );
        assert_eq!(charts[0].series[0].points, [(1.0, 100.0), (2.0, 150.0)]);
        assert_eq!(charts[0].series[1].points, [(1.0, 100.0), (2.0, 200.0)]);
        assert_eq!(charts[0].series[1].kind, Kind::Reference);
        assert_eq!(charts[1].series[2].points, [(1.0, 1.0), (2.0, 2.0)]);
        crate::plot::assert_draws(
            "scale",
            &charts,
            &[
                "threads",
                "Mitems/s",
                "× 1 thread",
                "timing ideal",
                "ideal (linear)",
            ],
        );
    }
}
