//! What every command shares on its way out: `--json`, `--quiet` and
//! `--plot`, the progress bar, and aligned tables.
//!
//! A command computes a report (a `Serialize` struct) first, then prints it
//! either as JSON ([`Output::emit`] with `--json`) or as the text its
//! [`Report::table`] renders from the same struct, so the two hold the same
//! data. Progress goes to standard error, results to standard output.
//! With `--plot FILE.svg`, the curves its [`Report::charts`] maps from the
//! same struct are drawn into that file too, after the results are printed
//! (so a plot that cannot be written loses no results).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::plot::{self, Chart};

/// The options every command takes (they may stand before or after the
/// command's name).
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Print the results as JSON (the same data as the table) instead of a
    /// table
    #[arg(long, global = true)]
    pub json: bool,
    /// Show no progress bar (it is also off when standard error is not a
    /// terminal)
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Also draw the results' curves as line charts into this SVG file
    /// (latency, scale and every repro; an error on commands without
    /// curves)
    #[arg(long, global = true, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// A command's results, printable as a text table or as JSON.
pub trait Report: Serialize {
    /// The results as text: aligned tables, units in the headers.
    fn table(&self) -> String;

    /// The results' curves for `--plot`, one panel each; none for a report
    /// that has no curves.
    fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

impl Output {
    /// A progress bar over `steps` steps on standard error; hidden with
    /// `--quiet` or when standard error is not a terminal.
    pub fn progress(&self, steps: usize) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30} {pos}/{len} (eta {eta}) {msg}",
        ) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    /// A progress bar over `total` bytes of input on standard error (a
    /// counter of bytes when the length is unknown, as for standard
    /// input); hidden as [`progress`](Self::progress)'s is.
    pub fn byte_progress(&self, total: Option<u64>) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let (bar, template) = match total {
            Some(len) => (
                ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()),
                "[{elapsed_precise}] {bar:30} {bytes}/{total_bytes} (eta {eta})",
            ),
            None => (
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                "[{elapsed_precise}] {bytes} read ({bytes_per_sec})",
            ),
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    /// `report` as JSON or as its table.
    pub fn render(&self, report: &impl Report) -> Result<String, String> {
        if self.json {
            serde_json::to_string_pretty(report)
                .map(|s| s + "\n")
                .map_err(|e| format!("cannot write the results as JSON: {e}"))
        } else {
            Ok(report.table())
        }
    }

    /// Prints `report` on standard output, as JSON or as its table, then
    /// draws its curves into the `--plot` file if one was asked for.
    pub fn emit(&self, report: &impl Report) -> Result<(), String> {
        print!("{}", self.render(report)?);
        match &self.plot {
            Some(path) => plot::draw(path, &report.charts()),
            None => Ok(()),
        }
    }
}

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text: against the left edge.
    Left,
    /// Numbers: against the right edge.
    Right,
}

/// A text table whose columns are as wide as their widest cell.
#[derive(Debug, Default)]
pub struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers (name the unit in the header:
    /// `p50 (ns)`).
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            columns: columns.iter().map(|&(h, a)| (h.to_owned(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank, extra ones are dropped.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table, one line per row under the header, columns separated by
    /// two spaces; each line ends with a newline.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (h, _))| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| width(c))
                    .fold(width(h), usize::max)
            })
            .collect();
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut out = String::new();
            for ((cell, (_, align)), w) in cells.zip(&self.columns).zip(&widths) {
                let pad = " ".repeat(w - width(cell));
                if !out.is_empty() {
                    out.push_str("  ");
                }
                match align {
                    Align::Left => {
                        out.push_str(cell);
                        out.push_str(&pad);
                    }
                    Align::Right => {
                        out.push_str(&pad);
                        out.push_str(cell);
                    }
                }
            }
            out.truncate(out.trim_end().len());
            out.push('\n');
            out
        };
        let mut out = line(&mut self.columns.iter().map(|(h, _)| h.as_str()));
        for r in &self.rows {
            let blanks = std::iter::repeat("");
            out += &line(&mut r.iter().map(String::as_str).chain(blanks));
        }
        out
    }
}

/// Where a report's timings ran: "pinned to core N" or "not pinned".
pub fn pinned(core: Option<usize>) -> String {
    core.map_or("not pinned".to_owned(), |c| format!("pinned to core {c}"))
}

/// `x` with `decimals` decimals, or `-` when it is missing or not finite.
pub fn num(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let mut t = Table::new(&[("name", Align::Left), ("time (ns)", Align::Right)]);
        t.row(vec!["spectral-estimate-batch".into(), "1.25".into()]);
        t.row(vec!["γ".into(), "100.00".into()]);
        t.row(vec!["short".into()]);
        assert_eq!(
            t.render(),
            "name                     time (ns)\n\
             spectral-estimate-batch       1.25\n\
             γ                           100.00\n\
             short\n"
        );
    }

    #[test]
    fn numbers_or_dash() {
        assert_eq!(num(Some(1.234), 2), "1.23");
        assert_eq!(num(None, 2), "-");
        assert_eq!(num(Some(f64::NAN), 2), "-");
    }
}
