//! Hashing keys and placing them in blocks.
//!
//! A key is hashed once to 64 bits with a [`BuildHasher`] the filter owns
//! ([`DefaultHasher`]). **Blocked hashing** then turns that one hash into one
//! block and `k` cells inside it, so an item costs one cache line whatever
//! `k` is:
//!
//! - the block is `⌊mix64(h) · blocks / 2^64⌋` (a remix of `h`, then
//!   multiply-shift range reduction: no `%`);
//! - the `k` cells come from a second, independent remix of `h`, placed
//!   by one of the [`Placement`] schemes. Each filter uses the scheme the
//!   measurements below chose for it: [`classic::PLACEMENT`] (split-block),
//!   [`stable::PLACEMENT`] (Floyd) and [`spectral::PLACEMENT`]
//!   (collapsing repeats); [`probe`] uses [`Placement::default()`], Floyd.
//!   None is a rejection loop: the cells take a fixed number of steps with
//!   no data-dependent branch, and `k <= 8` is specialized at compile time.
//!
//! **The choice.** At equal memory, the fastest scheme whose accuracy is
//! within 5 % of the best one's. The accuracy and speed of every scheme
//! for every filter, with the commands that measure them
//! (`report_placement`, `report_placement_speed`), are in the README's
//! "Measured" section; in short:
//!
//! - **Spectral: collapsing repeats.** The most accurate everywhere (8–14 %
//!   fewer errors than distinct draws at W32, where sectors of 3–4 counters
//!   hurt the sectorized schemes most; equal within noise at W8 and W16) and
//!   among the cheapest. Lemma 3's estimator follows it
//!   ([`Placement::expected_cells`]).
//! - **Stable: Floyd.** No other scheme stays within 5 % at every setting
//!   (W8 with Sweep: collapsing +6 %, sectorized and split-block +13 %), and
//!   Floyd draws the same law as the rejection loop, so [`stable_point`],
//!   [`blocked_fpr`] and `current_fpr` hold unchanged; it is as fast as the
//!   fastest within noise.
//! - **Classic: split-block.** Every scheme is within 2.3 % of the best, and
//!   split-block (one bit in each of `k` of the 8 words of the block for
//!   `k <= 8`) is the fastest on the 1-bit path: its mask is eight lanes of
//!   the same shifts, built in two AVX2 vectors
//!   ([`Ops::hash_words`](streambloom_kernels::Ops::hash_words)). Each bit
//!   is set by an item with probability `k/512`, independently across
//!   items, as with distinct draws, so [`ClassicParams::predicted_fpr`]
//!   holds as before.
//!
//! [`classic::PLACEMENT`]: crate::classic::PLACEMENT
//! [`stable::PLACEMENT`]: crate::stable::PLACEMENT
//! [`spectral::PLACEMENT`]: crate::spectral::PLACEMENT
//! [`stable_point`]: crate::analysis::stable::stable_point
//! [`blocked_fpr`]: crate::analysis::stable::blocked_fpr
//! [`ClassicParams::predicted_fpr`]: crate::ClassicParams::predicted_fpr
//!
//! **Layouts.** [`Layout::OneBlock`] puts all `k` cells of an item in that
//! block; [`Layout::TwoBlocks`] puts `⌈k/2⌉` there and `⌊k/2⌋` in a second
//! block chosen by another independent remix ([`probes`]), which brings
//! the filters' rates close to their unblocked models for one more cache
//! line per item (measured in the [`crate::stable`] module docs and the
//! README).
//!
//! Every keyed operation of every filter has a `*_hash(u64)` form taking
//! this 64-bit hash directly, for callers who already hold one. Because
//! both block and cells come from remixes, the `*_hash` forms are correct
//! for **any** `u64`, not only uniform 64-bit hashes: sequential ids, CRC32
//! or FNV-32 values and 32-bit hashes (in the low or the high half) place as
//! well as a full hash does. The remixes cost 0.5–2 ns per item in cache
//! on a Zen 3 (`streambloom-bench latency`), 2–5 ns in the batch forms,
//! which remix once more to prefetch.
//! Distinct keys must still map to distinct `u64`s: keys that share a value
//! share their cells.
//!
//! **Seeds.** A hash depends on its seeds; seeds an attacker can guess let
//! them craft keys that all land in one block (see
//! [Seeds and HashDoS](#seeds-and-hashdos)). [`DefaultHasher`]'s output
//! also changes with the features (ahash with `alloc`, foldhash without),
//! the CPU and crate versions: it is for filters that live in one process,
//! not for filters written to bytes and read elsewhere: those hash with
//! [`PortableHasher`] (XXH3-64, the same output on every target), the only
//! hasher [`crate::format`] accepts.
//!
//! # Seeds and HashDoS
//!
//! Placement is public and fixed: a key's block is [`block_of`] of its
//! hash. Whoever knows a filter's seeds can therefore hash candidate keys
//! offline and keep those that land in a block of their choice, about
//! `blocks` tries a key (a million hashes, milliseconds, for a thousand
//! keys against 1024 blocks). Inserted, such keys saturate that block: a
//! `Classic` filter's bits or a `StableBloom`'s cells all become non-zero,
//! so every key placed there is reported present (a duplicate), and a
//! `Spectral` filter over-counts every key placed there; the filter's
//! overall rate barely moves (one block in `blocks`), which hides the
//! attack from [`current_fpr`](crate::StableBloom::current_fpr)-style
//! monitoring. The attacker then uses further keys of that block to pass
//! as already seen. `core/src/api_tests/hashdos.rs` does it: 2000 keys
//! crafted against seed 42 fill block 0 of a 1024-block `Classic` filter
//! and of a `StableBloom` and leave every other block empty, and all 1000
//! crafted probes are false positives; the same keys against another seed
//! spread like any others (the most loaded block within a binomial bound,
//! the probes at the model's rate).
//!
//! Where the seeds come from is the defence:
//!
//! - with `std`, every filter's `new_random(params)` ([`random_hasher`])
//!   draws its seeds from the operating system: the choice for keys that
//!   others choose;
//! - without `std`, pass `new(params, seed)` or [`seeded_hasher`] a seed
//!   drawn at boot from a hardware random source (a TRNG peripheral) and
//!   kept secret; a seed that is a constant of the source, the same on
//!   every device, is known to anyone who reads the firmware;
//! - a [`PortableHasher`]'s seed is stored in the filter's bytes
//!   ([`crate::format`]): whoever reads the bytes knows it, so keep the
//!   bytes as secret as the seed;
//! - the `*_hash` forms place the caller's `u64` through a fixed public
//!   remix ([`mix64`]), which spreads non-uniform values but is no secret:
//!   a caller who hashes untrusted keys itself must use a keyed hash with
//!   a secret seed.

use core::hash::{BuildHasher, Hash};
use streambloom_kernels::{Mask, Width};

mod hasher;
mod portable;
#[cfg(test)]
mod report;
#[cfg(feature = "std")]
pub use hasher::random_hasher;
pub use hasher::{DefaultHasher, KeyHasher, seeded_hasher};
pub use portable::{PortableHash, PortableHasher, PortableKeyHasher};

/// Hashes `key` to the 64 bits every `*_hash` method takes.
///
/// ```
/// use streambloom::hash::{hash_key, seeded_hasher};
/// let h = seeded_hasher(1);
/// assert_eq!(hash_key(&h, "a"), hash_key(&h, "a"));
/// ```
#[inline]
pub fn hash_key<H: BuildHasher, K: Hash + ?Sized>(hasher: &H, key: &K) -> u64 {
    hasher.hash_one(key)
}

/// A strong 64-bit finaliser (the SplitMix64 / Stafford "mix13" output
/// function): every input bit affects every output bit.
///
/// ```
/// use streambloom::hash::mix64;
/// assert_ne!(mix64(1), mix64(2));
/// assert_eq!(mix64(0), 0);
/// ```
#[inline(always)]
pub const fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Where an item lives: one block and the cells selected in it.
///
/// ```
/// use streambloom::hash::probe;
/// use streambloom::{Mask, W8};
/// let p = probe::<W8>(42, 100, 5);
/// assert!(p.block < 100 && p.mask.count() == 5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe<W: Width> {
    /// Index of the block.
    pub block: usize,
    /// The item's `k` distinct cells within that block.
    pub mask: W::Mask,
}

/// Salt that separates the remix the cells are drawn from (in
/// [`cells_of`]) from the remix the block is chosen by (in [`block_of`]).
const CELL_SALT: u64 = 0x6A09_E667_F3BC_C909;

/// The block of hash `h` among `blocks` blocks: `⌊mix64(h) · blocks / 2^64⌋`.
///
/// `h` is remixed ([`mix64`]) before the multiply-shift range reduction,
/// which reads the high bits: without the remix every `h` below `2^32`
/// (small ids, CRC32 or FNV-32 values) would land in block 0. `blocks` of
/// 0 gives 0.
///
/// ```
/// use streambloom::hash::block_of;
/// // Sequential ids spread over the blocks instead of piling into block 0.
/// let mut hits = [0u32; 4];
/// for id in 0..4000 {
///     hits[block_of(id, 4)] += 1;
/// }
/// assert!(hits.iter().all(|&n| n > 900));
/// ```
#[inline(always)]
pub fn block_of(h: u64, blocks: usize) -> usize {
    ((u128::from(mix64(h)) * blocks as u128) >> 64) as usize
}

/// The `k` distinct cells of hash `h` within a block of `W::CELLS` cells.
/// A `k` above `W::CELLS` is taken as `W::CELLS` (every cell of the block:
/// a block has no more distinct cells), so any `k` returns; filters reject
/// such a `k` at construction.
///
/// The cells are drawn from `mix64(h ^ CELL_SALT)`, a remix independent of
/// the one [`block_of`] reads, so the block and the cells of an item use
/// independent bits whatever `h` is. The first `min(k, 64 / log2(cells))`
/// draws come from that one remix in a loop whose trip count depends only
/// on `k`, so the branch predictor learns it; only when draws collided (or
/// `k` needs more bits) does a second loop draw more, from fresh remixes.
///
/// ```
/// use streambloom::hash::cells_of;
/// use streambloom::{Mask, W32};
/// assert_eq!(cells_of::<W32>(7, 5).count(), 5);
/// assert_eq!(cells_of::<W32>(7, 17).count(), 16); // capped at the block's 16 cells
/// ```
#[inline(always)]
pub fn cells_of<W: Width>(h: u64, k: u32) -> W::Mask {
    let bits = W::CELLS.trailing_zeros();
    let per_word = 64 / bits;
    let k = k.min(W::CELLS as u32);
    let seed = h ^ CELL_SALT;
    let mut mask = W::Mask::default();
    let mut x = mix64(seed);
    let mut n = 0;
    for _ in 0..k.min(per_word) {
        n += u32::from(mask.insert((x >> (64 - bits)) as usize));
        x <<= bits;
    }
    let mut left = per_word - k.min(per_word);
    let mut round = 0u64;
    while n < k {
        if left == 0 {
            round += 1;
            x = mix64(seed ^ round.wrapping_mul(0xD6E8_FEB8_6659_FD93));
            left = per_word;
        }
        n += u32::from(mask.insert((x >> (64 - bits)) as usize));
        x <<= bits;
        left -= 1;
    }
    mask
}

/// How the `k` cells of an item are chosen inside its block. Each scheme
/// reads the bits of `mix64(h ^ CELL_SALT)` (and further remixes when `k`
/// needs more than 64 bits), independent of the block's remix.
///
/// - [`Distinct`](Placement::Distinct): `k` distinct cells, each `k`-subset
///   of the block equally likely; a sequential rejection loop
///   ([`cells_of`]), whose exit is data-dependent.
/// - [`Floyd`](Placement::Floyd): the same law (each `k`-subset equally
///   likely, up to a bias below `2^-16`), by Floyd's sampling in exactly
///   `k` steps: step `j` draws `t` uniform in `0..=B-k+j` and takes `t`, or
///   `B-k+j` when `t` is already taken (a conditional move, not a branch).
///   The draws are multiply-shifts that reuse the low half of the product
///   (Lemire's batched bounded draws) and take a fresh remix before the
///   ranges' product passes `2^48`.
/// - [`Sectorized`](Placement::Sectorized): the block is cut into `k`
///   sectors of `⌊B/k⌋` or `⌈B/k⌉` cells (`B` cells a block) and cell `j`
///   is drawn in sector `j` (multiply-shift of its own bit field). Distinct
///   by construction.
/// - [`SplitBlock`](Placement::SplitBlock): the block is cut into `S`
///   sectors, `S` the smallest power of two `>= k` and `>=` the block's
///   64-bit words (so 8 sectors, one word each, for 1-bit cells and
///   `k <= 8`); the item uses `k` consecutive sectors (wrapping) from a
///   random first one, and in each a cell named by a bit field of the hash.
///   Distinct by construction, and every cell is used with probability
///   `k/B`, as with `Distinct`.
/// - [`Collapsing`](Placement::Collapsing): `k` independent cells over the
///   whole block; repeats collapse (the mask is a set), so an item has `k`
///   cells or fewer: on average `B(1 - (1 - 1/B)^k)`.
///
/// All but `Distinct` compute the `k` cells independently, with no
/// data-dependent branch. The module docs say which filter uses which, and
/// why.
///
/// ```
/// use streambloom::hash::Placement;
/// use streambloom::{Mask, W8};
/// for p in Placement::ALL {
///     let cells = p.cells::<W8>(99, 4).count();
///     assert!(cells <= 4 && (cells == 4 || p == Placement::Collapsing));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// `k` distinct cells by rejection sampling ([`cells_of`]).
    Distinct,
    /// `k` distinct cells, each `k`-subset equally likely, by Floyd's
    /// sampling: `k` steps, no data-dependent branch.
    #[default]
    Floyd,
    /// Cell `j` in sector `j` of `k` near-equal sectors.
    Sectorized,
    /// `k` consecutive of a power-of-two number of sectors (at least one
    /// per 64-bit word), from a random first one; a cell named by a bit
    /// field in each.
    SplitBlock,
    /// `k` independent cells over the whole block, repeats collapsing.
    Collapsing,
}

impl Placement {
    /// Every scheme, for comparisons.
    ///
    /// ```
    /// assert_eq!(streambloom::hash::Placement::ALL.len(), 5);
    /// ```
    pub const ALL: [Placement; 5] = [
        Placement::Distinct,
        Placement::Floyd,
        Placement::Sectorized,
        Placement::SplitBlock,
        Placement::Collapsing,
    ];

    /// The expected number of distinct cells of an item with `k` cells in
    /// a block of `W::CELLS` (`k` capped at `W::CELLS`): `k` for every
    /// scheme but [`Collapsing`](Placement::Collapsing), whose `k` draws
    /// leave `B(1 - (1 - 1/B)^k)` distinct cells on average (`B` cells a
    /// block). Each cell of a block is then among an item's cells with
    /// probability `expected_cells / B`, which is what formulas over the
    /// cells' marginal law (a zero fraction, Lemma 3's estimator) need.
    ///
    /// ```
    /// use streambloom::hash::Placement;
    /// use streambloom::W32;
    /// assert_eq!(Placement::Floyd.expected_cells::<W32>(5), 5.0);
    /// // 5 draws among 16 counters: 4.4 distinct on average.
    /// let c = Placement::Collapsing.expected_cells::<W32>(5);
    /// assert!((c - 16.0 * (1.0 - (15.0f64 / 16.0).powi(5))).abs() < 1e-12);
    /// ```
    pub fn expected_cells<W: Width>(self, k: u32) -> f64 {
        let b = W::CELLS as f64;
        let k = f64::from(k.min(W::CELLS as u32));
        match self {
            Placement::Collapsing => b * -libm::expm1(k * libm::log1p(-1.0 / b)),
            _ => k,
        }
    }

    /// The cells of hash `h` within a block of `W::CELLS` cells, `k` capped
    /// at `W::CELLS` (filters reject a larger `k` at construction).
    /// `k = 0` selects no cell.
    ///
    /// ```
    /// use streambloom::hash::Placement;
    /// use streambloom::{Mask, W8};
    /// for place in Placement::ALL {
    ///     let m = place.cells::<W8>(7, 5);
    ///     if place == Placement::Collapsing {
    ///         assert!((1..=5).contains(&m.count())); // repeats collapse
    ///     } else {
    ///         assert_eq!(m.count(), 5);
    ///     }
    /// }
    /// ```
    #[inline(always)]
    pub fn cells<W: Width>(self, h: u64, k: u32) -> W::Mask {
        match self {
            Placement::Distinct => cells_of::<W>(h, k),
            Placement::Floyd => specialized!(floyd::<W>(h, k)),
            Placement::Sectorized => specialized!(sectorized::<W>(h, k)),
            Placement::SplitBlock => split_block::<W>(h, k),
            Placement::Collapsing => specialized!(collapsing::<W>(h, k)),
        }
    }
}

/// Calls `f(h, k)` with `k` a constant for `k <= 8`, so that inlining
/// unrolls the cell loop and resolves every remix at compile time. A
/// macro, so that each arm is a direct call of an `#[inline(always)]`
/// function, which is always inlined: the function behind a `fn` pointer
/// (this was one) is inlined only if LLVM propagates the pointer first,
/// and an unrelated change elsewhere in a binary once made it stop doing
/// so for 4-bit cells (`stable-w4-observe` 16.9 → 27.9 ns, 16 KiB, AVX2,
/// Zen 5, from a change to the Reservoir filter's insertion).
macro_rules! specialized {
    ($f:ident::<$w:ty>($h:expr, $k:expr)) => {{
        let (h, k) = ($h, $k);
        match k {
            1 => $f::<$w>(h, 1),
            2 => $f::<$w>(h, 2),
            3 => $f::<$w>(h, 3),
            4 => $f::<$w>(h, 4),
            5 => $f::<$w>(h, 5),
            6 => $f::<$w>(h, 6),
            7 => $f::<$w>(h, 7),
            8 => $f::<$w>(h, 8),
            _ => $f::<$w>(h, k),
        }
    }};
}
use specialized;

/// The mask of `cells` (at most 8, each below `W::CELLS`), built in
/// registers: each cell's word and bit once, then every 64-bit word as the
/// OR of the bits whose word it is (selected by an all-ones or all-zero
/// mask, no branch).
/// No store of one word is read back while the next is built, and the
/// words vectorize. Shifting inside the word loop instead (`(c / 64 == w)
/// << c % 64`) was 5–10 % faster in cache with AVX2 and, without AVX2's
/// per-lane shifts, 1.6× slower for 1-bit cells at 64 MiB
/// (`stable-w1-contains`, portable).
#[inline(always)]
fn mask_of_cells<W: Width>(cells: &[usize]) -> W::Mask {
    let mut bits = [(0usize, 0u64); 8];
    for (b, &c) in bits.iter_mut().zip(cells) {
        *b = (c / 64, 1 << (c % 64));
    }
    let bits = &bits[..cells.len()];
    let mut words = [0u64; 8];
    for (w, word) in words.iter_mut().enumerate().take(W::CELLS.div_ceil(64)) {
        *word = bits.iter().fold(0, |a, &(at, bit)| {
            a | (bit & 0u64.wrapping_sub(u64::from(at == w)))
        });
    }
    W::Mask::from_words(&words)
}

/// Bit fields read from the top of `mix64(seed)`, then of fresh remixes.
/// Whether a field needs a new remix depends only on the widths taken
/// before it, never on the data: with a constant `k` the compiler resolves
/// it, and otherwise the branch predictor learns it.
struct Fields {
    seed: u64,
    x: u64,
    left: u32,
    round: u64,
}

impl Fields {
    #[inline(always)]
    fn new(h: u64) -> Fields {
        let seed = h ^ CELL_SALT;
        Fields {
            seed,
            x: mix64(seed),
            left: 64,
            round: 0,
        }
    }

    /// The next `bits` bits (`bits <= 32`; 0 gives 0).
    #[inline(always)]
    fn take(&mut self, bits: u32) -> u64 {
        if self.left < bits {
            self.round += 1;
            self.x = mix64(self.seed ^ self.round.wrapping_mul(0xD6E8_FEB8_6659_FD93));
            self.left = 64;
        }
        let v = (self.x >> 1) >> (63 - bits);
        self.x <<= bits;
        self.left -= bits;
        v
    }
}

/// Bounded draws from `mix64(seed)`, then fresh remixes: `below(n)` is
/// the high half of `x·n` and keeps the low half as the next `x`. Each draw
/// is biased by at most the product of the ranges drawn from one remix over
/// `2^64`; a remix serves ranges whose product stays below `2^48`. Whether
/// a draw takes a fresh remix depends only on the ranges, never on the
/// data.
struct Dice {
    seed: u64,
    x: u64,
    used: u32,
    round: u64,
}

impl Dice {
    #[inline(always)]
    fn new(h: u64) -> Dice {
        let seed = h ^ CELL_SALT;
        Dice {
            seed,
            x: mix64(seed),
            used: 0,
            round: 0,
        }
    }

    /// Uniform in `0..n`, for `1 <= n <= 2^16`.
    #[inline(always)]
    fn below(&mut self, n: u64) -> u64 {
        let bits = 64 - (n - 1).leading_zeros();
        if self.used + bits > 48 {
            self.round += 1;
            self.x = mix64(self.seed ^ self.round.wrapping_mul(0xD6E8_FEB8_6659_FD93));
            self.used = 0;
        }
        self.used += bits;
        let wide = u128::from(self.x) * u128::from(n);
        self.x = wide as u64;
        (wide >> 64) as u64
    }
}

/// [`Placement::Floyd`]: for `j` from `b - k` to `b - 1`, draw `t` in
/// `0..=j` and take `t`, or `j` if `t` is taken already.
///
/// For `k <= 8` (the filters' usual `K`, a constant after
/// [`specialized`]) and a mask of several words (`[u64; 2]` and wider:
/// 4-, 2- and 1-bit cells) the picks are kept in registers and compared
/// with each other, and the mask is built once at the end
/// ([`mask_of_cells`]): testing and setting bits of such a mask through
/// memory made each step wait on the last one's store. With this and the
/// kernels inlined (the `#[inline]` of the kernels' `stamp!`), a
/// `StableBloom<W4>` query (`stable-w4-contains`, 16 KiB, AVX2, Zen 5)
/// went from 46.9 to 8.8 ns, against 5.2 for W8 (`stable-contains`); a
/// throwaway build with only the registers took about half of that
/// away, `perf` put the rest in the call. A one-word mask stays in a register
/// either way, and testing it is cheaper than comparing picks. The picks
/// are the same, so is the mask.
#[inline(always)]
fn floyd<W: Width>(h: u64, k: u32) -> W::Mask {
    let b = W::CELLS;
    let k = k.min(b as u32) as usize;
    let mut dice = Dice::new(h);
    if k <= 8 && b > 64 {
        let mut picks = [0usize; 8];
        for i in 0..k {
            let j = b - k + i;
            let t = dice.below(j as u64 + 1) as usize;
            let taken = picks[..i].iter().fold(false, |a, &p| a | (p == t));
            picks[i] = if taken { j } else { t };
        }
        return mask_of_cells::<W>(&picks[..k]);
    }
    floyd_in_mask::<W>(dice, k)
}

/// Floyd's steps with the picks tested and set in the mask itself: any
/// `k` (up to `W::CELLS`), and the reference the register form is tested
/// against.
#[inline(always)]
fn floyd_in_mask<W: Width>(mut dice: Dice, k: usize) -> W::Mask {
    let b = W::CELLS;
    let mut mask = W::Mask::default();
    for j in b - k..b {
        let t = dice.below(j as u64 + 1) as usize;
        let cell = if mask.contains(t) { j } else { t };
        mask = mask.with(cell);
    }
    mask
}

#[inline(always)]
fn sectorized<W: Width>(h: u64, k: u32) -> W::Mask {
    let b = W::CELLS;
    let k = k.min(b as u32) as usize;
    let mut mask = W::Mask::default();
    if k == 0 {
        return mask;
    }
    // Enough bits that multiply-shift onto a sector is uniform within
    // 2^-8 of a cell's probability.
    let widest = b.div_ceil(k);
    let bits = usize::BITS - (widest - 1).leading_zeros() + 8;
    let mut f = Fields::new(h);
    for j in 0..k {
        let start = j * b / k;
        let size = (j + 1) * b / k - start;
        let cell = start + ((f.take(bits) * size as u64) >> bits) as usize;
        mask = mask.with(cell);
    }
    mask
}

/// [`Placement::SplitBlock`]: one sector a mask word word by word
/// ([`split_block_words`]), smaller sectors cell by cell
/// ([`split_block_cells`]).
#[inline(always)]
fn split_block<W: Width>(h: u64, k: u32) -> W::Mask {
    if split_block_by_words::<W>(k) {
        split_block_words::<W>(h, k)
    } else {
        split_block_cells::<W>(h, k)
    }
}

/// Whether the split-block sectors of `k` cells are the mask's 64-bit
/// words, so that [`split_block_words`] places them: `1 <= k <=` the words
/// of a block (8 for 1-bit cells, 4 for 2-bit cells).
#[inline(always)]
pub(crate) fn split_block_by_words<W: Width>(k: u32) -> bool {
    k >= 1 && k as usize <= W::CELLS / 64
}

/// Split-block cells where a sector is smaller than a mask word (`k` above
/// the block's words, 8 for 1-bit cells), one by one: `first`, then cell
/// `j`'s field, in the item's sector `first + j`, taken from [`Fields`] in
/// turn.
#[inline(always)]
fn split_block_cells<W: Width>(h: u64, k: u32) -> W::Mask {
    let b = W::CELLS;
    let k = k.min(b as u32);
    let mut mask = W::Mask::default();
    if k == 0 {
        return mask;
    }
    let sectors = k.next_power_of_two().max((b / 64) as u32);
    let sector_bits = sectors.trailing_zeros();
    let cell_bits = b.trailing_zeros() - sector_bits;
    let mut f = Fields::new(h);
    let first = f.take(sector_bits) as u32;
    for j in 0..k {
        let sector = (first + j) & (sectors - 1);
        let cell = ((sector as usize) << cell_bits) | f.take(cell_bits) as usize;
        mask = mask.with(cell);
    }
    mask
}

/// Split-block cells where the sectors are the mask's `N` 64-bit words
/// (`1 <= k <= N`, [`split_block_by_words`]), computed word by word: every
/// word is the same few operations with constant shifts, no data-dependent
/// branch and no memory in between, so they vectorize (AVX2 shifts each
/// lane by its own count).
///
/// The remix `x = mix64(h ^ CELL_SALT)` gives `first`, its top
/// `log2 N` bits, then one 6-bit field per *word* below it, word `w`'s at
/// bits `log2 N + 6w` from the top (at most 51 bits in all). The item uses
/// the `k` words `first`, `first + 1`, ... (wrapping), and in each the bit
/// its field names. The law is [`split_block_cells`]'s: `k` consecutive
/// sectors from a uniform first one, and in each a uniform cell independent
/// of the others (the fields are disjoint bits of the remix); only which
/// hash bits name which cell differs, a field being tied to a word instead
/// of to the item's `j`-th sector, so that no lane's shift depends on the
/// data.
#[inline(always)]
fn split_block_words<W: Width>(h: u64, k: u32) -> W::Mask {
    let (x, top, used) = split_block_hash::<W>(h, k);
    let mut mask = [0u64; 8];
    for (w, word) in (0u32..).zip(mask.iter_mut()).take(W::CELLS / 64) {
        let field = (x >> (58 - top - 6 * w)) & 63;
        *word = (used >> w & 1) << field;
    }
    W::Mask::from_words(&mask)
}

/// What [`split_block_words`] builds its words from (`1 <= k <=` the
/// block's words): the remix `x`, the bits `top` above the first field
/// (`log2` of the words), and the words used, bit `w` for word `w`. The
/// mask is then what [`Ops::hash_words`](streambloom_kernels::Ops::hash_words)
/// computes from them, in vector registers where the backend has them.
#[inline(always)]
pub(crate) fn split_block_hash<W: Width>(h: u64, k: u32) -> (u64, u32, u64) {
    let x = mix64(h ^ CELL_SALT);
    let words = (W::CELLS / 64) as u64;
    let top = words.trailing_zeros();
    // The top `top` bits (none for one word).
    let first = (x >> 1) >> (63 - top);
    // Bit `j` set for the item's `j`-th word from `first`, rotated there.
    let used = (1u64 << k) - 1;
    let used = (used << first | used >> (words - first)) & ((1 << words) - 1);
    (x, top, used)
}

#[inline(always)]
fn collapsing<W: Width>(h: u64, k: u32) -> W::Mask {
    let b = W::CELLS;
    let bits = b.trailing_zeros();
    let k = k.min(b as u32) as usize;
    let mut f = Fields::new(h);
    if k <= 8 && b > 64 {
        // As Floyd's: a multi-word mask built once, in registers.
        let mut cells = [0usize; 8];
        for c in &mut cells[..k] {
            *c = f.take(bits) as usize;
        }
        return mask_of_cells::<W>(&cells[..k]);
    }
    let mut mask = W::Mask::default();
    for _ in 0..k {
        mask = mask.with(f.take(bits) as usize);
    }
    mask
}

/// The [`Probe`] of hash `h` in a filter of `blocks` blocks with `k` cells
/// per item, placed by [`Placement::default()`]: [`block_of`] and
/// [`Placement::cells`], so any 64-bit value is a valid `h` (sequential ids
/// and 32-bit hashes included), and `k` is capped at `W::CELLS`.
///
/// ```
/// use streambloom::hash::probe;
/// use streambloom::{Mask, W8};
/// let p = probe::<W8>(42, 1000, 5);
/// assert!(p.block < 1000);
/// assert_eq!(p.mask.count(), 5);
/// ```
#[inline(always)]
pub fn probe<W: Width>(h: u64, blocks: usize, k: u32) -> Probe<W> {
    probe_with::<W>(Placement::default(), h, blocks, k)
}

/// [`probe`] with the cells placed by `placement`.
///
/// ```
/// use streambloom::hash::{probe, probe_with, Placement};
/// use streambloom::W8;
/// assert_eq!(probe_with::<W8>(Placement::default(), 42, 1000, 5), probe::<W8>(42, 1000, 5));
/// let d = probe_with::<W8>(Placement::Distinct, 42, 1000, 5);
/// assert_eq!(d.block, probe::<W8>(42, 1000, 5).block); // the block does not depend on it
/// ```
#[inline(always)]
pub fn probe_with<W: Width>(placement: Placement, h: u64, blocks: usize, k: u32) -> Probe<W> {
    Probe {
        block: block_of(h, blocks),
        mask: placement.cells::<W>(h, k),
    }
}

/// Where an item's cells go: one block, or two independent blocks.
///
/// Each filter has its own default, chosen from the README's accuracy
/// table: [`Classic`](crate::Classic) one block (its planner buys the
/// accuracy back with a few percent more bits, cheaper than a second line),
/// [`StableBloom`](crate::StableBloom) and [`Spectral`](crate::Spectral)
/// two blocks (one block costs them 2–3× the papers' error rates).
///
/// - [`OneBlock`](Layout::OneBlock): all `k` cells in the
///   block [`block_of`] picks. One cache line per item, the fastest, but
///   the cells share their block's load (its recent inserts and, in
///   counting or forgetting filters, its decrements), which correlates
///   them: the false-positive rate exceeds the unblocked model's (Putze,
///   Sanders & Singler 2007, §3), and the Stable filter's exceeds the
///   paper's bound `(1 - stable_point)^K` by several times.
/// - [`TwoBlocks`](Layout::TwoBlocks): `⌈k/2⌉` cells in the block
///   [`block_of`] picks and `⌊k/2⌋` in a second block picked from an
///   independent remix of the hash. Each half still sees one block's load,
///   but the two halves see independent loads, so an item's `k` cells are
///   correlated in pairs of halves instead of all together, which restores
///   most of the unblocked model's accuracy. It costs one more line read
///   per item, which the batch forms overlap by prefetching both lines.
///
/// Each half is a select-then-reduce/update over one block with the same
/// kernels as one block. When both halves land in the same block (chance
/// `1/blocks`) [`probes`] merges them into **one** probe, the union of the
/// two masks, so that no cell is touched twice by one item: a cell is read
/// once by a min or a count and raised once by a max-assign or an add,
/// whatever the layout. With `k = 1` there is no second half and the
/// layouts agree.
///
/// ```
/// use streambloom::hash::{probes, Layout, Placement};
/// use streambloom::{Mask, W8};
/// let one = probes::<W8>(Layout::OneBlock, Placement::Floyd, 42, 1000, 5);
/// assert!(one.second.is_none() && one.first.mask.count() == 5);
/// let two = probes::<W8>(Layout::TwoBlocks, Placement::Floyd, 42, 1000, 5);
/// let second = two.second.unwrap(); // different blocks: chance 999/1000
/// assert_eq!((two.first.mask.count(), second.mask.count()), (3, 2));
/// assert_eq!(two.first.block, one.first.block); // the first block is the same
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// All `k` cells of an item in one block.
    OneBlock,
    /// `⌈k/2⌉` cells in one block and `⌊k/2⌋` in a second, independent one.
    TwoBlocks,
}

impl Layout {
    /// Both layouts, for comparisons.
    ///
    /// ```
    /// assert_eq!(streambloom::hash::Layout::ALL.len(), 2);
    /// ```
    pub const ALL: [Layout; 2] = [Layout::OneBlock, Layout::TwoBlocks];

    /// The cells of each half of an item of `k` cells: `(k, 0)` for one
    /// block, `(⌈k/2⌉, ⌊k/2⌋)` for two. The formulas of every filter split
    /// `k` this way.
    ///
    /// ```
    /// use streambloom::hash::Layout;
    /// assert_eq!(Layout::OneBlock.halves(5), (5, 0));
    /// assert_eq!(Layout::TwoBlocks.halves(5), (3, 2));
    /// assert_eq!(Layout::TwoBlocks.halves(1), (1, 0));
    /// ```
    #[inline(always)]
    pub const fn halves(self, k: u32) -> (u32, u32) {
        match self {
            Layout::OneBlock => (k, 0),
            Layout::TwoBlocks => (k - k / 2, k / 2),
        }
    }
}

/// The probes of one item under a [`Layout`]: the first block's, and the
/// second block's for [`Layout::TwoBlocks`] when the halves landed in
/// different blocks (see [`probes`]).
///
/// ```
/// use streambloom::hash::{probes, Layout, Placement};
/// use streambloom::W8;
/// let p = probes::<W8>(Layout::TwoBlocks, Placement::Floyd, 7, 1, 4);
/// assert!(p.second.is_none()); // one block: the halves merge
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probes<W: Width> {
    /// The first block and its cells (all `k` of them for one block).
    pub first: Probe<W>,
    /// The second block and its cells, in a block other than the first.
    pub second: Option<Probe<W>>,
}

/// Salt of the remix the second block is chosen by ([`Layout::TwoBlocks`]).
pub(crate) const SECOND_BLOCK_SALT: u64 = 0xBB67_AE85_84CA_A73B;

/// Salt of the hash the second half's cells are placed from: its cells read
/// `mix64(h ^ SECOND_CELLS_SALT ^ CELL_SALT)`, a remix independent of the
/// first half's and of both blocks'.
pub(crate) const SECOND_CELLS_SALT: u64 = 0x3C6E_F372_FE94_F82B;

/// The probes of hash `h` under `layout` in a filter of `blocks` blocks
/// with `k` cells an item, placed by `placement` (see [`Layout`] for the
/// split and the merge). Any `u64` is a valid `h`, as for [`probe`].
///
/// ```
/// use streambloom::hash::{probe_with, probes, Layout, Placement};
/// use streambloom::W8;
/// let one = probes::<W8>(Layout::OneBlock, Placement::Floyd, 42, 1000, 5);
/// assert_eq!(one.first, probe_with::<W8>(Placement::Floyd, 42, 1000, 5));
/// ```
#[inline(always)]
pub fn probes<W: Width>(
    layout: Layout,
    placement: Placement,
    h: u64,
    blocks: usize,
    k: u32,
) -> Probes<W> {
    placed_probes::<W>(layout, placement, placement, h, blocks, k)
}

/// [`probes`] as the filters call it: the cells go through
/// [`placed_cells`], with the filter's own placement `own`.
#[inline(always)]
pub(crate) fn placed_probes<W: Width>(
    layout: Layout,
    own: Placement,
    placement: Placement,
    h: u64,
    blocks: usize,
    k: u32,
) -> Probes<W> {
    probes_by::<W, _>(layout, h, blocks, k, &Placed { own, placement })
}

/// How a filter computes the cells of one half of an item: `cells(h, k)`,
/// the `k` cells of hash `h` in a block. A trait with an
/// `#[inline(always)]` method rather than a closure: a closure is inlined
/// only when the compiler judges it cheap, and one that placed a Stable
/// item's cells by Floyd's sampling was not (the Stable observe ran 20 %
/// slower in cache).
pub(crate) trait HalfCells<W: Width> {
    /// The `k` cells of hash `h` within a block.
    fn cells(&self, h: u64, k: u32) -> W::Mask;
}

/// [`placed_cells`] as a [`HalfCells`].
pub(crate) struct Placed {
    /// The filter's own placement.
    pub(crate) own: Placement,
    /// The placement in use (`own` outside tests).
    pub(crate) placement: Placement,
}

impl<W: Width> HalfCells<W> for Placed {
    #[inline(always)]
    fn cells(&self, h: u64, k: u32) -> W::Mask {
        placed_cells::<W>(self.own, self.placement, h, k)
    }
}

/// [`probes_by`] for callers whose `two` ([`Layout::TwoBlocks`]) is a
/// constant (a const generic or an associated const): the filters' hot
/// loops are instantiated once per layout, chosen once per call, so the
/// one-block loop is the code it was before layouts existed. Measured
/// against the layout read per item (AVX2, p50): Classic's insert 5.6 →
/// 8.0 ns in cache (its mask went through memory), the Stable filter's
/// observe +8 % in cache and +19 % at 1 MiB, its sweep batch +31 %. The
/// price is code size: every hot loop twice (the firmware example's
/// `.text`, which holds a Stable filter's loops for two instruction sets,
/// grew from 46 120 to 92 648 bytes; `size -A` as in the README).
#[inline(always)]
pub(crate) fn probes_fixed<W: Width, C: HalfCells<W>>(
    two: bool,
    h: u64,
    blocks: usize,
    k: u32,
    cells: &C,
) -> Probes<W> {
    let layout = if two {
        Layout::TwoBlocks
    } else {
        Layout::OneBlock
    };
    probes_by::<W, C>(layout, h, blocks, k, cells)
}

/// [`probes`] with the cells of a half given by `cells`: the first half's
/// from `h`, the second half's from `h ^ SECOND_CELLS_SALT` (for filters
/// that build their masks their own way, as [`Classic`](crate::Classic)
/// does in vector registers).
#[inline(always)]
pub(crate) fn probes_by<W: Width, C: HalfCells<W>>(
    layout: Layout,
    h: u64,
    blocks: usize,
    k: u32,
    cells: &C,
) -> Probes<W> {
    // One call site a half, the first shared by both layouts: every call
    // inlines the placement, specialized for each `k`, and a third copy
    // made the firmware's code half as large again.
    let (k1, k2) = layout.halves(k);
    let first = Probe {
        block: block_of(h, blocks),
        mask: cells.cells(h, k1),
    };
    if k2 == 0 {
        return Probes {
            first,
            second: None,
        };
    }
    let second = Probe {
        block: second_block_of(h, blocks),
        mask: cells.cells(h ^ SECOND_CELLS_SALT, k2),
    };
    if second.block == first.block {
        return Probes {
            first: Probe {
                block: first.block,
                mask: union::<W>(first.mask, second.mask),
            },
            second: None,
        };
    }
    Probes {
        first,
        second: Some(second),
    }
}

/// The probe of the second half of hash `h` under [`Layout::TwoBlocks`]
/// (`⌊k/2⌋` cells; `None` for `k <= 1`), **not** merged with the first:
/// [`probes`] merges them. A membership query (any cell zero?) may read
/// it alone, and only when the first half's cells are all set: reading a
/// cell twice changes that answer in nothing, and most negative queries
/// then skip the second half's remixes. A min-and-count or an update must
/// use [`probes`]' merged probes instead: unmerged, a cell in both halves
/// would be counted, or raised, twice.
#[inline(always)]
pub(crate) fn second_half<W: Width, C: HalfCells<W>>(
    h: u64,
    blocks: usize,
    k: u32,
    cells: &C,
) -> Option<Probe<W>> {
    let (_, k2) = Layout::TwoBlocks.halves(k);
    // Not `bool::then` with a closure: it was not inlined (12 KiB out of
    // line in the firmware).
    if k2 == 0 {
        return None;
    }
    Some(Probe {
        block: second_block_of(h, blocks),
        mask: cells.cells(h ^ SECOND_CELLS_SALT, k2),
    })
}

/// The second block of hash `h` under [`Layout::TwoBlocks`] (which
/// [`probes`] merges into the first when they are equal): the batch forms
/// prefetch it.
#[inline(always)]
pub(crate) fn second_block_of(h: u64, blocks: usize) -> usize {
    block_of(h ^ SECOND_BLOCK_SALT, blocks)
}

/// The cells of either mask.
#[inline(always)]
fn union<W: Width>(a: W::Mask, b: W::Mask) -> W::Mask {
    let (mut a, b) = (a.to_words(), b.to_words());
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
    W::Mask::from_words(&a)
}

/// [`Placement::cells`] as the filters call it: `placement` is their
/// constant `own` outside tests, and a run-time value in them (the
/// placement comparisons set others).
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn placed_cells<W: Width>(
    _own: Placement,
    placement: Placement,
    h: u64,
    k: u32,
) -> W::Mask {
    placement.cells::<W>(h, k)
}

/// In tests only the filter's own placement is inlined and any other runs
/// out of line: inlining all five schemes into every probe of every hot
/// loop made the core's test build several times larger, and slower to
/// build, than the code it tests.
#[cfg(test)]
#[inline(always)]
pub(crate) fn placed_cells<W: Width>(
    own: Placement,
    placement: Placement,
    h: u64,
    k: u32,
) -> W::Mask {
    if placement == own {
        own.cells::<W>(h, k)
    } else {
        other_cells::<W>(placement, h, k)
    }
}

/// A placement other than the filter's own, out of line (tests only).
#[cfg(test)]
#[inline(never)]
fn other_cells<W: Width>(placement: Placement, h: u64, k: u32) -> W::Mask {
    placement.cells::<W>(h, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use streambloom_kernels::{W1, W2, W4, W8, W16, W32};

    /// Every scheme but `Collapsing` gives exactly `k` cells; `Collapsing`
    /// gives between 1 and `k`.
    fn exact_k<W: Width>() {
        for place in Placement::ALL {
            for k in [1, 2, 3, 5, 7, 9, 16, W::CELLS as u32] {
                for h in 0..if cfg!(miri) { 20 } else { 2000u64 } {
                    let n = place.cells::<W>(mix64(h), k).count();
                    if place == Placement::Collapsing {
                        assert!((1..=k).contains(&n), "{place:?} k {k}: {n}");
                    } else {
                        assert_eq!(n, k, "{place:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_probe_has_k_distinct_cells() {
        exact_k::<W1>();
        exact_k::<W4>();
        exact_k::<W8>();
        exact_k::<W32>();
        assert_eq!(cells_of::<W32>(3, 16).count(), 16);
    }

    /// Floyd's and Collapsing's register forms (`k <= 8`) pick what the
    /// steps over the mask pick, for every width, `k` and hashes: the
    /// masks, so the answers and the byte images, are those of the mask
    /// form.
    fn register_forms_agree<W: Width>() {
        for k in 1..=8u32.min(W::CELLS as u32) {
            for h in 0..if cfg!(miri) { 20 } else { 3000u64 } {
                let h = mix64(h);
                assert_eq!(
                    floyd::<W>(h, k),
                    floyd_in_mask::<W>(Dice::new(h), k as usize),
                    "k {k}, h {h:#x}"
                );
                let mut f = Fields::new(h);
                let bits = W::CELLS.trailing_zeros();
                let set_one_by_one =
                    (0..k).fold(W::Mask::default(), |m, _| m.with(f.take(bits) as usize));
                assert_eq!(collapsing::<W>(h, k), set_one_by_one, "k {k}");
            }
        }
    }

    #[test]
    fn masks_built_in_registers_equal_masks_built_cell_by_cell() {
        register_forms_agree::<W1>();
        register_forms_agree::<W2>();
        register_forms_agree::<W4>();
        register_forms_agree::<W8>();
        register_forms_agree::<W16>();
        register_forms_agree::<W32>();
    }

    /// [`split_block_words`]'s cells restated one by one: the block's `N`
    /// words are the sectors; for each `j < k`, word `first + j` (mod `N`)
    /// and in it the bit named by its field, bits `log2 N + 6w` to
    /// `log2 N + 6w + 5` from the top of the remix.
    fn split_block_by_sectors<W: Width>(h: u64, k: u32) -> W::Mask {
        let n = W::CELLS / 64;
        let top = n.trailing_zeros();
        let x = mix64(h ^ CELL_SALT);
        let first = if top == 0 { 0 } else { x >> (64 - top) } as usize;
        let mut mask = W::Mask::default();
        for j in 0..k as usize {
            let word = (first + j) % n;
            let below = 64 - top - 6 * (word as u32 + 1);
            let field = (x >> below) as usize % 64;
            mask = mask.with(64 * word + field);
        }
        mask
    }

    /// The split-block cells computed word by word are the restatement's,
    /// for every width and `k` up to the block's words, over ids and uniform
    /// hashes; past that the cells are taken one by one.
    #[test]
    fn split_block_words_place_by_sectors() {
        fn same<W: Width>() -> usize {
            let mut settings = 0;
            for k in 1..=8u32 {
                if !split_block_by_words::<W>(k) {
                    continue;
                }
                settings += 1;
                for i in 0..if cfg!(miri) { 50 } else { 20_000u64 } {
                    for h in [i, mix64(i)] {
                        assert_eq!(
                            Placement::SplitBlock.cells::<W>(h, k),
                            split_block_by_sectors::<W>(h, k),
                            "{} cells, k {k}, h {h:#x}",
                            W::CELLS
                        );
                    }
                }
            }
            settings
        }
        assert_eq!(same::<W1>(), 8);
        assert_eq!(same::<W2>(), 4);
        assert_eq!(same::<W4>(), 2);
        assert_eq!(same::<W8>(), 1);
        assert_eq!(same::<W32>(), 0);
    }

    #[test]
    fn k_above_the_block_is_capped() {
        for place in Placement::ALL {
            let full = place != Placement::Collapsing;
            for (got, cells) in [
                (place.cells::<W32>(3, 17).count(), 16),
                (place.cells::<W32>(3, u32::MAX).count(), 16),
                (place.cells::<W1>(u64::MAX, 513).count(), 512),
            ] {
                assert!(got <= cells && (got == cells || !full), "{place:?}");
            }
            assert_eq!(place.cells::<W8>(3, 0).count(), 0);
        }
        let p = probe::<W8>(5, 3, u32::MAX);
        assert!(p.block < 3);
        assert_eq!(p.mask.count(), 64);
        assert_eq!(probe::<W8>(5, 0, 0).block, 0);
    }

    /// The inputs callers hold besides uniform hashes: sequential ids, and
    /// 32-bit values in the low or the high half of the `u64`.
    fn inputs(n: u64) -> [std::vec::Vec<u64>; 3] {
        [
            (0..n).collect(),
            (0..n).map(|i| mix64(i) >> 32).collect(),
            (0..n).map(|i| i << 32).collect(),
        ]
    }

    /// Checks that every bin of `hist`, a binomial count with probability
    /// `p` per item over `n` items, lies within `z*` standard deviations of
    /// its mean, `z* = √(2 ln(2·bins/α))` with `α = 10⁻⁶`: by the Gaussian
    /// tail bound `P(|Z| > z) ≤ 2e^(-z²/2)` and a union over the bins, a
    /// correct placement fails with probability below `α` (for bins whose
    /// mean is large enough for the normal approximation: callers keep it
    /// above 100).
    fn bins_within(hist: &[u32], n: u64, p: f64, what: &str) {
        bins_within_each(hist, n, |_| p, what);
    }

    /// [`bins_within`] with probability `p(i)` for bin `i`.
    fn bins_within_each(hist: &[u32], n: u64, p: impl Fn(usize) -> f64, what: &str) {
        let limit = libm::sqrt(2.0 * libm::log(2.0 * hist.len() as f64 / 1e-6));
        for (i, &h) in hist.iter().enumerate() {
            let p = p(i);
            if p >= 1.0 {
                assert_eq!(u64::from(h), n, "{what}: bin {i} is certain");
                continue;
            }
            let mean = n as f64 * p;
            assert!(mean >= 100.0, "{what}: too few items per bin");
            let sd = libm::sqrt(n as f64 * p * (1.0 - p));
            let z = (f64::from(h) - mean) / sd;
            assert!(
                z.abs() < limit,
                "{what}: bin {i} holds {h}, expected {mean:.0} (z {z:.1} past {limit:.1})"
            );
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn blocks_are_uniform() {
        let blocks = 7;
        let n = 70_000;
        for (j, hs) in inputs(n).iter().enumerate() {
            let mut hist = [0u32; 7];
            for &h in hs {
                hist[block_of(h, blocks)] += 1;
            }
            bins_within(&hist, n, 1.0 / 7.0, &std::format!("input {j}"));
        }
    }

    /// The law of each scheme's cells. Every cell of a block is among an
    /// item's cells with probability `k / cells` (`Distinct`, `Floyd`,
    /// `SplitBlock`), `1 / size` of its sector (`Sectorized`), or
    /// `1 - (1 - 1/cells)^k` (`Collapsing`). For the schemes drawing a
    /// uniform `k`-subset (`Distinct`, `Floyd`), every pair of cells is
    /// also among them with probability `k(k-1) / (cells (cells-1))`. The
    /// sizes cover [`cells_of`]'s first loop (small `k`) and its collision
    /// path (`k` close to the cells or past one word of draws), and the
    /// other schemes' remixes past one word. Each bin counts independent
    /// items, so it is binomial ([`bins_within`]).
    fn all_cells_uniform<W: Width>(place: Placement, k: u32, n: u64) {
        let c = W::CELLS;
        let mut single = std::vec![0u32; c];
        let mut pairs = std::vec![0u32; c * c];
        let mut cells = std::vec::Vec::with_capacity(k as usize);
        for i in 0..n {
            let mut m = place.cells::<W>(mix64(i ^ 0xC0FF_EE00), k);
            cells.clear();
            while let Some(x) = m.pop_lowest() {
                cells.push(x);
            }
            for (a, &x) in cells.iter().enumerate() {
                single[x] += 1;
                for &y in &cells[a + 1..] {
                    pairs[x * c + y] += 1;
                }
            }
        }
        let (kf, cf) = (f64::from(k), c as f64);
        let what = std::format!("{place:?}, {} cells, k {k}", c);
        let ku = k as usize;
        let sector_size = |x: usize| {
            let j = (0..ku).find(|&j| x < (j + 1) * c / ku).unwrap_or(0);
            (j + 1) * c / ku - j * c / ku
        };
        match place {
            Placement::Sectorized => {
                bins_within_each(&single, n, |x| 1.0 / sector_size(x) as f64, &what);
                return;
            }
            Placement::Collapsing => {
                bins_within(&single, n, -libm::expm1(kf * libm::log1p(-1.0 / cf)), &what);
                return;
            }
            Placement::SplitBlock => {
                bins_within(&single, n, kf / cf, &what);
                return;
            }
            Placement::Distinct | Placement::Floyd => bins_within(&single, n, kf / cf, &what),
        }
        let upper: std::vec::Vec<u32> = (0..c)
            .flat_map(|x| (x + 1..c).map(move |y| (x, y)))
            .map(|(x, y)| pairs[x * c + y])
            .collect();
        let pair = kf * (kf - 1.0) / (cf * (cf - 1.0));
        // Pairs of 512 or 128 cells are too many bins for a sound per-bin
        // test at this `n`; their singles are tested above.
        if n as f64 * pair >= 100.0 {
            bins_within(&upper, n, pair, &what);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn cells_are_uniform() {
        // First loop only (no collision is likely), then the collision path:
        // 12 draws of 16 cells almost always collide; 40 of 64 and 20 of 512
        // need more than one word of draws (or remix for the other schemes).
        for place in Placement::ALL {
            all_cells_uniform::<W32>(place, 2, 40_000);
            all_cells_uniform::<W32>(place, 5, 40_000);
            all_cells_uniform::<W32>(place, 12, 40_000);
            all_cells_uniform::<W8>(place, 5, 40_000);
            all_cells_uniform::<W8>(place, 40, 20_000);
            all_cells_uniform::<W4>(place, 9, 20_000);
            all_cells_uniform::<W1>(place, 20, 40_000);
            all_cells_uniform::<W1>(place, 5, 40_000);
            all_cells_uniform::<W2>(place, 3, 40_000);
        }
    }

    /// The block and the cells of an item are independent, also for
    /// inputs that are not uniform hashes: the joint histogram of (block
    /// among 8, the one cell of a `k = 1` item among 64) is uniform over its
    /// 512 bins (chi-square with 511 degrees of freedom, within 5 standard
    /// deviations `√(2·511)` of its mean).
    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn block_and_cells_are_independent() {
        let n = 102_400u64;
        let mut hs = inputs(n).to_vec();
        hs.push((0..n).map(mix64).collect());
        for (j, hs) in hs.iter().enumerate() {
            let mut hist = [0u32; 512];
            for &h in hs {
                let p = probe::<W8>(h, 8, 1);
                let mut m = p.mask;
                hist[p.block * 64 + m.pop_lowest().unwrap()] += 1;
            }
            let e = n as f64 / 512.0;
            let chi2: f64 = hist
                .iter()
                .map(|&o| (f64::from(o) - e) * (f64::from(o) - e) / e)
                .sum();
            let df = 511.0;
            assert!(
                chi2 < df + 5.0 * libm::sqrt(2.0 * df),
                "input {j}: chi-square {chi2:.0}"
            );
        }
    }

    /// A chi-square statistic of `hist` against a uniform law, and whether
    /// it lies within 5 standard deviations `√(2·df)` of its mean `df`
    /// (bins have means of at least 100, so the statistic is near its
    /// chi-square law; a correct hash fails with probability below `10⁻⁶`).
    fn uniform_chi2(hist: &[u32], what: &str) {
        let n: u64 = hist.iter().map(|&x| u64::from(x)).sum();
        let e = n as f64 / hist.len() as f64;
        assert!(e >= 100.0, "{what}: too few items per bin");
        let chi2: f64 = hist
            .iter()
            .map(|&o| (f64::from(o) - e) * (f64::from(o) - e) / e)
            .sum();
        let df = (hist.len() - 1) as f64;
        assert!(
            chi2 < df + 5.0 * libm::sqrt(2.0 * df),
            "{what}: chi-square {chi2:.0} over {df} degrees of freedom"
        );
    }

    /// With two blocks the second block is uniform and independent of the
    /// first, for ids and 32-bit values as well as uniform hashes: the
    /// joint histogram of (first block, second block) among 8 × 8 is
    /// uniform, the diagonal (the merged items) included.
    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn second_block_is_uniform_and_independent() {
        let n = 64 * 200u64;
        let mut hs = inputs(n).to_vec();
        hs.push((0..n).map(mix64).collect());
        for (j, hs) in hs.iter().enumerate() {
            let mut hist = [0u32; 64];
            for &h in hs {
                let p = probes::<W8>(Layout::TwoBlocks, Placement::Floyd, h, 8, 4);
                let second = p.second.map_or(p.first.block, |s| s.block);
                assert!(p.second.is_none_or(|s| s.block != p.first.block));
                hist[p.first.block * 8 + second] += 1;
            }
            uniform_chi2(&hist, &std::format!("input {j}"));
        }
    }

    /// The cells of the two halves are independent of each other and of
    /// the blocks: for `k = 2` (one cell a half) the joint histogram of
    /// (first cell, second cell) among 16 × 16 counters is uniform, and so
    /// is (second block among 4, second cell among 16).
    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn halves_cells_are_independent() {
        let n = 256 * 200u64;
        let mut hs = inputs(n).to_vec();
        hs.push((0..n).map(mix64).collect());
        for (j, hs) in hs.iter().enumerate() {
            let (mut cells, mut block_cell) = ([0u32; 256], [0u32; 64]);
            for &h in hs {
                let p = probes::<W32>(Layout::TwoBlocks, Placement::Floyd, h, 1 << 20, 2);
                let Some(s) = p.second else { continue };
                let (mut a, mut b) = (p.first.mask, s.mask);
                let (a, b) = (a.pop_lowest().unwrap(), b.pop_lowest().unwrap());
                cells[a * 16 + b] += 1;
                block_cell[(s.block & 3) * 16 + b] += 1;
            }
            uniform_chi2(&cells, &std::format!("input {j}: cells"));
            uniform_chi2(&block_cell, &std::format!("input {j}: block and cell"));
        }
    }

    /// The halves' sizes: `⌈k/2⌉` and `⌊k/2⌋` distinct cells for every
    /// exact placement, the first probe of two blocks in the one-block
    /// block, and one probe for `k = 1` or one block.
    #[test]
    fn halves_have_their_sizes() {
        for place in Placement::ALL {
            if place == Placement::Collapsing {
                continue;
            }
            for k in [1u32, 2, 3, 5, 8, 16] {
                let (k1, k2) = Layout::TwoBlocks.halves(k);
                for i in 0..if cfg!(miri) { 5 } else { 500u64 } {
                    let h = mix64(i);
                    let one = probes::<W8>(Layout::OneBlock, place, h, 1 << 16, k);
                    assert_eq!(one.first, probe_with::<W8>(place, h, 1 << 16, k));
                    assert!(one.second.is_none());
                    let two = probes::<W8>(Layout::TwoBlocks, place, h, 1 << 16, k);
                    assert_eq!(two.first.block, one.first.block);
                    assert_eq!(two.first.mask.count(), k1, "{place:?} k {k}");
                    match two.second {
                        Some(s) => assert_eq!(s.mask.count(), k2, "{place:?} k {k}"),
                        None => assert_eq!(k2, 0, "{place:?} k {k}"),
                    }
                }
            }
        }
    }

    /// Halves in one block merge into one probe whose cells are the union
    /// of the two halves' (so no cell is touched twice), as a one-block
    /// filter forces for every item.
    #[test]
    fn halves_in_one_block_merge() {
        for i in 0..if cfg!(miri) { 5 } else { 1000u64 } {
            let h = mix64(i);
            let merged = probes::<W8>(Layout::TwoBlocks, Placement::Floyd, h, 1, 6);
            assert_eq!(merged.first.block, 0);
            assert!(merged.second.is_none());
            let apart = probes::<W8>(Layout::TwoBlocks, Placement::Floyd, h, 1 << 30, 6);
            let (a, b) = (apart.first.mask, apart.second.unwrap().mask);
            for mut half in [a, b] {
                while let Some(c) = half.pop_lowest() {
                    assert!(merged.first.mask.contains(c));
                }
            }
            let (mut union, mut n) = (merged.first.mask, 0);
            while let Some(c) = union.pop_lowest() {
                assert!(a.contains(c) || b.contains(c));
                n += 1;
            }
            assert!((3..=6).contains(&n));
        }
    }
}
