//! A Spectral filter over a **sliding window** of the last `W` inserted
//! items (§2.2 "Deletions and sliding window maintenance", §6.2).

use super::{Blocked, CounterStore, Removable, Spectral, SpectralParams};
use crate::hash::DefaultHasher;
use crate::{Error, Result};
use alloc::collections::VecDeque;
use core::hash::{BuildHasher, Hash};

/// Counts the last `window` inserted items: each insertion beyond the
/// window deletes the oldest item from the filter, so an item's estimate
/// covers only its occurrences among the last `window` insertions.
///
/// The ring keeps the 64-bit key hashes (8 bytes per item, `alloc`). Only
/// policies that can delete ([`Removable`]: Minimum Selection and Recurring
/// Minimum) are accepted; a window over Minimal Increase does not compile,
/// because its deletions cause false negatives (§6.2 shows it failing):
///
/// ```compile_fail
/// use streambloom::spectral::{MinimalIncrease, SlidingWindow, Spectral, SpectralParams};
/// let f = Spectral::<MinimalIncrease>::new(SpectralParams::new(1024, 4), 1).unwrap();
/// let w = SlidingWindow::new(f, 100);
/// ```
///
/// The estimates keep the policy's guarantees for the items in the window
/// (for [`RecurringMinimum`](super::RecurringMinimum) with its marker `B_f`,
/// no under-estimate without a false positive of `B_f`).
///
/// ```
/// use streambloom::spectral::{MinimumSelection, SlidingWindow, Spectral, SpectralParams};
/// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
/// let mut w = SlidingWindow::new(f, 2)?;
/// w.insert("a");
/// w.insert("b");
/// w.insert("c"); // "a" leaves the window
/// assert!(w.estimate("c") >= 1);
/// assert_eq!(w.len(), 2);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone)]
pub struct SlidingWindow<P: Removable, C: CounterStore = Blocked, H = DefaultHasher> {
    filter: Spectral<P, C, H>,
    ring: VecDeque<u64>,
    window: usize,
}

impl<P: Removable, C: CounterStore + core::fmt::Debug, H> core::fmt::Debug
    for SlidingWindow<P, C, H>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SlidingWindow")
            .field("window", &self.window)
            .field("len", &self.ring.len())
            .field("filter", &self.filter)
            .finish()
    }
}

impl<P: Removable, W: super::Counter> SlidingWindow<P, Blocked<W>> {
    /// A window of the last `window` items over a new filter of `params`
    /// seeded from `seed`, configured for windows: a
    /// [`RecurringMinimum`](super::RecurringMinimum) without a marker `B_f`
    /// gets one of `params.counters` bits (without it, removals leave
    /// stale counts in the secondary filter); other policies are used as
    /// given. [`new`](Self::new) takes a filter exactly as built.
    ///
    /// The marker's bits are never cleared (a removal cannot tell whether
    /// another item set one), so on a long stream it fills, and as its
    /// false positives grow so do the window's under-counts (the
    /// exception [`RecurringMinimum`](super::RecurringMinimum) documents).
    /// For long streams give the policy a larger marker yourself
    /// ([`RecurringMinimum::with_marker`](super::RecurringMinimum::with_marker))
    /// and build with [`new`](Self::new).
    ///
    /// ```
    /// use streambloom::spectral::{RecurringMinimum, SlidingWindow, SpectralParams};
    /// let params = SpectralParams::<RecurringMinimum>::new(6000, 4);
    /// let mut w = SlidingWindow::<_>::with_params(params, 1000, 7)?;
    /// assert!(w.filter().policy().has_marker());
    /// w.insert("a");
    /// assert_eq!(w.estimate("a"), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_params(params: SpectralParams<P>, window: usize, seed: u64) -> Result<Self> {
        let counters = params.counters;
        let params = SpectralParams {
            policy: params.policy.windowed(counters),
            ..params
        };
        Self::new(Spectral::new(params, seed)?, window)
    }
}

impl<P: Removable, C: CounterStore, H: BuildHasher> SlidingWindow<P, C, H> {
    /// A window of the last `window` items over `filter`, which must be
    /// empty (contents it held before would never leave the window). An
    /// error for `window = 0` or a filter with a non-zero
    /// [`total`](Spectral::total).
    pub fn new(filter: Spectral<P, C, H>, window: usize) -> Result<Self> {
        if window == 0 {
            return Err(Error::param("window", window, "at least 1"));
        }
        if filter.total() != 0 {
            return Err(Error::param(
                "filter",
                filter.total(),
                "empty (a total of 0): its items would never leave the window",
            ));
        }
        Ok(SlidingWindow {
            filter,
            ring: VecDeque::new(),
            window,
        })
    }

    /// Inserts `key`; the oldest item leaves if the window was full.
    pub fn insert<K: Hash + ?Sized>(&mut self, key: &K) {
        self.insert_hash(self.filter.hash(key));
    }

    /// [`SlidingWindow::insert`] for a key hashed with [`Spectral::hash`].
    pub fn insert_hash(&mut self, h: u64) {
        if self.ring.len() == self.window
            && let Some(old) = self.ring.pop_front()
        {
            self.filter.remove_hash(old);
        }
        self.filter.insert_hash(h);
        self.ring.push_back(h);
    }

    /// The estimated count of `key` among the items in the window.
    pub fn estimate<K: Hash + ?Sized>(&self, key: &K) -> u32 {
        self.filter.estimate(key)
    }

    /// [`SlidingWindow::estimate`] for a key hashed with [`Spectral::hash`].
    pub fn estimate_hash(&self, h: u64) -> u32 {
        self.filter.estimate_hash(h)
    }

    /// Whether `key` occurs at least `t` times in the window (see
    /// [`Spectral::at_least`]).
    pub fn at_least<K: Hash + ?Sized>(&self, key: &K, t: u32) -> bool {
        self.filter.at_least(key, t)
    }

    /// Items currently in the window (at most [`SlidingWindow::window`]).
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether no item has been inserted since creation or [`Self::clear`].
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// The window length `W`.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Empties the window and the filter.
    pub fn clear(&mut self) {
        self.ring.clear();
        self.filter.clear();
    }

    /// The filter of the window's items.
    pub fn filter(&self) -> &Spectral<P, C, H> {
        &self.filter
    }
}
