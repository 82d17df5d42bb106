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
//! **No SIMD kernel.** An observation reads `k` single bits and writes at
//! most `2k`: plain byte operations, with `k ≤ 8` fixed at compile time
//! (one instantiation each) and the probe without an early exit (a
//! random-outcome branch per item). Masks for the block kernels, built bit
//! by bit, went through memory and cost more than the bits themselves:
//! 21.9 ns an item with the kernels against 12.7 ns this way (p50 of
//! `streambloom-bench latency --target reservoir-observe --isa avx2`,
//! k = 3, 16 KiB, the forced phase; Zen 3, one run each).
//! So [`set_isa`](ReservoirBloom::set_isa) changes nothing here; it is
//! kept so that code choosing an instruction set for every filter works.
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

mod bytes;
mod params;
#[cfg(test)]
mod tests;

pub use params::{DEFAULT_P_STAR, ReservoirParams, Reset};

use crate::analysis::reservoir::Model;
use crate::filter::keyed;
use crate::hash::{self, DefaultHasher, Layout, mix64};
use crate::rng::Rng;
use crate::store::{Cells, DefaultStorage, Storage};
use crate::{Block, Error, Isa, Result, W1};
use core::hash::{BuildHasher, Hash};
use streambloom_kernels::prefetch;

/// Domain separation between the hasher's outputs for keys and the seed of
/// the filter's PRNG (the hasher's hash of this constant).
const RNG_DOMAIN: u64 = 0x5253_4246_5F52_4E47;

/// Salt of the remix an item's positions in its sectors are drawn from,
/// independent of the one its block is chosen by ([`hash::block_of`]).
const POSITION_SALT: u64 = 0xA54F_F53A_5F1D_36F1;

/// Odd constant that separates the remixes of successive triples of
/// sub-filters.
const TRIPLE_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The three 21-bit fields of `x` (its top bit unused).
#[inline(always)]
pub(crate) fn fields(x: u64) -> [u64; 3] {
    const MASK: u64 = (1 << 21) - 1;
    [x & MASK, (x >> 21) & MASK, (x >> 42) & MASK]
}

/// A 21-bit field scaled to `0..n`: `⌊field·n/2^21⌋`.
#[inline(always)]
pub(crate) fn scale(field: u64, n: usize) -> usize {
    ((field * n as u64) >> 21) as usize
}

/// Calls `each(j, bit)` for sub-filter `j`'s bit of item `h` in its block,
/// `j` in `0..k`, until `each` returns `false`; returns whether it never
/// did. Bit `j` is `j·sector + ⌊x_j·sector/2^21⌋`, `x_j` one of the three
/// 21-bit fields of `mix64` of the salted hash (one remix per three
/// sub-filters; a sector has at most 512 bits, so the multiply-shift's
/// bias is below `512/2^21`, 0.02 %).
#[inline(always)]
pub(crate) fn each_bit(
    h: u64,
    k: u32,
    sector: usize,
    mut each: impl FnMut(u32, usize) -> bool,
) -> bool {
    let mut j = 0;
    while j < k {
        let x = mix64(h ^ POSITION_SALT ^ u64::from(j).wrapping_mul(TRIPLE_STEP));
        for field in fields(x) {
            if j == k {
                break;
            }
            let bit = j as usize * sector + scale(field, sector);
            if !each(j, bit) {
                return false;
            }
            j += 1;
        }
    }
    true
}

/// Bit `bit` of `block` (taken modulo 512: callers pass `bit < 512`, and
/// the reduction lets the compiler drop the bounds check).
#[inline(always)]
fn bit_of(block: &Block, bit: usize) -> bool {
    let bit = bit % Block::BITS;
    block.0[bit / 8] >> (bit % 8) & 1 == 1
}

/// Sets bit `bit` of `block` (modulo 512, as [`bit_of`]).
#[inline(always)]
fn set_bit(block: &mut Block, bit: usize) {
    let bit = bit % Block::BITS;
    block.0[bit / 8] |= 1 << (bit % 8);
}

/// Clears bit `bit` of `block` (modulo 512, as [`bit_of`]).
#[inline(always)]
fn clear_bit(block: &mut Block, bit: usize) {
    let bit = bit % Block::BITS;
    block.0[bit / 8] &= !(1 << (bit % 8));
}

/// An item's bits, one a sub-filter, visited in order of sub-filter.
trait Bits {
    /// Calls `each(j, bit)` for `j` in `0..k` until it returns `false`;
    /// returns whether it never did.
    fn each(&self, each: impl FnMut(u32, usize) -> bool) -> bool;
}

/// The bits of an item in a filter of `K` sub-filters, for `K ≤ 8`: `k`
/// and the sector fixed at compile time, the bits computed once into
/// registers (one instantiation per `K`; a run-time `k` costs about 2.5×
/// the instructions of an observation).
struct Fixed<const K: usize>([usize; K]);

impl<const K: usize> Fixed<K> {
    #[inline(always)]
    fn new(h: u64) -> Self {
        let mut bits = [0; K];
        each_bit(h, K as u32, Block::BITS / K, |j, bit| {
            bits[j as usize] = bit;
            true
        });
        Fixed(bits)
    }
}

impl<const K: usize> Bits for Fixed<K> {
    #[inline(always)]
    fn each(&self, mut each: impl FnMut(u32, usize) -> bool) -> bool {
        // A plain loop, not `Iterator::all`: its `try_fold` was left out of
        // line in the insertion, where it took half of an observation.
        for (j, &bit) in self.0.iter().enumerate() {
            if !each(j as u32, bit) {
                return false;
            }
        }
        true
    }
}

/// The bits of an item for any `k`, computed as they are visited.
struct Computed {
    h: u64,
    k: u32,
    sector: usize,
}

impl Bits for Computed {
    #[inline(always)]
    fn each(&self, each: impl FnMut(u32, usize) -> bool) -> bool {
        each_bit(self.h, self.k, self.sector, each)
    }
}

/// Runs `$f.$method(h, bits)` with the item's [`Bits`]: [`Fixed`] for
/// `k ≤ 8`, else [`Computed`].
macro_rules! with_bits {
    ($f:expr, $h:expr, $method:ident) => {{
        let (f, h) = ($f, $h);
        match f.params.k {
            1 => f.$method(h, Fixed::<1>::new(h)),
            2 => f.$method(h, Fixed::<2>::new(h)),
            3 => f.$method(h, Fixed::<3>::new(h)),
            4 => f.$method(h, Fixed::<4>::new(h)),
            5 => f.$method(h, Fixed::<5>::new(h)),
            6 => f.$method(h, Fixed::<6>::new(h)),
            7 => f.$method(h, Fixed::<7>::new(h)),
            8 => f.$method(h, Fixed::<8>::new(h)),
            k => {
                let sector = f.sector;
                f.$method(h, Computed { h, k, sector })
            }
        }
    }};
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
    #[doc = crate::filter::seed_doc!()]
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
        Self::restore(params, crate::store::zeroed(blocks)?, hasher, 0)
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
        self.observe_one(h)
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
        self.contains_one(h)
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
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(hashes[i]),
            |i| dup[i] = self.observe_one(hashes[i])
        );
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
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(hashes[i]),
            |i| found[i] = self.contains_one(hashes[i])
        );
        Ok(())
    }

    /// Whether items use a second block.
    #[inline(always)]
    fn two(&self) -> bool {
        self.params.layout == Layout::TwoBlocks && self.params.k > 1
    }

    /// The blocks of item `h` (the second equal to the first in one
    /// block).
    #[inline(always)]
    fn place(&self, h: u64) -> Place {
        let blocks = self.cells.block_count();
        let a = hash::block_of(h, blocks);
        Place {
            a,
            b: if self.two() {
                hash::second_block_of(h, blocks)
            } else {
                a
            },
            k1: self.params.layout.halves(self.params.k).0,
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

    /// Whether every one of `bits` is set.
    #[inline(always)]
    fn present(&self, bits: &impl Bits, place: &Place) -> bool {
        let (a, b) = (self.cells.block(place.a), self.cells.block(place.b));
        // Every bit read, no early exit: one predictable loop.
        let mut all = true;
        bits.each(|j, bit| {
            all &= bit_of(if j < place.k1 { a } else { b }, bit);
            true
        });
        all
    }

    /// Item `h`'s query.
    #[inline(always)]
    fn contains_one(&self, h: u64) -> bool {
        with_bits!(self, h, contains_bits)
    }

    /// Item `h`'s query, its bits `bits`.
    #[inline(always)]
    fn contains_bits(&self, h: u64, bits: impl Bits) -> bool {
        self.present(&bits, &self.place(h))
    }

    /// Item `h`'s observation.
    #[inline(always)]
    fn observe_one(&mut self, h: u64) -> bool {
        with_bits!(self, h, observe_bits)
    }

    /// Item `h`'s observation, its bits `bits`: probe, decide, insert
    /// (module docs).
    #[inline(always)]
    fn observe_bits(&mut self, h: u64, bits: impl Bits) -> bool {
        let place = self.place(h);
        let dup = self.present(&bits, &place);
        let i = self.stream.position.saturating_add(1);
        self.stream.position = i;
        let s = self.model.s;
        let insert = i <= s || (!dup && i >= self.model.forced_from) || self.rng.below(i) < s;
        if insert {
            let clear = i > s || self.params.reset_during_fill;
            self.insert(&bits, &place, clear);
            self.stream.insertions += 1;
        }
        dup
    }

    /// Step 3: clear one random position (if `clear`) in each sub-filter,
    /// in the item's own block ([`Reset::OwnBlock`]: the positions of three
    /// sub-filters from the [`fields`] of one PRNG draw) or anywhere
    /// ([`Reset::Uniform`]: a block, then a position), then set the item's
    /// bits. Sub-filters are disjoint, so every clear before every set is
    /// the same as sub-filter by sub-filter; the PRNG is drawn in order of
    /// sub-filter either way. Two short passes (the clears, then the
    /// sets), each inlined: one pass doing both was a call per bit.
    #[inline(always)]
    fn insert(&mut self, bits: &impl Bits, place: &Place, clear: bool) {
        let sector = self.sector;
        let own = |j: u32| if j < place.k1 { place.a } else { place.b };
        if clear {
            let rng = &mut self.rng;
            let cells = self.cells.blocks_mut();
            match self.params.reset {
                Reset::OwnBlock => {
                    let mut draw = 0u64;
                    bits.each(|j, _| {
                        if j % 3 == 0 {
                            draw = rng.next_u64();
                        }
                        let pos = j as usize * sector + scale(fields(draw)[j as usize % 3], sector);
                        clear_bit(&mut cells[own(j)], pos);
                        true
                    });
                }
                Reset::Uniform => {
                    let blocks = cells.len() as u64;
                    bits.each(|j, _| {
                        let block = rng.below(blocks) as usize;
                        let pos = j as usize * sector + scale(fields(rng.next_u64())[0], sector);
                        clear_bit(&mut cells[block], pos);
                        true
                    });
                }
            }
        }
        let cells = self.cells.blocks_mut();
        bits.each(|j, bit| {
            set_bit(&mut cells[own(j)], bit);
            true
        });
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
    /// lacks it. This filter runs no kernel (module docs), so its answers
    /// and speed do not change.
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

/// An item's blocks.
struct Place {
    a: usize,
    b: usize,
    /// Sub-filters in the first block.
    k1: u32,
}
