//! streambloom: Bloom filters for unbounded streams, `no_std`, on
//! cache-line-blocked cells with SIMD kernels chosen at run time.
//!
//! # Which filter for which job
//!
//! | the job | the filter | what it answers | its errors |
//! |---|---|---|---|
//! | "have I seen this key?" over a set that only grows | [`Classic`] | [`insert`](Classic::insert) (check-and-set), [`contains`](Classic::contains) | false positives at [`Classic::predicted_fpr`] |
//! | "is this a duplicate?" over an endless stream, in fixed memory | [`StableBloom`] | [`observe`](StableBloom::observe) | false positives *and* false negatives, both bounded and stable ([`stable`] module docs); [`Eviction::Sweep`] never forgets within a window |
//! | "is this a duplicate?", remembering important keys longer | [`ImportanceBloom`] | [`observe`](ImportanceBloom::observe)`(key, importance)` | as [`StableBloom`], with fewer false negatives for important keys ([`importance`] module docs) |
//! | "is this a duplicate?", keeping a reservoir sample of the stream's past | [`ReservoirBloom`] | [`observe`](ReservoirBloom::observe) | false positives and negatives; insertions thin out as `s/i` ([`reservoir`] module docs) |
//! | "how often has this key occurred?" | [`Spectral`] with [`MinimumSelection`] (deletions), [`MinimalIncrease`] (fewer errors, no deletions) or [`RecurringMinimum`] | [`estimate`](Spectral::estimate), [`at_least`](Spectral::at_least), [`union`](Spectral::union), [`join`](Spectral::join) | over-estimates only (see each policy) |
//! | "was this key among the last `w` items?", with no false negatives or as a probability | [`TimingBloom`] | [`contains`](TimingBloom::contains) (no false negatives), [`posterior`](TimingBloom::posterior), [`decide`](TimingBloom::decide) (least expected penalty) | false positives from overwritten timers and the clock's block granularity ([`timing`] module docs) |
//! | "was this key among the last `l·g` items?", in one bit a cell | [`Apbf`] | [`contains`](Apbf::contains) (no false negatives for the last `l·g`) | false positives from a run of `k` set slices ([`apbf`] module docs) |
//! | counts over the last `W` items; counts of value ranges | [`spectral::SlidingWindow`], [`spectral::RangeTree`] | as [`Spectral`] | as [`Spectral`] |
//!
//! # Choosing parameters
//!
//! Every filter is built from a params type, and every params type has a
//! planner that states what it promises:
//!
//! - [`Classic::plan`]`(n, target_fpr, seed)`: the smallest filter for `n`
//!   keys at that false-positive rate ([`ClassicParams::plan`]).
//! - [`StableBloom::plan`]`(memory_bytes, target_fpr, eviction, seed)`: `d`,
//!   `K` and `P` for that memory, meeting the rate with the longest memory
//!   of past items ([`StableParams::plan`]); or fix `d` and `K` and let
//!   [`StableParams::with_smallest_p`] pick `P`.
//! - [`Spectral::plan`]`(n_distinct, target_error, seed)`: the fewest
//!   counters (and the `k`) whose expected over-estimate rate for `n_distinct`
//!   keys is at most the target ([`SpectralParams::plan`]); or fix the
//!   memory and get the most accurate `k` ([`SpectralParams::plan_memory`]),
//!   or choose both with [`SpectralParams`]`::new(counters, k)`.
//!
//! ```
//! use streambloom::{Classic, Eviction, MinimumSelection, Spectral, StableBloom, W8};
//! let mut seen = Classic::plan(10_000, 0.01, 7)?;
//! assert!(!seen.insert("a") && seen.insert("a"));
//! let mut dedup = StableBloom::<W8>::plan(1 << 20, 0.01, Eviction::Sweep, 7)?;
//! assert!(!dedup.observe("a") && dedup.observe("a"));
//! let mut counts = Spectral::<MinimumSelection>::plan(10_000, 0.01, 7)?;
//! counts.insert("a");
//! assert_eq!(counts.estimate("a"), 1);
//! # Ok::<(), streambloom::Error>(())
//! ```
//!
//! # One shape for every filter
//!
//! Each filter is built by `new(params, seed)`, `with_hasher(params,
//! hasher)`, `new_random(params)` (`std`: secret seeds, for keys others
//! choose), `with_storage(params, storage, hasher)` (a caller's blocks,
//! zeroed: no allocator needed) or `restore(params, storage, hasher, ..)`
//! (a caller's blocks adopted as they are: a saved filter). Each hot
//! operation comes keyed (`insert(&key)`), pre-hashed (`insert_hash(h)`,
//! with [`hash`](Classic::hash) or any `u64`), and in batch forms of both
//! (`insert_batch(&keys)`, `insert_batch_hash(&hashes)`), which prefetch
//! out of cache and give the same answers. Batches that answer write to an
//! output slice and return [`Result`]; bad input is an [`Error`] naming the
//! parameter, the value given and what is allowed, never a panic.
//!
//! # Modules
//!
//! - [`apbf`], [`classic`], [`stable`], [`importance`], [`reservoir`],
//!   [`spectral`], [`timing`]: the filters,
//!   their params and planners.
//! - [`analysis`]: the papers' formulas and this crate's models of the
//!   blocked filters, which the planners plan by.
//! - [`hash`]: hashing a key once, and placing its cells in a block;
//!   [`hash::PortableHasher`], the same hash on every target.
//! - [`merge`]: combining filters built apart ([`Merge`]), per filter
//!   where the mathematics allows it.
//! - [`format`]: the versioned byte format every filter with a portable
//!   hasher is written in and read from, checked on the way in.
//! - [`store`]: where a filter keeps its blocks ([`Storage`]), and the
//!   batch constants.
//! - [`rng`]: the seeded PRNG of the filters' random choices.
//!
//! # Features
//!
//! `alloc` (owned storage, windows; ahash as the default hasher), `std`
//! (default: `alloc`, random seeds), `serde` (`Serialize`/`Deserialize`
//! of filters with a portable hasher, as their [`format`] bytes),
//! `huge-pages` (`std`, and `store::HugePages`: storage for big filters in
//! memory advised for transparent huge pages). Without them nothing needs an
//! allocator: filters live in caller-provided blocks and
//! [`hash::DefaultHasher`] is foldhash.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
/// The crate by its own name, so [`api_tests`] read as a user's code.
#[cfg(all(test, not(miri)))]
extern crate self as streambloom;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod analysis;
#[cfg(all(test, not(miri)))]
mod api_tests;
mod error;
mod filter;
mod filters;
pub mod format;
pub mod hash;
pub mod merge;
pub mod rng;
mod search;
pub mod store;

pub use error::{Error, Result, Value};
pub use filters::{apbf, classic, importance, reservoir, spectral, stable, timing};
pub use hash::Layout;
pub use merge::Merge;

pub use apbf::{Apbf, ApbfParams};
pub use classic::{Classic, ClassicParams};

/// Test input sizes: `n` natively, a twentieth under Miri, which runs every
/// step in an interpreter (memory safety needs few, short cases).
#[cfg(test)]
pub(crate) const fn scaled(n: usize) -> usize {
    if cfg!(miri) { n / 20 + 1 } else { n }
}

/// The property-test configuration of every test module: a fixed `seed`, so
/// each run explores the same cases and a failure replays without
/// regression files (which Miri could not write); under Miri, `miri_cases`
/// cases and the cheap XorShift generator.
#[cfg(test)]
pub(crate) fn proptest_config(
    cases: u32,
    miri_cases: u32,
    seed: u64,
) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed};
    Config {
        cases: if cfg!(miri) { miri_cases } else { cases },
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        rng_algorithm: if cfg!(miri) {
            RngAlgorithm::XorShift
        } else {
            RngAlgorithm::default()
        },
        ..Config::default()
    }
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

pub use importance::{ImportanceBloom, ImportanceParams};
pub use reservoir::{ReservoirBloom, ReservoirParams};
pub use spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum, Spectral, SpectralParams};
pub use stable::{Eviction, StableBloom, StableParams};
pub use store::Storage;
pub use streambloom_kernels::{Block, Isa, Mask, MinCount, W1, W2, W4, W8, W16, W32, Width};
pub use timing::{TimingBloom, TimingParams};
