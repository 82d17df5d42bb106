//! The error formulas of the Spectral Bloom filter paper, for choosing
//! parameters and for holding measurements against theory, and the exact
//! error of this crate's blocked layout ([`blocked_error`]), which the
//! planner ([`SpectralParams::plan`](crate::spectral::SpectralParams::plan))
//! sizes filters by.

use crate::spectral::Counter;

/// `γ = n·k/m`: distinct items times counters per item over counters (§2.1).
/// No counters (`m = 0`) with some load is an infinite load; no load
/// (`n·k = 0`) is 0 whatever `m`.
///
/// ```
/// use streambloom::analysis::spectral::gamma;
/// assert_eq!(gamma(1000, 5, 5000), 1.0);
/// assert_eq!(gamma(0, 0, 0), 0.0);
/// assert_eq!(gamma(1, 1, 0), f64::INFINITY);
/// ```
pub fn gamma(n: u64, k: u32, m: u64) -> f64 {
    if n == 0 || k == 0 {
        return 0.0;
    }
    n as f64 * f64::from(k) / m as f64
}

/// The Bloom error `E_b ≈ (1 − e^{−γ})^k` (§2.1): the probability that all
/// `k` counters of an item are shared with others, i.e. that Minimum
/// Selection over-estimates it (Claim 1), **for the paper's unblocked
/// layout** (`k` counters anywhere among `m`). This crate's filters keep an
/// item's counters in one block, where the loads of the blocks vary and the
/// error is larger: [`blocked_error`] is the rate they deliver.
///
/// A load `γ` of 0 or less (or NaN) counts as no load, where nothing is
/// over-estimated: 0 for `k >= 1`. With `k = 0` an item has no counter to
/// tell it apart, and the rate is 1. The result is in `[0, 1]`.
///
/// ```
/// use streambloom::analysis::spectral::bloom_error;
/// let e = bloom_error(5, 0.7);
/// assert!((e - 0.032).abs() < 0.001); // Table 1, γ = 0.7
/// assert_eq!(bloom_error(5, -1.0), 0.0);
/// assert_eq!(bloom_error(5, f64::INFINITY), 1.0);
/// ```
pub fn bloom_error(k: u32, gamma: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if gamma.is_nan() || gamma <= 0.0 {
        return 0.0;
    }
    libm::pow(-libm::expm1(-gamma), f64::from(k))
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
/// The two probabilities are taken in `[0, 1]` (clamped; NaN counts as
/// 0). When no item goes to the secondary filter (`P(R_x) = 1`, or
/// `n·k = 0`) its term is 0 whatever its size; a secondary filter of no
/// counters (`m_s <= 0` or NaN) that receives items errs on all of them.
/// The result is in `[0, 1]`.
///
/// ```
/// use streambloom::analysis::spectral::recurring_minimum_error;
/// // Table 1, γ = 0.7: P(R) = 0.812, P(E|R) = 0.002, n = 1000, k = 5,
/// // m_s = m/2 with m = nk/γ.
/// let e = recurring_minimum_error(0.812, 0.002, 1000, 5, 5000.0 / 0.7 / 2.0);
/// assert!((e - 0.0017).abs() < 0.0002);
/// assert_eq!(recurring_minimum_error(1.0, 0.0, 1000, 5, 0.0), 0.0);
/// ```
pub fn recurring_minimum_error(
    p_recurring: f64,
    p_error_given_recurring: f64,
    n: u64,
    k: u32,
    secondary_counters: f64,
) -> f64 {
    let probability = |p: f64| if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    let (p_r, p_e) = (
        probability(p_recurring),
        probability(p_error_given_recurring),
    );
    let load = n as f64 * (1.0 - p_r) * f64::from(k);
    let secondary = if load == 0.0 {
        0.0
    } else if secondary_counters.is_nan() || secondary_counters <= 0.0 {
        1.0
    } else {
        bloom_error(k, load / secondary_counters)
    };
    (p_r * p_e + (1.0 - p_r) * secondary).clamp(0.0, 1.0)
}

/// The most counters a Spectral block holds: 64, for [`W8`](crate::W8).
const MAX_CELLS: usize = 64;

/// When the chance that an item with `j` others in its block escapes an
/// over-estimate, `1 − g(j)`, falls below this, it is taken as 0 for every
/// larger `j` too (it only falls as `j` grows): the error it drops is below
/// `10^-18`, far under any rate worth planning for, and it bounds the work.
const SATURATED: f64 = 1e-18;

/// The law of how many of a block's `B` counters `j` items cover, each item
/// drawing `k` counters uniformly with replacement (the
/// [`Collapsing`](crate::hash::Placement::Collapsing) placement), advanced
/// one item at a time. An item whose own `k` draws all land on covered
/// counters is over-estimated by Minimum Selection, so with `U` covered
/// counters that happens with probability `(U/B)^k`.
///
/// This is the brief's inclusion–exclusion,
/// `Σ_d P(d) Σ_t (−1)^t C(d,t) (1 − t/B)^{kj}` over the `d` distinct counters
/// of the item, summed the other way round: over the counters the others
/// cover. Every term is then positive, so it holds to double precision where
/// the alternating sum (terms up to `C(64, 32) ≈ 1.8·10^18`) cancels to
/// noise.
#[derive(Clone, Debug)]
pub(crate) struct Coverage {
    cells: usize,
    k: u32,
    /// `covered[u]`: the probability that the items so far cover exactly
    /// `u` counters.
    covered: [f64; MAX_CELLS + 1],
    /// `(u/B)^k`: an item's draws all on `u` covered counters.
    inside: [f64; MAX_CELLS + 1],
    /// `1 − (u/B)^k`, computed without cancellation.
    outside: [f64; MAX_CELLS + 1],
}

impl Coverage {
    /// No items yet, in blocks of `W::CELLS` counters; items draw `k`
    /// counters (capped at `W::CELLS`, as placement caps it).
    pub(crate) fn new<W: Counter>(k: u32) -> Coverage {
        let cells = W::CELLS.min(MAX_CELLS);
        let k = k.min(cells as u32);
        let mut c = Coverage {
            cells,
            k,
            covered: [0.0; MAX_CELLS + 1],
            inside: [0.0; MAX_CELLS + 1],
            outside: [0.0; MAX_CELLS + 1],
        };
        c.covered[0] = 1.0;
        for u in 0..=cells {
            let ln = f64::from(k) * libm::log(u as f64 / cells as f64);
            // `k = 0`: no draw, so all of none are covered (`0^0 = 1`).
            c.inside[u] = if k == 0 { 1.0 } else { libm::exp(ln) };
            c.outside[u] = if k == 0 { 0.0 } else { -libm::expm1(ln) };
        }
        c
    }

    /// One more item: `k` more draws.
    pub(crate) fn add_item(&mut self) {
        for _ in 0..self.k {
            self.add_draw();
        }
    }

    /// One more draw of one counter, uniform in the block.
    fn add_draw(&mut self) {
        let b = self.cells as f64;
        // Counter `u` covered stays so with probability `u/B`; the draw
        // covers a new one with probability `(B − (u − 1))/B`.
        for u in (1..=self.cells).rev() {
            self.covered[u] = self.covered[u] * (u as f64 / b)
                + self.covered[u - 1] * ((self.cells - u + 1) as f64 / b);
        }
        self.covered[0] = 0.0;
    }

    /// `g(j)`: the probability that an item sharing its block with the `j`
    /// items added so far has all its counters covered by them.
    pub(crate) fn error(&self) -> f64 {
        (0..=self.cells)
            .map(|u| self.covered[u] * self.inside[u])
            .sum()
    }

    /// `1 − g(j)`, without cancellation.
    pub(crate) fn escape(&self) -> f64 {
        (0..=self.cells)
            .map(|u| self.covered[u] * self.outside[u])
            .sum()
    }
}

/// The probability that Minimum Selection over-estimates an item that
/// shares its block with `others` other items, in blocks of `W::CELLS`
/// counters, each item drawing `k` counters uniformly with replacement
/// (repeats collapse: [`Placement::Collapsing`](crate::hash::Placement),
/// what [`Spectral`](crate::spectral::Spectral) uses): `E[(U/B)^k]`, `U`
/// the number of counters the others cover. `k` is capped at `W::CELLS`;
/// `k = 0` gives 1.
///
/// ```
/// use streambloom::analysis::spectral::block_error;
/// use streambloom::W32;
/// assert_eq!(block_error::<W32>(0, 4), 0.0); // alone in its block
/// // One other item, one draw each: they collide with probability 1/16.
/// assert!((block_error::<W32>(1, 1) - 1.0 / 16.0).abs() < 1e-15);
/// assert!(block_error::<W32>(10, 4) < block_error::<W32>(20, 4));
/// ```
pub fn block_error<W: Counter>(others: u64, k: u32) -> f64 {
    let mut c = Coverage::new::<W>(k);
    let mut j = 0;
    while j < others && c.escape() >= SATURATED {
        c.add_item();
        j += 1;
    }
    if j < others { 1.0 } else { c.error() }
}

/// The expected over-estimate rate of Minimum Selection in this crate's
/// blocked layout: the probability that an item of a stream of `n`
/// distinct items (each inserted any number of times) gets an estimate
/// above its true count, in a filter of `blocks` blocks of `W::CELLS`
/// counters with `k` counters an item.
///
/// An item's block is uniform among `blocks` and each of its `k` counters
/// uniform within the block, repeats collapsing
/// ([`Placement::Collapsing`](crate::hash::Placement)). Its estimate, the
/// smallest of its counters, exceeds its count exactly when every one of
/// its counters is also hit by another item (Claim 1). The `J` other items
/// in its block are Binomial(`n − 1`, `1/blocks`), and given `J = j` that
/// happens with probability [`block_error`]`(j)`, so the rate is
/// `Σ_j P(J = j) · block_error(j)`: exact under ideal hashing, no
/// approximation but dropping a binomial tail below `10^-24` and escapes
/// below `10^-18`. Counters are assumed not to saturate.
///
/// It is well above the unblocked [`bloom_error`] at the same memory, most
/// with few counters a block:
///
/// ```
/// use streambloom::analysis::spectral::{blocked_error, bloom_error, gamma};
/// use streambloom::{W32, W8};
/// // γ = 0.7 (Table 1): 10 000 items, k = 5, about 71 400 counters.
/// let unblocked = bloom_error(5, gamma(10_000, 5, 71_424));
/// let w8 = blocked_error::<W8>(10_000, 71_424 / 64, 5);
/// let w32 = blocked_error::<W32>(10_000, 71_424 / 16, 5);
/// assert!(unblocked < w8 && w8 < w32);
/// assert_eq!(blocked_error::<W8>(1, 1, 5), 0.0); // no other item
/// ```
///
/// `blocks` of 0 count as 1; `k` is capped at `W::CELLS`, and `k = 0` gives 1.
pub fn blocked_error<W: Counter>(n: u64, blocks: usize, k: u32) -> f64 {
    let others = n.saturating_sub(1);
    let blocks = blocks.max(1);
    if blocks == 1 {
        return block_error::<W>(others, k);
    }
    let mut c = Coverage::new::<W>(k);
    let (mut rate, mut weight): (f64, f64) = (0.0, 0.0);
    for (j, ln_w) in binomial_ln_pmf(others, 1.0 / blocks as f64) {
        if j > 0 {
            c.add_item();
        }
        if c.escape() < SATURATED {
            // Every larger `j` errs for sure: add the weight left.
            rate += (1.0 - weight).max(0.0);
            break;
        }
        let w = libm::exp(ln_w);
        rate += w * c.error();
        weight += w;
    }
    rate.min(1.0)
}

/// The binomial tail [`binomial_ln_pmf`] drops: past the mean, the terms
/// stop once those left sum to less than this. Like [`SATURATED`], far under
/// any rate worth planning for; and it bounds the work to a few standard
/// deviations past the mean (the two-block sum is superlinear in that count).
const TAIL: f64 = 1e-24;

/// `ln P(J = j)` for `J ~ Binomial(n, p)`, `j` from 0 while the terms
/// matter: carried from `j = 0` by the ratio of successive terms (no
/// `lgamma` of huge arguments, whose rounding would swamp the result), and
/// stopped past the mean once the terms left sum to less than [`TAIL`].
/// Past the mean the ratio `r_j` of successive terms falls with `j`, so the
/// terms after `j` sum to at most `P(J = j)·r/(1 − r)`, `r = r_j`.
fn binomial_ln_pmf(n: u64, p: f64) -> impl Iterator<Item = (u64, f64)> {
    let mean = n as f64 * p;
    let log_odds = libm::log(p) - libm::log1p(-p);
    let ln_tail = libm::log(TAIL);
    let mut state = Some((0u64, n as f64 * libm::log1p(-p)));
    core::iter::from_fn(move || {
        let (j, ln_w) = state?;
        state = if j >= n {
            None
        } else {
            let ln_r = libm::log((n - j) as f64) - libm::log((j + 1) as f64) + log_odds;
            // `ln(r/(1 − r))`, meaningful once `r < 1` (past the mean).
            let ln_rest = ln_w + ln_r - libm::log1p(-libm::exp(ln_r));
            if j as f64 > mean && ln_r < 0.0 && ln_rest < ln_tail {
                None
            } else {
                Some((j + 1, ln_w + ln_r))
            }
        };
        Some((j, ln_w))
    })
}

/// The expected over-estimate rate of Minimum Selection in the
/// **two-block** layout ([`Layout::TwoBlocks`](crate::hash::Layout)): as
/// [`blocked_error`], but an item's `k` counters are `k₁ = ⌈k/2⌉` draws in
/// one block and `k₂ = ⌊k/2⌋` in a second, independent one.
///
/// # The model
///
/// Every other item sends `k₁` draws to a uniform block and `k₂` to
/// another, so a given block receives `D = k₁J₁ + k₂J₂` draws from the
/// others, `J₁, J₂ ~ Binomial(n − 1, 1/blocks)` the first and second halves
/// landing there. Given `D = d` the item's half of `kₕ` draws is all
/// covered with probability `E[(U_d/B)^kₕ]`, `U_d` the counters `d`
/// uniform draws cover (the [`block_error`] recursion, draw by draw). The
/// item errs when both halves are covered; the two blocks' loads are
/// independent up to `O(1/blocks)` (an item's halves land in both), which
/// the model neglects, so the rate is the product of the halves' rates.
/// With probability `1/blocks` both halves land in the same block, where
/// the layout merges them into one block of `k` draws: that share takes
/// [`blocked_error`]. Counters are assumed not to saturate.
///
/// ```
/// use streambloom::analysis::spectral::{blocked_error, bloom_error, gamma, two_block_error};
/// use streambloom::W16;
/// // γ = 0.7, W16 (32 counters a block): two blocks come near the
/// // unblocked rate, one block is far above it.
/// let (n, m) = (10_000, 71_424);
/// let unblocked = bloom_error(5, gamma(n, 5, m as u64));
/// let one = blocked_error::<W16>(n, m / 32, 5);
/// let two = two_block_error::<W16>(n, m / 32, 5);
/// assert!(unblocked < two && two < one);
/// assert!(two < 1.5 * unblocked);
/// assert_eq!(two_block_error::<W16>(n, m / 32, 1), blocked_error::<W16>(n, m / 32, 1));
/// ```
///
/// `blocks` of 0 count as 1; `k` is capped at `W::CELLS`; `k = 1` has no
/// second half and is [`blocked_error`].
pub fn two_block_error<W: Counter>(n: u64, blocks: usize, k: u32) -> f64 {
    let cells = W::CELLS.min(MAX_CELLS);
    let (k1, k2) = crate::hash::Layout::TwoBlocks.halves(k.min(cells as u32));
    let blocks = blocks.max(1);
    if k2 == 0 || blocks == 1 {
        return blocked_error::<W>(n, blocks, k);
    }
    let p = 1.0 / blocks as f64;
    let [first, _, second, _] = two_block_halves::<W>(n, blocks, k1, k2);
    let apart = first.min(1.0) * second.min(1.0);
    ((1.0 - p) * apart + p * blocked_error::<W>(n, blocks, k)).min(1.0)
}

/// The two halves' coverage in [`two_block_error`]'s model: `[e₁, s₁, e₂,
/// s₂]`, `eₕ = P(half h is all covered)` and `sₕ = E[1{half h covered} ·
/// (J₁ + J₂)]`, the halves of other items in its block weighted by the
/// event (the tests bound the variance of a measured rate with it).
/// Past saturation every half is covered: the tail's weight counts in
/// `eₕ`, and in `sₕ` times a bound on `J₁ + J₂` there (twice the
/// binomial's mean plus 12 standard deviations and 12).
///
/// The block receives `D = k₁J₁ + k₂J₂ = k₂S + (k₁ − k₂)J₁` draws, where
/// `S = J₁ + J₂ ~ Binomial(2(n − 1), 1/blocks)` (the sum of two
/// independent binomials of one `p`) and, given `S`, `J₁` is
/// hypergeometric (`S` draws from `2(n − 1)`, half of them first
/// halves; Vandermonde's identity). With `k` even the halves are equal,
/// `D = k₂S`, and one pass over `S` advancing the coverage `k₂` draws a
/// step is the whole sum; with `k` odd each `S` adds a window of `J₁`
/// around `S/2` (its terms below `10^-24` of the largest dropped),
/// `k₁ − k₂ = 1` draw a step. That costs `O(S·√S)` draws where
/// the double sum over `(J₁, J₂)` cost `O(S²·k₁)`; it is the same sum
/// (the tests compare them), in a different order.
pub(crate) fn two_block_halves<W: Counter>(n: u64, blocks: usize, k1: u32, k2: u32) -> [f64; 4] {
    let cells = W::CELLS.min(MAX_CELLS);
    let p = 1.0 / blocks.max(1) as f64;
    let others = n.saturating_sub(1);
    let mean = others as f64 * p;
    let tail_halves = 2.0 * (mean + 12.0 * libm::sqrt(mean) + 12.0);
    // `(u/B)^kₕ` for each half.
    let mut inside = [[0.0; MAX_CELLS + 1]; 2];
    for (row, draws) in inside.iter_mut().zip([k1, k2]) {
        for (u, x) in row.iter_mut().enumerate().take(cells + 1) {
            *x = libm::pow(u as f64 / cells as f64, f64::from(draws));
        }
    }
    let covered = |c: &Coverage| -> [f64; 2] {
        [0, 1].map(|half| (0..=cells).map(|u| c.covered[u] * inside[half][u]).sum())
    };
    let mut out = [0.0; 4];
    // Adds `w` of halves covered with probabilities `c`, `halves` other
    // halves in the block.
    let mut add = |w: f64, c: [f64; 2], halves: f64| {
        out[0] += w * c[0];
        out[1] += w * c[0] * halves;
        out[2] += w * c[1];
        out[3] += w * c[1] * halves;
    };
    // The first half is the larger: `k₁ − k₂` more draws for each of
    // the `J₁` first halves (0 or 1 as the layout halves `k`).
    debug_assert!(k1 >= k2);
    let extra = u64::from(k1 - k2);
    // The coverage after `k₂S` draws, and after the last window's start.
    let mut at_s = Coverage::new::<W>(k2);
    let mut run = (at_s.clone(), 0u64);
    let mut weight: f64 = 0.0;
    // `2(n − 1)` saturates at `u64::MAX`: a change of `2^-64` in the law.
    for (s, ln_w) in binomial_ln_pmf(others.saturating_mul(2), p) {
        if at_s.escape() < SATURATED {
            // Every draw count from here on covers everything.
            let rest = (1.0 - weight).max(0.0);
            add(rest, [1.0, 1.0], tail_halves);
            return out;
        }
        let w = libm::exp(ln_w);
        weight += w;
        if w > 0.0 {
            let halves = s as f64;
            if extra > 0 {
                let window = Hypergeometric::new(others, s);
                let start = u64::from(k2) * s + extra * window.lo;
                if run.1 > start {
                    run = (at_s.clone(), u64::from(k2) * s);
                }
                while run.1 < start {
                    run.0.add_draw();
                    run.1 += 1;
                }
                let mut c = run.0.clone();
                let (mut sum, mut cover, mut full) = (0.0, [0.0; 2], false);
                for t in window {
                    full = full || c.escape() < SATURATED;
                    let h = if full { [1.0, 1.0] } else { covered(&c) };
                    sum += t;
                    cover[0] += t * h[0];
                    cover[1] += t * h[1];
                    if !full {
                        for _ in 0..extra {
                            c.add_draw();
                        }
                    }
                }
                add(w, [cover[0] / sum, cover[1] / sum], halves);
            } else {
                add(w, covered(&at_s), halves);
            }
        }
        for _ in 0..k2 {
            at_s.add_draw();
        }
    }
    out
}

/// The law of `J₁` given `J₁ + J₂ = s`, `J₁, J₂` independent binomials of
/// `n` trials and one `p`: hypergeometric, `C(n, j)·C(n, s − j)/C(2n, s)`.
/// Yields its unnormalised terms from the first not below `10^-24` of the
/// mode's (which is 1) to the last, by the ratio of neighbours (no
/// factorial of `n`, which may be near `2^64`).
struct Hypergeometric {
    n: f64,
    s: f64,
    /// The first `j` yielded.
    lo: u64,
    /// The last `j` of the support.
    hi: u64,
    j: u64,
    term: f64,
    mode: u64,
}

impl Hypergeometric {
    fn new(n: u64, s: u64) -> Hypergeometric {
        let (lo, hi) = (s.saturating_sub(n), s.min(n));
        let mode = s.div_ceil(2).clamp(lo, hi);
        let (nf, sf) = (n as f64, s as f64);
        // Down from the mode: `P(j − 1)/P(j) = j(n − s + j) / ((n − j + 1)(s − j + 1))`.
        let (mut j, mut term) = (mode, 1.0);
        while j > lo {
            let jf = j as f64;
            let down = term * jf * (nf - sf + jf) / ((nf - jf + 1.0) * (sf - jf + 1.0));
            if down < NEGLIGIBLE {
                break;
            }
            term = down;
            j -= 1;
        }
        Hypergeometric {
            n: nf,
            s: sf,
            lo: j,
            hi,
            j,
            term,
            mode,
        }
    }
}

/// The smallest hypergeometric term kept, relative to the mode's.
const NEGLIGIBLE: f64 = 1e-24;

impl Iterator for Hypergeometric {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        if self.j > self.hi || (self.j > self.mode && self.term < NEGLIGIBLE) {
            return None;
        }
        let out = self.term;
        // Up: `P(j + 1)/P(j) = (n − j)(s − j) / ((j + 1)(n − s + j + 1))`.
        let j = self.j as f64;
        self.term *= (self.n - j) * (self.s - j) / ((j + 1.0) * (self.n - self.s + j + 1.0));
        self.j += 1;
        Some(out)
    }
}

/// The expected over-estimate rate of Minimum Selection under `layout`:
/// [`blocked_error`] for one block, [`two_block_error`] for two.
///
/// ```
/// use streambloom::analysis::spectral::{blocked_error, layout_error};
/// use streambloom::hash::Layout;
/// use streambloom::W8;
/// assert_eq!(layout_error::<W8>(Layout::OneBlock, 5000, 500, 4), blocked_error::<W8>(5000, 500, 4));
/// assert!(layout_error::<W8>(Layout::TwoBlocks, 5000, 500, 4) < blocked_error::<W8>(5000, 500, 4));
/// ```
pub fn layout_error<W: Counter>(layout: crate::hash::Layout, n: u64, blocks: usize, k: u32) -> f64 {
    match layout {
        crate::hash::Layout::OneBlock => blocked_error::<W>(n, blocks, k),
        crate::hash::Layout::TwoBlocks => two_block_error::<W>(n, blocks, k),
    }
}

// Not under Miri: these are numerics in safe code, with no memory access to
// check, and each runs for minutes there.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::{W8, W16, W32};

    /// The paper's formulas on every edge of their domains: finite
    /// probabilities, and the limits their docs name.
    #[test]
    fn formulas_are_probabilities_at_the_edges() {
        let loads = [0.0, -1.0, f64::NAN, 1e-300, 0.7, 1e300, f64::INFINITY];
        for k in [0u32, 1, 5, 64] {
            for &g in &loads {
                let e = bloom_error(k, g);
                assert!((0.0..=1.0).contains(&e), "k {k} γ {g}: {e}");
            }
            for &p in &[0.0, 0.5, 1.0, -0.5, 2.0, f64::NAN] {
                for &ms in &[0.0, -3.0, f64::NAN, 1.0, 1e6, f64::INFINITY] {
                    for n in [0u64, 1, 1000, u64::MAX] {
                        let e = recurring_minimum_error(p, p, n, k, ms);
                        assert!((0.0..=1.0).contains(&e), "{p} {n} {k} {ms}: {e}");
                    }
                }
            }
        }
        assert_eq!(gamma(0, 0, 0), 0.0);
        assert_eq!(gamma(7, 0, 0), 0.0);
        assert_eq!(gamma(7, 3, 0), f64::INFINITY);
        assert_eq!(bloom_error(3, -2.0), 0.0);
        assert_eq!(bloom_error(3, f64::INFINITY), 1.0);
        // A small load: `1 - e^{-γ}` without cancelling.
        assert!((bloom_error(1, 1e-20) / 1e-20 - 1.0).abs() < 1e-12);
        // All recurring: the secondary filter's size does not matter.
        assert_eq!(recurring_minimum_error(1.0, 0.25, 1000, 5, 0.0), 0.25);
        // An empty secondary filter that receives items errs on all.
        assert_eq!(recurring_minimum_error(0.0, 0.0, 1000, 5, 0.0), 1.0);
    }

    /// `C(n, r)` in floating point.
    fn choose(n: u32, r: u32) -> f64 {
        (0..r).fold(1.0, |c, i| c * f64::from(n - i) / f64::from(i + 1))
    }

    /// Stirling numbers of the second kind, `S(n, r)`.
    fn stirling2(n: u32, r: u32) -> f64 {
        if n == 0 || r == 0 {
            return if n == r { 1.0 } else { 0.0 };
        }
        f64::from(r) * stirling2(n - 1, r) + stirling2(n - 1, r - 1)
    }

    /// [`block_error`] derived the other way: `d` distinct counters among
    /// the item's `k` draws with probability `C(B,d) d! S(k,d) / B^k`, all
    /// `d` hit by `j` others' `kj` draws with probability
    /// `Σ_t (−1)^t C(d,t) (1 − t/B)^{kj}` (inclusion–exclusion). Exact, but
    /// its alternating sum cancels: only for small `k`.
    fn by_inclusion_exclusion(cells: u32, k: u32, j: u64) -> f64 {
        let b = f64::from(cells);
        (1..=k.min(cells))
            .map(|d| {
                let factorial: f64 = (1..=d).map(f64::from).product();
                let p_d =
                    choose(cells, d) * factorial * stirling2(k, d) / libm::pow(b, f64::from(k));
                let all_hit: f64 = (0..=d)
                    .map(|t| {
                        let sign = if t % 2 == 0 { 1.0 } else { -1.0 };
                        sign * choose(d, t)
                            * libm::pow(1.0 - f64::from(t) / b, f64::from(k) * j as f64)
                    })
                    .sum();
                p_d * all_hit
            })
            .sum()
    }

    fn block_error_dyn(cells: usize, j: u64, k: u32) -> f64 {
        match cells {
            64 => block_error::<W8>(j, k),
            32 => block_error::<W16>(j, k),
            _ => block_error::<W32>(j, k),
        }
    }

    #[test]
    fn block_error_matches_inclusion_exclusion() {
        for cells in [16, 32, 64] {
            for k in 1..=6 {
                for j in [0, 1, 2, 3, 5, 8, 13, 21, 40] {
                    let ours = block_error_dyn(cells as usize, j, k);
                    let theirs = by_inclusion_exclusion(cells, k, j);
                    assert!(
                        (ours - theirs).abs() < 1e-12,
                        "B {cells} k {k} j {j}: {ours} vs {theirs}"
                    );
                }
            }
        }
    }

    /// The binomial mixture summed term by term with `lgamma` weights (fine
    /// for small `n`), over [`by_inclusion_exclusion`].
    fn mixture_by_hand(n: u64, blocks: usize, k: u32) -> f64 {
        let others = (n - 1) as f64;
        let p = 1.0 / blocks as f64;
        (0..n)
            .map(|j| {
                let j = j as f64;
                let ln_choose = libm::lgamma(others + 1.0)
                    - libm::lgamma(j + 1.0)
                    - libm::lgamma(others - j + 1.0);
                let ln_w = ln_choose
                    + j * libm::log(p)
                    + if p < 1.0 {
                        (others - j) * libm::log1p(-p)
                    } else if j == others {
                        0.0
                    } else {
                        f64::NEG_INFINITY
                    };
                libm::exp(ln_w) * by_inclusion_exclusion(16, k, j as u64)
            })
            .sum()
    }

    #[test]
    fn blocked_error_is_the_binomial_mixture() {
        for n in [1, 2, 10, 150] {
            for blocks in [1, 2, 7, 40] {
                for k in 1..=4 {
                    let ours = blocked_error::<W32>(n, blocks, k);
                    let theirs = mixture_by_hand(n, blocks, k);
                    assert!(
                        (ours - theirs).abs() < 1e-11,
                        "n {n} blocks {blocks} k {k}: {ours} vs {theirs}"
                    );
                }
            }
        }
    }

    /// [`two_block_halves`] summed the direct way: over `J₂` and `J₁`
    /// independently, each pair's coverage after `k₁J₁ + k₂J₂` draws
    /// computed afresh, a saturated coverage counting as all covered (no
    /// tail bound). Returns the sums and whether any state saturated.
    fn halves_by_both_binomials<W: Counter>(
        n: u64,
        blocks: usize,
        k1: u32,
        k2: u32,
    ) -> ([f64; 4], bool) {
        let cells = W::CELLS.min(MAX_CELLS);
        let p = 1.0 / blocks as f64;
        let others = n.saturating_sub(1);
        let (mut out, mut saturated) = ([0.0; 4], false);
        let mut outer = Coverage::new::<W>(k2);
        for (j2, ln_w2) in binomial_ln_pmf(others, p) {
            let mut c = outer.clone();
            for (j1, ln_w1) in binomial_ln_pmf(others, p) {
                let w = libm::exp(ln_w1 + ln_w2);
                let full = c.escape() < SATURATED;
                saturated |= full;
                let halves = (j1 + j2) as f64;
                for (h, draws) in [k1, k2].into_iter().enumerate() {
                    let e: f64 = if full {
                        1.0
                    } else {
                        (0..=cells)
                            .map(|u| {
                                c.covered[u] * libm::pow(u as f64 / cells as f64, f64::from(draws))
                            })
                            .sum()
                    };
                    out[2 * h] += w * e;
                    out[2 * h + 1] += w * e * halves;
                }
                for _ in 0..k1 {
                    c.add_draw();
                }
            }
            for _ in 0..k2 {
                outer.add_draw();
            }
        }
        (out, saturated)
    }

    /// The one pass over `S = J₁ + J₂` (with `J₁`'s hypergeometric window
    /// for odd `k`) is the double sum over `(J₁, J₂)`, for even and odd
    /// `k`, few and many items a block, every width: the rates to `10^-12`
    /// (absolute and relative), and the weighted halves as well where
    /// nothing saturates (past saturation the one pass bounds them above).
    #[test]
    fn two_block_halves_is_the_double_sum() {
        fn check<W: Counter>() {
            for (n, blocks) in [
                (1u64, 3usize),
                (2, 2),
                (30, 2),
                (400, 50),
                (3000, 100),
                (5000, 60),
                (20_000, 500),
            ] {
                // The layout's halves, and first halves larger by more.
                let halves = [2u32, 3, 4, 5, 8, 9, 16, 33, 64]
                    .map(|k| crate::hash::Layout::TwoBlocks.halves(k.min(W::CELLS as u32)));
                for (k1, k2) in halves.into_iter().chain([(5, 2), (9, 3)]) {
                    let ours = two_block_halves::<W>(n, blocks, k1, k2);
                    let (theirs, saturated) = halves_by_both_binomials::<W>(n, blocks, k1, k2);
                    let near =
                        |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
                    let what = std::format!(
                        "{} cells n {n} blocks {blocks} halves ({k1}, {k2}): {ours:?} vs {theirs:?}",
                        W::CELLS
                    );
                    assert!(
                        near(ours[0], theirs[0]) && near(ours[2], theirs[2]),
                        "{what}"
                    );
                    for i in [1, 3] {
                        if saturated {
                            assert!(ours[i] >= theirs[i] * (1.0 - 1e-12), "{what}");
                        } else {
                            assert!(near(ours[i], theirs[i]), "{what}");
                        }
                    }
                }
            }
        }
        check::<W8>();
        check::<W16>();
        check::<W32>();
    }

    #[test]
    fn blocked_error_limits_and_monotonicity() {
        assert_eq!(blocked_error::<W8>(0, 10, 4), 0.0);
        assert_eq!(blocked_error::<W8>(1, 10, 4), 0.0);
        assert_eq!(blocked_error::<W8>(100, 10, 0), 1.0);
        assert_eq!(block_error::<W8>(5, 0), 1.0);
        // A block far past full errs for sure, and the work stays bounded.
        assert_eq!(blocked_error::<W8>(u64::MAX, 1, 64), 1.0);
        assert_eq!(blocked_error::<W32>(u64::MAX, 3, 1), 1.0);
        assert_eq!(block_error::<W16>(u64::MAX, 7), 1.0);
        // 2^20 items in 2^64 blocks: about 10^-13 others per block, each
        // covering all 16 draws of an item with probability below 10^-3.
        let sparse = blocked_error::<W32>(1 << 20, usize::MAX, 16);
        assert!((0.0..1e-12).contains(&sparse), "{sparse}");
        // `k` past the block is the whole block, as placement caps it.
        assert_eq!(
            blocked_error::<W32>(500, 20, 99),
            blocked_error::<W32>(500, 20, 16)
        );
        // Fewer blocks or more items: more errors.
        for k in [1, 3, 6] {
            let mut last = 1.0;
            for blocks in [10, 20, 40, 80] {
                let e = blocked_error::<W16>(2000, blocks, k);
                assert!(e < last, "k {k} blocks {blocks}");
                last = e;
            }
            assert!(blocked_error::<W16>(1000, 40, k) < blocked_error::<W16>(2000, 40, k));
        }
    }

    #[test]
    fn blocked_error_exceeds_unblocked() {
        // Blocking costs accuracy at equal memory; more counters a block
        // cost less.
        for k in [2, 4, 6] {
            let m = 1usize << 16;
            let n = (0.7 * m as f64 / f64::from(k)) as u64;
            let unblocked = bloom_error(k, gamma(n, k, m as u64));
            let w8 = blocked_error::<W8>(n, m / 64, k);
            let w32 = blocked_error::<W32>(n, m / 16, k);
            assert!(unblocked < w8 && w8 < w32, "k {k}: {unblocked} {w8} {w32}");
        }
    }
}
