//! The error formulas of the Spectral Bloom filter paper, for choosing
//! parameters and for holding measurements against theory.

/// `γ = n·k/m`: distinct items times counters per item over counters (§2.1).
///
/// ```
/// assert_eq!(streambloom::analysis::spectral::gamma(1000, 5, 5000), 1.0);
/// ```
pub fn gamma(n: u64, k: u32, m: u64) -> f64 {
    n as f64 * f64::from(k) / m as f64
}

/// The Bloom error `E_b ≈ (1 − e^{−γ})^k` (§2.1): the probability that all
/// `k` counters of an item are shared with others, i.e. that Minimum
/// Selection over-estimates it (Claim 1).
///
/// ```
/// use streambloom::analysis::spectral::bloom_error;
/// let e = bloom_error(5, 0.7);
/// assert!((e - 0.032).abs() < 0.001); // Table 1, γ = 0.7
/// ```
pub fn bloom_error(k: u32, gamma: f64) -> f64 {
    libm::pow(1.0 - libm::exp(-gamma), f64::from(k))
}

/// Lemma 2's bound on the probability that the relative error
/// `(m_i − f_i)/f_i` of the `i`-th most frequent of `n` distinct
/// Zipf(`z`)-distributed items exceeds `t > 0`, given a Bloom error:
/// `k·(i / ((n − k)·t^{1/z}))^k`, capped at 1. Returns 1 when the bound says
/// nothing (`n ≤ k`, `t ≤ 0` or `z ≤ 0`).
///
/// ```
/// use streambloom::analysis::spectral::zipf_relative_error_bound;
/// // §2.3's example: n = 1000, k = 5, z = 1, T = 0.5 gives 5·(i/497.5)^5.
/// let b = zipf_relative_error_bound(100, 1000, 5, 1.0, 0.5);
/// assert!((b - 5.0 * (100.0f64 / 497.5).powi(5)).abs() < 1e-12);
/// assert_eq!(zipf_relative_error_bound(400, 1000, 5, 1.0, 0.5), 1.0);
/// ```
pub fn zipf_relative_error_bound(i: u64, n: u64, k: u32, z: f64, t: f64) -> f64 {
    if n <= u64::from(k) || t <= 0.0 || z <= 0.0 {
        return 1.0;
    }
    let base = i as f64 / ((n - u64::from(k)) as f64 * libm::pow(t, 1.0 / z));
    (f64::from(k) * libm::pow(base, f64::from(k))).min(1.0)
}

/// The expected error rate of Recurring Minimum from Table 1:
/// `E_RM = P(R_x)·P(E_x|R_x) + (1 − P(R_x))·E_b^s`, where the secondary
/// filter of `m_s` counters holds the `n·(1 − P(R_x))` items with a single
/// minimum, so `γ_s = n(1 − P(R_x))k/m_s` and `E_b^s = (1 − e^{−γ_s})^k`.
///
/// ```
/// use streambloom::analysis::spectral::recurring_minimum_error;
/// // Table 1, γ = 0.7: P(R) = 0.812, P(E|R) = 0.002, n = 1000, k = 5,
/// // m_s = m/2 with m = nk/γ.
/// let e = recurring_minimum_error(0.812, 0.002, 1000, 5, 5000.0 / 0.7 / 2.0);
/// assert!((e - 0.0017).abs() < 0.0002);
/// ```
pub fn recurring_minimum_error(
    p_recurring: f64,
    p_error_given_recurring: f64,
    n: u64,
    k: u32,
    secondary_counters: f64,
) -> f64 {
    let gamma_s = n as f64 * (1.0 - p_recurring) * f64::from(k) / secondary_counters;
    p_recurring * p_error_given_recurring + (1.0 - p_recurring) * bloom_error(k, gamma_s)
}
