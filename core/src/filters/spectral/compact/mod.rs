//! The compact counter store of the report's §4, [`Compact`]: the Spectral
//! filter's counters as variable-length ⌈log C⌉-bit strings in a
//! [`StringArray`] (the base array with slack and its string-array index,
//! one allocation), instead of fixed-width cells.
//!
//! An item's counters are the same counters as in [`Blocked`](super::Blocked)
//! with the same width `W` and parameters (the same placement, the same
//! ids), and every update saturates at `W::MAX` as there: a filter on
//! either store answers alike, counter for counter. What differs is the
//! memory (about `log C` bits a counter plus the index, instead of
//! `W::BITS`) and the time (an index lookup per counter instead of one
//! SIMD operation per block): `streambloom-bench repro compact` measures
//! both.

pub mod codes;
mod index;

#[cfg(test)]
mod tests;

pub use index::{Footprint, MAX_COUNTERS, StringArray};

use super::blocked::{Geometry, plan_geometry};
use super::counters::{CounterStore, Counters, CountersMut, MAX_ITEM_COUNTERS, Shape, Table};
use super::policy::Policy;
use super::{Counter, SpectralParams, W32};
use crate::hash::Probes;
use crate::{Error, MinCount, Result};
use core::marker::PhantomData;
use streambloom_kernels::{Backend, Engine, Isa, Mask, W1, Width};

/// The compact [`CounterStore`]: the counters of every table (primary,
/// secondary, marker) in one [`StringArray`], each in about `log C` bits,
/// saturating at `W::MAX`. `W` ([`W8`](super::W8), [`W16`](super::W16) or
/// [`W32`], the default) sets that maximum and the placement: an item has
/// the counters it would have in a [`Blocked<W>`](super::Blocked) store of
/// the same parameters.
///
/// Build it from the filter's parameters and hand it to
/// [`Spectral::from_store`](super::Spectral::from_store):
///
/// ```
/// use streambloom::spectral::{Compact, MinimalIncrease, Spectral, SpectralParams};
/// use streambloom::hash::seeded_hasher;
/// let params = SpectralParams::<MinimalIncrease>::new(4096, 4);
/// let store = Compact::<streambloom::W32>::new(&params)?;
/// let mut f = Spectral::from_store(store, params.policy, seeded_hasher(1))?;
/// f.insert_n("x", 1000);
/// assert_eq!(f.estimate("x"), 1000);
/// // About 1 bit a counter of slack and a few of index, not 32.
/// let bits = f.store().array().footprint();
/// assert!(bits.index() + bits.base < 4096 * 8);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Compact<W: Counter = W32> {
    array: StringArray,
    geo: Geometry,
    engine: Engine,
    width: PhantomData<W>,
}

/// Two stores are equal when their geometry and counters are.
impl<W: Counter> PartialEq for Compact<W> {
    fn eq(&self, other: &Self) -> bool {
        self.geo == other.geo && self.array == other.array
    }
}

impl<W: Counter> Compact<W> {
    /// The empty store of `params`' plan: the tables a
    /// [`Blocked<W>`](super::Blocked) store of the same parameters has, as
    /// counters of one [`StringArray`].
    ///
    /// Errors: as [`SpectralParams::blocks`], and when all tables together
    /// exceed [`MAX_COUNTERS`].
    ///
    /// ```
    /// use streambloom::spectral::{Compact, MinimumSelection, RecurringMinimum, SpectralParams};
    /// use streambloom::spectral::CounterStore;
    /// use streambloom::W8;
    /// let ms = Compact::<W8>::new(&SpectralParams::<MinimumSelection>::new(640, 4))?;
    /// assert_eq!((ms.counters(), <Compact<W8> as CounterStore>::MAX), (640, 255));
    /// let rm = SpectralParams::new(3000, 4).with_policy(RecurringMinimum::new().with_marker(512));
    /// assert!(Compact::<W8>::new(&rm)?.array().len() > 3000);
    /// assert!(Compact::<W8>::new(&SpectralParams::<MinimumSelection>::new(0, 4)).is_err());
    /// let huge = SpectralParams::new(64, 4).with_policy(RecurringMinimum::new().with_marker(usize::MAX));
    /// assert!(Compact::<W8>::new(&huge).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new<P: Policy>(params: &SpectralParams<P>) -> Result<Self> {
        let mut geo = plan_geometry::<P, W>(&params.policy, params.counters, params.k)?;
        geo.layout = params.layout;
        // Checked: a marker of `usize::MAX` bits is a valid plan for the
        // blocked stores (their allocation fails) but overflows this sum.
        let all = (geo.primary.saturating_add(geo.secondary))
            .saturating_mul(W::CELLS)
            .saturating_add(geo.marker.saturating_mul(W1::CELLS));
        if all > MAX_COUNTERS {
            return Err(Error::param(
                "counters",
                params.counters,
                "at most MAX_COUNTERS (2^26) counters and marker bits in all",
            ));
        }
        Ok(Compact {
            array: StringArray::new(all, W::BITS)?,
            geo,
            engine: Engine::best(),
            width: PhantomData,
        })
    }

    /// The counters: primary (ids `0..counters()`, as
    /// [`Counters::primary_counters`] names them), then secondary, then
    /// the marker bits.
    ///
    /// ```
    /// use streambloom::spectral::{Compact, MinimumSelection, SpectralParams};
    /// let c = Compact::<streambloom::W16>::new(&SpectralParams::<MinimumSelection>::new(1024, 4))?;
    /// assert_eq!(c.array().len(), 1024);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn array(&self) -> &StringArray {
        &self.array
    }

    /// The store's one allocation, index and base array, as words
    /// ([`StringArray::words`]).
    ///
    /// ```
    /// use streambloom::spectral::{Compact, MinimumSelection, SpectralParams};
    /// let c = Compact::<streambloom::W16>::new(&SpectralParams::<MinimumSelection>::new(1024, 4))?;
    /// assert_eq!(c.words(), c.array().words());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn words(&self) -> &[u64] {
        self.array.words()
    }

    /// The ids of the item's counters in `table`, lower block first, each
    /// block's in increasing order.
    #[inline(always)]
    fn ids(&self, table: Table, h: u64, out: &mut [usize; MAX_ITEM_COUNTERS]) -> usize {
        let p = self.geo.probe::<W>(table, h);
        collect(p, W::CELLS, 0, out)
    }

    /// Counter `id`'s value.
    #[inline(always)]
    fn at(&self, id: usize) -> u32 {
        self.array.get(id).unwrap_or(0)
    }

    /// Applies `f` to each of the item's counters in `table`.
    #[inline(always)]
    fn update(&mut self, table: Table, h: u64, f: impl Fn(u32) -> u32) {
        let mut ids = [0; MAX_ITEM_COUNTERS];
        let n = self.ids(table, h, &mut ids);
        for &id in &ids[..n] {
            // `id` is below the array's length by construction.
            let _ = self.array.set(id, f(self.at(id)).min(W::MAX));
        }
    }

    /// The ids of the item's marker bits.
    #[inline(always)]
    fn marker_ids(&self, h: u64, out: &mut [usize; MAX_ITEM_COUNTERS]) -> usize {
        let before = self.geo.primary + self.geo.secondary;
        let p = self.geo.marker(h);
        // Marker blocks are numbered after the counter blocks, and hold
        // `W1::CELLS` bits each.
        collect(
            p,
            W1::CELLS,
            (before * W::CELLS).wrapping_sub(before * W1::CELLS),
            out,
        )
    }
}

/// The ids (`block · cells + cell + shift`) of `p`'s cells, lower block
/// first; at most `MAX_ITEM_COUNTERS` of them.
#[inline(always)]
fn collect<V: Width>(
    p: Probes<V>,
    cells: usize,
    shift: usize,
    out: &mut [usize; MAX_ITEM_COUNTERS],
) -> usize {
    let (lo, hi) = match p.second {
        Some(q) if q.block < p.first.block => (q, Some(p.first)),
        second => (p.first, second),
    };
    let mut n = 0;
    for q in core::iter::once(lo).chain(hi) {
        let mut mask = q.mask;
        while let Some(c) = mask.pop_lowest() {
            if let Some(slot) = out.get_mut(n) {
                *slot = (q.block * cells + c).wrapping_add(shift);
                n += 1;
            }
        }
    }
    n
}

impl<W: Counter> Counters for Compact<W> {
    #[inline]
    fn min_count(&self, table: Table, h: u64) -> MinCount {
        let mut ids = [0; MAX_ITEM_COUNTERS];
        let n = self.ids(table, h, &mut ids);
        let mut mc = MinCount {
            min: u32::MAX,
            count: 0,
        };
        for &id in &ids[..n] {
            let v = self.at(id);
            if v < mc.min {
                mc = MinCount { min: v, count: 1 };
            } else if v == mc.min {
                mc.count += 1;
            }
        }
        mc
    }

    #[inline]
    fn marked(&self, h: u64) -> bool {
        if self.geo.marker == 0 {
            return false;
        }
        let mut ids = [0; MAX_ITEM_COUNTERS];
        let n = self.marker_ids(h, &mut ids);
        ids[..n].iter().all(|&id| self.at(id) != 0)
    }

    #[inline]
    fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize {
        let mut ids = [0; MAX_ITEM_COUNTERS];
        let n = self.ids(Table::Primary, h, &mut ids);
        for (slot, &id) in out.iter_mut().zip(&ids[..n]) {
            *slot = (id, self.at(id));
        }
        n
    }
}

impl<W: Counter> CountersMut for Compact<W> {
    #[inline]
    fn add(&mut self, table: Table, h: u64, r: u32) {
        self.update(table, h, |v| v.saturating_add(r));
    }

    #[inline]
    fn sub(&mut self, table: Table, h: u64, r: u32) {
        self.update(table, h, |v| v.saturating_sub(r));
    }

    #[inline]
    fn raise_to(&mut self, table: Table, h: u64, v: u32) {
        self.update(table, h, |c| c.max(v));
    }

    #[inline]
    fn mark(&mut self, h: u64) {
        if self.geo.marker == 0 {
            return;
        }
        let mut ids = [0; MAX_ITEM_COUNTERS];
        let n = self.marker_ids(h, &mut ids);
        for &id in &ids[..n] {
            let _ = self.array.set(id, 1);
        }
    }
}

impl<W: Counter> CounterStore for Compact<W> {
    type Read<'a, B: Backend>
        = &'a Self
    where
        Self: 'a;
    type Write<'a, B: Backend>
        = &'a mut Self
    where
        Self: 'a;

    const MAX: u32 = W::MAX;

    /// The store itself: it has no kernels to choose.
    #[inline(always)]
    fn read<B: Backend>(&self, _: B) -> &Self {
        self
    }

    /// The store itself: it has no kernels to choose.
    #[inline(always)]
    fn write<B: Backend>(&mut self, _: B) -> &mut Self {
        self
    }

    fn engine(&self) -> Engine {
        self.engine
    }

    fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.engine = Engine::new(isa).ok_or(Error::Unsupported { isa: isa.name() })?;
        Ok(())
    }

    /// Never: an item's counters are not in a few known cache lines (a
    /// lookup walks the index first).
    fn prefetching(&self) -> bool {
        false
    }

    /// Nothing (see [`prefetching`](Self::prefetching)).
    fn prefetch(&self, _: u64) {}

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
        // As `Blocked`'s: the same placement collapses the same repeats.
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
            store: "compact",
            bits: 0,
            counters: self.counters(),
            secondary: self.geo.secondary * W::CELLS,
            marker: self.geo.marker * W1::CELLS,
            k: self.geo.k,
            layout: self.geo.layout,
            placement: self.geo.placement(),
        }
    }

    fn primary(&self, i: usize) -> u32 {
        if i < self.counters() { self.at(i) } else { 0 }
    }

    fn set_primary(&mut self, i: usize, v: u32) {
        if i < self.counters() {
            let _ = self.array.set(i, v);
        }
    }

    fn clear_secondary(&mut self) {
        for id in self.counters()..self.array.len() {
            let _ = self.array.set(id, 0);
        }
    }

    fn clear(&mut self) {
        self.array.clear();
    }
}
