//! Parameters of a [`StableBloom`](super::StableBloom): validation, the
//! stable-point formulas of both eviction policies, and the planner that
//! picks `d`, `K` and `P` for a memory budget and a target false-positive
//! rate.

use crate::analysis::stable::{layout_fpr, stable_point};
use crate::hash::Layout;
use crate::{Block, Error, Result, Width, store};

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
    /// [`Random`](Self::Random) in an interleaved cell order: `P`
    /// consecutive cells from a uniformly random start, where consecutive
    /// cells are dealt round-robin over a group of [`INTERLEAVE`] adjacent
    /// blocks (eviction position `e` of a group of `g` blocks is cell
    /// `e / g` of its block `e % g`). A run then decrements about `P/g`
    /// cells of each block of its group instead of one or two whole blocks.
    ///
    /// Every cell is still decremented with probability `P/m` per item,
    /// independently of the past, so the stable point and every per-cell
    /// formula are [`Random`](Self::Random)'s (the paper's policy under a
    /// relabelling of the cells). What changes is the correlation between
    /// the cells of a block: under `Random` a run decrements a block's
    /// cells together, which makes an item's cells in that block zero
    /// together and lifts the false-positive rate above the paper's bound
    /// `(1 - z)^K`; spread over 8 blocks, the rate comes closer to the
    /// bound, most with [`Layout::TwoBlocks`] (measured in the
    /// [`stable`](super) module docs), for 8–16 adjacent cache lines of
    /// eviction an item instead of 2–3.
    Interleaved,
}

/// The number of adjacent blocks over which [`Eviction::Interleaved`]
/// deals its runs (the last group of a filter whose block count is not a
/// multiple has fewer). Each doubling of the group doubles the cache lines
/// an eviction touches and takes a smaller share off the remaining
/// correlation; with eight, two blocks come within 1.3× of the paper's
/// bound at the README's settings (the [`stable`](super) module docs).
pub const INTERLEAVE: usize = 8;

/// The parameters of a [`StableBloom`](super::StableBloom).
///
/// `cells` is rounded up to whole blocks: the filter's effective cell count
/// `m` is `blocks × W::CELLS` ([`StableParams::effective_cells`]), and every
/// formula uses that `m`.
///
/// ```
/// use streambloom::stable::{Eviction, Layout, StableParams};
/// use streambloom::W4;
/// let p = StableParams { cells: 1000, bits_per_cell: 3, k: 3, p: 10, eviction: Eviction::Random, layout: Layout::OneBlock };
/// assert_eq!(p.effective_cells::<W4>(), Ok(1024)); // 8 blocks of 128 cells
/// assert!(StableParams { k: 0, ..p }.effective_cells::<W4>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StableParams {
    /// Requested number of cells (at least 1), rounded up to whole blocks.
    pub cells: usize,
    /// Bits `d` a cell uses: cells are set to `Max = 2^d - 1`.
    /// `1 <= d <= W::BITS`.
    pub bits_per_cell: u32,
    /// Cells `K` set per item, all in the item's block or split between
    /// two ([`layout`](Self::layout)): `1 <= K <= W::CELLS`.
    pub k: u32,
    /// Cells `P` decremented per item: `1 <= P <= m`.
    pub p: usize,
    /// Which cells are decremented.
    pub eviction: Eviction,
    /// Where an item's `K` cells go: one block, or `⌈K/2⌉` and `⌊K/2⌋` in
    /// two independent blocks ([`Layout`]), which brings the delivered
    /// false-positive rate close to the paper's bound for one more cache
    /// line per item.
    pub layout: Layout,
}

impl StableParams {
    /// Checks the parameters for cells of width `W` and returns the number
    /// of blocks they need.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// use streambloom::{Error, Value, W8};
    /// let p = StableParams { cells: 100, bits_per_cell: 3, k: 3, p: 10, eviction: Eviction::Sweep, layout: Layout::OneBlock };
    /// assert_eq!(p.blocks::<W8>(), Ok(2));
    /// assert_eq!(
    ///     StableParams { bits_per_cell: 9, ..p }.blocks::<W8>(),
    ///     Err(Error::Parameter { name: "bits_per_cell", given: Value::Int(9), allowed: "in 1..=W::BITS, the cell width" }),
    /// );
    /// ```
    pub fn blocks<W: Width>(&self) -> Result<usize> {
        if self.bits_per_cell == 0 || self.bits_per_cell > W::BITS {
            return Err(Error::param(
                "bits_per_cell",
                self.bits_per_cell,
                "in 1..=W::BITS, the cell width",
            ));
        }
        if self.k == 0 || self.k as usize > W::CELLS {
            return Err(Error::param(
                "k",
                self.k,
                "in 1..=W::CELLS, the cells of a block",
            ));
        }
        let blocks = store::blocks_for::<W>(self.cells)?;
        // `blocks_for` checked that the blocks fit in memory; the cells they
        // hold may still overflow a usize when cells are narrower than a
        // byte (a W1 block holds 512 cells in 64 bytes).
        let m = blocks.checked_mul(W::CELLS).ok_or(Error::param(
            "cells",
            self.cells,
            store::TOO_LARGE,
        ))?;
        if self.p == 0 || self.p > m {
            return Err(Error::param(
                "p",
                self.p,
                "in 1..=m, the effective cell count",
            ));
        }
        Ok(blocks)
    }

    /// The effective cell count `m = blocks × W::CELLS`, after validation.
    pub fn effective_cells<W: Width>(&self) -> Result<usize> {
        Ok(self.blocks::<W>()? * W::CELLS)
    }

    /// `Max = 2^d - 1`, the value an item sets its cells to.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// let p = StableParams { cells: 100, bits_per_cell: 3, k: 3, p: 10, eviction: Eviction::Sweep, layout: Layout::OneBlock };
    /// assert_eq!(p.max(), 7);
    /// ```
    pub fn max(&self) -> u32 {
        if self.bits_per_cell >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits_per_cell) - 1
        }
    }

    /// The expected fraction of zero cells once the filter is stable, for
    /// `m` cells, under a stream of distinct keys ([`stable_point`]); an
    /// error where [`stable_point`] refuses the parameters.
    pub fn stable_point(&self, m: usize) -> Result<f64> {
        stable_point(self.eviction, m, self.k, self.p, self.max())
    }

    /// The paper's false-positive bound `(1 - stable_point)^K` for `m`
    /// cells (Deng & Rafiei §4, as summarized in the Importance-aware
    /// Bloom Filter paper, §II.A), kept for comparison. It treats an item's
    /// `K` cells as independent; in the blocked layouts they are not, and
    /// the filter delivers more (much more with one block, a little more
    /// with two): use [`predicted_fpr`](Self::predicted_fpr).
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// let p = StableParams { cells: 1 << 16, bits_per_cell: 3, k: 5, p: 67, eviction: Eviction::Random, layout: Layout::OneBlock };
    /// let z = p.stable_point(1 << 16)?;
    /// assert!((p.paper_false_positive_bound(1 << 16)? - libm::pow(1.0 - z, 5.0)).abs() < 1e-12);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn paper_false_positive_bound(&self, m: usize) -> Result<f64> {
        Ok(libm::pow(1.0 - self.stable_point(m)?, f64::from(self.k)))
    }

    /// The steady-state false-positive rate the **blocked** filter of width
    /// `W` delivers on distinct keys in its [`layout`](Self::layout)
    /// ([`layout_fpr`]; [`blocked_fpr`](crate::analysis::stable::blocked_fpr)
    /// for one block): exact for [`Eviction::Sweep`] with one block, an
    /// upper bound for [`Eviction::Random`] (tight when eviction runs span
    /// many blocks).
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// use streambloom::W8;
    /// let p = StableParams { cells: 1 << 16, bits_per_cell: 3, k: 5, p: 67, eviction: Eviction::Random, layout: Layout::OneBlock };
    /// let blocked = p.predicted_fpr::<W8>().unwrap();
    /// // The paper's bound is about 1 %; a blocked filter delivers more.
    /// assert!(p.paper_false_positive_bound(1 << 16)? < 0.0098);
    /// assert!(blocked > 0.02);
    /// // Two blocks: closer to the paper's bound.
    /// let two = StableParams { layout: Layout::TwoBlocks, ..p }.predicted_fpr::<W8>().unwrap();
    /// assert!(two < 0.6 * blocked);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn predicted_fpr<W: Width>(&self) -> Result<f64> {
        let m = self.effective_cells::<W>()?;
        layout_fpr(
            self.layout,
            self.eviction,
            m,
            W::CELLS,
            self.k,
            self.p,
            self.max(),
        )
    }

    /// These parameters with `p` set to the smallest `P` (in `1..=m`) whose
    /// [`predicted_fpr`](Self::predicted_fpr) (the blocked filter's
    /// steady-state rate) is at most `target_fpr`, found by bisection (the
    /// rate falls as `P` grows). Errors: invalid parameters (other than
    /// `p`), `target_fpr` outside `(0, 1)`, or a target that even `P = m`
    /// misses.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// use streambloom::W4;
    /// let p = StableParams { cells: 1 << 20, bits_per_cell: 3, k: 3, p: 1, eviction: Eviction::Random, layout: Layout::OneBlock };
    /// let planned = p.with_smallest_p::<W4>(0.01).unwrap();
    /// assert!(planned.predicted_fpr::<W4>().unwrap() <= 0.01);
    /// let one_less = StableParams { p: planned.p - 1, ..p };
    /// assert!(one_less.predicted_fpr::<W4>().unwrap() > 0.01);
    /// ```
    pub fn with_smallest_p<W: Width>(self, target_fpr: f64) -> Result<StableParams> {
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
        }
        let m = StableParams { p: 1, ..self }.effective_cells::<W>()?;
        let meets = |p: usize| {
            let params = StableParams { p, ..self };
            layout_fpr(
                params.layout,
                params.eviction,
                m,
                W::CELLS,
                params.k,
                p,
                params.max(),
            )
            .is_ok_and(|fpr| fpr <= target_fpr)
        };
        let p = crate::search::first(1, m, meets).ok_or(Error::param(
            "target_fpr",
            target_fpr,
            "reachable with these cells, d and K (at P = m)",
        ))?;
        Ok(StableParams { p, ..self })
    }

    /// Plans a two-block filter of width `W` in `memory_bytes` bytes
    /// (rounded down to whole 64-byte blocks) whose steady-state
    /// false-positive rate on distinct keys, as the blocked filter delivers
    /// it ([`predicted_fpr`](Self::predicted_fpr)), is at most
    /// `target_fpr`, under `eviction`:
    /// [`plan_with_layout`](Self::plan_with_layout) with
    /// [`Layout::TwoBlocks`], the default: one block delivers 2–3× the
    /// paper's bound on the false-positive rate where two come within
    /// 1.2–1.5× of it, and at the same target two blocks need less eviction,
    /// so they remember longer (the README's accuracy table).
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
    /// use streambloom::stable::{Eviction, Layout, StableParams};
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
        Self::plan_with_layout::<W>(memory_bytes, target_fpr, eviction, Layout::TwoBlocks)
    }

    /// [`plan`](Self::plan) for a filter in `layout`, by that layout's
    /// rate ([`layout_fpr`]). Two blocks need less eviction for the same
    /// rate, so they remember items longer.
    ///
    /// ```
    /// use streambloom::stable::{Eviction, Layout, StableParams};
    /// use streambloom::W8;
    /// let one = StableParams::plan_with_layout::<W8>(1 << 20, 0.01, Eviction::Sweep, Layout::OneBlock).unwrap();
    /// let two = StableParams::plan::<W8>(1 << 20, 0.01, Eviction::Sweep).unwrap();
    /// assert_eq!(two.layout, Layout::TwoBlocks); // the default
    /// assert!(two.predicted_fpr::<W8>().unwrap() <= 0.01);
    /// // A longer memory: the expected lifetime of a set cell, in items.
    /// let life = |p: StableParams| (f64::from(p.max()) - 0.5) / p.p as f64;
    /// assert!(life(two) > life(one));
    /// ```
    pub fn plan_with_layout<W: Width>(
        memory_bytes: usize,
        target_fpr: f64,
        eviction: Eviction,
        layout: Layout,
    ) -> Result<StableParams> {
        let blocks = memory_bytes / Block::BYTES;
        if blocks == 0 {
            return Err(Error::param(
                "memory_bytes",
                memory_bytes,
                "at least 64, one block",
            ));
        }
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
        }
        if memory_bytes > isize::MAX as usize {
            return Err(Error::param(
                "memory_bytes",
                memory_bytes,
                "at most isize::MAX, the most one allocation can hold",
            ));
        }
        let m = blocks.checked_mul(W::CELLS).ok_or(Error::param(
            "memory_bytes",
            memory_bytes,
            "holding at most usize::MAX cells",
        ))?;
        let max_p = PLAN_MAX_RUN_BLOCKS * W::CELLS;
        let mut best: Option<(f64, StableParams)> = None;
        for bits_per_cell in 1..=W::BITS {
            for k in 1..=(W::CELLS.min(32) as u32) {
                let candidate = StableParams {
                    cells: m,
                    bits_per_cell,
                    k,
                    p: 1,
                    eviction,
                    layout,
                };
                let Ok(params) = candidate.with_smallest_p::<W>(target_fpr) else {
                    continue;
                };
                if params.p > max_p {
                    continue;
                }
                let sweeps = match eviction {
                    Eviction::Random | Eviction::Interleaved => f64::from(params.max()),
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
            target_fpr,
            "reachable with this memory",
        ))
    }
}

/// The longest eviction run [`StableParams::plan`] chooses, in blocks: an
/// item's eviction then reads and writes at most this many consecutive
/// cache lines (plus one when the run straddles a block boundary).
pub const PLAN_MAX_RUN_BLOCKS: usize = 16;
