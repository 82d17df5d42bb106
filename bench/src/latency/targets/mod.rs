//! Every operation `latency` measures, one module per family.
//!
//! **Adding a filter's targets** is one file: a module here with a
//! `targets()` that returns its [`Target`]s (build the filter for `bytes`
//! and `isa` over the [`Memory`] of the [`Pages`] asked for, through
//! [`on_pages!`], hand [`Plan::measure`] a closure that runs the operation
//! on one pre-hashed item, or [`Plan::measure_batches`] one that takes a
//! batch), plus its line in [`all`]. The help lists targets from [`all`],
//! and `--target` selects among them.

mod apbf;
mod baseline;
mod classic;
mod importance;
mod reservoir;
mod spectral;
mod stable;
mod timing;

use streambloom::store::{HugePages, Storage};
use streambloom::{Block, Isa};

use super::sampler::{Measured, Plan};

/// Cells each item selects in its block (the prototype's k), for every
/// target.
pub const K: u32 = 5;

/// The pages a target's memory is on.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// The system's base pages (4 KiB on x86_64): the filter owns a Vec of
    /// blocks, as the filters' new allocates
    #[value(name = "4k")]
    Base,
    /// Transparent huge pages: a streambloom::store::HugePages map, lent to
    /// the filter as a slice of blocks (its view checked once)
    Huge,
    /// The same map owned by the filter as its storage, which re-checks the
    /// map's view on every access: the price of that convenience
    HugeOwned,
}

impl Pages {
    /// The name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Pages::Base => "4k",
            Pages::Huge => "huge",
            Pages::HugeOwned => "huge-owned",
        }
    }
}

/// Where a target gets the blocks its filter or buffer is built over: one
/// per [`Pages`], asked once per measurement.
pub trait Memory {
    /// The storage the filter is built over, which may borrow the memory.
    type Storage<'a>: Storage
    where
        Self: 'a;
    /// `blocks` zeroed blocks.
    fn zeroed(&mut self, blocks: usize) -> Result<Self::Storage<'_>, String>;
}

/// [`Pages::Base`]: a `Vec` the filter owns.
pub struct Heap;

impl Memory for Heap {
    type Storage<'a> = Vec<Block>;
    fn zeroed(&mut self, blocks: usize) -> Result<Vec<Block>, String> {
        Ok(vec![Block::ZERO; blocks])
    }
}

/// [`Pages::Huge`]: a [`HugePages`] map kept here and lent to the filter as
/// `&mut [Block]`, whose accesses cost what a `Vec`'s do.
#[derive(Default)]
pub struct Huge(Option<HugePages>);

impl Memory for Huge {
    type Storage<'a> = &'a mut [Block];
    fn zeroed(&mut self, blocks: usize) -> Result<&mut [Block], String> {
        let map = HugePages::zeroed(blocks).map_err(|e| e.to_string())?;
        Ok(self.0.insert(map).as_mut())
    }
}

/// [`Pages::HugeOwned`]: a [`HugePages`] map the filter owns.
pub struct HugeOwned;

impl Memory for HugeOwned {
    type Storage<'a> = HugePages;
    fn zeroed(&mut self, blocks: usize) -> Result<HugePages, String> {
        HugePages::zeroed(blocks).map_err(|e| e.to_string())
    }
}

/// `on_pages!(pages, mem => body)`: `body` with `mem` the [`Memory`] of
/// `pages`, compiled once per memory, so that each measured loop is the
/// same code on any pages (no dispatch inside it).
macro_rules! on_pages {
    ($pages:expr, $memory:ident => $body:expr) => {
        match $pages {
            $crate::latency::targets::Pages::Base => {
                let mut $memory = $crate::latency::targets::Heap;
                $body
            }
            $crate::latency::targets::Pages::Huge => {
                let mut $memory = $crate::latency::targets::Huge::default();
                $body
            }
            $crate::latency::targets::Pages::HugeOwned => {
                let mut $memory = $crate::latency::targets::HugeOwned;
                $body
            }
        }
    };
}
pub(crate) use on_pages;

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
    /// Builds the operation over `bytes` of memory on `pages` with `isa`'s
    /// kernels and measures it with `plan`.
    pub run: fn(bytes: usize, isa: Isa, pages: Pages, plan: &Plan) -> Result<Measured, String>,
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
    /// runs whatever `isa` says. Each run yields positive, finite timings,
    /// on either pages.
    #[test]
    fn every_target_runs_on_every_isa() {
        let plan = Plan {
            batches: 4,
            min_warmup: 64,
            overhead_ns: 0.0,
        };
        for t in all() {
            for (isa, pages) in Isa::ALL
                .into_iter()
                .flat_map(|isa| [Pages::Base, Pages::Huge, Pages::HugeOwned].map(|p| (isa, p)))
            {
                match (t.run)(4096, isa, pages, &plan) {
                    Ok(m) => {
                        assert!(
                            !t.per_isa || isa.is_available(),
                            "{} ran on {isa:?}",
                            t.name
                        );
                        let s = m.summary;
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
