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

pub mod classic;
mod error;
pub mod hash;
mod rng;
pub mod spectral;
pub mod stable;
pub mod store;

pub use classic::{Classic, ClassicParams};
pub use error::{Error, Result};

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

/// How many items the `*_batch` operations prefetch ahead of the one they
/// work on: enough to cover a DRAM miss (~100 ns) at a few ns per item.
/// (Measured on Zen 3 at 64 MiB: 16 and 32 ahead ran alike.)
pub const LOOKAHEAD: usize = 16;

/// The smallest filter (in bytes of blocks) for which the `*_batch`
/// operations prefetch: below it the blocks sit in the L2 cache, where a
/// prefetch only adds work. Measured on Zen 3 (512 KiB of L2 a core,
/// `streambloom-bench latency --sizes 16K,1M`): prefetching made the
/// Stable batch about 7 ns per item slower than item-by-item calls at
/// 16 KiB and no slower at 1 MiB, and the Spectral batch 0.2–2.5 ns slower at
/// 16 KiB and faster at 1 MiB.
pub const PREFETCH_MIN_BYTES: usize = 256 * 1024;
pub use rng::Rng;
pub use spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum, Spectral};
pub use stable::{Eviction, StableBloom, StableParams};
pub use store::{Cells, Storage};
pub use streambloom_kernels::{
    Block, Isa, Kernels, Mask, MinCount, Width, W1, W16, W2, W32, W4, W8,
};
