//! The classic Bloom filter, blocked: one bit per cell, 512 cells per
//! cache-line block, an item's `k` bits all in one block, or split between
//! two independent blocks ([`Layout`]).
//!
//! It is the baseline every other filter is measured against. It answers
//! set membership for a set that only grows.
//!
//! # Guarantees
//!
//! - **No false negatives**: a key inserted is always found (until
//!   [`Classic::clear`]).
//! - **False positives** at the rate [`Classic::predicted_fpr`] after `n`
//!   distinct insertions. Blocking costs accuracy against the unblocked
//!   formula [`Classic::unblocked_fpr`] at equal memory, since the loads of
//!   the blocks vary (Putze, Sanders & Singler, *Cache-, hash- and
//!   space-efficient Bloom filters*, 2007): `predicted_fpr` is their
//!   Poisson mixture over block loads. With [`Layout::TwoBlocks`] each
//!   half of an item's bits sees its own block's load, and the rate comes
//!   close to the unblocked one for one more cache line per item
//!   ([`two_block_fpr`](crate::analysis::classic::two_block_fpr)).
//!
//! # Parameters
//!
//! [`ClassicParams`]: `cells` (the bits `m`, rounded up to whole 512-bit
//! blocks), `k` (bits per item, `1..=512`) and the [`Layout`]
//! ([`ClassicParams::new`] takes one block). [`ClassicParams::plan`]
//! picks them for `n` items and a target false-positive rate, using the
//! blocked formula of the layout ([`ClassicParams::plan_with_layout`] for
//! two blocks); [`Classic::plan`] builds the filter in one call.
//!
//! **Seeds.** Keys an attacker chooses, with seeds they can guess, can all
//! hit one block; for untrusted keys use secret seeds.
//!
//! ```
//! use streambloom::classic::{Classic, ClassicParams};
//! use streambloom::Layout;
//! let mut f = Classic::plan(10_000, 0.01, 7).unwrap();
//! assert!(!f.insert("alice")); // not there before
//! assert!(f.contains("alice"));
//! assert!(f.predicted_fpr(10_000) <= 0.01);
//! // The same filter from explicit parameters:
//! let g = Classic::new(ClassicParams::plan(10_000, 0.01).unwrap(), 7).unwrap();
//! assert_eq!(f.params(), g.params());
//! // Two blocks an item: less memory for the same rate.
//! let two = ClassicParams::plan_with_layout(10_000, 0.01, Layout::TwoBlocks).unwrap();
//! assert!(two.cells < g.params().cells);
//! ```

mod bytes;
#[cfg(test)]
mod tests;

use crate::analysis::classic::layout_fpr;
use crate::filter::keyed;
pub use crate::hash::Layout;
use crate::hash::{self, DefaultHasher, Placement};
use crate::store::{self, Cells, DefaultStorage, Storage};
use crate::{Block, Error, Isa, Result, W1, Width};
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use streambloom_kernels::{Backend, Body, Ops, prefetch};

/// Cells (bits) per block.
const B: usize = W1::CELLS;

/// How [`Classic`] places an item's `k` bits in its block (the measured
/// choice: see the [`hash`] module docs).
pub const PLACEMENT: Placement = Placement::SplitBlock;

/// The size, hash count and layout of a [`Classic`] filter.
///
/// ```
/// use streambloom::classic::ClassicParams;
/// use streambloom::Layout;
/// let p = ClassicParams { cells: 1 << 20, k: 7, layout: Layout::TwoBlocks };
/// assert_eq!(p, ClassicParams::new(1 << 20, 7).with_layout(Layout::TwoBlocks));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassicParams {
    /// Cells (bits) `m`, rounded up to whole 512-bit blocks by the filter.
    pub cells: usize,
    /// Bits set per item.
    pub k: u32,
    /// One block an item, or `k` bits split between two ([`Layout`]).
    pub layout: Layout,
}

impl ClassicParams {
    /// `cells` bits, `k` bits an item, in one block ([`Layout::OneBlock`]).
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// use streambloom::Layout;
    /// assert_eq!(ClassicParams::new(1024, 3).layout, Layout::OneBlock);
    /// ```
    pub const fn new(cells: usize, k: u32) -> ClassicParams {
        ClassicParams {
            cells,
            k,
            layout: Layout::OneBlock,
        }
    }

    /// These parameters with `layout`.
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// use streambloom::Layout;
    /// let p = ClassicParams::new(1024, 3).with_layout(Layout::TwoBlocks);
    /// assert_eq!(p.layout, Layout::TwoBlocks);
    /// ```
    pub const fn with_layout(self, layout: Layout) -> ClassicParams {
        ClassicParams { layout, ..self }
    }

    /// The smallest one-block filter (whole blocks) whose blocked
    /// false-positive rate [`predicted_fpr`](Self::predicted_fpr) after `n`
    /// distinct items is at most `target_fpr`, over `k` in `1..=32`; ties
    /// go to the smaller `k`: [`plan_with_layout`](Self::plan_with_layout)
    /// with [`Layout::OneBlock`].
    ///
    /// Errors: `n == 0`, `target_fpr` outside `(0, 1)`, or a filter too
    /// large to address.
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// let p = ClassicParams::plan(1_000_000, 0.01).unwrap();
    /// assert!(p.predicted_fpr(1_000_000) <= 0.01);
    /// // Blocking costs memory against the unblocked optimum, 9.59 bits/item.
    /// assert!(p.cells as f64 / 1e6 > 9.59);
    /// assert!(ClassicParams::plan(0, 0.01).is_err());
    /// // Below what one bit an item reaches in any size: more bits.
    /// let tiny = ClassicParams::plan(100_000, 1e-15)?;
    /// assert!(tiny.k > 1 && tiny.predicted_fpr(100_000) <= 1e-15);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan(n: u64, target_fpr: f64) -> Result<ClassicParams> {
        Self::plan_with_layout(n, target_fpr, Layout::OneBlock)
    }

    /// [`plan`](Self::plan) for a filter in `layout`, by that layout's
    /// rate ([`layout_fpr`]).
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// use streambloom::Layout;
    /// let p = ClassicParams::plan_with_layout(1_000_000, 0.01, Layout::TwoBlocks).unwrap();
    /// assert_eq!(p.layout, Layout::TwoBlocks);
    /// assert!(p.predicted_fpr(1_000_000) <= 0.01);
    /// // Within 1.5 % of the unblocked optimum, 9.59 bits/item.
    /// assert!(p.cells as f64 / 1e6 < 9.59 * 1.015);
    /// ```
    pub fn plan_with_layout(n: u64, target_fpr: f64, layout: Layout) -> Result<ClassicParams> {
        if n == 0 {
            return Err(Error::param("n", n, "at least 1"));
        }
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
        }
        let max_blocks = usize::MAX / B;
        let mut best: Option<ClassicParams> = None;
        for k in 1..=32 {
            let fpr = |blocks: usize| layout_fpr(layout, blocks, k, n as f64);
            // A `k` that cannot reach the target in any size is skipped, not
            // an error: a larger one may (1e-15 needs more than one bit an
            // item, whatever the memory).
            let Some(blocks) =
                crate::search::first_from(1, max_blocks, 1, |b| fpr(b) <= target_fpr)
            else {
                continue;
            };
            let cells = blocks * B;
            if best.is_none_or(|b| cells < b.cells) {
                best = Some(ClassicParams { cells, k, layout });
            }
        }
        best.ok_or(Error::param(
            "target_fpr",
            target_fpr,
            "reachable with at most usize::MAX bits",
        ))
    }

    /// The expected false-positive rate of the blocked filter after `n`
    /// distinct items ([`layout_fpr`]). For one block it is `Σ_i Pois(i; n/blocks) · (1 - (1 - k/B)^i)^k`, a
    /// block holding `i` items with probability `Pois(i; n/blocks)` and each
    /// of its `B = 512` bits then being clear with probability
    /// `(1 - k/B)^i`. (Putze et al. write `(1 - 1/B)^(ik)`, `k` draws with
    /// repetition; this crate places `k` distinct bits, split-block style
    /// ([`PLACEMENT`]), so an item sets a given bit with probability `k/B`,
    /// hence `(1 - k/B)^i`.)
    /// Computed numerically over the loads within 12 standard deviations of
    /// the mean (1 when all of those saturate a block). For two blocks it is
    /// the product of the two halves' rates, each half's block loaded by
    /// both kinds of halves, and the merged probe's rate for the keys
    /// whose halves share a block: see
    /// [`two_block_fpr`](crate::analysis::classic::two_block_fpr) for its
    /// derivation.
    ///
    /// Defined for any parameters: `cells` of 0 count as one block, a `k`
    /// above 512 as 512 (the most distinct bits a block has, as
    /// [`hash::cells_of`] caps it), and `k = 0` gives 1 (an item with no
    /// bits is found in any filter).
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// use streambloom::Layout;
    /// let p = ClassicParams::new(1 << 20, 7);
    /// assert!(p.predicted_fpr(100_000) > p.unblocked_fpr(100_000));
    /// let two = p.with_layout(Layout::TwoBlocks).predicted_fpr(100_000);
    /// assert!(two < p.predicted_fpr(100_000) && two > p.unblocked_fpr(100_000));
    /// ```
    pub fn predicted_fpr(&self, n: u64) -> f64 {
        layout_fpr(
            self.layout,
            self.cells.div_ceil(B).max(1),
            self.k_capped(),
            n as f64,
        )
    }

    /// The textbook rate of an unblocked filter of the same (block-rounded)
    /// size: `(1 - e^(-kn/m))^k`. Defined for any parameters, as
    /// [`predicted_fpr`](Self::predicted_fpr) is.
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// let p = ClassicParams::new(9586, 7);
    /// assert!((p.unblocked_fpr(1000) - 0.01).abs() < 1e-3);
    /// ```
    pub fn unblocked_fpr(&self, n: u64) -> f64 {
        // In floating point: the block-rounded bit count can pass `usize`.
        let m = self.cells.div_ceil(B).max(1) as f64 * B as f64;
        let k = f64::from(self.k_capped());
        libm::pow(-libm::expm1(-k * n as f64 / m), k)
    }

    /// `k`, capped at the bits of a block as placement caps it.
    fn k_capped(&self) -> u32 {
        self.k.min(B as u32)
    }

    /// Validates the parameters; returns the blocks they need.
    ///
    /// ```
    /// use streambloom::classic::ClassicParams;
    /// assert_eq!(ClassicParams::new(1000, 7).blocks(), Ok(2));
    /// assert!(ClassicParams::new(1000, 0).blocks().is_err());
    /// assert!(ClassicParams::new(0, 7).blocks().is_err());
    /// ```
    pub fn blocks(&self) -> Result<usize> {
        if self.k == 0 {
            return Err(Error::param("k", self.k, "at least 1"));
        }
        if self.k as usize > B {
            return Err(Error::param(
                "k",
                self.k,
                "at most 512, the bits of a block",
            ));
        }
        store::blocks_named::<W1>(self.cells, "cells")
    }
}

/// Runs `$body` with `$P` the [`Place`] of filter `$f`: split-block words
/// ([`ByWords`]) or cell by cell ([`ByCells`]), in one block or two. One
/// instantiation per case, chosen once per call (see [`Place`]).
macro_rules! by_place {
    ($f:expr, $P:ident => $body:expr) => {{
        match ($f.by_words(), $f.layout) {
            (true, Layout::OneBlock) => {
                type $P = ByWords<false>;
                $body
            }
            (true, Layout::TwoBlocks) => {
                type $P = ByWords<true>;
                $body
            }
            (false, Layout::OneBlock) => {
                type $P = ByCells<false>;
                $body
            }
            (false, Layout::TwoBlocks) => {
                type $P = ByCells<true>;
                $body
            }
        }
    }};
}

/// A blocked one-bit Bloom filter in storage `S`, hashing with `H` (see
/// the [module docs](self)).
#[derive(Clone)]
pub struct Classic<S = DefaultStorage, H = DefaultHasher> {
    cells: Cells<W1, S>,
    hasher: H,
    k: u32,
    layout: Layout,
    /// The placement under test ([`PLACEMENT`] outside tests).
    #[cfg(test)]
    placement: Placement,
}

impl<S: Storage, H> core::fmt::Debug for Classic<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Classic")
            .field("k", &self.k)
            .field("layout", &self.layout)
            .field("cells", &self.cells)
            .finish_non_exhaustive()
    }
}

/// Two filters are equal when they have the same parameters and the same
/// bits (their hashers are not compared: build both with the same seed).
impl<S: Storage, H> PartialEq for Classic<S, H> {
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k
            && self.layout == other.layout
            && self.cells.blocks() == other.cells.blocks()
    }
}

#[cfg(feature = "alloc")]
impl Classic {
    /// An empty filter in owned memory, hashing with the default hasher
    /// seeded from `seed` ([`hash::seeded_hasher`]).
    ///
    #[doc = crate::filter::seed_doc!()]
    ///
    /// ```
    /// use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(1000, 7), 1).unwrap();
    /// assert_eq!(f.cells(), 1024);
    /// assert!(Classic::new(ClassicParams::new(1000, 0), 1).is_err());
    /// ```
    pub fn new(params: ClassicParams, seed: u64) -> Result<Self> {
        Self::with_hasher(params, hash::seeded_hasher(seed))
    }

    /// The smallest filter for `n` distinct items at a false-positive rate
    /// of at most `target_fpr` ([`ClassicParams::plan`]), seeded from
    /// `seed`.
    ///
    /// ```
    /// use streambloom::classic::Classic;
    /// let f = Classic::plan(1_000, 0.001, 9).unwrap();
    /// assert!(f.predicted_fpr(1_000) <= 0.001);
    /// assert!(Classic::plan(1_000, 0.0, 9).is_err());
    /// ```
    pub fn plan(n: u64, target_fpr: f64, seed: u64) -> Result<Self> {
        Self::new(ClassicParams::plan(n, target_fpr)?, seed)
    }
}

#[cfg(feature = "std")]
impl Classic {
    /// An empty filter in owned memory with random hash seeds from the
    /// operating system: the choice for keys chosen by others.
    ///
    /// ```
    /// use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new_random(ClassicParams::new(4096, 5)).unwrap();
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// ```
    pub fn new_random(params: ClassicParams) -> Result<Self> {
        Self::with_hasher(params, hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<H: BuildHasher> Classic<DefaultStorage, H> {
    /// An empty filter in owned memory hashing with `hasher`, any
    /// [`BuildHasher`].
    ///
    /// ```
    /// use streambloom::classic::{Classic, ClassicParams};
    /// let hasher = std::collections::hash_map::RandomState::new();
    /// let mut f = Classic::with_hasher(ClassicParams::new(4096, 5), hasher).unwrap();
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// ```
    pub fn with_hasher(params: ClassicParams, hasher: H) -> Result<Self> {
        let blocks = params.blocks()?;
        Self::restore(params, store::zeroed(blocks)?, hasher)
    }
}

impl<S: Storage, H: BuildHasher> Classic<S, H> {
    /// An empty filter over caller-provided storage of exactly
    /// [`ClassicParams::blocks`] blocks, which it zeroes; no allocator
    /// needed.
    ///
    /// ```
    /// use streambloom::classic::{Classic, ClassicParams};
    /// use streambloom::{hash, Block, Error};
    /// let params = ClassicParams::new(1024, 5);
    /// let mut buf = [Block::ZERO; 2];
    /// let mut f = Classic::with_storage(params, &mut buf[..], hash::seeded_hasher(3)).unwrap();
    /// // Any u64 is a valid hash, small ids included: placement remixes it.
    /// f.insert_hash(42);
    /// assert!(f.contains_hash(42));
    /// let mut small = [Block::ZERO; 1];
    /// let e = Classic::with_storage(params, &mut small[..], hash::seeded_hasher(3)).unwrap_err();
    /// assert_eq!(e, Error::Length { name: "storage", expected: 2, found: 1 });
    /// ```
    pub fn with_storage(params: ClassicParams, storage: S, hasher: H) -> Result<Self> {
        let mut f = Self::restore(params, storage, hasher)?;
        f.clear();
        Ok(f)
    }

    /// A filter over caller-provided storage whose contents it adopts as
    /// they are: a filter's [`blocks`](Self::blocks) saved and loaded again,
    /// with the same parameters and hasher, is the same filter.
    ///
    /// ```
    /// use streambloom::classic::{Classic, ClassicParams};
    /// use streambloom::hash;
    /// let params = ClassicParams::new(4096, 5);
    /// let mut f = Classic::with_hasher(params, hash::seeded_hasher(3)).unwrap();
    /// f.insert("kept");
    /// let saved = f.blocks().to_vec();
    /// let g = Classic::restore(params, saved, hash::seeded_hasher(3)).unwrap();
    /// assert!(g.contains("kept"));
    /// ```
    pub fn restore(params: ClassicParams, storage: S, hasher: H) -> Result<Self> {
        let blocks = params.blocks()?;
        Ok(Classic {
            cells: Cells::new(storage, blocks)?,
            hasher,
            k: params.k,
            layout: params.layout,
            #[cfg(test)]
            placement: PLACEMENT,
        })
    }

    /// The placement of items' bits: [`PLACEMENT`], or another in tests.
    #[inline(always)]
    fn placement(&self) -> Placement {
        #[cfg(test)]
        return self.placement;
        #[cfg(not(test))]
        PLACEMENT
    }

    /// Places items by `placement` instead of [`PLACEMENT`] (for the
    /// placement comparison; call it on an empty filter).
    #[cfg(test)]
    pub(crate) fn set_placement(&mut self, placement: Placement) {
        self.placement = placement;
    }

    /// The hash of `key` that the `*_hash` methods take: the keyed forms
    /// are exactly `f.insert_hash(f.hash(key))` and so on.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// f.insert_hash(f.hash("a"));
    /// assert!(f.contains("a"));
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    keyed! {
        /// Inserts `key`; returns whether it looked present before (all of
        /// its bits were set): check-and-set in one pass.
        ///
        /// ```
        /// # use streambloom::classic::{Classic, ClassicParams};
        /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
        /// assert!(!f.insert(&12u64));
        /// assert!(f.insert(&12u64));
        /// ```
        fn insert(&mut self, key) -> bool = insert_hash;

        /// Whether `key` may have been inserted (`false` means it surely
        /// was not).
        ///
        /// ```
        /// # use streambloom::classic::{Classic, ClassicParams};
        /// let f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
        /// assert!(!f.contains("nothing"));
        /// ```
        fn contains(&self, key) -> bool = contains_hash;

        /// [`insert`](Self::insert) for each key, in order (the answers are
        /// dropped; [`contains_batch`](Self::contains_batch) asks).
        ///
        /// ```
        /// # use streambloom::classic::{Classic, ClassicParams};
        /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
        /// f.insert_batch(&["a", "b"]);
        /// assert!(f.contains("a") && f.contains("b"));
        /// ```
        batch fn insert_batch(&mut self, keys) = insert_batch_hash;

        /// [`contains`](Self::contains) for each key: `found[i]` is the
        /// answer for `keys[i]`; an error if the slices differ in length.
        ///
        /// ```
        /// # use streambloom::classic::{Classic, ClassicParams};
        /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
        /// f.insert("a");
        /// let mut found = [false; 2];
        /// f.contains_batch(&["a", "z"], &mut found).unwrap();
        /// assert_eq!(found, [true, false]);
        /// assert!(f.contains_batch(&["a"], &mut found).is_err());
        /// ```
        batch fn contains_batch(&self, keys, found: &mut [bool]) = contains_batch_hash;
    }

    /// [`insert`](Self::insert) for a key already hashed to `h`: any `u64`
    /// (a 64-bit hash, an id, a 32-bit hash), as placement remixes it
    /// ([`hash::probe`]); distinct keys need distinct values.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// assert!(!f.insert_hash(12));
    /// assert!(f.contains_hash(12));
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: u64) -> bool {
        let engine = self.cells.engine();
        by_place!(self, P => engine.run(InsertOne {
            filter: self,
            h,
            place: PhantomData::<P>,
        }))
    }

    /// [`contains`](Self::contains) for a key already hashed to `h` (any
    /// `u64`, as for [`insert_hash`](Self::insert_hash)).
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// assert!(!f.contains_hash(1));
    /// ```
    #[inline]
    pub fn contains_hash(&self, h: u64) -> bool {
        let engine = self.cells.engine();
        by_place!(self, P => engine.run(ContainsOne {
            filter: self,
            h,
            place: PhantomData::<P>,
        }))
    }

    /// [`insert_batch`](Self::insert_batch) for keys already hashed; out of
    /// cache the blocks of the items [`LOOKAHEAD`](crate::store::LOOKAHEAD) places
    /// ahead are prefetched.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// f.insert_batch_hash(&[1, 2, 3]);
    /// assert!(f.contains_hash(2));
    /// ```
    pub fn insert_batch_hash(&mut self, hashes: &[u64]) {
        let engine = self.cells.engine();
        by_place!(self, P => engine.run(InsertBatch {
            filter: self,
            hashes,
            place: PhantomData::<P>,
        }))
    }

    /// [`contains_batch`](Self::contains_batch) for keys already hashed.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// f.insert_hash(1);
    /// let mut found = [false; 2];
    /// f.contains_batch_hash(&[1, 2], &mut found).unwrap();
    /// assert_eq!(found, [true, false]);
    /// ```
    pub fn contains_batch_hash(&self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        Error::check_len("found", hashes.len(), found.len())?;
        let engine = self.cells.engine();
        by_place!(self, P => engine.run(ContainsBatch {
            filter: self,
            hashes,
            found,
            place: PhantomData::<P>,
        }));
        Ok(())
    }

    /// Prefetches the blocks of item `h` (both, if `two`: two blocks).
    #[inline(always)]
    fn prefetch_hash(&self, two: bool, h: u64) {
        let blocks = self.cells.block_count();
        prefetch(self.cells.block(hash::block_of(h, blocks)));
        if two {
            prefetch(self.cells.block(hash::second_block_of(h, blocks)));
        }
    }

    /// Where item `h`'s bits are, placed by `P` (in `P`'s layout).
    #[inline(always)]
    fn probes<P: Place, B: Backend>(&self, ops: Ops<W1, B>, h: u64) -> hash::Probes<W1> {
        let cells = self.place_cells::<P, B>(ops);
        hash::probes_fixed::<W1, _>(P::TWO, h, self.cells.block_count(), self.k, &cells)
    }

    /// `P`'s masks with `ops`'s kernels.
    #[inline(always)]
    fn place_cells<P: Place, B: Backend>(&self, ops: Ops<W1, B>) -> PlaceCells<P, B> {
        PlaceCells {
            ops,
            placement: self.placement(),
            place: PhantomData,
        }
    }

    /// Whether items' bits are split-block words built in vector registers
    /// ([`ByWords`]: `k <= 8`), else [`ByCells`].
    #[inline(always)]
    fn by_words(&self) -> bool {
        self.placement() == Placement::SplitBlock && hash::split_block_by_words::<W1>(self.k)
    }

    /// Item `h`'s insertion with `ops`'s kernels, its bits placed by `P`.
    #[inline(always)]
    fn insert_with<P: Place, B: Backend>(&mut self, ops: Ops<W1, B>, h: u64) -> bool {
        let probes = self.probes::<P, B>(ops, h);
        let block = self.cells.block_mut(probes.first.block);
        let mut present = !ops.any_zero(block, probes.first.mask);
        ops.assign(block, probes.first.mask, 1);
        if let Some(second) = probes.second {
            let block = self.cells.block_mut(second.block);
            present &= !ops.any_zero(block, second.mask);
            ops.assign(block, second.mask, 1);
        }
        present
    }

    /// Item `h`'s query with `ops`'s kernels, its bits placed by `P`.
    #[inline(always)]
    fn contains_with<P: Place, B: Backend>(&self, ops: Ops<W1, B>, h: u64) -> bool {
        if P::TWO {
            // Lazily: the second half only when the first half is all set.
            let (blocks, (k1, _)) = (self.cells.block_count(), self.layout.halves(self.k));
            let cells = self.place_cells::<P, B>(ops);
            let first = hash::block_of(h, blocks);
            let mask = hash::HalfCells::<W1>::cells(&cells, h, k1);
            return !ops.any_zero(self.cells.block(first), mask)
                && hash::second_half::<W1, _>(h, blocks, self.k, &cells)
                    .is_none_or(|s| !ops.any_zero(self.cells.block(s.block), s.mask));
        }
        let probes = self.probes::<P, B>(ops, h);
        let found = !ops.any_zero(self.cells.block(probes.first.block), probes.first.mask);
        found
            && probes
                .second
                .is_none_or(|s| !ops.any_zero(self.cells.block(s.block), s.mask))
    }

    /// Empties the filter.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(4096, 5), 1).unwrap();
    /// f.insert("a");
    /// f.clear();
    /// assert!(!f.contains("a"));
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// ```
    pub fn clear(&mut self) {
        self.cells.clear();
    }

    /// The effective number of cells (bits) `m`, whole blocks.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// assert_eq!(Classic::new(ClassicParams::new(513, 5), 1).unwrap().cells(), 1024);
    /// ```
    pub fn cells(&self) -> usize {
        self.cells.cells()
    }

    /// Bits set per item (over both blocks with [`Layout::TwoBlocks`]).
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// assert_eq!(Classic::new(ClassicParams::new(512, 5), 1).unwrap().k(), 5);
    /// ```
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The layout of items' bits.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// use streambloom::Layout;
    /// let p = ClassicParams::new(4096, 5).with_layout(Layout::TwoBlocks);
    /// assert_eq!(Classic::new(p, 1).unwrap().layout(), Layout::TwoBlocks);
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The fraction of bits set.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let mut f = Classic::new(ClassicParams::new(512, 4), 1).unwrap();
    /// f.insert_hash(9);
    /// assert_eq!(f.fill_ratio(), 4.0 / 512.0);
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let cells = self.cells.cells();
        (cells - self.cells.zero_cells()) as f64 / cells as f64
    }

    /// The blocked false-positive rate expected after `n` distinct
    /// insertions in this filter's layout ([`ClassicParams::predicted_fpr`]).
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(1 << 20, 7), 1).unwrap();
    /// assert!(f.predicted_fpr(100_000) < 0.02);
    /// ```
    pub fn predicted_fpr(&self, n: u64) -> f64 {
        self.params().predicted_fpr(n)
    }

    /// The unblocked textbook rate at this size, `(1 - e^(-kn/m))^k`, for
    /// comparison.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(1 << 20, 7), 1).unwrap();
    /// assert!(f.unblocked_fpr(100_000) < f.predicted_fpr(100_000));
    /// ```
    pub fn unblocked_fpr(&self, n: u64) -> f64 {
        self.params().unblocked_fpr(n)
    }

    /// The effective parameters (`cells` rounded up to whole blocks).
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(1000, 3), 1).unwrap();
    /// assert_eq!(f.params(), ClassicParams::new(1024, 3));
    /// ```
    pub fn params(&self) -> ClassicParams {
        ClassicParams {
            cells: self.cells.cells(),
            k: self.k,
            layout: self.layout,
        }
    }

    /// Forces the kernel implementation; [`Error::Unsupported`] if this CPU
    /// lacks it.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// # use streambloom::Isa;
    /// let mut f = Classic::new(ClassicParams::new(512, 3), 1).unwrap();
    /// f.set_isa(Isa::Scalar).unwrap();
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// ```
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.cells.set_isa(isa)
    }

    /// The kernel implementation in use.
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// # use streambloom::Isa;
    /// let f = Classic::new(ClassicParams::new(512, 3), 1).unwrap();
    /// assert_eq!(f.isa(), Isa::detect());
    /// ```
    pub fn isa(&self) -> Isa {
        self.cells.isa()
    }

    /// The blocks, e.g. to write them out (and [`restore`](Self::restore)).
    ///
    /// ```
    /// # use streambloom::classic::{Classic, ClassicParams};
    /// let f = Classic::new(ClassicParams::new(1024, 3), 1).unwrap();
    /// assert_eq!(f.blocks().len(), 2);
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

/// How a hot loop computes an item's bits. Each operation runs one of two
/// instantiations, chosen once per call by [`Classic::by_words`] (a branch
/// on `k`, so predicted): each has one way to build the mask, and the mask
/// stays in registers. A mask merged from two ways in one function goes
/// through memory (word stores, then vector loads that cannot be forwarded
/// from them), which costs more than the rest of an insert.
///
/// The layout is part of the type too ([`hash::probes_fixed`]).
trait Place: Copy {
    /// Whether items use two blocks ([`Layout::TwoBlocks`]).
    const TWO: bool;
    /// The bits of item `h` (`k` of them, placed by `placement`).
    fn mask<B: Backend>(ops: Ops<W1, B>, placement: Placement, h: u64, k: u32) -> [u64; 8];
}

/// `P`'s masks with `ops`, as [`hash::probes_fixed`] takes them.
struct PlaceCells<P, B: Backend> {
    ops: Ops<W1, B>,
    placement: Placement,
    place: PhantomData<P>,
}

impl<P: Place, B: Backend> hash::HalfCells<W1> for PlaceCells<P, B> {
    #[inline(always)]
    fn cells(&self, h: u64, k: u32) -> [u64; 8] {
        P::mask(self.ops, self.placement, h, k)
    }
}

/// Split-block bits with `k <= 8`, one a word, built in vector registers
/// from the hash: [`Ops::hash_words`] over [`hash::split_block_hash`],
/// the cells of [`Placement::cells`].
#[derive(Clone, Copy)]
struct ByWords<const TWO: bool>;

impl<const TWO: bool> Place for ByWords<TWO> {
    const TWO: bool = TWO;
    #[inline(always)]
    fn mask<B: Backend>(ops: Ops<W1, B>, _: Placement, h: u64, k: u32) -> [u64; 8] {
        let (x, top, used) = hash::split_block_hash::<W1>(h, k);
        ops.hash_words(x, top, used)
    }
}

/// Any placement, cell by cell ([`Placement::cells`]).
#[derive(Clone, Copy)]
struct ByCells<const TWO: bool>;

impl<const TWO: bool> Place for ByCells<TWO> {
    const TWO: bool = TWO;
    #[inline(always)]
    fn mask<B: Backend>(_: Ops<W1, B>, placement: Placement, h: u64, k: u32) -> [u64; 8] {
        hash::placed_cells::<W1>(PLACEMENT, placement, h, k)
    }
}

/// [`Classic::insert_hash`] as one [`Body`].
struct InsertOne<'a, S, H, P> {
    filter: &'a mut Classic<S, H>,
    h: u64,
    place: PhantomData<P>,
}

impl<S: Storage, H: BuildHasher, P: Place> Body for InsertOne<'_, S, H, P> {
    type Output = bool;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> bool {
        self.filter.insert_with::<P, B>(Ops::new(backend), self.h)
    }
}

/// [`Classic::contains_hash`] as one [`Body`].
struct ContainsOne<'a, S, H, P> {
    filter: &'a Classic<S, H>,
    h: u64,
    place: PhantomData<P>,
}

impl<S: Storage, H: BuildHasher, P: Place> Body for ContainsOne<'_, S, H, P> {
    type Output = bool;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> bool {
        self.filter.contains_with::<P, B>(Ops::new(backend), self.h)
    }
}

/// [`Classic::insert_batch_hash`] as one [`Body`].
struct InsertBatch<'a, S, H, P> {
    filter: &'a mut Classic<S, H>,
    hashes: &'a [u64],
    place: PhantomData<P>,
}

impl<S: Storage, H: BuildHasher, P: Place> Body for InsertBatch<'_, S, H, P> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (ops, f, hashes) = (Ops::new(backend), self.filter, self.hashes);
        crate::filter::batch!(
            hashes.len(),
            f.cells.prefetching(),
            |i| f.prefetch_hash(P::TWO, hashes[i]),
            |i| {
                f.insert_with::<P, B>(ops, hashes[i]);
            }
        );
    }
}

/// [`Classic::contains_batch_hash`] as one [`Body`].
struct ContainsBatch<'a, S, H, P> {
    filter: &'a Classic<S, H>,
    hashes: &'a [u64],
    found: &'a mut [bool],
    place: PhantomData<P>,
}

impl<S: Storage, H: BuildHasher, P: Place> Body for ContainsBatch<'_, S, H, P> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (ops, f, hashes, found) = (Ops::new(backend), self.filter, self.hashes, self.found);
        crate::filter::batch!(
            hashes.len(),
            f.cells.prefetching(),
            |i| f.prefetch_hash(P::TWO, hashes[i]),
            |i| found[i] = f.contains_with::<P, B>(ops, hashes[i])
        );
    }
}
