//! aarch64 backends.

pub(crate) mod neon;
