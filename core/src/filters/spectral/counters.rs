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

use crate::MinCount;

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
