//! Kernel implementations, one module per instruction set, as in memchr:
//! the path says which instructions a file uses.

pub mod all;
pub(crate) mod generic;
pub(crate) mod portable;

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) mod aarch64;
