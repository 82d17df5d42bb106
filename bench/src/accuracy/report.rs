//! The `accuracy` report: its JSON shape and its table.

use serde::Serialize;

use crate::output::{num, Align, Table};

/// Everything `accuracy` measured, and how.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `"accuracy"`.
    pub command: &'static str,
    /// `"release"` or `"debug"` (a debug build's timings mean nothing).
    pub build: &'static str,
    /// Whether this was a `--quick` smoke run (smaller samples and sizes).
    pub quick: bool,
    /// The core the thread was pinned to for the latency rows, if any.
    pub core: Option<usize>,
    /// The kernel implementation the latency rows ran.
    pub isa: &'static str,
    /// One row per filter, setting and metric.
    pub rows: Vec<Row>,
}

/// One metric of one filter and setting, per layout.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `Classic`, `Stable` or `Spectral`.
    pub filter: &'static str,
    /// The parameters (and, for latency, the size) the row measured.
    pub setting: String,
    /// What the cells hold, with its unit.
    pub metric: &'static str,
    /// One block an item (`Layout::OneBlock`).
    pub one_block: Option<f64>,
    /// Two blocks an item (`Layout::TwoBlocks`).
    pub two_blocks: Option<f64>,
    /// The unblocked reference written in the bench (the paper's model).
    pub unblocked: Option<f64>,
    /// Decimals in the table.
    #[serde(skip)]
    pub decimals: usize,
}

impl Row {
    /// A row with the three layouts' values, in that order.
    pub fn new(
        filter: &'static str,
        setting: impl Into<String>,
        metric: &'static str,
        [one_block, two_blocks, unblocked]: [Option<f64>; 3],
        decimals: usize,
    ) -> Row {
        Row {
            filter,
            setting: setting.into(),
            metric,
            one_block,
            two_blocks,
            unblocked,
            decimals,
        }
    }
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let pinned = crate::output::pinned(self.core);
        let out = format!(
            "# accuracy ({} build{}): latency rows {pinned}, {} kernels; '-' = not measured\n",
            self.build,
            if self.quick { ", --quick" } else { "" },
            self.isa
        );
        let mut t = Table::new(&[
            ("filter", Align::Left),
            ("setting", Align::Left),
            ("metric", Align::Left),
            ("one block", Align::Right),
            ("two blocks", Align::Right),
            ("unblocked", Align::Right),
        ]);
        for r in &self.rows {
            t.row(vec![
                r.filter.to_owned(),
                r.setting.clone(),
                r.metric.to_owned(),
                num(r.one_block, r.decimals),
                num(r.two_blocks, r.decimals),
                num(r.unblocked, r.decimals),
            ]);
        }
        out + &t.render()
    }
}
