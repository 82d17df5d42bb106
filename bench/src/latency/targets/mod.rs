//! Every operation `latency` measures, one module per family.
//!
//! **Adding a filter's targets** is one file: a module here with a
//! `targets()` that returns its [`Target`]s (build the filter for `bytes`
//! and `isa`, hand [`Plan::measure`] a closure that runs the operation on
//! one pre-hashed item, or [`Plan::measure_batches`] one that takes a batch),
//! plus its line in [`all`]. The help lists targets from [`all`], and
//! `--target` selects among them.

mod apbf;
mod baseline;
mod classic;
mod importance;
mod reservoir;
mod spectral;
mod stable;
mod timing;

use streambloom::Isa;

use super::sampler::Plan;
use crate::stats::Summary;

/// Cells each item selects in its block (the prototype's k), for every
/// target.
pub const K: u32 = 5;

/// A measured operation, built for a filter size and a kernel
/// implementation.
#[derive(Clone, Copy)]
pub struct Target {
    /// Name in the report and for `--target`.
    pub name: &'static str,
    /// What is measured, for `--help`: one or two lines.
    pub about: &'static str,
    /// Whether the operation runs kernels, so it is measured once per
    /// available [`Isa`]; otherwise once per size.
    pub per_isa: bool,
    /// Builds the operation over `bytes` of memory with `isa`'s kernels and
    /// measures it with `plan`.
    pub run: fn(bytes: usize, isa: Isa, plan: &Plan) -> Result<Summary, String>,
}

/// Every target, in report order.
pub fn all() -> Vec<Target> {
    [
        baseline::targets(),
        classic::targets(),
        stable::targets(),
        importance::targets(),
        reservoir::targets(),
        spectral::targets(),
        timing::targets(),
        apbf::targets(),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A per-ISA target measures the kernels it is asked for: it runs on
    /// every available implementation and refuses every other one (a target
    /// that ignored `isa`, or fell back to another implementation, would
    /// report figures under the wrong name). A target that runs no kernel
    /// runs whatever `isa` says. Each run yields positive, finite timings.
    #[test]
    fn every_target_runs_on_every_isa() {
        let plan = Plan {
            batches: 4,
            min_warmup: 64,
            overhead_ns: 0.0,
        };
        for t in all() {
            for isa in Isa::ALL {
                match (t.run)(4096, isa, &plan) {
                    Ok(s) => {
                        assert!(
                            !t.per_isa || isa.is_available(),
                            "{} ran on {isa:?}",
                            t.name
                        );
                        assert!(s.mean > 0.0 && s.mean.is_finite(), "{} {isa:?}", t.name);
                    }
                    Err(e) => {
                        assert!(t.per_isa && !isa.is_available(), "{} {isa:?}: {e}", t.name);
                        assert!(e.contains("not available"), "{} {isa:?}: {e}", t.name);
                    }
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_described() {
        let targets = all();
        for (i, t) in targets.iter().enumerate() {
            assert!(!t.about.is_empty(), "{}", t.name);
            assert!(
                targets[..i].iter().all(|u| u.name != t.name),
                "{} twice",
                t.name
            );
        }
    }
}
