//! PLACEHOLDER: the Neon backend, for now the scalar kernels under its name.

use crate::arch::all::{
    add_sat, any_zero, assign, dec_run, max_assign, min_count, sub_sat, zero_count,
};

crate::dispatch::tables!(crate::Isa::Neon);
