//! The fixed-width blocked counter store, [`Blocked`]: `W`-bit saturating
//! counters in 64-byte blocks, an item's `k` counters of a table in one
//! block of it (blocked hashing, see [`crate::hash`]), run with the SIMD
//! kernels of [`streambloom_kernels`].

use super::counters::{CounterStore, Counters, CountersMut, MAX_ITEM_COUNTERS, Shape, Table};
use super::policy::{Plan, Policy};
use super::{Counter, SpectralParams};
use crate::hash::{self, Layout, Placement, Probe, Probes, mix64};
use crate::store::{Cells, DefaultStorage, Storage, blocks_named};
use crate::{Error, Result};
use streambloom_kernels::{
    Backend, Block, Engine, Isa, Mask, MinCount, Ops, W1, W32, Width, cell, prefetch, set_cell,
};

/// How [`Spectral`](super::Spectral) places an item's `k` counters in its block, in every
/// region (primary, secondary, marker): the measured choice, see the
/// [`hash`] module docs.
pub const PLACEMENT: Placement = Placement::Collapsing;

pub(super) const SECONDARY_SALT: u64 = 0x5EC0_4DA7_5EC0_4DA7;
pub(super) const MARKER_SALT: u64 = 0x3A7C_E7B1_0F17_E7ED;

/// Block counts of the filter's regions, in storage order: primary,
/// secondary, marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Geometry {
    pub(super) primary: usize,
    pub(super) secondary: usize,
    pub(super) marker: usize,
    pub(super) k: u32,
    /// Where an item's counters go in each table: one block, or two.
    pub(super) layout: Layout,
    /// The placement under test ([`PLACEMENT`] outside tests).
    #[cfg(test)]
    pub(super) placement: Placement,
}

impl Geometry {
    pub(super) fn total(&self) -> usize {
        self.primary + self.secondary + self.marker
    }

    /// The placement of items' counters: [`PLACEMENT`], or another in
    /// tests.
    #[inline(always)]
    pub(super) fn placement(&self) -> Placement {
        #[cfg(test)]
        return self.placement;
        #[cfg(not(test))]
        PLACEMENT
    }

    /// Item `h`'s cells in a region of `blocks` blocks starting at block
    /// `first`: one probe, or two in [`Layout::TwoBlocks`] (see
    /// [`hash::probes`]).
    #[inline(always)]
    pub(super) fn probes_in<W: Width>(&self, h: u64, blocks: usize, first: usize) -> Probes<W> {
        // One block: the cells of `k` without splitting them in halves
        // (the same probe, with fewer instructions on the hot path).
        if self.layout == Layout::OneBlock {
            return Probes {
                first: Probe {
                    block: first + hash::block_of(h, blocks),
                    mask: hash::placed_cells::<W>(PLACEMENT, self.placement(), h, self.k),
                },
                second: None,
            };
        }
        let mut p = self.two_probes::<W>(h, blocks);
        p.first.block += first;
        if let Some(second) = &mut p.second {
            second.block += first;
        }
        p
    }

    /// [`Layout::TwoBlocks`]' probes. Out of line in tests: inlined into
    /// every operation of every policy, width and instruction set, with
    /// the placement three times over, it made the core's unit-test build
    /// four times longer (71 to 313 s of CPU).
    #[cfg_attr(not(test), inline(always))]
    #[cfg_attr(test, inline(never))]
    fn two_probes<W: Width>(&self, h: u64, blocks: usize) -> Probes<W> {
        hash::placed_probes::<W>(
            Layout::TwoBlocks,
            PLACEMENT,
            self.placement(),
            h,
            blocks,
            self.k,
        )
    }

    #[inline(always)]
    pub(super) fn primary<W: Counter>(&self, h: u64) -> Probes<W> {
        self.probes_in::<W>(h, self.primary, 0)
    }

    #[inline(always)]
    pub(super) fn secondary<W: Counter>(&self, h: u64) -> Probes<W> {
        self.probes_in::<W>(mix64(h ^ SECONDARY_SALT), self.secondary, self.primary)
    }

    #[inline(always)]
    pub(super) fn marker(&self, h: u64) -> Probes<W1> {
        self.probes_in::<W1>(
            mix64(h ^ MARKER_SALT),
            self.marker,
            self.primary + self.secondary,
        )
    }
}

/// Applies `f` to each probe of `p`: the first, then the second if any.
/// In tests a loop, whose one call site inlines the kernel `f` runs once
/// (the test build instantiates every operation for every policy, width
/// and instruction set); elsewhere unrolled, the loop measured 30 % more
/// instructions an item for a one-block insert (cachegrind).
#[inline(always)]
fn each<W: Width>(p: Probes<W>, mut f: impl FnMut(Probe<W>)) {
    #[cfg(test)]
    for q in core::iter::once(p.first).chain(p.second) {
        f(q);
    }
    #[cfg(not(test))]
    {
        f(p.first);
        if let Some(second) = p.second {
            f(second);
        }
    }
}

/// The minimum and its multiplicity over two disjoint sets of counters.
#[inline(always)]
fn merge_min(a: MinCount, b: MinCount) -> MinCount {
    match a.min.cmp(&b.min) {
        core::cmp::Ordering::Less => a,
        core::cmp::Ordering::Greater => b,
        core::cmp::Ordering::Equal => MinCount {
            min: a.min,
            count: a.count + b.count,
        },
    }
}

/// A filter's blocks seen through the [`Counters`] interface, with backend
/// `B`'s kernels (inside [`streambloom_kernels::Engine::run`]): the
/// [`Blocked`] store's read view.
pub struct Ctx<'a, W: Width, B: Backend> {
    blocks: &'a [Block],
    kernels: Ops<W, B>,
    marker: Ops<W1, B>,
    geo: &'a Geometry,
}

/// [`Ctx`] with write access ([`CountersMut`]): the [`Blocked`] store's
/// write view.
pub struct CtxMut<'a, W: Width, B: Backend> {
    blocks: &'a mut [Block],
    kernels: Ops<W, B>,
    marker: Ops<W1, B>,
    geo: &'a Geometry,
}

impl Geometry {
    /// The item's counters in `table`.
    #[inline(always)]
    pub(super) fn probe<W: Counter>(&self, table: Table, h: u64) -> Probes<W> {
        match table {
            Table::Primary => self.primary(h),
            Table::Secondary => self.secondary(h),
        }
    }

    /// The same, for the marker filter.
    #[inline(always)]
    pub(super) fn marked<B: Backend>(&self, ops: Ops<W1, B>, blocks: &[Block], h: u64) -> bool {
        if self.marker == 0 {
            return false;
        }
        let p = self.marker(h);
        !(ops.any_zero(&blocks[p.first.block], p.first.mask)
            || p.second
                .is_some_and(|q| ops.any_zero(&blocks[q.block], q.mask)))
    }

    /// The smallest of the item's counters in `table` and how many hold it.
    #[inline(always)]
    fn min_count<W: Counter, B: Backend>(
        &self,
        ops: Ops<W, B>,
        blocks: &[Block],
        table: Table,
        h: u64,
    ) -> MinCount {
        let p = self.probe::<W>(table, h);
        let first = ops.min_count(&blocks[p.first.block], p.first.mask);
        match p.second {
            None => first,
            Some(q) => merge_min(first, ops.min_count(&blocks[q.block], q.mask)),
        }
    }

    /// The item's distinct primary counters ([`Counters::primary_counters`]).
    #[inline(always)]
    pub(super) fn primary_counters<W: Counter>(
        &self,
        blocks: &[Block],
        h: u64,
        out: &mut [(usize, u32); MAX_ITEM_COUNTERS],
    ) -> usize {
        let p = self.primary::<W>(h);
        // In increasing id order: the lower block first.
        let (lo, hi) = match p.second {
            Some(q) if q.block < p.first.block => (q, Some(p.first)),
            second => (p.first, second),
        };
        let mut n = 0;
        each(
            Probes {
                first: lo,
                second: hi,
            },
            |q| {
                let mut cells = q.mask;
                while let Some(i) = cells.pop_lowest() {
                    // An item has at most MAX_ITEM_COUNTERS counters (a block's
                    // worth, split between two blocks in the two-block layout).
                    if let Some(slot) = out.get_mut(n) {
                        *slot = (q.block * W::CELLS + i, cell::<W>(&blocks[q.block], i));
                        n += 1;
                    }
                }
            },
        );
        n
    }
}

/// Both views read the same way.
macro_rules! blocked_counters {
    ($($view:ident),*) => {$(
        impl<W: Counter, B: Backend> Counters for $view<'_, W, B> {
            #[inline(always)]
            fn min_count(&self, table: Table, h: u64) -> MinCount {
                self.geo.min_count(self.kernels, self.blocks, table, h)
            }

            #[inline(always)]
            fn marked(&self, h: u64) -> bool {
                self.geo.marked(self.marker, self.blocks, h)
            }

            #[inline(always)]
            fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize {
                self.geo.primary_counters::<W>(self.blocks, h, out)
            }
        }
    )*};
}
blocked_counters!(Ctx, CtxMut);

impl<W: Counter, B: Backend> CountersMut for CtxMut<'_, W, B> {
    #[inline(always)]
    fn add(&mut self, table: Table, h: u64, r: u32) {
        let (ops, blocks) = (self.kernels, &mut *self.blocks);
        each(self.geo.probe::<W>(table, h), |q| {
            ops.add_sat(&mut blocks[q.block], q.mask, r)
        });
    }

    #[inline(always)]
    fn sub(&mut self, table: Table, h: u64, r: u32) {
        let (ops, blocks) = (self.kernels, &mut *self.blocks);
        each(self.geo.probe::<W>(table, h), |q| {
            ops.sub_sat(&mut blocks[q.block], q.mask, r)
        });
    }

    #[inline(always)]
    fn raise_to(&mut self, table: Table, h: u64, v: u32) {
        let (ops, blocks) = (self.kernels, &mut *self.blocks);
        each(self.geo.probe::<W>(table, h), |q| {
            ops.max_assign(&mut blocks[q.block], q.mask, v)
        });
    }

    #[inline(always)]
    fn mark(&mut self, h: u64) {
        if self.geo.marker == 0 {
            return;
        }
        let (ops, blocks) = (self.marker, &mut *self.blocks);
        each(self.geo.marker(h), |q| {
            ops.assign(&mut blocks[q.block], q.mask, 1)
        });
    }
}

pub(super) fn plan_geometry<P: Policy, W: Counter>(
    policy: &P,
    counters: usize,
    k: u32,
) -> Result<Geometry> {
    if counters == 0 {
        return Err(Error::param("counters", counters, "at least 1"));
    }
    let plan: Plan = policy.plan(counters)?;
    let primary = blocks_named::<W>(plan.primary, "counters")?;
    let secondary = if plan.secondary == 0 {
        0
    } else {
        blocks_named::<W>(plan.secondary, "counters")?
    };
    let marker = if plan.marker == 0 {
        0
    } else {
        blocks_named::<W1>(plan.marker, "marker bits")?
    };
    if k == 0 || k as usize > W::CELLS {
        return Err(Error::param(
            "k",
            k,
            "in 1..=W::CELLS, the counters of a block (64, 32, 16 for W8, W16, W32)",
        ));
    }
    // Saturating: a primary too large to count in `usize` is far above `k`
    // (and rejected as too large just below).
    if primary.saturating_mul(W::CELLS) <= k as usize {
        return Err(Error::param("k", k, "below the number of primary counters"));
    }
    let geo = Geometry {
        primary,
        secondary,
        marker,
        k,
        layout: Layout::OneBlock,
        #[cfg(test)]
        placement: PLACEMENT,
    };
    crate::store::bytes_for(geo.total(), "counters", counters)?;
    Ok(geo)
}

/// The fixed-width blocked [`CounterStore`]: `W`-bit saturating counters
/// ([`W8`](crate::W8), [`W16`](crate::W16) or [`W32`], the default) in
/// 64-byte blocks held by `S` (a `Vec<Block>` by default, or a caller's
/// `&mut [Block]`): the primary table, then Recurring Minimum's secondary,
/// then its marker bits. An item's counters in a table are `k` cells of one
/// block, placed by [`PLACEMENT`]: one cache line per table per item, and
/// every operation one SIMD select-then-update of that line.
///
/// A [`Spectral`](super::Spectral) filter builds its store from its
/// parameters ([`Spectral::new`](super::Spectral::new) and the other
/// constructors); the store is named only in the filter's type:
///
/// ```
/// use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
/// use streambloom::W8;
/// let mut f = Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(640, 4), 1)?;
/// f.insert_n("x", 300);
/// assert_eq!(f.estimate("x"), 255); // 8-bit counters saturate
/// assert_eq!(f.store().blocks().len(), 10);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone)]
pub struct Blocked<W: Counter = W32, S = DefaultStorage> {
    pub(super) cells: Cells<W, S>,
    pub(super) geo: Geometry,
}

impl<W: Counter, S: Storage> core::fmt::Debug for Blocked<W, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Blocked")
            .field("bits", &W::BITS)
            .field("k", &self.geo.k)
            .field("blocks", &self.geo)
            .field("isa", &self.cells.isa())
            .finish()
    }
}

/// Two stores are equal when their geometry and counters are.
impl<W: Counter, S: Storage> PartialEq for Blocked<W, S> {
    fn eq(&self, other: &Self) -> bool {
        self.geo == other.geo && self.cells.blocks() == other.cells.blocks()
    }
}

impl<W: Counter, S: Storage> Blocked<W, S> {
    /// The store of `params`' plan, adopting `storage`'s contents (which
    /// must be exactly the blocks the plan needs).
    pub(super) fn new<P: Policy>(params: &SpectralParams<P>, storage: S) -> Result<Self> {
        let mut geo = plan_geometry::<P, W>(&params.policy, params.counters, params.k)?;
        geo.layout = params.layout;
        let cells = Cells::new(storage, geo.total())?;
        Ok(Blocked { cells, geo })
    }

    /// All blocks (primary, then secondary, then marker): for comparing and
    /// persisting filters (and [`Spectral::restore`](super::Spectral::restore)).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.store().blocks().len(), 256);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }

    /// The kernel implementation in use.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.store().isa(), streambloom::Isa::detect());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.cells.isa()
    }
}

impl<W: Counter, S: Storage> CounterStore for Blocked<W, S> {
    type Read<'a, B: Backend>
        = Ctx<'a, W, B>
    where
        Self: 'a;
    type Write<'a, B: Backend>
        = CtxMut<'a, W, B>
    where
        Self: 'a;

    const MAX: u32 = W::MAX;

    #[inline(always)]
    fn read<B: Backend>(&self, backend: B) -> Ctx<'_, W, B> {
        Ctx {
            blocks: self.cells.blocks(),
            kernels: Ops::new(backend),
            marker: Ops::new(backend),
            geo: &self.geo,
        }
    }

    #[inline(always)]
    fn write<B: Backend>(&mut self, backend: B) -> CtxMut<'_, W, B> {
        CtxMut {
            blocks: self.cells.blocks_mut(),
            kernels: Ops::new(backend),
            marker: Ops::new(backend),
            geo: &self.geo,
        }
    }

    #[inline(always)]
    fn engine(&self) -> Engine {
        self.cells.engine()
    }

    fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.cells.set_isa(isa)
    }

    #[inline(always)]
    fn prefetching(&self) -> bool {
        self.cells.prefetching()
    }

    #[inline(always)]
    fn prefetch(&self, h: u64) {
        let blocks = self.cells.blocks();
        let geo = &self.geo;
        each(geo.primary::<W>(h), |q| prefetch(&blocks[q.block]));
        if geo.secondary > 0 {
            each(geo.secondary::<W>(h), |q| prefetch(&blocks[q.block]));
        }
        if geo.marker > 0 {
            each(geo.marker(h), |q| prefetch(&blocks[q.block]));
        }
    }

    fn k(&self) -> u32 {
        self.geo.k
    }

    fn counters(&self) -> usize {
        self.geo.primary * W::CELLS
    }

    fn budget(&self) -> usize {
        (self.geo.primary + self.geo.secondary) * W::CELLS
    }

    fn expected_item_counters(&self) -> f64 {
        // [`PLACEMENT`] collapses repeats: fewer than `k` on average. With
        // two blocks each half collapses on its own, except when both land
        // in one block (chance `1/blocks`), where all `k` draws do.
        let place = self.geo.placement();
        let (k1, k2) = self.geo.layout.halves(self.geo.k);
        if k2 == 0 {
            return place.expected_cells::<W>(k1);
        }
        let same = 1.0 / self.geo.primary as f64;
        (1.0 - same) * (place.expected_cells::<W>(k1) + place.expected_cells::<W>(k2))
            + same * place.expected_cells::<W>(self.geo.k)
    }

    fn shape(&self) -> Shape {
        Shape {
            store: "blocked",
            bits: W::BITS,
            counters: self.counters(),
            secondary: self.geo.secondary * W::CELLS,
            marker: self.geo.marker * W1::CELLS,
            k: self.geo.k,
            layout: self.geo.layout,
            placement: self.geo.placement(),
        }
    }

    fn primary(&self, i: usize) -> u32 {
        match self.cells.get(i) {
            Some(v) if i < self.counters() => v,
            _ => 0,
        }
    }

    fn set_primary(&mut self, i: usize, v: u32) {
        if i < self.counters() {
            set_cell::<W>(self.cells.block_mut(i / W::CELLS), i % W::CELLS, v);
        }
    }

    fn clear_secondary(&mut self) {
        self.cells.blocks_mut()[self.geo.primary..].fill(Block::ZERO);
    }

    fn clear(&mut self) {
        self.cells.clear();
    }
}
