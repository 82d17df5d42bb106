//! `latency`: what one item costs, per target operation, kernel
//! implementation ([`Isa`]) and filter size, on a pinned core.
//!
//! # Method
//!
//! An operation on one pre-hashed item takes a few nanoseconds, less than
//! reading the clock, so items are not timed one at a time. Instead:
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
//!    throughput 1 / mean (items per second); and the process's memory on
//!    transparent huge pages when the sampling ended (`AnonHugePages`, Linux),
//!    which shows whether a target's memory is on huge pages.
//!
//! Each target's memory is on the pages `--pages` asks for: a `Vec` of
//! blocks on the system's base pages (`4k`, the default), or a
//! [`streambloom::store::HugePages`] map, lent to the filter as a slice
//! (`huge`) or owned by it (`huge-owned`, which re-checks the map's view on
//! every access); with several, the rows of a target, ISA and size are
//! measured one after the other.
//!
//! The 64 items of a batch are independent, so the CPU overlaps their
//! memory accesses as it would in a stream: a sample is the per-item cost a
//! stream processor sees, not the latency of one isolated item, and one slow
//! item is diluted by its 63 neighbours, so the high percentiles show slow
//! batches (page walks, interrupts), not single slow items.
//!
//! Figures measured with this driver are in the README's "Measured"
//! section, beside the command that printed them.
//!
//! # Modules
//!
//! [`targets`] lists the operations (one module per filter family: adding
//! a filter's targets is one file there), [`sampler`] times them and
//! [`report`] prints the results.

pub mod report;
pub mod sampler;
pub mod targets;

use streambloom::Isa;

use crate::output::Output;
use crate::size::{parse_size, size_name};
use report::{Report, Row};
use sampler::{timer_overhead_ns, Measured, Plan, BATCH};
use targets::Pages;

/// The method, for `latency --help`.
pub const LONG_ABOUT: &str = "\
Per-item latency percentiles and throughput on a pinned core, per target,
kernel implementation and filter size.

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

With --pages 4k,huge each target runs with its memory on base pages and
then in a streambloom::store::HugePages map (advised for transparent huge
pages) lent to the filter as a slice; huge-owned has the filter own the
map. The THP MiB column is the process's AnonHugePages when the row's
sampling ended (Linux), which shows whether huge pages were obtained. Check
/sys/kernel/mm/transparent_hugepage/enabled: with `never` there are none,
with `always` big Vecs get them too.

Build with --release: a debug build's timings mean nothing.";

/// The targets and what they measure, for `latency --help`: each name,
/// then its description wrapped at 80 columns.
pub fn targets_help() -> String {
    let mut out = String::from("Targets (select with --target):\n");
    for t in targets::all() {
        let mut line = format!("  {:<24} ", t.name);
        let mut fresh = true;
        for word in t.about.split_whitespace() {
            if !fresh && line.chars().count() + 1 + word.chars().count() > 80 {
                out += &line;
                out.push('\n');
                line = " ".repeat(27);
                fresh = true;
            }
            if !fresh {
                line.push(' ');
            }
            line += word;
            fresh = false;
        }
        out += &line;
        out.push('\n');
    }
    out
}

/// The options of `latency`.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// Filter sizes, comma-separated, each a multiple of 64 bytes with an
    /// optional K, M or G suffix (KiB, MiB, GiB) [default: 16K,1M,64M; with
    /// --quick: 16K,1M]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<usize>,
    /// Timed batches of 64 items per target, ISA and size [default: 100000;
    /// with --quick: 256]
    #[arg(long, value_name = "N", value_parser = parse_batches)]
    pub batches: Option<usize>,
    /// The core to pin the thread to [default: the last core]
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,
    /// Only the targets whose name contains one of these substrings
    /// (comma-separated) [default: every target]
    #[arg(long = "target", value_name = "SUBSTRING", value_delimiter = ',', value_parser = parse_target)]
    pub targets: Vec<String>,
    /// Only these kernel implementations, comma-separated; targets that run
    /// no kernel (line-rmw) are measured regardless [default: every one this
    /// CPU has]
    #[arg(long = "isa", value_name = "NAME", value_delimiter = ',', value_parser = parse_isa)]
    pub isas: Vec<Isa>,
    /// The pages each target's memory is on, comma-separated: 4k (a Vec on
    /// the system's base pages), huge (a map advised for transparent huge
    /// pages, streambloom::store::HugePages, lent to the filter) and
    /// huge-owned (the map owned by the filter); each target runs on each,
    /// one after the other [default: 4k]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub pages: Vec<Pages>,
    /// A smoke run of a few seconds: fewer batches, sizes and warm-up items
    #[arg(long)]
    pub quick: bool,
}

fn parse_batches(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

fn target_names() -> String {
    let names: Vec<&str> = targets::all().iter().map(|t| t.name).collect();
    names.join(", ")
}

/// A substring of at least one target's name.
fn parse_target(s: &str) -> Result<String, String> {
    if !s.is_empty() && targets::all().iter().any(|t| t.name.contains(s)) {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "no target's name contains `{s}`; the targets are: {}",
            target_names()
        ))
    }
}

/// A kernel implementation this CPU has, by [`Isa::name`].
fn parse_isa(s: &str) -> Result<Isa, String> {
    let names =
        |isas: &mut dyn Iterator<Item = Isa>| isas.map(Isa::name).collect::<Vec<_>>().join(", ");
    let available = names(&mut Isa::available());
    match Isa::from_name(s) {
        Some(isa) if isa.is_available() => Ok(isa),
        Some(_) => Err(format!(
            "`{s}` is not available on this CPU; available here: {available}"
        )),
        None => Err(format!(
            "no kernel implementation is named `{s}`; the names are {} (available here: {available})",
            names(&mut Isa::ALL.into_iter())
        )),
    }
}

/// One measurement to make.
#[derive(Clone, Copy, Debug)]
struct Job {
    target: &'static str,
    isa: Option<Isa>,
    bytes: usize,
    pages: Pages,
    run: fn(usize, Isa, Pages, &Plan) -> Result<Measured, String>,
}

impl Args {
    fn sizes(&self) -> Vec<usize> {
        if !self.sizes.is_empty() {
            self.sizes.clone()
        } else if self.quick {
            vec![16 << 10, 1 << 20]
        } else {
            vec![16 << 10, 1 << 20, 64 << 20]
        }
    }

    fn pages(&self) -> Vec<Pages> {
        if self.pages.is_empty() {
            vec![Pages::Base]
        } else {
            self.pages.clone()
        }
    }

    /// The selected measurements, by size, then target, then ISA, then
    /// pages (so a target's rows on either pages are measured back to back).
    fn jobs(&self) -> Vec<Job> {
        let isas: Vec<Option<Isa>> = Isa::available()
            .filter(|isa| self.isas.is_empty() || self.isas.contains(isa))
            .map(Some)
            .collect();
        let pages = self.pages();
        let mut jobs = Vec::new();
        for bytes in self.sizes() {
            for t in targets::all() {
                if !self.targets.is_empty() && !self.targets.iter().any(|s| t.name.contains(s)) {
                    continue;
                }
                let isas = if t.per_isa { &isas[..] } else { &[None] };
                for &isa in isas {
                    jobs.extend(pages.iter().map(|&pages| Job {
                        target: t.name,
                        isa,
                        bytes,
                        pages,
                        run: t.run,
                    }));
                }
            }
        }
        jobs
    }
}

/// Runs `streambloom-bench latency` and prints its report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&measure(args, out)?)
}

/// Pins the thread, measures every selected job and returns the report.
fn measure(args: &Args, out: &Output) -> Result<Report, String> {
    let core = pin(args.core)?;
    if core.is_none() {
        eprintln!("warning: could not pin the thread to a core; figures will be noisier");
    }
    let plan = Plan {
        batches: args
            .batches
            .unwrap_or(if args.quick { 256 } else { 100_000 }),
        min_warmup: if args.quick { 1 << 16 } else { 1 << 20 },
        overhead_ns: timer_overhead_ns(),
    };
    let jobs = args.jobs();
    let bar = out.progress(jobs.len());
    let mut results = Vec::with_capacity(jobs.len());
    for job in jobs {
        let what = format!(
            "{} {} {} {}",
            job.target,
            job.isa.map_or("-", Isa::name),
            job.pages.name(),
            size_name(job.bytes)
        );
        bar.set_message(what.clone());
        let measured = (job.run)(job.bytes, job.isa.unwrap_or(Isa::Scalar), job.pages, &plan)
            .map_err(|e| format!("{what}: {e}"))?;
        results.push(Row::new(
            job.target, job.isa, job.bytes, job.pages, measured,
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Report {
        command: "latency",
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        core,
        batch_items: BATCH,
        batches: plan.batches,
        timer_overhead_ns: plan.overhead_ns,
        results,
    })
}

/// Pins the thread to `wanted` or the last core; the core pinned to, if any.
pub fn pin(wanted: Option<usize>) -> Result<Option<usize>, String> {
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    let id = match wanted {
        Some(n) => Some(*ids.iter().find(|c| c.id == n).ok_or_else(|| {
            let all: Vec<String> = ids.iter().map(|c| c.id.to_string()).collect();
            format!("no core {n} to pin to; the cores are {}", all.join(", "))
        })?),
        None => ids.last().copied(),
    };
    Ok(id
        .filter(|&id| core_affinity::set_for_current(id))
        .map(|id| id.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

    fn parse(line: &str) -> Result<(Args, Output), clap::Error> {
        let cli = Cli::try_parse_from(line.split_whitespace())?;
        match cli.command {
            Command::Latency(args) => Ok((args, cli.output)),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn options_parse() {
        let (a, out) =
            parse("streambloom-bench latency --quick --sizes=16K,1M --batches 10 --json").unwrap();
        assert_eq!(a.sizes, vec![16 << 10, 1 << 20]);
        assert_eq!(a.batches, Some(10));
        assert!(a.quick && out.json && !out.quiet && a.core.is_none());
        let (a, out) =
            parse("streambloom-bench -q latency --target stable,rmw --isa scalar").unwrap();
        assert_eq!(a.targets, vec!["stable", "rmw"]);
        assert_eq!(a.isas, vec![Isa::Scalar]);
        assert!(out.quiet && !out.json);
        let (a, _) = parse("streambloom-bench latency").unwrap();
        assert_eq!(a.sizes(), vec![16 << 10, 1 << 20, 64 << 20]);
        assert_eq!(a.pages(), vec![Pages::Base]);
        let (a, _) = parse("streambloom-bench latency --pages 4k,huge --sizes 512M").unwrap();
        assert_eq!(a.pages(), vec![Pages::Base, Pages::Huge]);
        assert_eq!(a.sizes(), vec![512 << 20]);
    }

    #[test]
    fn bad_options_are_clear_errors() {
        let err = |line: &str| parse(line).unwrap_err().to_string();
        assert!(err("streambloom-bench latency --batches 0").contains("at least 1"));
        assert!(err("streambloom-bench latency --batches").contains("--batches"));
        assert!(err("streambloom-bench latency --bogus").contains("--bogus"));
        assert!(err("streambloom-bench latency --sizes 100").contains("multiple of 64"));
        let e = err("streambloom-bench latency --pages 2m");
        assert!(e.contains("4k") && e.contains("huge"), "{e}");
        let e = err("streambloom-bench latency --target bloom");
        assert!(
            e.contains("stable-observe") && e.contains("line-rmw"),
            "{e}"
        );
        let e = err("streambloom-bench latency --isa sse9");
        assert!(e.contains("scalar") && e.contains("avx512"), "{e}");
        if let Some(missing) = Isa::ALL.into_iter().find(|i| !i.is_available()) {
            let e = err(&format!(
                "streambloom-bench latency --isa {}",
                missing.name()
            ));
            assert!(e.contains("not available") && e.contains("scalar"), "{e}");
        }
    }

    /// `--target` (a part of a name selects every target it is part of),
    /// `--isa` and `--sizes` select exactly the jobs asked for; targets that
    /// run no kernel stay in whatever `--isa` says.
    #[test]
    fn selection_narrows_the_jobs() {
        let (a, _) =
            parse("streambloom-bench latency --target stable-sweep,rmw --isa scalar --sizes 16K")
                .unwrap();
        let jobs: Vec<_> = a
            .jobs()
            .iter()
            .map(|j| (j.target, j.isa, j.bytes))
            .collect();
        assert_eq!(
            jobs,
            [
                ("line-rmw", None, 16 << 10),
                ("stable-sweep", Some(Isa::Scalar), 16 << 10),
                ("stable-sweep-batch", Some(Isa::Scalar), 16 << 10)
            ]
        );
        // With both pages, each target's two rows are back to back.
        let (a, _) =
            parse("streambloom-bench latency --target line-r --sizes 64M,512M --pages 4k,huge")
                .unwrap();
        let jobs: Vec<_> = a
            .jobs()
            .iter()
            .map(|j| (j.target, j.bytes, j.pages))
            .collect();
        let (m64, m512) = (64 << 20, 512 << 20);
        assert_eq!(
            jobs,
            [
                ("line-rmw", m64, Pages::Base),
                ("line-rmw", m64, Pages::Huge),
                ("line-read", m64, Pages::Base),
                ("line-read", m64, Pages::Huge),
                ("line-rmw", m512, Pages::Base),
                ("line-rmw", m512, Pages::Huge),
                ("line-read", m512, Pages::Base),
                ("line-read", m512, Pages::Huge),
            ]
        );
        let (a, _) = parse("streambloom-bench latency --quick").unwrap();
        let per_size = targets::all()
            .iter()
            .map(|t| {
                if t.per_isa {
                    Isa::available().count()
                } else {
                    1
                }
            })
            .sum::<usize>();
        assert_eq!(a.jobs().len(), 2 * per_size);
    }

    /// A tiny run, in process: the JSON parses back to the same rows, in the
    /// same order, as the table prints.
    #[test]
    fn json_holds_the_table() {
        let (a, table_out) = parse(
            "streambloom-bench latency --quick --quiet --sizes 4K --batches 3 --target probe,rmw --pages huge,4k",
        )
        .unwrap();
        let report = measure(&a, &table_out).unwrap();
        assert_eq!(report.results.len(), 2 * (Isa::available().count() + 1));
        let json_out = Output {
            json: true,
            ..table_out.clone()
        };
        let json: serde_json::Value =
            serde_json::from_str(&json_out.render(&report).unwrap()).unwrap();
        let table = table_out.render(&report).unwrap();
        let lines: Vec<Vec<&str>> = table
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        let rows = json["results"].as_array().unwrap();
        assert_eq!(rows.len(), lines.len());
        assert_eq!(json["batches"], 3);
        for (row, cells) in rows.iter().zip(&lines) {
            let f = |key: &str| row[key].as_f64();
            let expected = [
                row["target"].as_str().unwrap().to_owned(),
                row["isa"].as_str().unwrap_or("-").to_owned(),
                row["pages"].as_str().unwrap().to_owned(),
                size_name(row["bytes"].as_u64().unwrap() as usize),
                crate::output::num(f("p50_ns"), 2),
                crate::output::num(f("p99_ns"), 2),
                crate::output::num(f("p999_ns"), 2),
                crate::output::num(f("mean_ns"), 2),
                crate::output::num(f("items_per_s").map(|r| r / 1e6), 1),
                crate::output::num(f("anon_huge_bytes").map(|b| b / f64::from(1 << 20)), 0),
            ];
            assert_eq!(cells.as_slice(), expected.as_slice());
        }
    }
}
