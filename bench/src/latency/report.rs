//! The `latency` report: its JSON shape and its table.

use serde::Serialize;
use streambloom::Isa;

use super::sampler::Measured;
use super::targets::Pages;
use crate::output::{num, Align, Table};
use crate::plot::{group, Axis, Chart, Kind, Series};
use crate::size::size_name;
use crate::stats::Summary;

/// Everything `latency` measured, and how.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `"latency"`.
    pub command: &'static str,
    /// `"release"` or `"debug"` (a debug build's timings mean nothing).
    pub build: &'static str,
    /// The core the thread was pinned to, if any.
    pub core: Option<usize>,
    /// Items per timed batch.
    pub batch_items: usize,
    /// Timed batches per row.
    pub batches: usize,
    /// The clock's cost per batch, subtracted from every sample.
    pub timer_overhead_ns: f64,
    /// One row per target, ISA and size.
    pub results: Vec<Row>,
}

/// One target on one ISA and size.
#[derive(Debug, Serialize)]
pub struct Row {
    /// The target's name.
    pub target: &'static str,
    /// The kernel implementation, or `None` for a target that runs none.
    pub isa: Option<&'static str>,
    /// The filter's (or buffer's) memory.
    pub bytes: usize,
    /// The pages it was on: `"4k"` or `"huge"` ([`Pages::name`]).
    pub pages: &'static str,
    /// Per-item percentiles and mean.
    #[serde(flatten)]
    pub summary: Summary,
    /// 1 / mean; `None` when the mean is zero.
    pub items_per_s: Option<f64>,
    /// The process's `AnonHugePages` when the sampling ended, the memory
    /// still mapped; `None` where it cannot be read (not Linux).
    pub anon_huge_bytes: Option<u64>,
}

impl Row {
    /// A row for what was `measured`.
    pub fn new(
        target: &'static str,
        isa: Option<Isa>,
        bytes: usize,
        pages: Pages,
        measured: Measured,
    ) -> Row {
        Row {
            target,
            isa: isa.map(Isa::name),
            bytes,
            pages: pages.name(),
            summary: measured.summary,
            items_per_s: measured.summary.items_per_s(),
            anon_huge_bytes: measured.anon_huge_bytes,
        }
    }
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let pinned = crate::output::pinned(self.core);
        let out = format!(
            "# latency ({} build): {pinned}; {} batches of {} items per row; clock cost {:.1} ns per batch, subtracted\n",
            self.build, self.batches, self.batch_items, self.timer_overhead_ns
        );
        let mut t = Table::new(&[
            ("target", Align::Left),
            ("isa", Align::Left),
            ("pages", Align::Left),
            ("size", Align::Right),
            ("p50 (ns)", Align::Right),
            ("p99 (ns)", Align::Right),
            ("p99.9 (ns)", Align::Right),
            ("mean (ns)", Align::Right),
            ("Mitems/s", Align::Right),
            ("THP MiB", Align::Right),
        ]);
        for r in &self.results {
            let s = &r.summary;
            t.row(vec![
                r.target.to_owned(),
                r.isa.unwrap_or("-").to_owned(),
                r.pages.to_owned(),
                size_name(r.bytes),
                num(Some(s.p50), 2),
                num(Some(s.p99), 2),
                num(Some(s.p999), 2),
                num(Some(s.mean), 2),
                num(r.items_per_s.map(|x| x / 1e6), 1),
                num(r.anon_huge_bytes.map(|b| b as f64 / f64::from(1 << 20)), 0),
            ]);
        }
        out + &t.render()
    }

    /// p50 against filter size, one panel per filter family (the target
    /// name's first word: `stable`, `spectral`, ...) so each stays
    /// readable, one line per target × ISA (× pages when the run had
    /// several); the memory's own limits, [`LIMITS`], are in every panel.
    fn charts(&self) -> Vec<Chart> {
        let curves = |rows: &mut dyn Iterator<Item = &Row>| {
            group(rows.map(|r| (self.curve_name(r), r.bytes as f64, r.summary.p50)))
        };
        let limits: Vec<Series> = curves(&mut self.results.iter().filter(|r| is_limit(r)))
            .into_iter()
            .map(|s| s.with_kind(Kind::Limit))
            .collect();
        let mut families: Vec<&str> = Vec::new();
        for r in self.results.iter().filter(|r| !is_limit(r)) {
            if !families.contains(&family(r.target)) {
                families.push(family(r.target));
            }
        }
        let chart = |title: String, mut series: Vec<_>| {
            series.extend(limits.iter().cloned());
            Chart {
                title,
                x: Axis::log("filter size").bytes(),
                y: Axis::log("p50 (ns per item, batches of 64)"),
                series,
            }
        };
        if families.is_empty() {
            return vec![chart("latency: memory limits".to_owned(), Vec::new())];
        }
        families
            .into_iter()
            .map(|f| {
                let rows = &mut self
                    .results
                    .iter()
                    .filter(|r| family(r.target) == f && !is_limit(r));
                chart(
                    format!("latency: {f} targets ({} build)", self.build),
                    curves(rows),
                )
            })
            .collect()
    }
}

/// The targets that measure the memory, not a filter: drawn in every
/// panel of the plot as the limits the filters' curves approach.
const LIMITS: [&str; 2] = ["line-rmw", "line-read"];

/// Whether `row` is one of the [`LIMITS`].
fn is_limit(row: &Row) -> bool {
    LIMITS.contains(&row.target)
}

/// A target's filter family: its name's first word.
fn family(target: &str) -> &str {
    target.split('-').next().unwrap_or(target)
}

impl Report {
    /// A curve's name: the target, its ISA if it has one, and its pages
    /// when the run measured on several.
    fn curve_name(&self, row: &Row) -> String {
        let several_pages = self.results.iter().any(|r| r.pages != row.pages);
        let mut name = row.target.to_owned();
        for part in [row.isa, several_pages.then_some(row.pages)]
            .into_iter()
            .flatten()
        {
            name.push(' ');
            name.push_str(part);
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Report as _;

    fn row(target: &'static str, isa: Option<&'static str>, bytes: usize, p50: f64) -> Row {
        Row {
            target,
            isa,
            bytes,
            pages: "4k",
            summary: Summary {
                p50,
                p99: p50,
                p999: p50,
                mean: p50,
            },
            items_per_s: Some(1e9 / p50),
            anon_huge_bytes: None,
        }
    }

    fn report(results: Vec<Row>) -> Report {
        Report {
            command: "latency",
            build: "release",
            core: Some(0),
            batch_items: 64,
            batches: 10,
            timer_overhead_ns: 20.0,
            results,
        }
    }

    /// One panel per family, each with the limits; one curve per target
    /// and ISA, its points in size order.
    #[test]
    fn charts_by_family_with_limits() {
        let mut rows = Vec::new();
        for (bytes, scale) in [(16 << 10, 1.0), (1 << 20, 2.0), (64 << 20, 8.0)] {
            rows.push(row("line-rmw", None, bytes, 1.5 * scale));
            rows.push(row("stable-observe", Some("scalar"), bytes, 4.0 * scale));
            rows.push(row("stable-observe", Some("avx2"), bytes, 3.0 * scale));
            rows.push(row("spectral-insert", Some("avx2"), bytes, 5.0 * scale));
        }
        let charts = report(rows).charts();
        let names = crate::plot::series_names(&charts);
        assert_eq!(
            names,
            [
                vec!["stable-observe scalar", "stable-observe avx2", "line-rmw"],
                vec!["spectral-insert avx2", "line-rmw"],
            ]
        );
        assert_eq!(
            charts[0].series[1].points,
            [(16384.0, 3.0), (1048576.0, 6.0), (67108864.0, 24.0)]
        );
        assert_eq!(charts[1].series[1].kind, Kind::Limit);
        crate::plot::assert_draws(
            "latency",
            &charts,
            &[
                "stable-observe avx2",
                "line-rmw",
                "filter size",
                "p50 (ns per item",
                "latency: spectral targets",
            ],
        );
    }

    /// With several pages, the pages are part of each curve's name; with
    /// only the limits, they are the one panel.
    #[test]
    fn pages_and_limits_alone() {
        let mut huge = row("line-read", None, 1 << 20, 2.0);
        huge.pages = "huge";
        let charts = report(vec![row("line-read", None, 1 << 20, 3.0), huge]).charts();
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["line-read 4k", "line-read huge"]);
    }
}
