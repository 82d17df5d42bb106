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
    /// `m` cells, under a stream of distinct keys ([`stable_point`]).
    pub fn stable_point(&self, m: usize) -> f64 {
        stable_point(self.eviction, m, self.k, self.p, self.max())
    }

    /// The false-positive bound `(1 - stable_point)^K` for `m` cells.
    pub fn false_positive_bound(&self, m: usize) -> f64 {
        libm::pow(1.0 - self.stable_point(m), f64::from(self.k))
    }

    /// These parameters with `p` set to the smallest `P` (in `1..=m`) whose
    /// [`false_positive_bound`](Self::false_positive_bound) is at most
    /// `target_fpr`, found by bisection (the bound falls as `P` grows).
    /// Errors: invalid parameters (other than `p`), `target_fpr` outside
    /// `(0, 1)`, or a target that even `P = m` misses.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, StableParams};
    /// use streambloom::W4;
    /// let p = StableParams { cells: 1 << 20, bits: 3, k: 3, p: 1, eviction: Eviction::Random };
    /// let planned = p.with_smallest_p::<W4>(0.01).unwrap();
    /// let m = 1 << 20;
    /// assert!(planned.false_positive_bound(m) <= 0.01);
    /// assert!(StableParams { p: planned.p - 1, ..p }.false_positive_bound(m) > 0.01);
    /// ```
    pub fn with_smallest_p<W: Width>(self, target_fpr: f64) -> Result<StableParams> {
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", "must be in (0, 1)"));
        }
        let m = StableParams { p: 1, ..self }.effective_cells::<W>()?;
        let meets = |p: usize| StableParams { p, ..self }.false_positive_bound(m) <= target_fpr;
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
    /// whole 64-byte blocks) whose false-positive bound is at most
    /// `target_fpr`, under `eviction`.
    ///
    /// For every `d` in `1..=W::BITS` and `K` in `1..=min(W::CELLS, 32)` it
    /// takes the **smallest** `P` whose bound meets the target (the bound
    /// falls as `P` grows, and a smaller `P` evicts more slowly, so it makes
    /// fewer false negatives). For [`Eviction::Random`] the smallest real
    /// solution is the paper's
    /// `P = 1 / ((1/(1 - FPR^(1/K))^(1/Max) - 1) (1/K - 1/m))`; the planner
    /// finds the smallest integer `P` by bisection over the policy's own
    /// [`stable_point`], so it serves both policies. Among the `(d, K)`
    /// candidates it keeps the one whose set cell survives longest without
    /// being set again: `Max·m/P` items on average for `Random` (`Max`
    /// geometric waits of mean `m/P`), `(Max - 1/2)·m/P` for `Sweep` (`Max - 1`
    /// whole sweeps plus half of one). Ties go to the smaller `d`, then the
    /// smaller `K`.
    ///
    /// Errors: fewer than 64 bytes, `target_fpr` outside `(0, 1)`, or no
    /// `(d, K, P)` reaching the target.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, StableParams};
    /// use streambloom::W8;
    /// let p = StableParams::plan::<W8>(1 << 20, 0.01, Eviction::Random).unwrap();
    /// let m = p.effective_cells::<W8>().unwrap();
    /// assert_eq!(m, 1 << 20);
    /// assert!(p.false_positive_bound(m) <= 0.01);
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
        let m = blocks
            .checked_mul(W::CELLS)
            .ok_or(Error::param("memory_bytes", "is too large"))?;
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
/// let z = stable_point(Eviction::Random, 1 << 20, 3, 10, 7);
/// assert!((z - 0.1594).abs() < 1e-4); // (1/1.3)^7
/// let s = stable_point(Eviction::Sweep, 1 << 20, 3, 10, 7);
/// let limit = libm::exp(-6.0 * 0.3) * (1.0 - libm::exp(-0.3)) / 0.3;
/// assert!((s - limit).abs() < 1e-5);
/// ```
pub fn stable_point(eviction: Eviction, m: usize, k: u32, p: usize, max: u32) -> f64 {
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
