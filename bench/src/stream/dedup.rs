//! `dedup FILE|-`: the lines a filter judges new, on standard output; the
//! summary (what the planner picked, the counts, the time, and with
//! `--exact` the errors measured against the predicted ones) on standard
//! error.
//!
//! # What `--exact` measures
//!
//! Beside the filter, a hash map of every distinct line with its last
//! position says what is really new. "Seen before" follows the filter's
//! semantics:
//!
//! - stable, reservoir, importance, classic: seen anywhere earlier in the
//!   stream. A **false positive** is a line new to the whole stream judged
//!   seen (dropped), its rate over the new lines; a **false negative** a
//!   repeated line judged new (a duplicate emitted), its rate over the
//!   repeats. This is the papers' measure (Deng & Rafiei's and Dutta et
//!   al.'s: distinct in the stream but reported duplicate, and the
//!   converse). The eviction filters forget on purpose, so their false
//!   negatives are the price of a fixed memory, not a defect; with sweep
//!   eviction, repeats within the guaranteed gap are counted apart (they
//!   must have none).
//! - timing: seen among the last `--window` lines. A false positive is a
//!   line not in the window judged in it; those last seen within the
//!   clock's live span (`w` to `w + B` lines back: the filter's documented
//!   granularity) are counted apart as **stale**. A false negative is a
//!   line in the window judged out (the filter guarantees none).
//!
//! The **expected** false positives sum, over the new lines, the chance
//! that the filter's state at the time makes a new key look seen
//! ([`Dedup::state_fpr`](super::filters::Dedup::state_fpr)), sampled every
//! [`sample_every`] lines (at least once per pass over the cells' blocks)
//! and interpolated linearly between samples; `z` is the measured count's
//! distance from it in standard deviations of that sum of Bernoulli
//! trials. The **predicted** rate is the planned one.

use std::io::Write;
use std::time::Instant;

use serde::Serialize;

use super::exact::Exact;
use super::filters::{self, Dedup, EvictionArg, Kind, Plan, Request};
use super::input::Input;
use super::{build_name, parse_positive, rate, Common};
use crate::output::{num, Align, Output, Table};
use crate::size::size_name;

/// The method, for `dedup --help`.
pub const LONG_ABOUT: &str = "\
Writes each line of FILE (or standard input, -) that a filter judges new
to standard output; the summary goes to standard error (as JSON with
--json).

The filter is planned by the library for --memory and --fpr, and the
summary says what the planner picked. --exact runs an exact hash map
beside it and measures the false positives (a new line dropped) and
false negatives (a repeat emitted) against the filter's semantics: seen
anywhere earlier in the stream for stable, reservoir, importance and
classic (the papers' measure), seen in the last --window lines for
timing. It sets beside them the planned rate and the false positives
expected from the filter's own state along the stream (the library's
current_fpr and models), with the z-score of the difference.

Lines are raw bytes (no encoding needed), split at \\n only.";

/// The options of `dedup`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The filter
    #[arg(long, value_enum, default_value = "stable")]
    pub filter: Kind,
    /// The false-positive rate the planner plans for
    #[arg(long, value_name = "RATE", default_value_t = 0.01, value_parser = parse_fpr)]
    pub fpr: f64,
    /// Eviction of the stable and importance filters [default: random]
    #[arg(long, value_enum)]
    pub eviction: Option<EvictionArg>,
    /// The timing filter's window: a line is new unless it occurred among
    /// the last W lines
    #[arg(long, value_name = "W", value_parser = parse_positive::<u64>)]
    pub window: Option<u64>,
    /// The importance filter's column (1-based) holding each line's
    /// importance, a whole number in 1..=--importance-max; the key is the
    /// line without that column
    #[arg(long, value_name = "N", value_parser = parse_positive::<usize>)]
    pub importance_column: Option<usize>,
    /// The largest importance (levels are ⌈i·Max/Z⌉)
    #[arg(long, value_name = "Z", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub importance_max: u32,
    /// The column separator of --importance-column: one ASCII character
    /// (`\t` for a tab)
    #[arg(long, value_name = "CHAR", default_value = "\\t", value_parser = parse_delimiter)]
    pub delimiter: u8,
}

/// A rate in (0, 1), for `--fpr`.
fn parse_fpr(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!("`{s}` is not a rate in (0, 1)")),
    }
}

/// One ASCII byte other than a newline, or `\t` for a tab, for `--delimiter`.
fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        b"\\t" => Ok(b'\t'),
        &[c] if c.is_ascii() && c != b'\n' => Ok(c),
        _ => Err(format!(
            "`{s}` is not one ASCII character (other than a newline)"
        )),
    }
}

impl Args {
    /// The filter's request; an error for options the filter does not
    /// take or needs.
    fn request(&self) -> Result<Request, String> {
        let name = self.filter.name();
        let uses_eviction = matches!(self.filter, Kind::Stable | Kind::Importance);
        if self.eviction.is_some() && !uses_eviction {
            return Err(format!(
                "--eviction is for the stable and importance filters, not {name}"
            ));
        }
        match (self.filter, self.window) {
            (Kind::Timing, None) => return Err("--filter timing needs --window W".to_owned()),
            (Kind::Timing, Some(_)) | (_, None) => {}
            (_, Some(_)) => return Err(format!("--window is for the timing filter, not {name}")),
        }
        match (self.filter, self.importance_column) {
            (Kind::Importance, None) => {
                return Err("--filter importance needs --importance-column N".to_owned())
            }
            (Kind::Importance, Some(_)) | (_, None) => {}
            (_, Some(_)) => {
                return Err(format!(
                    "--importance-column is for the importance filter, not {name}"
                ))
            }
        }
        Ok(Request {
            memory: self.common.memory,
            fpr: self.fpr,
            seed: self.common.seed,
            eviction: self.eviction.unwrap_or(EvictionArg::Random),
            importance_max: self.importance_max,
            window: self.window.unwrap_or(1),
        })
    }
}

/// What `dedup` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `"dedup"`.
    pub command: &'static str,
    /// `"release"` or `"debug"`.
    pub build: &'static str,
    /// The input's name (`-` for standard input).
    pub input: String,
    /// The filter.
    pub filter: &'static str,
    /// Bytes of memory asked for.
    pub memory: usize,
    /// The target false-positive rate.
    pub target_fpr: f64,
    /// The seed.
    pub seed: u64,
    /// What the planner picked.
    pub plan: Plan,
    /// The planned false-positive rate ([`Plan::predicted`] says which).
    pub predicted_fpr: f64,
    /// Lines read.
    pub lines: u64,
    /// Lines judged new, written out.
    pub emitted: u64,
    /// Lines judged seen, dropped.
    pub dropped: u64,
    /// Seconds of the pass (reading, the filter, writing, and the exact
    /// map with `--exact`).
    pub seconds: f64,
    /// The errors measured with `--exact`.
    pub exact: Option<Measured>,
}

/// The errors `--exact` measured (see the module docs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measured {
    /// What "seen before" means here.
    pub seen_means: String,
    /// Distinct lines in the stream.
    pub distinct: u64,
    /// Lines really new (not seen before).
    pub new_lines: u64,
    /// Lines really seen before.
    pub repeats: u64,
    /// New lines judged seen (dropped).
    pub false_positives: u64,
    /// `false_positives / new_lines`.
    pub fp_rate: f64,
    /// Repeats judged new (emitted).
    pub false_negatives: u64,
    /// `false_negatives / repeats`.
    pub fn_rate: f64,
    /// False positives expected from the filter's states (none where the
    /// library has no model of the state).
    pub expected_false_positives: Option<f64>,
    /// `expected_false_positives / new_lines`.
    pub expected_fp_rate: Option<f64>,
    /// `(false_positives - expected) / sd`.
    pub fp_z: Option<f64>,
    /// Timing: new lines last seen within the live span (certain positives,
    /// part of `false_positives` and of the expected count).
    pub stale: Option<u64>,
    /// Sweep eviction: the gap up to which a repeat is never missed.
    pub guaranteed_gap: Option<u64>,
    /// Repeats within that gap.
    pub repeats_within_gap: Option<u64>,
    /// False negatives among them (0 by the guarantee).
    pub false_negatives_within_gap: Option<u64>,
}

/// The expected false positives: the state's rate, sampled, times the new
/// lines between samples (trapezoids), and the variance of that sum.
#[derive(Default)]
struct Expected {
    /// The rate at the last sample.
    last: Option<f64>,
    /// New lines since the last sample.
    pending: u64,
    sum: f64,
    variance: f64,
}

impl Expected {
    fn sample(&mut self, now: f64) {
        let p = self.last.map_or(now, |last| (last + now) / 2.0);
        self.sum += self.pending as f64 * p;
        self.variance += self.pending as f64 * p * (1.0 - p);
        self.pending = 0;
        self.last = Some(now);
    }
}

/// Lines between two samples of the state's rate: a sample costs a pass
/// over the blocks, so at least as many lines as blocks (and 1024).
pub fn sample_every(memory: usize) -> u64 {
    (memory as u64 / 64).max(1024)
}

/// Runs `streambloom-bench dedup`: lines to standard output, the summary
/// to standard error.
pub fn run(args: &Args, out: &Output) -> Result<(), String> {
    let mut input = Input::open(&args.common.input, out)?;
    let stdout = std::io::stdout();
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let report = dedup(args, &mut input, &mut writer)?;
    eprint!("{}", out.render(&report)?);
    Ok(())
}

/// The importance in column `column` (1-based) of `line`, and the line
/// without that column in `key`.
fn split_importance(
    line: &[u8],
    column: usize,
    delimiter: u8,
    key: &mut Vec<u8>,
) -> Result<u32, String> {
    key.clear();
    let mut importance = None;
    for (i, field) in line.split(|&b| b == delimiter).enumerate() {
        if i + 1 == column {
            importance = Some(field);
            continue;
        }
        if i > 0 && !(i == 1 && column == 1) {
            key.push(delimiter);
        }
        key.extend_from_slice(field);
    }
    let field = importance.ok_or(format!("no column {column}"))?;
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .ok_or(format!(
            "column {column} is `{}`, not a whole number",
            super::shown(field)
        ))
}

/// Runs the filter over `input`, writing the lines judged new to `out`.
pub fn dedup(args: &Args, input: &mut Input<'_>, out: &mut dyn Write) -> Result<Report, String> {
    let req = args.request()?;
    let mut filter = filters::build(args.filter, &req)?;
    let window = (args.filter == Kind::Timing).then_some(req.window);
    let mut exact = args
        .common
        .exact
        .then(|| Exact::new(window.map(|w| w as usize)));
    let every = sample_every(args.common.memory);
    let gap = filter.guaranteed_gap();
    let mut m = Measured {
        guaranteed_gap: gap,
        repeats_within_gap: gap.map(|_| 0),
        false_negatives_within_gap: gap.map(|_| 0),
        stale: window.map(|_| 0),
        ..Measured::default()
    };
    let mut expected = Expected::default();
    let sample = |filter: &dyn Dedup, exact: &Exact, expected: &mut Expected| {
        if let Some(p) = filter.state_fpr(Some(exact.window_distinct())) {
            expected.sample(p);
        }
    };
    if let Some(exact) = &exact {
        sample(filter.as_ref(), exact, &mut expected);
    }
    let (mut lines, mut emitted, mut key) = (0u64, 0u64, Vec::new());
    let write_err = |e: std::io::Error| format!("cannot write the lines: {e}");
    // A reader that went away (`dedup … | head`) ends the run as the end
    // of the input would: quietly, the report covering the lines read.
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::BrokenPipe;
    let mut reader_gone = false;
    let start = Instant::now();
    while let Some(line) = input.next_line()? {
        if reader_gone {
            break;
        }
        lines += 1;
        let (k, importance): (&[u8], u32) = match args.importance_column {
            Some(c) => {
                let i = split_importance(line, c, args.delimiter, &mut key)
                    .map_err(|e| format!("line {lines}: {e}"))?;
                (&key, i)
            }
            None => (line, 0),
        };
        let span = filter.live_span();
        let seen = filter
            .observe(k, importance)
            .map_err(|e| format!("line {lines}: {e}"))?;
        if !seen {
            emitted += 1;
            match out.write_all(line).and_then(|()| out.write_all(b"\n")) {
                Err(e) if gone(&e) => reader_gone = true,
                written => written.map_err(write_err)?,
            }
        }
        let Some(exact) = &mut exact else {
            continue;
        };
        let last = exact.observe(k).gap;
        let before = match window {
            Some(w) => last.filter(|&g| g <= w),
            None => last,
        };
        if let Some(g) = before {
            m.repeats += 1;
            m.false_negatives += u64::from(!seen);
            if gap.is_some_and(|gap| g <= gap) {
                *m.repeats_within_gap.get_or_insert(0) += 1;
                *m.false_negatives_within_gap.get_or_insert(0) += u64::from(!seen);
            }
        } else {
            m.new_lines += 1;
            m.false_positives += u64::from(seen);
            match (last, span) {
                (Some(g), Some(span)) if g <= span => *m.stale.get_or_insert(0) += 1,
                _ => expected.pending += 1,
            }
        }
        if lines.is_multiple_of(every) {
            sample(filter.as_ref(), exact, &mut expected);
        }
    }
    match out.flush() {
        Err(e) if gone(&e) => {}
        flushed => flushed.map_err(write_err)?,
    }
    let seconds = start.elapsed().as_secs_f64();
    let exact = exact.map(|exact| {
        sample(filter.as_ref(), &exact, &mut expected);
        let stale = m.stale.unwrap_or(0) as f64;
        let expected_fp = expected.last.map(|_| expected.sum + stale);
        Measured {
            seen_means: match window {
                Some(w) => format!("among the last {w} lines"),
                None => "anywhere earlier in the stream".to_owned(),
            },
            distinct: exact.distinct() as u64,
            fp_rate: rate(m.false_positives, m.new_lines),
            fn_rate: rate(m.false_negatives, m.repeats),
            expected_false_positives: expected_fp,
            expected_fp_rate: expected_fp.map(|e| e / m.new_lines.max(1) as f64),
            fp_z: expected_fp
                .filter(|_| expected.variance > 0.0)
                .map(|e| (m.false_positives as f64 - e) / expected.variance.sqrt()),
            ..m
        }
    });
    Ok(Report {
        command: "dedup",
        build: build_name(),
        input: input.name().to_owned(),
        filter: args.filter.name(),
        memory: args.common.memory,
        target_fpr: args.fpr,
        seed: args.common.seed,
        plan: filter.plan().clone(),
        predicted_fpr: filter.predicted_fpr()?,
        lines,
        emitted,
        dropped: lines - emitted,
        seconds,
        exact,
    })
}

impl crate::output::Report for Report {
    fn table(&self) -> String {
        let mut out = format!(
            "# dedup: {} filter over {}, {}, target FPR {}, seed {} ({} build)\n# plan: {}\n\
             # predicted FPR {:.5}: {}\n",
            self.filter,
            self.input,
            size_name(self.memory),
            self.target_fpr,
            self.seed,
            self.build,
            self.plan.summary,
            self.predicted_fpr,
            self.plan.predicted
        );
        let mut t = Table::new(&[
            ("lines", Align::Right),
            ("emitted (new)", Align::Right),
            ("dropped (seen)", Align::Right),
            ("seconds", Align::Right),
            ("Mlines/s", Align::Right),
        ]);
        t.row(vec![
            self.lines.to_string(),
            self.emitted.to_string(),
            self.dropped.to_string(),
            num(Some(self.seconds), 2),
            num(Some(self.lines as f64 / self.seconds / 1e6), 2),
        ]);
        out += &t.render();
        let Some(m) = &self.exact else {
            return out;
        };
        out += &format!(
            "# --exact: {} distinct lines; \"seen\" = {}\n",
            m.distinct, m.seen_means
        );
        let mut t = Table::new(&[
            ("error", Align::Left),
            ("count", Align::Right),
            ("of lines", Align::Right),
            ("rate", Align::Right),
            ("expected", Align::Right),
            ("expected rate", Align::Right),
            ("z", Align::Right),
            ("predicted rate", Align::Right),
        ]);
        t.row(vec![
            "false positives (new, dropped)".into(),
            m.false_positives.to_string(),
            m.new_lines.to_string(),
            num(Some(m.fp_rate), 5),
            num(m.expected_false_positives, 1),
            num(m.expected_fp_rate, 5),
            num(m.fp_z, 2),
            num(Some(self.predicted_fpr), 5),
        ]);
        if let Some(stale) = m.stale {
            t.row(vec![
                "  of which stale (within the clock's span)".into(),
                stale.to_string(),
            ]);
        }
        t.row(vec![
            "false negatives (repeat, emitted)".into(),
            m.false_negatives.to_string(),
            m.repeats.to_string(),
            num(Some(m.fn_rate), 5),
        ]);
        if let (Some(g), Some(r), Some(f)) = (
            m.guaranteed_gap,
            m.repeats_within_gap,
            m.false_negatives_within_gap,
        ) {
            t.row(vec![
                format!("  of which at gaps <= {g} (guaranteed none)"),
                f.to_string(),
                r.to_string(),
                num(Some(rate(f, r)), 5),
            ]);
        }
        out + &t.render()
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
            Command::Dedup(args) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    /// A stream of `n` lines over `universe` keys: key `i` is
    /// `mix64(seed + i) % universe` (repeats at all gaps), each line the
    /// key, a tab, and an importance in 1..=50 that depends on the key.
    fn stream(n: u64, universe: u64, seed: u64) -> Vec<u8> {
        let mut s = Vec::new();
        for i in 0..n {
            let k = streambloom::hash::mix64(seed.wrapping_add(i)) % universe;
            s.extend_from_slice(format!("key-{k}\t{}\n", 1 + k % 50).as_bytes());
        }
        s
    }

    /// `dedup` of `data` with the options of `line` (its FILE is `-`):
    /// the report and the lines written.
    fn run_on(line: &str, data: Vec<u8>) -> Result<(Report, Vec<u8>), String> {
        let args = parse(line).map_err(|e| e.to_string())?;
        let mut input = Input::open_with("-", &QUIET, || Box::new(Cursor::new(data)))?;
        let mut out = Vec::new();
        let report = dedup(&args, &mut input, &mut out)?;
        Ok((report, out))
    }

    /// The first occurrence of each line, in order: the exact dedup.
    fn exact_dedup(data: &[u8]) -> Vec<u8> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if seen.insert(line) {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        out
    }

    /// The output is exactly the lines judged new (their count is the
    /// report's, and each is the first line of its kind or a false
    /// negative), and with a generous memory the stable and classic
    /// filters give the exact dedup.
    #[test]
    fn generous_memory_is_exact() {
        let data = stream(20_000, 5_000, 1);
        let want = exact_dedup(&data);
        for filter in ["stable", "classic"] {
            let line = format!(
                "streambloom-bench dedup - --exact --filter {filter} --memory 4M --fpr 0.0001"
            );
            let (report, out) = run_on(&line, data.clone()).unwrap();
            let m = report.exact.as_ref().unwrap();
            assert_eq!(
                report.emitted,
                out.iter().filter(|&&b| b == b'\n').count() as u64
            );
            assert_eq!(report.emitted + report.dropped, 20_000);
            assert_eq!(
                report.emitted,
                m.new_lines - m.false_positives + m.false_negatives
            );
            assert!(out == want, "{filter}");
            assert_eq!((m.false_positives, m.false_negatives), (0, 0));
            assert_eq!(m.distinct, m.new_lines);
        }
    }

    /// A reader that goes away (`dedup … | head`) ends the run quietly:
    /// no error, the lines it took are written, and the report counts the
    /// lines read up to then; any other write error is an error.
    #[test]
    fn closed_reader_stops_quietly() {
        /// Takes `room` bytes, then fails as a closed pipe (or `kind`).
        struct Pipe {
            taken: Vec<u8>,
            room: usize,
            kind: std::io::ErrorKind,
        }
        impl Write for Pipe {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.taken.len() + buf.len() > self.room {
                    return Err(self.kind.into());
                }
                self.taken.extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let data = stream(20_000, 1 << 40, 3);
        let args = parse("streambloom-bench dedup - --exact").unwrap();
        let pipe = |kind| Pipe {
            taken: Vec::new(),
            room: 100,
            kind,
        };
        let mut out = pipe(std::io::ErrorKind::BrokenPipe);
        let mut input =
            Input::open_with("-", &QUIET, || Box::new(Cursor::new(data.clone()))).unwrap();
        let report = dedup(&args, &mut input, &mut out).unwrap();
        assert!(
            report.lines < 20_000 && report.lines > 0,
            "{}",
            report.lines
        );
        assert!(data.starts_with(&out.taken) && !out.taken.is_empty());
        let mut out = pipe(std::io::ErrorKind::PermissionDenied);
        let mut input = Input::open_with("-", &QUIET, || Box::new(Cursor::new(data))).unwrap();
        let e = dedup(&args, &mut input, &mut out).unwrap_err();
        assert!(e.contains("cannot write the lines"), "{e}");
    }

    /// The measured false positives agree with the state's expectation
    /// (within 4 standard deviations and 10 %: the state is sampled), the
    /// sweep's guaranteed gap has no false negative, and the planned rate
    /// bounds the distinct stream's rate.
    #[test]
    fn false_positives_as_predicted() {
        // Mostly new keys: the filter runs at its steady state.
        let data = stream(60_000, 1 << 40, 2);
        for eviction in ["random", "sweep", "interleaved"] {
            let line = format!(
                "streambloom-bench dedup - --exact --memory 16K --fpr 0.05 --eviction {eviction}"
            );
            let (report, _) = run_on(&line, data.clone()).unwrap();
            let m = report.exact.unwrap();
            let expected = m.expected_false_positives.unwrap();
            let sd = (expected * (1.0 - m.fp_rate)).sqrt();
            let diff = (m.false_positives as f64 - expected).abs();
            assert!(
                diff <= 4.0 * sd + 0.1 * expected,
                "{eviction}: {} false positives, {expected} expected",
                m.false_positives
            );
            assert!(m.fp_rate <= report.predicted_fpr * 1.2 + 4.0 * sd / m.new_lines as f64);
            assert!(m.new_lines > 59_000);
        }
        // Repeats at all gaps: the sweep misses none within its gap.
        let data = stream(60_000, 3_000, 3);
        let line = "streambloom-bench dedup - --exact --memory 1K --fpr 0.1 --eviction sweep";
        let (report, _) = run_on(line, data).unwrap();
        let m = report.exact.unwrap();
        let (g, within) = (m.guaranteed_gap.unwrap(), m.repeats_within_gap.unwrap());
        assert!(g > 100 && within > 1000, "{g} {within}");
        assert_eq!(m.false_negatives_within_gap, Some(0));
        assert!(m.false_negatives > 0);
    }

    /// The other filters' expectations hold too: reservoir (fill-based),
    /// importance and classic (state-based) and timing (collisions plus
    /// the stale lines, none missed in the window).
    #[test]
    fn other_filters_as_predicted() {
        let data = stream(40_000, 20_000, 4);
        for (filter, extra) in [
            ("reservoir", ""),
            ("classic", ""),
            ("importance", " --importance-column 2"),
            (
                "importance",
                " --importance-column 2 --eviction interleaved",
            ),
            ("timing", " --window 2000"),
        ] {
            let line = format!(
                "streambloom-bench dedup - --exact --memory 8K --fpr 0.2 --filter {filter}{extra}"
            );
            let (report, _) = run_on(&line, data.clone()).unwrap();
            let m = report.exact.unwrap();
            let expected = m.expected_false_positives.unwrap();
            let diff = (m.false_positives as f64 - expected).abs();
            assert!(
                diff <= 4.0 * expected.sqrt() + 0.15 * expected,
                "{filter}: {} false positives, {expected} expected",
                m.false_positives
            );
            if filter == "timing" {
                assert_eq!(m.false_negatives, 0);
                assert!(m.stale.unwrap() > 0);
                assert_eq!(m.seen_means, "among the last 2000 lines");
            }
        }
    }

    /// Importance from a column: the key is the line without it, bad
    /// importances are errors naming the line.
    #[test]
    fn importance_column() {
        let mut key = Vec::new();
        assert_eq!(split_importance(b"a\t7\tb", 2, b'\t', &mut key), Ok(7));
        assert_eq!(key, b"a\tb");
        assert_eq!(split_importance(b"7,a,b", 1, b',', &mut key), Ok(7));
        assert_eq!(key, b"a,b");
        assert_eq!(split_importance(b"a\t\t3", 3, b'\t', &mut key), Ok(3));
        assert_eq!(key, b"a\t");
        assert!(split_importance(b"a", 2, b'\t', &mut key)
            .unwrap_err()
            .contains("no column 2"));
        assert!(split_importance(b"a\tx", 2, b'\t', &mut key)
            .unwrap_err()
            .contains("`x`"));
        let line = "streambloom-bench dedup - --filter importance --importance-column 2 \
                    --importance-max 5 --memory 4K --fpr 0.1";
        let (report, out) = run_on(line, b"a\t5\nb\t1\na\t2\n".to_vec()).unwrap();
        assert_eq!((report.emitted, out), (2, b"a\t5\nb\t1\n".to_vec()));
        let e = run_on(line, b"a\t5\nb\t6\n".to_vec()).unwrap_err();
        assert!(e.contains("line 2") && e.contains("importance"), "{e}");
    }

    /// Options a filter does not take, bad rates, sizes and delimiters, a
    /// memory too small and a missing file are errors, never panics.
    #[test]
    fn errors_are_errors() {
        let err = |line: &str| run_on(line, b"a\n".to_vec()).unwrap_err();
        assert!(err("streambloom-bench dedup - --filter timing").contains("--window"));
        assert!(err("streambloom-bench dedup - --window 5").contains("timing"));
        assert!(
            err("streambloom-bench dedup - --filter classic --eviction sweep")
                .contains("--eviction")
        );
        assert!(
            err("streambloom-bench dedup - --filter importance").contains("--importance-column")
        );
        assert!(err("streambloom-bench dedup - --importance-column 2").contains("importance"));
        assert!(err("streambloom-bench dedup - --fpr 0").contains("(0, 1)"));
        assert!(err("streambloom-bench dedup - --fpr nan").contains("(0, 1)"));
        assert!(err("streambloom-bench dedup - --memory 100").contains("64 bytes"));
        assert!(err("streambloom-bench dedup - --memory 4X").contains("unit"));
        assert!(err("streambloom-bench dedup - --delimiter ab").contains("ASCII"));
        assert!(
            err("streambloom-bench dedup - --filter classic --memory 64 --fpr 1e-300")
                .contains("classic filter")
        );
        let e = run(
            &parse("streambloom-bench dedup /nonexistent/lines.txt").unwrap(),
            &QUIET,
        )
        .unwrap_err();
        assert!(e.contains("/nonexistent/lines.txt"), "{e}");
    }

    /// The report as a table and as JSON, with and without `--exact`.
    #[test]
    fn report_renders() {
        let data = stream(2_000, 500, 5);
        let (report, _) = run_on(
            "streambloom-bench dedup - --exact --eviction sweep",
            data.clone(),
        )
        .unwrap();
        let table = crate::output::Report::table(&report);
        for s in ["# plan:", "false positives", "guaranteed none", "Mlines/s"] {
            assert!(table.contains(s), "{table}");
        }
        let json: serde_json::Value = serde_json::from_str(
            &Output {
                json: true,
                quiet: true,
                plot: None,
            }
            .render(&report)
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            json["exact"]["distinct"],
            report.exact.as_ref().unwrap().distinct
        );
        assert!(report.exact.as_ref().unwrap().distinct > 400);
        assert_eq!(json["plan"]["params"]["eviction"], "sweep");
        let (report, _) = run_on(
            "streambloom-bench dedup - --filter timing --window 10",
            data,
        )
        .unwrap();
        assert!(report.exact.is_none());
        assert!(!crate::output::Report::table(&report).contains("false positives"));
    }
}
