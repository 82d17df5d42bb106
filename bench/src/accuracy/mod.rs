//! `accuracy`: what each layout costs and buys, in one run (issue 9).
//!
//! For every filter, rows per setting and metric, columns per layout: one
//! block an item (`Layout::OneBlock`), two blocks (`Layout::TwoBlocks`) and
//! an unblocked reference written in the bench, the papers' model (every
//! position drawn independently from the whole filter):
//!
//! - [`classic`]: filters planned for 1 % and 0.1 % at n items (one-block
//!   plan; the other layouts get the same bits and `k`), false-positive
//!   rate on never-inserted keys beside each layout's formula.
//! - [`stable`]: the README's Stable settings, `P` the smallest for 1 %
//!   with one block (the same `P` everywhere): the steady-state
//!   false-positive rate on distinct keys beside the paper's bound
//!   `(1 - stable_point)^K` and the layout's model, and the false-negative
//!   rate of repeats at a fixed gap (half a set cell's expected lifetime);
//!   then with `P` planned for 1 % by each layout's model, which is what a
//!   planned filter delivers in each layout.
//! - [`spectral`]: §6.1's workload (Zipf 1, 1000 values, k = 5) at
//!   γ = 0.7 and 1, MS, MI and RM at W8, W16 and W32: error ratio and
//!   additive error.
//! - Latency: p50 ns per item of the batch insert (`insert_batch_hash`,
//!   Stable's `observe_batch_hash`) at 16 KiB, 1 MiB and 64 MiB, by the
//!   `latency` command's sampler and targets, layouts interleaved, the
//!   median of three repetitions; the unblocked references item by item
//!   (they have no batch form) by the same sampler.
//!
//! The report's rows are in [`report`].

pub mod classic;
pub mod report;
pub mod spectral;
pub mod stable;

use streambloom::hash::mix64;
use streambloom::stable::{Eviction, StableParams};
use streambloom::{Isa, Layout, W8};

use crate::latency::pin;
use crate::latency::sampler::{timer_overhead_ns, Measured, Plan};
use crate::latency::targets::{self, Pages};
use crate::output::Output;
use crate::repro::spectral::reference::{Family, Flat, FlatMs, Hashing};
use crate::repro::spectral::workload::Counts;
use crate::size::size_name;
use crate::stats;
use classic::FlatClassic;
use report::{Report, Row};
use stable::FlatStable;

/// The method, for `accuracy --help`.
pub const LONG_ABOUT: &str = "\
Accuracy and per-item latency of every filter in each layout, in one run:
one block an item, two blocks, and an unblocked reference written in the
bench (k independent positions over the whole filter, the papers' model).

Classic: planned for 1 % and 0.1 % at n = 100 000 (one-block plan, the
same bits and k in every layout), FPR on 10^6 never-inserted keys beside
each layout's formula. Stable: W8 d=3 K=5 and W4 d=3 K=3, random and sweep
eviction (and interleaved at W8: random's P, its unblocked reference
random's, the same law), m = 2^16 cells, P the smallest for 1 % with one block (the same
P everywhere): steady-state FPR on 10^6 distinct keys beside the paper's
bound (1 - stable_point)^K and the layout's model, and the FNR of 200 000
repeats at a gap of half a set cell's lifetime (Max·m/2P); then with P
planned for 1 % by each layout's model (the paper's bound for the
reference): P, FPR and FNR at the same gap. Spectral:
Zipf 1 over 1000 values, M = 100 000, k = 5, 8 runs; MS, MI, RM (equal
memory) at W8, W16, W32 and γ = 0.7, 1: error ratio and additive error.
Latency: p50 ns per item of the batch insert of Classic (k = 5), Stable
(W8 d=3 K=5) and Spectral (MS W32, k = 5) at 16 KiB, 1 MiB, 64 MiB, by the
latency command's sampler and targets (5000 batches of 64), layouts
interleaved, median of 3 repetitions; the references item by item.

Build with --release: a debug build's timings mean nothing.";

/// The options of `accuracy`.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// A smoke run of a few seconds: smaller samples, sizes 16K and 1M,
    /// fewer batches (figures noisier than the full run's)
    #[arg(long)]
    pub quick: bool,
    /// The core to pin the thread to for the latency rows [default: the
    /// last core]
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,
    /// Seed of the keys, streams and hashers (fixed, so reruns repeat)
    #[arg(long, value_name = "N", default_value_t = 0x5EED_ACC0)]
    pub seed: u64,
}

/// How much to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Classic: items inserted (the plans' n).
    pub classic_items: u64,
    /// Classic: never-inserted keys queried.
    pub classic_queries: u64,
    /// Stable: cells requested (rounded up to whole blocks).
    pub stable_cells: usize,
    /// Stable: distinct keys observed in the steady state.
    pub stable_queries: usize,
    /// Stable: repeats observed at the gap.
    pub stable_repeats: usize,
    /// Spectral: items in each stream (the paper's M).
    pub spectral_items: usize,
    /// Spectral: runs, each with its own stream and hash seed.
    pub spectral_runs: u64,
    /// Latency: filter sizes in bytes.
    pub sizes: Vec<usize>,
    /// Latency: timed batches per measurement.
    pub batches: usize,
    /// Latency: repetitions (interleaved), of which the median is kept.
    pub reps: usize,
    /// Latency: fewest items to warm up with.
    pub min_warmup: usize,
}

impl Scale {
    /// The full run (under three minutes on two shared cores).
    pub fn full() -> Scale {
        Scale {
            classic_items: 100_000,
            classic_queries: 1_000_000,
            stable_cells: 1 << 16,
            stable_queries: 1_000_000,
            stable_repeats: 200_000,
            spectral_items: 100_000,
            spectral_runs: 8,
            sizes: vec![16 << 10, 1 << 20, 64 << 20],
            batches: 5000,
            reps: 3,
            min_warmup: 1 << 20,
        }
    }

    /// A smoke run of a few seconds.
    pub fn quick() -> Scale {
        Scale {
            classic_items: 20_000,
            classic_queries: 100_000,
            stable_cells: 1 << 14,
            stable_queries: 100_000,
            stable_repeats: 20_000,
            spectral_items: 10_000,
            spectral_runs: 2,
            sizes: vec![16 << 10, 1 << 20],
            batches: 256,
            reps: 3,
            min_warmup: 1 << 16,
        }
    }
}

impl Args {
    fn scale(&self) -> Scale {
        if self.quick {
            Scale::quick()
        } else {
            Scale::full()
        }
    }
}

/// The library's layouts, in column order (the unblocked reference is the
/// third column).
pub const LAYOUTS: [Layout; 2] = [Layout::OneBlock, Layout::TwoBlocks];

/// Runs `streambloom-bench accuracy` and prints its report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    let core = pin(args.core)?;
    if core.is_none() {
        eprintln!("warning: could not pin the thread to a core; latency will be noisier");
    }
    let mut report = measure(&args.scale(), args.seed, out)?;
    report.quick = args.quick;
    report.core = core;
    out.emit(&report)
}

/// Measures an operation over a filter of the given bytes.
type Measure = Box<dyn Fn(usize, &Plan) -> Result<Measured, String>>;

/// A latency measurement: one filter in one column.
struct Job {
    filter: &'static str,
    about: &'static str,
    column: usize,
    run: Measure,
}

/// The latency jobs: the `latency` command's batch-insert targets per
/// layout, and the references item by item.
fn jobs(isa: Isa) -> Result<Vec<Job>, String> {
    let all = targets::all();
    let target = |name: &str| {
        all.iter()
            .find(|t| t.name == name)
            .map(|t| t.run)
            .ok_or(format!("no latency target `{name}`"))
    };
    let library = |filter, about, column, name: &str| -> Result<Job, String> {
        let run = target(name)?;
        Ok(Job {
            filter,
            about,
            column,
            run: Box::new(move |bytes, plan| run(bytes, isa, Pages::Base, plan)),
        })
    };
    let classic = "insert_batch_hash, k = 5 (unblocked: insert, k independent bits)";
    let stable = "observe_batch_hash, W8 d = 3, K = 5, P for 1 %, random (unblocked: observe)";
    let interleaved = "observe_batch_hash, W8 d = 3, K = 5, P for 1 %, interleaved (unblocked: \
                       observe, random: the same law without blocks)";
    let spectral =
        "insert_batch_hash, MS W32, k = 5 (unblocked: insert, u32 counters, hashing the value)";
    Ok(vec![
        library("Classic", classic, 0, "classic-insert-batch")?,
        library("Classic", classic, 1, "classic-two-insert-batch")?,
        Job {
            filter: "Classic",
            about: classic,
            column: 2,
            run: Box::new(|bytes, plan| {
                let mut f = FlatClassic::new(bytes * 8, targets::K);
                plan.measure(bytes, |h| f.insert(h))
            }),
        },
        library("Stable", stable, 0, "stable-batch")?,
        library("Stable", stable, 1, "stable-two-batch")?,
        flat_stable(stable),
        library("Stable", interleaved, 0, "stable-interleaved-batch")?,
        library("Stable", interleaved, 1, "stable-two-interleaved-batch")?,
        flat_stable(interleaved),
        library("Spectral", spectral, 0, "spectral-insert-batch")?,
        library("Spectral", spectral, 1, "spectral-two-insert-batch")?,
        Job {
            filter: "Spectral",
            about: spectral,
            column: 2,
            run: Box::new(|bytes, plan| {
                let flat = Flat::new(bytes / 4, Hashing::new(Family::Mixed, 1));
                let mut f = FlatMs(flat);
                plan.measure(bytes, |v| f.insert(v))
            }),
        },
    ])
}

/// The unblocked reference's job for the Stable row `about`: the same `P`
/// as the `stable-batch` target, the smallest for 1 % with one block.
fn flat_stable(about: &'static str) -> Job {
    Job {
        filter: "Stable",
        about,
        column: 2,
        run: Box::new(|bytes, plan| {
            let p = StableParams {
                cells: bytes,
                bits_per_cell: 3,
                k: targets::K,
                p: 1,
                eviction: Eviction::Random,
                layout: Layout::OneBlock,
            }
            .with_smallest_p::<W8>(0.01)
            .map_err(|e| e.to_string())?;
            let mut f = FlatStable::new(bytes, p.k, p.p, p.max(), p.eviction, mix64(1));
            plan.measure(bytes, |h| f.observe(h))
        }),
    }
}

/// Measures every row at `scale`; `seed` fixes keys, streams and hashers.
pub fn measure(scale: &Scale, seed: u64, out: &Output) -> Result<Report, String> {
    let isa = Isa::detect();
    let jobs = jobs(isa)?;
    let latency_steps = scale.sizes.len() * scale.reps * jobs.len();
    let bar = out.progress(2 + 1 + spectral::GAMMAS.len() * 3 + latency_steps);
    let mut rows = Vec::new();
    bar.set_message("classic");
    rows.extend(classic::rows(scale, seed)?);
    bar.inc(2);
    bar.set_message("stable");
    rows.extend(stable::rows(scale, seed)?);
    bar.inc(1);
    bar.set_message("spectral");
    rows.extend(spectral::rows(scale, seed, &mut || bar.inc(1))?);

    let plan = Plan {
        batches: scale.batches.max(1),
        min_warmup: scale.min_warmup,
        overhead_ns: timer_overhead_ns(),
    };
    for &bytes in &scale.sizes {
        // p50 per job and repetition; the layouts of a filter run one
        // after the other within a repetition.
        let mut p50 = vec![Vec::new(); jobs.len()];
        for _ in 0..scale.reps {
            for (j, job) in jobs.iter().enumerate() {
                bar.set_message(format!("latency {} {}", job.filter, size_name(bytes)));
                let s = (job.run)(bytes, &plan)
                    .map_err(|e| format!("{} {}: {e}", job.filter, size_name(bytes)))?;
                p50[j].push(s.summary.p50);
                bar.inc(1);
            }
        }
        // One row per filter and setting, its layouts in the columns.
        let mut done: Vec<(&str, &str)> = Vec::new();
        for job in &jobs {
            if done.contains(&(job.filter, job.about)) {
                continue;
            }
            done.push((job.filter, job.about));
            let mut cells = [None; 3];
            for (j, other) in jobs.iter().enumerate() {
                if (other.filter, other.about) == (job.filter, job.about) {
                    cells[other.column] = stats::median(p50[j].clone());
                }
            }
            rows.push(Row::new(
                job.filter,
                format!("{}, {}", job.about, size_name(bytes)),
                "p50 ns/item",
                cells,
                1,
            ));
        }
    }
    bar.finish_and_clear();
    Ok(Report {
        command: "accuracy",
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        quick: false,
        core: None,
        isa: isa.name(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

    fn parse(line: &str) -> Result<(Args, Output), clap::Error> {
        let cli = Cli::try_parse_from(line.split_whitespace())?;
        match cli.command {
            Command::Accuracy(args) => Ok((args, cli.output)),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn options_parse() {
        let (a, out) = parse("streambloom-bench accuracy --quick --json --core 1").unwrap();
        assert!(a.quick && out.json && !out.quiet);
        assert_eq!(a.core, Some(1));
        assert_eq!(a.scale(), Scale::quick());
        let (a, out) = parse("streambloom-bench -q accuracy --seed 7").unwrap();
        assert!(!a.quick && out.quiet && a.core.is_none());
        assert_eq!(a.seed, 7);
        assert_eq!(a.scale(), Scale::full());
        assert_eq!(a.scale().sizes, vec![16 << 10, 1 << 20, 64 << 20]);
        let err = |line: &str| parse(line).unwrap_err().to_string();
        assert!(err("streambloom-bench accuracy --bogus").contains("--bogus"));
        assert!(err("streambloom-bench accuracy --seed x").contains("--seed"));
        assert!(err("streambloom-bench accuracy --core").contains("--core"));
    }

    /// A run at tiny sizes, in process: the JSON parses, holds every row
    /// (every filter and setting with each of its metrics, every latency
    /// size) with the same cells as the table, and the measured rates are
    /// rates.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn json_holds_every_row() {
        let scale = Scale {
            classic_items: 2_000,
            classic_queries: 5_000,
            stable_cells: 4096,
            stable_queries: 2_000,
            stable_repeats: 1_000,
            spectral_items: 2_000,
            spectral_runs: 1,
            sizes: vec![4 << 10, 8 << 10],
            batches: 3,
            reps: 1,
            min_warmup: 64,
        };
        let table_out = Output {
            quiet: true,
            ..Output::default()
        };
        let report = measure(&scale, 1, &table_out).unwrap();
        let json_out = Output {
            json: true,
            ..table_out.clone()
        };
        let json: serde_json::Value =
            serde_json::from_str(&json_out.render(&report).unwrap()).unwrap();
        assert_eq!(json["command"], "accuracy");
        let rows = json["rows"].as_array().unwrap();
        let count = |filter: &str, metric: &str| {
            rows.iter()
                .filter(|r| r["filter"] == filter && r["metric"] == metric)
                .count()
        };
        // 2 targets; 5 settings; 3 widths × 2 loads × 3 policies; 2
        // sizes, Stable with its random and interleaved rows.
        assert_eq!(count("Classic", "FPR measured"), 2);
        assert_eq!(count("Classic", "FPR predicted (layout's formula)"), 2);
        assert_eq!(count("Stable", "FPR measured"), 10);
        assert_eq!(count("Stable", "FNR measured"), 10);
        assert_eq!(count("Stable", "P"), 5);
        assert_eq!(count("Spectral", "error ratio"), 18);
        assert_eq!(count("Spectral", "additive error"), 18);
        for (filter, rows) in [("Classic", 2), ("Stable", 4), ("Spectral", 2)] {
            assert_eq!(count(filter, "p50 ns/item"), rows, "{filter}");
        }
        for r in rows {
            let cells = ["one_block", "two_blocks", "unblocked"].map(|c| r[c].as_f64());
            assert!(cells[0].is_some(), "{r}");
            if ["FPR measured", "FNR measured"].contains(&r["metric"].as_str().unwrap()) {
                for x in cells.into_iter().flatten() {
                    assert!((0.0..=1.0).contains(&x), "{r}");
                }
            }
            assert!(cells.iter().all(Option::is_some), "{r}");
        }
        // The table prints the same rows, cell for cell (columns are
        // separated by at least two spaces; cells hold single spaces).
        let table = table_out.render(&report).unwrap();
        let lines: Vec<Vec<&str>> = table
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect()
            })
            .collect();
        assert_eq!(lines.len(), rows.len());
        for (row, (r, cells)) in rows.iter().zip(report.rows.iter().zip(&lines)) {
            let f = |c: &str| crate::output::num(row[c].as_f64(), r.decimals);
            let expected = [
                row["filter"].as_str().unwrap().to_owned(),
                row["setting"].as_str().unwrap().to_owned(),
                row["metric"].as_str().unwrap().to_owned(),
                f("one_block"),
                f("two_blocks"),
                f("unblocked"),
            ];
            assert_eq!(cells.as_slice(), expected.as_slice());
        }
    }
}
