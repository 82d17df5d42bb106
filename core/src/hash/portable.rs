//! The portable hasher: a key hashes to the same 64 bits on every target,
//! in every build, so a filter can be written to bytes on one machine and
//! read, queried or merged on another ([`crate::format`]).
//!
//! [`DefaultHasher`](super::DefaultHasher) cannot do that: ahash's output
//! changes with the CPU (AES instructions or not), the compile flags and
//! the crate version, and its documentation rules out persisted hashes;
//! foldhash likewise promises no stable output. [`PortableHasher`] is
//! XXH3-64 (through `xxhash-rust`), an algorithm fixed by a published
//! specification, with one explicit 64-bit seed.

use core::fmt;
use core::hash::{BuildHasher, Hasher};

use xxhash_rust::xxh3::{Xxh3, xxh3_64_with_seed};

/// A [`BuildHasher`] whose output is the same on every target and in every
/// build: the only hashers a filter can be written to bytes with
/// ([`crate::format`]).
///
/// `ID` names the algorithm in the byte format; [`seeds`](Self::seeds)
/// and [`from_seeds`](Self::from_seeds) carry its keys through it.
/// Implement it only for a hasher whose output is fixed by a specification
/// (independent of CPU, endianness, pointer width, flags and version) and
/// whose keys are all in `seeds`: a filter loaded with another hasher's
/// bytes would find none of its items.
///
/// ```
/// use streambloom::hash::{PortableHash, PortableHasher};
/// let h = PortableHasher::new(7);
/// assert_eq!(PortableHasher::from_seeds(h.seeds()), Some(h));
/// assert_eq!(PortableHasher::ID, 1);
/// ```
pub trait PortableHash: BuildHasher + Clone {
    /// The algorithm's identifier in the byte format (1 is XXH3-64).
    const ID: u32;
    /// The algorithm's name, for messages.
    const NAME: &'static str;
    /// The hasher's keys, as the byte format records them.
    fn seeds(&self) -> [u64; 2];
    /// The hasher with these keys; `None` if they are not keys of this
    /// algorithm (a stored filter whose seeds are refused does not load).
    fn from_seeds(seeds: [u64; 2]) -> Option<Self>;
}

/// XXH3-64 with a 64-bit seed: the portable hasher.
///
/// **What is hashed.** A key `K: Hash` feeds its bytes to the hasher
/// through [`Hash::hash`](core::hash::Hash::hash); the hash is XXH3-64, under the seed, of the
/// concatenation of those bytes. Rust's integer `Hash` impls write
/// native-endian bytes and `usize` changes size between targets, so the
/// hasher writes every integer little-endian and `usize`/`isize` as 64
/// bits: `42u32` hashes as the bytes `2a 00 00 00` everywhere. A key type
/// whose own `Hash` impl differs between targets (a pointer, a value
/// computed from `cfg`) stays non-portable; strings, byte slices, integers
/// and tuples of them are portable. **Arrays and slices of integers wider
/// than a byte are not**: std hashes them (`Hash::hash_slice`) as one
/// `write` of their in-memory, native-endian bytes, which the hasher cannot
/// tell from a byte string (found by this module's test under Miri on
/// big-endian s390x). Hash such keys element by element, or as bytes in an
/// order you fix (`to_le_bytes`).
///
/// Pick the seed as for any hasher: a filter that sees keys chosen by
/// others needs a seed they cannot guess (HashDoS, [`crate::hash`]).
///
/// ```
/// use core::hash::BuildHasher;
/// use streambloom::hash::PortableHasher;
/// let h = PortableHasher::new(0);
/// // XXH3-64 of the empty input, seed 0, from the specification's test vectors.
/// assert_eq!(h.hash_one(()), 0x2D06_8005_38D3_94C2);
/// // Integers hash as their little-endian bytes on every target.
/// assert_eq!(h.hash_one(42u32), xxhash_rust::xxh3::xxh3_64(&[42, 0, 0, 0]));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortableHasher {
    seed: u64,
}

impl PortableHasher {
    /// XXH3-64 under `seed`.
    ///
    /// ```
    /// use core::hash::BuildHasher;
    /// use streambloom::hash::PortableHasher;
    /// assert_ne!(PortableHasher::new(1).hash_one("x"), PortableHasher::new(2).hash_one("x"));
    /// ```
    pub const fn new(seed: u64) -> PortableHasher {
        PortableHasher { seed }
    }

    /// The seed.
    ///
    /// ```
    /// assert_eq!(streambloom::hash::PortableHasher::new(9).seed(), 9);
    /// ```
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

/// Seeds are secrets (HashDoS): `Debug` names the algorithm only.
impl fmt::Debug for PortableHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortableHasher")
            .field("algorithm", &Self::NAME)
            .finish_non_exhaustive()
    }
}

impl PortableHash for PortableHasher {
    const ID: u32 = 1;
    const NAME: &'static str = "xxh3-64";

    fn seeds(&self) -> [u64; 2] {
        [self.seed, 0]
    }

    /// XXH3 has one 64-bit seed: the second word must be 0.
    fn from_seeds(seeds: [u64; 2]) -> Option<Self> {
        (seeds[1] == 0).then_some(PortableHasher::new(seeds[0]))
    }
}

impl BuildHasher for PortableHasher {
    type Hasher = PortableKeyHasher;

    #[inline]
    fn build_hasher(&self) -> PortableKeyHasher {
        PortableKeyHasher {
            seed: self.seed,
            buf: [0; INLINE],
            len: 0,
            stream: None,
        }
    }
}

/// Keys up to this many bytes (every integer key, most string keys) hash
/// in one call from an inline buffer; longer ones stream.
const INLINE: usize = 64;

/// The [`Hasher`] of a [`PortableHasher`]: one key's state.
///
/// ```
/// use core::hash::{BuildHasher, Hasher};
/// use streambloom::hash::PortableHasher;
/// let mut h = PortableHasher::new(3).build_hasher();
/// h.write(b"abc");
/// assert_eq!(h.finish(), xxhash_rust::xxh3::xxh3_64_with_seed(b"abc", 3));
/// ```
#[derive(Clone)]
pub struct PortableKeyHasher {
    seed: u64,
    buf: [u8; INLINE],
    len: usize,
    /// The streaming state, once the key outgrows `buf`.
    stream: Option<Xxh3>,
}

impl fmt::Debug for PortableKeyHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortableKeyHasher")
            .field("algorithm", &PortableHasher::NAME)
            .finish_non_exhaustive()
    }
}

impl Hasher for PortableKeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        match &self.stream {
            Some(s) => s.digest(),
            None => xxh3_64_with_seed(&self.buf[..self.len], self.seed),
        }
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if let Some(s) = &mut self.stream {
            s.update(bytes);
            return;
        }
        let end = self.len + bytes.len();
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
            self.len = end;
        } else {
            let mut s = Xxh3::with_seed(self.seed);
            s.update(&self.buf[..self.len]);
            s.update(bytes);
            self.stream = Some(s);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write(&[i]);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.write(&i.to_le_bytes());
    }

    /// As 64 bits, so 32- and 64-bit targets agree.
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }

    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }

    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }

    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    /// As 64 bits, so 32- and 64-bit targets agree.
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// What the hasher computes is XXH3-64 of the key's little-endian
    /// bytes, inline or streamed, whatever the write pattern.
    #[test]
    fn hash_is_xxh3_of_the_little_endian_bytes() {
        let h = PortableHasher::new(99);
        assert_eq!(
            h.hash_one(0x0102_0304u32),
            xxh3_64_with_seed(&[4, 3, 2, 1], 99)
        );
        assert_eq!(
            h.hash_one(5usize),
            xxh3_64_with_seed(&5u64.to_le_bytes(), 99)
        );
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        for split in [0, 1, 63, 64, 65, 150, 300] {
            let mut s = h.build_hasher();
            s.write(&data[..split]);
            for b in &data[split..] {
                s.write_u8(*b);
            }
            assert_eq!(s.finish(), xxh3_64_with_seed(&data, 99), "split {split}");
        }
    }

    #[test]
    fn seeds_round_trip_and_refuse_a_second_word() {
        let h = PortableHasher::new(u64::MAX);
        assert_eq!(PortableHasher::from_seeds(h.seeds()), Some(h));
        assert_eq!(PortableHasher::from_seeds([1, 1]), None);
        assert!(!std::format!("{h:?}").contains(&std::format!("{}", u64::MAX)));
    }
}
