//! The Spectral planner: the smallest filter whose expected over-estimate
//! rate, by the formula of its layout
//! ([`layout_error`]: two blocks an item by default, one on request),
//! meets a target.

use super::{Blocked, Counter, Policy, Spectral, SpectralParams, plan_geometry};
use crate::analysis::spectral::layout_error;
use crate::hash::Layout;
use crate::{Block, Error, Result};

/// What [`SpectralParams::plan`] says of an unreachable target.
const UNREACHABLE: &str = "reachable with counters whose blocks fit in isize::MAX bytes, the most any machine can address";

impl<P: Policy + Default> SpectralParams<P> {
    /// The smallest filter of `W`-bit counters for `n_distinct` distinct
    /// items whose expected over-estimate rate is at most `target_error`,
    /// with `P`'s default configuration, an item's counters in two blocks
    /// ([`Layout::TwoBlocks`], the default: the README's accuracy table
    /// shows one block doubling the error at equal memory;
    /// [`plan_with_layout`](Self::plan_with_layout) plans either).
    ///
    /// **What it optimizes.** Memory: the fewest counters (in whole blocks
    /// of `W::CELLS`) over `k` in `1..=W::CELLS`, ties going to the smaller
    /// `k` (fewer draws to hash). The rate is [`layout_error`] (here
    /// [`two_block_error`](crate::analysis::spectral::two_block_error)): the
    /// probability that an item of the stream (inserted any number of
    /// times) gets an estimate above its true count under Minimum
    /// Selection, modelled for this crate's blocked layout; the paper's
    /// unblocked `E_b` ([`bloom_error`](crate::analysis::spectral::bloom_error))
    /// would under-size the filter.
    ///
    /// **What it promises, per policy** (while no counter saturates: pick
    /// `W` above the largest count):
    ///
    /// - [`MinimumSelection`](super::MinimumSelection): an expected
    ///   over-estimate rate at most `target_error` (with no removals, or
    ///   removals of inserted occurrences only).
    /// - [`MinimalIncrease`](super::MinimalIncrease): the same bound, since
    ///   its estimate is never above Minimum Selection's on the same stream
    ///   (Claim 4); it is usually well below the target.
    /// - [`RecurringMinimum`](super::RecurringMinimum): `counters` is the
    ///   whole budget, and the planner makes it large enough that the
    ///   **primary alone** is the planned Minimum Selection filter (the
    ///   secondary's third comes on top: about 1.5 times the counters).
    ///   Its estimate is never above its primary's minimum, so its
    ///   over-estimate rate is at most `target_error` too. The rarer
    ///   under-estimates its docs describe (without the marker `B_f`, or
    ///   with Trapping) are outside this promise.
    ///
    /// Errors: `n_distinct` of 0, `target_error` outside `(0, 1)` (NaN
    /// included), or a target no filter whose blocks fit in `isize::MAX`
    /// bytes reaches.
    ///
    /// ```
    /// use streambloom::spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum, SpectralParams};
    /// use streambloom::W16;
    /// let p = SpectralParams::<MinimumSelection>::plan::<W16>(100_000, 0.01)?;
    /// assert!(p.predicted_error::<W16>(100_000)? <= 0.01);
    /// // One block fewer, at any k, misses the target.
    /// let smaller = SpectralParams { counters: p.counters - 32, ..p.clone() };
    /// assert!(smaller.predicted_error::<W16>(100_000)? > 0.01);
    /// // Minimal Increase gets the same size; Recurring Minimum adds its secondary.
    /// let mi = SpectralParams::<MinimalIncrease>::plan::<W16>(100_000, 0.01)?;
    /// assert_eq!((mi.counters, mi.k), (p.counters, p.k));
    /// let rm = SpectralParams::<RecurringMinimum>::plan::<W16>(100_000, 0.01)?;
    /// assert!(rm.counters > p.counters && rm.predicted_error::<W16>(100_000)? <= 0.01);
    /// assert!(SpectralParams::<MinimumSelection>::plan::<W16>(0, 0.01).is_err());
    /// assert!(SpectralParams::<MinimumSelection>::plan::<W16>(1000, 1.0).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan<W: Counter>(n_distinct: u64, target_error: f64) -> Result<Self> {
        Self::plan_with_layout::<W>(n_distinct, target_error, Layout::TwoBlocks)
    }

    /// [`plan`](Self::plan) for an item's counters placed by `layout`: the
    /// rate is [`layout_error`] (for [`Layout::TwoBlocks`],
    /// [`two_block_error`](crate::analysis::spectral::two_block_error)), so
    /// the same target takes fewer counters with two blocks.
    ///
    /// ```
    /// use streambloom::hash::Layout;
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// use streambloom::W16;
    /// let one = SpectralParams::<MinimumSelection>::plan_with_layout::<W16>(100_000, 0.01, Layout::OneBlock)?;
    /// let two = SpectralParams::<MinimumSelection>::plan::<W16>(100_000, 0.01)?;
    /// assert_eq!(two.layout, Layout::TwoBlocks); // the default
    /// assert!(two.counters < one.counters);
    /// assert!(two.predicted_error::<W16>(100_000)? <= 0.01);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan_with_layout<W: Counter>(
        n_distinct: u64,
        target_error: f64,
        layout: Layout,
    ) -> Result<Self> {
        if n_distinct == 0 {
            return Err(Error::param("n_distinct", n_distinct, "at least 1"));
        }
        // NaN fails this test too.
        if !(target_error > 0.0 && target_error < 1.0) {
            return Err(Error::param("target_error", target_error, "in (0, 1)"));
        }
        let (blocks, k) = smallest_primary::<W>(n_distinct, target_error, layout)?;
        let policy = P::default();
        let counters = budget_for::<P, W>(&policy, blocks, k)?;
        Ok(SpectralParams {
            counters,
            k,
            policy,
            layout,
        })
    }

    /// The most accurate filter of `W`-bit counters that fits in
    /// `memory_bytes` for `n_distinct` distinct items, with `P`'s default
    /// configuration: the largest counter budget whose blocks fit, and the
    /// `k` in `1..=W::CELLS` whose expected over-estimate rate
    /// ([`predicted_error`](Self::predicted_error)) is smallest there, ties
    /// going to the smaller `k`, in two blocks an item (the default, as
    /// for [`plan`](Self::plan)). For a fixed buffer (firmware, a memory
    /// budget); [`plan`](Self::plan) is the converse. What the rate
    /// promises per policy is as [`plan`](Self::plan) says; for
    /// [`RecurringMinimum`](super::RecurringMinimum) the memory holds both
    /// filters.
    ///
    /// Errors: `n_distinct` of 0, or `memory_bytes` too small for the
    /// policy's smallest filter (one 64-byte block, two for Recurring
    /// Minimum). Memory past `isize::MAX` bytes is capped there.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// use streambloom::{Block, W8};
    /// let p = SpectralParams::<MinimumSelection>::plan_memory::<W8>(64 * 1024, 10_000)?;
    /// assert_eq!(p.blocks::<W8>()? * Block::BYTES, 64 * 1024);
    /// let best = p.predicted_error::<W8>(10_000)?;
    /// for k in 1..=64 {
    ///     let other = SpectralParams { k, ..p.clone() };
    ///     assert!(other.predicted_error::<W8>(10_000)? >= best);
    /// }
    /// assert!(SpectralParams::<MinimumSelection>::plan_memory::<W8>(63, 10).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan_memory<W: Counter>(memory_bytes: usize, n_distinct: u64) -> Result<Self> {
        Self::plan_memory_with_layout::<W>(memory_bytes, n_distinct, Layout::TwoBlocks)
    }

    /// [`plan_memory`](Self::plan_memory) for an item's counters placed by
    /// `layout` (`k` chosen by [`layout_error`]).
    ///
    /// ```
    /// use streambloom::hash::Layout;
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// use streambloom::W8;
    /// let two = SpectralParams::<MinimumSelection>::plan_memory::<W8>(64 * 1024, 10_000)?;
    /// let one = SpectralParams::<MinimumSelection>::plan_memory_with_layout::<W8>(64 * 1024, 10_000, Layout::OneBlock)?;
    /// assert_eq!(two.counters, one.counters);
    /// assert!(two.predicted_error::<W8>(10_000)? < one.predicted_error::<W8>(10_000)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan_memory_with_layout<W: Counter>(
        memory_bytes: usize,
        n_distinct: u64,
        layout: Layout,
    ) -> Result<Self> {
        if n_distinct == 0 {
            return Err(Error::param("n_distinct", n_distinct, "at least 1"));
        }
        let policy = P::default();
        let blocks = (memory_bytes / Block::BYTES).min(isize::MAX as usize / Block::BYTES);
        // Whether a budget fits: a budget too small for the policy counts
        // as fitting, so that fitting only stops as the budget grows, and
        // bisection finds the largest that fits.
        let fits = |counters: usize| match plan_geometry::<P, W>(&policy, counters, 1) {
            Ok(g) => g.total() <= blocks,
            Err(_) => policy.plan(counters).is_err(),
        };
        // The largest budget that fits: one less than the first that does not.
        let most = blocks.saturating_mul(W::CELLS);
        let counters = crate::search::first(1, most, |c| !fits(c)).map_or(most, |c| c - 1);
        let too_small = || {
            Error::param(
                "memory_bytes",
                memory_bytes,
                "enough for the policy's smallest filter: one 64-byte block, two for Recurring Minimum",
            )
        };
        if counters == 0 {
            return Err(too_small());
        }
        let geo = plan_geometry::<P, W>(&policy, counters, 1).map_err(|_| too_small())?;
        let mut best = (f64::INFINITY, 1);
        for k in 1..=W::CELLS as u32 {
            if geo.primary * W::CELLS <= k as usize {
                break;
            }
            let e = layout_error::<W>(layout, n_distinct, geo.primary, k);
            if e < best.0 {
                best = (e, k);
            }
        }
        Ok(SpectralParams {
            counters,
            k: best.1,
            policy,
            layout,
        })
    }
}

impl<P: Policy> SpectralParams<P> {
    /// The expected over-estimate rate of Minimum Selection over these
    /// parameters' primary filter after `n_distinct` distinct items
    /// ([`layout_error`] for its layout, with `counters` rounded up to whole blocks and
    /// split as the policy splits them): what [`plan`](Self::plan) meets.
    /// For [`MinimalIncrease`](super::MinimalIncrease) and
    /// [`RecurringMinimum`](super::RecurringMinimum) it bounds their
    /// over-estimate rate (see [`plan`](Self::plan)).
    ///
    /// Errors: invalid parameters, as [`blocks`](Self::blocks) reports them.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// use streambloom::{W32, W8};
    /// let p = SpectralParams::<MinimumSelection>::new(1 << 16, 5);
    /// // At equal memory, 16 counters a block err more than 64 do.
    /// let w32 = p.predicted_error::<W32>(10_000)?;
    /// let w8 = p.predicted_error::<W8>(10_000)?;
    /// assert!(w8 < w32);
    /// assert!(SpectralParams::<MinimumSelection>::new(0, 5).predicted_error::<W8>(10).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn predicted_error<W: Counter>(&self, n_distinct: u64) -> Result<f64> {
        let geo = plan_geometry::<P, W>(&self.policy, self.counters, self.k)?;
        Ok(layout_error::<W>(
            self.layout,
            n_distinct,
            geo.primary,
            geo.k,
        ))
    }
}

/// The fewest primary blocks, and the smallest `k` among those, whose
/// Minimum Selection error for `n` items is at most `target`.
fn smallest_primary<W: Counter>(n: u64, target: f64, layout: Layout) -> Result<(usize, u32)> {
    let max_blocks = isize::MAX as usize / Block::BYTES;
    let mut best: Option<(usize, u32)> = None;
    for k in 1..=W::CELLS as u32 {
        let meets = |blocks: usize| layout_error::<W>(layout, n, blocks, k) <= target;
        // The filter needs more primary counters than `k`.
        let fewest = k as usize / W::CELLS + 1;
        // Only fewer blocks than the best so far improve on it (a tie goes
        // to the smaller `k`, already found).
        let most = best.map_or(max_blocks, |(b, _)| b - 1);
        // A `k` that misses the target even at `most` blocks cannot win:
        // one evaluation rules it out (most `k` past the best are such).
        if best.is_some() && (most < fewest || !meets(most)) {
            continue;
        }
        // The error falls as blocks grow (the loads of the blocks fall).
        // The search starts at the unblocked filter's size, near the
        // answer: the formula costs most at few, heavily loaded blocks.
        let guess = unblocked_blocks::<W>(n, target, k);
        if let Some(b) = crate::search::first_from(fewest, most, guess, meets) {
            best = Some((b, k));
        }
    }
    best.ok_or(Error::param("target_error", target, UNREACHABLE))
}

/// The blocks an unblocked filter of `k` counters an item needs for `n`
/// distinct items at `target` ([`bloom_error`](crate::analysis::spectral::bloom_error)
/// `= (1 − e^{−γ})^k`, solved for the counters): where the planner's search
/// starts, as blocking only raises the error. Saturates at `usize::MAX`.
fn unblocked_blocks<W: Counter>(n: u64, target: f64, k: u32) -> usize {
    let gamma = -libm::log1p(-libm::pow(target, 1.0 / f64::from(k)));
    let counters = n as f64 * f64::from(k) / gamma;
    // `as` saturates, and NaN gives 0 (the search clamps the guess).
    libm::ceil(counters / W::CELLS as f64) as usize
}

/// The counter budget of least memory whose primary, as `policy` splits
/// it, has at least `blocks` blocks, validated with `k`: the smallest such
/// budget (the policies' shares only grow with the budget, so it has the
/// fewest blocks in all), rounded up to whole blocks when that keeps the
/// same split.
fn budget_for<P: Policy, W: Counter>(policy: &P, blocks: usize, k: u32) -> Result<usize> {
    let primary_blocks = |counters: usize| {
        policy
            .plan(counters)
            .map_or(0, |plan| plan.primary.div_ceil(W::CELLS))
    };
    let unreachable = || Error::param("counters", blocks.saturating_mul(W::CELLS), UNREACHABLE);
    // The primary is at most the budget, so the budget is at least this.
    let lo = (blocks - 1).checked_mul(W::CELLS).ok_or_else(unreachable)? + 1;
    let hi = crate::search::first_from(lo, usize::MAX, lo, |c| primary_blocks(c) >= blocks)
        .ok_or_else(unreachable)?;
    let geo = plan_geometry::<P, W>(policy, hi, k)?;
    let whole = geo.total().saturating_mul(W::CELLS);
    Ok(match plan_geometry::<P, W>(policy, whole, k) {
        Ok(same) if same == geo => whole,
        _ => hi,
    })
}

#[cfg(feature = "alloc")]
impl<P: Policy + Default, W: Counter> Spectral<P, Blocked<W>> {
    /// The smallest filter for `n_distinct` distinct items at an expected
    /// over-estimate rate of at most `target_error`
    /// ([`SpectralParams::plan`], which says what each policy is promised),
    /// seeded from `seed`.
    ///
    /// ```
    /// use streambloom::spectral::{Blocked, MinimalIncrease, Spectral};
    /// use streambloom::W16;
    /// let mut f = Spectral::<MinimalIncrease, Blocked<W16>>::plan(10_000, 0.01, 7)?;
    /// f.insert_n("GET /", 3);
    /// assert!(f.estimate("GET /") >= 3);
    /// assert!(f.predicted_error(10_000) <= 0.01);
    /// assert!(Spectral::<MinimalIncrease, Blocked<W16>>::plan(10_000, 0.0, 7).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan(n_distinct: u64, target_error: f64, seed: u64) -> Result<Self> {
        Self::new(SpectralParams::plan::<W>(n_distinct, target_error)?, seed)
    }
}

impl<P: Policy, W: Counter, S: crate::store::Storage, H> Spectral<P, Blocked<W, S>, H> {
    /// [`SpectralParams::predicted_error`] of this filter's parameters:
    /// the expected over-estimate rate of Minimum Selection over its
    /// primary counters after `n_distinct` distinct items.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(1 << 16, 4), 1)?;
    /// assert!(f.predicted_error(1_000) < f.predicted_error(10_000));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn predicted_error(&self, n_distinct: u64) -> f64 {
        let g = &self.store.geo;
        layout_error::<W>(g.layout, n_distinct, g.primary, g.k)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::super::{MinimalIncrease, MinimumSelection, RecurringMinimum};
    use super::*;
    use crate::analysis::spectral::{
        Coverage, blocked_error, bloom_error, gamma, two_block_halves,
    };
    use crate::rng::Rng;
    use crate::{Value, W8, W16, W32};
    use alloc::vec::Vec;

    /// Standard errors allowed between a measured rate and its expectation.
    const Z: f64 = 5.0;

    /// An upper bound on the standard error of the measured over-estimate
    /// fraction `X/n` of Minimum Selection over `n` distinct items.
    ///
    /// `X = Σ_b X_b` over blocks, `X_b ≤ L_b` the errors among the `L_b`
    /// items of block `b`. Given the loads the blocks are independent, and
    /// the loads (multinomial) are negatively associated, so
    /// `Var X ≤ Σ_b Var X_b ≤ Σ_b E[X_b²] ≤ Σ_b E[L_b X_b]
    /// = Σ_b E[L_b² g(L_b − 1)] = n E[(J + 1) g(J)]`, `J ~ Bin(n − 1, 1/b)`
    /// the others in an item's block and `g` [`block_error`]: the identity
    /// `l P(L = l) = (n/b) P(J = l − 1)` turns the sum over blocks into one
    /// over an item's neighbours.
    ///
    /// [`block_error`]: crate::analysis::spectral::block_error
    fn standard_error<W: Counter>(n: u64, blocks: usize, k: u32) -> f64 {
        let others = n - 1;
        let p = 1.0 / blocks as f64;
        let mut c = Coverage::new::<W>(k);
        let mut ln_w = others as f64 * libm::log1p(-p);
        let mut sum = 0.0;
        for j in 0..=others {
            sum += libm::exp(ln_w) * (j + 1) as f64 * c.error();
            if j as f64 > others as f64 * p && ln_w < -800.0 {
                break;
            }
            ln_w += libm::log((others - j) as f64) - libm::log((j + 1) as f64) + libm::log(p)
                - libm::log1p(-p);
            c.add_item();
        }
        libm::sqrt(sum / n as f64)
    }

    /// An upper bound on the standard error of the measured over-estimate
    /// fraction `X/n` in the **two-block** layout.
    ///
    /// `Var X = Σ_i Σ_j Cov(I_i, I_j)` over the items' error indicators.
    /// Items sharing no block are independent given the loads, whose
    /// multinomial counts are negatively associated, so those pairs add at
    /// most 0; the others are `i` itself and the `S_i` items with a half in
    /// one of `i`'s two blocks, each pair adding at most `E[I_i I_j] ≤
    /// E[I_i]`, so `Var X ≤ Σ_i E[I_i (1 + S_i)] = n (e + E[I S])`. With
    /// `I = I_A I_B` (both halves covered) and `S = S_A + S_B`, the blocks'
    /// loads independent as the model takes them, `E[I S] = s_A e_B +
    /// e_A s_B` ([`two_block_halves`]).
    fn two_block_standard_error<W: Counter>(n: u64, blocks: usize, k: u32) -> f64 {
        let (k1, k2) = Layout::TwoBlocks.halves(k);
        if k2 == 0 {
            return standard_error::<W>(n, blocks, k);
        }
        let [e1, s1, e2, s2] = two_block_halves::<W>(n, blocks, k1, k2);
        libm::sqrt((e1 * e2 + s1 * e2 + e1 * s2) / n as f64)
    }

    /// `n` distinct pseudo-random hashes.
    fn distinct_hashes(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let mut h: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        h.sort_unstable();
        h.dedup();
        while h.len() < n {
            h.push(rng.next_u64());
            h.sort_unstable();
            h.dedup();
        }
        h
    }

    /// The fraction of `n` distinct items, inserted once each (the first
    /// third twice, which changes nothing for Minimum Selection's event),
    /// whose estimate exceeds their count: (over, under).
    fn measured<P: Policy, W: Counter>(
        params: SpectralParams<P>,
        n: usize,
        seed: u64,
    ) -> (f64, f64) {
        let mut f = Spectral::<P, Blocked<W>>::new(params, seed).unwrap();
        let hashes = distinct_hashes(n, seed ^ 0xA5A5);
        f.insert_batch_hash(&hashes);
        f.insert_batch_hash(&hashes[..n / 3]);
        let mut counts = alloc::vec![0; n];
        f.estimate_batch_hash(&hashes, &mut counts).unwrap();
        let (mut over, mut under) = (0usize, 0usize);
        for (i, &c) in counts.iter().enumerate() {
            let truth = if i < n / 3 { 2 } else { 1 };
            over += usize::from(c > truth);
            under += usize::from(c < truth);
        }
        (over as f64 / n as f64, under as f64 / n as f64)
    }

    /// One cell of the measured-vs-formula grid.
    struct Cell {
        layout: Layout,
        k: u32,
        /// `γ = nk/m`.
        load: f64,
        n: u64,
        /// Measured over-estimate fraction.
        over: f64,
        /// [`blocked_error`].
        formula: f64,
        /// [`standard_error`].
        se: f64,
        /// The paper's unblocked `E_b`.
        unblocked: f64,
    }

    fn grid_cell<W: Counter>(layout: Layout, k: u32, load: f64, seed: u64) -> Cell {
        sized_cell::<W>(crate::scaled(1 << 16), layout, k, load, seed)
    }

    /// A cell of the grid at `counters` counters (whole blocks of them).
    fn sized_cell<W: Counter>(
        counters: usize,
        layout: Layout,
        k: u32,
        load: f64,
        seed: u64,
    ) -> Cell {
        let blocks = counters / W::CELLS;
        let n = ((load * counters as f64 / f64::from(k)) as u64).max(2);
        let params = SpectralParams::<MinimumSelection>::new(counters, k).with_layout(layout);
        let (over, _) = measured::<_, W>(params, n as usize, seed);
        let formula = layout_error::<W>(layout, n, blocks, k);
        Cell {
            layout,
            k,
            load,
            n,
            over,
            formula,
            se: match layout {
                Layout::OneBlock => standard_error::<W>(n, blocks, k),
                Layout::TwoBlocks => two_block_standard_error::<W>(n, blocks, k),
            },
            unblocked: bloom_error(k, gamma(n, k, counters as u64)),
        }
    }

    impl Cell {
        /// Asserts the measured rate within [`Z`] standard errors of the
        /// formula (`counters` for the message).
        fn holds<W: Counter>(&self, counters: usize) {
            assert!(
                (self.over - self.formula).abs() <= Z * self.se,
                "{:?} W{} {counters} counters k {} γ {} n {}: measured {}, formula {}, se {}",
                self.layout,
                W::BITS,
                self.k,
                self.load,
                self.n,
                self.over,
                self.formula,
                self.se
            );
        }
    }

    const KS: [u32; 4] = [1, 2, 4, 8];
    const LOADS: [f64; 3] = [0.35, 0.7, 1.4];

    /// Every cell of the grid for width `W`, in both layouts, each from its
    /// own seed.
    fn grid<W: Counter>() -> Vec<Cell> {
        let mut out = Vec::new();
        for (l, layout) in Layout::ALL.into_iter().enumerate() {
            for (i, &k) in KS.iter().enumerate() {
                for (j, &load) in LOADS.iter().enumerate() {
                    let seed =
                        0x5EED ^ (u64::from(W::BITS) << 16) ^ ((l << 12) | (i * 8 + j)) as u64;
                    out.push(grid_cell::<W>(layout, k, load, seed));
                }
            }
        }
        out
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn formula_matches_the_filter() {
        fn check<W: Counter>() {
            for c in grid::<W>() {
                c.holds::<W>(1 << 16);
            }
        }
        check::<W8>();
        check::<W16>();
        check::<W32>();
    }

    /// The same guarantee at other sizes (tens and thousands of blocks, not
    /// powers of two) and at the largest `k` a block takes, where the
    /// two-block halves are large and collapsing repeats are common.
    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn formula_matches_the_filter_at_other_sizes_and_large_k() {
        fn check<W: Counter>() {
            let cells = W::CELLS as u32;
            for (i, blocks) in [97usize, 6_151].into_iter().enumerate() {
                for (j, k) in [3, cells / 2, cells - 1, cells].into_iter().enumerate() {
                    for (l, layout) in Layout::ALL.into_iter().enumerate() {
                        for (g, load) in [0.7, 1.4].into_iter().enumerate() {
                            let seed = 0x51_2E
                                ^ (u64::from(W::BITS) << 20)
                                ^ ((i << 12) | (j << 8) | (l << 4) | g) as u64;
                            sized_cell::<W>(blocks * W::CELLS, layout, k, load, seed)
                                .holds::<W>(blocks * W::CELLS);
                        }
                    }
                }
            }
        }
        check::<W8>();
        check::<W16>();
        check::<W32>();
    }

    /// The planner's time in the default two-block layout, where the
    /// two-block model costs most (many items a block at high targets,
    /// 64 counters a block):
    /// `cargo test --release -p streambloom --lib spectral_plan_cost_report -- --ignored --nocapture`
    #[test]
    #[ignore = "a report: cargo test --release -p streambloom --lib spectral_plan_cost_report -- --ignored --nocapture"]
    fn spectral_plan_cost_report() {
        fn row<W: Counter>(n: u64, target: f64) {
            let start = std::time::Instant::now();
            let p = SpectralParams::<MinimumSelection>::plan::<W>(n, target).unwrap();
            std::println!(
                "W{:2} n {n:9} target {target:5}: {:7.3} s  counters {} k {}",
                W::BITS,
                start.elapsed().as_secs_f64(),
                p.counters,
                p.k
            );
        }
        for (n, target) in [
            (1000, 0.001),
            (100_000, 0.01),
            (100_000, 0.1),
            (100_000, 0.5),
            (10_000_000, 0.9),
        ] {
            row::<W8>(n, target);
            row::<W16>(n, target);
            row::<W32>(n, target);
        }
    }

    #[test]
    #[ignore = "a report: cargo test -p streambloom --lib report_spectral_plan -- --ignored --nocapture"]
    fn report_spectral_plan() {
        fn rows<W: Counter>() {
            for c in grid::<W>() {
                std::println!(
                    "| {:?} | W{} | {} | {} | {} | {:.5} | {:.5} | {:.5} | {:+.1} | {:.5} |",
                    c.layout,
                    W::BITS,
                    c.k,
                    c.load,
                    c.n,
                    c.over,
                    c.formula,
                    c.se,
                    (c.over - c.formula) / c.se,
                    c.unblocked
                );
            }
        }
        std::println!(
            "Minimum Selection over-estimate rate, 65 536 counters, n = γ·m/k distinct items"
        );
        std::println!(
            "| layout | W | k | γ | n | measured | layout formula | se bound | z | unblocked E_b |"
        );
        std::println!("|---|---|---|---|---|---|---|---|---|---|");
        rows::<W8>();
        rows::<W16>();
        rows::<W32>();
        std::println!();
        std::println!("Planned vs delivered (over = estimate above count; under = below)");
        std::println!(
            "| policy | W | n | target | counters | k | KiB | predicted | over | under | se bound |"
        );
        std::println!("|---|---|---|---|---|---|---|---|---|---|---|");
        for s in settings() {
            let (params, over, under, se) = s.run();
            let bytes = params.blocks * Block::BYTES;
            std::println!(
                "| {} | W{} | {} | {} | {} | {} | {:.1} | {:.5} | {:.5} | {:.5} | {:.5} |",
                s.policy,
                s.bits,
                s.n,
                s.target,
                params.counters,
                params.k,
                bytes as f64 / 1024.0,
                params.predicted,
                over,
                under,
                se
            );
        }
    }

    /// A planned filter under test.
    struct Setting {
        policy: &'static str,
        bits: u32,
        n: u64,
        target: f64,
    }

    /// What a plan gave and what it delivered.
    struct Planned {
        counters: usize,
        k: u32,
        blocks: usize,
        predicted: f64,
    }

    impl Setting {
        /// Plans, measures: (plan, over, under, se bound of MS's rate).
        fn run(&self) -> (Planned, f64, f64, f64) {
            match self.bits {
                8 => self.run_w::<W8>(),
                16 => self.run_w::<W16>(),
                _ => self.run_w::<W32>(),
            }
        }

        fn run_w<W: Counter>(&self) -> (Planned, f64, f64, f64) {
            match self.policy {
                "MS" => self.run_p::<MinimumSelection, W>(),
                "MI" => self.run_p::<MinimalIncrease, W>(),
                _ => self.run_p::<RecurringMinimum, W>(),
            }
        }

        fn run_p<P: Policy + Default, W: Counter>(&self) -> (Planned, f64, f64, f64) {
            let params = SpectralParams::<P>::plan::<W>(self.n, self.target).unwrap();
            let geo = plan_geometry::<P, W>(&params.policy, params.counters, params.k).unwrap();
            let predicted = params.predicted_error::<W>(self.n).unwrap();
            let seed = self.n ^ (u64::from(W::BITS) << 40) ^ self.target.to_bits();
            let planned = Planned {
                counters: params.counters,
                k: params.k,
                blocks: geo.total(),
                predicted,
            };
            let (over, under) = measured::<P, W>(params, self.n as usize, seed);
            let se = standard_error::<W>(self.n, geo.primary, geo.k);
            (planned, over, under, se)
        }
    }

    fn settings() -> Vec<Setting> {
        let n = crate::scaled(60_000) as u64;
        let mut out = Vec::new();
        for (policy, bits, target) in [
            ("MS", 8, 0.01),
            ("MS", 16, 0.01),
            ("MS", 32, 0.01),
            ("MS", 8, 0.001),
            ("MS", 32, 0.05),
            ("MI", 16, 0.01),
            ("MI", 32, 0.001),
            ("RM", 8, 0.01),
            ("RM", 32, 0.01),
        ] {
            out.push(Setting {
                policy,
                bits,
                n,
                target,
            });
        }
        out
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn planned_filters_deliver_their_target() {
        for s in settings() {
            let (p, over, _, se) = s.run();
            let name = alloc::format!("{} W{} n {} target {}", s.policy, s.bits, s.n, s.target);
            assert!(p.predicted <= s.target, "{name}: predicted {}", p.predicted);
            // Minimal Increase and Recurring Minimum over-estimate only
            // items Minimum Selection over its primary would (pointwise, for
            // the same stream and hashing), so its bound bounds them too.
            assert!(
                over <= s.target + Z * se,
                "{name}: delivered {over}, se {se}"
            );
            if s.policy == "MS" {
                assert!(
                    (over - p.predicted).abs() <= Z * se,
                    "{name}: delivered {over}, predicted {}",
                    p.predicted
                );
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
    fn plan_is_the_smallest() {
        fn check<W: Counter>(n: u64, target: f64) {
            let p = SpectralParams::<MinimumSelection>::plan::<W>(n, target).unwrap();
            let blocks = p.counters / W::CELLS;
            assert_eq!(p.counters % W::CELLS, 0);
            assert!(p.predicted_error::<W>(n).unwrap() <= target);
            for k in 1..=W::CELLS as u32 {
                if blocks > 1 {
                    let fewer = blocked_error::<W>(n, blocks - 1, k);
                    assert!(
                        fewer > target,
                        "W{} n {n} target {target}: k {k} meets it with a block fewer",
                        W::BITS
                    );
                }
                if k < p.k {
                    assert!(
                        blocked_error::<W>(n, blocks, k) > target,
                        "k {k} ties with a smaller k"
                    );
                }
            }
            // The policies' budgets: the same primary for each.
            let mi = SpectralParams::<MinimalIncrease>::plan::<W>(n, target).unwrap();
            assert_eq!((mi.counters, mi.k), (p.counters, p.k));
            let rm = SpectralParams::<RecurringMinimum>::plan::<W>(n, target).unwrap();
            assert_eq!(rm.k, p.k);
            let geo = |c: usize| plan_geometry::<RecurringMinimum, W>(&rm.policy, c, rm.k);
            let planned = geo(rm.counters).unwrap();
            assert_eq!(planned.primary, blocks);
            // The smallest budget with that primary, walking down, takes
            // no fewer blocks in all.
            let mut c = rm.counters;
            while geo(c - 1).is_ok_and(|g| g.primary >= blocks) {
                c -= 1;
            }
            assert_eq!(geo(c).unwrap().total(), planned.total());
        }
        for (n, target) in [(1000, 0.01), (50_000, 0.001), (3, 0.2), (1_000_000, 1e-6)] {
            check::<W8>(n, target);
            check::<W16>(n, target);
            check::<W32>(n, target);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
    fn plan_memory_fills_the_memory_at_the_best_k() {
        fn check<P: Policy + Default, W: Counter>(memory: usize, n: u64) {
            let p = SpectralParams::<P>::plan_memory::<W>(memory, n).unwrap();
            let geo = |c: usize| plan_geometry::<P, W>(&p.policy, c, p.k);
            let blocks = geo(p.counters).unwrap().total();
            assert!(blocks * Block::BYTES <= memory);
            // One counter more no longer fits.
            assert!(geo(p.counters + 1).unwrap().total() * Block::BYTES > memory);
            let best = p.predicted_error::<W>(n).unwrap();
            for k in 1..=W::CELLS as u32 {
                if let Ok(e) = (SpectralParams { k, ..p.clone() }).predicted_error::<W>(n) {
                    assert!(
                        e > best || (e == best && k >= p.k),
                        "k {k}: {e} against {best} at k {}",
                        p.k
                    );
                }
            }
        }
        for (memory, n) in [
            (64 * 1024, 10_000),
            (100_000, 50_000),
            (128, 3),
            (1 << 20, 1),
        ] {
            check::<MinimumSelection, W8>(memory, n);
            check::<MinimalIncrease, W16>(memory, n);
            check::<RecurringMinimum, W32>(memory, n);
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "numerics, not memory safety: the planner's search is too slow under Miri"
    )]
    fn plan_memory_bad_inputs_are_errors() {
        let small = |e: &Error| {
            matches!(
                e,
                Error::Parameter {
                    name: "memory_bytes",
                    ..
                }
            )
        };
        assert!(
            SpectralParams::<MinimumSelection>::plan_memory::<W8>(63, 10).is_err_and(|e| small(&e))
        );
        assert!(SpectralParams::<MinimumSelection>::plan_memory::<W8>(64, 10).is_ok());
        assert!(
            SpectralParams::<RecurringMinimum>::plan_memory::<W8>(64, 10).is_err_and(|e| small(&e))
        );
        assert!(SpectralParams::<RecurringMinimum>::plan_memory::<W8>(128, 10).is_ok());
        assert!(matches!(
            SpectralParams::<MinimumSelection>::plan_memory::<W8>(1024, 0),
            Err(Error::Parameter {
                name: "n_distinct",
                ..
            })
        ));
        // Memory past isize::MAX is capped there, not an error.
        let p =
            SpectralParams::<MinimumSelection>::plan_memory::<W32>(usize::MAX, 1 << 40).unwrap();
        assert!(p.blocks::<W32>().is_ok());
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "numerics, not memory safety: the planner's search is too slow under Miri"
    )]
    fn one_item_needs_one_block() {
        let p = SpectralParams::<MinimumSelection>::plan::<W32>(1, 1e-9).unwrap();
        assert_eq!((p.counters, p.k), (16, 1));
        let f = Spectral::<MinimumSelection, Blocked<W32>>::plan(1, 1e-9, 3).unwrap();
        assert_eq!(f.predicted_error(1), 0.0);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "numerics, not memory safety: the planner's search is too slow under Miri"
    )]
    fn bad_inputs_are_errors() {
        let err = |name: &'static str, given: Value| {
            move |e: Error| match e {
                Error::Parameter {
                    name: n, given: g, ..
                } => n == name && g == given,
                _ => false,
            }
        };
        let plan = SpectralParams::<MinimumSelection>::plan::<W16>;
        assert!(plan(0, 0.01).is_err_and(err("n_distinct", Value::Int(0))));
        for t in [0.0, 1.0, -0.5, 2.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(
                plan(1000, t).is_err_and(err("target_error", Value::Real(t))),
                "{t}"
            );
        }
        assert!(matches!(
            plan(1000, f64::NAN),
            Err(Error::Parameter {
                name: "target_error",
                ..
            })
        ));
        // Targets no addressable filter reaches.
        assert!(plan(u64::MAX, 1e-3).is_err_and(err("target_error", Value::Real(1e-3))));
        assert!(plan(2, 1e-300).is_err_and(err("target_error", Value::Real(1e-300))));
        assert!(SpectralParams::<RecurringMinimum>::plan::<W8>(u64::MAX, 1e-3).is_err());
        assert!(Spectral::<MinimalIncrease, Blocked<W8>>::plan(0, 0.1, 1).is_err());
        assert!(Spectral::<MinimalIncrease, Blocked<W8>>::plan(10, f64::NAN, 1).is_err());
        assert!(
            SpectralParams::<MinimumSelection>::new(100, 0)
                .predicted_error::<W8>(10)
                .is_err()
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
    fn huge_streams_plan_or_fail_cleanly() {
        // Whatever the answer, it comes back, and a plan is a valid filter
        // meeting its target.
        for n in [u64::MAX, u64::MAX / 1000, 1 << 50] {
            for target in [0.5, 0.1, 1e-3] {
                if let Ok(p) = SpectralParams::<RecurringMinimum>::plan::<W32>(n, target) {
                    assert!(p.blocks::<W32>().is_ok());
                    assert!(p.predicted_error::<W32>(n).unwrap() <= target);
                }
            }
        }
    }
}
