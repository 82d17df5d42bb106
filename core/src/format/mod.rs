//! The byte format: a filter written on one machine and read on another,
//! saved and restored after a restart, or shipped to be merged.
//!
//! Only a filter whose hasher is [`PortableHash`] can be written or read
//! (checked at compile time: the methods exist only for such filters), so a
//! key hashes to the same cells wherever the bytes go. Every integer is
//! little-endian on every target; a cell block is already little-endian
//! ([`Block`]), so blocks are copied as they are.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 4 | magic, `SBLM` |
//! | 4 | 2 | format version ([`Kind::version`]: [`VERSION`], 2 for APBF) |
//! | 6 | 1 | filter kind ([`Kind`]) |
//! | 7 | 1 | cell width in bits (1 to 32) |
//! | 8 | 4 | hash algorithm ([`PortableHash::ID`]) |
//! | 12 | 4 | reserved, zero |
//! | 16 | 16 | the hasher's two seed words ([`PortableHash::seeds`]) |
//! | 32 | 8 | length `n` of the filter's fields |
//! | 40 | 8 | block count `b` |
//! | 48 | `n` | the filter's fields: every parameter, then the state that makes its future (sweep pointer, PRNG state, clock, insert count, ...), in the order its `Persisted` impl writes them |
//! | `48 + n` | to a multiple of 64 | zero padding |
//! | | `64 b` | the blocks |
//!
//! The padding puts the blocks at a multiple of 64 bytes from the start, so
//! a buffer aligned to 64 bytes can be used in place: each filter's
//! `view_bytes` reads the fields and works on the blocks where they are
//! (bytemuck's checked casts; no copy, no allocator).
//!
//! Reading checks everything and returns
//! [`Error::Malformed`](crate::Error::Malformed) for bytes
//! that are not an encoding (short input, wrong magic, unknown version,
//! another kind, width or hasher, refused seeds, unknown tags, lengths that
//! overflow, non-zero padding, trailing bytes, misaligned blocks) and the
//! constructor's own error for parameters it would refuse. A filter that
//! loads answers as the written one did, and continues the stream exactly
//! as it would have (PRNG included).
//!
//! With the `serde` feature every owned filter with a portable hasher is
//! `Serialize` and `Deserialize` as these bytes.
//!
//! ```
//! use streambloom::format::Encode;
//! use streambloom::hash::PortableHasher;
//! use streambloom::stable::{Eviction, StableBloom, StableParams};
//! use streambloom::{Layout, W8};
//! let params = StableParams { cells: 4096, bits_per_cell: 3, k: 3, p: 4, eviction: Eviction::Random, layout: Layout::OneBlock };
//! let mut f = StableBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(7))?;
//! f.insert("a");
//! let bytes = f.to_bytes();
//! let mut g = StableBloom::<W8, _, PortableHasher>::from_bytes(&bytes)?;
//! assert!(g.contains("a"));
//! assert_eq!(f.observe("b"), g.observe("b")); // the same eviction draws
//! assert_eq!(f, g);
//! # Ok::<(), streambloom::Error>(())
//! ```

#[cfg(feature = "serde")]
mod serde;
mod wire;

pub use wire::Encode;
#[cfg(feature = "alloc")]
pub(crate) use wire::decode_owned;
pub(crate) use wire::{Fields, Sink, decode_view, index_of, sealed::Persisted};

#[cfg(doc)]
use crate::hash::PortableHash;
use core::fmt;
use streambloom_kernels::Block;

/// The first four bytes of every encoded filter.
pub const MAGIC: [u8; 4] = *b"SBLM";

/// The format version this build writes and reads for every kind but
/// [`Kind::Apbf`] ([`Kind::version`]).
pub const VERSION: u16 = 1;

/// Bytes before the filter's fields.
pub(crate) const HEADER: usize = 48;

/// Which filter an encoding holds.
///
/// ```
/// use streambloom::format::Kind;
/// assert_eq!(Kind::from_tag(2), Some(Kind::Stable));
/// assert_eq!(Kind::Stable.tag(), 2);
/// assert_eq!(Kind::from_tag(0), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// [`crate::Classic`].
    Classic,
    /// [`crate::StableBloom`].
    Stable,
    /// [`crate::ImportanceBloom`].
    Importance,
    /// [`crate::ReservoirBloom`].
    Reservoir,
    /// [`crate::Spectral`] on [`crate::spectral::Blocked`] counters.
    Spectral,
    /// [`crate::TimingBloom`].
    Timing,
    /// [`crate::Apbf`].
    Apbf,
}

impl Kind {
    const ALL: [Kind; 7] = [
        Kind::Classic,
        Kind::Stable,
        Kind::Importance,
        Kind::Reservoir,
        Kind::Spectral,
        Kind::Timing,
        Kind::Apbf,
    ];

    /// The kind's byte in the header.
    pub const fn tag(self) -> u8 {
        match self {
            Kind::Classic => 1,
            Kind::Stable => 2,
            Kind::Importance => 3,
            Kind::Reservoir => 4,
            Kind::Spectral => 5,
            Kind::Timing => 6,
            Kind::Apbf => 7,
        }
    }

    /// The format version of this kind's encodings, which this build
    /// writes and the only one it reads: [`VERSION`], except 2 for
    /// [`Kind::Apbf`], whose bit positions changed on 2026-11-28 (a
    /// version-1 APBF would load and answer for other keys, so it is
    /// refused with [`Malformed::Version`]).
    ///
    /// ```
    /// use streambloom::format::{Kind, VERSION};
    /// assert_eq!(Kind::Classic.version(), VERSION);
    /// assert_eq!(Kind::Apbf.version(), 2);
    /// ```
    pub const fn version(self) -> u16 {
        match self {
            Kind::Apbf => 2,
            _ => VERSION,
        }
    }

    /// The kind whose byte is `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.tag() == tag)
    }
}

/// Why bytes are not the encoding of the filter asked for
/// ([`Error::Malformed`](crate::Error::Malformed)).
///
/// ```
/// use streambloom::format::{Malformed, MAGIC};
/// use streambloom::hash::PortableHasher;
/// use streambloom::{Classic, Error};
/// let e = Classic::<_, PortableHasher>::from_bytes(b"SBL").unwrap_err();
/// assert_eq!(e, Error::Malformed(Malformed::Short { needed: 48, found: 3 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// The input ends early.
    Short {
        /// Bytes the header says the encoding has (or the header's own
        /// size, if it is cut).
        needed: usize,
        /// Bytes given.
        found: usize,
    },
    /// The first four bytes are not [`MAGIC`].
    Magic,
    /// A version this build does not read.
    Version {
        /// The version in the bytes.
        found: u16,
    },
    /// Another filter's encoding, or an unknown kind.
    Kind {
        /// The kind asked for.
        expected: Kind,
        /// The kind byte found.
        found: u8,
    },
    /// Cells of another width.
    Width {
        /// The width asked for, in bits.
        expected: u8,
        /// The width in the bytes.
        found: u8,
    },
    /// Written with another hash algorithm.
    Hasher {
        /// [`PortableHash::ID`] of the hasher asked for.
        expected: u32,
        /// The algorithm in the bytes.
        found: u32,
    },
    /// Seeds the hasher refuses ([`PortableHash::from_seeds`]).
    Seeds,
    /// A field holds a value no encoder writes (an unknown tag, a flag
    /// other than 0 or 1, non-zero padding, a field length that does not
    /// match the fields).
    Field {
        /// The field.
        name: &'static str,
    },
    /// A length or count does not fit this target's `usize`, or the
    /// encoding's size overflows.
    Overflow {
        /// The field.
        name: &'static str,
    },
    /// Bytes after the encoding's end.
    Trailing {
        /// How many.
        extra: usize,
    },
    /// `view_bytes` needs the blocks 64-byte aligned in memory (the
    /// buffer's start aligned to 64).
    Misaligned,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::Short { needed, found } => {
                write!(f, "input too short: {found} bytes of {needed}")
            }
            Malformed::Magic => write!(f, "not a streambloom filter (wrong magic)"),
            Malformed::Version { found } => {
                write!(
                    f,
                    "format version {found}, not the one this build reads for this kind"
                )
            }
            Malformed::Kind { expected, found } => match Kind::from_tag(*found) {
                Some(k) => write!(f, "a {k:?} filter, not a {expected:?} filter"),
                None => write!(f, "unknown filter kind {found}"),
            },
            Malformed::Width { expected, found } => {
                write!(f, "cells of {found} bits, not {expected}")
            }
            Malformed::Hasher { expected, found } => {
                write!(f, "hash algorithm {found}, not {expected}")
            }
            Malformed::Seeds => write!(f, "seeds the hasher refuses"),
            Malformed::Field { name } => write!(f, "field `{name}` holds an invalid value"),
            Malformed::Overflow { name } => write!(f, "field `{name}` overflows"),
            Malformed::Trailing { extra } => write!(f, "{extra} bytes after the end"),
            Malformed::Misaligned => write!(f, "blocks not aligned to 64 bytes"),
        }
    }
}

/// Bytes the blocks of a filter need.
pub(crate) fn block_bytes(blocks: &[Block]) -> &[u8] {
    bytemuck::cast_slice(blocks)
}

#[cfg(test)]
mod tests;
