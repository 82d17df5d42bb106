//! The filters, one directory each: the type, its params and planner, its
//! tests. Their formulas live in [`crate::analysis`]; what every filter
//! shares, in `crate::filter`.

pub mod apbf;
pub mod classic;
pub mod importance;
pub mod reservoir;
pub mod spectral;
pub mod stable;
pub mod timing;
