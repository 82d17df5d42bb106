//! Hashing keys and placing them in blocks.
//!
//! A key is hashed once to 64 bits with a [`BuildHasher`] the filter owns
//! ([`DefaultHasher`]). **Blocked hashing** then turns that one hash into one
//! block and `k` cells inside it, so an item costs one cache line whatever
//! `k` is:
//!
//! - the block is `⌊h · blocks / 2^64⌋` (multiply-shift range reduction: no
//!   `%`, and it reads the hash's high bits);
//! - the cells are drawn `log2(cells per block)` bits at a time from a remix
//!   of `h`, re-mixing when the bits run out, and **drawn without
//!   repetition**: a repeated index is drawn again, so an item always has
//!   exactly `k` distinct cells. (Letting repeats collapse would cost
//!   accuracy: 5 cells drawn from a 64-cell block repeat 15 % of the time.)
//!
//! Every keyed operation of every filter has a `*_hash(u64)` form taking
//! this 64-bit hash directly, for callers who already hold one.
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

/// The block of hash `h` among `blocks` blocks (multiply-shift).
#[inline(always)]
pub fn block_of(h: u64, blocks: usize) -> usize {
    ((u128::from(h) * blocks as u128) >> 64) as usize
}

/// The `k` distinct cells of hash `h` within a block of `W::CELLS` cells.
/// `k` must be at most `W::CELLS` (filters validate this at construction).
///
/// The first `min(k, 64 / log2(cells))` draws come from one remix of `h` in
/// a loop whose trip count depends only on `k`, so the branch predictor
/// learns it; only when draws collided (or `k` needs more bits) does a
/// second loop draw more, from fresh remixes.
#[inline(always)]
pub fn cells_of<W: Width>(h: u64, k: u32) -> W::Mask {
    let bits = W::CELLS.trailing_zeros();
    let per_word = 64 / bits;
    let mut mask = W::Mask::default();
    let mut x = mix64(h);
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
            x = mix64(h ^ round.wrapping_mul(0xD6E8_FEB8_6659_FD93));
            left = per_word;
        }
        n += u32::from(mask.insert((x >> (64 - bits)) as usize));
        x <<= bits;
        left -= 1;
    }
    mask
}

/// The [`Probe`] of hash `h` in a filter of `blocks` blocks with `k` cells
/// per item.
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
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn blocks_are_uniform() {
        let blocks = 7;
        let mut hist = [0u32; 7];
        let n = 70_000u32;
        for i in 0..u64::from(n) {
            let b = block_of(mix64(i), blocks);
            hist[b] += 1;
        }
        // Binomial(n, 1/7): sd ~ 92.6; allow 5 sd.
        for h in hist {
            assert!((f64::from(h) - 10_000.0).abs() < 5.0 * 92.6, "{hist:?}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn cells_are_uniform() {
        let mut hist = [0u32; 64];
        let n = 64_000u64;
        for i in 0..n {
            let mut m = cells_of::<W8>(mix64(i), 1);
            hist[m.pop_lowest().unwrap()] += 1;
        }
        // Binomial(n, 1/64): mean 1000, sd ~ 31.4; allow 5 sd.
        for h in hist {
            assert!((f64::from(h) - 1000.0).abs() < 5.0 * 31.4, "{hist:?}");
        }
    }
}
