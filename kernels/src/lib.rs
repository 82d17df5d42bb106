//! Cell kernels for streambloom: the few operations every filter's hot path
//! is made of, over one 64-byte [`Block`] and a selection [`Mask`], or over a
//! run of cells.
//!
//! | kernel | what it does |
//! |---|---|
//! | [`Kernels::any_zero`] | any selected cell zero (membership probe) |
//! | [`Kernels::min_count`] | min of the selected cells and how many sit at it |
//! | [`Kernels::max_assign`], [`Kernels::assign`] | raise / set the selected cells |
//! | [`Kernels::add_sat`], [`Kernels::sub_sat`] | saturating add / subtract on the selected cells |
//! | [`Kernels::dec_run`] | saturating decrement of a run of cells, wrapping (eviction) |
//! | [`Kernels::zero_count`] | zero cells in a run (stability metrics) |
//! | [`Kernels::expire_run`] | mark stale timers of a run expired, wrapping (timing filter's sweep) |
//! | [`Kernels::oldest_count`] | oldest timer age of the selected cells and how many hold it |
//! | [`prefetch()`] | start loading a block a batch ahead |
//!
//! Cells are 1, 2, 4, 8, 16 or 32 bits ([`Width`]) and saturate, never wrap.
//! [`arch::all`] is the scalar reference; SIMD backends (portable `wide`,
//! AVX2, NEON) are picked at run time by [`Isa::detect`], once, and a caller
//! can force any available one with [`Kernels::for_isa`], AVX-512BW
//! included (never picked by default: its speed is unmeasured).
//!
//! This crate is the only one in the workspace with `unsafe` code.
#![no_std]
#![deny(missing_docs)]

pub mod arch;
mod block;
mod dispatch;
mod engine;
mod mask;
mod prefetch;
mod width;

pub use arch::timers::{AgeCount, TimerClock};
pub use block::Block;
pub use dispatch::{Isa, Kernels, MinCount};
pub use engine::{Backend, Body, Engine, Ops, Scalar};
pub use mask::Mask;
pub use prefetch::prefetch;
pub use width::{cell, set_cell, Width, W1, W16, W2, W32, W4, W8};
