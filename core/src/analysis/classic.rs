//! The classic blocked Bloom filter's false-positive rates: the Poisson
//! mixture over block loads of Putze, Sanders & Singler (*Cache-, hash-
//! and space-efficient Bloom filters*, 2007), for the split-block placement
//! of [`crate::classic`], and the textbook unblocked rate.

use streambloom_kernels::{Width, W1};

/// Bits per block.
const B: usize = W1::CELLS;

/// The per-block false-positive rate of a block holding `i` items, for
/// `k <= B`. (`pow` rather than `exp(i · log1p(-k/B))`: with `k = B` that
/// is `0 · -∞`, NaN, for an empty block.)
pub(crate) fn block_fpr(i: f64, k: u32) -> f64 {
    let clear = libm::pow(1.0 - f64::from(k) / B as f64, i);
    libm::pow(1.0 - clear, f64::from(k))
}

/// The false-positive rate of a blocked one-bit filter of `blocks` blocks
/// after `n` distinct items of `k` bits each (`k <= 512`), the Poisson
/// mixture over block loads that
/// [`ClassicParams::predicted_fpr`](crate::classic::ClassicParams::predicted_fpr)
/// documents: `E[f_b]`, 1 for `k = 0`.
///
/// ```
/// use streambloom::analysis::classic::blocked_fpr;
/// let blocked = blocked_fpr(2048, 7, 100_000.0);
/// let unblocked = libm::pow(1.0 - libm::exp(-7.0 * 100_000.0 / (2048.0 * 512.0)), 7.0);
/// assert!(blocked > unblocked && blocked < 1.5 * unblocked);
/// ```
pub fn blocked_fpr(blocks: usize, k: u32, n: f64) -> f64 {
    // With no bits, every query is a hit (and the early exit below, which
    // bounds the sum's work, would never fire).
    if k == 0 {
        return 1.0;
    }
    let lambda = n / blocks as f64;
    // Past this load every block the sum visits has fewer than `e^-40` of
    // its bits clear, so the rate is 1 to double precision; stopping here
    // also bounds the work for absurd loads.
    if (lambda - 12.0 * libm::sqrt(lambda) - 12.0) * f64::from(k) / B as f64 >= 40.0 {
        return 1.0;
    }
    // The Poisson weights' rounding can carry the sum an ulp past 1.
    poisson_mixture(lambda, |i| block_fpr(i, k)).min(1.0)
}

/// `Σ_i Pois(i; λ) g(i)` over `i` within 12 standard deviations of `λ`
/// (the tests also take `E[f_b²]` with it).
pub(crate) fn poisson_mixture(lambda: f64, g: impl Fn(f64) -> f64) -> f64 {
    if lambda <= 0.0 {
        return g(0.0);
    }
    let spread = 12.0 * libm::sqrt(lambda) + 12.0;
    let lo = libm::floor((lambda - spread).max(0.0));
    let hi = libm::ceil(lambda + spread);
    let ln_lambda = libm::log(lambda);
    let mut sum = 0.0;
    let mut i = lo;
    while i <= hi {
        let ln_p = -lambda + i * ln_lambda - libm::lgamma(i + 1.0);
        sum += libm::exp(ln_p) * g(i);
        i += 1.0;
    }
    sum
}
