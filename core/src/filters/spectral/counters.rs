//! The counter-store interface of the Spectral filter: what a policy may do
//! to an item's counters, and nothing else. The policies of §2.2 and §3
//! are written against [`Counters`] and [`CountersMut`] only, so a store
//! other than today's fixed-width blocked cells (the variable-length
//! string-array store of the report's §4) implements these two traits and
//! runs every policy unchanged.
//!
//! A filter has up to three tables: the **primary** counters every policy
//! uses, the **secondary** counters of Recurring Minimum (§3.3), and the
//! one-bit **marker** filter `B_f`. An item's counters in a table are
//! given by its hash; the store places them.

use crate::hash::{Layout, Placement};
use crate::{MinCount, Result};
use streambloom_kernels::{Backend, Engine, Isa};

/// A counter table of a filter.
///
/// ```
/// use streambloom::spectral::Table;
/// assert_ne!(Table::Primary, Table::Secondary);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// The primary counters.
    Primary,
    /// Recurring Minimum's secondary counters.
    Secondary,
}

/// Read access to a filter's counters, item by item.
///
/// A store implements it (and [`CountersMut`]) to run the policies. A
/// plain, unblocked store of one table, as an example:
///
/// ```
/// use streambloom::spectral::{Counters, CountersMut, MinimalIncrease, Policy, Table, MAX_ITEM_COUNTERS};
/// use streambloom::MinCount;
///
/// /// One table of counters, an item's `k` at `h + i` (mod the length).
/// struct Plain(Vec<u32>);
/// impl Plain {
///     fn at(&self, h: u64) -> impl Iterator<Item = usize> + '_ {
///         (0..3).map(move |i| (h as usize + i) % self.0.len())
///     }
/// }
/// impl Counters for Plain {
///     fn min_count(&self, _: Table, h: u64) -> MinCount {
///         let min = self.at(h).map(|i| self.0[i]).min().unwrap();
///         let count = self.at(h).filter(|&i| self.0[i] == min).count() as u32;
///         MinCount { min, count }
///     }
///     fn marked(&self, _: u64) -> bool { false }
///     fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize {
///         let mut ids: Vec<usize> = self.at(h).collect();
///         ids.sort();
///         ids.dedup();
///         for (slot, &i) in out.iter_mut().zip(&ids) { *slot = (i, self.0[i]) }
///         ids.len()
///     }
/// }
/// impl CountersMut for Plain {
///     fn add(&mut self, _: Table, h: u64, r: u32) {
///         for i in self.at(h).collect::<Vec<_>>() { self.0[i] = self.0[i].saturating_add(r) }
///     }
///     fn sub(&mut self, _: Table, h: u64, r: u32) {
///         for i in self.at(h).collect::<Vec<_>>() { self.0[i] = self.0[i].saturating_sub(r) }
///     }
///     fn raise_to(&mut self, _: Table, h: u64, v: u32) {
///         for i in self.at(h).collect::<Vec<_>>() { self.0[i] = self.0[i].max(v) }
///     }
///     fn mark(&mut self, _: u64) {}
/// }
///
/// let mut store = Plain(vec![0; 64]);
/// let mut mi = MinimalIncrease;
/// mi.insert(&mut store, 7, 2);
/// mi.insert(&mut store, 8, 1);
/// assert_eq!(mi.estimate(&store, 7), 2);
/// ```
pub trait Counters {
    /// The smallest of the item's counters in `table` and how many of its
    /// (distinct) counters hold it.
    fn min_count(&self, table: Table, h: u64) -> MinCount;

    /// Whether the marker filter holds the item (`false` without a marker).
    fn marked(&self, h: u64) -> bool;

    /// Writes the item's distinct primary counters as `(id, value)` to the
    /// front of `out`, in increasing `id` order, and returns how many.
    /// `id` names the counter across the filter (Trapping remembers
    /// counters by it). An array rather than a callback: the hot loops
    /// must not hand closures to out-of-line code (see `filter::batch!`).
    fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize;
}

/// A borrowed view reads as the store it borrows: `&C` and `&mut C` (a
/// store may hand out `&Self` or `&mut Self` as its views).
macro_rules! counters_through {
    ($($r:ty),*) => {$(
        impl<C: Counters + ?Sized> Counters for $r {
            #[inline(always)]
            fn min_count(&self, table: Table, h: u64) -> MinCount {
                (**self).min_count(table, h)
            }
            #[inline(always)]
            fn marked(&self, h: u64) -> bool {
                (**self).marked(h)
            }
            #[inline(always)]
            fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize {
                (**self).primary_counters(h, out)
            }
        }
    )*};
}
counters_through!(&C, &mut C);

/// A mutable view writes to the store it borrows (a store may hand out
/// `&mut Self` as its write view).
impl<C: CountersMut + ?Sized> CountersMut for &mut C {
    #[inline(always)]
    fn add(&mut self, table: Table, h: u64, r: u32) {
        (**self).add(table, h, r)
    }
    #[inline(always)]
    fn sub(&mut self, table: Table, h: u64, r: u32) {
        (**self).sub(table, h, r)
    }
    #[inline(always)]
    fn raise_to(&mut self, table: Table, h: u64, v: u32) {
        (**self).raise_to(table, h, v)
    }
    #[inline(always)]
    fn mark(&mut self, h: u64) {
        (**self).mark(h)
    }
}

/// The most distinct counters an item has in one table: all the counters
/// of a 64-byte block of 8-bit counters.
///
/// ```
/// assert_eq!(streambloom::spectral::MAX_ITEM_COUNTERS, 64);
/// ```
pub const MAX_ITEM_COUNTERS: usize = 64;

/// Write access to a filter's counters: every update saturates at 0 and at
/// the counters' maximum, never wraps. (The example is on [`Counters`].)
///
/// ```
/// fn takes_a_store<C: streambloom::spectral::CountersMut>(_: &mut C) {}
/// ```
pub trait CountersMut: Counters {
    /// Adds `r` to each of the item's counters in `table`.
    fn add(&mut self, table: Table, h: u64, r: u32);
    /// Subtracts `r` from each of the item's counters in `table`.
    fn sub(&mut self, table: Table, h: u64, r: u32);
    /// Raises each of the item's counters in `table` to at least `v`.
    fn raise_to(&mut self, table: Table, h: u64, v: u32);
    /// Adds the item to the marker filter (nothing without a marker).
    fn mark(&mut self, h: u64);
}

/// The memory a [`Spectral`](super::Spectral) filter keeps its counters
/// in: the store places each item's counters (the layout is its business)
/// and gives the policies [`Counters`] and [`CountersMut`] views of them,
/// run with a kernel [`Backend`] chosen once per operation or batch.
///
/// [`Blocked`](super::Blocked) (fixed-width counters, an item's in one
/// 64-byte block) implements it; the compact variable-length store of the
/// report's §4 is another implementation, and the policies, the batch
/// forms, union, join and the window run on either unchanged.
///
/// The filter owns the hasher and the policy; the store owns everything
/// that says where and how a count is kept.
///
/// ```
/// use streambloom::spectral::{Blocked, CounterStore, MinimumSelection, Spectral, SpectralParams};
/// use streambloom::W16;
/// fn counters_of<C: CounterStore>(f: &Spectral<MinimumSelection, C>) -> usize {
///     f.store().counters()
/// }
/// let f = Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(1000, 4), 1)?;
/// assert_eq!(counters_of(&f), 1024); // whole blocks of 32 counters
/// assert_eq!(<Blocked<W16> as CounterStore>::MAX, 65_535);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub trait CounterStore {
    /// Read access to the counters with backend `B`'s kernels.
    type Read<'a, B: Backend>: Counters
    where
        Self: 'a;
    /// Write access to the counters with backend `B`'s kernels.
    type Write<'a, B: Backend>: CountersMut
    where
        Self: 'a;

    /// The largest value a counter holds: updates saturate there.
    const MAX: u32;

    /// The read view, for `backend`.
    fn read<B: Backend>(&self, backend: B) -> Self::Read<'_, B>;
    /// The write view, for `backend`.
    fn write<B: Backend>(&mut self, backend: B) -> Self::Write<'_, B>;

    /// The kernel implementation the filter's operations run with.
    fn engine(&self) -> Engine;
    /// Forces the kernel implementation; [`Error::Unsupported`](crate::Error::Unsupported)
    /// if this CPU lacks `isa`.
    fn set_isa(&mut self, isa: Isa) -> Result<()>;

    /// Whether the batch forms prefetch (the store is larger than the
    /// caches it would otherwise be served from).
    fn prefetching(&self) -> bool;
    /// Prefetches the memory item `h` can touch, in every table.
    fn prefetch(&self, h: u64);

    /// Counters per item, `k`.
    fn k(&self) -> u32;
    /// Counters of the primary table, the `m` of `γ = nk/m`.
    fn counters(&self) -> usize;
    /// The counter budget the policy planned: primary and secondary.
    fn budget(&self) -> usize;
    /// The expected number of distinct primary counters an item has (`k`,
    /// or less where the layout lets an item's counters coincide): the `k`
    /// of Lemma 3's unbiased estimator.
    fn expected_item_counters(&self) -> f64;
    /// Where the store puts what: two stores of the same shape place every
    /// item's counters alike, so they merge counter by counter.
    fn shape(&self) -> Shape;

    /// Primary counter `i`, `i < counters()` (0 beyond).
    fn primary(&self, i: usize) -> u32;
    /// Sets primary counter `i` to `v`, saturating at [`MAX`](Self::MAX)
    /// (nothing beyond `counters()`).
    fn set_primary(&mut self, i: usize, v: u32);
    /// Zeroes the secondary and marker tables (a union or join leaves them
    /// meaningless).
    fn clear_secondary(&mut self);
    /// Zeroes every counter.
    fn clear(&mut self);
}

/// The shape of a [`CounterStore`]: what two stores must share for their
/// counters to be merged one by one ([`Spectral::union`](super::Spectral::union)).
///
/// ```
/// use streambloom::spectral::{Blocked, CounterStore, MinimumSelection, Spectral, SpectralParams};
/// use streambloom::{W16, W8};
/// let a = Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(2048, 4), 1)?;
/// let b = Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(2048, 4), 1)?;
/// assert_eq!(a.store().shape().counters, b.store().shape().counters);
/// assert_ne!(a.store().shape(), b.store().shape()); // other blocks per counter
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The kind of store, by name (`"blocked"`).
    pub store: &'static str,
    /// Bits of a counter (0 for variable-length counters).
    pub bits: u32,
    /// Primary counters.
    pub counters: usize,
    /// Secondary counters.
    pub secondary: usize,
    /// Marker bits.
    pub marker: usize,
    /// Counters per item.
    pub k: u32,
    /// One block per item per table, or two.
    pub layout: Layout,
    /// How an item's counters are placed in a block.
    pub placement: Placement,
}
