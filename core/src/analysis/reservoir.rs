//! The Reservoir-sampling Bloom filter's analysis (Dutta, Bhattacharjee
//! and Narang, *Towards "Intelligent Compression" in Streams: A Biased
//! Reservoir Sampling based Bloom Filter Approach*, EDBT 2012, §5),
//! corrected where the printed forms are wrong.
//!
//! # The model
//!
//! One sub-filter of `s` bits. Each insertion clears a uniformly random
//! position (it may already be 0), then sets the item's bit (Theorem 5.1,
//! eqs. 5.19–5.21). A given bit, one with probability `q`, is then one
//! after an insertion of a fresh item with probability
//! `q·(1 − (2 − 1/c)/s) + 1/s`, where `c` is the number of positions the
//! clear draws from: `c = s` when it draws from the whole sub-filter
//! ([`Reset::Uniform`](crate::reservoir::Reset::Uniform), the paper), the
//! bits of one sector when it draws in the item's own block
//! ([`Reset::OwnBlock`](crate::reservoir::Reset::OwnBlock): a bit is
//! cleared with the same marginal `1/s`, but never by the item's own
//! clear-then-set in another block). The fixed point is `c/(2c − 1)`,
//! whatever the insertion rate ([`ones_fixed_point`]): about half the
//! bits are ones. Once the forced insertions run (`s/i ≤ p*`) the
//! inserted items are the ones reported new, whose sets land on zeros
//! more often, and the ones settle a little higher ([`forced_ones`]):
//! the long-run false-positive rate for fresh items is 0.161 for `k = 3`
//! and near `2^−k` for larger `k` ([`long_run_fpr`]) — **not** the
//! threshold rate `FPR_t` that eq. 5.27 picks `k` by.
//!
//! [`fpr_distinct`] is that recursion in closed form for a stream of
//! distinct items with the paper's insertion probability `s/i` and no
//! resets during the first `s` items (the analysis's variant); [`Model`]
//! runs it step by step with the forced insertions after `s/i ≤ p*` and
//! optional fill-phase resets, as the filter does. Both ignore the
//! correlation of the `k` sub-filters through a shared block (the filter
//! puts an item's `k` bits in one cache line): it matters while blocks
//! fill unevenly and fades once every sector sits at its fixed point.
//!
//! # The paper's printed forms
//!
//! Checked against this recursion and simulation (the implementers' digest
//! `NOTES-reservoir.md` §3 gives the details):
//!
//! - **Eq. 5.7** ([`printed_fpr`]) adds the `k`-th powers of two disjoint
//!   per-bit events instead of raising their sum to the `k`-th power, uses
//!   the first-order `1 − ks/m` (negative once `m < ks`), and its factor
//!   `((U−1)/U)^m` makes it the joint `P(new ∧ FP)`: that factor alone is
//!   why the paper's FPR tends to 0.
//! - **Eq. 5.12**'s `γ ≤ 1` is false (`γ ≈ s`), so the FN bound
//!   **eq. 5.14** ([`printed_fnr_bound`]) loses a factor of `s`: with
//!   `γ ≤ s` it reads `k·s·(m − s)/(U·m)` ([`fnr_bound`]), and eq. 5.17's
//!   `O(k/U)` ([`printed_fnr_order`]) becomes `O(k·s/U)`. Both bound only
//!   the joint probability of a repeat whose bits were cleared since its
//!   inserted occurrence; they omit the main source of false negatives,
//!   occurrences that were never inserted.
//! - **Eq. 5.22**'s conclusion that the number of ones is constant does
//!   not follow: it drifts to `s²/(2s − 1)`, as above.

use crate::{Error, Result};

/// `k` from the threshold false-positive rate, eq. 5.27:
/// `k = ln(FPR_t) / ln(1 − 1/e)` (real-valued). An error unless
/// `threshold_fpr` is in `(0, 1)`.
///
/// ```
/// use streambloom::analysis::reservoir::k_for_threshold;
/// assert!((k_for_threshold(0.1)? - 5.020).abs() < 1e-3);
/// assert!(k_for_threshold(1.0).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn k_for_threshold(threshold_fpr: f64) -> Result<f64> {
    // NaN fails this test too.
    if !(threshold_fpr > 0.0 && threshold_fpr < 1.0) {
        return Err(Error::param("threshold_fpr", threshold_fpr, "in (0, 1)"));
    }
    Ok(libm::log(threshold_fpr) / libm::log1p(-libm::exp(-1.0)))
}

/// The `k` the paper runs with (§5.4, line 360): the mean of eq. 5.27's
/// `k` and 1, rounded to the nearest integer (3 for `FPR_t = 0.1`).
///
/// ```
/// use streambloom::analysis::reservoir::planned_k;
/// assert_eq!(planned_k(0.1)?, 3);
/// assert_eq!(planned_k(0.05)?, 4);
/// assert_eq!(planned_k(0.01)?, 6);
/// assert_eq!(planned_k(0.001)?, 8);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn planned_k(threshold_fpr: f64) -> Result<u32> {
    let k = libm::round((1.0 + k_for_threshold(threshold_fpr)?) / 2.0);
    Ok((k.min(f64::from(u32::MAX)) as u32).max(1))
}

/// The fraction of ones a sub-filter settles at **before** the forced
/// insertions start (every insertion an independent draw): `c/(2c − 1)`
/// for a clear drawn from `c` positions (see the [module docs](self)); 1
/// for `c ≤ 1`.
///
/// ```
/// use streambloom::analysis::reservoir::ones_fixed_point;
/// assert!((ones_fixed_point(1000.0) - 0.50025).abs() < 1e-5);
/// ```
pub fn ones_fixed_point(c: f64) -> f64 {
    if c <= 1.0 { 1.0 } else { c / (2.0 * c - 1.0) }
}

/// The fraction of ones a sub-filter settles at on a stream of fresh items
/// once the forced insertions run and `s/i` has gone to 0: the root in
/// `(0, 1)` of `Σ_{j=1..k} q^j − (1/c)·Σ_{j=1..k−1} q^j = 1`.
///
/// Forced insertions take only items with a zero among their bits, so
/// their sets land on zeros more often than uniform ones would, and the
/// ones settle above [`ones_fixed_point`]: `q + q² + q³ = 1` gives 0.5437
/// for `k = 3` (against 1/2). With `k = 1` (or `c ≤ 1`) nothing an item
/// on a set bit does is ever forced, and the ones tend to 1.
///
/// ```
/// use streambloom::analysis::reservoir::forced_ones;
/// assert!((forced_ones(1e12, 2) - 0.6180).abs() < 1e-4); // the golden ratio's inverse
/// assert!((forced_ones(1e12, 3) - 0.5437).abs() < 1e-4);
/// assert_eq!(forced_ones(1000.0, 1), 1.0);
/// ```
pub fn forced_ones(c: f64, k: u32) -> f64 {
    if k < 2 || c <= 1.0 {
        return 1.0;
    }
    // h(q) = Σ_{1..k} q^j − Σ_{1..k−1} q^j / c − 1 rises from −1 at 0 to
    // (k − 1)(1 − 1/c) > 0 at 1: bisect.
    let h = |q: f64| {
        let (mut sum, mut power) = (0.0, 1.0);
        for _ in 1..k {
            power *= q;
            sum += power;
        }
        sum * (1.0 - 1.0 / c) + power * q - 1.0
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // 64 halvings: below the spacing of doubles near the root.
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if h(mid) < 0.0 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// The false-positive rate a fresh item meets once the filter has
/// settled in the forced phase, `forced_ones(c, k)^k` ([`forced_ones`]):
/// 0.161 for `k = 3`, 0.073 for `k = 4`, near `2^−k` for larger `k`.
/// Where the stream repeats, fewer items are forced and fewer bits set,
/// so this bounds the settled rate of fresh items from above.
///
/// ```
/// use streambloom::analysis::reservoir::long_run_fpr;
/// assert!((long_run_fpr(1e12, 3) - 0.1607).abs() < 1e-3);
/// assert!((long_run_fpr(1e12, 4) - 0.0725).abs() < 1e-3);
/// ```
pub fn long_run_fpr(c: f64, k: u32) -> f64 {
    libm::pow(forced_ones(c, k), f64::from(k))
}

/// The corrected false-positive rate of the analysis's variant after `m`
/// distinct items (§5.1 corrected; digest §3): no resets while `i ≤ s`, so
/// `q_s = 1 − (1 − 1/s)^s`; then `q_i = q_{i−1}·(1 − (2s − 1)/(s·i)) + 1/i`
/// (insertion probability `s/i`, the clear drawn from all `s` positions),
/// whose distance to the fixed point `q* = s/(2s − 1)` shrinks by
/// `Π_{i=s+1..m} (1 − a/i) = Γ(m+1−a)·Γ(s+1) / (Γ(s+1−a)·Γ(m+1))` with
/// `a = (2s − 1)/s`. The rate is `q_m^k`; 0 for `s` or `k` of 0.
///
/// ```
/// use streambloom::analysis::reservoir::fpr_distinct;
/// // The digest's check: s = 200, k = 3 (simulated 0.1509 at m = 400).
/// assert!((fpr_distinct(200, 3, 400) - 0.1525).abs() < 5e-4);
/// assert!((fpr_distinct(200, 3, 4000) - 0.1262).abs() < 5e-4);
/// ```
pub fn fpr_distinct(s: u64, k: u32, m: u64) -> f64 {
    if s == 0 || k == 0 {
        return 0.0;
    }
    let sf = s as f64;
    let fill = |n: u64| -libm::expm1(n as f64 * libm::log1p(-1.0 / sf));
    let q = if m <= s {
        fill(m)
    } else {
        let a = (2.0 * sf - 1.0) / sf;
        let fixed = 1.0 / a;
        let (mf, lg) = (m as f64, libm::lgamma);
        let shrink = libm::exp(lg(mf + 1.0 - a) + lg(sf + 1.0) - lg(sf + 1.0 - a) - lg(mf + 1.0));
        fixed + (fill(s) - fixed) * shrink
    };
    libm::pow(q, f64::from(k))
}

/// The filter's process on a stream of distinct items, step by step: the
/// fraction of ones `q` of a sub-filter and the false-positive rate `q^k`
/// of each item, with the forced insertions once `s/i ≤ p*` (an item
/// reported new, probability `1 − q^k`, is always inserted; a false
/// positive still goes through the `s/i` draw) and optional resets during
/// the first `s` items. One step per item: [`ones_after`](Model::ones_after),
/// [`fpr_after`](Model::fpr_after) and [`mean_fpr`](Model::mean_fpr) take
/// time linear in the stream position they are asked for.
///
/// Per bit, with the item's bits taken as independent: a zero bit is set
/// by an item landing on it (probability `1/s`), which is then reported
/// new and inserted with probability `π₀`; a set bit is lost when an
/// insertion (probability `P_ins`) clears it (`1/c`), unless the inserting
/// item lands on it (probability `1/s`, inserted with `π₁`, the item's
/// other `k − 1` bits deciding whether it is reported new). So
/// `q' = q + ((1 − q)·π₀ − q·(P_ins − π₁/c))/s`; before the forced phase
/// every `π` is `s/i` and this is the analysis's
/// `q' = q·(1 − p(2 − 1/c)/s) + p/s`. Built from a filter's parameters by
/// [`ReservoirBloom::model`](crate::reservoir::ReservoirBloom::model).
///
/// ```
/// use streambloom::analysis::reservoir::{fpr_distinct, Model};
/// // The analysis's variant: the same as the closed form.
/// let m = Model { s: 200, k: 3, clear_from: 200, forced_from: u64::MAX, reset_during_fill: false };
/// assert!((m.fpr_after(1000) - fpr_distinct(200, 3, 1000)).abs() < 1e-9);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Bits of a sub-filter.
    pub s: u64,
    /// Sub-filters (bits an item).
    pub k: u32,
    /// Positions a clear draws from (`s`, or a sector's bits: see the
    /// [module docs](self)).
    pub clear_from: u64,
    /// The first stream position `i` with `s/i ≤ p*`.
    pub forced_from: u64,
    /// Whether the first `s` insertions clear a position too.
    pub reset_during_fill: bool,
}

impl Model {
    /// Calls `each(i, fpr)` for items `i = 1..=m` with the false-positive
    /// rate item `i` meets; returns the fraction of ones after item `m`.
    fn run(&self, m: u64, mut each: impl FnMut(u64, f64)) -> f64 {
        if self.s == 0 {
            return 0.0;
        }
        let (s, k) = (self.s as f64, i32::try_from(self.k).unwrap_or(i32::MAX));
        let c = self.clear_from.max(1) as f64;
        let mut q = 0.0f64;
        for i in 1..=m {
            let below = libm::pow(q, f64::from(k - 1));
            let fpr = below * q;
            each(i, fpr);
            if i <= self.s && !self.reset_during_fill {
                q += (1.0 - q) / s;
                continue;
            }
            let reservoir = (s / i as f64).min(1.0);
            // Insertion probability of an item reported new (`new`) and
            // of one reported a duplicate (`dup`).
            let (new, dup) = if i <= self.s {
                (1.0, 1.0)
            } else if i >= self.forced_from {
                (1.0, reservoir)
            } else {
                (reservoir, reservoir)
            };
            let inserted = (1.0 - fpr) * new + fpr * dup;
            // An item on a set bit is a duplicate when its other k − 1
            // bits are set; one on a zero bit is new.
            let on_one = below * dup + (1.0 - below) * new;
            q += ((1.0 - q) * new - q * (inserted - on_one / c)) / s;
        }
        q
    }

    /// The fraction of ones of a sub-filter after `m` distinct items.
    ///
    /// ```
    /// use streambloom::analysis::reservoir::{forced_ones, ones_fixed_point, Model};
    /// let m = Model { s: 1000, k: 3, clear_from: 1000, forced_from: 33_334, reset_during_fill: true };
    /// assert!((m.ones_after(30_000) - ones_fixed_point(1000.0)).abs() < 1e-3);
    /// assert!((m.ones_after(100_000) - forced_ones(1000.0, 3)).abs() < 1e-3);
    /// ```
    pub fn ones_after(&self, m: u64) -> f64 {
        self.run(m, |_, _| ())
    }

    /// The false-positive rate item `m + 1` meets: `ones_after(m)^k`.
    ///
    /// ```
    /// use streambloom::analysis::reservoir::Model;
    /// let m = Model { s: 1000, k: 3, clear_from: 1000, forced_from: 33_334, reset_during_fill: true };
    /// assert!((m.fpr_after(0)) == 0.0);
    /// ```
    pub fn fpr_after(&self, m: u64) -> f64 {
        libm::pow(self.ones_after(m), f64::from(self.k))
    }

    /// The mean false-positive rate of items `from + 1 ..= to` (the rate a
    /// measurement over those items estimates); 0 for an empty range.
    ///
    /// ```
    /// use streambloom::analysis::reservoir::Model;
    /// let m = Model { s: 1000, k: 3, clear_from: 1000, forced_from: 33_334, reset_during_fill: true };
    /// let late = m.mean_fpr(50_000, 60_000);
    /// assert!((late - m.fpr_after(55_000)).abs() < 1e-3);
    /// ```
    pub fn mean_fpr(&self, from: u64, to: u64) -> f64 {
        let mut sum = 0.0;
        self.run(to, |i, fpr| {
            if i > from {
                sum += fpr;
            }
        });
        if to > from {
            sum / (to - from) as f64
        } else {
            0.0
        }
    }
}

/// Eq. 5.7 **as printed**, `((U−1)/U)^m · [1 − ks/m + ((1 − 1/e)·s/m)^k]`:
/// wrong (see the [module docs](self)), kept only to print beside the
/// corrected rate. It goes negative once `m < ks`.
///
/// ```
/// use streambloom::analysis::reservoir::printed_fpr;
/// assert!(printed_fpr(200, 3, 400, 1e9) < 0.0); // the digest's -0.47
/// ```
pub fn printed_fpr(s: u64, k: u32, m: u64, u: f64) -> f64 {
    let (s, kf, m) = (s as f64, f64::from(k), m as f64);
    let unique = libm::pow((u - 1.0) / u, m);
    let survive = libm::pow((1.0 - libm::exp(-1.0)) * s / m, kf);
    unique * (1.0 - kf * s / m + survive)
}

/// Eq. 5.14 **as printed**, `P_FNR ≤ k(m − s)/(U·m)`: short of a factor of
/// `s` (eq. 5.12's `γ ≤ 1` is false). Kept to print beside [`fnr_bound`].
///
/// ```
/// use streambloom::analysis::reservoir::{fnr_bound, printed_fnr_bound};
/// assert_eq!(fnr_bound(100, 3, 1000, 1e6), 100.0 * printed_fnr_bound(100, 3, 1000, 1e6));
/// ```
pub fn printed_fnr_bound(s: u64, k: u32, m: u64, u: f64) -> f64 {
    f64::from(k) * m.saturating_sub(s) as f64 / (u * m.max(1) as f64)
}

/// Eq. 5.17 **as printed**, `P_FNR = O(k/U)`: refuted by simulation (the
/// digest's `s = 50, k = 2, U = 400`: a joint FN probability of 0.26 to
/// 0.72 against `k/U = 0.005`).
///
/// ```
/// use streambloom::analysis::reservoir::printed_fnr_order;
/// assert_eq!(printed_fnr_order(2, 400.0), 0.005);
/// ```
pub fn printed_fnr_order(k: u32, u: f64) -> f64 {
    f64::from(k) / u
}

/// Eq. 5.14 corrected (`γ ≤ s`), capped at 1: `k·s·(m − s)/(U·m)` bounds
/// the joint probability that item `m + 1` repeats an item whose last
/// occurrence was **inserted** and has lost a bit since (case 1 of §5.2).
/// It is not the false-negative rate: repeats of occurrences that were
/// never inserted (case 2) are not in it.
///
/// ```
/// use streambloom::analysis::reservoir::fnr_bound;
/// assert!((fnr_bound(1000, 3, 100_000, 1e6) - 0.00297).abs() < 1e-5);
/// assert_eq!(fnr_bound(1000, 3, 500, 1e6), 0.0); // nothing is cleared while m ≤ s
/// ```
pub fn fnr_bound(s: u64, k: u32, m: u64, u: f64) -> f64 {
    (s as f64 * printed_fnr_bound(s, k, m, u)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form equals the recursion it solves, before, at and
    /// long after the fill phase.
    #[test]
    #[cfg_attr(miri, ignore = "10^5 model steps: too slow under Miri")]
    fn closed_form_matches_the_recursion() {
        for (s, k) in [(7u64, 2u32), (200, 3), (1000, 5)] {
            let model = Model {
                s,
                k,
                clear_from: s,
                forced_from: u64::MAX,
                reset_during_fill: false,
            };
            for m in [1, s / 2, s, s + 1, 3 * s, 40 * s] {
                let (a, b) = (fpr_distinct(s, k, m), model.fpr_after(m));
                assert!((a - b).abs() < 1e-9, "s {s} k {k} m {m}: {a} vs {b}");
            }
        }
    }

    /// The exact check of the digest: with `p_i = s/i`, a bit set at item
    /// `l > s` and never cleared since is, by item `m`, one with total
    /// probability `p_l·(1/s)·Π (1 − p_i/s) = 1/m` (s = 7, l = 11, m = 40).
    #[test]
    fn transition_product_is_one_over_m() {
        let (s, l, m) = (7.0f64, 11u32, 40u32);
        let mut p = (s / f64::from(l)) / s;
        for i in l + 1..=m {
            p *= 1.0 - (s / f64::from(i)) / s;
        }
        assert!((p - 1.0 / f64::from(m)).abs() < 1e-12);
    }

    /// Without forced insertions the bits settle at `c/(2c − 1)`, with
    /// them at the root of [`forced_ones`].
    #[test]
    #[cfg_attr(miri, ignore = "4·10^5 model steps: too slow under Miri")]
    fn fixed_point_whatever_the_insertion_rate() {
        for forced_from in [u64::MAX, 2000] {
            let m = Model {
                s: 100,
                k: 3,
                clear_from: 100,
                forced_from,
                reset_during_fill: true,
            };
            let settled = if forced_from == u64::MAX {
                ones_fixed_point(100.0)
            } else {
                forced_ones(100.0, 3)
            };
            assert!((m.ones_after(200_000) - settled).abs() < 2e-3);
        }
        assert_eq!(ones_fixed_point(1.0), 1.0);
    }

    #[test]
    fn planned_k_follows_the_papers_table() {
        // The digest's table: eq. 5.27, then the mean with 1.
        for (fpr, k527, k) in [(0.1, 5.020, 3), (0.05, 6.531, 4), (0.01, 10.040, 6)] {
            assert!((k_for_threshold(fpr).unwrap() - k527).abs() < 1e-3);
            assert_eq!(planned_k(fpr).unwrap(), k);
        }
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(k_for_threshold(bad).is_err() && planned_k(bad).is_err());
        }
        assert_eq!(planned_k(0.999).unwrap(), 1);
    }
}
