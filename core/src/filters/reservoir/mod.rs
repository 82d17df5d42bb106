//! The Reservoir-sampling Bloom filter, RSBF (Dutta, Bhattacharjee and
//! Narang, *Towards "Intelligent Compression" in Streams: A Biased
//! Reservoir Sampling based Bloom Filter Approach*, EDBT 2012, §4):
//! duplicate detection over an endless stream in `k` one-bit sub-filters,
//! which insert items by reservoir sampling.
//!
//! # The algorithm (§4, the prose; the choices are the digest's R1–R8)
//!
//! For the `i`-th item of the stream (`i` counts every item, repeats
//! included):
//!
//! 1. **Probe**: the item is reported a duplicate when its bit is set in
//!    every sub-filter.
//! 2. **Decide**: the first `s` items are inserted (the fill phase); after
//!    them an item is inserted with probability `s/i` (reservoir
//!    sampling); and from the first `i` with `s/i ≤ p*` on, every item
//!    *reported distinct* is inserted as well (a reported duplicate still
//!    goes through the `s/i` draw, line 126: "the reservoir sampling still
//!    operates on the other elements").
//! 3. **Insert**: in each sub-filter, clear one uniformly random
//!    *position* (it may already be 0), then set the item's bit. This is
//!    the model of Theorem 5.1 (eqs. 5.19–5.21) and of the FPR and FNR
//!    derivations. Algorithm 1's pseudo-code instead resets "a bit which
//!    is set to 1", and only on forced insertions: its reservoir phase
//!    never clears, fills each sub-filter to about 99 % and cannot give
//!    the paper's tables, so this crate follows the prose (R1). Clearing
//!    before setting keeps the item's own bits (R6). Whether the fill
//!    phase clears too is [`ReservoirParams::reset_during_fill`] (on by
//!    default: the prose says "whenever an element is inserted", and
//!    Table 2's last row needs it, R2).
//!
//! # Layout
//!
//! A sub-filter is not a separate array: each 64-byte block is cut into
//! `k` sectors of `⌊512/k⌋` bits, and sub-filter `j` is sector `j` of every
//! block. An item's `k` bits are in one block (one cache line), chosen by
//! its hash, and bit `j` is a hashed position of sector `j`
//! ([`Layout::TwoBlocks`] splits the sub-filters between two blocks). The
//! clear of step 3 falls in the item's own block by default
//! ([`Reset::OwnBlock`]): each bit is still cleared with probability `1/s`
//! per insertion, as in the model, and the insertion stays in one line;
//! [`Reset::Uniform`] draws the paper's uniform position over the whole
//! sub-filter instead.
//!
//! # What it guarantees
//!
//! False positives *and* false negatives. About half the bits end up set
//! whatever the stream ([`crate::analysis::reservoir`]), so a fresh item
//! is a false positive with probability about `2^−k` once the filter has
//! settled ([`ReservoirParams::long_run_fpr`]); the paper's threshold rate
//! `FPR_t` only chooses `k` ([`ReservoirParams::plan`]). Since insertions
//! thin out as `s/i`, the filter changes less and less: it keeps a sample
//! of the stream's past, which the forced insertions keep fresh.
//!
//! ```
//! use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
//! let mut f = ReservoirBloom::plan(1 << 16, 0.1, 7)?;
//! assert_eq!(f.k(), 3);
//! assert!(!f.observe("a")); // new
//! assert!(f.observe("a")); // a duplicate (inserted: the fill phase)
//! assert_eq!(f.position(), 2);
//! # Ok::<(), streambloom::Error>(())
//! ```

mod params;
#[cfg(test)]
mod tests;

pub use params::{DEFAULT_P_STAR, ReservoirParams, Reset};

use crate::analysis::reservoir::Model;
use crate::filter::keyed;
use crate::hash::{self, DefaultHasher, Layout, mix64};
use crate::rng::Rng;
use crate::store::{self, Cells, DefaultStorage, Storage};
use crate::{Block, Error, Isa, Result, W1};
use core::hash::{BuildHasher, Hash};
use streambloom_kernels::{Backend, Body, Ops, prefetch, set_cell};

/// Domain separation between the hasher's outputs for keys and the seed of
/// the filter's PRNG (the hasher's hash of this constant).
const RNG_DOMAIN: u64 = 0x5253_4246_5F52_4E47;

/// Salt of the remix an item's positions in its sectors are drawn from,
/// independent of the one its block is chosen by ([`hash::block_of`]).
const POSITION_SALT: u64 = 0xA54F_F53A_5F1D_36F1;

/// Odd constant that separates the remixes of successive pairs of
/// sub-filters.
const PAIR_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The bits of item `h` as two block masks: sub-filters `0..k1` in the
/// first, `k1..k` in the second. Bit `j` is `j·sector + ⌊x_j·sector/2^32⌋`,
/// `x_j` a 32-bit half of `mix64` of the salted hash (one remix per two
/// sub-filters).
#[inline(always)]
pub(crate) fn item_masks(h: u64, k: u32, k1: u32, sector: usize) -> ([u64; 8], [u64; 8]) {
    let (mut first, mut second) = ([0u64; 8], [0u64; 8]);
    let mut j = 0;
    while j < k {
        let x = mix64(h ^ POSITION_SALT ^ u64::from(j).wrapping_mul(PAIR_STEP));
        for half in [x & 0xFFFF_FFFF, x >> 32] {
            if j == k {
                break;
            }
            let bit = j as usize * sector + ((half * sector as u64) >> 32) as usize;
            let mask = if j < k1 { &mut first } else { &mut second };
            mask[bit / 64] |= 1 << (bit % 64);
            j += 1;
        }
    }
    (first, second)
}

/// Runs the filter's process: the stream position and the counters its
/// decisions read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stream {
    /// Items observed, `i` of the last one.
    position: u64,
    /// Items inserted.
    insertions: u64,
}

/// A Reservoir-sampling Bloom filter in storage `S`, hashing with `H` (see
/// the [module docs](self)).
#[derive(Clone)]
pub struct ReservoirBloom<S = DefaultStorage, H = DefaultHasher> {
    cells: Cells<W1, S>,
    hasher: H,
    rng: Rng,
    params: ReservoirParams,
    /// Bits of a sector, `⌊512/k⌋`.
    sector: usize,
    /// `s`, `p*`'s first position and the rest of the process's constants.
    model: Model,
    stream: Stream,
}

impl<S: Storage, H> core::fmt::Debug for ReservoirBloom<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReservoirBloom")
            .field("params", &self.params)
            .field("s", &self.model.s)
            .field("position", &self.stream.position)
            .field("insertions", &self.stream.insertions)
            .field("cells", &self.cells)
            .finish_non_exhaustive()
    }
}

/// Two filters are equal when their parameters, bits and stream positions
/// are (hashers, PRNGs and insertion counts are not compared).
impl<S: Storage, H> PartialEq for ReservoirBloom<S, H> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.stream.position == other.stream.position
            && self.cells.blocks() == other.cells.blocks()
    }
}

#[cfg(feature = "alloc")]
impl ReservoirBloom {
    /// An empty filter in owned memory, hashing with the default hasher
    /// seeded from `seed` ([`hash::seeded_hasher`]); the PRNG of its
    /// random choices is seeded from the hasher.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// assert_eq!(f.sub_filter_bits(), 170 * 8);
    /// assert!(ReservoirBloom::new(ReservoirParams::new(4096, 0), 1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(params: ReservoirParams, seed: u64) -> Result<Self> {
        Self::with_hasher(params, hash::seeded_hasher(seed))
    }

    /// A filter planned the paper's way for `memory_bits` and threshold
    /// rate `threshold_fpr` ([`ReservoirParams::plan`]), seeded from
    /// `seed`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirBloom;
    /// let f = ReservoirBloom::plan(1 << 20, 0.01, 7)?;
    /// assert_eq!(f.k(), 6);
    /// assert!(ReservoirBloom::plan(1 << 20, 0.0, 7).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan(memory_bits: usize, threshold_fpr: f64, seed: u64) -> Result<Self> {
        Self::new(ReservoirParams::plan(memory_bits, threshold_fpr)?, seed)
    }
}

#[cfg(feature = "std")]
impl ReservoirBloom {
    /// An empty filter in owned memory with random hash seeds from the
    /// operating system: the choice for keys chosen by others.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new_random(ReservoirParams::new(4096, 3))?;
    /// f.observe("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new_random(params: ReservoirParams) -> Result<Self> {
        Self::with_hasher(params, hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<H: BuildHasher> ReservoirBloom<DefaultStorage, H> {
    /// An empty filter in owned memory hashing with `hasher`, any
    /// [`BuildHasher`].
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let hasher = std::collections::hash_map::RandomState::new();
    /// let mut f = ReservoirBloom::with_hasher(ReservoirParams::new(4096, 3), hasher)?;
    /// f.observe("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_hasher(params: ReservoirParams, hasher: H) -> Result<Self> {
        let blocks = params.blocks()?;
        Self::restore(params, store::zeroed(blocks)?, hasher, 0)
    }
}

impl<S: Storage, H: BuildHasher> ReservoirBloom<S, H> {
    /// An empty filter over caller-provided storage of exactly
    /// [`ReservoirParams::blocks`] blocks, which it zeroes; no allocator
    /// needed.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// use streambloom::{hash, Block};
    /// let mut buf = [Block::ZERO; 4];
    /// let mut f = ReservoirBloom::with_storage(ReservoirParams::new(2048, 3), &mut buf[..], hash::seeded_hasher(1))?;
    /// assert!(!f.observe_hash(42));
    /// assert!(f.contains_hash(42));
    /// let mut small = [Block::ZERO; 1];
    /// assert!(ReservoirBloom::with_storage(ReservoirParams::new(2048, 3), &mut small[..], hash::seeded_hasher(1)).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_storage(params: ReservoirParams, storage: S, hasher: H) -> Result<Self> {
        let mut f = Self::restore(params, storage, hasher, 0)?;
        f.clear();
        Ok(f)
    }

    /// A filter **adopting** `storage`'s bits as they are, at stream
    /// position `position` (the items a saved filter had observed: the
    /// insertion probability `s/i` continues from there). The PRNG restarts
    /// from the hasher's seed and [`insertions`](Self::insertions) from 0.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// use streambloom::hash;
    /// let params = ReservoirParams::new(4096, 3);
    /// let mut f = ReservoirBloom::with_hasher(params, hash::seeded_hasher(1))?;
    /// f.observe("kept");
    /// let g = ReservoirBloom::restore(params, f.blocks().to_vec(), hash::seeded_hasher(1), f.position())?;
    /// assert!(g.contains("kept"));
    /// assert_eq!(g.position(), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn restore(params: ReservoirParams, storage: S, hasher: H, position: u64) -> Result<Self> {
        let blocks = params.blocks()?;
        Ok(ReservoirBloom {
            cells: Cells::new(storage, blocks)?,
            rng: Rng::new(hasher.hash_one(RNG_DOMAIN)),
            hasher,
            params,
            sector: params.sector_bits()?,
            model: params.model()?,
            stream: Stream {
                position,
                insertions: 0,
            },
        })
    }

    /// The hash of `key` that the `*_hash` methods take: the keyed forms
    /// are exactly `f.observe_hash(f.hash(key))` and so on.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe_hash(f.hash("a"));
    /// assert!(f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    keyed! {
        /// Observes `key`, the next item of the stream: returns whether it
        /// was reported a duplicate (its bit set in every sub-filter), then
        /// inserts it or not (see the [module docs](self)).
        ///
        /// ```
        /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
        /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
        /// assert!(!f.observe(&12u64));
        /// assert!(f.observe(&12u64));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn observe(&mut self, key) -> bool = observe_hash;

        /// Whether `key` would be reported a duplicate now, without
        /// observing it (the stream does not advance).
        ///
        /// ```
        /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
        /// let f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
        /// assert!(!f.contains("nothing"));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn contains(&self, key) -> bool = contains_hash;

        /// [`observe`](Self::observe) for each key in order: `dup[i]` is
        /// the answer for `keys[i]`; an error (nothing observed) if the
        /// slices differ in length.
        ///
        /// ```
        /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
        /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
        /// let mut dup = [false; 3];
        /// f.observe_batch(&["a", "b", "a"], &mut dup)?;
        /// assert_eq!(dup, [false, false, true]);
        /// assert!(f.observe_batch(&["a"], &mut dup).is_err());
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn observe_batch(&mut self, keys, dup: &mut [bool]) = observe_batch_hash;

        /// [`contains`](Self::contains) for each key: `found[i]` is the
        /// answer for `keys[i]`; an error if the slices differ in length.
        ///
        /// ```
        /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
        /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
        /// f.observe("a");
        /// let mut found = [false; 2];
        /// f.contains_batch(&["a", "z"], &mut found)?;
        /// assert_eq!(found, [true, false]);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn contains_batch(&self, keys, found: &mut [bool]) = contains_batch_hash;
    }

    /// [`observe`](Self::observe) for a key already hashed to `h` (any
    /// `u64`: placement remixes it).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// assert!(!f.observe_hash(12));
    /// assert!(f.observe_hash(12));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn observe_hash(&mut self, h: u64) -> bool {
        self.cells.engine().run(ObserveOne { filter: self, h })
    }

    /// [`contains`](Self::contains) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// assert!(!f.contains_hash(12));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, h: u64) -> bool {
        self.cells.engine().run(ContainsOne { filter: self, h })
    }

    /// [`observe_batch`](Self::observe_batch) for keys already hashed; out
    /// of cache the blocks of the items
    /// [`LOOKAHEAD`](crate::store::LOOKAHEAD) places ahead are prefetched.
    /// The same answers and state as the items one by one.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// let mut dup = [false; 3];
    /// f.observe_batch_hash(&[1, 2, 1], &mut dup)?;
    /// assert_eq!(dup, [false, false, true]);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn observe_batch_hash(&mut self, hashes: &[u64], dup: &mut [bool]) -> Result<()> {
        Error::check_len("dup", hashes.len(), dup.len())?;
        self.cells.engine().run(ObserveBatch {
            filter: self,
            hashes,
            dup,
        });
        Ok(())
    }

    /// [`contains_batch`](Self::contains_batch) for keys already hashed.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe_hash(1);
    /// let mut found = [false; 2];
    /// f.contains_batch_hash(&[1, 2], &mut found)?;
    /// assert_eq!(found, [true, false]);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn contains_batch_hash(&self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        Error::check_len("found", hashes.len(), found.len())?;
        self.cells.engine().run(ContainsBatch {
            filter: self,
            hashes,
            found,
        });
        Ok(())
    }

    /// Whether items use a second block.
    #[inline(always)]
    fn two(&self) -> bool {
        self.params.layout == Layout::TwoBlocks && self.params.k > 1
    }

    /// The blocks of item `h` (the second equal to the first in one
    /// block) and its bits in each.
    #[inline(always)]
    fn place(&self, h: u64) -> Place {
        let blocks = self.cells.block_count();
        let k = self.params.k;
        let (k1, _) = self.params.layout.halves(k);
        let (first, second) = item_masks(h, k, k1, self.sector);
        let a = hash::block_of(h, blocks);
        Place {
            a,
            b: if self.two() {
                hash::second_block_of(h, blocks)
            } else {
                a
            },
            first,
            second,
            k1,
        }
    }

    /// Prefetches the blocks of item `h`.
    #[inline(always)]
    fn prefetch_hash(&self, h: u64) {
        let blocks = self.cells.block_count();
        prefetch(self.cells.block(hash::block_of(h, blocks)));
        if self.two() {
            prefetch(self.cells.block(hash::second_block_of(h, blocks)));
        }
    }

    /// Whether every bit of `place` is set, with `ops`'s kernels.
    #[inline(always)]
    fn present<B: Backend>(&self, ops: Ops<W1, B>, place: &Place) -> bool {
        !ops.any_zero(self.cells.block(place.a), place.first)
            && (!self.two() || !ops.any_zero(self.cells.block(place.b), place.second))
    }

    /// Item `h`'s query.
    #[inline(always)]
    fn contains_with<B: Backend>(&self, ops: Ops<W1, B>, h: u64) -> bool {
        self.present(ops, &self.place(h))
    }

    /// Item `h`'s observation: probe, decide, insert (module docs).
    #[inline(always)]
    fn observe_with<B: Backend>(&mut self, ops: Ops<W1, B>, h: u64) -> bool {
        let place = self.place(h);
        let dup = self.present(ops, &place);
        let i = self.stream.position.saturating_add(1);
        self.stream.position = i;
        let s = self.model.s;
        let insert = i <= s || (!dup && i >= self.model.forced_from) || self.rng.below(i) < s;
        if insert {
            if i > s || self.params.reset_during_fill {
                self.clear_positions(ops, &place);
            }
            ops.assign(self.cells.block_mut(place.a), place.first, 1);
            if self.two() {
                ops.assign(self.cells.block_mut(place.b), place.second, 1);
            }
            self.stream.insertions += 1;
        }
        dup
    }

    /// Step 3's clears: one random position in each sub-filter, in the
    /// item's own blocks ([`Reset::OwnBlock`]) or anywhere
    /// ([`Reset::Uniform`]).
    #[inline(always)]
    fn clear_positions<B: Backend>(&mut self, ops: Ops<W1, B>, place: &Place) {
        let sector = self.sector;
        match self.params.reset {
            Reset::OwnBlock => {
                let (mut first, mut second) = ([0u64; 8], [0u64; 8]);
                for j in 0..self.params.k as usize {
                    let bit = j * sector + self.rng.below(sector as u64) as usize;
                    let mask = if j < place.k1 as usize {
                        &mut first
                    } else {
                        &mut second
                    };
                    mask[bit / 64] |= 1 << (bit % 64);
                }
                ops.assign(self.cells.block_mut(place.a), first, 0);
                if self.two() {
                    ops.assign(self.cells.block_mut(place.b), second, 0);
                }
            }
            Reset::Uniform => {
                let blocks = self.cells.block_count() as u64;
                for j in 0..self.params.k as usize {
                    let block = self.rng.below(blocks) as usize;
                    let bit = j * sector + self.rng.below(sector as u64) as usize;
                    set_cell::<W1>(self.cells.block_mut(block), bit, 0);
                }
            }
        }
    }

    /// Empties the filter and restarts the stream (position and insertion
    /// count 0; the PRNG continues).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe("a");
    /// f.clear();
    /// assert!(!f.contains("a"));
    /// assert_eq!((f.position(), f.insertions(), f.ones()), (0, 0, 0));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.cells.clear();
        self.stream = Stream {
            position: 0,
            insertions: 0,
        };
    }

    /// The parameters.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let p = ReservoirParams::new(4096, 3);
    /// assert_eq!(*ReservoirBloom::new(p, 1)?.params(), p);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn params(&self) -> &ReservoirParams {
        &self.params
    }

    /// Sub-filters, the bits an item sets.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// assert_eq!(ReservoirBloom::new(ReservoirParams::new(4096, 5), 1)?.k(), 5);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn k(&self) -> u32 {
        self.params.k
    }

    /// Bits of each sub-filter, `s` ([`ReservoirParams::sub_filter_bits`]).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// assert_eq!(ReservoirBloom::new(ReservoirParams::new(4096, 4), 1)?.sub_filter_bits(), 1024);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn sub_filter_bits(&self) -> u64 {
        self.model.s
    }

    /// Items observed: the position `i` of the last one.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe_batch(&[1, 2, 3], &mut [false; 3])?;
    /// assert_eq!(f.position(), 3);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn position(&self) -> u64 {
        self.stream.position
    }

    /// Items inserted since construction, [`clear`](Self::clear) or
    /// [`restore`](Self::restore).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe("a"); // the fill phase inserts every item
    /// assert_eq!(f.insertions(), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn insertions(&self) -> u64 {
        self.stream.insertions
    }

    /// Whether the stream has reached the threshold (`s/i ≤ p*`), where
    /// every item reported distinct is inserted.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(512, 4).with_p_star(1.0), 1)?;
    /// assert!(!f.forcing());
    /// for i in 0..128u32 { f.observe(&i); }
    /// assert!(f.forcing()); // s = 128 items: s/i = 1 ≤ p*
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn forcing(&self) -> bool {
        self.stream.position >= self.model.forced_from
    }

    /// Bits set over the sub-filters (the paper's "number of ones", whose
    /// change between checkpoints is its convergence measure, §6).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.observe("a");
    /// assert_eq!(f.ones(), 3);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn ones(&self) -> u64 {
        // Only the sectors' bits: a restored block may carry others.
        let used = self.params.k as usize * self.sector;
        let mut mask = [0u64; 8];
        for (w, m) in mask.iter_mut().enumerate() {
            let lo = w * 64;
            *m = match used.saturating_sub(lo) {
                0 => 0,
                n if n >= 64 => u64::MAX,
                n => (1u64 << n) - 1,
            };
        }
        self.cells
            .blocks()
            .iter()
            .map(|b| {
                b.0.chunks_exact(8)
                    .zip(mask)
                    .map(|(w, m)| {
                        let word = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
                        u64::from((word & m).count_ones())
                    })
                    .sum::<u64>()
            })
            .sum()
    }

    /// The fraction of the sub-filters' bits that are set.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 4), 1)?;
    /// f.observe("a");
    /// assert_eq!(f.ones_fraction(), 4.0 / 4096.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn ones_fraction(&self) -> f64 {
        self.ones() as f64 / (self.model.s as f64 * f64::from(self.params.k))
    }

    /// The analysis's model of this filter
    /// ([`ReservoirParams::model`]): the rate a fresh item meets after
    /// `m` distinct items is `f.model().fpr_after(m)`.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let f = ReservoirBloom::new(ReservoirParams::new(1 << 16, 3), 1)?;
    /// let settled = f.model().fpr_after(60 * f.sub_filter_bits()); // p* = 0.03: forced from 33.3 s
    /// assert!((settled - f.params().long_run_fpr()?).abs() < 1e-3);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn model(&self) -> Model {
        self.model
    }

    /// The blocks, e.g. to write them out (and [`restore`](Self::restore)).
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// assert_eq!(ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?.blocks().len(), 8);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }

    /// Forces the kernel implementation; [`Error::Unsupported`] if this CPU
    /// lacks it.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// # use streambloom::Isa;
    /// let mut f = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
    /// f.set_isa(Isa::Scalar)?;
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.cells.set_isa(isa)
    }

    /// The kernel implementation in use.
    ///
    /// ```
    /// # use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// # use streambloom::Isa;
    /// assert_eq!(ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?.isa(), Isa::detect());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.cells.isa()
    }
}

/// An item's blocks and its bits in each.
struct Place {
    a: usize,
    b: usize,
    first: [u64; 8],
    second: [u64; 8],
    /// Sub-filters in the first block.
    k1: u32,
}

/// [`ReservoirBloom::observe_hash`] as one [`Body`].
struct ObserveOne<'a, S, H> {
    filter: &'a mut ReservoirBloom<S, H>,
    h: u64,
}

impl<S: Storage, H: BuildHasher> Body for ObserveOne<'_, S, H> {
    type Output = bool;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> bool {
        self.filter.observe_with(Ops::new(backend), self.h)
    }
}

/// [`ReservoirBloom::contains_hash`] as one [`Body`].
struct ContainsOne<'a, S, H> {
    filter: &'a ReservoirBloom<S, H>,
    h: u64,
}

impl<S: Storage, H: BuildHasher> Body for ContainsOne<'_, S, H> {
    type Output = bool;
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) -> bool {
        self.filter.contains_with(Ops::new(backend), self.h)
    }
}

/// [`ReservoirBloom::observe_batch_hash`] as one [`Body`].
struct ObserveBatch<'a, S, H> {
    filter: &'a mut ReservoirBloom<S, H>,
    hashes: &'a [u64],
    dup: &'a mut [bool],
}

impl<S: Storage, H: BuildHasher> Body for ObserveBatch<'_, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (ops, f, hashes, dup) = (Ops::new(backend), self.filter, self.hashes, self.dup);
        crate::filter::batch!(
            hashes.len(),
            f.cells.prefetching(),
            |i| f.prefetch_hash(hashes[i]),
            |i| dup[i] = f.observe_with(ops, hashes[i])
        );
    }
}

/// [`ReservoirBloom::contains_batch_hash`] as one [`Body`].
struct ContainsBatch<'a, S, H> {
    filter: &'a ReservoirBloom<S, H>,
    hashes: &'a [u64],
    found: &'a mut [bool],
}

impl<S: Storage, H: BuildHasher> Body for ContainsBatch<'_, S, H> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        let (ops, f, hashes, found) = (Ops::new(backend), self.filter, self.hashes, self.found);
        crate::filter::batch!(
            hashes.len(),
            f.cells.prefetching(),
            |i| f.prefetch_hash(hashes[i]),
            |i| found[i] = f.contains_with(ops, hashes[i])
        );
    }
}
