//! `streambloom-bench`, the benchmark driver: one subcommand per
//! experiment, one module per subcommand.
//!
//! ```text
//! streambloom-bench latency [--quick] [--sizes 16K,1M,64M] [--target stable] [--isa avx2] ...
//! streambloom-bench repro spectral [--layout both] [--width 16]
//! streambloom-bench repro compact [--max-exp 7]
//! streambloom-bench accuracy [--quick]
//! streambloom-bench scale [--quick] [--threads 2] [--memory 64M] [--filter stable]
//! streambloom-bench claims [--quick] [--rounds 3]
//! streambloom-bench dedup FILE|- [--filter stable] [--memory 4M] [--fpr 0.01] [--exact]
//! streambloom-bench count FILE|- [--policy mi] [--top 10] [--at-least T] [--window W] [--exact]
//! ```
//!
//! Every command takes `--json` (the same data as its table, as JSON) and
//! `--quiet` (no progress bar); `--help` on any command lists its options
//! and method. Results go to standard output, progress to standard error.
//!
//! A command is a variant of [`Command`] and a module that computes a
//! report (a `Serialize` struct implementing [`output::Report`]) before
//! printing it; a paper to reproduce is a variant of [`repro::Paper`] and a
//! module under `repro/`.
#![forbid(unsafe_code)]

mod accuracy;
mod claims;
mod latency;
mod output;
#[cfg(feature = "peers")]
mod peers;
mod repro;
mod scale;
mod size;
mod stats;
mod stream;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Benchmarks and paper reproductions for streambloom.
///
/// Build with --release: a debug build's timings mean nothing.
#[derive(Parser, Debug)]
#[command(name = "streambloom-bench", version, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    output: output::Output,
    #[command(subcommand)]
    command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
enum Command {
    /// Per-item latency percentiles and throughput on a pinned core, per
    /// target, kernel implementation and filter size
    #[command(long_about = latency::LONG_ABOUT, after_help = latency::targets_help())]
    Latency(latency::Args),
    /// Rerun a paper's experiments and print our figures beside the paper's
    #[command(subcommand)]
    Repro(repro::Paper),
    /// Accuracy and batch-insert latency of every filter per layout (one
    /// block, two blocks, unblocked reference), in one run
    #[command(long_about = accuracy::LONG_ABOUT)]
    Accuracy(accuracy::Args),
    /// Each filter beside the peer crates a user would pick instead, at
    /// equal memory and parameters, interleaved (build with `--features
    /// peers`)
    #[cfg(feature = "peers")]
    #[command(long_about = peers::LONG_ABOUT)]
    Peers(peers::Args),
    /// Items per second of every filter with 1..N pinned threads, each
    /// owning a shard (share-nothing)
    #[command(long_about = scale::LONG_ABOUT)]
    Scale(scale::Args),
    /// Each paper's stated cost beside ours and beside the memory limit
    /// measured in the same run
    #[command(long_about = claims::LONG_ABOUT)]
    Claims(claims::Args),
    /// Writes the lines of a file a filter judges new (stable, reservoir,
    /// importance, timing, classic); --exact measures its false positives
    /// and negatives against the predicted rate
    #[command(long_about = stream::dedup::LONG_ABOUT)]
    Dedup(stream::dedup::Args),
    /// Counts the lines of a file in a Spectral filter: the most frequent,
    /// those reaching a threshold; --exact measures the over-counts
    /// against the predicted rate
    #[command(long_about = stream::count::LONG_ABOUT)]
    Count(stream::count::Args),
}

/// The warning a debug build prints first.
const DEBUG_WARNING: &str = "\
WARNING: this is a DEBUG build of streambloom-bench: its timings mean nothing
WARNING: (no optimisation, every check on). Run it with `cargo run --release`.";

fn main() -> ExitCode {
    if cfg!(debug_assertions) {
        eprintln!("{DEBUG_WARNING}");
    }
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match &cli.command {
        Command::Latency(args) => latency::run(args, &cli.output),
        Command::Repro(paper) => repro::run(paper, &cli.output),
        Command::Accuracy(args) => accuracy::run(args, &cli.output),
        #[cfg(feature = "peers")]
        Command::Peers(args) => peers::run(args, &cli.output),
        Command::Scale(args) => scale::run(args, &cli.output),
        Command::Claims(args) => claims::run(args, &cli.output),
        Command::Dedup(args) => stream::dedup::run(args, &cli.output),
        Command::Count(args) => stream::count::run(args, &cli.output),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--help` works on every command and subcommand (clap reports it as
    /// an error of kind `DisplayHelp`, which exits 0), and the top-level
    /// help lists every command with its one-line description.
    #[test]
    fn help_everywhere() {
        for line in [
            "streambloom-bench --help",
            "streambloom-bench latency --help",
            "streambloom-bench latency -h",
            "streambloom-bench repro --help",
            "streambloom-bench repro spectral --help",
            "streambloom-bench repro compact --help",
            "streambloom-bench help repro",
            "streambloom-bench accuracy --help",
            "streambloom-bench scale --help",
            "streambloom-bench claims --help",
            "streambloom-bench dedup --help",
            "streambloom-bench count --help",
        ] {
            let e = Cli::try_parse_from(line.split_whitespace()).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{line}");
            assert_eq!(e.exit_code(), 0, "{line}");
        }
        let help = Cli::command().render_help().to_string();
        for c in Cli::command().get_subcommands() {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(!about.is_empty(), "{} has no description", c.get_name());
            assert!(
                help.contains(c.get_name()) && help.contains(&about),
                "{help}"
            );
        }
        let latency = Cli::command()
            .find_subcommand_mut("latency")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        assert!(latency.contains("spectral-estimate-batch") && latency.contains("--target"));
    }

    #[test]
    fn bad_commands_are_errors() {
        let kind = |line: &str| {
            Cli::try_parse_from(line.split_whitespace())
                .map(|_| ())
                .unwrap_err()
                .kind()
        };
        use clap::error::ErrorKind;
        assert_eq!(
            kind("streambloom-bench bogus"),
            ErrorKind::InvalidSubcommand
        );
        assert_eq!(
            kind("streambloom-bench repro bogus"),
            ErrorKind::InvalidSubcommand
        );
        assert_eq!(
            kind("streambloom-bench repro"),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        assert_eq!(
            kind("streambloom-bench"),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
    }
}
