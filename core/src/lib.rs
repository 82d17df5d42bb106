//! streambloom: Bloom filters for unbounded streams.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub use streambloom_kernels::{Block, Isa};
