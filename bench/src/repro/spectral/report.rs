//! The `repro spectral` report: its JSON shape and its tables.

use std::fmt::Write as _;

use serde::Serialize;

use super::experiments::{FilterScore, Point, Spread};
use super::findings::Claim;
use super::table1::Line;
use super::workload::Scale;
use crate::output::{num, Align, Table};
use crate::plot::{group, Axis, Chart, Kind, Series};

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
    /// One panel per figure: the mean E_ratio against γ (Fig. 6) or skew,
    /// one line per filter × layout, with the Bloom error E_b at each point
    /// as a limit.
    fn charts(&self) -> Vec<Chart> {
        self.figures.iter().map(figure_chart).collect()
    }

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

/// A figure's panel (see [`Report::charts`](crate::output::Report::charts)):
/// against γ when the points' loads differ, else against skew.
fn figure_chart(f: &Figure) -> Chart {
    let by_gamma = f
        .points
        .windows(2)
        .any(|w| w[0].point.gamma != w[1].point.gamma);
    let x = |p: &Point| if by_gamma { p.gamma } else { p.skew };
    let mut series = group(f.points.iter().flat_map(|p| {
        p.layouts.iter().flat_map(move |l| {
            l.filters.iter().map(move |s| {
                (
                    format!("{} {}", s.filter, l.layout),
                    x(&p.point),
                    s.e_ratio.mean,
                )
            })
        })
    }));
    let bloom = f
        .points
        .iter()
        .map(|p| (x(&p.point), p.point.e_b))
        .collect();
    series.push(Series::new("E_b = (1 − e^−γ)^k", bloom).with_kind(Kind::Limit));
    Chart {
        title: f.name.to_owned(),
        x: Axis::linear(if by_gamma {
            "load γ = nk/m"
        } else {
            "Zipf skew"
        }),
        y: Axis::log("E_ratio (mean over runs)"),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure of two points on two layouts with two filters.
    fn hand_made(gammas: [f64; 2], skews: [f64; 2]) -> Figure {
        let score = |filter, e| FilterScore {
            filter,
            e_add: Spread { mean: e, se: 0.0 },
            e_ratio: Spread { mean: e, se: 0.0 },
            fn_rate: Spread { mean: 0.0, se: 0.0 },
        };
        let points = (0..2)
            .map(|i| FigurePoint {
                point: Point::new(format!("p{i}"), gammas[i], skews[i]),
                layouts: ["blocked16", "unblocked"]
                    .into_iter()
                    .map(|layout| Scores {
                        layout,
                        filters: vec![score("MS", 0.1 * (i + 1) as f64), score("MI", 0.0)],
                    })
                    .collect(),
            })
            .collect();
        Figure {
            name: "Fig. test",
            paper: "-",
            filters: vec!["MS", "MI"],
            points,
        }
    }

    /// Against γ when the loads differ, against skew otherwise; a line per
    /// filter × layout and the Bloom error; MI's zeros left off the log axis.
    #[test]
    fn figures_chart_against_gamma_or_skew() {
        let by_gamma = figure_chart(&hand_made([0.5, 1.0], [0.5, 0.5]));
        assert_eq!(by_gamma.x.label, "load γ = nk/m");
        let names: Vec<&str> = by_gamma.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "MS blocked16",
                "MI blocked16",
                "MS unblocked",
                "MI unblocked",
                "E_b = (1 − e^−γ)^k"
            ]
        );
        assert_eq!(by_gamma.series[0].points, [(0.5, 0.1), (1.0, 0.2)]);
        let by_skew = figure_chart(&hand_made([0.7, 0.7], [0.0, 1.0]));
        assert_eq!(by_skew.x.label, "Zipf skew");
        assert_eq!(by_skew.series[2].points, [(0.0, 0.1), (1.0, 0.2)]);
        crate::plot::assert_draws(
            "spectral",
            &[by_gamma, by_skew],
            &[
                "Fig. test",
                "MS unblocked",
                "E_ratio (mean over runs)",
                "Zipf skew",
                "load γ",
            ],
        );
    }
}
