//! The Importance-aware Bloom filter's Markov model (Kulkarni, Boraskar,
//! Gabale and Kulkarni, *Importance-aware Bloom Filter for Set Membership
//! Queries in Streaming Data*, §III): the stationary distribution of one
//! cell, its zero fraction `V_0`, and the false-positive bound
//! `(1 − V_0)^K` (Corollaries III.4 and III.8); and the rate a blocked
//! filter delivers ([`layout_fpr`]), which the planner plans by.
//!
//! # The chain
//!
//! Each item, a given cell is decremented with probability `p = P/m` and
//! set with probability `k = K/m`; a set raises the cell to `max(cell, v)`,
//! the level `v` drawn from the stream's levels (`q_v = Pr[v]`, `v` in
//! `1..=Max`). The paper's chain (Figs. 1 and 3) moves from `i ≥ 1` to
//! `i − 1` with probability `p' = p(1 − k)`; the exact per-cell chain of
//! this crate's order (decrement, then set) with `p(1 − k·Q_i)`, where
//! `Q_i = Pr[v ≥ i]`. They differ at order `p·k`.
//!
//! Both chains move down one step at a time and up by sets, so across the
//! cut between `i − 1` and `i` the flows balance:
//! `d_i·V_i = k·Q_i·Σ_{j<i} V_j`. Hence the general closed form
//! [`zero_fraction`] `V_0 = Π_{i=1..Max} d_i/(d_i + k·Q_i)` and the whole
//! distribution ([`stationary`]); the tests check both against a power
//! iteration of the transition matrix.
//!
//! The chain decrements a cell with probability `p` each item, whatever
//! it did before: it models [`Eviction::Random`] (and
//! [`Eviction::Interleaved`], the same law for each cell), whose measured
//! zero fraction the tests hold to `V_0`. It does not model
//! [`Eviction::Sweep`], which decrements each cell exactly once every
//! `m/P` items: its zero fraction is not `V_0` (above it at light load,
//! below at heavy), and the delivered rate can fall below `(1 − V_0)^K`. The sweep's zero fraction is
//! [`steady_zero_fraction`]'s, its rate [`layout_fpr`]'s. Nor does it
//! model IBF-H's eviction by value.
//!
//! # The paper's printed forms
//!
//! Checked against the stationary distribution (the implementers' digest
//! lists them): `V_Max = (k/2)/(p' + k/2)` and eq. (3) are right; the
//! printed `V_{M/2}` (line 173) is 0 as printed (`A = 1 − B`), the
//! correct one is `k·B/(p' + k)` with `B = r₂^{Max−h}`; the printed
//! `V_i = p'/(p'+k)·V_{M/2}` lacks its exponent `M/2 − i`; Fig. 2's `B`
//! has an extra `/(p' + k)` (its `V_0` comes out negative); Fig. 4's
//! recursion has a wrong index; and Theorem III.3's "fraction of zeros
//! `m·V_0`" is the expected *number* of zero cells. [`two_class_zero_fraction`]
//! is the corrected IBF-2C closed form, [`printed_two_class_half`] the
//! printed `V_{M/2}`, kept to show it wrong.

use crate::hash::Layout;
use crate::stable::Eviction;
use crate::{Error, Result};

/// Which chain: the paper's (`d_i = p(1 − k)`) or the exact one of the
/// filter's order, decrement then set (`d_i = p(1 − k·Q_i)`).
///
/// ```
/// use streambloom::analysis::importance::{zero_fraction, Chain};
/// let q = [0.5, 0.5];
/// let (paper, exact) = (zero_fraction(Chain::Paper, 0.01, 0.01, &q)?, zero_fraction(Chain::Exact, 0.01, 0.01, &q)?);
/// assert!((paper - exact).abs() < 1e-3); // they differ at order p·k
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    /// Figs. 1 and 3 of the paper.
    Paper,
    /// One cell of the filter, exactly (under uniform hashing).
    Exact,
}

/// The down-step probability from a cell at `i` (where `Q_i` is `q_at_least`).
fn down(chain: Chain, p: f64, k: f64, q_at_least: f64) -> f64 {
    match chain {
        Chain::Paper => p * (1.0 - k),
        // Not below 0 where `Q_1` rounds above 1 (`check` allows 1e-9).
        Chain::Exact => (p * (1.0 - k * q_at_least)).max(0.0),
    }
}

/// The cut between `i − 1` and `i`, `Q_i = q_at_least`: of the mass at or
/// below `i`, the fractions `(d_i/(d_i + k·Q_i), k·Q_i/(d_i + k·Q_i))`
/// below `i` and at `i` (from `d_i·V_i = k·Q_i·Σ_{j<i} V_j`). Both in
/// `[0, 1]`, so products of them neither overflow nor lose the sum. No
/// set reaches `i` when `Q_i = 0`: `(1, 0)`, also where `d_i = 0` (the
/// cell starts at zero and never gets there).
fn cut(chain: Chain, p: f64, k: f64, q_at_least: f64) -> (f64, f64) {
    let up = k * q_at_least;
    if up <= 0.0 {
        return (1.0, 0.0);
    }
    let d = down(chain, p, k, q_at_least);
    let total = d + up;
    (d / total, up / total)
}

/// Checks `p`, `k` in `(0, 1]` and `q` a distribution over `1..=q.len()`.
fn check(p: f64, k: f64, q: &[f64]) -> Result<()> {
    if !(p > 0.0 && p <= 1.0) {
        return Err(Error::param("p", p, "in (0, 1]: P/m"));
    }
    if !(k > 0.0 && k <= 1.0) {
        return Err(Error::param("k", k, "in (0, 1]: K/m"));
    }
    if q.is_empty() || q.iter().any(|x| x.is_nan() || *x < 0.0) {
        return Err(Error::param(
            "q",
            q.len(),
            "level probabilities for 1..=Max, none negative",
        ));
    }
    let total: f64 = q.iter().sum();
    if (total - 1.0).abs() > 1e-9 {
        return Err(Error::param("q", total, "summing to 1"));
    }
    Ok(())
}

/// The stationary distribution of one cell: `out[i] = V_i` for `i` in
/// `0..=Max`, `Max = q.len()`, where `q[v − 1]` is the probability that an
/// item's level is `v`; `p = P/m`, `k = K/m`.
///
/// Computed from the top level down, as products of the cuts' fractions
/// (each in `[0, 1]`): every entry is finite and not negative, they sum to
/// 1 up to rounding (about `Max` ulps), and `out[0]` is [`zero_fraction`]
/// exactly, at any `Max` (cells of 16 bits and more included, where a
/// recursion up from an unnormalized `V_0 = 1` overflows).
///
/// Where the chain never moves down (`d_i = 0`: `k = 1` in the paper's
/// chain, or `k = 1` and `Q_i = 1` in the exact one) the stationary
/// distribution is not unique; the answer is then the one a cell that
/// starts at zero (as the filter's do) reaches: all its mass at the lowest
/// level it cannot leave, and 0 above the highest level in use. It is the
/// limit of the answers as `d_i → 0`.
///
/// Errors: `p` or `k` outside `(0, 1]`, `q` not a distribution, or `out`
/// not of length `q.len() + 1`.
///
/// ```
/// use streambloom::analysis::importance::{stationary, Chain};
/// // The Stable filter: every set to Max = 3.
/// let mut v = [0.0; 4];
/// stationary(Chain::Paper, 0.01, 0.005, &[0.0, 0.0, 1.0], &mut v)?;
/// assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// assert!(v[3] > v[2] && v[2] > v[1]);
/// // k = 1 in the paper's chain: no step down, every item sets Max.
/// stationary(Chain::Paper, 1.0, 1.0, &[0.0, 0.0, 1.0], &mut v)?;
/// assert_eq!(v, [0.0, 0.0, 0.0, 1.0]);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn stationary(chain: Chain, p: f64, k: f64, q: &[f64], out: &mut [f64]) -> Result<()> {
    check(p, k, q)?;
    if out.len() != q.len() + 1 {
        return Err(Error::param(
            "out",
            out.len(),
            "of length Max + 1 = q.len() + 1",
        ));
    }
    // Normalized from the top: `at_or_below` is `Σ_{j≤i} V_j` (1 at
    // `i = Max`), split at each cut into `V_i` and the mass below `i`;
    // `tail` is `Q_i`, summed from the top.
    let (mut at_or_below, mut tail) = (1.0, 0.0);
    for i in (1..out.len()).rev() {
        tail += q[i - 1];
        let (below, at) = cut(chain, p, k, tail);
        out[i] = at_or_below * at;
        at_or_below *= below;
    }
    out[0] = at_or_below;
    Ok(())
}

/// The stationary zero fraction `V_0 = Π_{i=1..Max} d_i/(d_i + k·Q_i)`
/// (see the module docs), `q` as for [`stationary`] (whose `out[0]` it
/// is, computed the same way: a product of factors in `[0, 1]`).
///
/// This is the zero fraction of a filter under random (or interleaved)
/// eviction, where each cell is decremented with probability `p` an item
/// independently of when it was set. Under [`Eviction::Sweep`] a cell is
/// decremented once every `m/P` items, on a schedule: the zero fraction
/// differs (it is [`steady_zero_fraction`]'s for `Sweep`).
///
/// ```
/// use streambloom::analysis::importance::{zero_fraction, Chain};
/// use streambloom::analysis::stable::stable_point;
/// use streambloom::stable::Eviction;
/// // Every level Max: Deng & Rafiei's stable point (Table II's SBF).
/// let (m, big_k, p, max) = (16_384, 5, 10, 7);
/// let q = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
/// let v0 = zero_fraction(Chain::Paper, p as f64 / m as f64, big_k as f64 / m as f64, &q)?;
/// assert!((v0 - 0.058486).abs() < 1e-6);
/// let sp = stable_point(Eviction::Random, m, big_k, p, max)?;
/// assert!((v0 - sp).abs() < 1e-3);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn zero_fraction(chain: Chain, p: f64, k: f64, q: &[f64]) -> Result<f64> {
    check(p, k, q)?;
    let (mut v0, mut tail) = (1.0, 0.0);
    for &qi in q.iter().rev() {
        tail += qi;
        v0 *= cut(chain, p, k, tail).0;
    }
    Ok(v0)
}

/// The paper's bound on the false-positive rate of a new item, `(1 −
/// V_0)^K` (Corollaries III.4 and III.8): it treats the item's `K` cells
/// as independent, which blocking does not make them.
///
/// **Which eviction.** With `V_0` the chain's ([`zero_fraction`]), this
/// is a bound for the evictions the chain models, [`Eviction::Random`]
/// and [`Eviction::Interleaved`] (each cell decremented with probability
/// `P/m` an item): as for the Stable filter, the delivered rate is above
/// it. Under [`Eviction::Sweep`] the chain's `V_0` is not the zero
/// fraction (cells are decremented on a schedule) and the delivered rate can be **below** `(1 − V_0)^K` (m = 4096,
/// `d = 1`, `K = P = 1`: 0.368 delivered against 0.500); the sweep's rate
/// is [`layout_fpr`]'s (and
/// [`ImportanceParams::predicted_fpr`](crate::importance::ImportanceParams::predicted_fpr)'s)
/// with [`Eviction::Sweep`], its zero fraction [`steady_zero_fraction`]'s.
///
/// `v0` is a probability: a value outside `[0, 1]` is clamped to it, so
/// the result is in `[0, 1]` (NaN stays NaN).
///
/// ```
/// use streambloom::analysis::importance::false_positive_bound;
/// assert!((false_positive_bound(0.058486, 5) - 0.7398).abs() < 1e-4);
/// assert_eq!(false_positive_bound(2.0, 5), 0.0); // v0 clamped to 1
/// ```
pub fn false_positive_bound(v0: f64, big_k: u32) -> f64 {
    libm::pow(1.0 - v0.clamp(0.0, 1.0), f64::from(big_k))
}

/// The steady-state fraction of zero cells of a filter of `m` cells, `k`
/// set an item at a level drawn from `levels` (as for [`layout_fpr`]) and
/// `p` decremented an item by `eviction`, on a stream of distinct keys:
/// `Z_1` of [`layout_fpr`]'s model, the probability that one cell, which
/// items touch at rate `K/m`, is zero. Blocks play no part in it.
///
/// For [`Eviction::Random`] and [`Eviction::Interleaved`] it is the exact
/// chain's [`zero_fraction`] (`V_0`); for [`Eviction::Sweep`] it is the
/// sweep's, which the chain does not model, since a cell is decremented
/// exactly once every `m/P` items: more zeros than `V_0` at light load
/// (m = 4096, `d = 1`, `K = P = 1`: 0.632, the chain's `V_0` 0.500),
/// fewer at heavy load.
///
/// Errors: `k` or `p` outside `1..=m`, or `levels` not as for
/// [`layout_fpr`].
///
/// ```
/// use streambloom::analysis::importance::{steady_zero_fraction, zero_fraction, Chain};
/// use streambloom::stable::Eviction;
/// let (m, k, p) = (4096, 1, 1);
/// let random = steady_zero_fraction(Eviction::Random, m, k, p, &[(1, 1.0)])?;
/// let v0 = zero_fraction(Chain::Exact, 1.0 / 4096.0, 1.0 / 4096.0, &[1.0])?;
/// assert!((random - v0).abs() < 1e-12);
/// let sweep = steady_zero_fraction(Eviction::Sweep, m, k, p, &[(1, 1.0)])?;
/// assert!((sweep - 0.632).abs() < 1e-3);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn steady_zero_fraction(
    eviction: Eviction,
    m: usize,
    k: u32,
    p: usize,
    levels: &[(u32, f64)],
) -> Result<f64> {
    check_shape(m, m, k, "in 1..=m", p, levels)?;
    let shape = Shape::new(eviction, m, m, p, levels, (k, 0));
    Ok(shape.zero(f64::from(k) / m as f64).clamp(0.0, 1.0))
}

/// The checks [`steady_zero_fraction`] and [`layout_fpr`] share: `k` in
/// `1..=block_cells` (`k_range` says so in the error), `p` in `1..=m`,
/// and `levels` as [`check_levels`] takes them.
fn check_shape(
    m: usize,
    block_cells: usize,
    k: u32,
    k_range: &'static str,
    p: usize,
    levels: &[(u32, f64)],
) -> Result<()> {
    if k == 0 || k as usize > block_cells {
        return Err(Error::param("k", k, k_range));
    }
    if p == 0 || p > m {
        return Err(Error::param("p", p, "in 1..=m"));
    }
    check_levels(levels)
}

/// `levels` as [`layout_fpr`] takes them: `(level, probability)` pairs,
/// levels strictly ascending from 1, probabilities finite, not negative,
/// summing to 1.
fn check_levels(levels: &[(u32, f64)]) -> Result<()> {
    if levels.is_empty()
        || levels[0].0 == 0
        || levels.windows(2).any(|w| w[0].0 >= w[1].0)
        || levels.iter().any(|&(_, x)| !(x >= 0.0 && x.is_finite()))
    {
        return Err(Error::param(
            "levels",
            levels.len(),
            "(level, probability) pairs, levels ascending from 1, none negative",
        ));
    }
    let total: f64 = levels.iter().map(|&(_, x)| x).sum();
    if (total - 1.0).abs() > 1e-9 {
        return Err(Error::param("levels", total, "probabilities summing to 1"));
    }
    Ok(())
}

/// The steady-state false-positive rate of a **blocked** Importance-aware
/// filter on a stream of distinct, uniformly hashed keys: `m` cells in
/// blocks of `block_cells`, each item setting `k` distinct cells (in one
/// block, or `⌈K/2⌉` and `⌊K/2⌋` in two, by `layout`) to `max(cell, v)`,
/// and `p` cells decremented per item by `eviction`. An item's level `v`
/// is drawn from `levels`: `(v, Pr[v])` pairs, levels strictly ascending
/// from 1, probabilities summing to 1 (sparse, so that cells of many bits
/// cost only the levels in use). What
/// [`ImportanceParams::plan`](crate::importance::ImportanceParams::plan)
/// plans by.
///
/// # The model
///
/// The Stable filter's blocked model
/// ([`layout_fpr`](crate::analysis::stable::layout_fpr)): a never-seen
/// key is a false positive when its cells are all non-zero, by
/// inclusion–exclusion over `Z_j`, the probability that `j` given cells of
/// a block are all zero, with the same rate `f` at which items touch some
/// of the `j` cells and the same block-simultaneous decrements; only `Z_j`
/// changes. A cell under `max(cell, v)` sets and saturating decrements
/// holds `max(0, max over its sets s of (v_s − decrements since s))`, so
/// the `j` cells are all zero iff every item that touched one of them at
/// level `v` has been followed by at least `v` decrements. Looking back
/// from now with `c` decrements counted so far, an item touching the cells
/// at a level above `c` (probability `a_c = f·Q_{c+1}` an item,
/// `Q_i = Pr[v ≥ i]`) ends the look-back as "not all zero":
///
/// - [`Eviction::Random`] (a decrement with probability `δ = P/m` an item,
///   after that item's own set, as the filter does): the count reaches
///   `c + 1` first with probability `y_c = (1 − a_c)δ/((1 − a_c)δ + a_c)`, so
///   `Z_j = Π_{c=0..Max−1} y_c`. For `j = 1` in one block (`f = K/m`) this
///   is the exact chain's [`zero_fraction`], and for every level `Max` the
///   Stable filter's `Z_j`. An upper bound where runs are shorter than a
///   block, as there; also for [`Eviction::Interleaved`], whose runs
///   decrement each block in part.
/// - [`Eviction::Sweep`] (the block decremented every `T = m/P` items, its
///   phase `U` uniform on `0..T`): the count is 0 for the last `U + 1`
///   items and then `c` for `T` items each, so
///   `Z_j = r_1(1 − r_1^T)/(T(1 − r_1)) · Π_{i=2..Max} r_i^T`, `r_i = 1 − f·Q_i`,
///   which for every level `Max` is the Stable filter's.
///
/// As the Stable filter's, the result is clamped to `[(1 − Z)^K, 1]`, `Z`
/// the zero fraction without blocks (`f = K/m`; for `Random` the exact
/// chain's [`zero_fraction`]): the bound that ignores blocks, which
/// also absorbs the alternating sum's rounding.
///
/// Errors: `block_cells` outside `1..=m`, `k` outside `1..=block_cells`, `p`
/// outside `1..=m`, or `levels` not as described.
///
/// ```
/// use streambloom::analysis::importance::{layout_fpr, zero_fraction, Chain};
/// use streambloom::analysis::stable;
/// use streambloom::stable::Eviction;
/// use streambloom::Layout;
/// let (m, b, k, p) = (16_384, 64, 5, 10);
/// // Every level Max = 7: the Stable filter's model.
/// let ours = layout_fpr(Layout::TwoBlocks, Eviction::Random, m, b, k, p, &[(7, 1.0)])?;
/// let theirs = stable::layout_fpr(Layout::TwoBlocks, Eviction::Random, m, b, k, p, 7)?;
/// assert!((ours - theirs).abs() < 1e-12);
/// // Levels spread over 1..=7 (IBF-MC): more zeros, fewer false positives,
/// // still above the paper's (1 − V_0)^K, which ignores the blocks.
/// let mc: Vec<(u32, f64)> = (1..=7).map(|v| (v, 1.0 / 7.0)).collect();
/// let fpr = layout_fpr(Layout::OneBlock, Eviction::Random, m, b, k, p, &mc)?;
/// let v0 = zero_fraction(Chain::Exact, p as f64 / m as f64, k as f64 / m as f64, &[1.0 / 7.0; 7])?;
/// assert!(fpr < ours && fpr > libm::pow(1.0 - v0, 5.0));
/// assert!(layout_fpr(Layout::OneBlock, Eviction::Random, m, b, k, p, &[(3, 0.5), (2, 0.5)]).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn layout_fpr(
    layout: Layout,
    eviction: Eviction,
    m: usize,
    block_cells: usize,
    k: u32,
    p: usize,
    levels: &[(u32, f64)],
) -> Result<f64> {
    if block_cells == 0 || block_cells > m {
        return Err(Error::param("block_cells", block_cells, "in 1..=m"));
    }
    check_shape(m, block_cells, k, "in 1..=block_cells", p, levels)?;
    let shape = Shape::new(eviction, m, block_cells, p, levels, layout.halves(k));
    let fpr = super::stable::merged_halves(shape.m / shape.b, block_cells, shape.halves, |kq| {
        shape.all_set(kq)
    });
    let paper = libm::pow(1.0 - shape.zero(k as f64 / m as f64), f64::from(k));
    Ok(fpr.clamp(paper.min(1.0), 1.0))
}

/// A filter's shape for [`layout_fpr`]'s sums.
struct Shape<'a> {
    eviction: Eviction,
    m: f64,
    b: f64,
    p: f64,
    /// The level distribution, `(v, Pr[v])` ascending.
    levels: &'a [(u32, f64)],
    /// The cells an item sets in its first and in its second block.
    halves: (u32, u32),
}

impl<'a> Shape<'a> {
    /// The model of `m` cells in blocks of `block_cells`, `p` decremented
    /// an insertion, items at `levels` setting `halves` cells.
    fn new(
        eviction: Eviction,
        m: usize,
        block_cells: usize,
        p: usize,
        levels: &'a [(u32, f64)],
        halves: (u32, u32),
    ) -> Shape<'a> {
        Shape {
            eviction,
            m: m as f64,
            b: block_cells as f64,
            p: p as f64,
            levels,
            halves,
        }
    }

    /// The probability that `kq` uniform distinct cells of a block are all
    /// non-zero: the Stable model's inclusion-exclusion
    /// ([`crate::analysis::stable`]) with this model's `Z_j`.
    fn all_set(&self, kq: u32) -> f64 {
        super::stable::all_set(self.m, self.b, self.halves, kq, |f| self.zero(f))
    }

    /// `Z_j`: given cells that items touch at rate `f` (at a level drawn
    /// from `levels`) are all zero (see [`layout_fpr`]). `Q_i` is constant
    /// on each run of `i` from one level in use (exclusive) to the next
    /// (inclusive), so each run is one factor raised to its length.
    fn zero(&self, f: f64) -> f64 {
        let d = (self.p / self.m).min(1.0);
        let t = self.m / self.p;
        let mut tail: f64 = 1.0;
        let mut below = 0u32;
        let mut ln_z = 0.0;
        for &(level, prob) in self.levels {
            let run = f64::from(level - below);
            let a = f * tail.max(0.0);
            if a >= 1.0 {
                return 0.0;
            }
            match self.eviction {
                Eviction::Random | Eviction::Interleaved => {
                    let y = (1.0 - a) * d / ((1.0 - a) * d + a);
                    ln_z += run * libm::log(y);
                }
                Eviction::Sweep => {
                    let ln_r = libm::log1p(-a);
                    if below == 0 {
                        // i = 1: E_U[r^(U+1)] = r(1 − r^T)/(T(1 − r)).
                        let first = if a > 0.0 {
                            -libm::expm1(t * ln_r) / (t * a)
                        } else {
                            1.0
                        };
                        ln_z += ln_r + libm::log(first) + (run - 1.0) * t * ln_r;
                    } else {
                        ln_z += run * t * ln_r;
                    }
                }
            }
            tail -= prob;
            below = level;
        }
        libm::exp(ln_z)
    }
}

/// IBF-2C's `V_0` in closed form (the paper's chain): half the items set
/// `Max`, half `h = ⌊Max/2⌋`, so `V_0 = r₁^h·r₂^{Max−h}`, `r₁ = p'/(p' + k)`,
/// `r₂ = p'/(p' + k/2)`, `p' = p(1 − k)`.
///
/// The domain is [`zero_fraction`]'s, `p` and `k` in `(0, 1]`, with
/// `h ≤ Max`. Outside it the result is still a probability: `p` and `k`
/// are clamped to `[0, 1]`, `k = 0` (no sets) gives 1, the empty cell's,
/// and `h > Max` is taken as `h = Max` (NaN stays NaN).
///
/// ```
/// use streambloom::analysis::importance::two_class_zero_fraction;
/// // Table II: m = 16384, K = 5, P = 10, Max = 7, h = 3.
/// let v0 = two_class_zero_fraction(10.0 / 16384.0, 5.0 / 16384.0, 7, 3);
/// assert!((v0 - 0.121296).abs() < 1e-6);
/// assert_eq!(two_class_zero_fraction(0.0, 0.0, 7, 3), 1.0); // nothing happens
/// assert_eq!(two_class_zero_fraction(0.0, 0.5, 7, 3), 0.0); // nothing decrements
/// ```
pub fn two_class_zero_fraction(p: f64, k: f64, max: u32, h: u32) -> f64 {
    let (p, k) = (p.clamp(0.0, 1.0), k.clamp(0.0, 1.0));
    if k == 0.0 {
        return 1.0;
    }
    let h = h.min(max);
    let p1 = p * (1.0 - k);
    let r1 = p1 / (p1 + k);
    let r2 = p1 / (p1 + k / 2.0);
    (libm::pow(r1, f64::from(h)) * libm::pow(r2, f64::from(max - h))).clamp(0.0, 1.0)
}

/// The paper's printed IBF-2C `V_{M/2} = (k/2)/(p' + k/2)·(1 − A − B)`
/// (line 173, `A = 1 − B`, `B = r₂^{Max−h}`): **wrong as printed**, it is
/// always 0 (up to rounding). Kept to show it; the correct value is
/// `k·B/(p' + k)`, which [`stationary`] gives.
///
/// The domain is [`two_class_zero_fraction`]'s, and so is the clamping of
/// `p`, `k` and `h`; `k = 0` (no sets) gives 0, and the result is clamped
/// to `[0, 1]` (the rounding of `1 − A − B` can fall below 0).
///
/// ```
/// use streambloom::analysis::importance::{printed_two_class_half, stationary, Chain};
/// let (p, k) = (10.0 / 16384.0, 5.0 / 16384.0);
/// let mut v = [0.0; 8];
/// let q = [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5]; // levels h = 3 and Max = 7
/// stationary(Chain::Paper, p, k, &q, &mut v)?;
/// assert!(printed_two_class_half(p, k, 7, 3).abs() < 1e-12);
/// assert!(v[3] > 0.01);
/// assert_eq!(printed_two_class_half(0.0, 0.0, 7, 3), 0.0);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn printed_two_class_half(p: f64, k: f64, max: u32, h: u32) -> f64 {
    let (p, k) = (p.clamp(0.0, 1.0), k.clamp(0.0, 1.0));
    if k == 0.0 {
        return 0.0;
    }
    let p1 = p * (1.0 - k);
    let b = libm::pow(p1 / (p1 + k / 2.0), f64::from(max - h.min(max)));
    let a = 1.0 - b;
    ((k / 2.0) / (p1 + k / 2.0) * (1.0 - a - b)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// The stationary distribution by power iteration of the chain's
    /// transition matrix, built from its definition.
    fn by_power_iteration(chain: Chain, p: f64, k: f64, q: &[f64]) -> Vec<f64> {
        let n = q.len() + 1;
        let mut t = vec![vec![0.0; n]; n];
        for (i, row) in t.iter_mut().enumerate() {
            match chain {
                Chain::Paper => {
                    // Down with p(1 − k), up to max(i, v) with k·q_v.
                    if i > 0 {
                        row[i - 1] += p * (1.0 - k);
                    }
                    for (v, &qv) in q.iter().enumerate() {
                        row[(v + 1).max(i)] += k * qv;
                    }
                    let out: f64 = row.iter().sum::<f64>() - row[i];
                    row[i] = 1.0 - out;
                }
                Chain::Exact => {
                    // Decrement with p, then set with k to max(cell, v).
                    for (d, pd) in [(i.saturating_sub(1), p), (i, 1.0 - p)] {
                        row[d] += pd * (1.0 - k);
                        for (v, &qv) in q.iter().enumerate() {
                            row[(v + 1).max(d)] += pd * k * qv;
                        }
                    }
                }
            }
        }
        let mut v = vec![1.0 / n as f64; n];
        for _ in 0..200_000 {
            let mut next = vec![0.0; n];
            for (i, row) in t.iter().enumerate() {
                for (j, &x) in row.iter().enumerate() {
                    next[j] += v[i] * x;
                }
            }
            v = next;
        }
        v
    }

    fn settings() -> Vec<(f64, f64, Vec<f64>)> {
        let uniform7 = vec![1.0 / 7.0; 7];
        let table2 = {
            // f = ⌈7·imp/50⌉, imp uniform on 1..=50: (7,7,7,7,7,7,8)/50.
            let mut q = vec![7.0 / 50.0; 7];
            q[6] = 8.0 / 50.0;
            q
        };
        let two_class = vec![0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5];
        let skewed3 = vec![0.6, 0.3, 0.1];
        vec![
            (10.0 / 16384.0, 5.0 / 16384.0, uniform7),
            (10.0 / 16384.0, 5.0 / 16384.0, table2),
            (10.0 / 16384.0, 5.0 / 16384.0, two_class),
            (0.01, 0.02, skewed3),
        ]
    }

    #[test]
    #[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
    fn closed_forms_match_power_iteration() {
        for chain in [Chain::Paper, Chain::Exact] {
            for (p, k, q) in settings() {
                let want = by_power_iteration(chain, p, k, &q);
                let mut got = vec![0.0; q.len() + 1];
                stationary(chain, p, k, &q, &mut got).unwrap();
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-9, "{chain:?} {q:?}: {got:?} vs {want:?}");
                }
                let v0 = zero_fraction(chain, p, k, &q).unwrap();
                assert!((v0 - want[0]).abs() < 1e-9, "{chain:?} {q:?}");
            }
        }
    }

    #[test]
    fn table_ii_values() {
        let (p, k) = (10.0 / 16384.0, 5.0 / 16384.0);
        let mut q = [7.0 / 50.0; 7];
        q[6] = 8.0 / 50.0;
        // The digest's values for IBF-MC with f = ⌈7·imp/50⌉.
        let paper = zero_fraction(Chain::Paper, p, k, &q).unwrap();
        let exact = zero_fraction(Chain::Exact, p, k, &q).unwrap();
        assert!((paper - 0.175292).abs() < 1e-6, "{paper}");
        assert!((exact - 0.175317).abs() < 1e-6, "{exact}");
        let two = [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5];
        let v0 = zero_fraction(Chain::Paper, p, k, &two).unwrap();
        assert!((v0 - two_class_zero_fraction(p, k, 7, 3)).abs() < 1e-12);
        assert!((zero_fraction(Chain::Exact, p, k, &two).unwrap() - 0.121311).abs() < 1e-6);
    }

    /// Every level `Max`: the Stable filter's blocked model, in both
    /// layouts and evictions, over short and long runs, few and many cells
    /// per item.
    #[test]
    fn one_level_is_the_stable_model() {
        for layout in [Layout::OneBlock, Layout::TwoBlocks] {
            for eviction in [Eviction::Random, Eviction::Sweep] {
                for (m, b, k, p, max) in [
                    (1 << 16, 64, 5, 67, 7),
                    (1 << 16, 32, 8, 3, 3),
                    (16_384, 64, 5, 10, 7),
                    (4096, 128, 2, 500, 15),
                    (1024, 16, 1, 1, 1),
                ] {
                    let ours = layout_fpr(layout, eviction, m, b, k, p, &[(max, 1.0)]).unwrap();
                    let theirs =
                        crate::analysis::stable::layout_fpr(layout, eviction, m, b, k, p, max)
                            .unwrap();
                    assert!(
                        (ours - theirs).abs() <= 1e-12 * theirs.max(1e-300) + 1e-15,
                        "{layout:?} {eviction:?} {m} {b} {k} {p} {max}: {ours} vs {theirs}"
                    );
                }
            }
        }
    }

    /// One cell an item in one block: the rate is `1 − V_0`, the exact
    /// chain's, whatever the levels (a block's cells play no part).
    #[test]
    fn one_cell_is_the_exact_chain() {
        let (m, p) = (16_384, 10);
        for (_, _, q) in settings() {
            let levels: Vec<(u32, f64)> = (1..=q.len() as u32)
                .zip(q.iter().copied())
                .filter(|&(_, x)| x > 0.0)
                .collect();
            let fpr = layout_fpr(Layout::OneBlock, Eviction::Random, m, 64, 1, p, &levels).unwrap();
            let v0 = zero_fraction(Chain::Exact, p as f64 / m as f64, 1.0 / m as f64, &q).unwrap();
            assert!(
                (fpr - (1.0 - v0)).abs() < 1e-12,
                "{q:?}: {fpr} vs {}",
                1.0 - v0
            );
        }
    }

    /// Lower levels keep more cells zero: the rate falls when mass moves
    /// to a lower level, under both evictions.
    #[test]
    fn lower_levels_give_fewer_false_positives() {
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let at = |levels: &[(u32, f64)]| {
                layout_fpr(Layout::TwoBlocks, eviction, 16_384, 64, 5, 10, levels).unwrap()
            };
            let sbf = at(&[(7, 1.0)]);
            let two_class = at(&[(3, 0.5), (7, 0.5)]);
            let mc: Vec<(u32, f64)> = (1..=7).map(|v| (v, 1.0 / 7.0)).collect();
            assert!(at(&mc) < two_class && two_class < sbf, "{eviction:?}");
        }
    }

    /// Wide cells (`d` = 12..=16, up to `Max = 65535` levels): every entry
    /// finite and not negative, summing to 1, `out[0]` the closed form.
    /// The recursion up from an unnormalized `V_0 = 1` overflowed here
    /// (W16, `d = 16`, m = 65536, K = 4, P = 64, IBF-MC: 52 580 NaN).
    #[test]
    #[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
    fn stationary_is_a_distribution_at_wide_cells() {
        let m = 65_536.0;
        let mut cases: Vec<(f64, f64, Vec<f64>)> = Vec::new();
        for d in 12..=16u32 {
            let max = (1usize << d) - 1;
            let uniform = vec![1.0 / max as f64; max];
            // Two classes, and levels ∝ the level (mass at the top).
            let mut two = vec![0.0; max];
            two[max / 2 - 1] = 0.5;
            two[max - 1] = 0.5;
            let total = (max * (max + 1) / 2) as f64;
            let rising: Vec<f64> = (1..=max).map(|v| v as f64 / total).collect();
            for (big_k, big_p) in [(4.0, 64.0), (8.0, 1.0), (1.0, 4096.0)] {
                cases.push((big_p / m, big_k / m, uniform.clone()));
                cases.push((big_p / m, big_k / m, two.clone()));
                cases.push((big_p / m, big_k / m, rising.clone()));
            }
        }
        // The audit's input first.
        cases.insert(0, (64.0 / m, 4.0 / m, vec![1.0 / 65_535.0; 65_535]));
        for chain in [Chain::Exact, Chain::Paper] {
            for (p, k, q) in &cases {
                let mut out = vec![0.0; q.len() + 1];
                stationary(chain, *p, *k, q, &mut out).unwrap();
                let bad = out
                    .iter()
                    .filter(|x| !(x.is_finite() && **x >= 0.0))
                    .count();
                let sum: f64 = out.iter().sum();
                let v0 = zero_fraction(chain, *p, *k, q).unwrap();
                let ctx = (chain, p * m, k * m, q.len());
                assert_eq!(bad, 0, "{ctx:?}");
                assert!((sum - 1.0).abs() < 1e-9, "{ctx:?}: sum {sum}");
                assert!(
                    (out[0] - v0).abs() <= 1e-9 * v0 + 1e-300,
                    "{ctx:?}: {} vs {v0}",
                    out[0]
                );
            }
        }
    }

    /// No step down (`d_i = 0`, `k = 1`): the distribution a cell starting
    /// at zero reaches, finite, and the limit of `k → 1`.
    #[test]
    fn stationary_without_a_step_down_is_finite() {
        let mut v = [0.0; 4];
        stationary(Chain::Paper, 1.0, 1.0, &[0.0, 0.0, 1.0], &mut v).unwrap();
        assert_eq!(v, [0.0, 0.0, 0.0, 1.0]);
        stationary(Chain::Paper, 0.5, 1.0, &[1.0, 0.0, 0.0], &mut v).unwrap();
        assert_eq!(v, [0.0, 1.0, 0.0, 0.0]);
        // The exact chain at k = p = 1: down from 1 only (`Q_1 = 1`);
        // each item leaves the cell at 1 or 2 by its level.
        stationary(Chain::Exact, 1.0, 1.0, &[0.2, 0.8, 0.0], &mut v).unwrap();
        for (a, b) in v.iter().zip([0.0, 0.2, 0.8, 0.0]) {
            assert!((a - b).abs() < 1e-15, "{v:?}");
        }
        assert_eq!(
            zero_fraction(Chain::Paper, 1.0, 1.0, &[1.0, 0.0, 0.0]).unwrap(),
            0.0
        );
        // The limit: k just below 1.
        let mut near = [0.0; 4];
        stationary(Chain::Paper, 1.0, 1.0 - 1e-12, &[0.0, 0.0, 1.0], &mut near).unwrap();
        for (a, b) in near.iter().zip([0.0, 0.0, 0.0, 1.0]) {
            assert!((a - b).abs() < 1e-9, "{near:?}");
        }
    }

    /// The helpers' results are probabilities, inside their domain and out
    /// (they returned NaN at `p = k = 0`, and −1 for `v0 = 2`).
    #[test]
    fn helpers_return_probabilities() {
        assert_eq!(two_class_zero_fraction(0.0, 0.0, 7, 3), 1.0);
        assert_eq!(printed_two_class_half(0.0, 0.0, 7, 3), 0.0);
        assert_eq!(false_positive_bound(2.0, 5), 0.0);
        assert_eq!(false_positive_bound(-1.0, 3), 1.0);
        let grid = [-1.0, 0.0, 1e-300, 1e-4, 0.5, 1.0, 2.0, f64::INFINITY];
        for &p in &grid {
            for &k in &grid {
                for (max, h) in [(7, 3), (1, 0), (0, 0), (3, 9), (65_535, 32_767)] {
                    for x in [
                        two_class_zero_fraction(p, k, max, h),
                        printed_two_class_half(p, k, max, h),
                    ] {
                        assert!((0.0..=1.0).contains(&x), "{p} {k} {max} {h}: {x}");
                    }
                }
            }
            for big_k in [0, 1, 5, 64] {
                let b = false_positive_bound(p, big_k);
                assert!((0.0..=1.0).contains(&b), "{p} {big_k}: {b}");
            }
        }
    }

    /// `steady_zero_fraction`: the exact chain's `V_0` for random and
    /// interleaved eviction; for the sweep another; its bad input.
    #[test]
    fn steady_zero_fraction_is_the_chain_for_random_eviction() {
        let (m, p) = (16_384usize, 10usize);
        for (_, _, q) in settings() {
            let levels: Vec<(u32, f64)> = (1..=q.len() as u32)
                .zip(q.iter().copied())
                .filter(|&(_, x)| x > 0.0)
                .collect();
            for k in [1u32, 5] {
                let v0 = zero_fraction(Chain::Exact, p as f64 / m as f64, k as f64 / m as f64, &q)
                    .unwrap();
                for eviction in [Eviction::Random, Eviction::Interleaved] {
                    let z = steady_zero_fraction(eviction, m, k, p, &levels).unwrap();
                    assert!((z - v0).abs() < 1e-12, "{q:?} {k}: {z} vs {v0}");
                }
                let sweep = steady_zero_fraction(Eviction::Sweep, m, k, p, &levels).unwrap();
                assert!((sweep - v0).abs() > 1e-3, "{q:?} {k}: {sweep} vs {v0}");
            }
        }
        let one = [(1, 1.0)];
        assert!(steady_zero_fraction(Eviction::Random, 64, 0, 1, &one).is_err());
        assert!(steady_zero_fraction(Eviction::Random, 64, 65, 1, &one).is_err());
        assert!(steady_zero_fraction(Eviction::Random, 64, 1, 0, &one).is_err());
        assert!(steady_zero_fraction(Eviction::Random, 64, 1, 65, &one).is_err());
        assert!(steady_zero_fraction(Eviction::Random, 64, 1, 1, &[(0, 1.0)]).is_err());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let q = [0.5, 0.5];
        let mut out = [0.0; 3];
        assert!(stationary(Chain::Paper, 0.0, 0.1, &q, &mut out).is_err());
        assert!(stationary(Chain::Paper, 0.1, f64::NAN, &q, &mut out).is_err());
        assert!(stationary(Chain::Paper, 0.1, 0.1, &[0.5, 0.4], &mut out).is_err());
        assert!(stationary(Chain::Paper, 0.1, 0.1, &[1.5, -0.5], &mut out).is_err());
        assert!(stationary(Chain::Paper, 0.1, 0.1, &q, &mut [0.0; 2]).is_err());
        assert!(zero_fraction(Chain::Exact, 0.1, 0.1, &[]).is_err());
        let fpr = |b, k, p, levels: &[(u32, f64)]| {
            layout_fpr(Layout::OneBlock, Eviction::Random, 1024, b, k, p, levels)
        };
        let one = [(3, 1.0)];
        assert!(fpr(64, 3, 4, &one).is_ok());
        assert!(fpr(0, 3, 4, &one).is_err());
        assert!(fpr(2048, 3, 4, &one).is_err());
        assert!(fpr(64, 0, 4, &one).is_err());
        assert!(fpr(64, 65, 4, &one).is_err());
        assert!(fpr(64, 3, 0, &one).is_err());
        assert!(fpr(64, 3, 1025, &one).is_err());
        assert!(fpr(64, 3, 4, &[]).is_err());
        assert!(fpr(64, 3, 4, &[(0, 1.0)]).is_err());
        assert!(fpr(64, 3, 4, &[(2, 0.5), (2, 0.5)]).is_err());
        assert!(fpr(64, 3, 4, &[(2, 0.5), (3, 0.4)]).is_err());
        assert!(fpr(64, 3, 4, &[(2, f64::NAN), (3, 1.0)]).is_err());
        assert!(fpr(64, 3, 4, &[(2, -0.5), (3, 1.5)]).is_err());
    }
}
