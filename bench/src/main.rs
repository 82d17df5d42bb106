//! `streambloom-bench`, the benchmark driver: one subcommand per
//! experiment, one module per subcommand.
//!
//! ```text
//! streambloom-bench latency [--quick] [--json] [--sizes 16K,1M,64M] ...
//! ```
//!
//! Run `streambloom-bench <command> --help` for a command's options and
//! method. Results go to standard output (a table, or JSON with `--json`);
//! progress goes to standard error.
#![forbid(unsafe_code)]

mod latency;

use std::process::ExitCode;

const USAGE: &str = "\
streambloom-bench: benchmarks for streambloom

Usage: streambloom-bench <command> [options]

Commands:
  latency   per-item latency percentiles and throughput on a pinned core,
            per kernel implementation and filter size

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
