//! The estimation policies of §2.2 and §3 and the trait that binds them to
//! [`Spectral`](super::Spectral).

use super::{Counter, Ctx, CtxMut};
use crate::Result;
use streambloom_kernels::Backend;

pub(crate) mod sealed {
    /// Only this crate defines policies.
    pub trait Sealed {}
}

/// The parts of the counter budget a policy asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
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
/// guarantees are stated per policy.
pub trait Policy: sealed::Sealed + Clone + core::fmt::Debug {
    /// The policy's name as in the paper ("minimum selection", ...).
    const NAME: &'static str;

    /// Splits a budget of `counters` counters (and any extra memory).
    #[doc(hidden)]
    fn plan(&self, counters: usize) -> Result<Plan>;

    /// Records `r >= 1` more occurrences of the item hashed to `h`.
    #[doc(hidden)]
    fn insert<W: Counter, B: Backend>(&mut self, c: CtxMut<'_, W, B>, h: u64, r: u32);

    /// The estimated count of the item hashed to `h`.
    #[doc(hidden)]
    fn estimate<W: Counter, B: Backend>(&self, c: Ctx<'_, W, B>, h: u64) -> u32;

    /// Whether two filters of this policy may be united or joined.
    #[doc(hidden)]
    fn check_merge(&self, other: &Self) -> Result<()>;

    /// Forgets any state kept outside the counters.
    #[doc(hidden)]
    fn reset(&mut self);
}

/// Policies that support deletion: [`MinimumSelection`] and
/// [`RecurringMinimum`](super::RecurringMinimum). [`MinimalIncrease`] does
/// not implement it, so removing from it (or keeping a sliding window over
/// it) does not compile.
pub trait Removable: Policy {
    /// Takes back `r >= 1` occurrences of the item hashed to `h`.
    #[doc(hidden)]
    fn remove<W: Counter, B: Backend>(&mut self, c: CtxMut<'_, W, B>, h: u64, r: u32);
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
/// use streambloom::spectral::{MinimalIncrease, Spectral};
/// let mut f = Spectral::<MinimalIncrease>::new(1024, 4, 7).unwrap();
/// f.insert("a");
/// f.remove("a"); // error: `MinimalIncrease` is not `Removable`
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinimalIncrease;

impl sealed::Sealed for MinimumSelection {}
impl sealed::Sealed for MinimalIncrease {}

fn single(counters: usize) -> Result<Plan> {
    Ok(Plan {
        primary: counters,
        secondary: 0,
        marker: 0,
    })
}

impl Policy for MinimumSelection {
    const NAME: &'static str = "minimum selection";

    fn plan(&self, counters: usize) -> Result<Plan> {
        single(counters)
    }

    #[inline(always)]
    fn insert<W: Counter, B: Backend>(&mut self, c: CtxMut<'_, W, B>, h: u64, r: u32) {
        let p = c.geo.primary::<W>(h);
        c.kernels.add_sat(&mut c.blocks[p.block], p.mask, r);
    }

    #[inline(always)]
    fn estimate<W: Counter, B: Backend>(&self, c: Ctx<'_, W, B>, h: u64) -> u32 {
        c.primary_min(h).min
    }

    fn check_merge(&self, _: &Self) -> Result<()> {
        Ok(())
    }

    fn reset(&mut self) {}
}

impl Removable for MinimumSelection {
    #[inline(always)]
    fn remove<W: Counter, B: Backend>(&mut self, c: CtxMut<'_, W, B>, h: u64, r: u32) {
        let p = c.geo.primary::<W>(h);
        c.kernels.sub_sat(&mut c.blocks[p.block], p.mask, r);
    }
}

impl Policy for MinimalIncrease {
    const NAME: &'static str = "minimal increase";

    fn plan(&self, counters: usize) -> Result<Plan> {
        single(counters)
    }

    #[inline(always)]
    fn insert<W: Counter, B: Backend>(&mut self, c: CtxMut<'_, W, B>, h: u64, r: u32) {
        let p = c.geo.primary::<W>(h);
        let block = &mut c.blocks[p.block];
        let min = c.kernels.min_count(block, p.mask).min;
        c.kernels.max_assign(block, p.mask, min.saturating_add(r));
    }

    #[inline(always)]
    fn estimate<W: Counter, B: Backend>(&self, c: Ctx<'_, W, B>, h: u64) -> u32 {
        c.primary_min(h).min
    }

    fn check_merge(&self, _: &Self) -> Result<()> {
        Ok(())
    }

    fn reset(&mut self) {}
}
