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
//! **The Age-Partitioned Bloom filter beside it** (issue 11): at each
//! point, an [`Apbf`] in the same `w·bpi` bits (`k + l` slices of whole
//! blocks) on the same stream and penalties, `g = ⌈w/l⌉` so `l·g >= w`
//! (no false negative in the window), `k` and `l` by measured total
//! penalty (steepest descent from the pair of least predicted steady
//! rate; see [`apbf_search`] for why not every pair). Each filter's
//! answers are split by the item's age: false
//! negatives (`I_x < w`), stale positives (`w <= I_x < 2w`) and false
//! positives (older or new); the three filters (standard and inferential
//! queries at their `k`, the APBF) are timed per step in interleaved
//! rounds; the report says at which points each has the lower penalty.
//!
//! `--scale S` divides the warm-up and the steps by `S` (default 4:
//! 2^18 and 2^20). `--scale 1` is the paper's: 952 trials of 5.2 M steps,
//! about 5·10^9 steps at 150–200 ns, 15–20 CPU minutes (an estimate from
//! the per-step time); on the shared 2-core machine at load 15 it had
//! 4.5 CPU minutes in its first 20 minutes and was stopped, hence the
//! default. `--quick` is a smoke run (a sixteenth of the universe and
//! windows, a few thousand steps, two points).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use streambloom::analysis::apbf::MAX_K;
use streambloom::analysis::timing::{decide, Age, Distinct, PosteriorError};
use streambloom::apbf::{Apbf, ApbfParams};
use streambloom::hash::seeded_hasher;
use streambloom::rng::Rng;
use streambloom::timing::{TimingBloom, TimingLayout, TimingParams};
use streambloom::{Width, W1, W16, W32, W8};

use crate::output::{num, Align, Output, Report, Table};
use crate::plot::{Axis, Chart, Kind, Series};

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
figures, and the calibration gap (in the posterior bin of eq. 28 where the
observed frequency of items in the window is farthest from the mean
posterior, observed minus posterior), on the paper's unblocked layout;
then what the one-block and
two-block layouts change at the same k (Posterior Error, ratio, ns per step).
Then the Age-Partitioned Bloom filter beside the unblocked filters in the
same w·bpi bits on the same streams: g = ⌈w/l⌉ (no false negative in the
window), k and l by measured penalty; for each filter the false-negative
rate (I_x < w), the stale-positive rate (w <= I_x < 2w), the
false-positive rate (older or never inserted), the total penalty and its
ratio to the inferential filter's, and ns per query-then-insert step timed
in interleaved rounds; then where each filter wins.";

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
    /// Whether step `i`'s item was last inserted `w` to `2w - 1`
    /// insertions before (expired within a window: a positive is stale).
    stale: Vec<bool>,
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
        let mut stale = Vec::with_capacity(steps);
        for (t, &x) in items.iter().enumerate() {
            if t >= warm {
                let age = last[x as usize].map(|s| (t - s - 1) as u64);
                truth.push(age.is_some_and(|a| a < window));
                stale.push(age.is_some_and(|a| (window..2 * window).contains(&a)));
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
            stale,
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

/// How one filter's answers scored over a trial's steps, the queries
/// split by the item's age `I_x` (insertions since its last one).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Outcomes {
    /// Queries with `I_x < w` (inside the window).
    pub inside: u64,
    /// Of them, answered absent: false negatives.
    pub false_negatives: u64,
    /// Queries with `w <= I_x < 2w` (expired within one window).
    pub stale: u64,
    /// Of them, answered present: stale positives.
    pub stale_positives: u64,
    /// Queries with `I_x >= 2w` or never inserted before.
    pub outside: u64,
    /// Of them, answered present: false positives.
    pub false_positives: u64,
    /// Total penalty (§2.6): `$FP` for every positive with `I_x >= w`,
    /// `$FN` for every negative with `I_x < w`.
    pub penalty: f64,
}

impl Outcomes {
    /// Scores the answer `present` to step `i` of `stream`.
    fn add(&mut self, stream: &Stream, i: usize, present: bool) {
        let (cost_fp, cost_fn) = stream.costs[i];
        if stream.truth[i] {
            self.inside += 1;
            if !present {
                self.false_negatives += 1;
                self.penalty += cost_fn;
            }
            return;
        }
        if stream.stale[i] {
            self.stale += 1;
            self.stale_positives += u64::from(present);
        } else {
            self.outside += 1;
            self.false_positives += u64::from(present);
        }
        if present {
            self.penalty += cost_fp;
        }
    }

    /// False negatives over the queries inside the window.
    pub fn false_negative_rate(&self) -> f64 {
        rate(self.false_negatives, self.inside)
    }

    /// Stale positives over the queries expired within one window.
    pub fn stale_positive_rate(&self) -> f64 {
        rate(self.stale_positives, self.stale)
    }

    /// False positives over the queries older than two windows or new.
    pub fn false_positive_rate(&self) -> f64 {
        rate(self.false_positives, self.outside)
    }
}

/// `part / whole`, 0 for an empty whole.
fn rate(part: u64, whole: u64) -> f64 {
    part as f64 / whole.max(1) as f64
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
    /// The standard query's answers (no false negatives: its penalty is
    /// its positives').
    pub standard_answers: Outcomes,
    /// The inferential decisions.
    pub inferential_answers: Outcomes,
    /// Posterior Error (eq. 28).
    pub posterior_error: f64,
    /// The bin of eq. 28 (among those holding at least 1 % of the
    /// queries) whose observed frequency is farthest from its mean
    /// posterior: that mean posterior, and observed minus it (above 0: the
    /// model was under-confident there).
    pub calibration_gap: (f64, f64),
    /// Wall time per step (query, posterior, decision, scoring, insert).
    pub ns_per_step: f64,
}

/// A trial's filter: `m = ⌊w·bpi/bpt⌋` timers of `bpt = max(k, 3)` bits
/// in cells of width `W`, planned for `layout`, after the stream's warm-up;
/// `None` for a `k` the layout cannot hold (more than a block's cells).
fn warmed<W: Width>(
    stream: &Stream,
    k: u32,
    bpi: u64,
    layout: TimingLayout,
) -> Result<Option<TimingBloom<W>>, String> {
    let bpt = k.max(3);
    let m = ((stream.window * bpi / u64::from(bpt)) as usize).max(1);
    let Ok(params) = TimingParams::plan::<W>(m, k, stream.window, bpt, layout) else {
        return Ok(None);
    };
    let mut f = TimingBloom::<W>::new(params, HASH_SEED).map_err(|e| e.to_string())?;
    f.set_stream(stream.distinct);
    for &x in &stream.items[..stream.warm] {
        f.insert_hash(stream.hashes[x as usize]);
    }
    Ok(Some(f))
}

/// Runs one trial on `stream` with `m` timers of width `W`.
fn trial_in<W: Width>(
    stream: &Stream,
    k: u32,
    bpi: u64,
    layout: TimingLayout,
) -> Result<Option<Trial>, String> {
    let Some(mut f) = warmed::<W>(stream, k, bpi, layout)? else {
        return Ok(None);
    };
    let params = *f.params();
    let mut standard_answers = Outcomes::default();
    let mut inferential_answers = Outcomes::default();
    let mut pe = PosteriorError::default();
    let start = Instant::now();
    for (i, &x) in stream.items[stream.warm..].iter().enumerate() {
        let h = stream.hashes[x as usize];
        let (cost_fp, cost_fn) = stream.costs[i];
        let e = f.evidence_hash(h);
        let p = f
            .posterior_of(&e, stream.priors[x as usize])
            .map_err(|e| e.to_string())?;
        pe.add(p, stream.truth[i]);
        standard_answers.add(stream, i, e.age != Age::Expired);
        inferential_answers.add(
            stream,
            i,
            decide(p, cost_fp, cost_fn).map_err(|e| e.to_string())?,
        );
        f.insert_hash(h);
    }
    let ns = start.elapsed().as_nanos() as f64 / stream.costs.len().max(1) as f64;
    Ok(Some(Trial {
        k,
        bits_per_timer: params.bits_per_timer,
        cells: f.cells(),
        block: params.block,
        padding: params.padding,
        standard_answers,
        inferential_answers,
        posterior_error: pe.value(),
        calibration_gap: widest_gap(&pe),
        ns_per_step: ns,
    }))
}

/// [`Trial::calibration_gap`] of `pe`: `(0, 0)` with no bin holding 1 %.
fn widest_gap(pe: &PosteriorError) -> (f64, f64) {
    let bins = pe.calibration();
    let total: u64 = bins.iter().map(|b| b.queries).sum();
    bins.iter()
        .filter(|b| b.queries > 0 && b.queries * 100 >= total)
        .map(|b| (b.mean_posterior, b.observed - b.mean_posterior))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap_or((0.0, 0.0))
}

/// A calibration gap as the table prints it: observed minus mean
/// posterior, at that mean posterior.
fn gap((at, by): (f64, f64)) -> String {
    format!("{by:+.3} at {at:.2}")
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
        self.standard.standard_answers.penalty / self.inferential.inferential_answers.penalty
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
    /// The Age-Partitioned Bloom filter in the same memory, beside the
    /// unblocked filters (none where two slices of a block do not fit).
    pub apbf: Option<ApbfPoint>,
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

/// A layout of the timing filter the plot draws: its name, and its
/// comparison at a point.
type PlottedLayout = (&'static str, fn(&Point) -> Option<&Compared>);

impl StreamReport {
    /// The stream's panel (see [`TimingReport::charts`](Report::charts)).
    fn chart(&self) -> Chart {
        let layouts: [PlottedLayout; 3] = [
            ("unblocked", |p| Some(&p.unblocked)),
            ("one block", |p| p.one_block.as_ref()),
            ("two blocks", |p| p.two_blocks.as_ref()),
        ];
        let mut series = Vec::new();
        for (layout, get) in layouts {
            let curve = |pick: fn(&Compared) -> f64| {
                self.points
                    .iter()
                    .filter_map(|p| Some((p.bpi as f64, pick(get(p)?))))
                    .collect::<Vec<_>>()
            };
            let standard = curve(|c| c.standard.standard_answers.penalty);
            if standard.is_empty() {
                continue;
            }
            let inferential = curve(|c| c.inferential.inferential_answers.penalty);
            series.push(Series::new(format!("standard, {layout}"), standard));
            series.push(
                Series::new(format!("inferential, {layout}"), inferential)
                    .with_kind(Kind::Reference),
            );
        }
        let apbf: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter_map(|p| Some((p.bpi as f64, p.apbf.as_ref()?.best.answers.penalty)))
            .collect();
        if !apbf.is_empty() {
            series.push(Series::new("APBF (best k, l), same memory", apbf));
        }
        Chart {
            title: format!(
                "{} [{}], U = {}, w = {}",
                self.name, self.condition, self.universe, self.window
            ),
            x: Axis::log("bits per item").binary(),
            y: Axis::log("total penalty (each filter at its best k)"),
            series,
        }
    }
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
    /// One panel per stream: the total penalty against bits per item, the
    /// standard query solid and the inferential one dashed in the same
    /// colour, per layout, and the APBF in the same memory.
    fn charts(&self) -> Vec<Chart> {
        self.streams.iter().map(StreamReport::chart).collect()
    }

    fn table(&self) -> String {
        let mut out = format!(
            "Timing filter, the paper's §5: {} warm-up insertions then {} query-then-insert \
             steps a trial; penalties U[1, 10); each filter at its own best k in 1..=30, \
             bpt = max(k, 3), memory m·bpt; unblocked layout (the paper's model). \
             calibration: in the bin of eq. 28 (of those holding 1 % of the queries) where \
             the observed frequency of items in the window is farthest from the mean \
             posterior, observed minus posterior (above 0: the model under-confident), \
             at that posterior.\n",
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
                ("calibration", Align::Right),
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
                    num(Some(u.standard.standard_answers.penalty), 0),
                    num(Some(u.inferential.inferential_answers.penalty), 0),
                    num(Some(u.ratio()), 2),
                    num(Some(u.inferential.posterior_error), 4),
                    gap(u.inferential.calibration_gap),
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
        out + &self.apbf_section()
    }
}

impl TimingReport {
    /// The APBF beside the unblocked timing filters, then who wins where.
    fn apbf_section(&self) -> String {
        let mut out = format!(
            "\nAge-Partitioned Bloom filter beside the timing filter (unblocked, as above), \
             each in at most w·bpi bits, on the same streams and penalties. APBF: g = ⌈w/l⌉ \
             (l·g >= w: no false negative in the window), k + l slices of \
             ⌊w·bpi/(k+l)/512⌋ blocks; k in 1..={MAX_K} and l chosen by measured penalty \
             (steepest descent over k±1, l±1, k and l halved and doubled, from the k, l \
             of least predicted steady rate, l <= {APBF_START_MAX_L}). By the item's age \
             I_x (insertions since its last): FN = absent when I_x < w; stale = present \
             when w <= I_x < 2w; FP = present when I_x >= 2w or never inserted. Penalty: \
             $FP per positive with I_x >= w, $FN per negative with I_x < w; × inf = over \
             the inferential filter's. ns/step: query then insert, the median of \
             {TIMING_ROUNDS} rounds that time the three in turn.\n"
        );
        let mut verdicts = Vec::new();
        for s in &self.streams {
            out += &format!(
                "\n{} [{}], U = {}, w = {}:\n",
                s.name, s.condition, s.universe, s.window
            );
            let mut t = Table::new(&[
                ("bpi", Align::Right),
                ("filter", Align::Left),
                ("parameters", Align::Left),
                ("KiB", Align::Right),
                ("FP", Align::Right),
                ("stale", Align::Right),
                ("FN", Align::Right),
                ("penalty", Align::Right),
                ("× inf", Align::Right),
                ("ns/step", Align::Right),
            ]);
            let (mut apbf_wins, mut inferential_wins, mut ties) =
                (Vec::new(), Vec::new(), Vec::new());
            let mut faster = 0;
            for p in &s.points {
                let u = &p.unblocked;
                let base = u.inferential.inferential_answers.penalty;
                let ns = p.apbf.map(|a| a.ns);
                let row =
                    |name: &str, params: String, bits: usize, a: &Outcomes, ns: Option<f64>| {
                        vec![
                            p.bpi.to_string(),
                            name.to_owned(),
                            params,
                            num(Some(bits as f64 / 8192.0), 2),
                            rate_text(a.false_positive_rate()),
                            rate_text(a.stale_positive_rate()),
                            rate_text(a.false_negative_rate()),
                            num(Some(a.penalty), 0),
                            num(Some(a.penalty / base), 2),
                            num(ns, 0),
                        ]
                    };
                let timing_params = |t: &Trial| format!("k {}, B {}", t.k, t.block);
                let timing_bits = |t: &Trial| t.cells * t.bits_per_timer as usize;
                t.row(row(
                    "BTBF standard",
                    timing_params(&u.standard),
                    timing_bits(&u.standard),
                    &u.standard.standard_answers,
                    ns.map(|n| n.standard),
                ));
                t.row(row(
                    "BTBF inferential",
                    timing_params(&u.inferential),
                    timing_bits(&u.inferential),
                    &u.inferential.inferential_answers,
                    ns.map(|n| n.inferential),
                ));
                match &p.apbf {
                    Some(a) => {
                        t.row(row(
                            "APBF",
                            format!(
                                "k {}, l {}, g {} ({} trials)",
                                a.best.k, a.best.l, a.best.g, a.trials
                            ),
                            a.best.bits,
                            &a.best.answers,
                            Some(a.ns.apbf),
                        ));
                        match a.best.answers.penalty.total_cmp(&base) {
                            Ordering::Less => apbf_wins.push(p.bpi),
                            Ordering::Greater => inferential_wins.push(p.bpi),
                            Ordering::Equal => ties.push(p.bpi),
                        }
                        faster += usize::from(a.ns.apbf < a.ns.inferential);
                    }
                    None => t.row(vec![
                        p.bpi.to_string(),
                        "APBF".to_owned(),
                        "does not fit (two slices need 1024 bits)".to_owned(),
                    ]),
                }
            }
            out += &t.render();
            let timed = apbf_wins.len() + inferential_wins.len() + ties.len();
            verdicts.push(format!(
                "  {} [{}]: APBF's penalty lower at bpi {}; the inferential BTBF's lower at \
                 bpi {}; equal at bpi {}; APBF's step faster than the inferential one at \
                 {faster} of {timed} points",
                s.name,
                s.condition,
                list(&apbf_wins),
                list(&inferential_wins),
                list(&ties),
            ));
        }
        out += "\nWho wins (total penalty, lower wins; the same streams and memory):\n";
        out += &verdicts.join("\n");
        out += "\nThe APBF finds every item of the last l·g >= w insertions, so it has no \
                false negative and pays only for positives: stale ones (an item stays up to \
                (l+1)·g insertions) and false ones (runs of k set bits). The inferential \
                BTBF also answers absent where its posterior makes the item more likely \
                outside the window than the penalties justify, trading false negatives for \
                fewer positives; the standard query has no false negative and pays for its \
                block's granularity (B) and its collisions. An APBF query of an absent item \
                probes about (k + l)/k slices (the scan skips past a clear one), a cache \
                line each: a long ring still costs time.\n";
        out
    }
}

/// A rate, in scientific notation below 0.001.
fn rate_text(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if x < 1e-3 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// `xs` comma-separated, or "none".
fn list(xs: &[u64]) -> String {
    if xs.is_empty() {
        return "none".to_owned();
    }
    xs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// The APBF's `k` range: the filter's own.
const APBF_KS: std::ops::RangeInclusive<u32> = 1..=MAX_K;

/// The longest ring the search starts from.
const APBF_START_MAX_L: u32 = 64;

/// Interleaved timing rounds of the compared filters (the median is
/// reported).
const TIMING_ROUNDS: usize = 3;

/// One APBF trial: `k`, `l`, `g = ⌈w/l⌉` (so `l·g >= w`: no false
/// negatives in the window) and slices of whole blocks filling the memory.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ApbfTrial {
    /// Slices an insertion sets.
    pub k: u32,
    /// Older slices.
    pub l: u32,
    /// Insertions a generation.
    pub g: u64,
    /// Memory: `k + l` slices of `⌊memory / (k + l) / 512⌋` blocks.
    pub bits: usize,
    /// Its answers.
    pub answers: Outcomes,
}

/// Nanoseconds per step (query, then insert) of the three compared
/// filters, the median of [`TIMING_ROUNDS`] interleaved rounds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StepTimes {
    /// The timing filter's standard query at its `k`.
    pub standard: f64,
    /// The timing filter's posterior and decision at its `k`.
    pub inferential: f64,
    /// The APBF at its `k`, `l`.
    pub apbf: f64,
}

/// The APBF at one point: its best measured trial and the step times.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ApbfPoint {
    /// The least total penalty the search measured.
    pub best: ApbfTrial,
    /// Trials the search ran.
    pub trials: usize,
    /// Step times beside the unblocked timing filters'.
    pub ns: StepTimes,
}

/// The APBF parameters of `k`, `l` in `memory` bits on `stream`, or `None`
/// where a slice would have no block or a generation no insertion.
fn apbf_params(stream: &Stream, k: u32, l: u32, memory: u64) -> Option<ApbfParams> {
    let slice_blocks = memory / W1::CELLS as u64 / u64::from(k + l);
    if !APBF_KS.contains(&k) || l == 0 || u64::from(l) > stream.window || slice_blocks == 0 {
        return None;
    }
    Some(ApbfParams {
        k,
        l,
        g: stream.window.div_ceil(u64::from(l)),
        slice_bits: slice_blocks as usize * W1::CELLS,
    })
}

/// An APBF after the stream's warm-up.
fn warmed_apbf(stream: &Stream, params: ApbfParams) -> Result<Apbf, String> {
    let mut f = Apbf::new(params, HASH_SEED).map_err(|e| e.to_string())?;
    for &x in &stream.items[..stream.warm] {
        f.insert_hash(stream.hashes[x as usize]);
    }
    Ok(f)
}

/// Runs one APBF trial.
fn apbf_trial(stream: &Stream, params: ApbfParams) -> Result<ApbfTrial, String> {
    let mut f = warmed_apbf(stream, params)?;
    let mut answers = Outcomes::default();
    for (i, &x) in stream.items[stream.warm..].iter().enumerate() {
        let h = stream.hashes[x as usize];
        answers.add(stream, i, f.contains_hash(h));
        f.insert_hash(h);
    }
    Ok(ApbfTrial {
        k: params.k,
        l: params.l,
        g: params.g,
        bits: f.blocks().len() * W1::CELLS,
        answers,
    })
}

/// The APBF of least measured penalty in `memory` bits: from the `k`, `l`
/// of least predicted steady false-positive rate (`l` up to
/// [`APBF_START_MAX_L`]), steepest descent over the neighbours `k ± 1`,
/// `l ± 1`, `k` and `l` halved and doubled until none costs less. `None`
/// where no `k`, `l` fits.
///
/// Local, not the full grid its moves draw from: every `k` in `1..=64`
/// with every `l` from 1 up to `w` that leaves a slice a block is
/// 9 342 858 pairs over the 28 points of the default run (2 095 072 at
/// 64 bits an item with `w = 2^18` alone), each a trial of
/// 2^18 + 2^20 steps: at 25 ns a step (the fastest APBF step the default
/// run timed, on the shortest rings) some 3·10^5 s, three and a half
/// days, against 831 trials for the descent at all 28 points. A coarser
/// complete grid would be a different search, not this one made complete.
fn apbf_search(
    stream: &Stream,
    memory: u64,
    bar: &indicatif::ProgressBar,
) -> Result<Option<(ApbfTrial, usize)>, String> {
    let start = APBF_KS
        .flat_map(|k| (1..=APBF_START_MAX_L).map(move |l| (k, l)))
        .filter_map(|(k, l)| apbf_params(stream, k, l, memory))
        .map(|p| (p.steady_fpr(), p))
        .fold(None, |best: Option<(f64, ApbfParams)>, (r, p)| match best {
            Some((b, _)) if b <= r => best,
            _ => Some((r, p)),
        });
    let Some((_, start)) = start else {
        return Ok(None);
    };
    let mut measured = HashMap::new();
    bar.inc_length(1);
    let mut best = apbf_trial(stream, start)?;
    bar.inc(1);
    measured.insert((start.k, start.l), best.answers.penalty);
    loop {
        let (k, l) = (best.k, best.l);
        let mut moved = false;
        for (nk, nl) in [
            (k - 1, l),
            (k + 1, l),
            (k, l - 1),
            (k, l + 1),
            (k / 2, l),
            (k * 2, l),
            (k, l / 2),
            (k, l * 2),
        ] {
            if measured.contains_key(&(nk, nl)) {
                continue;
            }
            let Some(p) = apbf_params(stream, nk, nl, memory) else {
                continue;
            };
            bar.inc_length(1);
            let t = apbf_trial(stream, p)?;
            bar.inc(1);
            measured.insert((nk, nl), t.answers.penalty);
            if t.answers.penalty < best.answers.penalty {
                best = t;
                moved = true;
            }
        }
        if !moved {
            return Ok(Some((best, measured.len())));
        }
    }
}

/// Nanoseconds per step of the unblocked timing filter at `k`: the
/// standard query, or with `inferential` the posterior and the decision,
/// then the insertion.
fn time_timing_in<W: Width>(
    stream: &Stream,
    k: u32,
    bpi: u64,
    inferential: bool,
) -> Result<f64, String> {
    let Some(mut f) = warmed::<W>(stream, k, bpi, TimingLayout::Unblocked)? else {
        return Err(format!("k = {k} does not fit {bpi} bits an item"));
    };
    let mut present = 0u64;
    let start = Instant::now();
    for (i, &x) in stream.items[stream.warm..].iter().enumerate() {
        let h = stream.hashes[x as usize];
        let answer = if inferential {
            let (cost_fp, cost_fn) = stream.costs[i];
            let p = f
                .posterior_of(&f.evidence_hash(h), stream.priors[x as usize])
                .map_err(|e| e.to_string())?;
            decide(p, cost_fp, cost_fn).map_err(|e| e.to_string())?
        } else {
            f.contains_hash(h)
        };
        present += u64::from(answer);
        f.insert_hash(h);
    }
    let ns = start.elapsed().as_nanos() as f64 / stream.costs.len().max(1) as f64;
    black_box(present);
    Ok(ns)
}

/// [`time_timing_in`] in the narrowest cell holding `max(k, 3)` bits.
fn time_timing(stream: &Stream, k: u32, bpi: u64, inferential: bool) -> Result<f64, String> {
    match k.max(3) {
        ..=8 => time_timing_in::<W8>(stream, k, bpi, inferential),
        9..=16 => time_timing_in::<W16>(stream, k, bpi, inferential),
        _ => time_timing_in::<W32>(stream, k, bpi, inferential),
    }
}

/// Nanoseconds per step of the APBF: the query, then the insertion.
fn time_apbf(stream: &Stream, params: ApbfParams) -> Result<f64, String> {
    let mut f = warmed_apbf(stream, params)?;
    let mut present = 0u64;
    let start = Instant::now();
    for &x in &stream.items[stream.warm..] {
        let h = stream.hashes[x as usize];
        present += u64::from(f.contains_hash(h));
        f.insert_hash(h);
    }
    let ns = start.elapsed().as_nanos() as f64 / stream.costs.len().max(1) as f64;
    black_box(present);
    Ok(ns)
}

/// The median of `xs`.
fn median(mut xs: [f64; TIMING_ROUNDS]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[TIMING_ROUNDS / 2]
}

/// The APBF beside the unblocked timing filters `compared` at `bpi` bits
/// an item: the search, then the three filters timed in interleaved
/// rounds.
fn apbf_point(
    stream: &Stream,
    bpi: u64,
    compared: &Compared,
    bar: &indicatif::ProgressBar,
) -> Result<Option<ApbfPoint>, String> {
    let Some((best, trials)) = apbf_search(stream, stream.window * bpi, bar)? else {
        return Ok(None);
    };
    let params = apbf_params(stream, best.k, best.l, stream.window * bpi)
        .ok_or("the best APBF trial has no parameters")?;
    let mut rounds = [[0.0; 3]; TIMING_ROUNDS];
    bar.inc_length(3 * TIMING_ROUNDS as u64);
    for round in &mut rounds {
        *round = [
            time_timing(stream, compared.standard.k, bpi, false)?,
            time_timing(stream, compared.inferential.k, bpi, true)?,
            time_apbf(stream, params)?,
        ];
        bar.inc(3);
    }
    Ok(Some(ApbfPoint {
        best,
        trials,
        ns: StepTimes {
            standard: median(rounds.map(|r| r[0])),
            inferential: median(rounds.map(|r| r[1])),
            apbf: median(rounds.map(|r| r[2])),
        },
    }))
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
            let fns: u64 = trials
                .iter()
                .map(|t| t.standard_answers.false_negatives)
                .sum();
            let (Some(standard), Some(inferential)) = (
                least(&trials, |t| t.standard_answers.penalty),
                least(&trials, |t| t.inferential_answers.penalty),
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
                        c.standard.standard_answers.false_negatives
                            + c.inferential.standard_answers.false_negatives
                    })
                    .sum::<u64>();
            let unblocked = Compared {
                standard,
                inferential,
            };
            bar.set_message(format!(
                "{} [{}] w = {}, {bpi} bits an item: APBF",
                spec.name, spec.condition, stream.window
            ));
            let apbf = apbf_point(&stream, bpi, &unblocked, &bar)?;
            points.push(Point {
                bpi,
                unblocked,
                one_block,
                two_blocks,
                false_negatives_standard: fns,
                apbf,
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
            plot: None,
        };
        let r = report(&args, &out).unwrap();
        assert_eq!(r.streams.len(), 4);
        for s in &r.streams {
            assert_eq!(s.points.len(), 2);
            for p in &s.points {
                assert_eq!(p.false_negatives_standard, 0, "{}: {p:?}", s.name);
                let u = &p.unblocked;
                assert!(
                    u.standard.standard_answers.penalty <= u.inferential.standard_answers.penalty
                );
                assert!(
                    u.inferential.inferential_answers.penalty
                        <= u.standard.inferential_answers.penalty
                );
                for c in [Some(u), p.one_block.as_ref(), p.two_blocks.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    assert!((0.0..=0.5).contains(&c.inferential.posterior_error));
                    assert_eq!(c.inferential.bits_per_timer, c.inferential.k.max(3));
                }
            }
        }
        // The APBF: wherever two slices fit (every uniform point), in at
        // most the memory, with no false negative in the window, timed.
        for s in &r.streams {
            for p in &s.points {
                let memory = s.window * p.bpi;
                assert_eq!(p.apbf.is_some(), memory >= 1024, "{}: {p:?}", s.name);
                let Some(a) = p.apbf else { continue };
                assert_eq!(a.best.answers.false_negatives, 0, "{}: {a:?}", s.name);
                assert!(u64::from(a.best.l) * a.best.g >= s.window);
                assert!(a.best.bits as u64 <= memory && a.trials >= 1);
                let inside = p.unblocked.inferential.inferential_answers.inside;
                assert_eq!(a.best.answers.inside, inside);
                assert!([a.ns.standard, a.ns.inferential, a.ns.apbf]
                    .iter()
                    .all(|&ns| ns > 0.0));
            }
        }
        let text = r.table();
        assert!(text.contains("ratio std/inf") && text.contains("two blocks"));
        assert!(text.contains("BTBF inferential") && text.contains("Who wins"));
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

    /// The calibration gap: the bin farthest from its mean posterior among
    /// those holding 1 % of the queries, signed, at that mean posterior.
    #[test]
    fn calibration_gap_is_the_widest_bin() {
        let mut pe = PosteriorError::default();
        assert_eq!(widest_gap(&pe), (0.0, 0.0));
        // 0.42 on 100 queries, 60 in the window: +0.18 at 0.42.
        for i in 0..100 {
            pe.add(0.42, i < 60);
        }
        // 0.9 on 300 queries, 240 in the window: -0.10.
        for i in 0..300 {
            pe.add(0.9, i < 240);
        }
        // One query at 0.1, in the window (+0.9), under 1 % of 401+: ignored.
        for _ in 0..200 {
            pe.add(0.0, false);
        }
        pe.add(0.1, true);
        let (at, by) = widest_gap(&pe);
        assert!(
            (at - 0.42).abs() < 1e-12 && (by - 0.18).abs() < 1e-12,
            "{at} {by}"
        );
        assert_eq!(gap((at, by)), "+0.180 at 0.42");
    }

    /// The plot from a hand-made report: per stream, standard and
    /// inferential per layout that has points, and the APBF; the SVG names
    /// them and its axes.
    #[test]
    fn charts_from_a_report() {
        let outcomes = |penalty| Outcomes {
            penalty,
            ..Outcomes::default()
        };
        let trial = |standard, inferential| Trial {
            k: 3,
            bits_per_timer: 3,
            cells: 64,
            block: 1,
            padding: 0,
            standard_answers: outcomes(standard),
            inferential_answers: outcomes(inferential),
            posterior_error: 0.1,
            calibration_gap: (0.5, 0.0),
            ns_per_step: 10.0,
        };
        let compared = |s, i| Compared {
            standard: trial(s, 0.0),
            inferential: trial(0.0, i),
        };
        let point = |bpi, s, i| Point {
            bpi,
            unblocked: compared(s, i),
            one_block: (bpi > 2).then(|| compared(2.0 * s, i)),
            two_blocks: None,
            false_negatives_standard: 0,
            apbf: Some(ApbfPoint {
                best: ApbfTrial {
                    k: 4,
                    l: 2,
                    g: 8,
                    bits: 512,
                    answers: outcomes(s / 2.0),
                },
                trials: 1,
                ns: StepTimes {
                    standard: 1.0,
                    inferential: 2.0,
                    apbf: 3.0,
                },
            }),
        };
        let report = TimingReport {
            warm_up: 10,
            steps: 10,
            streams: vec![StreamReport {
                name: "uniform",
                condition: "Pos≈Neg",
                universe: 64,
                window: 16,
                pos_neg: 1.0,
                paper_pos_neg: 1.0,
                paper_ratio: "-",
                paper_pe: "-",
                points: vec![point(2, 100.0, 80.0), point(16, 10.0, 5.0)],
            }],
        };
        let charts = report.charts();
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "standard, unblocked",
                "inferential, unblocked",
                "standard, one block",
                "inferential, one block",
                "APBF (best k, l), same memory"
            ]
        );
        assert_eq!(charts[0].series[1].points, [(2.0, 80.0), (16.0, 5.0)]);
        assert_eq!(charts[0].series[2].points, [(16.0, 20.0)]);
        assert_eq!(charts[0].series[4].points, [(2.0, 50.0), (16.0, 5.0)]);
        crate::plot::assert_draws(
            "timing",
            &charts,
            &[
                "uniform [Pos≈Neg]",
                "bits per item",
                "total penalty",
                "APBF (best k, l)",
            ],
        );
    }
}
