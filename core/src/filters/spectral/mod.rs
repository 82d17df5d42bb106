//! **Spectral Bloom filters**: approximate counts of the items of a
//! multiset (Cohen and Matias, *Spectral Bloom Filters*, SIGMOD 2003, and its
//! technical report of the same title, which the section numbers cite).
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
//!   ([`bloom_error`](crate::analysis::spectral::bloom_error)), smallest at `γ = ln 2 ≈ 0.7`, i.e.
//!   `m ≈ 1.44·n·k`. For Recurring Minimum `counters` is the whole budget of
//!   both filters.
//! - `k`: 1 to `W::CELLS` (64, 32 or 16 counters per block for 8, 16 and 32
//!   bits); 4 to 6 is usual. Blocked hashing puts all `k` in one cache line,
//!   which costs some accuracy with few cells per block (16 for `W32`).
//! - `layout`: [`Layout::TwoBlocks`] (the default: `⌈k/2⌉` + `⌊k/2⌋`
//!   counters in two independent lines) or [`Layout::OneBlock`] (the
//!   fastest): at W32, γ = 0.7, two blocks bring Minimum Selection's error
//!   ratio from 2.4× the unblocked filter's to 1.2× for about 1.5× the time
//!   per item (`streambloom-bench accuracy`, in the README);
//!   [`two_block_error`](crate::analysis::spectral::two_block_error) is its
//!   model and [`SpectralParams::plan_with_layout`] plans by it.
//! - the store `C`: [`Blocked<W>`](Blocked) with `W` [`W8`], [`W16`] or
//!   [`W32`] (the default): pick a width whose `MAX` is above the largest
//!   count you need. The store is a [`CounterStore`]: the policies reach
//!   the counters only through it, so another store (the compact
//!   variable-length counters of the report's §4) runs them unchanged.
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
//! [`crate::analysis::spectral`] holds the paper's error formulas.
//!
//! ```
//! use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
//! let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 42)?;
//! f.insert("apple");
//! f.insert_n("pear", 3);
//! f.remove("pear");
//! assert!(f.estimate("pear") >= 2);
//! assert!(f.at_least("apple", 1));
//! # Ok::<(), streambloom::Error>(())
//! ```

mod blocked;
mod bytes;
#[cfg(feature = "alloc")]
mod compact;
mod counters;
mod plan;
mod policy;
mod range;
mod recurring;
#[cfg(feature = "alloc")]
mod window;

#[cfg(test)]
mod tests;

use blocked::plan_geometry;
pub use blocked::{Blocked, Ctx, CtxMut, PLACEMENT};
#[cfg(feature = "alloc")]
pub use compact::{Compact, Footprint, MAX_COUNTERS, StringArray, codes};
pub use counters::{CounterStore, Counters, CountersMut, MAX_ITEM_COUNTERS, Shape, Table};
pub use policy::{MinimalIncrease, MinimumSelection, Policy, Removable};
pub use range::{RangeCount, RangeTree};
pub use recurring::RecurringMinimum;
#[cfg(feature = "alloc")]
pub use window::SlidingWindow;

use crate::filter::keyed;
use crate::hash::{DefaultHasher, Layout};
use crate::merge::fingerprint;
use crate::store::Storage;
use crate::{Error, Result};
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use streambloom_kernels::{Backend, Block, Body, Isa, MinCount, Width};
pub use streambloom_kernels::{W8, W16, W32};

mod sealed {
    pub trait Sealed {}
}

/// A counter width a Spectral filter accepts: [`W8`], [`W16`] or [`W32`].
/// Narrower cells cannot hold counts; other widths do not compile:
///
/// ```compile_fail
/// use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
/// use streambloom::W4;
/// let f = Spectral::<MinimumSelection, Blocked<W4>>::new(SpectralParams::new(1024, 4), 7);
/// ```
pub trait Counter: Width + sealed::Sealed {}
impl sealed::Sealed for W8 {}
impl sealed::Sealed for W16 {}
impl sealed::Sealed for W32 {}
impl Counter for W8 {}
impl Counter for W16 {}
impl Counter for W32 {}

/// The parameters of a [`Spectral`] filter: its counter budget, the
/// counters per item and the estimation policy (with its configuration).
///
/// ```
/// use streambloom::spectral::{MinimalIncrease, RecurringMinimum, SpectralParams};
/// use streambloom::W16;
/// let p = SpectralParams::<MinimalIncrease>::new(10_000, 5);
/// assert_eq!(p.blocks::<W16>(), Ok(313)); // 32 counters a block
/// let rm = SpectralParams::new(3000, 4).with_policy(RecurringMinimum::new().with_marker(4096));
/// assert!(rm.blocks::<W16>().is_ok());
/// assert!(SpectralParams::<MinimalIncrease>::new(10_000, 0).blocks::<W16>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SpectralParams<P = MinimumSelection> {
    /// Counters `m`, rounded up to whole blocks: for
    /// [`RecurringMinimum`] the budget of both filters.
    pub counters: usize,
    /// Counters per item, `1..=W::CELLS` and below the primary counters.
    pub k: u32,
    /// The estimation policy.
    pub policy: P,
    /// Where an item's `k` counters go in each table:
    /// [`Layout::TwoBlocks`] (the default: `⌈k/2⌉` + `⌊k/2⌋` counters in
    /// two independent blocks, errors near the unblocked filter's; see the
    /// module docs' table) or [`Layout::OneBlock`] (one cache line per
    /// table, the fastest, about twice the error at equal memory).
    pub layout: Layout,
}

impl<P: Policy + Default> SpectralParams<P> {
    /// `counters` counters, `k` per item, `P`'s default configuration.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// let p = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// assert_eq!((p.counters, p.k), (4096, 4));
    /// ```
    pub fn new(counters: usize, k: u32) -> Self {
        SpectralParams {
            counters,
            k,
            policy: P::default(),
            layout: Layout::TwoBlocks,
        }
    }
}

impl<P> SpectralParams<P> {
    /// The same parameters with `layout`.
    ///
    /// ```
    /// use streambloom::hash::Layout;
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// let p = SpectralParams::<MinimumSelection>::new(4096, 4).with_layout(Layout::OneBlock);
    /// assert_eq!(p.layout, Layout::OneBlock);
    /// ```
    #[must_use]
    pub fn with_layout(self, layout: Layout) -> Self {
        SpectralParams { layout, ..self }
    }

    /// The same parameters with `policy` (its configuration: a
    /// [`RecurringMinimum`] with a marker or Trapping, say).
    ///
    /// ```
    /// use streambloom::spectral::{RecurringMinimum, SpectralParams};
    /// let rm = RecurringMinimum::new().with_marker(4096);
    /// let p = SpectralParams::<RecurringMinimum>::new(3000, 4).with_policy(rm.clone());
    /// assert_eq!(p.policy, rm);
    /// ```
    #[must_use]
    pub fn with_policy(self, policy: P) -> Self {
        SpectralParams { policy, ..self }
    }
}

impl<P: Policy> SpectralParams<P> {
    /// Validates the parameters for counters of width `W`; returns the
    /// blocks the filter needs (what [`Spectral::with_storage`] takes).
    ///
    /// Errors: `counters` is 0 (or too small for the policy), `k` is 0,
    /// above `W::CELLS`, or not below the primary counters.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, SpectralParams};
    /// use streambloom::W8;
    /// assert_eq!(SpectralParams::<MinimumSelection>::new(640, 4).blocks::<W8>(), Ok(10));
    /// ```
    pub fn blocks<W: Counter>(&self) -> Result<usize> {
        Ok(plan_geometry::<P, W>(&self.policy, self.counters, self.k)?.total())
    }
}

/// A Spectral Bloom filter with estimation policy `P`, its counters in
/// the [`CounterStore`] `C` ([`Blocked`] `W32` counters in a `Vec` by
/// default; `Blocked<W16>` for 16-bit counters, `Blocked<W8, &mut [Block]>`
/// for 8-bit counters in a caller's memory), hashing keys with `H` (see
/// the [module docs](self)).
///
/// ```
/// use streambloom::spectral::{Blocked, MinimalIncrease, Spectral, SpectralParams};
/// use streambloom::W16;
/// let mut f = Spectral::<MinimalIncrease, Blocked<W16>>::new(SpectralParams::new(8192, 4), 1)?;
/// f.insert_n("x", 3);
/// assert_eq!(f.estimate("x"), 3);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone)]
pub struct Spectral<P, C: CounterStore = Blocked, H = DefaultHasher> {
    store: C,
    policy: P,
    hasher: H,
    fingerprint: u64,
    total: u64,
}

impl<P: Policy, C: CounterStore + core::fmt::Debug, H> core::fmt::Debug for Spectral<P, C, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Spectral")
            .field("policy", &self.policy)
            .field("store", &self.store)
            .field("total", &self.total)
            .finish()
    }
}

/// Two filters are equal when their stores (geometry and counters),
/// hashers' fingerprints and totals are (policy state such as Trapping's
/// traps is not compared).
impl<P: Policy, C: CounterStore + PartialEq, H> PartialEq for Spectral<P, C, H> {
    fn eq(&self, other: &Self) -> bool {
        self.store == other.store
            && self.fingerprint == other.fingerprint
            && self.total == other.total
    }
}

#[cfg(feature = "alloc")]
impl<P: Policy, W: Counter> Spectral<P, Blocked<W>> {
    /// An empty filter in owned memory, hashing with the default hasher
    /// seeded from `seed` ([`crate::hash::seeded_hasher`]).
    ///
    #[doc = crate::filter::seed_doc!()]
    ///
    /// ```
    /// use streambloom::spectral::{Blocked, MinimalIncrease, Spectral, SpectralParams};
    /// use streambloom::W16;
    /// let f = Spectral::<MinimalIncrease, Blocked<W16>>::new(SpectralParams::new(10_000, 5), 1)?;
    /// assert_eq!(f.counters(), 10_016); // whole blocks of 32 counters
    /// assert!(Spectral::<MinimalIncrease, Blocked<W16>>::new(SpectralParams::new(0, 5), 1).is_err());
    /// assert!(Spectral::<MinimalIncrease, Blocked<W16>>::new(SpectralParams::new(100, 33), 1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(params: SpectralParams<P>, seed: u64) -> Result<Self> {
        Self::with_hasher(params, crate::hash::seeded_hasher(seed))
    }
}

#[cfg(feature = "std")]
impl<P: Policy, W: Counter> Spectral<P, Blocked<W>> {
    /// An empty filter in owned memory with random hash seeds from the
    /// operating system: the choice for keys chosen by others. (It merges
    /// only with its clones, which hash alike.)
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new_random(SpectralParams::new(4096, 4))?;
    /// f.insert("x");
    /// assert_eq!(f.estimate("x"), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new_random(params: SpectralParams<P>) -> Result<Self> {
        Self::with_hasher(params, crate::hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<P: Policy, W: Counter, H: BuildHasher> Spectral<P, Blocked<W>, H> {
    /// An empty filter in owned memory hashing with `hasher`, any
    /// [`BuildHasher`]. Filters merge only with filters that hash alike (a
    /// clone, or the same seeds).
    ///
    /// ```
    /// use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
    /// use streambloom::W32;
    /// let h = streambloom::hash::random_hasher();
    /// let params = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// let mut a = Spectral::<_, Blocked<W32>, _>::with_hasher(params.clone(), h.clone())?;
    /// let mut b = Spectral::<_, Blocked<W32>, _>::with_hasher(params, h)?;
    /// a.insert("x");
    /// b.insert("x");
    /// a.union(&b)?;
    /// assert!(a.estimate("x") >= 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_hasher(params: SpectralParams<P>, hasher: H) -> Result<Self> {
        let blocks = params.blocks::<W>()?;
        Self::restore(params, crate::store::zeroed(blocks)?, hasher, 0)
    }
}

impl<P: Policy, W: Counter, S: Storage, H: BuildHasher> Spectral<P, Blocked<W, S>, H> {
    /// An empty filter over caller-provided storage of exactly
    /// [`SpectralParams::blocks`] blocks, which it zeroes; no allocator
    /// needed.
    ///
    /// ```
    /// use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
    /// use streambloom::{hash::seeded_hasher, Block, W8};
    /// let params = SpectralParams::<MinimumSelection>::new(640, 4);
    /// let mut buf = [Block::ZERO; 10];
    /// let mut f = Spectral::<_, Blocked<W8, _>, _>::with_storage(params, &mut buf[..], seeded_hasher(3))?;
    /// f.insert(&17u32);
    /// assert_eq!(f.estimate(&17u32), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_storage(params: SpectralParams<P>, storage: S, hasher: H) -> Result<Self> {
        let mut f = Self::restore(params, storage, hasher, 0)?;
        f.clear();
        Ok(f)
    }

    /// A filter over caller-provided storage whose counters it adopts as
    /// they are, with [`total`](Self::total) `total` (the saved filter's):
    /// a filter's [`blocks`](Self::blocks) saved and loaded again, with the
    /// same parameters and hasher, estimates as the saved one did.
    /// (Trapping's traps are not in the blocks: they start empty.)
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// use streambloom::hash::seeded_hasher;
    /// let params = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// let mut f = Spectral::<_>::with_hasher(params.clone(), seeded_hasher(3))?;
    /// f.insert_n("x", 5);
    /// let g = Spectral::<_>::restore(params, f.blocks().to_vec(), seeded_hasher(3), f.total())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn restore(params: SpectralParams<P>, storage: S, hasher: H, total: u64) -> Result<Self> {
        Ok(Spectral {
            store: Blocked::new(&params, storage)?,
            fingerprint: fingerprint(&hasher),
            policy: params.policy,
            hasher,
            total,
        })
    }

    /// All blocks (primary, then secondary, then marker), as every
    /// filter's `blocks()`: for comparing and persisting filters (and
    /// [`restore`](Self::restore)); [`Blocked::blocks`].
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.blocks().len(), 256);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.store.blocks()
    }

    /// Places items by `placement` instead of [`PLACEMENT`] (for the
    /// placement comparison; call it on an empty filter).
    #[cfg(test)]
    pub(crate) fn set_placement(&mut self, placement: crate::hash::Placement) {
        self.store.geo.placement = placement;
    }
}

impl<P: Policy, C: CounterStore, H: BuildHasher> Spectral<P, C, H> {
    /// An empty filter over `store`, which it clears: the constructor for
    /// a [`CounterStore`] other than [`Blocked`] (whose filters the other
    /// constructors build from [`SpectralParams`]). The store must have
    /// the tables `policy` uses: a secondary table exactly when the policy
    /// plans one for the store's budget, and a marker likewise.
    ///
    /// Errors: [`Error::Parameter`] naming `store` when its tables do not
    /// match the policy's plan.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, RecurringMinimum, Spectral, SpectralParams};
    /// let ms = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// let store = ms.store().clone();
    /// let again = Spectral::from_store(store.clone(), MinimumSelection, streambloom::hash::seeded_hasher(1))?;
    /// assert!(again == ms);
    /// // Recurring Minimum needs a secondary table, which this store lacks.
    /// assert!(Spectral::from_store(store, RecurringMinimum::new(), streambloom::hash::seeded_hasher(1)).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_store(mut store: C, policy: P, hasher: H) -> Result<Self> {
        let shape = store.shape();
        let plan = policy.plan(store.budget())?;
        if (plan.secondary > 0) != (shape.secondary > 0) || (plan.marker > 0) != (shape.marker > 0)
        {
            return Err(Error::param(
                "store",
                store.budget(),
                "a store with the tables the policy plans (a secondary and a marker exactly when it uses them)",
            ));
        }
        store.clear();
        Ok(Spectral {
            store,
            fingerprint: fingerprint(&hasher),
            policy,
            hasher,
            total: 0,
        })
    }

    /// The counter store.
    ///
    /// ```
    /// use streambloom::spectral::{CounterStore, MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!((f.store().counters(), f.store().k()), (4096, 4));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn store(&self) -> &C {
        &self.store
    }

    /// The policy and write access for it, with `backend`'s kernels.
    #[inline(always)]
    fn parts<B: Backend>(&mut self, backend: B) -> (&mut P, C::Write<'_, B>) {
        (&mut self.policy, self.store.write(backend))
    }

    /// The hash of `key` that every `*_hash` method takes: the keyed forms
    /// are exactly `f.insert_hash(f.hash(key))` and so on.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_hash(f.hash("a"));
    /// assert_eq!(f.estimate("a"), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    keyed! {
        /// Records one occurrence of `key`.
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert("a");
        /// assert_eq!(f.estimate("a"), 1);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn insert(&mut self, key) = insert_hash;

        /// Records `r` occurrences of `key` at once (the paper's "insert
        /// `r`"; `r = 0` does nothing).
        ///
        /// ```
        /// use streambloom::spectral::{MinimalIncrease, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimalIncrease>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_n("a", 7);
        /// assert_eq!(f.estimate("a"), 7);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn insert_n(&mut self, key, r: u32) = insert_n_hash;

        /// The estimated count of `key` (see the policy for its errors).
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// assert_eq!(f.estimate("never"), 0);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn estimate(&self, key) -> u32 = estimate_hash;

        /// Whether `key` was inserted at least `t` times, `t` chosen at
        /// query time (the ad-hoc iceberg query of §5.2): never `false` for
        /// an item that was (within the policy's guarantees), sometimes
        /// `true` for one that was not.
        ///
        /// ```
        /// use streambloom::spectral::{MinimalIncrease, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimalIncrease>::new(SpectralParams::new(4096, 4), 9)?;
        /// f.insert_n("hot", 50);
        /// assert!(f.at_least("hot", 50) && f.at_least("hot", 10));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn at_least(&self, key, t: u32) -> bool = at_least_hash;

        /// [`insert`](Self::insert) for each key, in order.
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_batch(&["a", "b", "a"]);
        /// assert_eq!(f.estimate("a"), 2);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn insert_batch(&mut self, keys) = insert_batch_hash;

        /// [`estimate`](Self::estimate) for each key: `counts[i]` is the
        /// estimate of `keys[i]`; an error if the slices differ in length.
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_n("a", 3);
        /// let mut counts = [0; 2];
        /// f.estimate_batch(&["a", "b"], &mut counts)?;
        /// assert_eq!(counts, [3, 0]);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn estimate_batch(&self, keys, counts: &mut [u32]) = estimate_batch_hash;
    }

    /// [`insert`](Self::insert) for a key hashed with [`hash`](Self::hash)
    /// (or any `u64`: placement remixes it).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_hash(5);
    /// assert_eq!(f.estimate_hash(5), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        self.insert_n_hash(h, 1);
    }

    /// [`insert_n`](Self::insert_n) for a key already hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_n_hash(5, 4);
    /// assert_eq!(f.estimate_hash(5), 4);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_n_hash(&mut self, h: u64, r: u32) {
        if r == 0 {
            return;
        }
        self.total = self.total.saturating_add(u64::from(r));
        let engine = self.store.engine();
        engine.run(Update::<Add, _, _, _> {
            filter: self,
            h,
            r,
            direction: PhantomData,
        });
    }

    /// [`estimate`](Self::estimate) for a key already hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.estimate_hash(5), 0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn estimate_hash(&self, h: u64) -> u32 {
        self.store.engine().run(Estimate { filter: self, h })
    }

    /// [`at_least`](Self::at_least) for a key already hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_hash(5);
    /// assert!(f.at_least_hash(5, 1) && !f.at_least_hash(5, 2));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn at_least_hash(&self, h: u64, t: u32) -> bool {
        self.estimate_hash(h) >= t
    }

    /// [`insert_batch`](Self::insert_batch) for keys already hashed, with
    /// the blocks of the item [`LOOKAHEAD`](crate::store::LOOKAHEAD) places ahead
    /// prefetched (in filters of at least
    /// [`PREFETCH_MIN_BYTES`](crate::store::PREFETCH_MIN_BYTES)), so that out of
    /// cache the misses of a batch overlap. The filter ends as item-by-item
    /// inserts would leave it.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 9)?;
    /// f.insert_batch_hash(&[1, 2, 1]);
    /// assert_eq!(f.estimate_hash(1), 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn insert_batch_hash(&mut self, hashes: &[u64]) {
        self.total = self.total.saturating_add(hashes.len() as u64);
        let engine = self.store.engine();
        engine.run(UpdateBatch::<Add, _, _, _> {
            filter: self,
            hashes,
            direction: PhantomData,
        });
    }

    /// [`estimate_batch`](Self::estimate_batch) for keys already hashed,
    /// prefetching as [`insert_batch_hash`](Self::insert_batch_hash) does.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 9)?;
    /// f.insert_hash(1);
    /// let mut counts = [0; 2];
    /// f.estimate_batch_hash(&[1, 2], &mut counts)?;
    /// assert_eq!(counts, [1, 0]);
    /// assert!(f.estimate_batch_hash(&[1], &mut counts).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn estimate_batch_hash(&self, hashes: &[u64], counts: &mut [u32]) -> Result<()> {
        Error::check_len("counts", hashes.len(), counts.len())?;
        self.store.engine().run(EstimateBatch {
            filter: self,
            hashes,
            counts,
        });
        Ok(())
    }

    /// The smallest of the item's primary counters and how many hold it:
    /// `count >= 2` is the recurring minimum of §3.3.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_n_hash(5, 2);
    /// assert_eq!(f.primary_minimum_hash(5).min, 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn primary_minimum_hash(&self, h: u64) -> MinCount {
        self.store
            .read(streambloom_kernels::Scalar::new())
            .min_count(Table::Primary, h)
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
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let params = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// let mut a: Spectral<MinimumSelection> = Spectral::new(params.clone(), 5)?;
    /// let mut b: Spectral<MinimumSelection> = Spectral::new(params, 5)?;
    /// a.insert("x");
    /// b.insert_n("x", 2);
    /// a.union(&b)?;
    /// assert_eq!((a.estimate("x"), a.total()), (3, 3));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn union<C2: CounterStore, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, C2, H2>,
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
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let params = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// let mut r: Spectral<MinimumSelection> = Spectral::new(params.clone(), 5)?;
    /// let mut s: Spectral<MinimumSelection> = Spectral::new(params.clone(), 5)?;
    /// r.insert_n("a", 3);
    /// s.insert_n("a", 4);
    /// r.join(&s)?;
    /// assert!(r.estimate("a") >= 12);
    /// let other_seed: Spectral<MinimumSelection> = Spectral::new(params, 6)?;
    /// assert!(r.join(&other_seed).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn join<C2: CounterStore, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, C2, H2>,
    ) -> Result<()> {
        self.combine(other, u32::saturating_mul)?;
        let sum: u64 = (0..self.store.counters())
            .map(|i| u64::from(self.store.primary(i)))
            .sum();
        self.total = sum / u64::from(self.store.k());
        Ok(())
    }

    fn combine<C2: CounterStore, H2: BuildHasher>(
        &mut self,
        other: &Spectral<P, C2, H2>,
        op: fn(u32, u32) -> u32,
    ) -> Result<()> {
        if self.store.shape() != other.store.shape() {
            return Err(Error::Incompatible {
                what: "sizes, k or counter width",
            });
        }
        if self.fingerprint != other.fingerprint {
            return Err(Error::Incompatible {
                what: "hasher or seeds",
            });
        }
        self.policy.check_merge(&other.policy)?;
        for i in 0..self.store.counters() {
            let v = op(self.store.primary(i), other.store.primary(i));
            self.store.set_primary(i, v);
        }
        self.store.clear_secondary();
        self.policy.reset();
        Ok(())
    }

    /// Sets every counter to 0 and forgets every item.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert("a");
    /// f.clear();
    /// assert_eq!((f.estimate("a"), f.total()), (0, 0));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.store.clear();
        self.policy.reset();
        self.total = 0;
    }

    /// Forces the kernel implementation; [`Error::Unsupported`] if this CPU
    /// lacks `isa`.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// use streambloom::Isa;
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.set_isa(Isa::Scalar)?;
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.store.set_isa(isa)
    }

    /// The kernel implementation in use.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.isa(), streambloom::Isa::detect());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.store.engine().isa()
    }

    /// `k`, the counters per item.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(f.k(), 4);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn k(&self) -> u32 {
        self.store.k()
    }

    /// Counters of the primary filter (whole blocks), the `m` of `γ = nk/m`.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4000, 4), 1)?;
    /// assert_eq!(f.counters(), 4000); // 250 blocks of 16 32-bit counters
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn counters(&self) -> usize {
        self.store.counters()
    }

    /// Occurrences inserted minus occurrences removed (`N`).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_n("a", 3);
    /// f.remove("a");
    /// assert_eq!(f.total(), 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The parameters the filter was built with (`counters` as requested:
    /// see [`counters`](Self::counters) for the effective primary count).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let params = SpectralParams::<MinimumSelection>::new(4096, 4);
    /// let f = Spectral::<MinimumSelection>::new(params.clone(), 1)?;
    /// assert_eq!(f.params().k, params.k);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn params(&self) -> SpectralParams<P> {
        SpectralParams {
            counters: self.store.budget(),
            k: self.store.k(),
            layout: self.store.shape().layout,
            policy: self.policy.clone(),
        }
    }

    /// The policy and its configuration.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Policy, Spectral, SpectralParams};
    /// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// assert_eq!(MinimumSelection::NAME, "minimum selection");
    /// assert_eq!(f.policy(), &MinimumSelection);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn policy(&self) -> &P {
        &self.policy
    }
}

impl<P: Removable, C: CounterStore, H: BuildHasher> Spectral<P, C, H> {
    keyed! {
        /// Takes back one occurrence of `key`. Removing an item more times
        /// than it was inserted is not detected: its counters stop at 0
        /// (they never wrap), and the excess is taken from other items
        /// sharing them, which may then be under-estimated.
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_n("a", 2);
        /// f.remove("a");
        /// assert_eq!(f.estimate("a"), 1);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn remove(&mut self, key) = remove_hash;

        /// Takes back `r` occurrences of `key` (see [`remove`](Self::remove)).
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_n("a", 5);
        /// f.remove_n("a", 3);
        /// assert_eq!(f.estimate("a"), 2);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn remove_n(&mut self, key, r: u32) = remove_n_hash;

        /// [`remove`](Self::remove) for each key, in order.
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_batch(&["a", "a", "b"]);
        /// f.remove_batch(&["a", "b"]);
        /// assert_eq!((f.estimate("a"), f.estimate("b")), (1, 0));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn remove_batch(&mut self, keys) = remove_batch_hash;

        /// Lemma 3's unbiased estimator `(v̄_x − kN/m) / (1 − k/m)`, where
        /// `v̄_x` is the mean of `x`'s (distinct) primary counters, `N` is
        /// [`Spectral::total`], and `k` the expected number of distinct
        /// counters an item has ([`CounterStore::expected_item_counters`]: repeats
        /// collapse): its expectation is the true count, but it varies
        /// widely and can be negative, so use it for sums and averages over
        /// many items (§3.1, §5.1), not for single answers. Defined for the
        /// policies whose primary counters receive every insertion (Minimum
        /// Selection and Recurring Minimum without Trapping).
        ///
        /// ```
        /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
        /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
        /// f.insert_n("a", 10);
        /// assert!((f.estimate_unbiased("a") - 10.0).abs() < 0.1);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn estimate_unbiased(&self, key) -> f64 = estimate_unbiased_hash;
    }

    /// [`remove`](Self::remove) for a key already hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_hash(3);
    /// f.remove_hash(3);
    /// assert_eq!(f.estimate_hash(3), 0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn remove_hash(&mut self, h: u64) {
        self.remove_n_hash(h, 1);
    }

    /// [`remove_n`](Self::remove_n) for a key already hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_n_hash(3, 4);
    /// f.remove_n_hash(3, 4);
    /// assert_eq!(f.estimate_hash(3), 0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn remove_n_hash(&mut self, h: u64, r: u32) {
        if r == 0 {
            return;
        }
        self.total = self.total.saturating_sub(u64::from(r));
        let engine = self.store.engine();
        engine.run(Update::<Take, _, _, _> {
            filter: self,
            h,
            r,
            direction: PhantomData,
        });
    }

    /// [`remove_batch`](Self::remove_batch) for keys already hashed, with
    /// the prefetching of [`insert_batch_hash`](Self::insert_batch_hash).
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_batch_hash(&[1, 1]);
    /// f.remove_batch_hash(&[1]);
    /// assert_eq!(f.estimate_hash(1), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn remove_batch_hash(&mut self, hashes: &[u64]) {
        self.total = self.total.saturating_sub(hashes.len() as u64);
        let engine = self.store.engine();
        engine.run(UpdateBatch::<Take, _, _, _> {
            filter: self,
            hashes,
            direction: PhantomData,
        });
    }

    /// [`estimate_unbiased`](Self::estimate_unbiased) for a key already
    /// hashed.
    ///
    /// ```
    /// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
    /// let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
    /// f.insert_n_hash(8, 10);
    /// assert!(f.estimate_unbiased_hash(8) > 9.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn estimate_unbiased_hash(&self, h: u64) -> f64 {
        let mut counters = [(0, 0); MAX_ITEM_COUNTERS];
        let n = self
            .store
            .read(streambloom_kernels::Scalar::new())
            .primary_counters(h, &mut counters);
        let sum: u64 = counters[..n].iter().map(|&(_, v)| u64::from(v)).sum();
        // An insertion adds to an item's distinct counters, on average
        // `expected_item_counters` of them (fewer than `k` where the store
        // lets them coincide).
        let k = self.store.expected_item_counters();
        let m = self.counters() as f64;
        let mean = sum as f64 / n as f64;
        (mean - k * self.total as f64 / m) / (1.0 - k / m)
    }
}

/// Which update an [`Update`] or [`UpdateBatch`] body applies: insertion
/// ([`Add`]) or deletion ([`Take`], only for [`Removable`] policies).
trait Direction<P> {
    /// Applies `r` occurrences of the item hashed to `h` to `c`.
    fn apply<C: CountersMut>(policy: &mut P, c: &mut C, h: u64, r: u32);
}

/// Insertion, [`Policy::insert`].
struct Add;

impl<P: Policy> Direction<P> for Add {
    #[inline(always)]
    fn apply<C: CountersMut>(policy: &mut P, c: &mut C, h: u64, r: u32) {
        policy.insert(c, h, r);
    }
}

/// Deletion, [`Removable::remove`].
struct Take;

impl<P: Removable> Direction<P> for Take {
    #[inline(always)]
    fn apply<C: CountersMut>(policy: &mut P, c: &mut C, h: u64, r: u32) {
        policy.remove(c, h, r);
    }
}

/// [`Spectral::insert_n_hash`] (`D` = [`Add`]) or
/// [`Spectral::remove_n_hash`] (`D` = [`Take`]) as one [`Body`].
struct Update<'a, D, P, C: CounterStore, H> {
    filter: &'a mut Spectral<P, C, H>,
    h: u64,
    r: u32,
    direction: PhantomData<D>,
}

impl<D: Direction<P>, P: Policy, C: CounterStore, H: BuildHasher> Body for Update<'_, D, P, C, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (policy, mut ctx) = self.filter.parts(backend);
        D::apply(policy, &mut ctx, self.h, self.r);
    }
}

/// [`Spectral::estimate_hash`] as one [`Body`].
struct Estimate<'a, P, C: CounterStore, H> {
    filter: &'a Spectral<P, C, H>,
    h: u64,
}

impl<P: Policy, C: CounterStore, H: BuildHasher> Body for Estimate<'_, P, C, H> {
    type Output = u32;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> u32 {
        let f = self.filter;
        f.policy.estimate(&f.store.read(backend), self.h)
    }
}

/// [`Spectral::insert_batch_hash`] (`D` = [`Add`]) or
/// [`Spectral::remove_batch_hash`] (`D` = [`Take`]) as one [`Body`].
struct UpdateBatch<'a, D, P, C: CounterStore, H> {
    filter: &'a mut Spectral<P, C, H>,
    hashes: &'a [u64],
    direction: PhantomData<D>,
}

impl<D: Direction<P>, P: Policy, C: CounterStore, H: BuildHasher> Body
    for UpdateBatch<'_, D, P, C, H>
{
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (f, hashes) = (self.filter, self.hashes);
        crate::filter::batch!(
            hashes.len(),
            f.store.prefetching(),
            |i| f.store.prefetch(hashes[i]),
            |i| {
                let (policy, mut ctx) = f.parts(backend);
                D::apply(policy, &mut ctx, hashes[i], 1);
            }
        );
    }
}

/// [`Spectral::estimate_batch_hash`] as one [`Body`].
struct EstimateBatch<'a, P, C: CounterStore, H> {
    filter: &'a Spectral<P, C, H>,
    hashes: &'a [u64],
    counts: &'a mut [u32],
}

impl<P: Policy, C: CounterStore, H: BuildHasher> Body for EstimateBatch<'_, P, C, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (f, hashes, counts) = (self.filter, self.hashes, self.counts);
        let ctx = f.store.read(backend);
        crate::filter::batch!(
            hashes.len(),
            f.store.prefetching(),
            |i| f.store.prefetch(hashes[i]),
            |i| counts[i] = f.policy.estimate(&ctx, hashes[i])
        );
    }
}
