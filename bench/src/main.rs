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
//! `--quiet` (no progress bar); those whose results are curves take `--plot
//! FILE.svg` (line charts of the same data); `--help` on any command lists
//! its options and method. Results go to standard output, progress to standard error.
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
mod plot;
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

impl Command {
    /// Whether the command's report has curves for `--plot`.
    fn draws_curves(&self) -> bool {
        matches!(
            self,
            Command::Latency(_) | Command::Scale(_) | Command::Repro(_)
        )
    }
}

/// The commands `--plot` draws, for its error message.
const PLOTTED: &str = "latency, scale and every repro";

/// An error, before anything runs, when `--plot` is asked of a command
/// without curves (`name` is the command's name as typed) or names a file
/// in a folder that does not exist: a long run would end without its plot.
fn check_plot(cli: &Cli, name: &str) -> Result<(), String> {
    let Some(path) = &cli.output.plot else {
        return Ok(());
    };
    if !cli.command.draws_curves() {
        return Err(format!(
            "--plot {}: `{name}` has no curves to draw; the commands with curves are {PLOTTED}",
            path.display()
        ));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if folder.is_dir() {
        Ok(())
    } else {
        Err(format!(
            "--plot {}: there is no folder {}",
            path.display(),
            folder.display()
        ))
    }
}

/// The command's name as typed, with its subcommand's: `repro compact`.
fn command_name(matches: &clap::ArgMatches) -> String {
    let mut names = Vec::new();
    let mut m = matches;
    while let Some((name, sub)) = m.subcommand() {
        names.push(name);
        m = sub;
    }
    names.join(" ")
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
    if let Err(e) = check_plot(&cli, &command_name(&matches)) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
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

    /// `--plot` parses before or after the command, and is an error before
    /// anything runs on a command that has no curves or into a folder that
    /// does not exist.
    #[test]
    fn plot_only_where_there_are_curves() {
        let check = |line: &str| {
            let matches = Cli::command()
                .try_get_matches_from(line.split_whitespace())
                .unwrap();
            let cli = Cli::from_arg_matches(&matches).unwrap();
            assert_eq!(
                cli.output.plot.as_deref(),
                Some(std::path::Path::new("out.svg")),
                "{line}"
            );
            check_plot(&cli, &command_name(&matches))
        };
        for line in [
            "streambloom-bench latency --quick --plot out.svg",
            "streambloom-bench --plot out.svg scale --quick",
            "streambloom-bench repro spectral --plot=out.svg",
            "streambloom-bench repro reservoir --quick --plot out.svg",
            "streambloom-bench repro timing --plot out.svg --json",
            "streambloom-bench repro compact --quick --plot out.svg",
            "streambloom-bench repro importance --quick --plot out.svg",
        ] {
            assert_eq!(check(line), Ok(()), "{line}");
        }
        for (line, name) in [
            ("streambloom-bench claims --plot out.svg", "`claims`"),
            (
                "streambloom-bench accuracy --quick --plot out.svg",
                "`accuracy`",
            ),
            ("streambloom-bench dedup - --plot out.svg", "`dedup`"),
        ] {
            let e = check(line).unwrap_err();
            assert!(e.contains("no curves") && e.contains("every repro"), "{e}");
            assert!(e.contains(name), "{e}");
        }
        let cli = Cli::try_parse_from(["streambloom-bench", "claims"]).unwrap();
        assert_eq!(check_plot(&cli, "claims"), Ok(()));
        let line = "streambloom-bench scale --plot /nonexistent-dir-of-streambloom/s.svg";
        let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
        let e = check_plot(&cli, "scale").unwrap_err();
        assert!(
            e.contains("no folder /nonexistent-dir-of-streambloom"),
            "{e}"
        );
        let e = Cli::try_parse_from(["streambloom-bench", "latency", "--plot"]).unwrap_err();
        assert!(e.to_string().contains("--plot"), "{e}");
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
