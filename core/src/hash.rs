//! Hashing keys and placing them in blocks.
//!
//! A key is hashed once to 64 bits with a [`BuildHasher`] the filter owns
//! ([`DefaultHasher`]). **Blocked hashing** then turns that one hash into one
//! block and `k` cells inside it, so an item costs one cache line whatever
//! `k` is:
//!
//! - the block is `⌊mix64(h) · blocks / 2^64⌋` (a remix of `h`, then
//!   multiply-shift range reduction: no `%`);
//! - the cells are drawn `log2(cells per block)` bits at a time from a
//!   second, independent remix of `h`, re-mixing when the bits run out, and
//!   **drawn without repetition**: a repeated index is drawn again, so an
//!   item always has exactly `k` distinct cells. (Letting repeats collapse
//!   would cost accuracy: 5 cells drawn from a 64-cell block repeat 15 % of
//!   the time.)
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
//! them craft keys that all land in one block (HashDoS), so a filter exposed
//! to untrusted keys should use secret random seeds ([`random_hasher`] with
//! `std`). [`DefaultHasher`]'s output also changes with the features (ahash
//! with `alloc`, foldhash without), the CPU and crate versions: it is for
//! filters that live in one process, not for filters written to bytes and
//! read elsewhere.

use core::hash::{BuildHasher, Hash};
use streambloom_kernels::{Mask, Width};

mod hasher;
#[cfg(feature = "std")]
pub use hasher::random_hasher;
pub use hasher::{seeded_hasher, DefaultHasher, KeyHasher};

/// Hashes `key` to the 64 bits every `*_hash` method takes.
#[inline]
pub fn hash_key<H: BuildHasher, K: Hash + ?Sized>(hasher: &H, key: &K) -> u64 {
    hasher.hash_one(key)
}

/// A strong 64-bit finaliser (the SplitMix64 / Stafford "mix13" output
/// function): every input bit affects every output bit.
#[inline(always)]
pub const fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Where an item lives: one block and the cells selected in it.
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

/// The [`Probe`] of hash `h` in a filter of `blocks` blocks with `k` cells
/// per item: [`block_of`] and [`cells_of`], so any 64-bit value is a valid
/// `h` (sequential ids and 32-bit hashes included), and `k` is capped at
/// `W::CELLS`.
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
    Probe {
        block: block_of(h, blocks),
        mask: cells_of::<W>(h, k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streambloom_kernels::{W1, W32, W4, W8};

    fn exact_k<W: Width>() {
        for k in [1, 2, 5, 16] {
            for h in 0..if cfg!(miri) { 20 } else { 2000u64 } {
                let m = cells_of::<W>(mix64(h), k);
                assert_eq!(m.count(), k);
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

    #[test]
    fn k_above_the_block_is_capped() {
        assert_eq!(cells_of::<W32>(3, 17).count(), 16);
        assert_eq!(cells_of::<W32>(3, u32::MAX).count(), 16);
        assert_eq!(cells_of::<W1>(u64::MAX, 513).count(), 512);
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
        let mean = n as f64 * p;
        assert!(mean >= 100.0, "{what}: too few items per bin");
        let sd = libm::sqrt(n as f64 * p * (1.0 - p));
        let limit = libm::sqrt(2.0 * libm::log(2.0 * hist.len() as f64 / 1e-6));
        for (i, &h) in hist.iter().enumerate() {
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

    /// Every cell of a block is among an item's `k` with probability
    /// `k / cells`, and every pair of cells with probability
    /// `k(k-1) / (cells (cells-1))`, for the first loop of [`cells_of`]
    /// (small `k`) and for its collision path (`k` close to the cells or
    /// past one word of draws). Each bin counts independent items, so it is
    /// binomial ([`bins_within`]).
    fn all_cells_uniform<W: Width>(k: u32, n: u64) {
        let c = W::CELLS;
        let mut single = std::vec![0u32; c];
        let mut pairs = std::vec![0u32; c * c];
        let mut cells = std::vec::Vec::with_capacity(k as usize);
        for i in 0..n {
            let mut m = cells_of::<W>(mix64(i ^ 0xC0FF_EE00), k);
            cells.clear();
            while let Some(x) = m.pop_lowest() {
                cells.push(x);
            }
            assert_eq!(cells.len(), k as usize);
            for (a, &x) in cells.iter().enumerate() {
                single[x] += 1;
                for &y in &cells[a + 1..] {
                    pairs[x * c + y] += 1;
                }
            }
        }
        let (kf, cf) = (f64::from(k), c as f64);
        let what = std::format!("{} cells, k {k}", c);
        bins_within(&single, n, kf / cf, &what);
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
        // need more than one word of draws.
        all_cells_uniform::<W32>(2, 40_000);
        all_cells_uniform::<W32>(12, 40_000);
        all_cells_uniform::<W8>(5, 40_000);
        all_cells_uniform::<W8>(40, 20_000);
        all_cells_uniform::<W4>(9, 20_000);
        all_cells_uniform::<W1>(20, 20_000);
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
}
