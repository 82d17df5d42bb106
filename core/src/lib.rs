//! streambloom: Bloom filters for unbounded streams, `no_std`, on
//! cache-line-blocked cells with SIMD kernels chosen at run time.
//!
//! Features: `alloc` (owned storage, windows; ahash as the default
//! hasher), `std` (default: `alloc`, random seeds). Without them nothing
//! needs an allocator: filters live in caller-provided blocks and
//! [`hash::DefaultHasher`] is foldhash.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod analysis;
mod error;
mod filter;
mod filters;
pub mod hash;
pub mod rng;
pub mod store;

pub use error::{Error, Result, Value};
pub use filters::{classic, spectral, stable};

pub use classic::{Classic, ClassicParams};

/// Test input sizes: `n` natively, a twentieth under Miri, which runs every
/// step in an interpreter (memory safety needs few, short cases).
#[cfg(test)]
pub(crate) const fn scaled(n: usize) -> usize {
    if cfg!(miri) {
        n / 20 + 1
    } else {
        n
    }
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

pub use spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum, Spectral, SpectralParams};
pub use stable::{Eviction, StableBloom, StableParams};
pub use store::Storage;
pub use streambloom_kernels::{Block, Isa, Mask, MinCount, Width, W1, W16, W2, W32, W4, W8};
