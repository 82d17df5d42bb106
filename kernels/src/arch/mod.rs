//! Kernel implementations, as in memchr: [`all`] is the scalar reference,
//! `generic` writes each SIMD kernel once over a small vector trait, and one
//! thin module per instruction set implements that trait and stamps the
//! kernels with its target features (the path says which instructions a
//! file uses).

pub mod all;
pub(crate) mod bits;
pub(crate) mod generic;
pub(crate) mod portable;
pub mod timers;

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) mod aarch64;
