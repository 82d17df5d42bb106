//! `repro <paper>`: reruns a paper's experiments and prints our figures
//! beside the paper's, one module per paper.
//!
//! Adding a paper is a module here (its `Args`, a `run` that computes a
//! report implementing [`crate::output::Report`]) and a variant of
//! [`Paper`].

pub mod compact;
pub mod importance;
pub mod reservoir;
pub mod spectral;
pub mod timing;

use crate::output::Output;

/// The papers `repro` reruns.
#[derive(clap::Subcommand, Debug)]
#[command(arg_required_else_help = true)]
pub enum Paper {
    /// Spectral Bloom filters: §6.1–6.2 and Table 1, on the library's
    /// blocked filter and on an unblocked reference, beside the paper
    #[command(long_about = spectral::LONG_ABOUT)]
    Spectral(spectral::Args),
    /// Importance-aware Bloom filter: the synthetic experiments of §IV-D
    /// (Table II settings) and the zero fraction against the Markov model
    #[command(long_about = importance::LONG_ABOUT)]
    Importance(importance::Args),
    /// Reservoir-sampling Bloom filter: Tables 2–5 (RSBF against SBF at
    /// equal memory), convergence, and the corrected FPR model
    #[command(long_about = reservoir::LONG_ABOUT)]
    Reservoir(reservoir::Args),
    /// Inferential time-decaying Bloom filters: §5 (standard against
    /// inferential queries, penalty ratio and Posterior Error), what the
    /// blocked layouts change, and the Age-Partitioned Bloom filter in the
    /// same memory
    #[command(long_about = timing::LONG_ABOUT)]
    Timing(timing::Args),
    /// Spectral Bloom filters' compact counters (the string-array index):
    /// §6.4, storage, time per action, against fixed-width counters and a
    /// hash table
    #[command(long_about = compact::LONG_ABOUT)]
    Compact(compact::Args),
}

/// Runs the experiments of `paper` and prints the report.
pub fn run(paper: &Paper, out: &Output) -> Result<(), String> {
    match paper {
        Paper::Spectral(args) => spectral::run(args, out),
        Paper::Importance(args) => importance::run(args, out),
        Paper::Reservoir(args) => reservoir::run(args, out),
        Paper::Timing(args) => timing::run(args, out),
        Paper::Compact(args) => compact::run(args, out),
    }
}
