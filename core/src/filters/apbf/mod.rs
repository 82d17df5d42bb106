//! The Age-Partitioned Bloom Filter (Shtul, Baquero & Almeida,
//! *Age-Partitioned Bloom Filters*, arXiv 2001.03147, 2020; read beside
//! the public implementation `CrowdStrike/apbf`): duplicate detection over
//! a sliding window with no false negatives inside it.
//!
//! `k + l` one-bit slices form a ring. An insertion sets one bit, its own
//! hash's, in each of the `k` newest slices; every `g` insertions (a
//! generation) the oldest slice is cleared and becomes the newest; a query
//! reports present when some `k` consecutive slices all have the key's
//! bit set, scanning from the newest.
//!
//! # Guarantees
//!
//! - **No false negatives in the window**: an item set the `k` slices
//!   that were newest at its generation; after `j <= l` shifts they are
//!   the slices `j..j+k`, all still in the ring, so the last `l·g`
//!   insertions (and the current generation's, up to `(l+1)·g`) are
//!   always found ([`ApbfParams::window`]).
//! - **Forgetting**: after `l + 1` shifts the item's newest slice has been
//!   cleared; it is found afterwards only as a false positive (or through
//!   bits set by others), so older items fade out.
//! - **False positives** at [`Apbf::predicted_fpr`]: the probability of a
//!   run of `k` set bits among `k + l` slices with their fill ratios
//!   (derived in [`crate::analysis::apbf`]); [`Apbf::current_fpr`] is the
//!   same with the slices' measured fills.
//!
//! # Layout
//!
//! Slice-major: slice `s` is its own run of whole 512-bit blocks
//! ([`ApbfParams::effective_slice_bits`]), and an item's bit in slice `s`
//! is an independent uniform position in it (a remix of double hashing's
//! `h1 + s·h2`, indexed by the slice's place in memory, so a slice's bits
//! stay put as the ring turns; plain double hashing was not enough: keys
//! close in `(h1, h2)` shared whole runs of slices, and small slices
//! measured up to 55 times the planned rate). This is the paper's plain
//! APBF: the bits of different slices are independent, as the rate's
//! derivation assumes, and a slice clears by zeroing its blocks. It costs
//! `k` cache lines an insertion. A query skips, as the paper's does: it
//! probes the last slice of a candidate run of `k` first and, on a clear
//! bit, moves the run past it, so an absent key whose bits are mostly
//! clear costs about `(k + l) / k` probes rather than `k + l` (the
//! `CrowdStrike/apbf` query probes slice after slice), and a key of the
//! newest generations `k`. The paper's
//! *Age-Partitioned Blocked Bloom Filter* puts an item's bits in one line
//! for fewer misses, at a rate the blocks' varying loads raise; that
//! variant is not built here.
//!
//! # Parameters
//!
//! [`ApbfParams`]: `k`, `l`, `g` and `slice_bits`; [`ApbfParams::new`]
//! takes the paper's slice size `⌈k·g / ln 2⌉`, and [`ApbfParams::plan`]
//! picks all four for a window and a target rate.
//!
//! ```
//! use streambloom::apbf::{Apbf, ApbfParams};
//! let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 7).unwrap();
//! for i in 0..1000u64 {
//!     f.insert(&i);
//! }
//! // The last l·g = 300 are always found.
//! assert!((700..1000u64).all(|i| f.contains(&i)));
//! let planned = Apbf::plan(10_000, 0.01, 7).unwrap();
//! assert!(planned.params().window() >= 10_000);
//! ```

#[cfg(test)]
mod tests;

mod bytes;
mod params;

pub use params::{ApbfParams, PLAN_MAX_L};

use crate::analysis::apbf::run_probability;
use crate::filter::keyed;
use crate::hash::{self, DefaultHasher};
use crate::store::{Cells, DefaultStorage, Storage};
use crate::{Block, Error, Result, W1, Width};
use core::hash::{BuildHasher, Hash};
use streambloom_kernels::prefetch;

/// Bits per block.
const B: usize = W1::CELLS;

/// Where the ring stands: the newest slice's place in memory and the
/// insertions of the current generation; what [`Apbf::restore`] needs
/// beside the blocks.
///
/// ```
/// use streambloom::apbf::{Apbf, ApbfParams, Ring};
/// let mut f = Apbf::new(ApbfParams::new(2, 2, 3), 1).unwrap();
/// assert_eq!(f.ring(), Ring { newest: 0, count: 0 });
/// for i in 0..4u64 {
///     f.insert(&i);
/// }
/// // The fourth insertion began a generation in the slice before 0.
/// assert_eq!(f.ring(), Ring { newest: 3, count: 1 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ring {
    /// The newest slice, `0..k + l`, counted in memory order.
    pub newest: u32,
    /// Insertions in the current generation, `0..=g`.
    pub count: u64,
}

/// An Age-Partitioned Bloom Filter in storage `S`, hashing with `H` (see
/// the [module docs](self)).
#[derive(Clone)]
pub struct Apbf<S = DefaultStorage, H = DefaultHasher> {
    cells: Cells<W1, S>,
    hasher: H,
    params: ApbfParams,
    /// `k + l`.
    slices: usize,
    /// Blocks per slice.
    slice_blocks: usize,
    ring: Ring,
}

impl<S: Storage, H> core::fmt::Debug for Apbf<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Apbf")
            .field("params", &self.params)
            .field("ring", &self.ring)
            .field("cells", &self.cells)
            .finish_non_exhaustive()
    }
}

/// Two filters are equal when they have the same parameters, ring and
/// bits (their hashers are not compared: build both with the same seed).
impl<S: Storage, H> PartialEq for Apbf<S, H> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.ring == other.ring
            && self.cells.blocks() == other.cells.blocks()
    }
}

#[cfg(feature = "alloc")]
impl Apbf {
    /// An empty filter in owned memory, hashing with the default hasher
    /// seeded from `seed` ([`hash::seeded_hasher`]).
    ///
    #[doc = crate::filter::seed_doc!()]
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// let f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// assert_eq!(f.blocks().len(), 7 * 2);
    /// assert!(Apbf::new(ApbfParams::new(0, 3, 100), 1).is_err());
    /// ```
    pub fn new(params: ApbfParams, seed: u64) -> Result<Self> {
        Self::with_hasher(params, hash::seeded_hasher(seed))
    }

    /// The filter of least memory for a `window` at a steady-state rate
    /// of at most `target_fpr` ([`ApbfParams::plan`]), seeded from `seed`.
    ///
    /// ```
    /// use streambloom::apbf::Apbf;
    /// let f = Apbf::plan(5_000, 0.001, 9).unwrap();
    /// assert!(f.params().steady_fpr() <= 0.001);
    /// assert!(Apbf::plan(5_000, 0.0, 9).is_err());
    /// ```
    pub fn plan(window: u64, target_fpr: f64, seed: u64) -> Result<Self> {
        Self::new(ApbfParams::plan(window, target_fpr)?, seed)
    }
}

#[cfg(feature = "std")]
impl Apbf {
    /// An empty filter in owned memory with random hash seeds from the
    /// operating system: the choice for keys chosen by others.
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new_random(ApbfParams::new(4, 3, 100)).unwrap();
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// ```
    pub fn new_random(params: ApbfParams) -> Result<Self> {
        Self::with_hasher(params, hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<H: BuildHasher> Apbf<DefaultStorage, H> {
    /// An empty filter in owned memory hashing with `hasher`, any
    /// [`BuildHasher`].
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// let hasher = std::collections::hash_map::RandomState::new();
    /// let mut f = Apbf::with_hasher(ApbfParams::new(4, 3, 100), hasher).unwrap();
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// ```
    pub fn with_hasher(params: ApbfParams, hasher: H) -> Result<Self> {
        let blocks = params.blocks()?;
        Self::restore(
            params,
            crate::store::zeroed(blocks)?,
            hasher,
            Ring::default(),
        )
    }
}

impl<S: Storage, H: BuildHasher> Apbf<S, H> {
    /// An empty filter over caller-provided storage of exactly
    /// [`ApbfParams::blocks`] blocks, which it zeroes; no allocator needed.
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// use streambloom::{hash, Block, Error};
    /// let params = ApbfParams::new(2, 2, 100);
    /// let mut buf = [Block::ZERO; 4];
    /// let mut f = Apbf::with_storage(params, &mut buf[..], hash::seeded_hasher(3)).unwrap();
    /// f.insert_hash(42);
    /// assert!(f.contains_hash(42));
    /// let mut small = [Block::ZERO; 3];
    /// let e = Apbf::with_storage(params, &mut small[..], hash::seeded_hasher(3)).unwrap_err();
    /// assert_eq!(e, Error::Length { name: "storage", expected: 4, found: 3 });
    /// ```
    pub fn with_storage(params: ApbfParams, storage: S, hasher: H) -> Result<Self> {
        let mut f = Self::restore(params, storage, hasher, Ring::default())?;
        f.clear();
        Ok(f)
    }

    /// A filter over caller-provided storage whose contents it adopts as
    /// they are, with the [`Ring`] it was saved at: a filter's
    /// [`blocks`](Self::blocks) and [`ring`](Self::ring) saved and loaded
    /// again, with the same parameters and hasher, is the same filter.
    /// Errors: bad parameters, the wrong number of blocks, `ring.newest`
    /// not below `k + l` or `ring.count` above `g`.
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams, Ring};
    /// use streambloom::hash;
    /// let params = ApbfParams::new(3, 2, 10);
    /// let mut f = Apbf::with_hasher(params, hash::seeded_hasher(3)).unwrap();
    /// for i in 0..25u64 {
    ///     f.insert(&i);
    /// }
    /// let g = Apbf::restore(params, f.blocks().to_vec(), hash::seeded_hasher(3), f.ring()).unwrap();
    /// assert_eq!(f, g);
    /// let bad = Ring { newest: 5, count: 0 };
    /// assert!(Apbf::restore(params, f.blocks().to_vec(), hash::seeded_hasher(3), bad).is_err());
    /// ```
    pub fn restore(params: ApbfParams, storage: S, hasher: H, ring: Ring) -> Result<Self> {
        let blocks = params.blocks()?;
        let slices = params.k as usize + params.l as usize;
        if ring.newest as usize >= slices {
            return Err(Error::param("ring.newest", ring.newest, "below k + l"));
        }
        if ring.count > params.g {
            return Err(Error::param("ring.count", ring.count, "at most g"));
        }
        let slice_blocks = blocks / slices;
        Ok(Apbf {
            cells: Cells::new(storage, blocks)?,
            hasher,
            params: ApbfParams {
                slice_bits: slice_blocks * B,
                ..params
            },
            slices,
            slice_blocks,
            ring,
        })
    }

    /// The hash of `key` that the `*_hash` methods take: the keyed forms
    /// are exactly `f.insert_hash(f.hash(key))` and so on.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert_hash(f.hash("a"));
    /// assert!(f.contains("a"));
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    keyed! {
        /// Inserts `key`: first, if the current generation is full, the
        /// oldest slice is cleared and becomes the newest; then the key's
        /// bit is set in each of the `k` newest slices.
        ///
        /// ```
        /// # use streambloom::apbf::{Apbf, ApbfParams};
        /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
        /// f.insert(&12u64);
        /// assert!(f.contains(&12u64));
        /// ```
        fn insert(&mut self, key) = insert_hash;

        /// Whether `key` may be among the recent insertions: `true` for
        /// every key of the last `l·g` insertions, and `false` means the
        /// key was not inserted since its slices were cleared.
        ///
        /// ```
        /// # use streambloom::apbf::{Apbf, ApbfParams};
        /// let f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
        /// assert!(!f.contains("nothing"));
        /// ```
        fn contains(&self, key) -> bool = contains_hash;

        /// [`insert`](Self::insert) for each key, in order.
        ///
        /// ```
        /// # use streambloom::apbf::{Apbf, ApbfParams};
        /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
        /// f.insert_batch(&["a", "b"]);
        /// assert!(f.contains("a") && f.contains("b"));
        /// ```
        batch fn insert_batch(&mut self, keys) = insert_batch_hash;

        /// [`contains`](Self::contains) for each key: `found[i]` is the
        /// answer for `keys[i]`; an error if the slices differ in length.
        ///
        /// ```
        /// # use streambloom::apbf::{Apbf, ApbfParams};
        /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
        /// f.insert("a");
        /// let mut found = [false; 2];
        /// f.contains_batch(&["a", "z"], &mut found).unwrap();
        /// assert_eq!(found, [true, false]);
        /// assert!(f.contains_batch(&["a"], &mut found).is_err());
        /// ```
        batch fn contains_batch(&self, keys, found: &mut [bool]) = contains_batch_hash;
    }

    /// [`insert`](Self::insert) for a key already hashed to `h` (any
    /// `u64`: positions come from remixes of it; distinct keys need
    /// distinct values).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert_hash(12);
    /// assert!(f.contains_hash(12));
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        if self.ring.count >= self.params.g {
            self.next_generation();
        }
        let probe = Probe::new(h);
        let mut s = self.ring.newest as usize;
        for _ in 0..self.params.k {
            let (block, byte, bit) = self.locate(probe, s);
            self.cells.block_mut(block).0[byte] |= bit;
            s = self.next_slice(s);
        }
        self.ring.count += 1;
    }

    /// [`contains`](Self::contains) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// assert!(!f.contains_hash(1));
    /// ```
    #[inline]
    pub fn contains_hash(&self, h: u64) -> bool {
        let probe = Probe::new(h);
        let k = self.params.k as usize;
        let n = self.slices;
        let newest = self.ring.newest as usize;
        // The paper's query, which skips: the candidate run is
        // the logical slices `start..start + k` (0 the newest), of which
        // `start..known` are already known set. Its last unknown slice is
        // probed first, then the ones before it down to `known`: a clear
        // slice `i` is in no run, so the next candidate starts at `i + 1`,
        // and the slices from there to the old run's end were seen set.
        // An absent key, its bits mostly clear, costs about `(k + l) / k`
        // probes, not the `k + l` of a slice-by-slice scan; the answer is
        // the same (some `k` consecutive slices all set).
        let mut start = 0;
        let mut known = 0;
        while start + k <= n {
            let end = start + k - 1;
            let mut i = end;
            loop {
                // Logical slice `i` is `newest + i` in memory, wrapping.
                let s = newest + i;
                let s = if s >= n { s - n } else { s };
                let (block, byte, bit) = self.locate(probe, s);
                if self.cells.block(block).0[byte] & bit == 0 {
                    break;
                }
                if i == known {
                    return true;
                }
                i -= 1;
            }
            start = i + 1;
            known = end + 1;
        }
        false
    }

    /// [`insert_batch`](Self::insert_batch) for keys already hashed; out
    /// of cache the newest slices' lines of the items
    /// [`LOOKAHEAD`](crate::store::LOOKAHEAD) places ahead are prefetched.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert_batch_hash(&[1, 2, 3]);
    /// assert!(f.contains_hash(2));
    /// ```
    pub fn insert_batch_hash(&mut self, hashes: &[u64]) {
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(hashes[i]),
            |i| self.insert_hash(hashes[i])
        );
    }

    /// [`contains_batch`](Self::contains_batch) for keys already hashed.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert_hash(1);
    /// let mut found = [false; 2];
    /// f.contains_batch_hash(&[1, 2], &mut found).unwrap();
    /// assert_eq!(found, [true, false]);
    /// ```
    pub fn contains_batch_hash(&self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        Error::check_len("found", hashes.len(), found.len())?;
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(hashes[i]),
            |i| found[i] = self.contains_hash(hashes[i])
        );
        Ok(())
    }

    /// Ends the current generation now: the oldest slice is cleared and
    /// becomes the newest (what an insertion into a full generation does
    /// first; call it on a timer for a time-based window, as the
    /// `CrowdStrike/apbf` refresh interval does).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(2, 1, 100), 1).unwrap();
    /// f.insert("a");
    /// f.next_generation();
    /// assert!(f.contains("a")); // one shift: l = 1 still covers it
    /// f.next_generation();
    /// assert!(!f.contains("a")); // its newest slice is gone
    /// ```
    pub fn next_generation(&mut self) {
        let newest = self.ring.newest as usize;
        let newest = if newest == 0 {
            self.slices - 1
        } else {
            newest - 1
        };
        let start = newest * self.slice_blocks;
        self.cells.blocks_mut()[start..start + self.slice_blocks].fill(Block::ZERO);
        self.ring = Ring {
            newest: newest as u32,
            count: 0,
        };
    }

    /// Empties the filter and resets the ring.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert("a");
    /// f.clear();
    /// assert!(!f.contains("a"));
    /// assert_eq!(f.ring().count, 0);
    /// ```
    pub fn clear(&mut self) {
        self.cells.clear();
        self.ring = Ring::default();
    }

    /// The effective parameters (`slice_bits` rounded up to whole blocks).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// assert_eq!(f.params().slice_bits, 1024);
    /// ```
    pub fn params(&self) -> ApbfParams {
        self.params
    }

    /// Slices an insertion sets.
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// assert_eq!(Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap().k(), 4);
    /// ```
    pub fn k(&self) -> u32 {
        self.params.k
    }

    /// Where the ring stands, for [`restore`](Self::restore).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams, Ring};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// f.insert("a");
    /// assert_eq!(f.ring(), Ring { newest: 0, count: 1 });
    /// ```
    pub fn ring(&self) -> Ring {
        self.ring
    }

    /// The fraction of bits set in each slice, newest first, written to
    /// `out` (its length must be `k + l`).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(2, 1, 100), 1).unwrap();
    /// f.insert_hash(5);
    /// let mut fills = [0.0; 3];
    /// f.slice_fills(&mut fills).unwrap();
    /// assert_eq!(fills, [1.0 / 512.0, 1.0 / 512.0, 0.0]);
    /// assert!(f.slice_fills(&mut [0.0; 2]).is_err());
    /// ```
    pub fn slice_fills(&self, out: &mut [f64]) -> Result<()> {
        Error::check_len("out", self.slices, out.len())?;
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.fill_of(i);
        }
        Ok(())
    }

    /// The false-positive rate at the slices' measured fills now:
    /// [`run_probability`] over [`slice_fills`](Self::slice_fills).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let mut f = Apbf::new(ApbfParams::new(4, 3, 100), 1).unwrap();
    /// assert_eq!(f.current_fpr(), 0.0);
    /// for i in 0..1000u64 {
    ///     f.insert(&i);
    /// }
    /// assert!((f.current_fpr() - f.predicted_fpr(1000)).abs() < 0.5 * f.predicted_fpr(1000));
    /// ```
    pub fn current_fpr(&self) -> f64 {
        run_probability(self.params.k, self.slices, |i| self.fill_of(i))
    }

    /// The expected false-positive rate after `n` insertions from empty
    /// ([`ApbfParams::predicted_fpr`]).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let f = Apbf::new(ApbfParams::new(10, 7, 1000), 1).unwrap();
    /// assert!(f.predicted_fpr(1_000_000) < 0.002);
    /// ```
    pub fn predicted_fpr(&self, n: u64) -> f64 {
        self.params().predicted_fpr(n)
    }

    /// The blocks, slice by slice in memory order, e.g. to write them out
    /// (and [`restore`](Self::restore) with the [`ring`](Self::ring)).
    ///
    /// ```
    /// # use streambloom::apbf::{Apbf, ApbfParams};
    /// let f = Apbf::new(ApbfParams::new(2, 1, 100), 1).unwrap();
    /// assert_eq!(f.blocks().len(), 3);
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }

    /// The fill ratio of logical slice `i` (`0` the newest).
    fn fill_of(&self, i: usize) -> f64 {
        let s = (self.ring.newest as usize + i) % self.slices;
        let bits = self.effective_bits();
        let zeros = self
            .cells
            .kernels()
            .zero_count(self.cells.blocks(), s * bits, bits);
        (bits - zeros) as f64 / bits as f64
    }

    /// Bits per slice, whole blocks.
    #[inline(always)]
    fn effective_bits(&self) -> usize {
        self.slice_blocks * B
    }

    /// The slice after `s` in memory order, wrapping.
    #[inline(always)]
    fn next_slice(&self, s: usize) -> usize {
        if s + 1 == self.slices { 0 } else { s + 1 }
    }

    /// Item `probe`'s bit in slice `s`: block, byte in it, bit mask.
    #[inline(always)]
    fn locate(&self, probe: Probe, s: usize) -> (usize, usize, u8) {
        let pos = probe.position(s, self.effective_bits());
        let block = s * self.slice_blocks + pos / B;
        let bit = pos % B;
        (block, bit / 8, 1 << (bit % 8))
    }

    /// Prefetches item `h`'s lines in the `k` newest slices.
    #[inline(always)]
    fn prefetch_hash(&self, h: u64) {
        let probe = Probe::new(h);
        let mut s = self.ring.newest as usize;
        for _ in 0..self.params.k {
            prefetch(self.cells.block(self.locate(probe, s).0));
            s = self.next_slice(s);
        }
    }
}

/// An item's positions: slice `s` gets `⌊mix64(h1 + s·h2) · m / 2^64⌋`,
/// double hashing over two remixes of the hash (`h2` odd), remixed once
/// more ([`hash::mix64`]) and reduced by the high half of a product
/// (uniform up to `m / 2^64`).
///
/// Why the last remix: without it two keys whose `(h1, h2)` are close
/// collide in *every* slice together (the positions are an arithmetic
/// progression in `s`, and any linear reduction keeps it one), so a fresh
/// key matched an inserted key's whole run with probability about
/// `1/(k·m²)`, not `m^−k`. Small slices showed it, in
/// `tests::small_slices_deliver_the_planned_rate` (four filters, 2·10⁶
/// fresh keys asked just before a shift): `ApbfParams::plan(1000, 1e-4)`
/// (slices of 512 bits) gave 264 hits where the model expects 106.1,
/// `plan(1000, 1e-6)` 71 for 1.3 and `plan(300, 1e-5)` 33 for 7.1; with
/// the remix 103, 1 and 8. The remix is a nonlinear bijection, so
/// close inputs give unrelated positions and the slices' bits are
/// independent, as the rate's derivation assumes. It changed every
/// position: APBF encodings are format version 2
/// ([`Kind::version`](crate::format::Kind::version)).
#[derive(Clone, Copy)]
struct Probe {
    h1: u64,
    h2: u64,
}

impl Probe {
    #[inline(always)]
    fn new(h: u64) -> Probe {
        Probe {
            h1: hash::mix64(h),
            h2: hash::mix64(h ^ 0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// The position in slice `s` of `bits` bits.
    #[inline(always)]
    fn position(self, s: usize, bits: usize) -> usize {
        let x = hash::mix64(self.h1.wrapping_add((s as u64).wrapping_mul(self.h2)));
        ((u128::from(x) * bits as u128) >> 64) as usize
    }
}
