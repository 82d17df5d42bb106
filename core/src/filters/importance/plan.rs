//! The Importance-aware filter's planner: the blocked filter's
//! steady-state false-positive rate for the stream's importances
//! ([`ImportanceParams::predicted_fpr`], by
//! [`analysis::importance::layout_fpr`](crate::analysis::importance::layout_fpr)),
//! the smallest `P` meeting a target, and `(d, K, P)` for a memory budget
//! ([`ImportanceParams::plan`]), as
//! [`StableParams::plan`](crate::stable::StableParams::plan) does for the
//! Stable filter.
//!
//! The paper (§III-D) picks `Max = 7`, `K = 5`, `P = 10` by hand against a
//! "20 % upper bound" that is not the model's rate (the implementers'
//! digest, §5); Corollaries III.4 and III.8 give the bound
//! `(1 − V_0)^K`, which ignores that a blocked filter's cells share their
//! blocks. The planner plans by the blocked model instead, so the rate it
//! promises is the rate the filter delivers on distinct keys (the tests
//! measure it).

use super::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use crate::analysis::importance::layout_fpr;
use crate::hash::Layout;
use crate::stable::PLAN_MAX_RUN_BLOCKS;
use crate::{Block, Error, Result, Width};
use alloc::vec::Vec;

impl ImportanceParams {
    /// The distribution of the level an item sets, `(v, Pr[v])` ascending,
    /// for a stream whose importance `i` has relative frequency
    /// `importance_weights[i]` (index 0 is importance 0, which the
    /// built-in maps reject: give it weight 0), under these parameters'
    /// [`Insert`] policy and map.
    ///
    /// Errors: no weights, a weight negative or not finite, all weights 0;
    /// what the constructors refuse of the policy and the map whatever the
    /// weights (a two-class `important_from` of 0, M/2-insert with `d = 1`,
    /// where `⌊Max/2⌋ = 0`, even when every weighted importance is in the
    /// important class; a map that cannot map into `1..=Max`); or a
    /// positive weight on an importance the map rejects (its error).
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::Layout;
    /// let p = ImportanceParams { cells: 16_384, bits_per_cell: 3, k: 5, p: 10, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::TwoClass { important_from: 26 }, map: ImportanceMap::Linear { top: 50 } };
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0; // importance 1..=50, equally likely
    /// let q = p.level_distribution(&uniform)?;
    /// assert_eq!((q.len(), q[0].0, q[1].0), (2, 3, 7));
    /// assert!((q[0].1 - 0.5).abs() < 1e-12 && (q[1].1 - 0.5).abs() < 1e-12);
    /// assert!(p.level_distribution(&[1.0, 1.0]).is_err()); // importance 0
    /// // 1-bit cells: refused for M/2-insert, as `ImportanceBloom::new` does.
    /// let mut top_only = vec![0.0; 51];
    /// top_only[50] = 1.0;
    /// assert!(ImportanceParams { bits_per_cell: 1, ..p }.level_distribution(&top_only).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn level_distribution(&self, importance_weights: &[f64]) -> Result<Vec<(u32, f64)>> {
        check_weights(importance_weights)?;
        // The constructors' checks of the policy and the map, so that a
        // distribution (and a plan) exists only for constructible filters.
        self.check_policy()?;
        let total: f64 = importance_weights.iter().sum();
        let max = self.stable().max();
        let mut levels = Vec::new();
        for (i, &w) in importance_weights.iter().enumerate() {
            if w > 0.0 {
                // `check_weights` bounds the length by u32::MAX + 1.
                let level = self.insert_level(i as u32, max)?;
                if level == 0 {
                    return Err(Error::param(
                        "bits_per_cell",
                        self.bits_per_cell,
                        "at least 2 for M/2-insert (a level ⌊Max/2⌋ of at least 1)",
                    ));
                }
                levels.push((level, w / total));
            }
        }
        levels.sort_unstable_by_key(|&(level, _)| level);
        levels.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
        Ok(levels)
    }

    /// The steady-state false-positive rate the **blocked** filter of width
    /// `W` delivers on a stream of distinct keys whose importances have
    /// the relative frequencies `importance_weights`
    /// ([`level_distribution`](Self::level_distribution)), by the blocked
    /// model ([`layout_fpr`]): exact up to the sweep's stagger for
    /// [`Eviction::Sweep`], an upper bound for [`Eviction::Random`] (tight
    /// when eviction runs span blocks). A stream with repeats delivers less
    /// (a repeat sets cells already set).
    ///
    /// Errors: parameters [`ImportanceBloom::new`] refuses (the same
    /// checks), [`Eviction::ByValue`] (IBF-H: its
    /// decrements depend on the cells' values, and no blocked model of it
    /// is known; `given` is the variant's index, 2), or weights as for
    /// [`level_distribution`](Self::level_distribution).
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Layout, W8};
    /// let mc = ImportanceParams { cells: 16_384, bits_per_cell: 3, k: 5, p: 10, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 50 } };
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0;
    /// let sbf = ImportanceParams { insert: Insert::Max, ..mc };
    /// // Table II: IBF-MC keeps more cells zero than the Stable filter.
    /// assert!(mc.predicted_fpr::<W8>(&uniform)? < sbf.predicted_fpr::<W8>(&uniform)?);
    /// assert!(ImportanceParams { eviction: Eviction::ByValue, ..mc }.predicted_fpr::<W8>(&uniform).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn predicted_fpr<W: Width>(&self, importance_weights: &[f64]) -> Result<f64> {
        self.validate::<W>()?;
        let levels = self.level_distribution(importance_weights)?;
        self.fpr_of::<W>(&levels)
    }

    /// [`predicted_fpr`](Self::predicted_fpr) for a level distribution.
    fn fpr_of<W: Width>(&self, levels: &[(u32, f64)]) -> Result<f64> {
        let eviction = modelled(self.eviction)?;
        let m = self.stable().effective_cells::<W>()?;
        layout_fpr(self.layout, eviction, m, W::CELLS, self.k, self.p, levels)
    }

    /// These parameters with `p` set to the smallest `P` (in `1..=m`) whose
    /// [`predicted_fpr`](Self::predicted_fpr) is at most `target_fpr`, by
    /// bisection (the rate falls as `P` grows).
    ///
    /// Errors: as [`predicted_fpr`](Self::predicted_fpr) (other than for
    /// `p`), `target_fpr` outside `(0, 1)`, or a target that even `P = m`
    /// misses.
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Layout, W8};
    /// let mc = ImportanceParams { cells: 16_384, bits_per_cell: 3, k: 5, p: 1, eviction: Eviction::Random,
    ///     layout: Layout::TwoBlocks, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 50 } };
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0;
    /// let planned = mc.with_smallest_p::<W8>(0.05, &uniform)?;
    /// assert!(planned.predicted_fpr::<W8>(&uniform)? <= 0.05);
    /// let one_less = ImportanceParams { p: planned.p - 1, ..planned };
    /// assert!(one_less.predicted_fpr::<W8>(&uniform)? > 0.05);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_smallest_p<W: Width>(
        self,
        target_fpr: f64,
        importance_weights: &[f64],
    ) -> Result<ImportanceParams> {
        check_target(target_fpr)?;
        ImportanceParams { p: 1, ..self }.validate::<W>()?;
        let levels = self.level_distribution(importance_weights)?;
        self.smallest_p::<W>(target_fpr, &levels, usize::MAX)
    }

    /// [`with_smallest_p`](Self::with_smallest_p) for a level distribution,
    /// with `P` at most `most` (and `m`).
    fn smallest_p<W: Width>(
        self,
        target_fpr: f64,
        levels: &[(u32, f64)],
        most: usize,
    ) -> Result<ImportanceParams> {
        modelled(self.eviction)?;
        let m = ImportanceParams { p: 1, ..self }
            .stable()
            .effective_cells::<W>()?;
        let meets = |p: usize| {
            ImportanceParams { p, ..self }
                .fpr_of::<W>(levels)
                .is_ok_and(|fpr| fpr <= target_fpr)
        };
        let p = crate::search::first(1, m.min(most), meets).ok_or(Error::param(
            "target_fpr",
            target_fpr,
            "reachable with these cells, d, K and importances (at P = m)",
        ))?;
        Ok(ImportanceParams { p, ..self })
    }

    /// Plans a two-block filter of width `W` in `memory_bytes` bytes
    /// (whole 64-byte blocks) whose steady-state false-positive rate on
    /// distinct keys, as the blocked filter delivers it
    /// ([`predicted_fpr`](Self::predicted_fpr)), is at most `target_fpr`
    /// for a stream whose importances have the relative frequencies
    /// `importance_weights` (index = importance), under `eviction`,
    /// `insert` and `map`: [`plan_with_layout`](Self::plan_with_layout)
    /// with [`Layout::TwoBlocks`], the Stable planner's default (one block
    /// delivers several times the paper's bound).
    ///
    /// **What it optimizes.** With the false-positive rate pinned at the
    /// target, the longest memory: the mean, over the stream's items, of
    /// the expected lifetime of a cell set at the item's level `v`,
    /// `v·m/P` items for `Random` (`v` decrements at rate `P/m`) and
    /// `(v − 1/2)·m/P` for `Sweep` (as
    /// [`StableParams::plan`](crate::stable::StableParams::plan), whose
    /// objective this is when every level is `Max`). For every `d` in
    /// `1..=W::BITS` and `K` in `1..=min(W::CELLS, 32)` it takes the
    /// smallest `P` meeting the target
    /// ([`with_smallest_p`](Self::with_smallest_p)) and keeps the longest
    /// memory; ties go to the smaller `d`, then the smaller `K`. A `d` at
    /// which the map or the policy cannot place the stated importances, or
    /// which the constructors refuse for the policy and the map
    /// (a [`Function`](ImportanceMap::Function) above `Max`, more
    /// [`Classes`](ImportanceMap::Classes) than levels, M/2-insert at
    /// `d = 1` whatever the weights) is skipped, and
    /// so are plans whose `P` exceeds [`PLAN_MAX_RUN_BLOCKS`] blocks' cells
    /// (the eviction run is the per-item cost). Every plan returned passes
    /// [`ImportanceBloom::new`]'s validation (the same checks).
    ///
    /// Errors: fewer than 64 bytes (or more than `isize::MAX`),
    /// `target_fpr` outside `(0, 1)`, [`Eviction::ByValue`] (no model),
    /// weights, policy or map as for
    /// [`level_distribution`](Self::level_distribution) (the last `d`'s
    /// error when no `d` takes them, as for an `important_from` of 0), or
    /// no `(d, K, P)`
    /// reaching the target.
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::W8;
    /// // Table II's stream: importance uniform on 1..=50, IBF-MC in 16 KiB.
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0;
    /// let map = ImportanceMap::Linear { top: 50 };
    /// let p = ImportanceParams::plan::<W8>(16 << 10, 0.05, Eviction::Random, Insert::ByImportance, map, &uniform)?;
    /// assert_eq!(p.stable().effective_cells::<W8>()?, 16_384);
    /// assert!(p.predicted_fpr::<W8>(&uniform)? <= 0.05);
    /// assert!(ImportanceParams::plan::<W8>(16 << 10, 1.0, Eviction::Random, Insert::ByImportance, map, &uniform).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan<W: Width>(
        memory_bytes: usize,
        target_fpr: f64,
        eviction: Eviction,
        insert: Insert,
        map: ImportanceMap,
        importance_weights: &[f64],
    ) -> Result<ImportanceParams> {
        Self::plan_with_layout::<W>(
            memory_bytes,
            target_fpr,
            eviction,
            insert,
            map,
            importance_weights,
            Layout::TwoBlocks,
        )
    }

    /// [`plan`](Self::plan) for a filter in `layout`.
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Layout, W8};
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0;
    /// let two_class = Insert::TwoClass { important_from: 26 };
    /// let p = ImportanceParams::plan_with_layout::<W8>(
    ///     1 << 16, 0.01, Eviction::Sweep, two_class, ImportanceMap::Linear { top: 50 }, &uniform, Layout::OneBlock)?;
    /// assert_eq!(p.layout, Layout::OneBlock);
    /// assert!(p.bits_per_cell >= 2); // M/2-insert needs ⌊Max/2⌋ ≥ 1
    /// assert!(p.predicted_fpr::<W8>(&uniform)? <= 0.01);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan_with_layout<W: Width>(
        memory_bytes: usize,
        target_fpr: f64,
        eviction: Eviction,
        insert: Insert,
        map: ImportanceMap,
        importance_weights: &[f64],
        layout: Layout,
    ) -> Result<ImportanceParams> {
        let blocks = memory_bytes / Block::BYTES;
        if blocks == 0 {
            return Err(Error::param(
                "memory_bytes",
                memory_bytes,
                "at least 64, one block",
            ));
        }
        if memory_bytes > isize::MAX as usize {
            return Err(Error::param(
                "memory_bytes",
                memory_bytes,
                "at most isize::MAX, the most one allocation can hold",
            ));
        }
        check_target(target_fpr)?;
        modelled(eviction)?;
        check_weights(importance_weights)?;
        let cells = blocks.checked_mul(W::CELLS).ok_or(Error::param(
            "memory_bytes",
            memory_bytes,
            "holding at most usize::MAX cells",
        ))?;
        let max_p = PLAN_MAX_RUN_BLOCKS * W::CELLS;
        let mut best: Option<(f64, ImportanceParams)> = None;
        // The last `d`'s refusal of the importances, and whether every
        // `d` so far refused them.
        let mut refused: Option<(Error, bool)> = None;
        for bits_per_cell in 1..=W::BITS {
            let base = ImportanceParams {
                cells,
                bits_per_cell,
                k: 1,
                p: 1,
                eviction,
                layout,
                insert,
                map,
            };
            // `level_distribution` refuses what the constructors refuse of
            // the policy and the map at this `d`.
            let levels = match base.level_distribution(importance_weights) {
                Ok(levels) => levels,
                Err(e) => {
                    refused = Some((e, refused.is_none_or(|(_, all)| all)));
                    continue;
                }
            };
            if let Some((_, all)) = refused.as_mut() {
                *all = false;
            }
            // The mean decrements a set cell outlives (`v`, or `v − 1/2`
            // sweeps).
            let mean_level: f64 = levels.iter().map(|&(v, x)| f64::from(v) * x).sum();
            let decrements = match eviction {
                Eviction::Sweep => mean_level - 0.5,
                Eviction::Random | Eviction::Interleaved | Eviction::ByValue => mean_level,
            };
            for k in 1..=(W::CELLS.min(32) as u32) {
                // Only a `P` whose lifetime beats the best so far can be
                // chosen: the search stops there (the false-positive rate
                // falls as `P` grows, so the smallest `P` is found if it
                // is below, and nothing that could win is skipped). With
                // cells of many bits the model costs a factor per level
                // in use, and most `(d, K)` lose at one evaluation.
                let most =
                    best.map_or(max_p, |(b, _)| beating(decrements * cells as f64, b, max_p));
                if most == 0 {
                    continue;
                }
                let Ok(params) =
                    ImportanceParams { k, ..base }.smallest_p::<W>(target_fpr, &levels, most)
                else {
                    continue;
                };
                // The constructors' own validation, the last word: a plan
                // returned is a filter `ImportanceBloom::new` builds.
                if params.p > max_p || params.validate::<W>().is_err() {
                    continue;
                }
                let lifetime = decrements * cells as f64 / params.p as f64;
                if best.is_none_or(|(b, _)| lifetime > b) {
                    best = Some((lifetime, params));
                }
            }
        }
        match (best, refused) {
            (Some((_, p)), _) => Ok(p),
            (None, Some((e, true))) => Err(e),
            _ => Err(Error::param(
                "target_fpr",
                target_fpr,
                "reachable with this memory and these importances",
            )),
        }
    }
}

impl<W: Width> ImportanceBloom<W> {
    /// The filter [`ImportanceParams::plan`] plans for `memory_bytes` bytes
    /// of `W`-bit cells, a false-positive rate of at most `target_fpr` on
    /// distinct keys whose importances have the relative frequencies
    /// `importance_weights`, under `eviction`, `insert` and `map`, seeded
    /// from `seed`.
    ///
    /// ```
    /// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, Insert};
    /// use streambloom::W8;
    /// let mut uniform = vec![1.0; 51];
    /// uniform[0] = 0.0;
    /// let mut f = ImportanceBloom::<W8>::plan(16 << 10, 0.05, Eviction::Random, Insert::ByImportance,
    ///     ImportanceMap::Linear { top: 50 }, &uniform, 7)?;
    /// assert!(!f.observe("payment", 50)?);
    /// assert!(f.params().predicted_fpr::<W8>(&uniform)? <= 0.05);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan(
        memory_bytes: usize,
        target_fpr: f64,
        eviction: Eviction,
        insert: Insert,
        map: ImportanceMap,
        importance_weights: &[f64],
        seed: u64,
    ) -> Result<Self> {
        Self::new(
            ImportanceParams::plan::<W>(
                memory_bytes,
                target_fpr,
                eviction,
                insert,
                map,
                importance_weights,
            )?,
            seed,
        )
    }
}

/// The largest `P` up to `most` whose lifetime `memory / P` exceeds
/// `best` (0 if none): the planner's comparison, so rounding cannot let a
/// `P` that would win be cut off.
fn beating(memory: f64, best: f64, most: usize) -> usize {
    let mut p = libm::ceil(memory / best).min(most as f64) as usize;
    while p > 0 && memory / p as f64 <= best {
        p -= 1;
    }
    while p < most && memory / (p + 1) as f64 > best {
        p += 1;
    }
    p
}

/// `target_fpr` in `(0, 1)` (NaN fails too).
fn check_target(target_fpr: f64) -> Result<()> {
    if !(target_fpr > 0.0 && target_fpr < 1.0) {
        return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
    }
    Ok(())
}

/// The blocked model's eviction for `eviction`: none for IBF-H's.
fn modelled(eviction: Eviction) -> Result<crate::stable::Eviction> {
    match eviction {
        Eviction::Random => Ok(crate::stable::Eviction::Random),
        Eviction::Sweep => Ok(crate::stable::Eviction::Sweep),
        Eviction::Interleaved => Ok(crate::stable::Eviction::Interleaved),
        Eviction::ByValue => Err(Error::param(
            "eviction",
            2u32,
            "Random, Sweep or Interleaved: ByValue (IBF-H) has no blocked model to plan by",
        )),
    }
}

/// Importance weights: some, at most one per `u32` importance, finite, not
/// negative, not all zero.
fn check_weights(weights: &[f64]) -> Result<()> {
    if weights.is_empty() || weights.len() as u64 > u64::from(u32::MAX) + 1 {
        return Err(Error::param(
            "importance_weights",
            weights.len(),
            "one weight per importance 0, 1, …: at least 1, at most 2^32",
        ));
    }
    if let Some(&w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(Error::param(
            "importance_weights",
            w,
            "finite and not negative",
        ));
    }
    if weights.iter().all(|&w| w == 0.0) {
        return Err(Error::param(
            "importance_weights",
            0.0,
            "some weight positive",
        ));
    }
    Ok(())
}
