//! The `repro spectral` report: its JSON shape and its tables.

use std::fmt::Write as _;

use serde::Serialize;

use super::experiments::Point;
use super::findings::{Findings, Verdict};
use super::table1::Line;
use super::workload::{Scale, Score};
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
    /// The paper's findings, checked per layout.
    pub findings: Vec<Findings>,
    /// What blocked hashing explains (when both layouts ran).
    pub verdict: Option<Verdict>,
}

/// One figure's experiment: a row per point and layout.
#[derive(Debug, Serialize)]
pub struct Figure {
    /// Which figure, and the experiment's setting.
    pub name: &'static str,
    /// What the paper finds there.
    pub paper: &'static str,
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

/// The three policies' scores on one layout.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Scores {
    /// The layout's name.
    pub layout: &'static str,
    /// Minimum Selection.
    pub ms: Score,
    /// Minimal Increase.
    pub mi: Score,
    /// Recurring Minimum.
    pub rm: Score,
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

fn figure(f: &Figure) -> String {
    let mut t = Table::new(&[
        ("point", Align::Left),
        ("layout", Align::Left),
        ("E_b", Align::Right),
        ("E_add MS", Align::Right),
        ("E_add MI", Align::Right),
        ("E_add RM", Align::Right),
        ("E_ratio MS", Align::Right),
        ("E_ratio MI", Align::Right),
        ("E_ratio RM", Align::Right),
        ("FN MS", Align::Right),
        ("FN MI", Align::Right),
        ("FN RM", Align::Right),
    ]);
    for p in &f.points {
        for (i, s) in p.layouts.iter().enumerate() {
            let label = if i == 0 {
                p.point.label.clone()
            } else {
                String::new()
            };
            let mut row = vec![label, s.layout.to_owned(), num(Some(p.point.e_b), 4)];
            row.extend([s.ms, s.mi, s.rm].map(|x| num(Some(x.e_add), 3)));
            row.extend([s.ms, s.mi, s.rm].map(|x| num(Some(x.e_ratio), 4)));
            row.extend([s.ms, s.mi, s.rm].map(|x| num(Some(x.fn_rate), 4)));
            t.row(row);
        }
    }
    format!("\n{}; paper: {}\n{}", f.name, f.paper, t.render())
}

fn table1(lines: &[Line]) -> String {
    let mut t = Table::new(&[
        ("γ", Align::Right),
        ("row", Align::Left),
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
    ]);
    for l in lines {
        let rows = std::iter::once(("paper", l.paper, None))
            .chain(l.measured.iter().map(|m| (m.layout, m.row, Some(m))));
        for (i, (name, r, m)) in rows.enumerate() {
            let gamma = if i == 0 {
                l.gamma.to_string()
            } else {
                String::new()
            };
            t.row(vec![
                gamma,
                name.to_owned(),
                num(Some(r.e_b), 3),
                num(Some(r.p_r), 3),
                num(Some(r.p_e_given_r), 4),
                num(Some(r.gamma_s), 3),
                format!("{:.2e}", r.e_b_s),
                format!("{:.2e}", r.e_rm),
                num(Some(r.gain), 1),
                num(m.map(|m| m.e_ratio_ms), 4),
                num(m.map(|m| m.e_ratio_rm), 4),
                num(m.map(|m| m.e_ratio_ms / m.e_ratio_rm), 1),
            ]);
        }
    }
    format!(
        "\nTable 1 (skew 0.5, k = 5, n = 1000, m_s = m/2): the paper's row, then ours; E_b is \
         the formula (1 − e^−γ)^k, E_RM = P(R)·P(E|R) + (1 − P(R))·E_b^s; the last three \
         columns are measured error ratios\n{}",
        t.render()
    )
}

fn findings(f: &Findings) -> String {
    let mut out = format!("\nThe paper's findings, checked ({}):\n", f.layout);
    let mut line = |s: String| {
        out += "  ";
        out += &s;
        out.push('\n');
    };
    line(format!(
        "MS's error ratio is E_b (§6.1): γ = 0.7, skew 0.5: {:.4} against E_b = {:.4}",
        f.ms_e_ratio_07, f.e_b_07
    ));
    line(format!(
        "MI has ~5x fewer errors than MS at optimal γ over skews (§3.4): MS/MI error ratio = {:.1} (γ = 0.7, skew 0.5: {:.1})",
        f.ms_mi_over_skews, f.ms_mi_07
    ));
    line(format!(
        "MI best without deletions (§6.1): lowest error ratio at {} of {} skews",
        f.mi_best_skews, f.skews
    ));
    line(format!(
        "RM better than MS at equal memory, ratio and E_add (§3.4, §6.1): at {} of {} skews",
        f.rm_better_skews, f.skews
    ));
    line(format!(
        "RM and MI almost identical in error ratio over γ (Fig. 6b): RM/MI error ratio, mean over γ = {:.1}",
        f.rm_mi_over_gamma
    ));
    line(format!(
        "with deletions MI worst (E_add) at {} of {} skews; share of MI's errors that are false negatives: {:.0} % (paper: almost all); FN rate MS {:.4}, RM {:.4} (paper: none)",
        f.mi_worst_deletes,
        f.skews,
        100.0 * f.mi_fn_share,
        f.ms_fn_rate,
        f.rm_fn_rate
    ));
    line(format!(
        "sliding window: MI E_add / RM E_add = {:.1} (paper: 1 to 2 orders of magnitude); RM better than MS (E_add) at {} of {} skews (paper: advantage to RM)",
        f.window_mi_rm, f.window_rm_better_skews, f.skews
    ));
    line(format!(
        "Table 1 at γ = 0.7: P(E_x|R_x) = {:.4} (paper: 0.002), E_b/E_RM = {:.1} (paper: 18.5); measured error ratio MS/RM = {:.1}",
        f.table1_p_e_given_r, f.table1_gain, f.table1_measured_gain
    ));
    out
}

fn verdict(findings: &[Findings], verdict: Option<&Verdict>) -> String {
    let mut columns = vec![("finding (test)", Align::Left), ("paper", Align::Right)];
    columns.extend(findings.iter().map(|f| (f.layout, Align::Right)));
    let mut t = Table::new(&columns);
    for (i, c) in findings
        .first()
        .map_or(&[][..], |f| &f.checks)
        .iter()
        .enumerate()
    {
        let mut row = vec![c.what.to_owned(), c.paper.to_owned()];
        row.extend(findings.iter().map(|f| {
            let c = &f.checks[i];
            format!("{} {}", c.value, if c.holds { "✓" } else { "✗" })
        }));
        t.row(row);
    }
    let mut out = format!(
        "\nBlocked against unblocked, beside the paper (✓ = the paper's finding holds):\n{}",
        t.render()
    );
    if let Some(v) = verdict {
        let list = |v: &[&str]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join("; ")
            }
        };
        let _ = writeln!(
            out,
            "  => explained by blocked hashing (holds unblocked, not {}): {}",
            v.blocked,
            list(&v.explained_by_blocking)
        );
        let _ = writeln!(
            out,
            "  => not explained by it (holds on neither layout): {}",
            list(&v.not_explained)
        );
        let _ = writeln!(out, "  => holds on both: {}", list(&v.hold_on_both));
    }
    out
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let mut out = format!(
            "Spectral Bloom filters, §6.1–6.2: Zipf, n = {} values, M = {}, k = {}, {} runs per point; layouts: {}\n",
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
        for f in &self.findings {
            out += &findings(f);
        }
        out += &verdict(&self.findings, self.verdict.as_ref());
        out
    }
}
