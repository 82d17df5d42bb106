//! The Age-Partitioned Bloom Filter's false-positive rate (Shtul, Baquero
//! & Almeida, *Age-Partitioned Bloom Filters*, arXiv 2001.03147, 2020; the
//! public implementation `CrowdStrike/apbf` computes the paper's rate in
//! `CalculateFalsePositiveRate`, and its slice size, `1.442695·k·g` bits,
//! in `deriveParams`). The paper's text was not at hand: this module
//! derives the rate itself and checks it by simulation
//! (`filters/apbf/tests.rs`).
//!
//! # The derivation
//!
//! The filter has `h = k + l` one-bit slices of `m` bits each, kept as a
//! ring; logical slice `0` is the newest. An item inserted sets one bit in
//! each of the `k` newest slices, and a query reports present when some
//! `k` *consecutive* slices all have the key's bit set. A key never
//! inserted finds its bit in slice `i` set with probability `r_i`, the
//! slice's fill ratio, independently across slices (each slice hashes the
//! key to its own position), so the false-positive rate is the probability
//! that `h` independent Bernoulli trials with success probabilities
//! `r_0, …, r_{h-1}` contain a run of `k` successes ([`run_probability`]).
//! It is computed by the chain over the length `a < k` of the current run:
//! a set bit takes `a` to `a + 1` (absorbed at `k`: a hit), a clear bit
//! back to `0`; `O(h·k)` work, no allocation.
//!
//! The fill ratios: after `n` insertions from empty, with generations of
//! `g` insertions, the ring has shifted `s = ⌊(n-1)/g⌋` times and the
//! current generation holds `c = n - s·g` items. The generation of age `a`
//! (`0` current, `c` items; `1..=s` full, `g` items) set the slices now at
//! logical `a..a+k`, so slice `i` has received
//! `n_i = Σ_{a = max(0, i-k+1)}^{min(i, s)} size(a)` items
//! ([`slice_items`]) and its expected fill is `1 - (1 - 1/m)^{n_i}`
//! ([`fill`]). In the steady state with a full current generation (the
//! moment before a shift, the worst), `n_i = (i+1)·g` for `i < k` and
//! `k·g` beyond. With the paper's slice size `m = k·g / ln 2` (the
//! implementation's `1.442695·k·g`) the oldest slices are half full, and
//! the fills are `1 - 2^{-(i+1)/k}` for the `k` newest. The paper's rate
//! takes those as `(i+1)/(2k)`, the chord of that concave curve, so it
//! under-states the young slices' fills and the rate a little
//! ([`paper_fpr`] restates it; the statistical tests hold the filter to
//! [`predicted_fpr`], this module's exact fills).

/// The largest `k` the filter takes: the run-length chain keeps `k`
/// probabilities on the stack. (`k = 64` is a rate near `2^-64`.)
pub const MAX_K: u32 = 64;

/// The probability that independent trials with success probabilities
/// `fill(0), …, fill(slices - 1)` contain `k` consecutive successes (`1`
/// for `k = 0`, `0` for `k > slices`); `k` above [`MAX_K`] counts as
/// [`MAX_K`]. Every probability is clamped to `[0, 1]` (NaN counts as 0).
///
/// ```
/// use streambloom::analysis::apbf::run_probability;
/// // Two slices, both needed: the product.
/// assert!((run_probability(2, 2, |_| 0.5) - 0.25).abs() < 1e-15);
/// // Runs of 2 in 3 fair trials: 110, 011, 111.
/// assert!((run_probability(2, 3, |_| 0.5) - 3.0 / 8.0).abs() < 1e-15);
/// ```
pub fn run_probability(k: u32, slices: usize, mut fill: impl FnMut(usize) -> f64) -> f64 {
    run_probabilities(k, slices, &mut fill, |_, _| {})
}

/// [`run_probability`], calling `after(i, p)` with the probability `p` of
/// a run of `k` within the first `i + 1` trials, for each `i`.
pub(crate) fn run_probabilities(
    k: u32,
    slices: usize,
    fill: &mut impl FnMut(usize) -> f64,
    mut after: impl FnMut(usize, f64),
) -> f64 {
    let k = k.min(MAX_K) as usize;
    if k == 0 {
        return 1.0;
    }
    // run[a]: the probability of a current run of exactly `a < k` set
    // slices and no run of `k` so far.
    let mut run = [0.0f64; MAX_K as usize];
    run[0] = 1.0;
    let mut hit = 0.0;
    for i in 0..slices {
        let r = fill(i);
        // NaN fails this test too.
        let r = if r > 0.0 { r.min(1.0) } else { 0.0 };
        hit += run[k - 1] * r;
        let mut reset = 0.0;
        for a in (0..k).rev() {
            reset += run[a] * (1.0 - r);
            run[a] = if a == 0 { 0.0 } else { run[a - 1] * r };
        }
        run[0] = reset;
        after(i, hit);
    }
    hit.min(1.0)
}

/// Items slice `i` (logical, `0` the newest) has received after `n`
/// insertions from empty into a filter of `k` newest slices and
/// generations of `g` (see the [module docs](self)).
///
/// ```
/// use streambloom::analysis::apbf::slice_items;
/// // k = 3, g = 10, after 45 insertions: generations of 5, 10, 10, 10, 10.
/// let items: Vec<u64> = (0..6).map(|i| slice_items(3, 10, 45, i)).collect();
/// assert_eq!(items, [5, 15, 25, 30, 30, 20]);
/// assert_eq!(slice_items(3, 10, 45, usize::MAX), 0); // past the ring
/// ```
pub fn slice_items(k: u32, g: u64, n: u64, i: usize) -> u64 {
    if n == 0 || k == 0 || g == 0 {
        return 0;
    }
    let shifts = (n - 1) / g;
    let current = n - shifts * g;
    let i = i as u64;
    let first = i.saturating_add(1).saturating_sub(u64::from(k));
    let last = i.min(shifts);
    if first > last {
        return 0;
    }
    let full = last - first + 1 - u64::from(first == 0);
    full.saturating_mul(g)
        .saturating_add(if first == 0 { current } else { 0 })
}

/// The expected fill ratio of an `m`-bit slice after `items` insertions,
/// one uniform bit each: `1 - (1 - 1/m)^items` (0 for `m = 0`).
///
/// ```
/// use streambloom::analysis::apbf::fill;
/// assert_eq!(fill(0, 1024), 0.0);
/// assert!((fill(1024, 1 << 20) - (1.0 - libm::exp(-1.0 / 1024.0))).abs() < 1e-6);
/// ```
pub fn fill(items: u64, m: usize) -> f64 {
    if m == 0 {
        return 0.0;
    }
    -libm::expm1(items as f64 * libm::log1p(-1.0 / m as f64))
}

/// The expected false-positive rate after `n` insertions from empty into
/// a filter of `k` newest slices, `l` older ones, generations of `g` and
/// `m`-bit slices: [`run_probability`] over the fills [`fill`] of
/// [`slice_items`].
///
/// ```
/// use streambloom::analysis::apbf::predicted_fpr;
/// let (k, l, g) = (10, 7, 1000);
/// let m = (k as f64 * g as f64 / core::f64::consts::LN_2).ceil() as usize;
/// let settled = predicted_fpr(k, l, g, m, 1_000_000);
/// assert!(settled > 5e-4 && settled < 2e-3);
/// // Early on, fewer slices are full.
/// assert!(predicted_fpr(k, l, g, m, 5000) < settled);
/// ```
pub fn predicted_fpr(k: u32, l: u32, g: u64, m: usize, n: u64) -> f64 {
    let slices = k as usize + l as usize;
    run_probability(k, slices, |i| fill(slice_items(k, g, n, i), m))
}

/// The steady-state rate just before a shift (the current generation
/// full, every slice aged): [`predicted_fpr`] for `n → ∞` at its largest.
///
/// ```
/// use streambloom::analysis::apbf::{predicted_fpr, steady_fpr};
/// let m = 14427;
/// assert_eq!(steady_fpr(10, 7, 1000, m), predicted_fpr(10, 7, 1000, m, 18_000));
/// assert!(steady_fpr(10, 7, 1000, m) >= predicted_fpr(10, 7, 1000, m, 17_500));
/// ```
pub fn steady_fpr(k: u32, l: u32, g: u64, m: usize) -> f64 {
    let slices = k as usize + l as usize;
    let n = (slices as u64).saturating_mul(g);
    predicted_fpr(k, l, g, m, n)
}

/// The paper's rate for `k` and `l` at its slice size `m = k·g / ln 2`,
/// as `CalculateFalsePositiveRate` in `CrowdStrike/apbf` computes it (the
/// paper's text was not at hand; that implementation is our source): the
/// fills `(i+1)/(2k)` for the `k` newest slices and `1/2` beyond, in the
/// chain of [`run_probability`]. Below the exact fills' rate, by 7 % at
/// `k = 4, l = 3` and 22 % at `k = 10, l = 7` (see the
/// [module docs](self); the test `paper_rate_understates_the_measured_one`
/// measures it).
///
/// ```
/// use streambloom::analysis::apbf::{paper_fpr, steady_fpr};
/// let m = (10.0 * 1000.0 / core::f64::consts::LN_2).ceil() as usize;
/// let (paper, exact) = (paper_fpr(10, 7), steady_fpr(10, 7, 1000, m));
/// assert!(paper < exact && exact < 1.3 * paper);
/// ```
pub fn paper_fpr(k: u32, l: u32) -> f64 {
    let slices = k as usize + l as usize;
    let kf = f64::from(k.max(1));
    run_probability(k, slices, |i| ((i + 1) as f64 / (2.0 * kf)).min(0.5))
}

/// The steady-state rate at the paper's slice size for every `l` in
/// `1..=max_l` at once (entry `l - 1`), the fills `1 - 2^{-(i+1)/k}` of
/// the [module docs](self), written to `out` (its length is `max_l`).
pub(crate) fn ideal_fprs_by_l(k: u32, out: &mut [f64]) {
    let kf = f64::from(k);
    let slices = k as usize + out.len();
    run_probabilities(
        k,
        slices,
        &mut |i| -libm::expm1(-core::f64::consts::LN_2 * ((i + 1) as f64 / kf).min(1.0)),
        |i, p| {
            // After slice `i` there are `i + 1 = k + l` slices.
            if let Some(l) = (i + 1).checked_sub(k as usize + 1) {
                out[l] = p;
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run chain against brute force over every outcome of a few
    /// slices with unequal fills.
    #[test]
    fn run_probability_is_brute_force() {
        let fills = [0.1, 0.7, 0.4, 0.9, 0.5, 0.3, 0.8];
        for k in 1..=4u32 {
            for slices in 0..=fills.len() {
                let mut exact = 0.0;
                for outcome in 0u32..1 << slices {
                    let (mut p, mut run, mut hit) = (1.0, 0, false);
                    for (i, &r) in fills[..slices].iter().enumerate() {
                        if outcome >> i & 1 == 1 {
                            p *= r;
                            run += 1;
                            hit |= run >= k;
                        } else {
                            p *= 1.0 - r;
                            run = 0;
                        }
                    }
                    if hit {
                        exact += p;
                    }
                }
                let chain = run_probability(k, slices, |i| fills[i]);
                assert!((chain - exact).abs() < 1e-12, "k {k} slices {slices}");
            }
        }
    }

    /// The rates for every `l` in one pass equal one chain per `l`.
    #[test]
    fn ideal_fprs_by_l_equal_separate_chains() {
        for k in [1u32, 3, 8] {
            let mut out = [0.0; 12];
            ideal_fprs_by_l(k, &mut out);
            for (l, &p) in (1..).zip(&out) {
                let alone = run_probability(k, (k + l) as usize, |i| {
                    1.0 - libm::pow(2.0, -((i + 1) as f64 / f64::from(k)).min(1.0))
                });
                assert!((p - alone).abs() < 1e-14, "k {k} l {l}");
            }
        }
    }
}
