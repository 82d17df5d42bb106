//! `claims`: each paper's stated cost beside ours, and beside the memory
//! system's limit measured in the same run.
//!
//! # Method
//!
//! A claim is a paper's sentence about cost, the setting it was measured
//! at, and, where the paper gives one, its figure in ns per item. Ours is a
//! [`latency`](crate::latency) target at a size that matches the paper's
//! setting, measured by the latency driver's sampler (batches of 64
//! pre-hashed items, the p50 of the per-item cost of a batch) on a pinned
//! core with the kernels [`Isa::detect`] picks. The limit is the `line-rmw`
//! target (one random cache-line read-modify-write an item) at the same
//! size. The two alternate, round by round (`--rounds`: limit, ours,
//! limit, ours, …), and the report gives the median of the rounds' p50s,
//! so a shared machine's load falls on both alike.
//!
//! The claims:
//!
//! - **BTBF** (inferential time-decaying filters, §5.1.5): "the average
//!   time to query and insert an item fell between 0.5 and 1.5
//!   microseconds for the standard and inferential BTBF" (Java, one
//!   thread, 2.4 GHz). Ours: `contains` (or `decide`, the inferential
//!   answer) then `insert` of the same item, `w = 2^16` (256 KiB of 8-bit
//!   timers) and `w = 2^18` (1 MiB), the paper's windows, in the paper's
//!   unblocked layout and in one block.
//! - **RSBF** (§1, §6): de-duplication "over enormous (1 to 10 billion)
//!   number of records" in real time; Tables 4–5 run 10^9 records through
//!   128 MB and 512 MB. No time is stated: the report gives ours per item,
//!   item by item (`reservoir-observe`) and through the batch form that
//!   prefetches (`reservoir-batch`), and what 10^9 records cost at each
//!   rate.
//! - **IBF** (§III, the complexity proof): `O(1)` an element, "dominated by
//!   K, P and M". No time is stated: ours at 16 KiB, 1 MiB and 64 MiB,
//!   item by item and through the batch form, shows what that constant is
//!   in and out of cache.
//! - **SBF** (report §6.4, Fig. 12): beside a chained hash table, "the hash
//!   table is only about twice as fast as the SBF" (`k = 5`, `m` equal to
//!   the table's buckets, up to 10^6 items, Pentium III). Ours: the
//!   interleaved comparison of `repro compact` at `N = 10^6` (the filter
//!   on the compact store, the string-array index, and on fixed 32-bit
//!   counters, against `HashMap<u64, u32>`).

use serde::Serialize;
use streambloom::Isa;

use crate::latency::pin;
use crate::latency::sampler::{timer_overhead_ns, Plan};
use crate::latency::targets::{self, Pages};
use crate::output::{num, pinned, Align, Output, Report, Table};
use crate::repro::compact;
use crate::size::size_name;
use crate::stats::median;

/// `claims`' options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rounds per claim, each measuring the limit then ours (medians
    /// reported)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Timed batches of 64 items per measurement [default: 20000; with
    /// --quick: 256]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batches: Option<u32>,
    /// Core to pin the thread to [default: the last one]
    #[arg(long)]
    pub core: Option<usize>,
    /// A smoke run of a few seconds: one round, small sizes, few batches,
    /// the hash-table comparison at 10^4
    #[arg(long)]
    pub quick: bool,
}

/// The method, for `claims --help`.
pub const LONG_ABOUT: &str = "\
Each paper's stated cost beside ours and beside the memory limit: the BTBF's
0.5-1.5 us per query+insert (Java, 2.4 GHz; ours at its windows w = 2^16
and 2^18, unblocked as the paper and in one block, standard and
inferential), the RSBF's billion-record streams (ours at 128 MiB and 512
MiB, and what 10^9 records cost), the IBF's O(1) per element (ours in and
out of cache), and the SBF report's 'a hash table is only about twice as
fast as the SBF' (ours at 10^6 counters, on the string-array index and on
fixed counters, against HashMap). Ours is a latency target (p50 per item of
batches of 64, pinned core, the best kernels); the limit is line-rmw at the
same size; they alternate round by round and the medians are reported.";

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// One claim and the measurement that answers it.
struct Spec {
    /// Short name of the paper and section.
    paper: &'static str,
    /// What the paper says.
    claim: &'static str,
    /// The paper's figure, ns per item (low, high), where it gives one.
    stated_ns: Option<[f64; 2]>,
    /// Our latency target.
    target: &'static str,
    /// Its memory.
    bytes: usize,
}

/// The claims to measure.
fn specs(quick: bool) -> Vec<Spec> {
    const BTBF: &str = "query then insert, 0.5-1.5 us an item (Java, 1 thread, 2.4 GHz)";
    const RSBF: &str = "real-time de-duplication of 10^9-10^10 records; Tables 4-5: \
                        10^9 records at 128 MB and 512 MB (no time stated)";
    const IBF: &str = "O(1) an element: K probes, P decrements, K sets (no time stated)";
    let mut out = Vec::new();
    let btbf_sizes: &[usize] = if quick {
        &[256 * KIB]
    } else {
        &[256 * KIB, MIB]
    };
    let btbf_targets: &[&str] = if quick {
        &["timing-unblocked-standard", "timing-unblocked-inferential"]
    } else {
        &[
            "timing-unblocked-standard",
            "timing-unblocked-inferential",
            "timing-standard",
            "timing-inferential",
        ]
    };
    for &bytes in btbf_sizes {
        for &target in btbf_targets {
            out.push(Spec {
                paper: "BTBF §5.1.5",
                claim: BTBF,
                stated_ns: Some([500.0, 1500.0]),
                target,
                bytes,
            });
        }
    }
    let rsbf_sizes: &[usize] = if quick {
        &[MIB]
    } else {
        &[128 * MIB, 512 * MIB]
    };
    for &bytes in rsbf_sizes {
        for target in ["reservoir-observe", "reservoir-batch"] {
            out.push(Spec {
                paper: "RSBF §1, §6",
                claim: RSBF,
                stated_ns: None,
                target,
                bytes,
            });
        }
    }
    let ibf_sizes: &[usize] = if quick {
        &[16 * KIB]
    } else {
        &[16 * KIB, MIB, 64 * MIB]
    };
    for &bytes in ibf_sizes {
        for target in ["importance-observe", "importance-batch"] {
            out.push(Spec {
                paper: "IBF §III",
                claim: IBF,
                stated_ns: None,
                target,
                bytes,
            });
        }
    }
    out
}

/// One measured claim.
#[derive(Debug, Serialize)]
pub struct Row {
    /// Paper and section.
    pub paper: &'static str,
    /// What the paper says.
    pub claim: &'static str,
    /// Our latency target.
    pub target: &'static str,
    /// Its memory, bytes.
    pub bytes: usize,
    /// Ours: median over rounds of the p50 ns per item.
    pub ours_ns: f64,
    /// `line-rmw` at the same size: median over rounds of the p50.
    pub limit_ns: f64,
    /// The paper's figure, ns per item (low, high), where it gives one.
    pub stated_ns: Option<[f64; 2]>,
}

impl Row {
    /// Ours over the limit.
    pub fn over_limit(&self) -> f64 {
        self.ours_ns / self.limit_ns
    }

    /// The paper's figure over ours (above 1: ours is faster), low and
    /// high.
    pub fn stated_over_ours(&self) -> Option<[f64; 2]> {
        self.stated_ns
            .map(|[lo, hi]| [lo / self.ours_ns, hi / self.ours_ns])
    }
}

/// The SBF report's comparison with a hash table, ours at one size.
#[derive(Debug, Serialize)]
pub struct HashTable {
    /// The paper's words.
    pub claim: &'static str,
    /// The paper's ratio, hash table speed over the SBF's.
    pub stated_ratio: f64,
    /// Ours: `repro compact`'s interleaved comparison.
    pub speed: compact::Speed,
}

/// `claims`' report.
#[derive(Debug, Serialize)]
pub struct ClaimsReport {
    /// The command.
    pub command: &'static str,
    /// The kernels ours ran.
    pub isa: &'static str,
    /// The core the thread was pinned to.
    pub core: Option<usize>,
    /// Rounds per claim.
    pub rounds: u32,
    /// Timed batches of 64 items per measurement.
    pub batches: usize,
    /// The measured claims.
    pub rows: Vec<Row>,
    /// The SBF report's hash-table comparison.
    pub hash_table: HashTable,
}

/// Runs `streambloom-bench claims` and prints its report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&measure(args, out)?)
}

/// Measures every claim.
fn measure(args: &Args, out: &Output) -> Result<ClaimsReport, String> {
    let core = pin(args.core)?;
    let plan = Plan {
        batches: args
            .batches
            .map_or(if args.quick { 256 } else { 20_000 }, |b| b as usize),
        min_warmup: if args.quick { 1 << 16 } else { 1 << 20 },
        overhead_ns: timer_overhead_ns(),
    };
    let isa = Isa::detect();
    let all = targets::all();
    let run = |name: &str, bytes: usize| -> Result<f64, String> {
        let t = all
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("no latency target `{name}`"))?;
        let measured =
            (t.run)(bytes, isa, Pages::Base, &plan).map_err(|e| format!("{name}: {e}"))?;
        Ok(measured.summary.p50)
    };
    let specs = specs(args.quick);
    let bar = out.progress(specs.len() + 1);
    let mut rows = Vec::with_capacity(specs.len());
    for spec in specs {
        bar.set_message(format!("{} {}", spec.target, size_name(spec.bytes)));
        let (mut ours, mut limit) = (Vec::new(), Vec::new());
        for _ in 0..args.rounds {
            limit.push(run("line-rmw", spec.bytes)?);
            ours.push(run(spec.target, spec.bytes)?);
        }
        rows.push(Row {
            paper: spec.paper,
            claim: spec.claim,
            target: spec.target,
            bytes: spec.bytes,
            ours_ns: median(ours).unwrap_or(f64::NAN),
            limit_ns: median(limit).unwrap_or(f64::NAN),
            stated_ns: spec.stated_ns,
        });
        bar.inc(1);
    }
    bar.set_message("hash table");
    let (n, reps, ops) = if args.quick {
        (10_000, 3, 512)
    } else {
        (1_000_000, 31, 4096)
    };
    let speed = compact::compare(n, reps, ops)?;
    bar.finish_and_clear();
    Ok(ClaimsReport {
        command: "claims",
        isa: isa.name(),
        core,
        rounds: args.rounds,
        batches: plan.batches,
        rows,
        hash_table: HashTable {
            claim: "the hash table is only about twice as fast as the SBF (k = 5, \
                    m = the table's buckets, 10^6 items, Pentium III, LEDA)",
            stated_ratio: 2.0,
            speed,
        },
    })
}

impl Report for ClaimsReport {
    fn table(&self) -> String {
        let mut out = format!(
            "# claims: p50 ns per item, {} kernels, {}, median of {} round(s) of {} \
             batches of 64; limit = line-rmw at the same size, alternating with ours\n",
            self.isa,
            pinned(self.core),
            self.rounds,
            self.batches
        );
        let mut t = Table::new(&[
            ("paper", Align::Left),
            ("ours", Align::Left),
            ("size", Align::Right),
            ("ours ns", Align::Right),
            ("limit ns", Align::Right),
            ("ours/limit", Align::Right),
            ("stated ns", Align::Right),
            ("stated/ours", Align::Right),
        ]);
        for r in &self.rows {
            let (stated, ratio) = match (r.stated_ns, r.stated_over_ours()) {
                (Some([lo, hi]), Some([a, b])) => (
                    format!("{lo:.0}-{hi:.0}"),
                    format!("{}-{}", num(Some(a), 0), num(Some(b), 0)),
                ),
                _ => ("-".to_owned(), "-".to_owned()),
            };
            t.row(vec![
                r.paper.to_owned(),
                r.target.to_owned(),
                size_name(r.bytes),
                num(Some(r.ours_ns), 2),
                num(Some(r.limit_ns), 2),
                num(Some(r.over_limit()), 1),
                stated,
                ratio,
            ]);
        }
        out += &t.render();
        out += "\n# the claims\n";
        let mut seen = Vec::new();
        for r in &self.rows {
            if !seen.contains(&r.paper) {
                seen.push(r.paper);
                out += &format!("{}: {}\n", r.paper, r.claim);
            }
        }
        for r in self
            .rows
            .iter()
            .filter(|r| r.target.starts_with("reservoir-"))
        {
            // ns an item times 10^9 items is that many seconds.
            out += &format!(
                "RSBF at {} ({}): 10^9 records at our rate take {:.1} s\n",
                size_name(r.bytes),
                r.target,
                r.ours_ns
            );
        }
        let h = &self.hash_table;
        out += &format!(
            "\n# SBF report §6.4: {}\n# ours at N = {} counters, k = 5, ns/op (interleaved medians)\n",
            h.claim, h.speed.counters
        );
        let mut t = Table::new(&[
            ("operation", Align::Left),
            ("HashMap", Align::Right),
            ("SBF, string-array index", Align::Right),
            ("SBF, 32-bit counters", Align::Right),
            ("index / HashMap", Align::Right),
            ("32-bit / HashMap", Align::Right),
            ("paper", Align::Right),
        ]);
        for (name, three) in [
            ("insert", h.speed.filter_insert),
            ("estimate", h.speed.filter_estimate),
        ] {
            t.row(vec![
                name.to_owned(),
                num(Some(three.hash_map), 1),
                num(Some(three.compact), 1),
                num(Some(three.fixed), 1),
                num(Some(three.vs_map()), 2),
                num(Some(three.fixed / three.hash_map), 2),
                format!("~{:.0}", h.stated_ratio),
            ]);
        }
        out += &t.render();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every claim names a latency target that exists, at a size the
    /// target accepts, in the full and the quick run.
    #[test]
    fn every_claim_names_a_target() {
        let names: Vec<&str> = targets::all().iter().map(|t| t.name).collect();
        for quick in [false, true] {
            for s in specs(quick) {
                assert!(names.contains(&s.target), "{}", s.target);
                assert!(s.bytes % 64 == 0 && s.bytes > 0);
            }
        }
        assert!(names.contains(&"line-rmw"));
    }

    /// The quick run measures and renders: positive times, the ratios
    /// computed from them, every paper named in the notes.
    #[test]
    fn quick_run_reports() {
        let args = Args {
            rounds: 1,
            batches: Some(4),
            core: None,
            quick: true,
        };
        let report = measure(&args, &Output::default()).unwrap();
        assert_eq!(report.rows.len(), specs(true).len());
        for r in &report.rows {
            assert!(r.ours_ns > 0.0 && r.limit_ns > 0.0, "{r:?}");
            assert_eq!(r.over_limit(), r.ours_ns / r.limit_ns);
        }
        let btbf = &report.rows[0];
        let [lo, hi] = btbf.stated_over_ours().unwrap();
        assert_eq!((lo, hi), (500.0 / btbf.ours_ns, 1500.0 / btbf.ours_ns));
        let text = report.table();
        for paper in ["BTBF §5.1.5", "RSBF §1, §6", "IBF §III", "SBF report §6.4"] {
            assert!(text.contains(paper), "{text}");
        }
        assert_eq!(report.hash_table.speed.counters, 10_000);
    }
}
