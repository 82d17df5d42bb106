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
//!   **eq. 5.14** ([`printed_fnr_bound`]) loses a factor of `s`, and a
//!   factor of `ln(m/s)` more for the clears that accumulate since an
//!   early occurrence: [`fnr_bound`] is the bound rederived; eq. 5.17's
//!   `O(k/U)` ([`printed_fnr_order`]) becomes `O(s·ln(m/s)/U)`. Both bound
//!   only the joint probability of a repeat whose bits were cleared since
//!   its inserted occurrence; they omit the main source of false
//!   negatives, occurrences that were never inserted.
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
/// on a set bit does is ever forced, and the ones tend to 1. The root
/// falls towards `c/(2c − 1)` as `k` grows, and is found for every `k`
/// (the sums in closed form); a NaN `c` gives NaN.
///
/// ```
/// use streambloom::analysis::reservoir::forced_ones;
/// assert!((forced_ones(1e12, 2) - 0.6180).abs() < 1e-4); // the golden ratio's inverse
/// assert!((forced_ones(1e12, 3) - 0.5437).abs() < 1e-4);
/// assert_eq!(forced_ones(1000.0, 1), 1.0);
/// ```
pub fn forced_ones(c: f64, k: u32) -> f64 {
    if c.is_nan() {
        return f64::NAN;
    }
    if k < 2 || c <= 1.0 {
        return 1.0;
    }
    // h(q) = Σ_{1..k} q^j − Σ_{1..k−1} q^j / c − 1 rises from −1 at 0 to
    // (k − 1)(1 − 1/c) > 0 at 1: bisect.
    // Σ_{1..k−1} q^j = q·(1 − q^{k−1})/(1 − q): O(1) whatever `k`.
    let h = |q: f64| {
        let below = libm::pow(q, f64::from(k - 1));
        let sum = q * (1.0 - below) / (1.0 - q);
        sum * (1.0 - 1.0 / c) + below * q - 1.0
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
/// so this bounds the settled rate of fresh items from above, as long as
/// the sub-filters of an item stay independent: a filter whose clears
/// land outside the item's block
/// ([`Reset::Uniform`](crate::reservoir::Reset::Uniform)) correlates them
/// and exceeds it (see
/// [`ReservoirParams::long_run_fpr`](crate::reservoir::ReservoirParams::long_run_fpr)).
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
    if s == 0 || k == 0 || m == 0 {
        return 0.0;
    }
    let sf = s as f64;
    let fill = |n: u64| -libm::expm1(n as f64 * libm::log1p(-1.0 / sf));
    let q = if m <= s {
        fill(m)
    } else {
        let a = (2.0 * sf - 1.0) / sf;
        let fixed = 1.0 / a;
        // Γ(m+1−a)·Γ(s+1) / (Γ(s+1−a)·Γ(m+1)) = exp(R(s+1−a) − R(m+1−a)).
        let shrink =
            libm::exp(ln_gamma_ratio(sf + 1.0 - a, a) - ln_gamma_ratio(m as f64 + 1.0 - a, a));
        fixed + (fill(s) - fixed) * shrink
    };
    libm::pow(q, f64::from(k))
}

/// `ln Γ(z + a) − ln Γ(z)` for `z > 0`: from `lgamma` for small `z`, and
/// from Stirling's series for large `z`, where the difference of two
/// `lgamma`s of about `z·ln z` would cancel (at `z = 2^53`, `lgamma(z)`
/// is about `3.2·10^17`, whose spacing of floats is 64, while the
/// difference for `a = 1` is `ln z`, about 37). The series' first omitted term is below `a⁴/z³`: under 10⁻⁹
/// relative from `z = 1000` on, for `a ≤ 2`.
fn ln_gamma_ratio(z: f64, a: f64) -> f64 {
    if z < 1000.0 {
        return libm::lgamma(z + a) - libm::lgamma(z);
    }
    a * libm::log(z) + (z + a - 0.5) * libm::log1p(a / z) - a - a / (12.0 * z * (z + a))
}

/// The filter's process on a stream of distinct items: the fraction of
/// ones `q` of a sub-filter and the false-positive rate `q^k` of each item,
/// with the forced insertions once `s/i ≤ p*` (an item reported new,
/// probability `1 − q^k`, is always inserted; a false positive still goes
/// through the `s/i` draw) and optional resets during the first `s` items.
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
/// # Cost and accuracy
///
/// The first 4 096 items are stepped one by one, exactly. Beyond, the
/// recursion runs in stretches of at most `i/4096` items, over which `s/i`
/// is held at its value in the stretch's middle (it moves by at most
/// 0.025 %), and each stretch is solved in closed form about its fixed
/// point: the step is linear in `q` outside the forced phase, so the
/// closed form is exact there, and in the forced phase a stretch is cut
/// where `q` would move by more than 10⁻⁵, which bounds the error of the
/// linearization. Asking for item `m` so takes `O(log m)` stretches
/// (`4096·ln(m/4096)` outside the forced phase, about 148 000 for
/// `m = 2^64`, plus the forced phase's cuts), not `m` steps, and agrees with the step-by-step
/// recursion within 10⁻⁶ (tested up to `m = 10^6`).
///
/// `s = 0` or `k = 0` (no bits) gives no ones and a rate of 0, as
/// [`fpr_distinct`].
///
/// ```
/// use streambloom::analysis::reservoir::{fpr_distinct, Model};
/// // The analysis's variant: the same as the closed form.
/// let m = Model { s: 200, k: 3, clear_from: 200, forced_from: u64::MAX, reset_during_fill: false };
/// assert!((m.fpr_after(1000) - fpr_distinct(200, 3, 1000)).abs() < 1e-9);
/// // A stream of 2^64 items is as quick to ask about.
/// let forced = Model { forced_from: 6667, reset_during_fill: true, ..m };
/// assert!((forced.fpr_after(u64::MAX) - forced.fpr_after(1 << 40)).abs() < 1e-6);
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

/// Items stepped one by one before the stretches start, and the inverse
/// of the largest stretch's share of its position (see [`Model`]).
const EXACT_ITEMS: u64 = 4096;

/// The most a forced-phase stretch may move the fraction of ones.
const MOVE: f64 = 1e-5;

/// One phase's step `q' = q + Δ(q)`, with
/// `s·Δ(q) = a − b·q + d·(q^{k+1} − q^k/c)` (the [`Model`]'s recursion with
/// its insertion probabilities fixed: `d ≠ 0` in the forced phase only).
#[derive(Clone, Copy)]
struct Step {
    a: f64,
    b: f64,
    d: f64,
    c: f64,
    s: f64,
    k: i32,
}

impl Step {
    /// `Δ(q)` and `Δ'(q)`.
    fn delta(&self, q: f64) -> (f64, f64) {
        let below = libm::pow(q, f64::from(self.k - 1));
        let power = below * q;
        let value = self.a - self.b * q + self.d * (power * q - power / self.c);
        let slope =
            -self.b + self.d * (f64::from(self.k + 1) * power - f64::from(self.k) * below / self.c);
        (value / self.s, slope / self.s)
    }

    /// How many of the next `h ≥ 1` items one stretch from `q` may run.
    /// Where the step contracts (`−2 < Δ' < 0`), all `h` if it is linear
    /// or `q` is within [`MOVE`] of its fixed point, else as many as keep
    /// `q`'s move within [`MOVE`] (one at a time where the contraction
    /// alternates). Where it does not (a flat or rising step), Euler steps
    /// of at most `MOVE/2`; one exact step where it would overshoot.
    fn span(&self, q: f64, h: u64) -> u64 {
        let (value, slope) = self.delta(q);
        if h == 1 || value == 0.0 {
            return h;
        }
        if slope < 0.0 && slope > -2.0 {
            let offset = value / slope;
            if self.d == 0.0 || offset.abs() <= MOVE {
                return h;
            }
            if slope <= -1.0 {
                return 1;
            }
            // |offset|·(1 − r^h) ≤ MOVE, r = 1 + Δ'.
            let most = libm::log1p(-MOVE / offset.abs()) / libm::log1p(slope);
            return h.min(most as u64).max(1);
        }
        if slope >= 0.0 {
            return h.min((MOVE / (2.0 * value.abs())) as u64).max(1);
        }
        1
    }

    /// Runs `h` items from `q` (`h` no more than [`span`](Self::span)
    /// allows); returns the state after them and the sum of `q^k` over the
    /// states before each.
    fn advance(&self, q: f64, h: u64) -> (f64, f64) {
        let fpr = |q: f64| libm::pow(q, f64::from(self.k));
        let (value, slope) = self.delta(q);
        let hf = h as f64;
        if h == 1 {
            return ((q + value).clamp(0.0, 1.0), fpr(q));
        }
        if !(slope < 0.0 && slope > -2.0) {
            // Euler over a flat stretch, or a state at rest.
            let end = (q + hf * value).clamp(0.0, 1.0);
            return (end, hf * 0.5 * (fpr(q) + fpr(end)));
        }
        // Contracting to `fixed`: q_j = fixed + r^j·(q − fixed).
        let offset = value / slope; // q − fixed
        let fixed = q - offset;
        let decay = if slope > -1.0 {
            libm::expm1(hf * libm::log1p(slope)) // r^h − 1
        } else {
            libm::pow(1.0 + slope, hf) - 1.0
        };
        let end = (fixed + offset * (1.0 + decay)).clamp(0.0, 1.0);
        // Σ_{j<h} (q_j − q) = offset·((r^h − 1)/(r − 1) − h); q^k taken
        // as linear in q between the ends.
        let travel = offset * (decay / slope - hf);
        let (from, to) = (fpr(q), fpr(end));
        let sum = if end == q {
            hf * from
        } else {
            hf * from + (to - from) / (end - q) * travel
        };
        (end, sum)
    }
}

impl Model {
    /// Calls `each(items, fpr_sum)` over consecutive runs of items `1..=m`
    /// with the sum of the false-positive rates they meet, never running
    /// across item `split` and `split + 1`; returns the fraction of ones
    /// after item `m`.
    fn run(&self, m: u64, split: u64, mut each: impl FnMut(u64, f64)) -> f64 {
        if self.s == 0 || self.k == 0 {
            each(m, 0.0);
            return 0.0;
        }
        let (s, k) = (self.s as f64, i32::try_from(self.k).unwrap_or(i32::MAX));
        let c = self.clear_from.max(1) as f64;
        let mut q = 0.0f64;
        let mut done = 0u64;
        while done < m {
            let i = done + 1;
            // The phase of item i, and the last item of it (and of its
            // stretch) before `split`/`m`.
            let (mut last, fill_only) = if i <= self.s {
                (self.s, !self.reset_during_fill)
            } else if i < self.forced_from {
                (self.forced_from - 1, false)
            } else {
                (u64::MAX, false)
            };
            if i <= split {
                last = last.min(split);
            }
            last = last
                .min(m)
                .min(done.saturating_add((done / EXACT_ITEMS).max(1)));
            // Hold `s/i` at its value in the middle of the items run: the
            // span is decided with the whole stretch's, then the step is
            // rebuilt for the items it runs.
            let make = |h: u64| {
                let middle = done as f64 + 0.5 * (h as f64 + 1.0);
                let reservoir = if i <= self.s {
                    1.0
                } else {
                    (s / middle).min(1.0)
                };
                if fill_only {
                    Step {
                        a: 1.0,
                        b: 1.0,
                        d: 0.0,
                        c,
                        s,
                        k,
                    }
                } else {
                    let (new, dup) = if i >= self.forced_from && i > self.s {
                        (1.0, reservoir)
                    } else {
                        (reservoir, reservoir)
                    };
                    Step {
                        a: new,
                        b: new * (2.0 - 1.0 / c),
                        d: new - dup,
                        c,
                        s,
                        k,
                    }
                }
            };
            let ran = make(last - done).span(q, last - done);
            let (end, sum) = make(ran).advance(q, ran);
            each(ran, sum);
            q = end;
            done += ran;
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
        self.run(m, m, |_, _| ())
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
        let (mut sum, mut seen) = (0.0, 0u64);
        self.run(to, from, |items, fpr| {
            if seen >= from {
                sum += fpr;
            }
            seen += items;
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
/// about `s·ln(m/s)` (eq. 5.12's `γ ≤ 1` is false). Kept to print beside
/// [`fnr_bound`].
///
/// ```
/// use streambloom::analysis::reservoir::{fnr_bound, printed_fnr_bound};
/// assert!(fnr_bound(100, 3, 1000, 1e6) > 100.0 * printed_fnr_bound(100, 3, 1000, 1e6));
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

/// A bound on case 1 of §5.2, the part eq. 5.14 set out to bound: the
/// joint probability that item `m + 1` repeats an item whose last
/// occurrence was **inserted** and has lost a bit since, for the
/// analysis's variant (insertion with probability `s/i`, no forced phase,
/// no resets while `i ≤ s`, clears drawn from all `s` positions) on keys
/// drawn uniformly from `U`. Capped at 1; 0 while `m ≤ s` (nothing has
/// been cleared); 1 (no bound) for `U ≤ 0` or NaN. It is not the false-negative rate: repeats of
/// occurrences that were never inserted (case 2) are not in it, and in
/// the forced phase (`s/i ≤ p*`) every item reported new is inserted, so
/// far more bits are cleared than the variant clears.
///
/// The last occurrence is at position `j` with probability at most `1/U`,
/// inserted with probability `min(1, s/j)`, and followed by
/// `N_j = Σ_{i=max(j,s)+1..m} s/i ≤ s·ln(m/max(j, s))` insertions on
/// average, each clearing a given bit with probability `1/s`; so a bit of
/// each of the `k` sub-filters survives with probability at least
/// `(1 − 1/s)^{k·N_j}` (Jensen). Summing, with `L = ln(m/s)` and
/// `α = −k·s·ln(1 − 1/s)` (about `k`):
/// `(s/U)·(L + (1 − e^{−αL})·(1 − 1/α))`. The printed eq. 5.14,
/// `k(m − s)/(U·m)` ([`printed_fnr_bound`]), misses a factor of about
/// `s·ln(m/s)` (eq. 5.12's `γ ≤ 1` is false, and the clears since
/// position `j` grow like `ln(m/j)`).
///
/// ```
/// use streambloom::analysis::reservoir::fnr_bound;
/// // s = 1000, k = 3, m = 100s, U = 10^6: L = ln 100.
/// let l = 100f64.ln();
/// let alpha = -3.0 * 1000.0 * (1.0f64 - 1e-3).ln();
/// let expected = 1e-3 * (l + (1.0 - (-alpha * l).exp()) * (1.0 - 1.0 / alpha));
/// assert!((fnr_bound(1000, 3, 100_000, 1e6) - expected).abs() < 1e-12);
/// assert_eq!(fnr_bound(1000, 3, 500, 1e6), 0.0); // nothing is cleared while m ≤ s
/// assert_eq!(fnr_bound(1000, 3, 100_000, -1.0), 1.0);
/// ```
pub fn fnr_bound(s: u64, k: u32, m: u64, u: f64) -> f64 {
    if m <= s || k == 0 {
        return 0.0;
    }
    if u.is_nan() || u <= 0.0 {
        // No key space: the bound says nothing.
        return 1.0;
    }
    let (sf, l) = (s as f64, libm::log(m as f64 / s as f64));
    let alpha = if s == 1 {
        f64::INFINITY
    } else {
        -f64::from(k) * sf * libm::log1p(-1.0 / sf)
    };
    let bound = sf / u * (l - libm::expm1(-alpha * l) * (1.0 - 1.0 / alpha));
    if bound.is_nan() {
        1.0
    } else {
        bound.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forced-phase root solves its equation for every `k` up to
    /// `u32::MAX` and every `c` above 1 up to ∞, lies in
    /// `[c/(2c − 1), 1]`, and falls as `k` grows; the rate is its `k`-th
    /// power, a probability.
    #[test]
    fn forced_ones_holds_at_every_k() {
        for c in [1.0 + 1e-9, 1.5, 2.0, 1000.0, 1e12, f64::MAX, f64::INFINITY] {
            let mut last = 1.0;
            for k in [2, 3, 4, 10, 64, 1000, 1 << 20, u32::MAX] {
                let q = forced_ones(c, k);
                let floor = if c.is_finite() {
                    c / (2.0 * c - 1.0)
                } else {
                    0.5
                };
                assert!(q >= floor * (1.0 - 1e-12) && q <= 1.0, "c {c} k {k}: {q}");
                assert!(q <= last * (1.0 + 1e-12), "c {c} k {k}: {q} after {last}");
                last = q;
                // Σ_{1..k} q^j − Σ_{1..k−1} q^j / c − 1 changes sign
                // within a few ulps of q: summed directly where k is
                // small, and in closed form (by expm1) otherwise.
                let kf = f64::from(k);
                let residual = |q: f64| {
                    if k <= 1000 {
                        let mut pw = 1.0;
                        let (mut all, mut below) = (0.0, 0.0);
                        for j in 1..=k {
                            pw *= q;
                            all += pw;
                            if j < k {
                                below += pw;
                            }
                        }
                        all - below / c - 1.0
                    } else {
                        let geo = |n: f64| q * -(n * q.ln()).exp_m1() / (1.0 - q);
                        geo(kf) - geo(kf - 1.0) / c - 1.0
                    }
                };
                let ulps = 4.0 * f64::EPSILON;
                let (below, above) = (q * (1.0 - ulps), (q * (1.0 + ulps)).min(1.0 - f64::EPSILON));
                assert!(residual(below) <= 1e-12, "c {c} k {k}: q {q} too large");
                assert!(residual(above) >= -1e-12, "c {c} k {k}: q {q} too small");
                let fpr = long_run_fpr(c, k);
                assert!((0.0..=1.0).contains(&fpr), "c {c} k {k}: {fpr}");
            }
        }
        assert!(forced_ones(f64::NAN, 3).is_nan());
        assert_eq!(forced_ones(0.5, 3), 1.0);
        assert_eq!(long_run_fpr(2.0, 1), 1.0);
    }

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

    /// The recursion of [`Model`] stepped item by item, as it was before
    /// the stretches: the reference they are held to.
    fn stepwise(model: &Model, m: u64, from: u64) -> (f64, f64) {
        let (s, k) = (model.s as f64, model.k as i32);
        let c = model.clear_from.max(1) as f64;
        let (mut q, mut sum) = (0.0f64, 0.0);
        for i in 1..=m {
            let below = libm::pow(q, f64::from(k - 1));
            let fpr = below * q;
            if i > from {
                sum += fpr;
            }
            if i <= model.s && !model.reset_during_fill {
                q += (1.0 - q) / s;
                continue;
            }
            let reservoir = (s / i as f64).min(1.0);
            let (new, dup) = if i <= model.s {
                (1.0, 1.0)
            } else if i >= model.forced_from {
                (1.0, reservoir)
            } else {
                (reservoir, reservoir)
            };
            let inserted = (1.0 - fpr) * new + fpr * dup;
            let on_one = below * dup + (1.0 - below) * new;
            q += ((1.0 - q) * new - q * (inserted - on_one / c)) / s;
        }
        (
            q,
            if m > from {
                sum / (m - from) as f64
            } else {
                0.0
            },
        )
    }

    /// At sub-filters too large to step (`s` from `2^40` to `2^62`) the
    /// closed form meets its limit: `q_s → 1 − 1/e`, and the distance to
    /// `q* = s/(2s − 1)` shrinks by `(s/m)^a`, `a = (2s − 1)/s`, to
    /// `O(1/s)`; and it agrees with the model's stretches at `2^40`.
    #[test]
    fn closed_form_holds_at_huge_sub_filters() {
        for e in [40u32, 53, 60, 62] {
            let s = 1u64 << e;
            let sf = s as f64;
            let q_star = sf / (2.0 * sf - 1.0);
            let q_s = -libm::expm1(-1.0);
            for c in [1u64, 2, 4] {
                let Some(m) = s.checked_mul(c) else { continue };
                let a = (2.0 * sf - 1.0) / sf;
                let q = q_star + (q_s - q_star) * libm::pow(1.0 / c as f64, a);
                for k in [1u32, 3, 8] {
                    let want = libm::pow(q, f64::from(k));
                    let got = fpr_distinct(s, k, m);
                    assert!(
                        (got - want).abs() <= 1e-9 * want,
                        "s 2^{e} k {k} m {c}s: {got} vs {want}"
                    );
                }
            }
        }
        let s = 1u64 << 40;
        let model = Model {
            s,
            k: 3,
            clear_from: s,
            forced_from: u64::MAX,
            reset_during_fill: false,
        };
        for m in [s + 1, 2 * s, 7 * s, 1 << 62] {
            let (got, want) = (model.fpr_after(m), fpr_distinct(s, 3, m));
            assert!((got - want).abs() < 1e-6, "m {m}: {got} vs {want}");
        }
    }

    /// The stretches agree with the step-by-step recursion within 10⁻⁶,
    /// in every phase, for sub-filters of 1 to 10⁵ bits, 1 to 8 bits an
    /// item, both clears and both fills.
    #[test]
    #[cfg_attr(miri, ignore = "10^6 model steps: too slow under Miri")]
    fn stretches_follow_the_recursion() {
        let n = crate::scaled(1_000_000) as u64;
        for (s, k) in [
            (1u64, 1u32),
            (2, 3),
            (7, 2),
            (100, 1),
            (333, 3),
            (1000, 8),
            (30_000, 4),
            (100_000, 2),
        ] {
            for (clear_from, reset_during_fill) in [(s, true), (s, false), ((s / 8).max(1), true)] {
                for p_star in [1.0, 0.3, 0.03, 0.0] {
                    let forced_from = if p_star > 0.0 {
                        (s as f64 / p_star).ceil() as u64
                    } else {
                        u64::MAX
                    };
                    let model = Model {
                        s,
                        k,
                        clear_from,
                        forced_from,
                        reset_during_fill,
                    };
                    for (m, from) in [(n, n / 2), (n / 3, 0), (s + 1, s / 2), (5000, 4321)] {
                        let (q, mean) = stepwise(&model, m, from);
                        let (fast_q, fast_mean) = (model.ones_after(m), model.mean_fpr(from, m));
                        assert!(
                            (q - fast_q).abs() < 1e-6 && (mean - fast_mean).abs() < 1e-6,
                            "{model:?} m {m} from {from}: ones {q} vs {fast_q}, mean rate {mean} vs {fast_mean}"
                        );
                    }
                }
            }
        }
    }

    /// Asking about streams of any length returns, and the settled rate
    /// stays where long streams put it.
    #[test]
    fn endless_streams_are_answered() {
        for (s, k) in [(1u64, 3u32), (64, 1), (1 << 20, 3), (1 << 40, 5)] {
            let model = Model {
                s,
                k,
                clear_from: s,
                forced_from: s.saturating_mul(34),
                reset_during_fill: true,
            };
            for m in [u64::MAX, u64::MAX / 3, 1 << 62] {
                let (q, rate) = (model.ones_after(m), model.fpr_after(m));
                assert!(
                    (0.0..=1.0).contains(&q) && (0.0..=1.0).contains(&rate),
                    "{model:?} {m}: {q} {rate}"
                );
                let mean = model.mean_fpr(m - 1000, m);
                assert!(
                    (mean - rate).abs() < 1e-3,
                    "{model:?} {m}: {mean} vs {rate}"
                );
            }
            if s <= 1 << 20 && k > 1 {
                let settled = model.ones_after(u64::MAX);
                assert!(
                    (settled - forced_ones(s as f64, k)).abs() < 1e-4,
                    "{model:?}: {settled}"
                );
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
