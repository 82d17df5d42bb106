//! The papers' formulas and models, one module per filter: what the
//! planners plan by and the statistical tests hold the filters to.
//!
//! ```
//! use streambloom::analysis::spectral::bloom_error;
//! // The Spectral paper's Bloom error at the optimal load γ = ln 2.
//! assert!((bloom_error(5, core::f64::consts::LN_2) - 0.5f64.powi(5)).abs() < 1e-12);
//! ```

pub mod apbf;
pub mod classic;
pub mod importance;
pub mod reservoir;
pub mod spectral;
pub mod stable;
pub mod timing;
