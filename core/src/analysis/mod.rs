//! The papers' formulas and models, one module per filter: what the
//! planners plan by and the statistical tests hold the filters to.

pub mod classic;
pub mod spectral;
pub mod stable;
