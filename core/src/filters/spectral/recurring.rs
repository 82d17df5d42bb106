//! **Recurring Minimum** (§3.3) with its optional marker filter `B_f` and
//! the Trapping variant of §3.3.1.

#[cfg(feature = "alloc")]
use super::counters::MAX_ITEM_COUNTERS;
use super::counters::{Counters, CountersMut, Table};
use super::policy::{Plan, Policy, Removable, sealed};
use crate::{Error, Result};
#[cfg(feature = "alloc")]
use alloc::collections::BTreeMap;

/// **Recurring Minimum** (§3.3): a primary filter updated like
/// [`MinimumSelection`](super::MinimumSelection), plus a smaller secondary
/// filter for the items whose minimum is *single* (held by one counter
/// only), the sign of a probable Bloom error.
///
/// What this implementation does (the paper leaves the details open; these
/// choices keep the estimate one-sided):
///
/// - **Insert `x`, `r` times.** Add `r` to `x`'s primary counters. If `x` is
///   *counted in the secondary* (below), add `r` there too. Otherwise, if
///   `x` now has a single minimum `m_x`, *move* it: add `m_x` to its
///   secondary counters (and mark it in `B_f`).
/// - **Counted in the secondary**, without `B_f`, means its secondary
///   minimum is above 0 (the paper's "look for `x` in the secondary SBF").
///   This test runs on *every* insertion, not only on single minima as in
///   the paper: an item moved earlier whose minimum later became recurring
///   would otherwise miss increments in the secondary and be
///   under-estimated; it costs one more cache line per insertion. With
///   `B_f` it means that `B_f` holds `x`, whatever its secondary counters:
///   §3.3 says a marked item "should be handled in the secondary SBF from
///   now on", and a mark cannot be taken back, so a marked item stays
///   counted there even after its removals brought its secondary counters to
///   0 (only marked items, about a fifth, read the secondary).
/// - **Estimate.** Without `B_f`, as the paper: a recurring minimum is
///   returned as is; for a single minimum, the smaller of the primary
///   minimum and, for an item in the secondary, its secondary minimum (the
///   paper returns the secondary value alone; both are upper bounds, so the
///   smaller is never worse). With `B_f`, as the paper's refinement: `B_f`
///   decides; a marked item gets the smaller of its primary and secondary
///   minima (0 included), any other its primary minimum.
/// - **Remove `x`, `r` times.** Subtract `r` from its primary counters,
///   then, as §3.3 "Deletions" says, from its secondary counters if it has a
///   single minimum and is in the secondary (without `B_f`) or if `B_f`
///   holds it (with `B_f`); counters stop at 0.
///
/// **Guarantees.** The primary alone is a Minimum Selection filter, so the
/// estimate is never above Minimum Selection's; it is never below the true
/// count `f_x` (as long as only inserted occurrences are removed and no
/// counter saturates) except as follows.
///
/// - **With `B_f`**, an item that moved has secondary counters at least its
///   true count from then on: the move adds `m_x ≥ f_x`, and afterwards
///   every insertion and removal of `x` changes both by the same `r`, while
///   other items only add to those counters or take back what they added.
///   So an under-estimate needs a **false positive of `B_f`**: an item `y`
///   that `B_f` holds without `y` having moved, *after* occurrences of `y`
///   were inserted (an item marked by others before its first insertion is
///   counted like a moved one). Its estimate can then fall short, and its
///   removals take counts from the items sharing its secondary counters,
///   which can fall short too. The property tests, with removals and
///   re-insertions, find no other under-estimate, and none at all with a
///   `B_f` too large for false positives; at the paper's size of `m` bits
///   in Table 1's setting they found no such false positive either.
/// - **Without `B_f`**, an item with a single minimum that was never moved
///   (or whose secondary counters its removals emptied) is taken for one
///   that was when other items raised all its secondary counters (a Bloom
///   error of the secondary) while they were below its count. This happens
///   at about the secondary's Bloom error rate (measured by
///   `streambloom-bench repro spectral`: up to 0.2 % of items at γ = 0.7).
///
/// **Trapping** ([`RecurringMinimum::with_trapping`], §3.3.1, Figure 2, needs
/// `alloc`): a moved item's counts *leave* the primary (its `m_x` is
/// subtracted from its primary counters) and a trap on its single-minimum
/// counter remembers it. When another item `y` later steps on that counter,
/// `y`'s minimum before the step (the most it can have contributed to the
/// moved value) is taken back from the trapped item's secondary value and
/// returned to its primary counters, then the trap is cleared. Figure 2 skips
/// `y`'s own increment when a trap fires; we always count it. Subtracting
/// `m_x` also removes other items' contributions from `x`'s non-minimal
/// counters, and a trap repays them only if the item that stepped over `x`
/// comes again (the paper's palindrome), so **Trapping can under-estimate**:
/// it trades one-sidedness for a smaller average error. Trapping filters
/// cannot be united or joined.
///
/// **Sizes.** `counters` given to the filter is the whole budget: by default
/// a third goes to the secondary, so `m_s = m_p / 2` as in Table 1 and the
/// two together use `m` as in §6.1. [`RecurringMinimum::with_secondary`]
/// sets the secondary's share explicitly. `B_f` is extra memory, in bits
/// ([`RecurringMinimum::with_marker`]); the paper sizes it at `m` bits.
///
/// ```
/// use streambloom::spectral::{RecurringMinimum, Spectral, SpectralParams};
/// let policy = RecurringMinimum::new().with_marker(1 << 14);
/// let mut f = Spectral::<RecurringMinimum>::new(SpectralParams::new(3000, 4).with_policy(policy), 1)?;
/// f.insert_n("a", 3);
/// f.remove("a");
/// assert_eq!(f.estimate("a"), 2);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecurringMinimum {
    secondary: Option<usize>,
    marker_bits: usize,
    #[cfg(feature = "alloc")]
    traps: Option<Traps>,
}

/// Trapping's traps (§3.3.1): the item that last trapped each primary
/// counter, by the counter's id.
///
/// Its methods are kept out of line on purpose: a map's code is large and
/// runs no kernel, and inlined into every Recurring Minimum update (one per
/// backend, width and operation) it made most of the crate's build time.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Traps(BTreeMap<usize, u64>);

#[cfg(feature = "alloc")]
impl Traps {
    /// Removes counter `id`'s trap and returns the item it held.
    #[inline(never)]
    fn take(&mut self, id: usize) -> Option<u64> {
        self.0.remove(&id)
    }

    /// Sets a trap on counter `id` for item `h`.
    #[inline(never)]
    fn set(&mut self, id: usize, h: u64) {
        self.0.insert(id, h);
    }

    /// Removes every trap.
    #[inline(never)]
    fn clear(&mut self) {
        self.0.clear();
    }
}

impl RecurringMinimum {
    /// The default: secondary at a third of the budget, no marker, no traps.
    pub fn new() -> RecurringMinimum {
        RecurringMinimum::default()
    }

    /// Gives the secondary filter `counters` of the budget (the primary gets
    /// the rest); the filter's constructor rejects 0 or the whole budget.
    ///
    /// ```
    /// use streambloom::spectral::{RecurringMinimum, Spectral, SpectralParams};
    /// let p = RecurringMinimum::new().with_secondary(1000);
    /// let f = Spectral::<RecurringMinimum>::new(SpectralParams::new(3000, 5).with_policy(p), 1).unwrap();
    /// assert_eq!(f.counters(), 2000);
    /// ```
    #[must_use]
    pub fn with_secondary(mut self, counters: usize) -> RecurringMinimum {
        self.secondary = Some(counters);
        self
    }

    /// Adds the marker Bloom filter `B_f` of `bits` bits (extra memory, in
    /// whole 512-bit blocks); 0 removes it. With it, an item is
    /// under-estimated only after a false positive of `B_f` (see the type's
    /// docs), removals included:
    ///
    /// ```
    /// use streambloom::spectral::{RecurringMinimum, Spectral, SpectralParams};
    /// let p = RecurringMinimum::new().with_marker(1 << 14);
    /// let mut f = Spectral::<RecurringMinimum>::new(SpectralParams::new(3000, 4).with_policy(p), 1)?;
    /// f.insert_n("a", 3);
    /// f.remove("a");
    /// f.insert("a");
    /// assert!(f.estimate("a") >= 3);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[must_use]
    pub fn with_marker(mut self, bits: usize) -> RecurringMinimum {
        self.marker_bits = bits;
        self
    }

    /// Turns on the Trapping variant of §3.3.1 (see the type's docs: it can
    /// under-estimate).
    #[cfg(feature = "alloc")]
    #[must_use]
    pub fn with_trapping(mut self) -> RecurringMinimum {
        self.traps = Some(Traps::default());
        self
    }

    /// Whether the marker filter `B_f` is on.
    ///
    /// ```
    /// use streambloom::spectral::RecurringMinimum;
    /// assert!(!RecurringMinimum::new().has_marker());
    /// assert!(RecurringMinimum::new().with_marker(1024).has_marker());
    /// ```
    pub fn has_marker(&self) -> bool {
        self.marker_bits > 0
    }

    /// Whether the Trapping variant is on.
    ///
    /// ```
    /// use streambloom::spectral::RecurringMinimum;
    /// assert!(RecurringMinimum::new().with_trapping().is_trapping());
    /// ```
    pub fn is_trapping(&self) -> bool {
        #[cfg(feature = "alloc")]
        {
            self.traps.is_some()
        }
        #[cfg(not(feature = "alloc"))]
        {
            false
        }
    }

    /// Whether `x` (hashed to `h`) is counted in the secondary, and its
    /// secondary minimum.
    #[inline]
    fn in_secondary<C: Counters>(&self, c: &C, h: u64) -> Option<u32> {
        if self.has_marker() && !c.marked(h) {
            return None;
        }
        let s = c.min_count(Table::Secondary, h).min;
        (s > 0).then_some(s)
    }

    /// Whether an insertion of `x` (hashed to `h`) goes to the secondary as
    /// well as the primary (without Trapping): with `B_f`, whenever `B_f`
    /// holds `x`, whatever its secondary counters (they may be 0 after `x`
    /// was removed); without it, when [`Self::in_secondary`] finds it.
    #[inline]
    fn counted_in_secondary<C: Counters>(&self, c: &C, h: u64) -> bool {
        if self.has_marker() {
            c.marked(h)
        } else {
            self.in_secondary(c, h).is_some()
        }
    }

    #[cfg(feature = "alloc")]
    #[inline(always)]
    fn trap_insert<C: CountersMut>(traps: &mut Traps, marker: bool, c: &mut C, h: u64, r: u32) {
        let before = c.min_count(Table::Primary, h);
        c.add(Table::Primary, h, r);
        let m = before.min.saturating_add(r);
        let mut cells = [(0, 0); MAX_ITEM_COUNTERS];
        let n = c.primary_counters(h, &mut cells);
        let cells = &cells[..n];
        if before.count >= 2 {
            for &(id, _) in cells {
                let Some(victim) = traps.take(id) else {
                    continue;
                };
                if victim == h {
                    continue;
                }
                let owed = c.min_count(Table::Secondary, victim).min;
                let back = before.min.min(owed.saturating_sub(1));
                c.sub(Table::Secondary, victim, back);
                c.add(Table::Primary, victim, back);
            }
            return;
        }
        if let Some(&(id, _)) = cells.iter().find(|&&(_, value)| value == m) {
            traps.set(id, h);
        }
        c.add(Table::Secondary, h, m);
        c.sub(Table::Primary, h, m);
        if marker {
            c.mark(h);
        }
    }
}

/// Its fields: the secondary budget (a flag, then the counters as u64 if
/// set), the marker's bits (u64), the Trapping flag, and with Trapping its
/// traps (their count, then each counter id and item hash as u64).
impl sealed::Sealed for RecurringMinimum {
    const TAG: u8 = 2;

    fn put(&self, out: &mut dyn crate::format::Sink) {
        out.bool(self.secondary.is_some());
        if let Some(s) = self.secondary {
            out.usize(s);
        }
        out.usize(self.marker_bits);
        out.bool(self.is_trapping());
        #[cfg(feature = "alloc")]
        if let Some(traps) = &self.traps {
            out.usize(traps.0.len());
            for (&id, &h) in &traps.0 {
                out.usize(id);
                out.u64(h);
            }
        }
    }

    fn read(f: &mut crate::format::Fields<'_>) -> Result<Self> {
        let mut rm = RecurringMinimum::new();
        if f.bool("secondary set")? {
            rm = rm.with_secondary(f.usize("secondary")?);
        }
        rm = rm.with_marker(f.usize("marker bits")?);
        if f.bool("trapping")? {
            #[cfg(feature = "alloc")]
            {
                let mut traps = Traps::default();
                for _ in 0..f.usize("traps")? {
                    traps.set(f.usize("trap counter")?, f.u64("trap item")?);
                }
                rm.traps = Some(traps);
            }
            #[cfg(not(feature = "alloc"))]
            return Err(Error::param(
                "trapping",
                1u32,
                "off: Trapping needs the `alloc` feature",
            ));
        }
        Ok(rm)
    }
}

impl Policy for RecurringMinimum {
    const NAME: &'static str = "recurring minimum";

    #[allow(private_interfaces)]
    fn plan(&self, counters: usize) -> Result<Plan> {
        let secondary = self.secondary.unwrap_or(counters / 3);
        if secondary == 0 || secondary >= counters {
            return Err(Error::param(
                "secondary",
                secondary,
                "at least 1 and below the counter budget (which must be at least 3 by default)",
            ));
        }
        Ok(Plan {
            primary: counters - secondary,
            secondary,
            marker: self.marker_bits,
        })
    }

    #[inline(always)]
    fn insert<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32) {
        #[cfg(feature = "alloc")]
        if self.is_trapping() {
            let marker = self.has_marker();
            let moved = self.in_secondary(c, h).is_some();
            if let Some(traps) = self.traps.as_mut() {
                if moved {
                    c.add(Table::Secondary, h, r);
                } else {
                    Self::trap_insert(traps, marker, c, h, r);
                }
                return;
            }
        }
        c.add(Table::Primary, h, r);
        if self.counted_in_secondary(c, h) {
            c.add(Table::Secondary, h, r);
            return;
        }
        let mc = c.min_count(Table::Primary, h);
        if mc.count >= 2 {
            return;
        }
        c.add(Table::Secondary, h, mc.min);
        if self.has_marker() {
            c.mark(h);
        }
    }

    #[inline(always)]
    fn estimate<C: Counters>(&self, c: &C, h: u64) -> u32 {
        if self.is_trapping() {
            if let Some(s) = self.in_secondary(c, h) {
                return s;
            }
            return c.min_count(Table::Primary, h).min;
        }
        let m = c.min_count(Table::Primary, h);
        if self.has_marker() {
            if c.marked(h) {
                return m.min.min(c.min_count(Table::Secondary, h).min);
            }
            return m.min;
        }
        if m.count >= 2 {
            return m.min;
        }
        self.in_secondary(c, h).map_or(m.min, |s| s.min(m.min))
    }

    fn check_merge(&self, other: &Self) -> Result<()> {
        if self.is_trapping() || other.is_trapping() {
            return Err(Error::Incompatible {
                what: "policy (Trapping filters cannot be merged)",
            });
        }
        Ok(())
    }

    fn reset(&mut self) {
        #[cfg(feature = "alloc")]
        if let Some(t) = self.traps.as_mut() {
            t.clear();
        }
    }
}

impl Removable for RecurringMinimum {
    /// A window removes as much as it inserts: without the marker `B_f` a
    /// removal takes from the secondary only when the minimum is single,
    /// while an insertion adds there whenever the item is in it, which
    /// leaves stale counts (§3.3; measured by `repro spectral`'s window
    /// experiment). So a window gets a marker of `counters` bits (the
    /// paper's size) unless one was configured.
    fn windowed(self, counters: usize) -> Self {
        if self.has_marker() {
            self
        } else {
            self.with_marker(counters)
        }
    }

    #[inline(always)]
    fn remove<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32) {
        if self.is_trapping() {
            let table = if self.in_secondary(c, h).is_some() {
                Table::Secondary
            } else {
                Table::Primary
            };
            c.sub(table, h, r);
            return;
        }
        c.sub(Table::Primary, h, r);
        let counted = if self.has_marker() {
            c.marked(h)
        } else {
            let single = c.min_count(Table::Primary, h).count < 2;
            single && self.in_secondary(c, h).is_some()
        };
        if counted {
            c.sub(Table::Secondary, h, r);
        }
    }
}
