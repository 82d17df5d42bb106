//! The default [`BuildHasher`]: one type in every configuration, whose
//! algorithm depends on the features.
//!
//! With `alloc` (and so with `std`, the default) it is ahash. ahash's
//! `no_std` build declares `extern crate alloc`, which makes a binary need a
//! global allocator even if nothing allocates; without `alloc` it is
//! therefore foldhash (its quality variant), which needs neither `std` nor
//! `alloc`. One type rather than a type alias that changes with a feature:
//! features are unified across a dependency graph, so a crate written
//! against one alias could stop compiling when another crate turned the
//! feature on.

use core::fmt;
use core::hash::{BuildHasher, Hasher};

use super::mix64;

#[cfg(feature = "alloc")]
type State = ahash::RandomState;
#[cfg(feature = "alloc")]
type StateHasher = ahash::AHasher;
#[cfg(not(feature = "alloc"))]
type State = foldhash::quality::FixedState;
#[cfg(not(feature = "alloc"))]
type StateHasher = foldhash::quality::FoldHasher<'static>;

/// The hash algorithm behind [`DefaultHasher`] in this build.
const ALGORITHM: &str = if cfg!(feature = "alloc") {
    "ahash"
} else {
    "foldhash-quality"
};

/// The default hasher of every filter: seeded keyed hashing to 64 bits,
/// without an allocator.
///
/// Build it with [`seeded_hasher`] (or [`random_hasher`] with `std`). It is
/// ahash with the `alloc` feature (on by default) and foldhash without it.
/// Its output therefore depends on the features, and with ahash on the
/// CPU (AES instructions or not), the compile flags and the crate versions:
/// it is for filters that live in one process, **not for filters written
/// to bytes and read by another build or machine**. Such filters need a
/// portable hasher of their own, passed as their `H` type parameter.
///
/// Its `Debug` output names the algorithm, never the seeds.
///
/// ```
/// use core::hash::BuildHasher;
/// use streambloom::hash::{seeded_hasher, DefaultHasher};
/// let h: DefaultHasher = seeded_hasher(7);
/// assert_eq!(h.hash_one(42u32), h.clone().hash_one(42u32));
/// ```
#[derive(Clone)]
pub struct DefaultHasher(State);

impl BuildHasher for DefaultHasher {
    type Hasher = KeyHasher;

    #[inline]
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(self.0.build_hasher())
    }
}

impl fmt::Debug for DefaultHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultHasher")
            .field("algorithm", &ALGORITHM)
            .finish_non_exhaustive()
    }
}

/// The [`Hasher`] a [`DefaultHasher`] builds: the state of one key's hash.
///
/// ```
/// use core::hash::{BuildHasher, Hasher};
/// let mut h = streambloom::hash::seeded_hasher(7).build_hasher();
/// h.write_u32(42);
/// assert_eq!(h.finish(), streambloom::hash::seeded_hasher(7).hash_one(42u32));
/// ```
#[derive(Clone)]
pub struct KeyHasher(StateHasher);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0.write_u8(i);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.0.write_u16(i);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.0.write_u32(i);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0.write_u64(i);
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.0.write_u128(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.0.write_usize(i);
    }
}

impl fmt::Debug for KeyHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyHasher")
            .field("algorithm", &ALGORITHM)
            .finish_non_exhaustive()
    }
}

/// A [`DefaultHasher`] whose seeds are all derived from `seed`
/// (SplitMix64), so a filter built twice with one seed hashes identically
/// in one build, with or without `alloc`.
///
/// An attacker who can guess the seed can craft keys that all land in one
/// block (HashDoS): for keys chosen by others, use [`random_hasher`], or
/// without `std` a seed from a hardware random source.
///
/// ```
/// use core::hash::BuildHasher;
/// let a = streambloom::hash::seeded_hasher(42);
/// let b = streambloom::hash::seeded_hasher(42);
/// assert_eq!(a.hash_one("x"), b.hash_one("x"));
/// ```
pub fn seeded_hasher(seed: u64) -> DefaultHasher {
    DefaultHasher(seeded_state(splitmix(seed)))
}

/// Four seeds derived from `seed` by SplitMix64.
fn splitmix(seed: u64) -> [u64; 4] {
    let mut s = seed;
    core::array::from_fn(|_| {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(s)
    })
}

#[cfg(feature = "alloc")]
fn seeded_state(seeds: [u64; 4]) -> State {
    seeded_ahash(seeds)
}

#[cfg(not(feature = "alloc"))]
fn seeded_state(seeds: [u64; 4]) -> State {
    seeded_foldhash(seeds)
}

#[cfg(feature = "alloc")]
fn seeded_ahash(seeds: [u64; 4]) -> ahash::RandomState {
    let [a, b, c, d] = seeds;
    ahash::RandomState::with_seeds(a, b, c, d)
}

/// foldhash keeps one shared seed (a `'static` reference, fixed here, as
/// no allocator can make one per filter) and a 64-bit per-hasher seed.
#[cfg(any(test, not(feature = "alloc")))]
fn seeded_foldhash(seeds: [u64; 4]) -> foldhash::quality::FixedState {
    foldhash::quality::FixedState::with_seed(seeds[0])
}

/// A [`DefaultHasher`] with random seeds from the operating system: the
/// choice for filters that see keys chosen by others (HashDoS: see
/// [`seeded_hasher`]).
///
/// ```
/// use core::hash::BuildHasher;
/// let h = streambloom::hash::random_hasher();
/// assert_eq!(h.hash_one("x"), h.hash_one("x"));
/// ```
#[cfg(feature = "std")]
pub fn random_hasher() -> DefaultHasher {
    DefaultHasher(ahash::RandomState::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    /// Hashes of `n` keys of both kinds filters see: small consecutive
    /// integers (ids, counters) and short strings.
    fn sample(h: &impl BuildHasher, n: u32) -> impl Iterator<Item = u64> + '_ {
        (0..n / 2)
            .map(|i| h.hash_one(i))
            .chain((0..n / 2).map(|i| h.hash_one(format!("10.0.{}.{}:443", i >> 8, i & 255))))
    }

    /// Every bit of the hash is set in half the keys, within 5 standard
    /// errors of Binomial(n, 1/2), and the top 6 bits (which pick a block
    /// among 64 by multiply-shift) are uniform: chi-square with 63 degrees
    /// of freedom under mean + 5 sd (63 + 5·√126 ≈ 119).
    fn assert_uniform(h: &impl BuildHasher) {
        let n = 64_000u32;
        let mut ones = [0u32; 64];
        let mut top = [0u32; 64];
        for x in sample(h, n) {
            for (bit, c) in ones.iter_mut().enumerate() {
                *c += ((x >> bit) & 1) as u32;
            }
            top[(x >> 58) as usize] += 1;
        }
        let half = f64::from(n) / 2.0;
        let sd = libm::sqrt(f64::from(n) / 4.0);
        for (bit, &c) in ones.iter().enumerate() {
            assert!(
                (f64::from(c) - half).abs() < 5.0 * sd,
                "bit {bit} set {c} times of {n}"
            );
        }
        let expect = f64::from(n) / 64.0;
        let chi2: f64 = top
            .iter()
            .map(|&c| (f64::from(c) - expect) * (f64::from(c) - expect) / expect)
            .sum();
        assert!(
            chi2 < 63.0 + 5.0 * libm::sqrt(126.0),
            "chi2 {chi2}: {top:?}"
        );
    }

    /// Same seeds, same hashes; another seed, other hashes (two 64-bit
    /// hashes of a good hasher agree with probability 2^-64).
    fn assert_seeded<H: BuildHasher>(make: impl Fn([u64; 4]) -> H) {
        let (a, b, c) = (make(splitmix(1)), make(splitmix(1)), make(splitmix(2)));
        for key in ["", "x", "10.0.0.1:443"] {
            assert_eq!(a.hash_one(key), b.hash_one(key));
            assert_ne!(a.hash_one(key), c.hash_one(key));
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn foldhash_backend_is_uniform() {
        assert_uniform(&seeded_foldhash(splitmix(3)));
    }

    #[test]
    #[cfg(feature = "alloc")]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn ahash_backend_is_uniform() {
        assert_uniform(&seeded_ahash(splitmix(3)));
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn default_hasher_is_uniform() {
        assert_uniform(&seeded_hasher(3));
    }

    #[test]
    fn seeds_determine_the_hash() {
        assert_seeded(seeded_foldhash);
        #[cfg(feature = "alloc")]
        assert_seeded(seeded_ahash);
        assert_eq!(
            seeded_hasher(9).hash_one(5u8),
            seeded_hasher(9).hash_one(5u8)
        );
        assert_ne!(
            seeded_hasher(9).hash_one(5u8),
            seeded_hasher(10).hash_one(5u8)
        );
    }

    #[test]
    fn key_hasher_is_the_built_state() {
        let b = seeded_hasher(4);
        let mut h = b.build_hasher();
        h.write(b"ab");
        h.write_u8(1);
        h.write_u16(2);
        h.write_u32(3);
        h.write_u64(4);
        h.write_u128(5);
        h.write_usize(6);
        let mut inner = b.0.build_hasher();
        inner.write(b"ab");
        inner.write_u8(1);
        inner.write_u16(2);
        inner.write_u32(3);
        inner.write_u64(4);
        inner.write_u128(5);
        inner.write_usize(6);
        assert_eq!(h.finish(), inner.finish());
    }

    #[test]
    fn debug_names_the_algorithm_not_the_seeds() {
        let s = format!("{:?}", seeded_hasher(0x1234_5678));
        assert_eq!(
            s,
            format!("DefaultHasher {{ algorithm: {ALGORITHM:?}, .. }}")
        );
        let k = format!("{:?}", seeded_hasher(1).build_hasher());
        assert_eq!(k, format!("KeyHasher {{ algorithm: {ALGORITHM:?}, .. }}"));
    }
}
