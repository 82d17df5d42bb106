//! The `repro spectral` report: its JSON shape and its tables.

use std::fmt::Write as _;

use serde::Serialize;

use super::experiments::{FilterScore, Point, Spread};
use super::findings::Claim;
use super::table1::Line;
use super::workload::Scale;
use crate::output::{num, Align, Table};

/// Everything `repro spectral` measured.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `"repro spectral"`.
    pub command: &'static str,
    /// Distinct values (n).
    pub values: usize,
    /// Counters per item (k).
    pub k: usize,
    /// Items per stream and runs per point.
    pub scale: Scale,
    /// The layouts compared.
    pub layouts: Vec<&'static str>,
    /// Figures 6, 8 (solid and dotted) and 9.
    pub figures: Vec<Figure>,
    /// Table 1, the paper's rows beside ours.
    pub table1: Vec<Line>,
    /// The largest counter seen per layout.
    pub peaks: Vec<Peak>,
    /// The paper's claims beside our figures, each with its verdict.
    pub claims: Vec<Claim>,
}

/// One figure's experiment: a row per point and layout.
#[derive(Debug, Serialize)]
pub struct Figure {
    /// Which figure, and the experiment's setting.
    pub name: &'static str,
    /// What the paper finds there.
    pub paper: &'static str,
    /// The filters run, in column order.
    pub filters: Vec<&'static str>,
    /// The points, each with every layout's scores.
    pub points: Vec<FigurePoint>,
}

/// One point of a figure.
#[derive(Debug, Serialize)]
pub struct FigurePoint {
    /// Its label, load, skew and Bloom error.
    #[serde(flatten)]
    pub point: Point,
    /// One entry per layout.
    pub layouts: Vec<Scores>,
}

/// The filters' scores on one layout.
#[derive(Clone, Debug, Serialize)]
pub struct Scores {
    /// The layout's name.
    pub layout: &'static str,
    /// One per filter, in the figure's order.
    pub filters: Vec<FilterScore>,
}

/// The largest counter one layout held over Figures 6 and 8.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Peak {
    /// The layout's name.
    pub layout: &'static str,
    /// The largest counter seen.
    pub largest: u32,
    /// The largest a counter can hold.
    pub limit: u32,
    /// Whether a counter reached the limit.
    pub saturated: bool,
}

/// `mean±se` with `d` decimals, as the tables print a [`Spread`].
pub fn pm(s: Spread, d: usize) -> String {
    format!("{}±{}", num(Some(s.mean), d), num(Some(s.se), d))
}

/// One metric a figure prints: its name, decimals, and the field.
pub type Metric = (&'static str, usize, fn(&FilterScore) -> Spread);

/// The metrics a figure prints, one table each.
pub const METRICS: [Metric; 3] = [
    ("E_ratio", 4, |s| s.e_ratio),
    ("E_add", 3, |s| s.e_add),
    ("FN rate", 4, |s| s.fn_rate),
];

fn figure(f: &Figure) -> String {
    let mut out = format!("\n{}; paper: {}\n", f.name, f.paper);
    for (metric, d, get) in METRICS {
        let mut columns = vec![
            ("point", Align::Left),
            ("layout", Align::Left),
            ("E_b", Align::Right),
        ];
        columns.extend(f.filters.iter().map(|&n| (n, Align::Right)));
        let mut t = Table::new(&columns);
        for p in &f.points {
            for (i, s) in p.layouts.iter().enumerate() {
                let label = if i == 0 {
                    p.point.label.clone()
                } else {
                    String::new()
                };
                let mut row = vec![label, s.layout.to_owned(), num(Some(p.point.e_b), 4)];
                row.extend(s.filters.iter().map(|x| pm(get(x), d)));
                t.row(row);
            }
        }
        let _ = write!(out, "  {metric} (mean±se over runs):\n{}", t.render());
    }
    out
}

fn table1(lines: &[Line]) -> String {
    let mut t = Table::new(&[
        ("γ", Align::Right),
        ("row", Align::Left),
        ("RM memory", Align::Left),
        ("E_b", Align::Right),
        ("P(R_x)", Align::Right),
        ("P(E_x|R_x)", Align::Right),
        ("γ_s", Align::Right),
        ("E_b^s", Align::Right),
        ("E_RM", Align::Right),
        ("E_b/E_RM", Align::Right),
        ("E_ratio MS", Align::Right),
        ("E_ratio RM", Align::Right),
        ("MS/RM", Align::Right),
        ("late %", Align::Right),
        ("rec. %", Align::Right),
    ]);
    for l in lines {
        let paper = std::iter::once(("paper", "secondary extra", l.paper, None));
        let rows = paper.chain(
            l.measured
                .iter()
                .map(|m| (m.layout, m.reading, m.row, Some(m))),
        );
        for (i, (name, reading, r, m)) in rows.enumerate() {
            let gamma = if i == 0 {
                l.gamma.to_string()
            } else {
                String::new()
            };
            let causes = m.and_then(|m| m.causes);
            t.row(vec![
                gamma,
                name.to_owned(),
                reading.to_owned(),
                num(Some(r.e_b), 3),
                num(Some(r.p_r), 3),
                num(Some(r.p_e_given_r), 4),
                num(Some(r.gamma_s), 3),
                format!("{:.2e}", r.e_b_s),
                format!("{:.2e}", r.e_rm),
                num(Some(r.gain), 1),
                m.map_or_else(|| "-".to_owned(), |m| pm(m.e_ratio_ms, 4)),
                m.map_or_else(|| "-".to_owned(), |m| pm(m.e_ratio_rm, 4)),
                num(m.map(|m| m.measured_gain), 1),
                num(causes.map(|c| 100.0 * c.late), 0),
                num(causes.map(|c| 100.0 * c.recurring), 0),
            ]);
        }
    }
    format!(
        "\nTable 1 (skew 0.5, k = 5, n = 1000): the paper's row (secondary m/2 on top of m), then \
         ours per layout under both readings of RM's memory (equal memory: primary m − m/3, \
         secondary m/3); E_b is the formula (1 − e^−γ)^k at m, E_RM = P(R)·P(E|R) + (1 − \
         P(R))·E_b^s, E_b/E_RM the model's gain; E_ratio MS (at m) and RM are measured over the \
         stream's items, MS/RM is the measured gain; late % and rec. % are the shares of RM's \
         wrong estimates that are late detection (the secondary value was already above the \
         true count when the item moved, §3.3.1) and wrong recurring minima (unblocked only: \
         the reference records moves)\n{}",
        t.render()
    )
}

fn claims(claims: &[Claim]) -> String {
    let mut out =
        "\nThe paper's claims beside our figures (✓ = the claim's test holds):\n".to_owned();
    for c in claims {
        let _ = writeln!(out, "\n[{}] {}; paper: {}", c.section, c.what, c.paper);
        let mut t = Table::new(&[
            ("  layout", Align::Left),
            ("under", Align::Left),
            ("ours", Align::Right),
            ("", Align::Left),
        ]);
        for r in &c.rows {
            t.row(vec![
                format!("  {}", r.layout),
                r.under.clone(),
                r.value.clone(),
                (if r.holds { "✓" } else { "✗" }).to_owned(),
            ]);
        }
        out += &t.render();
        let _ = write!(out, "  => {}", c.verdict);
        if !c.reason.is_empty() {
            let _ = write!(out, ": {}", c.reason);
        }
        out.push('\n');
    }
    let mut t = Table::new(&[("claim", Align::Left), ("verdict", Align::Left)]);
    for c in claims {
        t.row(vec![
            format!("[{}] {}", c.section, c.what),
            c.verdict.clone(),
        ]);
    }
    let _ = write!(out, "\nVerdicts:\n{}", t.render());
    out
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let mut out = format!(
            "Spectral Bloom filters, §6.1–6.2: Zipf, n = {} values, M = {}, k = {}, {} runs per \
             point (each its own stream and hash seed); layouts: {}\n\
             Filters: MS, MI at m counters; RM= with primary and secondary together m (§6.1); \
             RM+ with the secondary m/2 on top of m (Table 1); B_f: with the marker filter of m \
             bits\n",
            self.values,
            self.scale.items,
            self.k,
            self.scale.runs,
            self.layouts.join(", ")
        );
        for f in &self.figures {
            out += &figure(f);
        }
        out += &table1(&self.table1);
        out.push('\n');
        for p in &self.peaks {
            let _ = writeln!(
                out,
                "Largest counter seen, {}: {} (limit {}: {})",
                p.layout,
                p.largest,
                p.limit,
                if p.saturated {
                    "SATURATED"
                } else {
                    "never saturated"
                }
            );
        }
        out += &claims(&self.claims);
        out
    }
}
