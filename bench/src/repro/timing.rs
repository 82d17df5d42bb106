//! `streambloom-bench repro timing`: the synthetic experiments of the
//! inferential time-decaying Bloom filter paper (Dautrich & Ravishankar,
//! EDBT/ICDT 2013, §5; the digest `NOTES-timing.md` §4 lists every number
//! and choice).
//!
//! **Procedure** (one trial = one stream, `w`, bits per item and `k`):
//! `m = ⌊w·bpi/bpt⌋` timers of `bpt = max(k, 3)` bits (memory counted as
//! `m·bpt`, §5.1.2), block size and padding by [`TimingParams::plan`] (the
//! digest's rule: the paper does not state its `B`); 2^20 warm-up
//! insertions, then 2^22 steps that query the next item (standard answer,
//! posterior, decision under penalties drawn from `U[1, 10)`), score it
//! against the truth `I_x < w` and insert it. Every trial of a stream sees
//! the same items and penalties. Standard penalty: `Σ $FP` over its false
//! positives (it has none negative); inferential: `Σ $FP` over its false
//! positives plus `Σ $FN` over its false negatives. Each filter takes its
//! own `k` from `1..=30` with the least penalty (line 523); the Posterior
//! Error (eq. 28) is the inferential filter's at its `k`.
//!
//! **Streams** (Table 3): `U = 2^16` items, uniform with `w = 2^16`
//! ([Pos≈Neg]) and `2^18` ([Pos>Neg]); power law `p_x = 1/(x·H_U)` with
//! `w = 2^11` and `2^18`. Priors are the streams' `p_x`, `D(j)` exact
//! (eq. 16; eq. 15's table with eq. 18's interpolation for the power law).
//!
//! **Layouts.** The paper's model places `k` timers independently over
//! all `m` ([`TimingLayout::Unblocked`]): §5 is reproduced with it. Then
//! both blocked layouts (one 64-byte block an item, or two) rerun at the
//! unblocked filters' chosen `k` (where a block holds `k` cells), and the
//! report prints what they change: Posterior Error, penalty ratio, ns per
//! step. Timers live in the narrowest cell that holds `bpt` bits (8, 16 or
//! 32), as a user would store them; the posterior is the layout's own.
//!
//! `--scale S` divides the warm-up and the steps by `S` (default 4:
//! 2^18 and 2^20). `--scale 1` is the paper's: 952 trials of 5.2 M steps,
//! about 5·10^9 steps at 150–200 ns, 15–20 CPU minutes (an estimate from
//! the per-step time); on the shared 2-core machine at load 15 it had
//! 4.5 CPU minutes in its first 20 minutes and was stopped, hence the
//! default. `--quick` is a smoke run (a sixteenth of the universe and
//! windows, a few thousand steps, two points).

use std::hash::BuildHasher;
use std::time::Instant;

use serde::Serialize;

use streambloom::analysis::timing::{decide, Age, Distinct, PosteriorError};
use streambloom::hash::seeded_hasher;
use streambloom::rng::Rng;
use streambloom::timing::{TimingBloom, TimingLayout, TimingParams};
use streambloom::{Width, W16, W32, W8};

use crate::output::{num, Align, Output, Report, Table};

/// `repro timing`'s options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Divisor of the paper's 2^20 warm-up insertions and 2^22 query
    /// steps: 1 is the paper's scale (15–20 CPU minutes, over an hour on
    /// a loaded shared machine), the default 4 a quarter of it
    #[arg(long, default_value_t = 4)]
    pub scale: u64,
    /// A smoke run of seconds: universe and windows divided by 16, 2^12
    /// warm-up insertions and 2^13 steps, 2 and 16 bits an item
    #[arg(long)]
    pub quick: bool,
}

/// The method, for `repro timing --help`.
pub const LONG_ABOUT: &str = "\
Reruns §5 of the inferential time-decaying Bloom filter paper: the Block
Timing Bloom filter's standard query against its inferential one
(posterior, then the answer of least expected penalty), on the uniform
(U = 2^16, w = 2^16 and 2^18) and power-law (U = 2^16, w = 2^11 and 2^18)
streams, at 1 to 64 bits an item (memory m·bpt, bpt = max(k, 3)). Each
trial: 2^20 warm-up insertions, then 2^22 steps (divided by --scale, 4 by
default; --scale 1 is the paper's) that query the next item
with penalties drawn from U[1, 10), score it and insert it. Each filter takes
its own k in 1..=30 with the least total penalty. Prints the penalty ratio
standard/inferential and the Posterior Error (eq. 28) beside the paper's
figures, on the paper's unblocked layout; then what the one-block and
two-block layouts change at the same k (Posterior Error, ratio, ns per step).";

/// The `k` the paper sweeps (line 523).
const KS: std::ops::RangeInclusive<u32> = 1..=30;

/// The bits-per-item grid (NOTES-timing §4: the figures' axes are not
/// given; powers of two).
const BPI: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Seeds: the items, the penalties, the hasher.
const ITEMS_SEED: u64 = 0x71_3E5;
const COSTS_SEED: u64 = 0xC057;
const HASH_SEED: u64 = 99;

/// One of the paper's synthetic streams (Table 3).
#[derive(Clone, Copy, Debug)]
struct StreamSpec {
    name: &'static str,
    condition: &'static str,
    power_law: bool,
    /// `log2 U`, `log2 w`.
    log_u: u32,
    log_w: u32,
    /// Table 3's Pos/Neg.
    paper_pos_neg: f64,
    /// What the paper's figures say about the ratio and the Posterior
    /// Error (NOTES-timing §4).
    paper_ratio: &'static str,
    paper_pe: &'static str,
}

const STREAMS: [StreamSpec; 4] = [
    StreamSpec {
        name: "uniform",
        condition: "Pos≈Neg",
        power_law: false,
        log_u: 16,
        log_w: 16,
        paper_pos_neg: 1.718,
        paper_ratio: "≈1.25 (Fig. 7)",
        paper_pe: "<0.05 (Fig. 8)",
    },
    StreamSpec {
        name: "uniform",
        condition: "Pos>Neg",
        power_law: false,
        log_u: 16,
        log_w: 18,
        paper_pos_neg: 53.547,
        paper_ratio: ">1, smaller (Fig. 7)",
        paper_pe: "<0.05 (Fig. 8)",
    },
    StreamSpec {
        name: "power law",
        condition: "Pos≈Neg",
        power_law: true,
        log_u: 16,
        log_w: 11,
        paper_pos_neg: 1.182,
        paper_ratio: "1.1–3.3 (Fig. 9)",
        paper_pe: "<0.035 (Fig. 10)",
    },
    StreamSpec {
        name: "power law",
        condition: "Pos>Neg",
        power_law: true,
        log_u: 16,
        log_w: 18,
        paper_pos_neg: 13.451,
        paper_ratio: ">1, smaller (Fig. 9)",
        paper_pe: "<0.035 (Fig. 10)",
    },
];

/// A stream drawn once and shared by every trial: items, their hashes'
/// table, priors, penalties and the truth of each query.
struct Stream {
    /// The items of the warm-up then of the steps.
    items: Vec<u32>,
    /// `hashes[x]`: item `x`'s hash.
    hashes: Vec<u64>,
    /// `priors[x] = p_x`.
    priors: Vec<f64>,
    /// `($FP, $FN)` of each step.
    costs: Vec<(f64, f64)>,
    /// Whether step `i`'s item was among the last `w` insertions.
    truth: Vec<bool>,
    warm: usize,
    window: u64,
    distinct: Distinct,
}

impl Stream {
    fn new(spec: &StreamSpec, shrink: u32, warm: usize, steps: usize) -> Result<Stream, String> {
        let u = 1u32 << (spec.log_u - shrink);
        let window = 1u64 << (spec.log_w - shrink);
        let mut items_rng = Rng::new(ITEMS_SEED);
        let mut costs_rng = Rng::new(COSTS_SEED);
        let (priors, distinct) = if spec.power_law {
            let h: f64 = (1..=u).map(|x| 1.0 / f64::from(x)).sum();
            let p = (1..=u).map(|x| 1.0 / (f64::from(x) * h)).collect();
            (p, Distinct::zipf(u).map_err(|e| e.to_string())?)
        } else {
            let p = vec![1.0 / f64::from(u); u as usize];
            (
                p,
                Distinct::uniform(f64::from(u)).map_err(|e| e.to_string())?,
            )
        };
        let cdf: Vec<f64> = priors
            .iter()
            .scan(0.0, |s, p| {
                *s += p;
                Some(*s)
            })
            .collect();
        let items: Vec<u32> = (0..warm + steps)
            .map(|_| {
                if spec.power_law {
                    let r = items_rng.unit();
                    cdf.partition_point(|&c| c < r).min(u as usize - 1) as u32
                } else {
                    items_rng.below(u64::from(u)) as u32
                }
            })
            .collect();
        let costs = (0..steps)
            .map(|_| (1.0 + 9.0 * costs_rng.unit(), 1.0 + 9.0 * costs_rng.unit()))
            .collect();
        let mut last = vec![None::<usize>; u as usize];
        let mut truth = Vec::with_capacity(steps);
        for (t, &x) in items.iter().enumerate() {
            if t >= warm {
                truth.push(last[x as usize].is_some_and(|s| ((t - s - 1) as u64) < window));
            }
            last[x as usize] = Some(t);
        }
        let hasher = seeded_hasher(HASH_SEED);
        let hashes = (0..u).map(|x| hasher.hash_one(x)).collect();
        Ok(Stream {
            items,
            hashes,
            priors,
            costs,
            truth,
            warm,
            window,
            distinct,
        })
    }

    /// Queries with `I_x < w` over those without (Table 3's Pos/Neg).
    fn pos_neg(&self) -> f64 {
        let pos = self.truth.iter().filter(|&&t| t).count();
        pos as f64 / (self.truth.len() - pos).max(1) as f64
    }
}

/// One trial's outcome.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Trial {
    /// Timers an item.
    pub k: u32,
    /// Bits a timer, `max(k, 3)`.
    pub bits_per_timer: u32,
    /// Timers `m`.
    pub cells: usize,
    /// Block size `B` by [`TimingParams::plan`].
    pub block: u64,
    /// Padding `𝒫` by [`TimingParams::plan`].
    pub padding: u64,
    /// Total penalty of the standard query (its false positives).
    pub penalty_standard: f64,
    /// Total penalty of the inferential decision.
    pub penalty_inferential: f64,
    /// The standard query's false negatives (must be 0).
    pub false_negatives_standard: u64,
    /// Posterior Error (eq. 28).
    pub posterior_error: f64,
    /// Wall time per step (query, posterior, decision, scoring, insert).
    pub ns_per_step: f64,
}

/// Runs one trial on `stream` with `m` timers of width `W`.
fn trial_in<W: Width>(
    stream: &Stream,
    k: u32,
    bpi: u64,
    layout: TimingLayout,
) -> Result<Option<Trial>, String> {
    let bpt = k.max(3);
    let m = ((stream.window * bpi / u64::from(bpt)) as usize).max(1);
    // A k the layout cannot hold (more than a block's cells) is no trial.
    let Ok(params) = TimingParams::plan::<W>(m, k, stream.window, bpt, layout) else {
        return Ok(None);
    };
    let mut f = TimingBloom::<W>::new(params, HASH_SEED).map_err(|e| e.to_string())?;
    f.set_stream(stream.distinct);
    for &x in &stream.items[..stream.warm] {
        f.insert_hash(stream.hashes[x as usize]);
    }
    let (mut ps, mut pi, mut fns, mut pe) = (0.0, 0.0, 0u64, PosteriorError::default());
    let start = Instant::now();
    for (i, &x) in stream.items[stream.warm..].iter().enumerate() {
        let h = stream.hashes[x as usize];
        let (cost_fp, cost_fn) = stream.costs[i];
        let truth = stream.truth[i];
        let e = f.evidence_hash(h);
        let standard = e.age != Age::Expired;
        let p = f
            .posterior_of(&e, stream.priors[x as usize])
            .map_err(|e| e.to_string())?;
        pe.add(p, truth);
        match (standard, truth) {
            (true, false) => ps += cost_fp,
            (false, true) => fns += 1,
            _ => {}
        }
        match (
            decide(p, cost_fp, cost_fn).map_err(|e| e.to_string())?,
            truth,
        ) {
            (true, false) => pi += cost_fp,
            (false, true) => pi += cost_fn,
            _ => {}
        }
        f.insert_hash(h);
    }
    let ns = start.elapsed().as_nanos() as f64 / stream.costs.len().max(1) as f64;
    Ok(Some(Trial {
        k,
        bits_per_timer: bpt,
        cells: f.cells(),
        block: params.block,
        padding: params.padding,
        penalty_standard: ps,
        penalty_inferential: pi,
        false_negatives_standard: fns,
        posterior_error: pe.value(),
        ns_per_step: ns,
    }))
}

/// One trial in the narrowest cell holding `max(k, 3)` bits.
fn trial(stream: &Stream, k: u32, bpi: u64, layout: TimingLayout) -> Result<Option<Trial>, String> {
    match k.max(3) {
        ..=8 => trial_in::<W8>(stream, k, bpi, layout),
        9..=16 => trial_in::<W16>(stream, k, bpi, layout),
        _ => trial_in::<W32>(stream, k, bpi, layout),
    }
}

/// One layout at one point: the standard filter at its `k`, the
/// inferential one at its own.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Compared {
    /// The standard filter's trial.
    pub standard: Trial,
    /// The inferential filter's trial.
    pub inferential: Trial,
}

impl Compared {
    /// Penalty standard/inferential (above 1: inference costs less).
    pub fn ratio(&self) -> f64 {
        self.standard.penalty_standard / self.inferential.penalty_inferential
    }
}

/// One stream at one bits-per-item point.
#[derive(Debug, Serialize)]
pub struct Point {
    /// Bits an item.
    pub bpi: u64,
    /// The paper's layout, each filter at its best `k` in `1..=30`.
    pub unblocked: Compared,
    /// One block an item at the same `k`s (none if a block cannot hold them).
    pub one_block: Option<Compared>,
    /// Two blocks an item at the same `k`s.
    pub two_blocks: Option<Compared>,
    /// The standard query's false negatives over every trial of the point.
    pub false_negatives_standard: u64,
}

/// One stream's results.
#[derive(Debug, Serialize)]
pub struct StreamReport {
    /// Its name.
    pub name: &'static str,
    /// Its condition (Table 3).
    pub condition: &'static str,
    /// Universe `U`.
    pub universe: u64,
    /// Window `w`.
    pub window: u64,
    /// Pos/Neg measured.
    pub pos_neg: f64,
    /// Pos/Neg in Table 3.
    pub paper_pos_neg: f64,
    /// The ratio the paper's figures show.
    pub paper_ratio: &'static str,
    /// The Posterior Error the paper's figures show.
    pub paper_pe: &'static str,
    /// The points.
    pub points: Vec<Point>,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct TimingReport {
    /// Warm-up insertions a trial.
    pub warm_up: usize,
    /// Query-then-insert steps a trial.
    pub steps: usize,
    /// The streams.
    pub streams: Vec<StreamReport>,
}

impl Report for TimingReport {
    fn table(&self) -> String {
        let mut out = format!(
            "Timing filter, the paper's §5: {} warm-up insertions then {} query-then-insert \
             steps a trial; penalties U[1, 10); each filter at its own best k in 1..=30, \
             bpt = max(k, 3), memory m·bpt; unblocked layout (the paper's model).\n",
            self.warm_up, self.steps
        );
        for s in &self.streams {
            out += &format!(
                "\n{} [{}], U = {}, w = {}: Pos/Neg {:.3} (paper {:.3}); paper: ratio {}, PE {}\n",
                s.name,
                s.condition,
                s.universe,
                s.window,
                s.pos_neg,
                s.paper_pos_neg,
                s.paper_ratio,
                s.paper_pe
            );
            let mut t = Table::new(&[
                ("bpi", Align::Right),
                ("k std", Align::Right),
                ("k inf", Align::Right),
                ("B (inf)", Align::Right),
                ("penalty std", Align::Right),
                ("penalty inf", Align::Right),
                ("ratio std/inf", Align::Right),
                ("PE", Align::Right),
                ("FN std", Align::Right),
                ("ns/step", Align::Right),
            ]);
            for p in &s.points {
                let u = &p.unblocked;
                t.row(vec![
                    p.bpi.to_string(),
                    u.standard.k.to_string(),
                    u.inferential.k.to_string(),
                    u.inferential.block.to_string(),
                    num(Some(u.standard.penalty_standard), 0),
                    num(Some(u.inferential.penalty_inferential), 0),
                    num(Some(u.ratio()), 2),
                    num(Some(u.inferential.posterior_error), 4),
                    p.false_negatives_standard.to_string(),
                    num(Some(u.inferential.ns_per_step), 0),
                ]);
            }
            out += &t.render();
            out += "blocked layouts at the same k (ratio, PE, ns/step; - where a block cannot hold k):\n";
            let mut t = Table::new(&[
                ("bpi", Align::Right),
                ("unblocked", Align::Right),
                ("one block", Align::Right),
                ("two blocks", Align::Right),
            ]);
            let cell = |c: Option<&Compared>| {
                c.map_or("-".to_owned(), |c| {
                    format!(
                        "{}, {}, {}",
                        num(Some(c.ratio()), 2),
                        num(Some(c.inferential.posterior_error), 4),
                        num(Some(c.inferential.ns_per_step), 0)
                    )
                })
            };
            for p in &s.points {
                t.row(vec![
                    p.bpi.to_string(),
                    cell(Some(&p.unblocked)),
                    cell(p.one_block.as_ref()),
                    cell(p.two_blocks.as_ref()),
                ]);
            }
            out += &t.render();
        }
        out
    }
}

/// Runs the experiments and prints the report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&report(args, out)?)
}

/// The least of `trials` by `key` (the first on ties).
fn least(trials: &[Trial], key: impl Fn(&Trial) -> f64) -> Option<Trial> {
    trials
        .iter()
        .copied()
        .fold(None, |best: Option<Trial>, t| match best {
            Some(b) if key(&b) <= key(&t) => Some(b),
            _ => Some(t),
        })
}

/// Runs the experiments (progress on `out`'s bar).
fn report(args: &Args, out: &Output) -> Result<TimingReport, String> {
    let (shrink, warm, steps, bpis): (u32, usize, usize, &[u64]) = if args.quick {
        (4, 1 << 12, 1 << 13, &[2, 16])
    } else {
        let s = args.scale.max(1) as usize;
        (0, ((1 << 20) / s).max(1), ((1 << 22) / s).max(1), &BPI)
    };
    let ks = KS.count() + 4;
    let bar = out.progress(STREAMS.len() * bpis.len() * ks);
    let mut streams = Vec::new();
    for spec in &STREAMS {
        let stream = Stream::new(spec, shrink, warm, steps)?;
        let mut points = Vec::new();
        for &bpi in bpis {
            bar.set_message(format!(
                "{} [{}] w = {}, {bpi} bits an item",
                spec.name, spec.condition, stream.window
            ));
            let mut trials = Vec::new();
            for k in KS {
                if let Some(t) = trial(&stream, k, bpi, TimingLayout::Unblocked)? {
                    trials.push(t);
                }
                bar.inc(1);
            }
            let fns: u64 = trials.iter().map(|t| t.false_negatives_standard).sum();
            let (Some(standard), Some(inferential)) = (
                least(&trials, |t| t.penalty_standard),
                least(&trials, |t| t.penalty_inferential),
            ) else {
                return Err(format!("no k fits {bpi} bits an item"));
            };
            let blocked = |layout| -> Result<Option<Compared>, String> {
                let s = trial(&stream, standard.k, bpi, layout)?;
                bar.inc(1);
                let i = trial(&stream, inferential.k, bpi, layout)?;
                bar.inc(1);
                Ok(s.zip(i).map(|(standard, inferential)| Compared {
                    standard,
                    inferential,
                }))
            };
            let one_block = blocked(TimingLayout::OneBlock)?;
            let two_blocks = blocked(TimingLayout::TwoBlocks)?;
            let fns = fns
                + [one_block, two_blocks]
                    .iter()
                    .flatten()
                    .map(|c| {
                        c.standard.false_negatives_standard + c.inferential.false_negatives_standard
                    })
                    .sum::<u64>();
            points.push(Point {
                bpi,
                unblocked: Compared {
                    standard,
                    inferential,
                },
                one_block,
                two_blocks,
                false_negatives_standard: fns,
            });
        }
        streams.push(StreamReport {
            name: spec.name,
            condition: spec.condition,
            universe: 1 << (spec.log_u - shrink),
            window: stream.window,
            pos_neg: stream.pos_neg(),
            paper_pos_neg: spec.paper_pos_neg,
            paper_ratio: spec.paper_ratio,
            paper_pe: spec.paper_pe,
            points,
        });
    }
    bar.finish_and_clear();
    Ok(TimingReport {
        warm_up: warm,
        steps,
        streams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick run: every stream and point, each filter's `k` the least
    /// penalty among the trials, no false negative of the standard query,
    /// Posterior Errors in their range, and a table that prints them.
    #[test]
    fn quick_report_is_complete() {
        let args = Args {
            scale: 1,
            quick: true,
        };
        let out = Output {
            json: false,
            quiet: true,
        };
        let r = report(&args, &out).unwrap();
        assert_eq!(r.streams.len(), 4);
        for s in &r.streams {
            assert_eq!(s.points.len(), 2);
            for p in &s.points {
                assert_eq!(p.false_negatives_standard, 0, "{}: {p:?}", s.name);
                let u = &p.unblocked;
                assert!(u.standard.penalty_standard <= u.inferential.penalty_standard);
                assert!(u.inferential.penalty_inferential <= u.standard.penalty_inferential);
                for c in [Some(u), p.one_block.as_ref(), p.two_blocks.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    assert!((0.0..=0.5).contains(&c.inferential.posterior_error));
                    assert_eq!(c.inferential.bits_per_timer, c.inferential.k.max(3));
                }
            }
        }
        let text = r.table();
        assert!(text.contains("ratio std/inf") && text.contains("two blocks"));
    }

    /// Table 3's Pos/Neg at the paper's scale of the [Pos≈Neg] uniform
    /// stream: `e - 1` within sampling error.
    #[test]
    #[cfg_attr(miri, ignore = "2^20 draws")]
    fn uniform_stream_has_the_papers_pos_neg() {
        let s = Stream::new(&STREAMS[0], 0, 1 << 18, 1 << 20).unwrap();
        let pos = s.truth.iter().filter(|&&t| t).count() as f64;
        let n = s.truth.len() as f64;
        // P(I_x < w) = 1 - (1 - 1/U)^w ≈ 1 - 1/e; its standard error.
        let p = 1.0 - (1.0 - 1.0 / 65536.0f64).powi(65536);
        let se = (p * (1.0 - p) / n).sqrt();
        assert!((pos / n - p).abs() < 5.0 * se, "{} vs {p}", pos / n);
        assert!((s.pos_neg() - (std::f64::consts::E - 1.0)).abs() < 0.02);
    }
}
