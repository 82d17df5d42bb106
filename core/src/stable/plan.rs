//! Parameters of a [`StableBloom`](super::StableBloom): validation, the
//! stable-point formulas of both eviction policies, and the planner that
//! picks `d`, `K` and `P` for a memory budget and a target false-positive
//! rate.

use crate::{store, Block, Error, Result, Width};

/// How a [`StableBloom`](super::StableBloom) evicts: which `P` cells it
/// decrements for each item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Eviction {
    /// `P` consecutive cells from a uniformly random start, wrapping past
    /// the last cell: the paper's policy (Deng & Rafiei 2006). Each cell is
    /// decremented with probability `P/m` per item, independently of the
    /// past.
    #[default]
    Random,
    /// `P` consecutive cells from a pointer that advances `P` cells per
    /// item (wrapping): every cell is decremented exactly once every `m/P`
    /// items. It spares the second random cache line per item and gives a
    /// hard window without false negatives (see the module docs), at the
    /// price of a different stable point ([`stable_point`]).
    Sweep,
}

/// The parameters of a [`StableBloom`](super::StableBloom).
///
/// `cells` is rounded up to whole blocks: the filter's effective cell count
/// `m` is `blocks × W::CELLS` ([`StableParams::effective_cells`]), and every
/// formula uses that `m`.
///
/// ```
/// use streambloom::stable::{Eviction, StableParams};
/// use streambloom::W4;
/// let p = StableParams { cells: 1000, bits: 3, k: 3, p: 10, eviction: Eviction::Random };
/// assert_eq!(p.effective_cells::<W4>(), Ok(1024)); // 8 blocks of 128 cells
/// assert!(StableParams { k: 0, ..p }.effective_cells::<W4>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StableParams {
    /// Requested number of cells (at least 1), rounded up to whole blocks.
    pub cells: usize,
    /// Bits `d` a cell uses: cells are set to `Max = 2^d - 1`.
    /// `1 <= d <= W::BITS`.
    pub bits: u32,
    /// Cells `K` set per item, all in the item's block: `1 <= K <= W::CELLS`.
    pub k: u32,
    /// Cells `P` decremented per item: `1 <= P <= m`.
    pub p: usize,
    /// Which cells are decremented.
    pub eviction: Eviction,
}

impl StableParams {
    /// Checks the parameters for cells of width `W` and returns the number
    /// of blocks they need.
    pub fn blocks<W: Width>(&self) -> Result<usize> {
        if self.bits == 0 || self.bits > W::BITS {
            return Err(Error::param("bits", "must be in 1..=W::BITS"));
        }
        if self.k == 0 {
            return Err(Error::param("k", "must be at least 1"));
        }
        if self.k as usize > W::CELLS {
            return Err(Error::param("k", "must be at most the cells of a block"));
        }
        let blocks = store::blocks_for::<W>(self.cells)?;
        let m = blocks
            .checked_mul(W::CELLS)
            .ok_or(Error::param("cells", "is too large"))?;
        if self.p == 0 {
            return Err(Error::param("p", "must be at least 1"));
        }
        if self.p > m {
            return Err(Error::param("p", "must be at most the cell count"));
        }
        Ok(blocks)
    }

    /// The effective cell count `m = blocks × W::CELLS`, after validation.
    pub fn effective_cells<W: Width>(&self) -> Result<usize> {
        Ok(self.blocks::<W>()? * W::CELLS)
    }

    /// `Max = 2^d - 1`, the value an item sets its cells to.
    pub fn max(&self) -> u32 {
        if self.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        }
    }

    /// The expected fraction of zero cells once the filter is stable, for
    /// `m` cells, under a stream of distinct keys ([`stable_point`]); an
    /// error where [`stable_point`] refuses the parameters.
    pub fn stable_point(&self, m: usize) -> Result<f64> {
        stable_point(self.eviction, m, self.k, self.p, self.max())
    }

    /// The paper's false-positive bound `(1 - stable_point)^K` for `m`
    /// cells (Deng & Rafiei §4, as summarized in importance-aware-bloom-filter.txt
    /// §II.A), kept for comparison. It treats an item's `K` cells as
    /// independent; in the blocked layout they are not, and the filter
    /// delivers more: use [`predicted_fpr`](Self::predicted_fpr).
    pub fn paper_false_positive_bound(&self, m: usize) -> Result<f64> {
        Ok(libm::pow(1.0 - self.stable_point(m)?, f64::from(self.k)))
    }

    /// The steady-state false-positive rate the **blocked** filter of width
    /// `W` delivers on distinct keys ([`blocked_fpr`]): exact for
    /// [`Eviction::Sweep`], an upper bound for [`Eviction::Random`] (tight
    /// when eviction runs span many blocks).
    ///
    /// ```
    /// use streambloom::stable::{Eviction, StableParams};
    /// use streambloom::W8;
    /// let p = StableParams { cells: 1 << 16, bits: 3, k: 5, p: 67, eviction: Eviction::Random };
    /// let blocked = p.predicted_fpr::<W8>().unwrap();
    /// // The paper's bound is about 1 %; a blocked filter delivers more.
    /// assert!(p.paper_false_positive_bound(1 << 16)? < 0.0098);
    /// assert!(blocked > 0.02);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn predicted_fpr<W: Width>(&self) -> Result<f64> {
        let m = self.effective_cells::<W>()?;
        blocked_fpr(self.eviction, m, W::CELLS, self.k, self.p, self.max())
    }

    /// These parameters with `p` set to the smallest `P` (in `1..=m`) whose
    /// [`predicted_fpr`](Self::predicted_fpr) (the blocked filter's
    /// steady-state rate) is at most `target_fpr`, found by bisection (the
    /// rate falls as `P` grows). Errors: invalid parameters (other than
    /// `p`), `target_fpr` outside `(0, 1)`, or a target that even `P = m`
    /// misses.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, StableParams};
    /// use streambloom::W4;
    /// let p = StableParams { cells: 1 << 20, bits: 3, k: 3, p: 1, eviction: Eviction::Random };
    /// let planned = p.with_smallest_p::<W4>(0.01).unwrap();
    /// assert!(planned.predicted_fpr::<W4>().unwrap() <= 0.01);
    /// let one_less = StableParams { p: planned.p - 1, ..p };
    /// assert!(one_less.predicted_fpr::<W4>().unwrap() > 0.01);
    /// ```
    pub fn with_smallest_p<W: Width>(self, target_fpr: f64) -> Result<StableParams> {
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", "must be in (0, 1)"));
        }
        let m = StableParams { p: 1, ..self }.effective_cells::<W>()?;
        let meets = |p: usize| {
            let params = StableParams { p, ..self };
            blocked_fpr(params.eviction, m, W::CELLS, params.k, p, params.max())
                .is_ok_and(|fpr| fpr <= target_fpr)
        };
        if !meets(m) {
            return Err(Error::param(
                "target_fpr",
                "is not reachable with these cells",
            ));
        }
        let (mut lo, mut hi) = (1usize, m);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if meets(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(StableParams { p: lo, ..self })
    }

    /// Plans a filter of width `W` in `memory_bytes` bytes (rounded down to
    /// whole 64-byte blocks) whose steady-state false-positive rate on
    /// distinct keys, as the blocked filter delivers it
    /// ([`predicted_fpr`](Self::predicted_fpr)), is at most `target_fpr`,
    /// under `eviction`.
    ///
    /// **What it optimizes.** A Stable filter trades false positives for
    /// false negatives: more eviction (larger `P`) means more zero cells,
    /// so fewer false positives, but a duplicate is forgotten sooner. With
    /// the false-positive rate pinned at the target, the planner maximizes
    /// how long an item is remembered: the expected lifetime of a set cell,
    /// `Max·m/P` items for `Random` (`Max` decrements at rate `P/m`) and
    /// `(Max - 1/2)·m/P` for `Sweep` (`Max - 1` whole sweeps and half of
    /// one). That is the fewest false negatives for duplicates at a given
    /// gap, and for `Sweep` the longest window without false negatives
    /// (`(Max - 1)·m/P + 1`, see the module docs).
    ///
    /// For every `d` in `1..=W::BITS` and `K` in `1..=min(W::CELLS, 32)` it
    /// takes the smallest `P` meeting the target
    /// ([`with_smallest_p`](Self::with_smallest_p)), then keeps the
    /// candidate with the longest lifetime; ties go to the smaller `d`, then
    /// the smaller `K`. Candidates whose `P` exceeds
    /// [`PLAN_MAX_RUN_BLOCKS`] blocks' cells are skipped: a larger `d`
    /// always buys a slightly longer lifetime with a proportionally larger
    /// `P` (at 1 MiB of 16-bit cells, `d = 15` wants `P` ≈ 460 000 cells
    /// per item), and the eviction run is the per-item cost. For such
    /// settings pick `d` and `K` yourself and call
    /// [`with_smallest_p`](Self::with_smallest_p). With `Random` the model is an upper bound where
    /// runs are shorter than a block, so the plan errs on the side of fewer
    /// false positives there.
    ///
    /// Errors: fewer than 64 bytes, `target_fpr` outside `(0, 1)`, or no
    /// `(d, K, P)` reaching the target.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, StableParams};
    /// use streambloom::W8;
    /// let p = StableParams::plan::<W8>(1 << 20, 0.01, Eviction::Random).unwrap();
    /// assert_eq!(p.effective_cells::<W8>().unwrap(), 1 << 20);
    /// assert!(p.predicted_fpr::<W8>().unwrap() <= 0.01);
    /// assert!(StableParams::plan::<W8>(1 << 20, 0.0, Eviction::Random).is_err());
    /// ```
    pub fn plan<W: Width>(
        memory_bytes: usize,
        target_fpr: f64,
        eviction: Eviction,
    ) -> Result<StableParams> {
        let blocks = memory_bytes / Block::BYTES;
        if blocks == 0 {
            return Err(Error::param("memory_bytes", "must hold at least one block"));
        }
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", "must be in (0, 1)"));
        }
        if memory_bytes > isize::MAX as usize {
            return Err(Error::param(
                "memory_bytes",
                "must be at most isize::MAX bytes (the most one allocation can hold)",
            ));
        }
        let m = blocks.checked_mul(W::CELLS).ok_or(Error::param(
            "memory_bytes",
            "holds more cells than a usize can count",
        ))?;
        let max_p = PLAN_MAX_RUN_BLOCKS * W::CELLS;
        let mut best: Option<(f64, StableParams)> = None;
        for bits in 1..=W::BITS {
            for k in 1..=(W::CELLS.min(32) as u32) {
                let candidate = StableParams {
                    cells: m,
                    bits,
                    k,
                    p: 1,
                    eviction,
                };
                let Ok(params) = candidate.with_smallest_p::<W>(target_fpr) else {
                    continue;
                };
                if params.p > max_p {
                    continue;
                }
                let sweeps = match eviction {
                    Eviction::Random => f64::from(params.max()),
                    Eviction::Sweep => f64::from(params.max()) - 0.5,
                };
                let lifetime = sweeps * m as f64 / params.p as f64;
                if best.is_none_or(|(b, _)| lifetime > b) {
                    best = Some((lifetime, params));
                }
            }
        }
        best.map(|(_, p)| p).ok_or(Error::param(
            "target_fpr",
            "is not reachable with this memory",
        ))
    }
}

/// The longest eviction run [`StableParams::plan`] chooses, in blocks: an
/// item's eviction then reads and writes at most this many consecutive
/// cache lines (plus one when the run straddles a block boundary).
pub const PLAN_MAX_RUN_BLOCKS: usize = 16;

/// The steady-state false-positive rate of a **blocked** stable filter on
/// a stream of distinct, uniformly hashed keys: `m` cells in blocks of
/// `block_cells`, each item setting `k` distinct cells of one block to
/// `max` and decrementing `p` cells.
///
/// # The model
///
/// A never-seen key picks a uniform block and a uniform `K`-subset `S` of
/// its `B` cells; it is a false positive when every cell of `S` is
/// non-zero. A cell is zero exactly when it has been decremented at least
/// `Max` times since it was last set. By inclusion–exclusion over the
/// subsets `T ⊆ S`,
///
/// `FPR = Σ_{j=0..K} (-1)^j C(K, j) Z_j`,
///
/// `Z_j` the probability that `j` given cells of a block are all zero.
/// The cells of a block share its inserts (each insert into the block sets
/// a uniform `K`-subset, so it misses `j` given cells with probability
/// `ρ_j = C(B-j, K)/C(B, K)`, and an insert reaches the block with
/// probability `B/m` per item) — the block-load correlation the paper's
/// bound ignores. The model also takes a block's decrements as
/// simultaneous for all its cells:
///
/// - [`Eviction::Sweep`]: the pointer crosses a block in `⌈B/P⌉`
///   consecutive items once every `T = m/P`, so this is exact up to that
///   stagger: the `j` cells are zero when no insert touched them during the
///   last `(Max-1)·T + U + 1` items, `U` the block's phase, uniform on
///   `0..T`: `Z_j = r^((Max-1)T+1) (1 - r^T) / (T(1 - r))` with
///   `r = 1 - (B/m)(1 - ρ_j)` (for `j = 1` this is [`stable_point`]).
/// - [`Eviction::Random`]: a block is decremented with probability `P/m`
///   per item (each cell's true rate), so, looking back from now, the
///   `Max`-th decrement must come before any insert touching the `j` cells:
///   `Z_j = y^Max`, `y = (1-f)δ / (f + (1-f)δ)`, `f = (B/m)(1 - ρ_j)`,
///   `δ = P/m`. For `j = 1` this is the paper's stable point. A run that
///   covers a whole block decrements its cells together, as modelled; a
///   run that covers part of it decrements them at different times, which
///   correlates them less, so the model is an **upper bound**, tight when
///   `P` is many blocks long. Measured (m = 2^16, 34 settings of `W`, `d`,
///   `K`, `P`; `stable::tests::report_blocked_model`): 1.0–1.25× the
///   filter's rate for `P >= 2B`, 1.05–1.5× for `P` around `B/2..B`, and
///   2–24× for runs of a few cells with many cells per item.
///
/// Measured the same way, Sweep agrees with the filter within the
/// measurement's noise at all 34 settings. For `K = 1` the model is the
/// paper's `1 - z`. The result
/// is clamped to `[paper bound, 1]`, which absorbs the
/// alternating sum's rounding (about `10^-16·(1+z)^K`; below `10^-9` for
/// `K <= 32`).
///
/// Errors: `block_cells` outside `1..=m`, `k` outside `1..=block_cells`,
/// `p` outside `1..=m`, or `max = 0`.
///
/// ```
/// use streambloom::stable::{blocked_fpr, stable_point, Eviction};
/// let (m, b, k, p, max) = (1 << 20, 64, 5, 67, 7);
/// let blocked = blocked_fpr(Eviction::Sweep, m, b, k, p, max)?;
/// let paper = libm::pow(1.0 - stable_point(Eviction::Sweep, m, k, p, max)?, 5.0);
/// assert!(blocked > 1.5 * paper);
/// // With one cell per item there is nothing to correlate.
/// let one = blocked_fpr(Eviction::Random, m, b, 1, 10, max)?;
/// assert!((one - (1.0 - stable_point(Eviction::Random, m, 1, 10, max)?)).abs() < 1e-12);
/// assert!(blocked_fpr(Eviction::Random, m, b, 0, p, max).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn blocked_fpr(
    eviction: Eviction,
    m: usize,
    block_cells: usize,
    k: u32,
    p: usize,
    max: u32,
) -> Result<f64> {
    if block_cells == 0 || block_cells > m {
        return Err(Error::param("block_cells", "must be in 1..=m"));
    }
    if k == 0 || k as usize > block_cells {
        return Err(Error::param("k", "must be in 1..=block_cells"));
    }
    if p == 0 || p > m {
        return Err(Error::param("p", "must be in 1..=m"));
    }
    if max == 0 {
        return Err(Error::param("max", "must be at least 1"));
    }
    let paper = libm::pow(1.0 - stable_point_of(eviction, m, k, p, max), f64::from(k));
    let (mf, b, pf, maxf) = (m as f64, block_cells as f64, p as f64, f64::from(max));
    let insert = b / mf;
    let mut sum = 0.0;
    let mut binom = 1.0;
    for j in 0..=k {
        let jf = f64::from(j);
        let rho: f64 = (0..k)
            .map(|i| ((b - jf - f64::from(i)) / (b - f64::from(i))).max(0.0))
            .product();
        let f = insert * (1.0 - rho);
        let z = if j == 0 {
            1.0
        } else {
            match eviction {
                Eviction::Random => {
                    let d = (pf / mf).min(1.0);
                    let y = (1.0 - f) * d / (f + (1.0 - f) * d);
                    libm::pow(y, maxf)
                }
                Eviction::Sweep => {
                    let t = mf / pf;
                    if f >= 1.0 {
                        0.0
                    } else {
                        let ln_r = libm::log1p(-f);
                        let head = libm::exp(((maxf - 1.0) * t + 1.0) * ln_r);
                        head * -libm::expm1(t * ln_r) / (t * f)
                    }
                }
            }
        };
        sum += if j % 2 == 0 { binom * z } else { -binom * z };
        binom *= f64::from(k - j) / (jf + 1.0);
    }
    Ok(sum.clamp(paper.min(1.0), 1.0))
}

/// The expected fraction of zero cells of a stable filter with `m` cells,
/// `K = k`, `P = p` and cells set to `max`, under a stream of distinct,
/// uniformly hashed keys.
///
/// - [`Eviction::Random`]: the paper's `(1 / (1 + 1/(P(1/K - 1/m))))^Max`.
///   Per item a cell is set with probability `K/m` and decremented with
///   probability `P/m`, independently; it is zero when the last `Max`
///   events that touched it were decrements without a set, each event being
///   such a decrement with probability `P(1-K/m) / (P(1-K/m) + K)`. Exact
///   in expectation for the blocked layout too, since blocking keeps each
///   cell's marginal set probability at `K/m`.
/// - [`Eviction::Sweep`]: a cell is decremented once every `T = m/P` items,
///   so it is zero exactly when no item set it during the last
///   `(Max-1)·T + U + 1` items, `U` its phase, uniform on `0..T`:
///   `z = r^((Max-1)T+1) (1 - r^T) / (T (1 - r))` with `r = 1 - K/m`. Exact
///   when `P` divides `m`; for large `m` it tends to
///   `e^(-(Max-1)K/P) (1 - e^(-K/P)) / (K/P)`.
///
/// ```
/// use streambloom::stable::{stable_point, Eviction};
/// let z = stable_point(Eviction::Random, 1 << 20, 3, 10, 7)?;
/// assert!((z - 0.1594).abs() < 1e-4); // (1/1.3)^7
/// let s = stable_point(Eviction::Sweep, 1 << 20, 3, 10, 7)?;
/// let limit = libm::exp(-6.0 * 0.3) * (1.0 - libm::exp(-0.3)) / 0.3;
/// assert!((s - limit).abs() < 1e-5);
/// assert!(stable_point(Eviction::Random, 1 << 20, 0, 10, 7).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn stable_point(eviction: Eviction, m: usize, k: u32, p: usize, max: u32) -> Result<f64> {
    if m == 0 {
        return Err(Error::param("m", "must be at least 1"));
    }
    if k == 0 || k as usize > m {
        return Err(Error::param("k", "must be in 1..=m"));
    }
    if p == 0 || p > m {
        return Err(Error::param("p", "must be in 1..=m"));
    }
    if max == 0 {
        return Err(Error::param("max", "must be at least 1"));
    }
    Ok(stable_point_of(eviction, m, k, p, max))
}

/// [`stable_point`] on parameters already checked.
fn stable_point_of(eviction: Eviction, m: usize, k: u32, p: usize, max: u32) -> f64 {
    let (m, k, p, max) = (m as f64, f64::from(k), p as f64, f64::from(max));
    match eviction {
        Eviction::Random => {
            let q = 1.0 / (1.0 + 1.0 / (p * (1.0 / k - 1.0 / m)));
            libm::pow(q, max)
        }
        Eviction::Sweep => {
            let t = m / p;
            let r = 1.0 - k / m;
            if r <= 0.0 {
                return 0.0;
            }
            // ln r, accurate for r close to 1.
            let ln_r = libm::log1p(-k / m);
            let head = libm::exp(((max - 1.0) * t + 1.0) * ln_r);
            // (1 - r^T) / (T (1 - r)), with expm1 for accuracy.
            let tail = -libm::expm1(t * ln_r) / (t * (k / m));
            head * tail
        }
    }
}
