//! `dedup` and `count`: the filters over a real stream of lines, a file or
//! standard input, with an exact answer beside them on request
//! (`--exact`) to measure the errors they make against the errors the
//! library predicts.
//!
//! - [`dedup`]: each line a filter judges new goes to standard output,
//!   the summary to standard error.
//! - [`count`]: a Spectral filter counts the lines; the most frequent by
//!   estimate (`--top`) and those whose estimate reaches a threshold
//!   (`--at-least`) are the output.
//!
//! Lines are raw bytes ([`input`]); `--exact` keeps every distinct line
//! in a hash map ([`exact`]), so it needs memory in proportion to the
//! stream's distinct lines, which the filters do not.

pub mod count;
pub mod dedup;
mod exact;
mod filters;
mod input;
mod top;

use crate::size::parse_size;

/// The output options the tests run the commands with: no progress bar.
#[cfg(test)]
pub(crate) const QUIET: crate::output::Output = crate::output::Output {
    json: false,
    quiet: true,
    plot: None,
};

/// The seed when `--seed` is not given: fixed, so that runs repeat.
pub const DEFAULT_SEED: u64 = 0x5EED_5EED;

/// The options `dedup` and `count` share.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct Common {
    /// The input: a file of newline-delimited lines, or `-` for standard
    /// input (lines are raw bytes: any encoding)
    #[arg(value_name = "FILE|-")]
    pub input: String,
    /// The filter's memory (B, K, M or G suffix, binary units; a multiple
    /// of 64 bytes)
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4MiB")]
    pub memory: usize,
    /// Seed of the filter's hashing and random choices (fixed by default,
    /// so that runs repeat)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Also run an exact hash map beside the filter and report the errors
    /// the filter made against the library's predictions (memory grows
    /// with the distinct lines)
    #[arg(long)]
    pub exact: bool,
}

/// `"release"` or `"debug"`, for reports.
fn build_name() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// A whole number of at least 1.
fn parse_positive<T: std::str::FromStr + PartialEq + From<u8>>(s: &str) -> Result<T, String> {
    match s.parse::<T>() {
        Ok(n) if n == T::from(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

/// `part / whole`, 0 for an empty whole.
fn rate(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// A line for a report: UTF-8, invalid bytes shown as U+FFFD.
fn shown(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(parse_positive::<u64>("3"), Ok(3));
        assert!(parse_positive::<u64>("0")
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse_positive::<u32>("x")
            .unwrap_err()
            .contains("not a whole"));
        assert_eq!(rate(1, 4), 0.25);
        assert_eq!(rate(1, 0), 0.0);
        assert_eq!(shown(b"a\xffb"), "a\u{fffd}b");
    }
}
