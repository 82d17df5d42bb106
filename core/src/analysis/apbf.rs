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
    let mut i = 0;
    let each = (0..slices).map(|j| (fill(j), 1));
    run_probability_stretches(k, each, |p| {
        after(i, p);
        i += 1;
    })
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
    slice_items_at(k, g, n, i as u64)
}

/// [`slice_items`] for a slice index in `u64` (a ring has up to
/// `MAX_K + 2^32 − 1` slices, more than a 32-bit `usize` counts).
fn slice_items_at(k: u32, g: u64, n: u64, i: u64) -> u64 {
    if n == 0 || k == 0 || g == 0 {
        return 0;
    }
    let shifts = (n - 1) / g;
    let current = n - shifts * g;
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

/// The chain of [`run_probabilities`] over slices given as stretches of
/// equal fills: `(fill, count)` pairs, `count` slices each. A long stretch
/// costs `O(k)` steps, not `count`: once the chain's state (the run
/// probabilities, scaled to sum 1) is the same after a step as before it,
/// it is the chain's quasi-stationary state for this fill, and every
/// further step moves the same share `δ` of the remaining mass `M` to the
/// hit (mass is conserved: `M + hit = 1`). The rest of the stretch then
/// adds `M·(1 − (1 − δ)^c)` in one step, `c` the steps left, which is
/// what stepping gives to within rounding. A state that does not settle
/// within [`SETTLE_STEPS`] is stepped to the end of the stretch (a
/// stretch of one slice is one step, as [`run_probabilities`] takes
/// them). `after(p)` is called after each stretch with the probability
/// `p` of a run so far.
fn run_probability_stretches(
    k: u32,
    stretches: impl IntoIterator<Item = (f64, u64)>,
    mut after: impl FnMut(f64),
) -> f64 {
    let k = k.min(MAX_K) as usize;
    if k == 0 {
        return 1.0;
    }
    // run[a]: the probability of a current run of exactly `a < k` set
    // slices and no run of `k` so far.
    let mut run = [0.0f64; MAX_K as usize];
    run[0] = 1.0;
    let mut hit = 0.0f64;
    for (r, count) in stretches {
        let mut left = count;
        let mut shape = [0.0f64; MAX_K as usize];
        let mut steps = 0u64;
        while left > 0 {
            let mass: f64 = run[..k].iter().sum();
            if mass <= 0.0 {
                // Every run has been hit: nothing changes any more.
                break;
            }
            let leak = step(&mut run[..k], r);
            hit += leak;
            left -= 1;
            steps += 1;
            let kept: f64 = run[..k].iter().sum();
            if kept <= 0.0 {
                break;
            }
            let mut settled = steps > 1;
            for (s, &p) in shape[..k].iter_mut().zip(&run[..k]) {
                let now = p / kept;
                settled &= (now - *s).abs() <= 1e-15 * now.max(1e-300);
                *s = now;
            }
            if settled && left > 0 && steps < SETTLE_STEPS {
                let delta = leak / mass;
                // `1 − (1 − δ)^c` as `−expm1(c·log1p(−δ))`: `δ` may be far
                // below the rounding of 1.
                let lost = -libm::expm1(left as f64 * libm::log1p(-delta));
                hit += kept * lost;
                for p in &mut run[..k] {
                    *p *= 1.0 - lost;
                }
                left = 0;
            }
        }
        after(hit.min(1.0));
    }
    hit.min(1.0)
}

/// One trial of the run chain: `run[a]` (the probability of a current run
/// of exactly `a < k` set slices, `k = run.len()`, and no run of `k` so
/// far) after a slice of fill `r` (clamped to `[0, 1]`, NaN as 0); returns
/// the probability that moved to the hit, a run reaching `k`.
fn step(run: &mut [f64], r: f64) -> f64 {
    // NaN fails this test too.
    let r = if r > 0.0 { r.min(1.0) } else { 0.0 };
    let k = run.len();
    let leak = run[k - 1] * r;
    let mut reset = 0.0;
    for a in (0..k).rev() {
        reset += run[a] * (1.0 - r);
        run[a] = if a == 0 { 0.0 } else { run[a - 1] * r };
    }
    run[0] = reset;
    leak
}

/// Steps of one stretch of equal fills after which
/// [`run_probability_stretches`] stops looking for its settled state.
const SETTLE_STEPS: u64 = 1 << 16;

/// The expected false-positive rate after `n` insertions from empty into
/// a filter of `k` newest slices, `l` older ones, generations of `g` and
/// `m`-bit slices: [`run_probability`] over the fills [`fill`] of
/// [`slice_items`]. A `k` above [`MAX_K`] counts as [`MAX_K`] (no filter
/// has one). Slices of equal fills (the settled middle of the ring, the
/// empty ones past the stream) are taken as stretches, so the cost is
/// `O(k²)` steps whatever `l` and `n`.
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
    let k = k.min(MAX_K);
    let slices = u64::from(k) + u64::from(l);
    // Where `slice_items` is constant: from `shifts` to `k` (every
    // generation so far, `n`), from `k` to `shifts` (`k·g`), and from
    // `shifts + k` on (0); elsewhere it changes slice by slice, in at
    // most `2k` slices.
    let shifts = if n == 0 || g == 0 { 0 } else { (n - 1) / g };
    let bounds = [
        shifts,
        u64::from(k),
        shifts.saturating_add(1),
        shifts.saturating_add(u64::from(k)),
    ];
    let mut i = 0u64;
    let stretches = core::iter::from_fn(move || {
        if i >= slices {
            return None;
        }
        let items = slice_items_at(k, g, n, i);
        let mut end = i + 1;
        if let Some(&next) = bounds.iter().filter(|&&b| b > i).min() {
            if slice_items_at(k, g, n, next.min(slices) - 1) == items {
                end = next.min(slices);
            }
        } else {
            end = slices;
        }
        let count = end - i;
        i = end;
        Some((fill(items, m), count))
    });
    run_probability_stretches(k, stretches, |_| {})
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
    let slices = u64::from(k.min(MAX_K)) + u64::from(l);
    predicted_fpr(k, l, g, m, slices.saturating_mul(g))
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
    let k = k.min(MAX_K);
    let kf = f64::from(k.max(1));
    // The `k` newest slices one by one, then `l` at one half.
    let young = (0..k).map(|i| ((f64::from(i) + 1.0) / (2.0 * kf), 1));
    run_probability_stretches(k, young.chain([(0.5, u64::from(l))]), |_| {})
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

    /// Stretches of equal fills give what stepping slice by slice gives,
    /// for every `k` up to [`MAX_K`], fills from tiny to one, and
    /// stretches short and long enough to settle (and to hit with
    /// probability near 1).
    #[test]
    #[cfg_attr(miri, ignore = "millions of chain steps")]
    fn stretches_equal_stepping() {
        for k in [1u32, 2, 3, 7, 16, 64] {
            for r in [0.0, 1e-3, 0.05, 0.3, 0.5, 0.7, 0.95, 1.0] {
                for count in [1u64, 5, 200, 20_000] {
                    let young = [(0.2, 1), (0.6, 2)];
                    let stepped = run_probability(k, 3 + count as usize, |i| match i {
                        0 => 0.2,
                        1 | 2 => 0.6,
                        _ => r,
                    });
                    let stretched =
                        run_probability_stretches(k, young.into_iter().chain([(r, count)]), |_| {});
                    // Stepping rounds once a step: `count` roundings of the sum.
                    let tolerance = (1e-12 + count as f64 * f64::EPSILON) * stepped.max(1e-300);
                    assert!(
                        (stretched - stepped).abs() <= tolerance,
                        "k {k} r {r} count {count}: {stretched} against {stepped}"
                    );
                }
            }
        }
    }

    /// The ring's stretches (`predicted_fpr`) against the chain over every
    /// slice, at every phase of the stream: filling, settled, and past a
    /// ring longer than the stream.
    #[test]
    fn predicted_fpr_is_the_chain_over_every_slice() {
        for (k, l, g) in [(1u32, 1u32, 1u64), (3, 5, 7), (10, 7, 100), (4, 40, 3)] {
            let m = 1 + (f64::from(k) * g as f64 / core::f64::consts::LN_2) as usize;
            for n in [0, 1, g - 1, g, g + 1, 5 * g + 2, 60 * g, 1000 * g] {
                let slices = (k + l) as usize;
                let chain = run_probability(k, slices, |i| fill(slice_items(k, g, n, i), m));
                let got = predicted_fpr(k, l, g, m, n);
                assert!(
                    (got - chain).abs() <= 1e-12 * chain.max(1e-300),
                    "k {k} l {l} g {g} n {n}: {got} against {chain}"
                );
            }
        }
    }

    /// Rings of billions of slices and `k` past [`MAX_K`] return at once
    /// (stepping them took minutes), with rates in `[0, 1]` that grow with
    /// the ring.
    #[test]
    fn huge_rings_are_stretches() {
        let m = 1 << 20;
        let short = steady_fpr(4, 1000, 10, m);
        let long = steady_fpr(4, u32::MAX, 10, m);
        assert!(short > 0.0 && short <= long && long <= 1.0);
        assert_eq!(steady_fpr(u32::MAX, 3, 10, m), steady_fpr(MAX_K, 3, 10, m));
        for n in [0, 1, 1 << 40, u64::MAX] {
            let p = predicted_fpr(4, u32::MAX, 10, m, n);
            assert!((0.0..=1.0).contains(&p), "n {n}: {p}");
        }
        let paper = paper_fpr(4, u32::MAX);
        assert!(paper > paper_fpr(4, 1000) && paper <= 1.0);
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
