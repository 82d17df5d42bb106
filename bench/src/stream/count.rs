//! `count FILE|-`: a Spectral filter counts the lines; the output is the
//! most frequent lines by estimate (`--top N`) and the lines whose
//! estimate reaches a threshold (`--at-least T`), over the whole stream or
//! the last `--window` lines.
//!
//! # Method
//!
//! Each line is inserted, then estimated. `--top N` keeps the `N` lines
//! of largest estimate seen so far ([`Top`](super::top::Top), whose docs
//! say why that ends as the top `N` without a window, and what a window
//! changes; with a window it keeps [`WINDOW_CANDIDATES`]`·N`,
//! re-estimates them all [`REFRESHES`] times a window length, and prints
//! the best `N`; lines of estimate 0 are not printed). `--at-least T` reports a line the first time its estimate
//! (after its own insertion) reaches `T`, once: the 64-bit hashes of the
//! lines reported are kept. With `--window W` the filter is the library's
//! [`SlidingWindow`] (each line past the window removed), so estimates
//! are of the last `W` lines; only Minimum Selection and Recurring Minimum
//! can remove (`--policy ms`, the default with a window, or `rm`).
//!
//! The counters are 32-bit, in two blocks an item (the library's
//! default). `--memory` is the whole budget
//! ([`SpectralParams::plan_memory`]: the largest counter budget that
//! fits); `k` is the one of least predicted error for `--distinct N`
//! lines, or 5 when no count is given.
//!
//! # What `--exact` measures
//!
//! A hash map counts every line (in the window, with a ring of the last
//! `W` lines). At the end, each distinct line (of the window) is
//! estimated: the share of estimates above the true count, the mean
//! excess over all lines and over those over-counted, the largest, and
//! the under-counts (none for Minimum Selection and Minimal Increase, as
//! long as no counter saturates). The **predicted** share is
//! [`SpectralParams::predicted_error`] at the true number of distinct
//! lines: Minimum Selection's expected over-estimate rate in this layout,
//! which bounds Minimal Increase's and Recurring Minimum's. The top lines
//! are compared with the exact top `N`, and `--at-least`'s with the lines
//! whose true count reached `T`.

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;
use streambloom::spectral::{
    MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Removable, SlidingWindow,
    Spectral, SpectralParams,
};
use streambloom::W32;

use super::exact::Exact;
use super::input::Input;
use super::top::Top;
use super::{build_name, parse_positive, rate, shown, Common};
use crate::output::{num, Align, Output, Table};
use crate::size::size_name;

/// The method, for `count --help`.
pub const LONG_ABOUT: &str = "\
Counts the lines of FILE (or standard input, -) in a Spectral filter and
prints the most frequent by estimate (--top N) and those whose estimate
reaches T (--at-least T), over the whole stream or the last --window W
lines (the library's SlidingWindow; policies ms and rm only).

--top keeps the N lines of largest estimate seen so far: a line enters
when its estimate, read after its insertion, beats the smallest
candidate's. Estimates only grow without a window, so the candidates end
as the N largest estimates. With a window they fall as lines leave it:
4N candidates are kept, the smallest re-estimated before it is compared,
all of them 8 times a window length and at the end, and the best N
printed (a line can be missed while candidates hold stale estimates).
--at-least reports each line once, when its estimate first reaches T.

--exact counts every line in a hash map beside the filter and reports the
over-counts (share, mean and largest excess) and under-counts beside the
library's predicted over-estimate rate, and compares the top and
at-least lines with the exact ones.

32-bit counters, two blocks an item; --memory is the whole budget, k the
most accurate for --distinct N lines (5 without it).";

/// The `k` when no `--distinct` is given.
const DEFAULT_K: u32 = 5;

/// Candidates kept per line printed with `--top` and a window (module
/// docs).
const WINDOW_CANDIDATES: usize = 4;

/// With a window, all candidates are re-estimated this many times a
/// window length (module docs).
const REFRESHES: u64 = 8;

/// The top lines printed when neither `--top` nor `--at-least` is given.
const DEFAULT_TOP: usize = 10;

/// The policies of `--policy`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyArg {
    /// Minimum Selection: add to all k counters; can remove (windows)
    Ms,
    /// Minimal Increase: raise only the smallest; fewer errors, no window
    Mi,
    /// Recurring Minimum: a secondary filter for items with a recurring
    /// minimum; can remove (windows)
    Rm,
}

/// The options of `count`.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The estimation policy [default: mi; ms with --window]
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// Print the N lines of largest estimate [default: 10 when --at-least
    /// is not given]
    #[arg(long, value_name = "N", value_parser = parse_positive::<usize>)]
    pub top: Option<usize>,
    /// Print each line whose estimate reaches T, once
    #[arg(long = "at-least", value_name = "T", value_parser = parse_positive::<u32>)]
    pub at_least: Option<u32>,
    /// Count only the last W lines (a sliding window)
    #[arg(long, value_name = "W", value_parser = parse_positive::<usize>)]
    pub window: Option<usize>,
    /// The distinct lines to expect, to choose k [default: k = 5]
    #[arg(long, value_name = "N", value_parser = parse_positive::<u64>)]
    pub distinct: Option<u64>,
}

impl Args {
    fn policy(&self) -> PolicyArg {
        self.policy.unwrap_or(match self.window {
            Some(_) => PolicyArg::Ms,
            None => PolicyArg::Mi,
        })
    }

    fn top(&self) -> Option<usize> {
        match (self.top, self.at_least) {
            (None, None) => Some(DEFAULT_TOP),
            (top, _) => top,
        }
    }
}

/// A Spectral filter, windowed or not.
trait Counts {
    fn hash(&self, key: &[u8]) -> u64;
    fn insert(&mut self, h: u64);
    fn estimate(&self, h: u64) -> u32;
    /// [`Spectral::predicted_error`] after `n` distinct lines.
    fn predicted_error(&self, n: u64) -> f64;
}

impl<P: Policy> Counts for Spectral<P> {
    fn hash(&self, key: &[u8]) -> u64 {
        Spectral::hash(self, key)
    }
    fn insert(&mut self, h: u64) {
        self.insert_hash(h);
    }
    fn estimate(&self, h: u64) -> u32 {
        self.estimate_hash(h)
    }
    fn predicted_error(&self, n: u64) -> f64 {
        Spectral::predicted_error(self, n)
    }
}

impl<P: Removable> Counts for SlidingWindow<P> {
    fn hash(&self, key: &[u8]) -> u64 {
        self.filter().hash(key)
    }
    fn insert(&mut self, h: u64) {
        self.insert_hash(h);
    }
    fn estimate(&self, h: u64) -> u32 {
        self.estimate_hash(h)
    }
    fn predicted_error(&self, n: u64) -> f64 {
        self.filter().predicted_error(n)
    }
}

/// What the planner picked.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The policy's name.
    pub policy: &'static str,
    /// Counters, the whole budget (both filters for Recurring Minimum).
    pub counters: usize,
    /// Counters an item.
    pub k: u32,
    /// Where an item's counters go.
    pub layout: &'static str,
    /// The window, in lines.
    pub window: Option<usize>,
    /// The distinct lines `k` was chosen for.
    pub distinct: Option<u64>,
    /// The predicted over-estimate rate at `distinct`.
    pub predicted_error: Option<f64>,
}

/// `P`'s parameters for `memory` bytes of 32-bit counters (module docs).
fn params<P: Policy + Default>(
    memory: usize,
    distinct: Option<u64>,
) -> Result<SpectralParams<P>, streambloom::Error> {
    let planned = SpectralParams::<P>::plan_memory::<W32>(memory, distinct.unwrap_or(1))?;
    Ok(match distinct {
        Some(_) => planned,
        None => SpectralParams {
            k: DEFAULT_K,
            ..planned
        },
    })
}

/// The filter `args` asks for, and its plan.
fn build(args: &Args) -> Result<(Box<dyn Counts>, Plan), String> {
    let (memory, seed, distinct) = (args.common.memory, args.common.seed, args.distinct);
    let err = |e: streambloom::Error| format!("Spectral filter: {e}");
    fn boxed<C: Counts + 'static>(c: C) -> Box<dyn Counts> {
        Box::new(c)
    }
    let (policy, counters, k, layout, f) = match (args.policy(), args.window) {
        (PolicyArg::Ms, None) => {
            let p = params::<MinimumSelection>(memory, distinct).map_err(err)?;
            let f = Spectral::new(p.clone(), seed).map_err(err)?;
            ("MinimumSelection", p.counters, p.k, p.layout, boxed(f))
        }
        (PolicyArg::Mi, None) => {
            let p = params::<MinimalIncrease>(memory, distinct).map_err(err)?;
            let f = Spectral::new(p.clone(), seed).map_err(err)?;
            ("MinimalIncrease", p.counters, p.k, p.layout, boxed(f))
        }
        (PolicyArg::Rm, None) => {
            let p = params::<RecurringMinimum>(memory, distinct).map_err(err)?;
            let f = Spectral::new(p.clone(), seed).map_err(err)?;
            ("RecurringMinimum", p.counters, p.k, p.layout, boxed(f))
        }
        (PolicyArg::Ms, Some(w)) => {
            let p = params::<MinimumSelection>(memory, distinct).map_err(err)?;
            let f = SlidingWindow::with_params(p.clone(), w, seed).map_err(err)?;
            ("MinimumSelection", p.counters, p.k, p.layout, boxed(f))
        }
        (PolicyArg::Rm, Some(w)) => {
            let p = params::<RecurringMinimum>(memory, distinct).map_err(err)?;
            let f = SlidingWindow::with_params(p.clone(), w, seed).map_err(err)?;
            ("RecurringMinimum", p.counters, p.k, p.layout, boxed(f))
        }
        (PolicyArg::Mi, Some(_)) => {
            return Err(
                "--policy mi cannot count a window: Minimal Increase cannot remove \
                        a line that leaves it (its removals cause under-counts); use --policy \
                        ms or rm"
                    .to_owned(),
            )
        }
    };
    let plan = Plan {
        policy,
        counters,
        k,
        layout: match layout {
            streambloom::Layout::OneBlock => "one block",
            streambloom::Layout::TwoBlocks => "two blocks",
        },
        window: args.window,
        distinct,
        predicted_error: distinct.map(|n| f.predicted_error(n)),
    };
    Ok((f, plan))
}

/// A line of the output: its estimate, its true count with `--exact`.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The filter's estimate (for `--at-least`, when it reached `T`).
    pub estimate: u32,
    /// The true count at the end (in the window), with `--exact`.
    pub exact: Option<u64>,
    /// The line (invalid UTF-8 shown as U+FFFD).
    pub line: String,
}

/// The errors `--exact` measured (module docs).
#[derive(Clone, Debug, Serialize)]
pub struct Errors {
    /// Distinct lines counted (in the window).
    pub distinct: u64,
    /// The predicted over-estimate rate at `distinct`.
    pub predicted_error: f64,
    /// Lines whose estimate is above the true count.
    pub over_counted: u64,
    /// `over_counted / distinct`.
    pub over_share: f64,
    /// Mean excess of the estimate over the true count, over all lines.
    pub mean_excess: f64,
    /// Mean excess over the over-counted lines.
    pub mean_excess_over: f64,
    /// The largest excess.
    pub max_excess: u64,
    /// Lines whose estimate is below the true count.
    pub under_counted: u64,
    /// The largest shortfall.
    pub max_under: u64,
    /// With `--top`: the exact top lines, with the filter's estimates.
    pub top: Option<Vec<Row>>,
    /// With `--top`: the exact top lines among the filter's.
    pub top_found: Option<usize>,
    /// With `--top`: whether the filter's top estimates are the exact top
    /// counts, in order.
    pub top_counts_equal: Option<bool>,
    /// With `--top`: lines whose true count is the exact top's last (ties
    /// beyond `N` make the top's lines a choice).
    pub top_last_tied: Option<u64>,
    /// With `--at-least`: lines whose true count reached `T`.
    pub at_least: Option<u64>,
    /// Lines reported whose true count never reached `T`.
    pub at_least_false: Option<u64>,
    /// Lines whose true count reached `T`, not reported.
    pub at_least_missed: Option<u64>,
}

/// What `count` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `"count"`.
    pub command: &'static str,
    /// `"release"` or `"debug"`.
    pub build: &'static str,
    /// The input's name (`-` for standard input).
    pub input: String,
    /// Bytes of memory asked for.
    pub memory: usize,
    /// The seed.
    pub seed: u64,
    /// What the planner picked.
    pub plan: Plan,
    /// Lines read.
    pub lines: u64,
    /// Seconds of the pass (reading, the filter, the candidates, and the
    /// exact map with `--exact`).
    pub seconds: f64,
    /// The top lines by estimate.
    pub top: Option<Vec<Row>>,
    /// `--at-least`'s threshold.
    pub threshold: Option<u32>,
    /// `--at-least`'s lines, in the order they reached it.
    pub at_least: Option<Vec<Row>>,
    /// The errors measured with `--exact`.
    pub exact: Option<Errors>,
}

/// Runs `streambloom-bench count` and prints its report.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    let mut input = Input::open(&args.common.input, out)?;
    out.emit(&count(args, &mut input)?)
}

/// Counts `input`'s lines.
pub fn count(args: &Args, input: &mut Input<'_>) -> Result<Report, String> {
    let (mut f, plan) = build(args)?;
    // With a window, estimates fall: more candidates, fewer lines missed.
    let room = if args.window.is_some() {
        WINDOW_CANDIDATES
    } else {
        1
    };
    let mut top = args
        .top()
        .map(|n| Top::new(n.saturating_mul(room), args.window.is_some()));
    let (mut hits, mut reported) = (Vec::new(), HashSet::new());
    let mut exact = args.common.exact.then(|| Exact::new(args.window));
    // By id: whether the true count reached `--at-least`.
    let mut reached: Vec<bool> = Vec::new();
    let mut lines = 0u64;
    let start = Instant::now();
    while let Some(line) = input.next_line()? {
        lines += 1;
        let h = f.hash(line);
        f.insert(h);
        if top.is_some() || args.at_least.is_some() {
            let e = f.estimate(h);
            if let Some(top) = &mut top {
                top.offer(h, e, line, |c| f.estimate(c));
            }
            if args.at_least.is_some_and(|t| e >= t) && reported.insert(h) {
                hits.push((e, Box::<[u8]>::from(line)));
            }
        }
        if let (Some(top), Some(w)) = (&mut top, args.window) {
            if lines.is_multiple_of((w as u64 / REFRESHES).max(1)) {
                top.refresh(|c| f.estimate(c));
            }
        }
        if let Some(exact) = &mut exact {
            let id = exact.observe(line).id;
            if let Some(t) = args.at_least {
                if reached.len() <= id {
                    reached.resize(id + 1, false);
                }
                reached[id] |= exact.count(id) >= u64::from(t);
            }
        }
    }
    if let (Some(top), Some(_)) = (&mut top, args.window) {
        top.refresh(|h| f.estimate(h));
    }
    let shown_top = args.top().unwrap_or(0);
    let seconds = start.elapsed().as_secs_f64();
    let true_count = |line: &[u8]| {
        exact
            .as_ref()
            .map(|e| e.id(line).map_or(0, |id| e.count(id)))
    };
    let top_rows = top.as_ref().map(|top| {
        top.ranked()
            .into_iter()
            .filter(|&(estimate, _, _)| estimate > 0)
            .take(shown_top)
            .map(|(estimate, _, line)| Row {
                estimate,
                exact: true_count(line),
                line: shown(line),
            })
            .collect::<Vec<_>>()
    });
    let hit_rows = args.at_least.map(|_| {
        hits.iter()
            .map(|(estimate, line)| Row {
                estimate: *estimate,
                exact: true_count(line),
                line: shown(line),
            })
            .collect()
    });
    let errors = exact.as_ref().map(|exact| {
        let mut e = errors(f.as_ref(), exact);
        if let (Some(top), Some(rows)) = (args.top(), &top_rows) {
            let want = exact.top(top);
            let found: HashSet<&str> = rows.iter().map(|r| r.line.as_str()).collect();
            e.top_found = Some(
                want.iter()
                    .filter(|&&id| found.contains(shown(exact.key(id)).as_str()))
                    .count(),
            );
            let counts = want.iter().map(|&id| exact.count(id));
            e.top_counts_equal = Some(counts.eq(rows.iter().map(|r| u64::from(r.estimate))));
            e.top_last_tied = want.last().map(|&last| {
                let c = exact.count(last);
                exact.counted().filter(|&id| exact.count(id) == c).count() as u64
            });
            e.top = Some(
                want.iter()
                    .map(|&id| Row {
                        estimate: f.estimate(f.hash(exact.key(id))),
                        exact: Some(exact.count(id)),
                        line: shown(exact.key(id)),
                    })
                    .collect(),
            );
        }
        if args.at_least.is_some() {
            let truly: Vec<usize> = (0..reached.len()).filter(|&id| reached[id]).collect();
            let missed = truly
                .iter()
                .filter(|&&id| !reported.contains(&f.hash(exact.key(id))))
                .count();
            e.at_least = Some(truly.len() as u64);
            e.at_least_missed = Some(missed as u64);
            e.at_least_false = Some((hits.len() + missed - truly.len()) as u64);
        }
        e
    });
    Ok(Report {
        command: "count",
        build: build_name(),
        input: input.name().to_owned(),
        memory: args.common.memory,
        seed: args.common.seed,
        plan,
        lines,
        seconds,
        top: top_rows,
        threshold: args.at_least,
        at_least: hit_rows,
        exact: errors,
    })
}

/// Every counted line's estimate against its true count.
fn errors(f: &dyn Counts, exact: &Exact) -> Errors {
    let (mut n, mut over, mut excess, mut max_excess, mut under, mut max_under) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    for id in exact.counted() {
        let truth = exact.count(id);
        let estimate = u64::from(f.estimate(f.hash(exact.key(id))));
        n += 1;
        if estimate > truth {
            over += 1;
            excess += estimate - truth;
            max_excess = max_excess.max(estimate - truth);
        } else if estimate < truth {
            under += 1;
            max_under = max_under.max(truth - estimate);
        }
    }
    Errors {
        distinct: n,
        predicted_error: f.predicted_error(n),
        over_counted: over,
        over_share: rate(over, n),
        mean_excess: rate(excess, n),
        mean_excess_over: rate(excess, over),
        max_excess,
        under_counted: under,
        max_under,
        top: None,
        top_found: None,
        top_counts_equal: None,
        top_last_tied: None,
        at_least: None,
        at_least_false: None,
        at_least_missed: None,
    }
}

/// `line` with its control characters (a tab, say) escaped, so that a
/// table's row stays one row.
fn printable(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Rows as a table: estimate, exact count, line.
fn rows_table(rows: &[Row], ranked: bool) -> String {
    let mut columns = vec![("estimate", Align::Right)];
    if ranked {
        columns.insert(0, ("rank", Align::Right));
    }
    let exact = rows.iter().any(|r| r.exact.is_some());
    if exact {
        columns.push(("exact", Align::Right));
    }
    columns.push(("line", Align::Left));
    let mut t = Table::new(&columns);
    for (i, r) in rows.iter().enumerate() {
        let mut cells = vec![r.estimate.to_string()];
        if ranked {
            cells.insert(0, (i + 1).to_string());
        }
        if let Some(x) = r.exact.filter(|_| exact) {
            cells.push(x.to_string());
        }
        cells.push(printable(&r.line));
        t.row(cells);
    }
    t.render()
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let p = &self.plan;
        let mut out = format!(
            "# count: Spectral<{}> over {}, {}, seed {} ({} build)\n\
             # plan: {} 32-bit counters, k = {}{}, {}{}\n# {} lines in {} s ({} Mlines/s)\n",
            p.policy,
            self.input,
            size_name(self.memory),
            self.seed,
            self.build,
            p.counters,
            p.k,
            match p.distinct {
                Some(n) => format!(
                    " (planned for {n} distinct lines: predicted over-estimate rate {})",
                    num(p.predicted_error, 5)
                ),
                None => " (the default; --distinct N plans it)".to_owned(),
            },
            p.layout,
            p.window.map_or(String::new(), |w| format!(
                ", a window of the last {w} lines"
            )),
            self.lines,
            num(Some(self.seconds), 2),
            num(Some(self.lines as f64 / self.seconds / 1e6), 2),
        );
        if let Some(rows) = &self.top {
            out += &format!("# top {} by estimate\n", rows.len());
            out += &rows_table(rows, true);
        }
        if let (Some(t), Some(rows)) = (self.threshold, &self.at_least) {
            out += &format!(
                "# {} lines reached an estimate of {t} (the estimate then)\n",
                rows.len()
            );
            out += &rows_table(rows, false);
        }
        let Some(e) = &self.exact else {
            return out;
        };
        out += &format!(
            "# --exact: {} distinct lines{}\n",
            e.distinct,
            p.window
                .map_or(String::new(), |_| " in the window".to_owned())
        );
        let mut t = Table::new(&[
            ("over-counted", Align::Right),
            ("share", Align::Right),
            ("predicted", Align::Right),
            ("mean excess", Align::Right),
            ("mean excess (over-counted)", Align::Right),
            ("max excess", Align::Right),
            ("under-counted", Align::Right),
            ("max under", Align::Right),
        ]);
        t.row(vec![
            e.over_counted.to_string(),
            num(Some(e.over_share), 5),
            num(Some(e.predicted_error), 5),
            num(Some(e.mean_excess), 3),
            num(Some(e.mean_excess_over), 2),
            e.max_excess.to_string(),
            e.under_counted.to_string(),
            e.max_under.to_string(),
        ]);
        out += &t.render();
        if let (Some(rows), Some(found), Some(equal), Some(tied)) =
            (&e.top, e.top_found, e.top_counts_equal, e.top_last_tied)
        {
            out += &format!(
                "# the exact top {}: {found} of its lines among the filter's, the same counts: {}; \
                 {tied} lines share the last count\n",
                rows.len(),
                if equal { "yes" } else { "no" }
            );
            out += &rows_table(rows, true);
        }
        if let (Some(t), Some(n), Some(fp), Some(missed)) = (
            self.threshold,
            e.at_least,
            e.at_least_false,
            e.at_least_missed,
        ) {
            out += &format!(
                "# at least {t}: {n} lines really reached it; {fp} reported that did not, \
                 {missed} missed\n"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::QUIET;
    use crate::{Cli, Command};
    use clap::Parser;
    use std::io::Cursor;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        match Cli::try_parse_from(line.split_whitespace())?.command {
            Command::Count(args) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    /// `n` lines, line `i` being `l{j}` with `j` Zipf-like: the square of
    /// a uniform draw over `0..sqrt(universe)`, so small `j` are frequent
    /// with distinct counts.
    fn stream(n: u64, universe: u64, seed: u64) -> Vec<u8> {
        let root = (universe as f64).sqrt() as u64;
        let mut s = Vec::new();
        for i in 0..n {
            let u = streambloom::hash::mix64(seed.wrapping_add(i)) % (root * root);
            let j = (u as f64).sqrt() as u64;
            let j = u - j * j; // 0..2·sqrt: skewed to small j
            s.extend_from_slice(format!("l{j}\n").as_bytes());
        }
        s
    }

    fn run_on(line: &str, data: Vec<u8>) -> Result<Report, String> {
        let args = parse(line).map_err(|e| e.to_string())?;
        let mut input = Input::open_with("-", &QUIET, || Box::new(Cursor::new(data)))?;
        count(&args, &mut input)
    }

    /// Exact counts of `data`'s lines (of the last `window`).
    fn counts(data: &[u8], window: Option<usize>) -> std::collections::HashMap<String, u64> {
        let lines: Vec<&[u8]> = data
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let from = window.map_or(0, |w| lines.len().saturating_sub(w));
        let mut c = std::collections::HashMap::new();
        for l in &lines[from..] {
            *c.entry(shown(l)).or_insert(0) += 1;
        }
        c
    }

    /// With a big memory every policy counts exactly: the top lines and
    /// the at-least lines are the exact ones, no error anywhere.
    #[test]
    fn big_memory_is_exact() {
        let data = stream(20_000, 4_000, 1);
        let want = counts(&data, None);
        for policy in ["ms", "mi", "rm"] {
            let line = format!(
                "streambloom-bench count - --exact --policy {policy} --top 8 --at-least 30 \
                 --memory 4M --distinct 200"
            );
            let r = run_on(&line, data.clone()).unwrap();
            let e = r.exact.as_ref().unwrap();
            assert_eq!(r.lines, 20_000);
            assert_eq!(e.distinct, want.len() as u64);
            assert_eq!((e.over_counted, e.under_counted), (0, 0), "{policy}");
            let top = r.top.as_ref().unwrap();
            assert_eq!(top.len(), 8);
            let exact_top = e.top.as_ref().unwrap();
            let got: Vec<u32> = top.iter().map(|r| r.estimate).collect();
            let wanted: Vec<u32> = exact_top.iter().map(|r| r.exact.unwrap() as u32).collect();
            assert_eq!(got, wanted, "{policy}");
            assert_eq!(e.top_counts_equal, Some(true));
            assert!(e.top_last_tied.unwrap() >= 1);
            for row in top {
                assert_eq!(u64::from(row.estimate), want[&row.line]);
                assert_eq!(row.exact, Some(want[&row.line]));
            }
            let hits = r.at_least.as_ref().unwrap();
            let truly = want.values().filter(|&&c| c >= 30).count();
            assert_eq!(hits.len(), truly);
            assert!(hits.iter().all(|h| h.estimate == 30 && want[&h.line] >= 30));
            assert_eq!(
                (e.at_least, e.at_least_false, e.at_least_missed),
                (Some(truly as u64), Some(0), Some(0))
            );
        }
    }

    /// `n` lines drawn uniformly from `universe` keys.
    fn uniform(n: u64, universe: u64, seed: u64) -> Vec<u8> {
        let mut s = Vec::new();
        for i in 0..n {
            let k = streambloom::hash::mix64(seed.wrapping_add(i)) % universe;
            s.extend_from_slice(format!("k{k}\n").as_bytes());
        }
        s
    }

    /// In a small memory: Minimum Selection and Minimal Increase never
    /// under-count, over-count about as predicted (MS near the predicted
    /// share, MI below it), and `--at-least` misses nothing.
    #[test]
    fn small_memory_over_counts_as_predicted() {
        let data = uniform(30_000, 10_000, 2);
        for policy in ["ms", "mi"] {
            let line = format!(
                "streambloom-bench count - --exact --policy {policy} --at-least 5 --memory 128K"
            );
            let r = run_on(&line, data.clone()).unwrap();
            let e = r.exact.unwrap();
            assert_eq!(e.under_counted, 0, "{policy}");
            assert!(e.over_counted > 0, "{policy}");
            let n = e.distinct as f64;
            let sd = (e.predicted_error * (1.0 - e.predicted_error) / n).sqrt();
            assert!(
                e.over_share <= e.predicted_error + 4.0 * sd,
                "{policy} {e:?}"
            );
            if policy == "ms" {
                assert!(e.over_share >= e.predicted_error - 4.0 * sd - 0.02, "{e:?}");
            }
            assert_eq!(e.at_least_missed, Some(0));
            assert!(r.top.is_none());
        }
    }

    /// A window counts the last W lines: with a big memory, the exact
    /// window counts (and the top lines re-estimated at the end).
    #[test]
    fn window_counts_the_last_lines() {
        let data = stream(10_000, 2_000, 3);
        let want = counts(&data, Some(1_000));
        for policy in ["ms", "rm"] {
            let line = format!(
                "streambloom-bench count - --exact --window 1000 --policy {policy} --top 5 --memory 1M"
            );
            let r = run_on(&line, data.clone()).unwrap();
            let e = r.exact.as_ref().unwrap();
            assert_eq!(e.distinct, want.len() as u64);
            assert_eq!((e.over_counted, e.under_counted), (0, 0));
            let top = r.top.as_ref().unwrap();
            for row in top {
                assert_eq!(u64::from(row.estimate), want[&row.line]);
            }
            // The same counts as the exact top (ties may differ).
            let exact_top: Vec<u64> = e
                .top
                .as_ref()
                .unwrap()
                .iter()
                .map(|r| r.exact.unwrap())
                .collect();
            let got: Vec<u64> = top.iter().map(|r| u64::from(r.estimate)).collect();
            assert_eq!(got, exact_top);
            assert_eq!(e.top_counts_equal, Some(true));
        }
        let default = parse("streambloom-bench count - --window 5").unwrap();
        assert_eq!(default.policy(), PolicyArg::Ms);
    }

    /// Standard input works, the table and JSON hold the rows, and bad
    /// options are errors.
    #[test]
    fn output_and_errors() {
        let r = run_on(
            "streambloom-bench count - --at-least 2",
            b"a\nb\na\n\xff\n".to_vec(),
        )
        .unwrap();
        assert!(r.top.is_none());
        let hits = r.at_least.as_ref().unwrap();
        assert_eq!((hits.len(), hits[0].line.as_str()), (1, "a"));
        let r = run_on(
            "streambloom-bench count - --exact",
            b"a\nb\na\n\xff\n".to_vec(),
        )
        .unwrap();
        let table = crate::output::Report::table(&r);
        for s in [
            "# top 3 by estimate",
            "over-counted",
            "\u{fffd}",
            "the exact top 3",
        ] {
            assert!(table.contains(s), "{table}");
        }
        let json: serde_json::Value = serde_json::from_str(
            &Output {
                json: true,
                quiet: true,
                plot: None,
            }
            .render(&r)
            .unwrap(),
        )
        .unwrap();
        assert_eq!(json["top"][0]["line"], "a");
        assert_eq!(json["top"][0]["estimate"], 2);
        assert_eq!(json["plan"]["k"], DEFAULT_K);
        let err = |line: &str| run_on(line, b"a\n".to_vec()).unwrap_err();
        assert!(err("streambloom-bench count - --window 10 --policy mi").contains("ms or rm"));
        assert!(err("streambloom-bench count - --top 0").contains("at least 1"));
        assert!(err("streambloom-bench count - --memory 3M5").contains("size"));
        assert!(err("streambloom-bench count - --policy xx").contains("xx"));
        let e = run(
            &parse("streambloom-bench count /nonexistent/lines.txt").unwrap(),
            &QUIET,
        )
        .unwrap_err();
        assert!(e.contains("cannot open"), "{e}");
    }
}
