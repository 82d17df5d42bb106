//! `streambloom-bench`, the benchmark driver: one subcommand per
//! experiment, one module per subcommand.
//!
//! ```text
//! streambloom-bench latency [--quick] [--json] [--sizes 16K,1M,64M] ...
//! streambloom-bench repro spectral
//! ```
//!
//! Run `streambloom-bench <command> --help` for a command's options and
//! method. Results go to standard output (a table, or JSON with `--json`);
//! progress goes to standard error.
#![forbid(unsafe_code)]

mod latency;
mod repro_spectral;

use std::process::ExitCode;

const USAGE: &str = "\
streambloom-bench: benchmarks for streambloom

Usage: streambloom-bench <command> [options]

Commands:
  latency   per-item latency percentiles and throughput on a pinned core,
            per kernel implementation and filter size
  repro     reruns a paper's experiments and prints our figures beside
            the paper's: `repro spectral` (§6.1–6.2 of the Spectral Bloom
            filter report)

Run `streambloom-bench <command> --help` for the command's options.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "latency" => latency::main(rest),
        "repro" => match rest.split_first() {
            Some((paper, args)) if paper == "spectral" => repro_spectral::run(args),
            _ => Err(format!("`repro` takes a paper: spectral\n\n{USAGE}")),
        },
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
