//! The classic blocked Bloom filter's false-positive rates: the Poisson
//! mixture over block loads of Putze, Sanders & Singler (*Cache-, hash-
//! and space-efficient Bloom filters*, 2007), for the split-block placement
//! of [`crate::classic`], for one block an item ([`blocked_fpr`]) and two
//! ([`two_block_fpr`], [`layout_fpr`]).

use crate::hash::Layout;
use streambloom_kernels::{W1, Width};

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
/// documents: `E[f_b]`; 1 for `k = 0`, no blocks or `n = ∞`, NaN for a
/// NaN `n`.
///
/// ```
/// use streambloom::analysis::classic::blocked_fpr;
/// let blocked = blocked_fpr(2048, 7, 100_000.0);
/// let unblocked = libm::pow(1.0 - libm::exp(-7.0 * 100_000.0 / (2048.0 * 512.0)), 7.0);
/// assert!(blocked > unblocked && blocked < 1.5 * unblocked);
/// assert_eq!(blocked_fpr(0, 7, 1000.0), 1.0); // no bits: every query a hit
/// assert_eq!(blocked_fpr(1, 7, f64::INFINITY), 1.0);
/// assert!(blocked_fpr(8, 7, f64::NAN).is_nan());
/// ```
pub fn blocked_fpr(blocks: usize, k: u32, n: f64) -> f64 {
    if let Some(rate) = degenerate(blocks, k, n) {
        return rate;
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

/// The false-positive rate of a one-bit filter of `blocks` blocks after `n`
/// distinct items of `k` bits each (`k <= 512`) in `layout`:
/// [`blocked_fpr`] for one block, [`two_block_fpr`] for two.
///
/// ```
/// use streambloom::analysis::classic::{blocked_fpr, layout_fpr};
/// use streambloom::Layout;
/// let (one, two) = (layout_fpr(Layout::OneBlock, 2048, 7, 1e5), layout_fpr(Layout::TwoBlocks, 2048, 7, 1e5));
/// assert_eq!(one, blocked_fpr(2048, 7, 1e5));
/// assert!(two < one);
/// ```
pub fn layout_fpr(layout: Layout, blocks: usize, k: u32, n: f64) -> f64 {
    match layout {
        Layout::OneBlock => blocked_fpr(blocks, k, n),
        Layout::TwoBlocks => two_block_fpr(blocks, k, n),
    }
}

/// The false-positive rate of a one-bit filter of `blocks` blocks after `n`
/// distinct items of `k` bits each (`k <= 512`) with two blocks an item
/// ([`Layout::TwoBlocks`]): `k1 = ⌈k/2⌉` bits in one block, `k2 = ⌊k/2⌋`
/// in another, independent one.
///
/// # Derivation
///
/// Every item sends a *first half* of `k1` bits to a uniform block and a
/// *second half* of `k2` bits to another, independent, uniform block. A
/// block therefore receives two kinds of halves: `i1` first halves and
/// `i2` second halves, which for many blocks are independent
/// `Pois(λ)` loads, `λ = n/blocks` (Poisson splitting; a block's total
/// load `i1 + i2` is `Pois(2λ)`, and given it the mix is binomial, not a
/// fixed share). As in [`blocked_fpr`], a half sets a given bit of its
/// block with probability `k_h/B` (`B = 512`; split-block places `k_h`
/// distinct bits, each with that marginal), so a bit of a block with loads
/// `(i1, i2)` is clear with probability `c = a^i1 · b^i2`,
/// `a = 1 - k1/B`, `b = 1 - k2/B`, and a query half of `k_h` bits finds
/// them all set with probability `(1 - c)^k_h` (the bits taken as
/// independent given the load, as Putze et al. do). A query's halves look
/// at two independent blocks, so
///
/// `FPR = H(k1) · H(k2)`, `H(k_h) = E[(1 - a^i1 b^i2)^k_h]` over
/// independent `i1, i2 ~ Pois(λ)`.
///
/// Expanding the power (inclusion–exclusion over the half's bits) and
/// using `E[x^i] = e^(-λ(1-x))` for `i ~ Pois(λ)`,
///
/// `H(k_h) = Σ_{j=0..k_h} (-1)^j C(k_h, j) e^(-λ(1-a^j)) e^(-λ(1-b^j))`,
///
/// which is what is computed for `k_h <= 16` (the terms are below `2^16`,
/// so the alternating sum loses at most `10^-11` absolutely); larger halves
/// take the double Poisson mixture numerically. `k = 1` has no second half
/// and gives [`blocked_fpr`]. With probability `1/blocks` a query's halves
/// share a block and merge ([`Layout`]): it then needs the union of its
/// halves' bits, `k1 + k2 − J` of them for a hypergeometric overlap `J`,
/// in one block, so the rate is
/// `(1 − 1/blocks)·H(k1)·H(k2) + (1/blocks)·Σ_J P(J)·H(min(k1 + k2 − J, 16))`
/// (a union of more than 16 bits taken at its first 16, an upper bound:
/// the closed form's limit below)
/// (without that term the stable filter's two-block plans of a few blocks
/// delivered more than their targets: see
/// [`stable::layout_fpr`](super::stable::layout_fpr)). The statistical tests hold
/// the model to the filter at 2048 blocks.
///
/// ```
/// use streambloom::analysis::classic::{blocked_fpr, two_block_fpr};
/// let two = two_block_fpr(2048, 7, 100_000.0);
/// let unblocked = libm::pow(1.0 - libm::exp(-7.0 * 100_000.0 / (2048.0 * 512.0)), 7.0);
/// // Between the unblocked rate and the one-block rate, close to the former.
/// assert!(unblocked < two && two < blocked_fpr(2048, 7, 100_000.0));
/// assert!(two < 1.1 * unblocked);
/// assert_eq!(two_block_fpr(2048, 1, 1e5), blocked_fpr(2048, 1, 1e5));
/// ```
pub fn two_block_fpr(blocks: usize, k: u32, n: f64) -> f64 {
    let (k1, k2) = Layout::TwoBlocks.halves(k.min(B as u32));
    if k2 == 0 {
        return blocked_fpr(blocks, k, n);
    }
    if let Some(rate) = degenerate(blocks, k, n) {
        return rate;
    }
    let lambda = n / blocks as f64;
    // As in `blocked_fpr`: past this load every bit the sums visit is clear
    // with probability below `e^-40`.
    if (lambda - 12.0 * libm::sqrt(lambda) - 12.0) * f64::from(k) / B as f64 >= 40.0 {
        return 1.0;
    }
    let (a, b) = (
        1.0 - f64::from(k1) / B as f64,
        1.0 - f64::from(k2) / B as f64,
    );
    // A merged probe of more than 16 bits is bounded by its first 16 (a
    // subset of its bits, all set at least as often): the closed form's
    // limit, where the mixture would cost a double sum per plan step.
    super::stable::merged_halves(blocks as f64, B, (k1, k2), |u| {
        half_fpr(lambda, a, b, u.min(16))
    })
    .clamp(0.0, 1.0)
}

/// `H(k_h) = E[(1 - a^i1 b^i2)^k_h]` over independent `i1, i2 ~ Pois(λ)`
/// ([`two_block_fpr`]).
pub(crate) fn half_fpr(lambda: f64, a: f64, b: f64, kh: u32) -> f64 {
    if kh <= 16 {
        let mut sum = 0.0;
        let mut binom = 1.0;
        let (mut aj, mut bj) = (1.0, 1.0);
        for j in 0..=kh {
            let term = binom * libm::exp(-lambda * (2.0 - aj - bj));
            sum += if j % 2 == 0 { term } else { -term };
            binom *= f64::from(kh - j) / f64::from(j + 1);
            aj *= a;
            bj *= b;
        }
        sum.clamp(0.0, 1.0)
    } else {
        half_fpr_by_mixture(lambda, a, b, kh)
    }
}

/// [`half_fpr`] as the double Poisson mixture, summed numerically.
pub(crate) fn half_fpr_by_mixture(lambda: f64, a: f64, b: f64, kh: u32) -> f64 {
    poisson_mixture(lambda, |i1| {
        let x = libm::pow(a, i1);
        poisson_mixture(lambda, |i2| {
            libm::pow(1.0 - x * libm::pow(b, i2), f64::from(kh))
        })
    })
    .min(1.0)
}

/// The rates [`blocked_fpr`] and [`two_block_fpr`] give without a sum:
/// 1 with no bits (`k = 0`) or no blocks, where every query is a hit, and
/// after infinitely many items; NaN for a NaN count. The sums' early exit
/// and bounds need a finite load: `blocks = 0` or `n = ∞` once made them
/// loop forever.
fn degenerate(blocks: usize, k: u32, n: f64) -> Option<f64> {
    if n.is_nan() {
        Some(f64::NAN)
    } else if k == 0 || blocks == 0 || n == f64::INFINITY {
        Some(1.0)
    } else {
        None
    }
}

/// `Σ_i Pois(i; λ) g(i)` over `i` within 12 standard deviations of `λ`
/// (the tests also take `E[f_b²]` with it); NaN for a load that is not
/// finite, whose range has no end.
pub(crate) fn poisson_mixture(lambda: f64, g: impl Fn(f64) -> f64) -> f64 {
    if !lambda.is_finite() {
        return f64::NAN;
    }
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
