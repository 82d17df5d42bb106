//! `streambloom-bench repro reservoir`: the synthetic experiments of the
//! Reservoir-sampling Bloom filter paper (Dutta, Bhattacharjee & Narang,
//! EDBT 2012, §6, Tables 2–5): RSBF against the Stable Bloom filter at
//! equal memory, threshold FPR 0.1, `p* = 0.03`.
//!
//! **Streams** (the paper does not give its generator; the implementers'
//! digest's choice): i.i.d. uniform keys from a universe `U` solved from
//! each table's size and distinct fraction. FPR = first occurrences
//! reported duplicate / first occurrences; FNR = repeats reported new /
//! repeats; both cumulative over the stream, as the tables report them.
//!
//! **Filters.** RSBF: `ReservoirParams::plan(bits, 0.1)` (`k = 3`, the
//! paper's mean of eq. 5.27 and 1), fill-phase resets, clears in the item's
//! own block, one block an item. SBF (the paper gives no parameters):
//! `StableBloom` with 1-bit cells (Max = 1), `K = 3`, `P` from Deng &
//! Rafiei's formula for a stable FPR of 0.1 at that memory (3.46 at 16 384
//! bits), rounded to the nearest integer, the library's default two blocks
//! an item. Tables 4–5 (695 M and 10^9 items) run with `N`, `U` and the
//! memory divided by `--scale`.
//!
//! **Why the numbers differ**, measured on the scaled Tables 4–5 rows:
//! RSBF without fill-phase resets, RSBF with the paper's uniform clears,
//! and SBF with `K = 2`, beside the two defaults.

use serde::Serialize;

use streambloom::analysis::reservoir::printed_fpr;
use streambloom::reservoir::{ReservoirBloom, ReservoirParams, Reset};
use streambloom::rng::Rng;
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::W1;

use crate::output::{num, Align, Output, Report, Table};
use crate::plot::{Axis, Chart, Kind, Series};

/// `repro reservoir`'s options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Divisor of N, U and memory for Tables 4–5 (695 M and 10^9 items):
    /// 1 runs them at full size (about an hour here), 10 at 69.5 M and
    /// 100 M items (the fallback), 100 in seconds
    #[arg(long, default_value_t = 10)]
    pub scale: u64,
    /// A smoke run: Table 2 only, and Tables 4–5 divided by 10 000
    #[arg(long)]
    pub quick: bool,
}

/// The method, for `repro reservoir --help`.
pub const LONG_ABOUT: &str = "\
Reruns the synthetic experiments of the Reservoir-sampling Bloom filter paper
(§6, Tables 2–5): RSBF (k = 3 from a threshold FPR of 0.1, p* = 0.03) against
the Stable Bloom filter (1-bit cells, K = 3, P from Deng & Rafiei's formula
for a stable FPR of 0.1) at equal memory, on i.i.d. uniform streams whose
universe gives each table's distinct fraction (the paper's generator is not
given). Prints each row's FNR and FPR beside the paper's, the SBF/RSBF FNR
ratio against the paper's, and for Tables 4–5 (scaled by --scale) RSBF
without fill-phase resets, RSBF with uniform clears and SBF with K = 2, which
measure why the ratios differ; then the convergence curve (change in the
number of ones between checkpoints 1 000 items apart, Figs. 6–7) and the
corrected FPR model against the measured rate and the printed eq. 5.7.";

/// One row of Tables 2–5: the stream, the memory and the paper's figures
/// (percent: SBF FNR, RSBF FNR, SBF FPR, RSBF FPR).
struct PaperRow {
    table: u8,
    n: u64,
    u: u64,
    bits: u64,
    paper: [f64; 4],
}

/// Tables 2–5 verbatim (`NOTES-reservoir.md` §5), with the universe that
/// gives each table's distinct fraction.
const ROWS: [PaperRow; 13] = [
    row(2, 100_000, 173_461, 16_384, [85.06, 84.49, 10.05, 11.22]),
    row(2, 100_000, 173_461, 65_536, [74.37, 74.85, 8.093, 8.384]),
    row(
        2,
        100_000,
        173_461,
        4_194_304,
        [5.51, 6.29, 0.00382, 0.00263],
    ),
    row(
        3,
        10_000_000,
        6_067_397,
        16_384,
        [88.83, 87.52, 11.08, 12.464],
    ),
    row(
        3,
        10_000_000,
        6_067_397,
        262_144,
        [88.11, 86.89, 10.86, 12.12],
    ),
    row(
        3,
        10_000_000,
        6_067_397,
        4_194_304,
        [77.33, 77.73, 7.822, 7.914],
    ),
    row(
        4,
        695_000_000,
        104_383_984,
        262_144,
        [88.86, 87.47, 12.51, 11.1],
    ),
    row(
        4,
        695_000_000,
        104_383_984,
        67_108_864,
        [82.48, 58.2818, 8.3, 8.4],
    ),
    row(
        4,
        695_000_000,
        104_383_984,
        1_073_741_824,
        [37.79, 23.12, 0.742, 0.89],
    ),
    row(
        4,
        695_000_000,
        104_383_984,
        4_294_967_296,
        [12.94, 7.37, 0.069, 0.072],
    ),
    row(
        5,
        1_000_000_000,
        100_004_542,
        67_108_864,
        [82.58, 67.66, 8.262, 10.262],
    ),
    row(
        5,
        1_000_000_000,
        100_004_542,
        1_073_741_824,
        [38.17, 23.47, 0.7, 0.83],
    ),
    row(
        5,
        1_000_000_000,
        100_004_542,
        4_294_967_296,
        [13.163, 7.53, 0.0634, 0.0664],
    ),
];

const fn row(table: u8, n: u64, u: u64, bits: u64, paper: [f64; 4]) -> PaperRow {
    PaperRow {
        table,
        n,
        u,
        bits,
        paper,
    }
}

/// The threshold FPR of every experiment (§6) and the SBF's stable FPR.
const THRESHOLD_FPR: f64 = 0.1;

/// Deng & Rafiei's `P` for a stable FPR `fps` with `K` cells of Max 1 in
/// `m` cells: `1 / ((SP^(−1/Max) − 1)·(1/K − 1/m))`, `SP = 1 − fps^(1/K)`.
fn deng_rafiei_p(fps: f64, k: u32, m: f64) -> f64 {
    let sp = 1.0 - fps.powf(1.0 / f64::from(k));
    1.0 / ((1.0 / sp - 1.0) * (1.0 / f64::from(k) - 1.0 / m))
}

/// A filter of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
enum Variant {
    /// RSBF as planned by the paper (fill resets, own-block clears).
    Rsbf,
    /// RSBF without resets in the fill phase (the analysis's variant).
    RsbfNoFillResets,
    /// RSBF with the paper's uniform clears.
    RsbfUniform,
    /// SBF, 1-bit cells, K = 3.
    Sbf,
    /// SBF, 1-bit cells, K = 2.
    SbfK2,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Rsbf => "RSBF",
            Variant::RsbfNoFillResets => "RSBF, no fill resets",
            Variant::RsbfUniform => "RSBF, uniform clears",
            Variant::Sbf => "SBF K=3",
            Variant::SbfK2 => "SBF K=2",
        }
    }
}

/// A built filter of either kind.
enum Filter {
    Rsbf(Box<ReservoirBloom>),
    Sbf(Box<StableBloom<W1>>),
}

impl Filter {
    /// `variant` in `bits` of memory; for an SBF also its `P`.
    fn new(variant: Variant, bits: u64, seed: u64) -> Result<(Filter, Option<usize>), String> {
        let e = |e: streambloom::Error| e.to_string();
        let bits = usize::try_from(bits).map_err(|e| e.to_string())?;
        let rsbf = |p: ReservoirParams| -> Result<(Filter, Option<usize>), String> {
            Ok((
                Filter::Rsbf(Box::new(ReservoirBloom::new(p, seed).map_err(e)?)),
                None,
            ))
        };
        let plan = ReservoirParams::plan(bits, THRESHOLD_FPR).map_err(e)?;
        match variant {
            Variant::Rsbf => rsbf(plan),
            Variant::RsbfNoFillResets => rsbf(plan.with_reset_during_fill(false)),
            Variant::RsbfUniform => rsbf(plan.with_reset(Reset::Uniform)),
            Variant::Sbf | Variant::SbfK2 => {
                let k = if variant == Variant::Sbf { 3 } else { 2 };
                let cells = plan.bits;
                let p = deng_rafiei_p(THRESHOLD_FPR, k, cells as f64)
                    .round()
                    .max(1.0) as usize;
                let params = StableParams {
                    cells,
                    bits_per_cell: 1,
                    k,
                    p,
                    eviction: Eviction::Random,
                    layout: Layout::TwoBlocks,
                };
                Ok((
                    Filter::Sbf(Box::new(StableBloom::<W1>::new(params, seed).map_err(e)?)),
                    Some(p),
                ))
            }
        }
    }

    fn observe(&mut self, h: u64) -> bool {
        match self {
            Filter::Rsbf(f) => f.observe_hash(h),
            Filter::Sbf(f) => f.observe_hash(h),
        }
    }

    /// Bits (cells) set.
    fn ones(&self) -> u64 {
        match self {
            Filter::Rsbf(f) => f.ones(),
            Filter::Sbf(f) => ((1.0 - f.zero_fraction()) * f.cells() as f64).round() as u64,
        }
    }
}

/// One filter's measured rates on one stream.
#[derive(Clone, Copy, Debug, Serialize)]
struct Measured {
    variant: Variant,
    fnr: f64,
    fpr: f64,
    /// The SBF's `P`.
    p: Option<usize>,
}

/// Runs `variant` over the stream of `n` uniform keys from `u` (seeded;
/// `u = 0`: `n` distinct keys), calling `at(i, filter)` after each item `i`
/// (1-based).
fn measure(
    variant: Variant,
    bits: u64,
    n: u64,
    u: u64,
    seed: u64,
    mut at: impl FnMut(u64, &Filter),
) -> Result<Measured, String> {
    let (mut f, p) = Filter::new(variant, bits, seed ^ 0x5EED)?;
    let distinct = u == 0;
    let words = if distinct { 0 } else { u.div_ceil(64) };
    let mut seen = vec![0u64; usize::try_from(words).map_err(|e| e.to_string())?];
    let mut rng = Rng::new(seed);
    let (mut firsts, mut fp, mut repeats, mut fn_) = (0u64, 0u64, 0u64, 0u64);
    for i in 1..=n {
        let key = if distinct { i } else { rng.below(u) };
        let (word, bit) = ((key / 64) as usize, 1u64 << (key % 64));
        // The key is the hash: the filters remix it.
        let said = f.observe(key);
        if distinct || seen[word] & bit == 0 {
            if !distinct {
                seen[word] |= bit;
            }
            firsts += 1;
            fp += u64::from(said);
        } else {
            repeats += 1;
            fn_ += u64::from(!said);
        }
        at(i, &f);
    }
    let rate = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok(Measured {
        variant,
        fnr: rate(fn_, repeats),
        fpr: rate(fp, firsts),
        p,
    })
}

/// A row as run: the stream and memory after scaling, and the results.
#[derive(Debug, Serialize)]
struct RowReport {
    table: u8,
    /// Divisor of N, U and memory (1: the paper's size).
    scale: u64,
    n: u64,
    u: u64,
    bits: u64,
    /// The paper's SBF FNR, RSBF FNR, SBF FPR, RSBF FPR (%).
    paper: [f64; 4],
    measured: Vec<Measured>,
}

impl RowReport {
    fn get(&self, v: Variant) -> Option<&Measured> {
        self.measured.iter().find(|m| m.variant == v)
    }

    /// SBF FNR / RSBF FNR, ours.
    fn ratio(&self) -> Option<f64> {
        let (s, r) = (self.get(Variant::Sbf)?, self.get(Variant::Rsbf)?);
        (r.fnr > 0.0).then(|| s.fnr / r.fnr)
    }

    /// SBF FNR / RSBF FNR, the paper's.
    fn paper_ratio(&self) -> f64 {
        self.paper[0] / self.paper[1]
    }

    /// Whether the paper's ratio is reproduced: the same side of 1 and
    /// within 0.1.
    fn verdict(&self) -> &'static str {
        match self.ratio() {
            None => "RSBF FNR 0: no ratio",
            Some(ours) => {
                let paper = self.paper_ratio();
                if (ours - paper).abs() <= 0.1 {
                    "reproduced"
                } else if (ours > 1.0) == (paper > 1.0) {
                    "direction only"
                } else {
                    "not reproduced"
                }
            }
        }
    }
}

/// The convergence curve of one configuration: the change in the number
/// of ones over the 1 000 items before each checkpoint.
#[derive(Debug, Serialize)]
struct Convergence {
    bits: u64,
    n: u64,
    /// `(items, RSBF change, SBF change)`.
    points: Vec<(u64, i64, i64)>,
}

/// The corrected model against measurement on distinct items.
#[derive(Debug, Serialize)]
struct ModelCheck {
    bits: u64,
    n: u64,
    measured: f64,
    model: f64,
    printed_eq_5_7: f64,
}

/// Everything `repro reservoir` prints.
#[derive(Debug, Serialize)]
struct ReservoirReport {
    rows: Vec<RowReport>,
    convergence: Convergence,
    model: ModelCheck,
}

impl Report for ReservoirReport {
    /// One panel per table: each variant's FNR and FPR against the memory
    /// as run, the paper's SBF and RSBF rates dashed beside ours; then the
    /// convergence curves (Figs. 6-7).
    fn charts(&self) -> Vec<Chart> {
        let mut tables: Vec<u8> = self.rows.iter().map(|r| r.table).collect();
        tables.dedup();
        let mut charts: Vec<Chart> = tables.into_iter().map(|t| self.rates_chart(t)).collect();
        charts.push(self.convergence_chart());
        charts
    }

    fn table(&self) -> String {
        let pct = |x: f64, d: usize| num(Some(100.0 * x), d);
        let mut out = String::from(
            "# repro reservoir: RSBF (k = 3, p* = 0.03) against SBF (Max 1, K = 3, P by Deng & Rafiei for 0.1) at equal memory; i.i.d. uniform streams; rates in %, cumulative\n",
        );
        let mut t = Table::new(&[
            ("table", Align::Right),
            ("N / scale", Align::Right),
            ("bits", Align::Right),
            ("SBF P", Align::Right),
            ("SBF FNR paper", Align::Right),
            ("ours", Align::Right),
            ("RSBF FNR paper", Align::Right),
            ("ours", Align::Right),
            ("SBF FPR paper", Align::Right),
            ("ours", Align::Right),
            ("RSBF FPR paper", Align::Right),
            ("ours", Align::Right),
            ("SBF/RSBF FNR paper", Align::Right),
            ("ours", Align::Right),
            ("verdict", Align::Left),
        ]);
        for r in &self.rows {
            let (Some(s), Some(q)) = (r.get(Variant::Sbf), r.get(Variant::Rsbf)) else {
                continue;
            };
            t.row(vec![
                r.table.to_string(),
                format!("{} / {}", r.n, r.scale),
                r.bits.to_string(),
                s.p.map_or(String::new(), |p| p.to_string()),
                num(Some(r.paper[0]), 2),
                pct(s.fnr, 2),
                num(Some(r.paper[1]), 2),
                pct(q.fnr, 2),
                num(Some(r.paper[2]), 4),
                pct(s.fpr, 4),
                num(Some(r.paper[3]), 4),
                pct(q.fpr, 4),
                num(Some(r.paper_ratio()), 2),
                num(r.ratio(), 2),
                r.verdict().to_owned(),
            ]);
        }
        out += &t.render();

        out += "\n# why the scaled Tables 4-5 differ: FNR (FPR) in %, each variant on the same stream\n";
        let variants = [
            Variant::Rsbf,
            Variant::RsbfNoFillResets,
            Variant::RsbfUniform,
            Variant::Sbf,
            Variant::SbfK2,
        ];
        let mut columns = vec![("table", Align::Right), ("bits", Align::Right)];
        columns.extend(variants.iter().map(|v| (v.name(), Align::Right)));
        columns.push(("paper SBF/RSBF", Align::Right));
        columns.push(("best SBF / best RSBF", Align::Right));
        let mut t = Table::new(&columns);
        for r in self.rows.iter().filter(|r| r.measured.len() > 2) {
            let mut cells = vec![r.table.to_string(), r.bits.to_string()];
            for v in variants {
                cells.push(r.get(v).map_or(String::new(), |m| {
                    format!("{} ({})", pct(m.fnr, 2), pct(m.fpr, 3))
                }));
            }
            let best = |vs: &[Variant]| {
                vs.iter()
                    .filter_map(|v| r.get(*v))
                    .map(|m| m.fnr)
                    .fold(f64::INFINITY, f64::min)
            };
            let (sbf, rsbf) = (
                best(&[Variant::Sbf, Variant::SbfK2]),
                best(&[
                    Variant::Rsbf,
                    Variant::RsbfNoFillResets,
                    Variant::RsbfUniform,
                ]),
            );
            cells.push(num(Some(r.paper_ratio()), 2));
            cells.push(num((rsbf > 0.0).then(|| sbf / rsbf), 2));
            t.row(cells);
        }
        out += &t.render();

        let c = &self.convergence;
        out += &format!(
            "\n# convergence (Figs. 6-7): change in the number of ones over the 1 000 items before each checkpoint, {} bits, {} items\n",
            c.bits, c.n
        );
        let mut t = Table::new(&[
            ("items", Align::Right),
            ("RSBF", Align::Right),
            ("SBF", Align::Right),
        ]);
        for &(i, r, s) in &c.points {
            t.row(vec![i.to_string(), r.to_string(), s.to_string()]);
        }
        out += &t.render();

        let m = &self.model;
        out += &format!(
            "\n# the analysis on {} distinct items, {} bits: RSBF FPR measured {} %, corrected model (analysis::reservoir::Model) {} %, printed eq. 5.7 {} % (a joint probability with the first-order 1 - ks/m: wrong, see analysis::reservoir)\n",
            m.n,
            m.bits,
            pct(m.measured, 3),
            pct(m.model, 3),
            pct(m.printed_eq_5_7, 3)
        );
        out
    }
}

/// A rate the plot draws: its name, the measured field, and the paper's
/// columns for SBF K=3 and for RSBF.
type Rate = (&'static str, fn(&Measured) -> f64, [usize; 2]);

impl ReservoirReport {
    /// Table `table`'s panel (see [`Report::charts`]).
    fn rates_chart(&self, table: u8) -> Chart {
        let rows: Vec<&RowReport> = self.rows.iter().filter(|r| r.table == table).collect();
        let mut variants: Vec<Variant> = Vec::new();
        for m in rows.iter().flat_map(|r| &r.measured) {
            if !variants.contains(&m.variant) {
                variants.push(m.variant);
            }
        }
        let rates: [Rate; 2] = [("FNR", |m| m.fnr, [0, 1]), ("FPR", |m| m.fpr, [2, 3])];
        let mut series = Vec::new();
        for (rate, get, paper) in rates {
            for &v in &variants {
                let ours = rows
                    .iter()
                    .filter_map(|r| Some((r.bits as f64, 100.0 * get(r.get(v)?))))
                    .collect();
                series.push(Series::new(format!("{} {rate}", v.name()), ours));
                let column = match v {
                    Variant::Sbf => paper[0],
                    Variant::Rsbf => paper[1],
                    _ => continue,
                };
                let theirs = rows
                    .iter()
                    .map(|r| (r.bits as f64, r.paper[column]))
                    .collect();
                series.push(
                    Series::new(format!("{} {rate}, paper", v.name()), theirs)
                        .with_kind(Kind::Reference),
                );
            }
        }
        let stream = rows.first().map_or(String::new(), |r| {
            format!(" (N = {}, U = {}, scale 1/{})", r.n, r.u, r.scale)
        });
        Chart {
            title: format!("Table {table}: FNR and FPR against memory{stream}"),
            x: Axis::log("memory (bits, as run)"),
            y: Axis::log("rate (%, cumulative over the stream)"),
            series,
        }
    }

    /// The convergence panel: the change in ones over the 1 000 items
    /// before each checkpoint, RSBF and SBF.
    fn convergence_chart(&self) -> Chart {
        let c = &self.convergence;
        let curve = |name: &str, pick: fn(&(u64, i64, i64)) -> i64| {
            Series::new(
                name,
                c.points
                    .iter()
                    .map(|p| (p.0 as f64, pick(p) as f64))
                    .collect(),
            )
        };
        Chart {
            title: format!("Convergence (Figs. 6-7): {} bits, {} items", c.bits, c.n),
            x: Axis::log("items"),
            y: Axis::linear("change in ones over the 1000 items before"),
            series: vec![curve("RSBF", |p| p.1), curve("SBF K=3", |p| p.2)],
        }
    }
}

/// Runs the experiments and prints the report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    out.emit(&report(args, out)?)
}

/// Runs the experiments (progress on `out`'s bar).
fn report(args: &Args, out: &Output) -> Result<ReservoirReport, String> {
    let scale = if args.quick {
        10_000
    } else {
        args.scale.max(1)
    };
    let rows: Vec<&PaperRow> = ROWS
        .iter()
        .filter(|r| !args.quick || r.table == 2 || r.table >= 4)
        .collect();
    let bar = out.progress(rows.len() + 2);
    let mut reports = Vec::new();
    for (i, r) in rows.into_iter().enumerate() {
        let s = if r.table >= 4 { scale } else { 1 };
        // A universe of at least one key: `u = 0` means distinct keys.
        let (n, u) = (r.n / s, (r.u / s).max(1));
        // Whole blocks, at least one: what both filters are given.
        let bits = ((r.bits / s) / 512).max(1) * 512;
        bar.set_message(format!("table {} {} bits", r.table, bits));
        let variants: &[Variant] = if r.table >= 4 {
            &[
                Variant::Rsbf,
                Variant::RsbfNoFillResets,
                Variant::RsbfUniform,
                Variant::Sbf,
                Variant::SbfK2,
            ]
        } else {
            &[Variant::Rsbf, Variant::Sbf]
        };
        let seed = 0x125B_F000 + i as u64;
        let measured = variants
            .iter()
            .map(|&v| measure(v, bits, n, u, seed, |_, _| ()))
            .collect::<Result<Vec<_>, _>>()?;
        reports.push(RowReport {
            table: r.table,
            scale: s,
            n,
            u,
            bits,
            paper: r.paper,
            measured,
        });
        bar.inc(1);
    }

    // Convergence: Table 3's stream at 2 KB (Fig. 6's memory).
    let (bits, n, u) = if args.quick {
        (16_384, 200_000, 121_347)
    } else {
        (16_384, 10_000_000, 6_067_397)
    };
    let checkpoints: Vec<u64> = (0..=20)
        .map(|j| {
            let x = (1000.0f64).ln() + (n as f64 / 1000.0).ln() * f64::from(j) / 20.0;
            (x.exp() / 1000.0).round() as u64 * 1000
        })
        .filter(|&c| c >= 2000 && c <= n)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let curve = |v: Variant| -> Result<Vec<i64>, String> {
        let mut before = 0i64;
        let mut changes = Vec::new();
        measure(v, bits, n, u, 0xC0, |i, f| {
            // A checkpoint's change first: it may also start the next.
            if checkpoints.binary_search(&i).is_ok() {
                changes.push(f.ones() as i64 - before);
            }
            if checkpoints.binary_search(&(i + 1000)).is_ok() {
                before = f.ones() as i64;
            }
        })?;
        Ok(changes)
    };
    let (rsbf, sbf) = (curve(Variant::Rsbf)?, curve(Variant::Sbf)?);
    bar.inc(1);
    let convergence = Convergence {
        bits,
        n,
        points: checkpoints
            .iter()
            .zip(rsbf.iter().zip(&sbf))
            .map(|(&c, (&r, &s))| (c, r, s))
            .collect(),
    };

    // The corrected model on distinct items (a universe far larger than
    // the stream), Table 2's smallest memory.
    let (bits, n) = (16_384u64, 100_000u64);
    let measured = measure(Variant::Rsbf, bits, n, 0, 0xD15, |_, _| ())?.fpr;
    let params = ReservoirParams::plan(bits as usize, THRESHOLD_FPR).map_err(|e| e.to_string())?;
    let model = params.model().map_err(|e| e.to_string())?;
    let check = ModelCheck {
        bits,
        n,
        measured,
        model: model.mean_fpr(0, n),
        printed_eq_5_7: printed_fpr(model.s, model.k, n, 173_461.0),
    };
    bar.finish_and_clear();
    Ok(ReservoirReport {
        rows: reports,
        convergence,
        model: check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick run: every row, every rate a probability, the variants
    /// where they belong, and a table that prints them.
    #[test]
    fn quick_report_is_complete() {
        let args = Args {
            scale: 10,
            quick: true,
        };
        let out = Output {
            json: false,
            quiet: true,
            plot: None,
        };
        let r = report(&args, &out).unwrap();
        assert_eq!(r.rows.len(), 10);
        for row in &r.rows {
            assert_eq!(row.measured.len(), if row.table >= 4 { 5 } else { 2 });
            for m in &row.measured {
                assert!(
                    (0.0..=1.0).contains(&m.fnr) && (0.0..=1.0).contains(&m.fpr),
                    "{m:?}"
                );
            }
        }
        assert!(!r.convergence.points.is_empty());
        assert!(
            (r.model.measured - r.model.model).abs() < 0.01,
            "{:?}",
            r.model
        );
        assert!(r.table().contains("verdict"));
    }

    /// Deng & Rafiei's P at the digest's setting.
    #[test]
    fn sbf_p_is_the_digests() {
        assert!((deng_rafiei_p(0.1, 3, 16_384.0) - 3.46).abs() < 0.01);
    }

    /// Fill-phase resets are what make RSBF forget on a stream shorter
    /// than a sub-filter (Table 2's last row): without them no bit is ever
    /// cleared there, so its FNR is 0; with them it is not.
    #[test]
    fn fill_resets_decide_the_short_stream_row() {
        let (n, u, bits) = (20_000, 34_692, 4_194_304 / 4);
        let with = measure(Variant::Rsbf, bits, n, u, 1, |_, _| ()).unwrap();
        let without = measure(Variant::RsbfNoFillResets, bits, n, u, 1, |_, _| ()).unwrap();
        assert!(with.fnr > 0.0, "{with:?}");
        assert_eq!(without.fnr, 0.0, "{without:?}");
        for m in [with, without] {
            assert!((0.0..=1.0).contains(&m.fpr));
        }
    }

    /// The plot from a hand-made report: a panel per table with ours and
    /// the paper's rates against memory, then the convergence panel; the
    /// SVG names the curves and axes.
    #[test]
    fn charts_from_a_report() {
        let measured = |variant, fnr, fpr| Measured {
            variant,
            fnr,
            fpr,
            p: None,
        };
        let row = |table, bits| RowReport {
            table,
            scale: 1,
            n: 1000,
            u: 2000,
            bits,
            paper: [80.0, 70.0, 10.0, 9.0],
            measured: vec![
                measured(Variant::Rsbf, 0.5, 0.1),
                measured(Variant::Sbf, 0.6, 0.2),
            ],
        };
        let report = ReservoirReport {
            rows: vec![row(2, 1024), row(2, 4096), row(3, 1024)],
            convergence: Convergence {
                bits: 1024,
                n: 4000,
                points: vec![(2000, 300, 280), (4000, 10, -5)],
            },
            model: ModelCheck {
                bits: 1024,
                n: 1000,
                measured: 0.1,
                model: 0.1,
                printed_eq_5_7: 0.4,
            },
        };
        let charts = report.charts();
        assert_eq!(charts.len(), 3);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "RSBF FNR",
                "RSBF FNR, paper",
                "SBF K=3 FNR",
                "SBF K=3 FNR, paper",
                "RSBF FPR",
                "RSBF FPR, paper",
                "SBF K=3 FPR",
                "SBF K=3 FPR, paper"
            ]
        );
        assert_eq!(charts[0].series[0].points, [(1024.0, 50.0), (4096.0, 50.0)]);
        assert_eq!(charts[0].series[3].points, [(1024.0, 80.0), (4096.0, 80.0)]);
        assert_eq!(
            charts[2].series[1].points,
            [(2000.0, 280.0), (4000.0, -5.0)]
        );
        crate::plot::assert_draws(
            "reservoir",
            &charts,
            &[
                "Table 3",
                "memory (bits, as run)",
                "SBF K=3 FPR, paper",
                "Convergence",
                "items",
            ],
        );
    }
}
