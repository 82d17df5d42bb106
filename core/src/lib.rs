//! streambloom: Bloom filters for unbounded streams, `no_std`, on
//! cache-line-blocked cells with SIMD kernels chosen at run time.
//!
//! Features: `alloc` (owned storage, windows), `std` (default: `alloc`,
//! random seeds).
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
pub use rng::Rng;
pub use spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum, Spectral};
pub use stable::{Eviction, StableBloom, StableParams};
pub use store::{Cells, Storage};
pub use streambloom_kernels::{
    Block, Isa, Kernels, Mask, MinCount, Width, W1, W16, W2, W32, W4, W8,
};
