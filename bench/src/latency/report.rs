//! The `latency` report: its JSON shape and its table.

use serde::Serialize;
use streambloom::Isa;

use super::sampler::Measured;
use super::targets::Pages;
use crate::output::{num, Align, Table};
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
}
