//! x86-64 backends, chosen at run time.

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod bits;
pub(crate) mod timers;
