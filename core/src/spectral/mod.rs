//! **Spectral Bloom filters**: approximate counts of the items of a
//! multiset (Cohen and Matias, *Spectral Bloom Filters*, SIGMOD 2003, and its
//! technical report, in `spectral-bloom-filters-report.txt`).
//!
//! A Spectral filter keeps `m` saturating counters; an item `x` owns `k` of
//! them, all in one 64-byte block (blocked hashing, see [`crate::hash`]).
//! [`Spectral::estimate`] answers "how many times was `x` inserted?", and
//! [`Spectral::at_least`] answers the ad-hoc iceberg question "was `x`
//! inserted at least `T` times?" with `T` chosen at query time (§5.2).
//!
//! # Policies
//!
//! | policy | insert / estimate | delete | errors |
//! |---|---|---|---|
//! | [`MinimumSelection`] (§2.2) | add to the `k` counters / their minimum | yes | over-estimates only, with probability `E_b` |
//! | [`MinimalIncrease`] (§3.2) | raise only counters below `m_x + r` / minimum | **no** (would cause false negatives) | over-estimates only, fewer and smaller than MS |
//! | [`RecurringMinimum`] (§3.3) | primary + secondary filter (+ marker `B_f`, + Trapping) | yes | over-estimates, fewer than MS; see its docs for the rare exception and for Trapping |
//!
//! Every estimate is an upper bound on the true count (except as
//! [`RecurringMinimum`] documents) **provided** that only inserted
//! occurrences are removed and no counter reaches `W::MAX`. Counters
//! **saturate**: they stop at `W::MAX` (255, 65 535 or 2³²−1) and never
//! wrap, and removing more than was inserted stops them at 0 (it is not an
//! error, but it takes counts from the other items sharing those counters,
//! which may then be under-estimated). An estimate of `W::MAX` means "at
//! least `W::MAX`".
//!
//! # Parameters
//!
//! - `counters` (`m`): with `n` distinct items and `k` counters each,
//!   `γ = nk/m`; the Bloom error is `E_b = (1 − e^{−γ})^k`
//!   ([`analysis::bloom_error`]), smallest at `γ = ln 2 ≈ 0.7`, i.e.
//!   `m ≈ 1.44·n·k`. For Recurring Minimum `counters` is the whole budget of
//!   both filters.
//! - `k`: 1 to `W::CELLS` (64, 32 or 16 counters per block for 8, 16 and 32
//!   bits); 4 to 6 is usual. Blocked hashing puts all `k` in one cache line,
//!   which costs some accuracy with few cells per block (16 for `W32`).
//! - `W`: [`W8`], [`W16`] or [`W32`] (the default): pick a width whose `MAX`
//!   is above the largest count you need.
//! - the hasher: [`crate::hash::seeded_hasher`] from a seed; seeds an
//!   attacker can guess let them flood chosen counters (see [`crate::hash`]).
//!
//! # Beyond single counts
//!
//! [`Spectral::union`] adds two filters' counters (the multiset union) and
//! [`Spectral::join`] multiplies them (the Spectral Bloomjoin of §5.3);
//! [`Spectral::estimate_unbiased`] is Lemma 3's estimator for aggregates;
//! [`SlidingWindow`] counts the last `W` items (§2.2, §6.2);
//! [`RangeTree`] counts values in ranges (§5.5, Theorem 11);
//! [`analysis`] holds the paper's error formulas.
//!
//! ```
//! use streambloom::spectral::{MinimumSelection, Spectral};
//! let mut f = Spectral::<MinimumSelection>::new(4096, 4, 42)?;
//! f.insert("apple");
//! f.insert_n("pear", 3);
//! f.remove("pear");
//! assert!(f.estimate("pear") >= 2);
//! assert!(f.at_least("apple", 1));
//! # Ok::<(), streambloom::Error>(())
//! ```

pub mod analysis;
mod policy;
mod range;
mod recurring;
#[cfg(feature = "alloc")]
mod window;

#[cfg(test)]
mod tests;

pub use policy::{MinimalIncrease, MinimumSelection, Plan, Policy, Removable};
pub use range::{RangeCount, RangeTree};
pub use recurring::RecurringMinimum;
#[cfg(feature = "alloc")]
pub use window::SlidingWindow;

use crate::hash::{self, mix64, DefaultHasher, Placement, Probe};
use crate::store::{blocks_named, Cells, Storage};
use crate::{Error, Result};
use core::hash::{BuildHasher, Hash};
use streambloom_kernels::{
    cell, prefetch, set_cell, Backend, Block, Body, Isa, Mask, MinCount, Ops, Width, W1,
};
pub use streambloom_kernels::{W16, W32, W8};

mod sealed {
    pub trait Sealed {}
}

/// A counter width a Spectral filter accepts: [`W8`], [`W16`] or [`W32`].
/// Narrower cells cannot hold counts; other widths do not compile:
///
/// ```compile_fail
/// use streambloom::spectral::{MinimumSelection, Spectral};
/// use streambloom::W4;
/// let f = Spectral::<MinimumSelection, W4>::new(1024, 4, 7);
/// ```
pub trait Counter: Width + sealed::Sealed {}
impl sealed::Sealed for W8 {}
impl sealed::Sealed for W16 {}
impl sealed::Sealed for W32 {}
impl Counter for W8 {}
impl Counter for W16 {}
impl Counter for W32 {}

/// Where a filter keeps its blocks by default: a `Vec` with `alloc`, a
/// borrowed slice without.
#[cfg(feature = "alloc")]
pub type DefaultStorage = alloc::vec::Vec<Block>;
/// Where a filter keeps its blocks by default: a `Vec` with `alloc`, a
/// borrowed slice without.
#[cfg(not(feature = "alloc"))]
pub type DefaultStorage = &'static mut [Block];

/// How [`Spectral`] places an item's `k` counters in its block, in every
/// region (primary, secondary, marker): the measured choice, see the
/// [`hash`] module docs.
pub const PLACEMENT: Placement = Placement::Collapsing;

const SECONDARY_SALT: u64 = 0x5EC0_4DA7_5EC0_4DA7;
const MARKER_SALT: u64 = 0x3A7C_E7B1_0F17_E7ED;

/// Block counts of the filter's regions, in storage order: primary,
/// secondary, marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    primary: usize,
    secondary: usize,
    marker: usize,
    k: u32,
    /// The placement under test ([`PLACEMENT`] outside tests).
    #[cfg(test)]
    placement: Placement,
}

impl Geometry {
    fn total(&self) -> usize {
        self.primary + self.secondary + self.marker
    }

    /// The placement of items' counters: [`PLACEMENT`], or another in
    /// tests.
    #[inline(always)]
    fn placement(&self) -> Placement {
        #[cfg(test)]
        return self.placement;
        #[cfg(not(test))]
        PLACEMENT
    }

    #[inline(always)]
    fn primary<W: Counter>(&self, h: u64) -> Probe<W> {
        hash::probe_with::<W>(self.placement(), h, self.primary, self.k)
    }

    #[inline(always)]
    fn secondary<W: Counter>(&self, h: u64) -> Probe<W> {
        let mut p = hash::probe_with::<W>(
            self.placement(),
            mix64(h ^ SECONDARY_SALT),
            self.secondary,
            self.k,
        );
        p.block += self.primary;
        p
    }

    #[inline(always)]
    fn marker(&self, h: u64) -> Probe<W1> {
        let mut p = hash::probe_with::<W1>(
            self.placement(),
            mix64(h ^ MARKER_SALT),
            self.marker,
            self.k,
        );
        p.block += self.primary + self.secondary;
        p
    }
}

/// Read access to a filter's blocks for a policy, with backend `B`'s
/// kernels (inside [`streambloom_kernels::Engine::run`]).
#[doc(hidden)]
pub struct Ctx<'a, W: Width, B: Backend> {
    blocks: &'a [Block],
    kernels: Ops<W, B>,
    marker: Ops<W1, B>,
    geo: &'a Geometry,
}

/// Write access to a filter's blocks for a policy.
#[doc(hidden)]
pub struct CtxMut<'a, W: Width, B: Backend> {
    blocks: &'a mut [Block],
    kernels: Ops<W, B>,
    marker: Ops<W1, B>,
    geo: &'a Geometry,
}

impl<W: Counter, B: Backend> Ctx<'_, W, B> {
    #[inline(always)]
    fn primary_min(&self, h: u64) -> MinCount {
        let p = self.geo.primary::<W>(h);
        self.kernels.min_count(&self.blocks[p.block], p.mask)
    }

    #[inline(always)]
    fn secondary_min(&self, h: u64) -> MinCount {
        let p = self.geo.secondary::<W>(h);
        self.kernels.min_count(&self.blocks[p.block], p.mask)
    }

    #[inline(always)]
    fn marked(&self, h: u64) -> bool {
        let p = self.geo.marker(h);
        !self.marker.any_zero(&self.blocks[p.block], p.mask)
    }
}

impl<W: Counter, B: Backend> CtxMut<'_, W, B> {
    #[inline(always)]
    fn shared(&self) -> Ctx<'_, W, B> {
        Ctx {
            blocks: self.blocks,
            kernels: self.kernels,
            marker: self.marker,
            geo: self.geo,
        }
    }

    #[inline(always)]
    fn mark(&mut self, h: u64) {
        let p = self.geo.marker(h);
        self.marker.assign(&mut self.blocks[p.block], p.mask, 1);
    }
}

/// A Spectral Bloom filter with estimation policy `P` over `W`-bit
/// saturating counters kept in `S`, hashing keys with `H` (see the
/// [module docs](self)).
#[derive(Clone)]
pub struct Spectral<P, W: Counter = W32, S = DefaultStorage, H = DefaultHasher> {
    cells: Cells<W, S>,
    geo: Geometry,
    policy: P,
    hasher: H,
    fingerprint: u64,
    total: u64,
}

impl<P: Policy, W: Counter, S: Storage, H> core::fmt::Debug for Spectral<P, W, S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Spectral")
            .field("policy", &self.policy)
            .field("bits", &W::BITS)
            .field("k", &self.geo.k)
            .field("blocks", &self.geo)
            .field("isa", &self.cells.isa())
            .field("total", &self.total)
            .finish()
    }
}

/// A fingerprint of a hasher: the hashes of a few fixed keys. Two filters
/// whose hashers disagree on them place items differently.
fn fingerprint<H: BuildHasher>(hasher: &H) -> u64 {
    (0u64..4).fold(0, |acc, i| {
        mix64(acc ^ hash::hash_key(hasher, &(0x5B1F_u64 ^ i)))
    })
}

fn plan_geometry<P: Policy, W: Counter>(policy: &P, counters: usize, k: u32) -> Result<Geometry> {
    if counters == 0 {
        return Err(Error::param("counters", "must be at least 1"));
    }
    let plan = policy.plan(counters)?;
    let primary = blocks_named::<W>(plan.primary, "counters")?;
    let secondary = if plan.secondary == 0 {
        0
    } else {
        blocks_named::<W>(plan.secondary, "counters")?
    };
    let marker = if plan.marker == 0 {
        0
    } else {
        blocks_named::<W1>(plan.marker, "counters")?
    };
    if k == 0 {
        return Err(Error::param("k", "must be at least 1"));
    }
    if k as usize > W::CELLS {
        return Err(Error::param(
            "k",
            "must be at most the counters per block (64, 32, 16 for W8, W16, W32)",
        ));
    }
    // Saturating: a primary too large to count in `usize` is far above `k`
    // (and rejected as too large just below).
    if primary.saturating_mul(W::CELLS) <= k as usize {
        return Err(Error::param(
            "k",
            "must be below the number of primary counters",
        ));
    }
    let geo = Geometry {
        primary,
        secondary,
        marker,
        k,
        #[cfg(test)]
        placement: PLACEMENT,
    };
    crate::store::bytes_for(geo.total(), "counters")?;
    Ok(geo)
}

#[cfg(feature = "alloc")]
impl<P: Policy + Default, W: Counter> Spectral<P, W> {
    /// A filter of `counters` counters (rounded up to whole blocks), `k`
    /// counters per item, the default configuration of `P`, and an ahash
    /// hasher seeded from `seed` ([`crate::hash::seeded_hasher`]).
    ///
    /// Errors: `counters` is 0 (or too small for `P`), `k` is 0, above
    /// `W::CELLS`, or not below the primary counters.
    ///
    /// ```
    /// use streambloom::spectral::{MinimalIncrease, Spectral};
    /// use streambloom::W16;
    /// let f = Spectral::<MinimalIncrease, W16>::new(10_000, 5, 1)?;
    /// assert_eq!(f.counters(), 10_016); // whole blocks of 32 counters
    /// assert!(Spectral::<MinimalIncrease, W16>::new(0, 5, 1).is_err());
    /// assert!(Spectral::<MinimalIncrease, W16>::new(100, 33, 1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(counters: usize, k: u32, seed: u64) -> Result<Self> {
        Self::with_policy(P::default(), counters, k, seed)
    }
}

#[cfg(feature = "alloc")]
impl<P: Policy, W: Counter> Spectral<P, W> {
    /// Like [`Spectral::new`] with a configured policy (for
    /// [`RecurringMinimum`]: secondary size, marker, Trapping).
    pub fn with_policy(policy: P, counters: usize, k: u32, seed: u64) -> Result<Self> {
        Self::with_hasher(policy, counters, k, hash::seeded_hasher(seed))
    }
}

#[cfg(feature = "alloc")]
impl<P: Policy, W: Counter, H: BuildHasher> Spectral<P, W, DefaultStorage, H> {
    /// [`Spectral::with_policy`] hashing with `hasher`: for secret random
    /// seeds ([`hash::random_hasher`], the choice for keys chosen by
    /// others) or any other [`BuildHasher`]. Filters merge only with
    /// filters that hash alike (a clone, or the same seeds).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral};
    /// use streambloom::W32;
    /// let h = streambloom::hash::random_hasher();
    /// let mut a = Spectral::<_, W32, _, _>::with_hasher(MinimumSelection, 4096, 4, h.clone())?;
    /// let mut b = Spectral::<_, W32, _, _>::with_hasher(MinimumSelection, 4096, 4, h)?;
    /// a.insert("x");
    /// b.insert("x");
    /// a.union(&b)?;
    /// assert!(a.estimate("x") >= 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_hasher(policy: P, counters: usize, k: u32, hasher: H) -> Result<Self> {
        let geo = plan_geometry::<P, W>(&policy, counters, k)?;
        let blocks = crate::store::zeroed(geo.total())?;
        Self::assemble(policy, blocks, geo, hasher)
    }
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Spectral<P, W, S, H> {
    /// The number of blocks [`Spectral::from_storage`] needs for these
    /// parameters.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral};
    /// use streambloom::{hash::seeded_hasher, Block, W8};
    /// type F<'a> = Spectral<MinimumSelection, W8, &'a mut [Block]>;
    /// let n = F::required_blocks(&MinimumSelection, 640, 4)?;
    /// assert_eq!(n, 10);
    /// let mut buf = [Block::ZERO; 10];
    /// let mut f = F::from_storage(MinimumSelection, &mut buf[..], 640, 4, seeded_hasher(3))?;
    /// f.insert(&17u32);
    /// assert_eq!(f.estimate(&17u32), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn required_blocks(policy: &P, counters: usize, k: u32) -> Result<usize> {
        Ok(plan_geometry::<P, W>(policy, counters, k)?.total())
    }

    /// A filter in caller-provided storage, which must hold exactly
    /// [`Spectral::required_blocks`] blocks (else [`Error::StorageLength`]).
    /// The storage is zeroed; `hasher` places the keys.
    pub fn from_storage(policy: P, storage: S, counters: usize, k: u32, hasher: H) -> Result<Self> {
        let geo = plan_geometry::<P, W>(&policy, counters, k)?;
        let mut f = Self::assemble(policy, storage, geo, hasher)?;
        f.clear();
        Ok(f)
    }

    fn assemble(policy: P, storage: S, geo: Geometry, hasher: H) -> Result<Self> {
        let cells = Cells::new(storage, geo.total())?;
        Ok(Spectral {
            cells,
            geo,
            fingerprint: fingerprint(&hasher),
            policy,
            hasher,
            total: 0,
        })
    }

    /// Read access for a policy, with `backend`'s kernels.
    #[inline(always)]
    fn ctx<B: Backend>(&self, backend: B) -> Ctx<'_, W, B> {
        Ctx {
            blocks: self.cells.blocks(),
            kernels: Ops::new(backend),
            marker: Ops::new(backend),
            geo: &self.geo,
        }
    }

    /// The policy and write access for it, with `backend`'s kernels.
    #[inline(always)]
    fn parts<B: Backend>(&mut self, backend: B) -> (&mut P, CtxMut<'_, W, B>) {
        (
            &mut self.policy,
            CtxMut {
                blocks: self.cells.blocks_mut(),
                kernels: Ops::new(backend),
                marker: Ops::new(backend),
                geo: &self.geo,
            },
        )
    }

    /// The 64-bit hash of `key` that every `*_hash` method takes.
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        hash::hash_key(&self.hasher, key)
    }

    /// Records one occurrence of `key`.
    #[inline]
    pub fn insert<K: Hash + ?Sized>(&mut self, key: &K) {
        self.insert_n_hash(self.hash(key), 1);
    }

    /// Records `r` occurrences of `key` at once (the paper's "insert `r`";
    /// `r = 0` does nothing).
    #[inline]
    pub fn insert_n<K: Hash + ?Sized>(&mut self, key: &K, r: u32) {
        self.insert_n_hash(self.hash(key), r);
    }

    /// [`Spectral::insert`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        self.insert_n_hash(h, 1);
    }

    /// [`Spectral::insert_n`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn insert_n_hash(&mut self, h: u64, r: u32) {
        if r == 0 {
            return;
        }
        self.total = self.total.saturating_add(u64::from(r));
        let engine = self.cells.engine();
        engine.run(InsertN { filter: self, h, r });
    }

    /// The estimated count of `key` (see the policy for its errors).
    #[inline]
    pub fn estimate<K: Hash + ?Sized>(&self, key: &K) -> u32 {
        self.estimate_hash(self.hash(key))
    }

    /// [`Spectral::estimate`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn estimate_hash(&self, h: u64) -> u32 {
        self.cells.engine().run(Estimate { filter: self, h })
    }

    /// [`Spectral::insert_hash`] for each hash of a batch, in order, with
    /// the blocks of the item [`LOOKAHEAD`](crate::LOOKAHEAD) places ahead
    /// prefetched, so that out of cache the misses of a batch overlap. The
    /// filter ends as item-by-item inserts would leave it.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral};
    /// let mut f = Spectral::<MinimumSelection>::new(4096, 4, 9)?;
    /// // Any u64 is a valid hash, small ids included: placement remixes it.
    /// f.insert_batch_hash(&[1, 2, 1]);
    /// let mut counts = [0; 2];
    /// f.estimate_batch_hash(&[1, 2], &mut counts)?;
    /// assert!(counts[0] >= 2 && counts[1] >= 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn insert_batch_hash(&mut self, hashes: &[u64]) {
        let engine = self.cells.engine();
        engine.run(InsertBatch {
            filter: self,
            hashes,
        });
    }

    /// [`Spectral::estimate_hash`] for each hash of a batch, prefetching as
    /// [`Spectral::insert_batch_hash`] does: `counts[i]` is the estimate of
    /// `hashes[i]`. An error if the slices differ in length.
    pub fn estimate_batch_hash(&self, hashes: &[u64], counts: &mut [u32]) -> Result<()> {
        if hashes.len() != counts.len() {
            return Err(Error::param("counts", "must be as long as the batch"));
        }
        self.cells.engine().run(EstimateBatch {
            filter: self,
            hashes,
            counts,
        });
        Ok(())
    }

    /// How many items ahead the batch operations prefetch:
    /// [`LOOKAHEAD`](crate::LOOKAHEAD), or 0 for a filter smaller than
    /// [`PREFETCH_MIN_BYTES`](crate::PREFETCH_MIN_BYTES).
    #[inline(always)]
    fn prefetch_ahead(&self) -> usize {
        if self.cells.block_count() * Block::BYTES < crate::PREFETCH_MIN_BYTES {
            0
        } else {
            crate::LOOKAHEAD
        }
    }

    /// Prefetches the blocks item `h` can touch: its primary block, and its
    /// secondary and marker blocks when the filter has them.
    #[inline(always)]
    fn prefetch_hash(&self, h: u64) {
        let blocks = self.cells.blocks();
        let geo = &self.geo;
        prefetch(&blocks[hash::block_of(h, geo.primary)]);
        if geo.secondary > 0 {
            let b = hash::block_of(mix64(h ^ SECONDARY_SALT), geo.secondary);
            prefetch(&blocks[geo.primary + b]);
        }
        if geo.marker > 0 {
            let b = hash::block_of(mix64(h ^ MARKER_SALT), geo.marker);
            prefetch(&blocks[geo.primary + geo.secondary + b]);
        }
    }

    /// Whether `key` was inserted at least `t` times, `t` chosen at query
    /// time (the ad-hoc iceberg query of §5.2): never `false` for an item
    /// that was (within the policy's guarantees), sometimes `true` for one
    /// that was not.
    ///
    /// ```
    /// use streambloom::spectral::{MinimalIncrease, Spectral};
    /// let mut f = Spectral::<MinimalIncrease>::new(4096, 4, 9)?;
    /// f.insert_n("hot", 50);
    /// assert!(f.at_least("hot", 50) && f.at_least("hot", 10));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn at_least<K: Hash + ?Sized>(&self, key: &K, t: u32) -> bool {
        self.at_least_hash(self.hash(key), t)
    }

    /// [`Spectral::at_least`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn at_least_hash(&self, h: u64, t: u32) -> bool {
        self.estimate_hash(h) >= t
    }

    /// The smallest of the item's primary counters and how many hold it:
    /// `count >= 2` is the recurring minimum of §3.3.
    #[inline]
    pub fn primary_minimum_hash(&self, h: u64) -> MinCount {
        self.ctx(streambloom_kernels::Scalar::new()).primary_min(h)
    }

    /// Adds `other`'s counters to this filter's, saturating (the multiset
    /// union of §2.2). For [`MinimumSelection`] the result equals, counter
    /// for counter, the filter of both streams. For [`MinimalIncrease`] and
    /// [`RecurringMinimum`] the result never under-estimates either; for
    /// Recurring Minimum only the primary counters are added and the
    /// secondary and marker are reset (which items were moved cannot be
    /// merged counter by counter), so old items are estimated as by
    /// Minimum Selection until they move again.
    ///
    /// Errors with [`Error::Incompatible`] when the sizes, `k`, the policy
    /// configuration or the hasher (seeds) differ, or for Trapping filters.
    pub fn union<S2: Storage, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, W, S2, H2>,
    ) -> Result<()> {
        self.combine(other, u32::saturating_add)?;
        self.total = self.total.saturating_add(other.total);
        Ok(())
    }

    /// Multiplies this filter's counters by `other`'s, saturating (the
    /// Spectral Bloomjoin of §5.3): the estimate of `x` bounds
    /// `f_x · g_x` from above, under the same conditions and with the same
    /// errors as [`Spectral::union`].
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral};
    /// let mut r = Spectral::<MinimumSelection>::new(4096, 4, 5)?;
    /// let mut s = Spectral::<MinimumSelection>::new(4096, 4, 5)?;
    /// r.insert_n("a", 3);
    /// s.insert_n("a", 4);
    /// r.join(&s)?;
    /// assert!(r.estimate("a") >= 12);
    /// let other_seed = Spectral::<MinimumSelection>::new(4096, 4, 6)?;
    /// assert!(r.join(&other_seed).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn join<S2: Storage, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, W, S2, H2>,
    ) -> Result<()> {
        self.combine(other, u32::saturating_mul)?;
        let sum: u64 = (0..self.geo.primary * W::CELLS)
            .filter_map(|i| self.cells.get(i))
            .map(u64::from)
            .sum();
        self.total = sum / u64::from(self.geo.k);
        Ok(())
    }

    fn combine<S2: Storage, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, W, S2, H2>,
        op: fn(u32, u32) -> u32,
    ) -> Result<()> {
        if self.geo != other.geo {
            return Err(Error::Incompatible { what: "sizes or k" });
        }
        if self.fingerprint != other.fingerprint {
            return Err(Error::Incompatible {
                what: "hasher or seeds",
            });
        }
        self.policy.check_merge(&other.policy)?;
        let primary = self.geo.primary;
        let mine = self.cells.blocks_mut();
        for (a, b) in mine[..primary]
            .iter_mut()
            .zip(&other.cells.blocks()[..primary])
        {
            for i in 0..W::CELLS {
                set_cell::<W>(a, i, op(cell::<W>(a, i), cell::<W>(b, i)));
            }
        }
        mine[primary..].fill(Block::ZERO);
        self.policy.reset();
        Ok(())
    }

    /// Places items by `placement` instead of [`PLACEMENT`] (for the
    /// placement comparison; call it on an empty filter).
    #[cfg(test)]
    pub(crate) fn set_placement(&mut self, placement: Placement) {
        self.geo.placement = placement;
    }

    /// Sets every counter to 0 and forgets every item.
    pub fn clear(&mut self) {
        self.cells.clear();
        self.policy.reset();
        self.total = 0;
    }

    /// Forces the kernel implementation (for tests and benchmarks); an error
    /// if this CPU lacks `isa`.
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.cells.set_isa(isa)
    }

    /// The kernel implementation in use.
    pub fn isa(&self) -> Isa {
        self.cells.isa()
    }

    /// `k`, the counters per item.
    pub fn k(&self) -> u32 {
        self.geo.k
    }

    /// Counters of the primary filter (whole blocks), the `m` of `γ = nk/m`.
    pub fn counters(&self) -> usize {
        self.geo.primary * W::CELLS
    }

    /// Occurrences inserted minus occurrences removed (`N`).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The policy and its configuration.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// All blocks (primary, then secondary, then marker): for comparing and
    /// persisting filters.
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

impl<P: Removable, W: Counter, S: Storage, H: BuildHasher> Spectral<P, W, S, H> {
    /// Takes back one occurrence of `key`. Removing an item more times than
    /// it was inserted is not detected: its counters stop at 0 (they never
    /// wrap), and the excess is taken from other items sharing them, which
    /// may then be under-estimated.
    #[inline]
    pub fn remove<K: Hash + ?Sized>(&mut self, key: &K) {
        self.remove_n_hash(self.hash(key), 1);
    }

    /// Takes back `r` occurrences of `key` (see [`Spectral::remove`]).
    #[inline]
    pub fn remove_n<K: Hash + ?Sized>(&mut self, key: &K, r: u32) {
        self.remove_n_hash(self.hash(key), r);
    }

    /// [`Spectral::remove`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn remove_hash(&mut self, h: u64) {
        self.remove_n_hash(h, 1);
    }

    /// [`Spectral::remove_n`] for a key hashed with [`Spectral::hash`].
    #[inline]
    pub fn remove_n_hash(&mut self, h: u64, r: u32) {
        if r == 0 {
            return;
        }
        self.total = self.total.saturating_sub(u64::from(r));
        let engine = self.cells.engine();
        engine.run(RemoveN { filter: self, h, r });
    }

    /// Lemma 3's unbiased estimator `(v̄_x − kN/m) / (1 − k/m)`, where
    /// `v̄_x` is the mean of `x`'s (distinct) primary counters, `N` is
    /// [`Spectral::total`], and `k` the expected number of distinct
    /// counters an item has ([`Placement::expected_cells`]: repeats
    /// collapse): its expectation is the true count, but it
    /// varies widely and can be negative, so use it for sums and averages
    /// over many items (§3.1, §5.1), not for single answers. Defined for the
    /// policies whose primary counters receive every insertion (Minimum
    /// Selection and Recurring Minimum without Trapping).
    pub fn estimate_unbiased<K: Hash + ?Sized>(&self, key: &K) -> f64 {
        self.estimate_unbiased_hash(self.hash(key))
    }

    /// [`Spectral::estimate_unbiased`] for a key hashed with
    /// [`Spectral::hash`].
    pub fn estimate_unbiased_hash(&self, h: u64) -> f64 {
        let p = self.geo.primary::<W>(h);
        let block = self.cells.block(p.block);
        let mut mask = p.mask;
        let mut sum = 0u64;
        while let Some(i) = mask.pop_lowest() {
            sum += u64::from(cell::<W>(block, i));
        }
        // An insertion adds to an item's distinct counters, on average
        // `expected_cells` of them ([`PLACEMENT`] collapses repeats).
        let k = self.geo.placement().expected_cells::<W>(self.geo.k);
        let m = self.counters() as f64;
        let mean = sum as f64 / f64::from(p.mask.count());
        (mean - k * self.total as f64 / m) / (1.0 - k / m)
    }
}

/// [`Spectral::insert_n_hash`] as one [`Body`].
struct InsertN<'a, P, W: Counter, S, H> {
    filter: &'a mut Spectral<P, W, S, H>,
    h: u64,
    r: u32,
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Body for InsertN<'_, P, W, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (policy, ctx) = self.filter.parts(backend);
        policy.insert(ctx, self.h, self.r);
    }
}

/// [`Spectral::remove_n_hash`] as one [`Body`].
struct RemoveN<'a, P, W: Counter, S, H> {
    filter: &'a mut Spectral<P, W, S, H>,
    h: u64,
    r: u32,
}

impl<P: Removable, W: Counter, S: Storage, H: BuildHasher> Body for RemoveN<'_, P, W, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (policy, ctx) = self.filter.parts(backend);
        policy.remove(ctx, self.h, self.r);
    }
}

/// [`Spectral::estimate_hash`] as one [`Body`].
struct Estimate<'a, P, W: Counter, S, H> {
    filter: &'a Spectral<P, W, S, H>,
    h: u64,
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Body for Estimate<'_, P, W, S, H> {
    type Output = u32;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> u32 {
        let f = self.filter;
        f.policy.estimate(f.ctx(backend), self.h)
    }
}

/// [`Spectral::insert_batch_hash`] as one [`Body`]: prefetch
/// [`LOOKAHEAD`](crate::LOOKAHEAD) items ahead, insert in order.
struct InsertBatch<'a, P, W: Counter, S, H> {
    filter: &'a mut Spectral<P, W, S, H>,
    hashes: &'a [u64],
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Body for InsertBatch<'_, P, W, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (f, hashes) = (self.filter, self.hashes);
        let ahead = f.prefetch_ahead();
        hashes.iter().take(ahead).for_each(|&h| f.prefetch_hash(h));
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&next) = hashes.get(i + ahead).filter(|_| ahead > 0) {
                f.prefetch_hash(next);
            }
            f.total = f.total.saturating_add(1);
            let (policy, ctx) = f.parts(backend);
            policy.insert(ctx, h, 1);
        }
    }
}

/// [`Spectral::estimate_batch_hash`] as one [`Body`].
struct EstimateBatch<'a, P, W: Counter, S, H> {
    filter: &'a Spectral<P, W, S, H>,
    hashes: &'a [u64],
    counts: &'a mut [u32],
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Body for EstimateBatch<'_, P, W, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (f, hashes) = (self.filter, self.hashes);
        let ahead = f.prefetch_ahead();
        hashes.iter().take(ahead).for_each(|&h| f.prefetch_hash(h));
        for (i, (&h, count)) in hashes.iter().zip(self.counts.iter_mut()).enumerate() {
            if let Some(&next) = hashes.get(i + ahead).filter(|_| ahead > 0) {
                f.prefetch_hash(next);
            }
            *count = f.policy.estimate(f.ctx(backend), h);
        }
    }
}
