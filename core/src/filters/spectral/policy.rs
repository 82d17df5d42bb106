//! The estimation policies of §2.2 and §3 and the trait that binds them to
//! [`Spectral`](super::Spectral).

use super::counters::{Counters, CountersMut, Table};
use crate::Result;

pub(crate) mod sealed {
    use crate::Result;
    use crate::format::{Fields, Sink};

    /// Only this crate defines policies; each says how the byte format
    /// ([`crate::format`]) records it.
    pub trait Sealed: Sized {
        /// The policy's byte in the format.
        const TAG: u8;
        /// Writes the policy's configuration and state.
        fn put(&self, out: &mut dyn Sink);
        /// The policy [`put`](Self::put) wrote.
        fn read(f: &mut Fields<'_>) -> Result<Self>;
    }
}

/// The parts of the counter budget a policy asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Counters of the primary filter.
    pub primary: usize,
    /// Counters of the secondary filter (0 without one).
    pub secondary: usize,
    /// Bits of the marker Bloom filter `B_f` (0 without one).
    pub marker: usize,
}

/// How a [`Spectral`](super::Spectral) filter inserts and estimates:
/// [`MinimumSelection`], [`MinimalIncrease`] or
/// [`RecurringMinimum`](super::RecurringMinimum). Sealed: the filter's
/// guarantees are stated per policy. A policy works on an item's counters
/// only through [`Counters`] and [`CountersMut`], whatever store holds
/// them; the provided methods are the single-table behaviour that Minimum
/// Selection and Minimal Increase share.
pub trait Policy: sealed::Sealed + Clone + core::fmt::Debug {
    /// The policy's name as in the paper ("minimum selection", ...).
    const NAME: &'static str;

    /// Splits a budget of `counters` counters (and any extra memory): all
    /// primary, by default.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn plan(&self, counters: usize) -> Result<Plan> {
        Ok(Plan {
            primary: counters,
            secondary: 0,
            marker: 0,
        })
    }

    /// Records `r >= 1` more occurrences of the item hashed to `h`.
    #[doc(hidden)]
    fn insert<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32);

    /// The estimated count of the item hashed to `h`: the smallest of its
    /// primary counters, by default.
    #[doc(hidden)]
    #[inline(always)]
    fn estimate<C: Counters>(&self, c: &C, h: u64) -> u32 {
        c.min_count(Table::Primary, h).min
    }

    /// Whether two filters of this policy may be united or joined (any two
    /// may, by default).
    #[doc(hidden)]
    fn check_merge(&self, _other: &Self) -> Result<()> {
        Ok(())
    }

    /// Forgets any state kept outside the counters (none, by default).
    #[doc(hidden)]
    fn reset(&mut self) {}
}

/// Policies that support deletion: [`MinimumSelection`] and
/// [`RecurringMinimum`](super::RecurringMinimum). [`MinimalIncrease`] does
/// not implement it, so removing from it (or keeping a sliding window over
/// it) does not compile.
pub trait Removable: Policy {
    /// Takes back `r >= 1` occurrences of the item hashed to `h`.
    #[doc(hidden)]
    fn remove<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32);

    /// The configuration for a sliding window of a filter of `counters`
    /// counters ([`SlidingWindow::with_params`](super::SlidingWindow::with_params)):
    /// unchanged, by default.
    #[doc(hidden)]
    fn windowed(self, _counters: usize) -> Self
    where
        Self: Sized,
    {
        self
    }
}

/// **Minimum Selection** (§2.2): an insertion adds 1 (or `r`) to each of
/// the item's `k` counters, a deletion subtracts it, and the estimate is the
/// smallest of the `k` counters.
///
/// The estimate never falls below the true count (Claim 1) as long as only
/// inserted occurrences are removed and no counter saturates; it is wrong
/// with the Bloom error probability `E_b ≈ (1 − e^{−γ})^k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinimumSelection;

/// **Minimal Increase** (§3.2, the "conservative update" of Estan and
/// Varghese): an insertion of `r` occurrences raises only the counters below
/// `m_x + r` up to `m_x + r`, where `m_x` is the item's smallest counter; the
/// estimate is `m_x`.
///
/// Under insertions alone its estimate never falls below the true count and
/// is never worse than Minimum Selection's (Claim 4); on uniform data its
/// error rate is about `k` times smaller (Claim 5).
///
/// It has **no deletion**: a counter that Minimal Increase did not raise for
/// `x` would still be lowered when `x` is deleted, so deleting causes false
/// negatives (§3.2, "Minimal Increase and deletions"; §6.2). `remove` does
/// not exist for it:
///
/// ```compile_fail
/// use streambloom::spectral::{MinimalIncrease, Spectral, SpectralParams};
/// let mut f = Spectral::<MinimalIncrease>::new(SpectralParams::new(1024, 4), 7).unwrap();
/// f.insert("a");
/// f.remove("a"); // error: `MinimalIncrease` is not `Removable`
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinimalIncrease;

/// Minimum Selection has no configuration or state.
impl sealed::Sealed for MinimumSelection {
    const TAG: u8 = 0;

    fn put(&self, _: &mut dyn crate::format::Sink) {}

    fn read(_: &mut crate::format::Fields<'_>) -> Result<Self> {
        Ok(MinimumSelection)
    }
}

/// Minimal Increase has no configuration or state.
impl sealed::Sealed for MinimalIncrease {
    const TAG: u8 = 1;

    fn put(&self, _: &mut dyn crate::format::Sink) {}

    fn read(_: &mut crate::format::Fields<'_>) -> Result<Self> {
        Ok(MinimalIncrease)
    }
}

impl Policy for MinimumSelection {
    const NAME: &'static str = "minimum selection";

    #[inline(always)]
    fn insert<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32) {
        c.add(Table::Primary, h, r);
    }
}

impl Removable for MinimumSelection {
    #[inline(always)]
    fn remove<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32) {
        c.sub(Table::Primary, h, r);
    }
}

impl Policy for MinimalIncrease {
    const NAME: &'static str = "minimal increase";

    #[inline(always)]
    fn insert<C: CountersMut>(&mut self, c: &mut C, h: u64, r: u32) {
        let min = c.min_count(Table::Primary, h).min;
        c.raise_to(Table::Primary, h, min.saturating_add(r));
    }
}
