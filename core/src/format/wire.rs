//! Writing and reading the format's bytes: the header, little-endian
//! fields, padding and blocks ([`super`] describes the layout).

use super::{HEADER, Kind, MAGIC, Malformed, block_bytes};
use crate::hash::PortableHash;
use crate::{Error, Result};
use streambloom_kernels::Block;

pub(crate) use sealed::Sink;

/// `v`'s index in `all` (an enum's variants in a fixed order), the byte
/// [`Fields::pick`] reads back.
pub(crate) fn index_of<T: PartialEq>(v: &T, all: &[T]) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(all.len()) as u8
}

/// Counts bytes.
struct Count(usize);

impl Sink for Count {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// Fills a slice from the start; `overflow` if it was too short.
struct Slice<'a> {
    out: &'a mut [u8],
    at: usize,
    overflow: bool,
}

impl Sink for Slice<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        match self.out.get_mut(self.at..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.at = end;
            }
            None => self.overflow = true,
        }
    }
}

#[cfg(feature = "alloc")]
impl Sink for alloc::vec::Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// An `io::Write` and the first error it returned.
#[cfg(feature = "std")]
struct Io<W> {
    w: W,
    error: Option<std::io::Error>,
}

#[cfg(feature = "std")]
impl<W: std::io::Write> Sink for Io<W> {
    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.w.write_all(bytes)
        {
            self.error = Some(e);
        }
    }
}

pub(crate) mod sealed {
    use crate::format::Kind;
    use crate::hash::PortableHash;
    use streambloom_kernels::Block;

    /// Where encoded bytes go: a counter (for the length), a slice, a
    /// `Vec`, an `io::Write`. Writing cannot fail here; a sink that can
    /// remembers its error.
    pub trait Sink {
        /// Appends `bytes`.
        fn put(&mut self, bytes: &[u8]);

        fn u8(&mut self, v: u8) {
            self.put(&[v]);
        }

        fn u16(&mut self, v: u16) {
            self.put(&v.to_le_bytes());
        }

        fn u32(&mut self, v: u32) {
            self.put(&v.to_le_bytes());
        }

        fn u64(&mut self, v: u64) {
            self.put(&v.to_le_bytes());
        }

        /// As 64 bits on every target.
        fn usize(&mut self, v: usize) {
            self.u64(v as u64);
        }

        /// Its IEEE 754 bits.
        fn f64(&mut self, v: f64) {
            self.u64(v.to_bits());
        }

        fn bool(&mut self, v: bool) {
            self.u8(u8::from(v));
        }
    }

    /// What a filter gives the format: its kind, cell width, hasher,
    /// fields and blocks. Implemented in each filter's `bytes` module.
    pub trait Persisted {
        /// The filter's kind byte.
        const KIND: Kind;
        /// Its cell width in bits.
        const WIDTH: u8;
        /// Its hasher.
        type Hasher: PortableHash;
        /// The hasher the bytes record.
        fn hasher(&self) -> &Self::Hasher;
        /// Writes every parameter and the state, in the order the
        /// filter's decoder reads them.
        fn put_fields(&self, out: &mut dyn Sink);
        /// The cell blocks, as they are in memory.
        fn blocks(&self) -> &[Block];
    }
}

/// Writing a filter in the byte format ([`crate::format`]): implemented by
/// every filter whose hasher is [`PortableHash`], and only by those.
///
/// A filter hashing with the default hasher cannot be written, because its
/// bytes would mean nothing to another build:
///
/// ```compile_fail
/// use streambloom::format::Encode;
/// use streambloom::{Classic, ClassicParams};
/// let f = Classic::new(ClassicParams::new(1024, 3), 1).unwrap();
/// let bytes = f.to_bytes();
/// ```
pub trait Encode: sealed::Persisted {
    /// The encoding's length in bytes.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Classic, ClassicParams};
    /// let f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
    /// assert_eq!(f.encoded_len(), 64 + 2 * 64); // header and fields, then two blocks
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    fn encoded_len(&self) -> usize {
        let mut n = Count(0);
        emit(self, &mut n);
        n.0
    }

    /// Writes the encoding at the start of `out`, without an allocator;
    /// returns its length. [`Error::Length`] (and `out` unspecified) if
    /// `out` is shorter than [`encoded_len`](Self::encoded_len).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Block, Classic, ClassicParams};
    /// let mut f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
    /// f.insert("x");
    /// // A buffer of blocks is 64-byte aligned, so it can be viewed in place.
    /// let mut buf = [Block::ZERO; 3];
    /// let n = f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = Classic::<_, PortableHasher>::view_bytes(&mut bytemuck::cast_slice_mut(&mut buf)[..n])?;
    /// assert!(g.contains("x"));
    /// assert!(f.encode_into(&mut [0u8; 10]).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    fn encode_into(&self, out: &mut [u8]) -> Result<usize> {
        let needed = self.encoded_len();
        let found = out.len();
        let mut s = Slice {
            out,
            at: 0,
            overflow: false,
        };
        emit(self, &mut s);
        if s.overflow {
            return Err(Error::Length {
                name: "out",
                expected: needed,
                found,
            });
        }
        Ok(s.at)
    }

    /// The encoding in a new `Vec`.
    ///
    /// ```
    /// use streambloom::format::{Encode, MAGIC};
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Classic, ClassicParams};
    /// let f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
    /// assert_eq!(f.to_bytes()[..4], MAGIC);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        let mut v = alloc::vec::Vec::with_capacity(self.encoded_len());
        emit(self, &mut v);
        v
    }

    /// Writes the encoding to `w`, the blocks straight from the filter's
    /// memory (no copy of the filter is made).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Classic, ClassicParams};
    /// let f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
    /// let mut out = Vec::new();
    /// f.write_to(&mut out).unwrap();
    /// assert_eq!(out, f.to_bytes());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[cfg(feature = "std")]
    fn write_to<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        let mut io = Io { w, error: None };
        emit(self, &mut io);
        match io.error {
            Some(e) => Err(e),
            None => io.w.flush(),
        }
    }
}

impl<T: sealed::Persisted> Encode for T {}

/// Writes `f`'s encoding to `out`.
fn emit<T: sealed::Persisted + ?Sized>(f: &T, out: &mut dyn Sink) {
    let mut fields = Count(0);
    f.put_fields(&mut fields);
    let blocks = f.blocks();
    out.put(&MAGIC);
    out.u16(T::KIND.version());
    out.u8(T::KIND.tag());
    out.u8(T::WIDTH);
    out.u32(<T::Hasher as PortableHash>::ID);
    out.u32(0);
    for s in f.hasher().seeds() {
        out.u64(s);
    }
    out.usize(fields.0);
    out.usize(blocks.len());
    f.put_fields(out);
    out.put(&[0; 64][..padding(HEADER + fields.0)]);
    out.put(block_bytes(blocks));
}

/// Zero bytes after `len` bytes up to the next multiple of 64.
fn padding(len: usize) -> usize {
    (64 - len % 64) % 64
}

/// A filter's fields as read back: each read names its field, so a
/// short or invalid field is reported by name.
pub struct Fields<'a> {
    bytes: &'a [u8],
}

impl Fields<'_> {
    fn take<const N: usize>(&mut self, name: &'static str) -> Result<[u8; N]> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or(Error::Malformed(Malformed::Field { name }))?;
        self.bytes = rest;
        Ok(*head)
    }

    pub(crate) fn u8(&mut self, name: &'static str) -> Result<u8> {
        Ok(self.take::<1>(name)?[0])
    }

    pub(crate) fn u32(&mut self, name: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(name)?))
    }

    pub(crate) fn u64(&mut self, name: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(name)?))
    }

    /// A 64-bit count that must fit this target's `usize`.
    pub(crate) fn usize(&mut self, name: &'static str) -> Result<usize> {
        usize::try_from(self.u64(name)?).map_err(|_| Error::Malformed(Malformed::Overflow { name }))
    }

    pub(crate) fn f64(&mut self, name: &'static str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(name)?))
    }

    pub(crate) fn bool(&mut self, name: &'static str) -> Result<bool> {
        match self.u8(name)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::Malformed(Malformed::Field { name })),
        }
    }

    /// The element of `all` whose index the next byte holds
    /// ([`index_of`]).
    pub(crate) fn pick<T: Copy>(&mut self, name: &'static str, all: &[T]) -> Result<T> {
        let i = usize::from(self.u8(name)?);
        all.get(i)
            .copied()
            .ok_or(Error::Malformed(Malformed::Field { name }))
    }

    pub(crate) fn array32(&mut self, name: &'static str) -> Result<[u8; 32]> {
        self.take(name)
    }

    /// Every field read: none left over.
    fn finish(self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(Error::Malformed(Malformed::Field {
                name: "fields length",
            }))
        }
    }
}

/// The header read and checked against what the caller asked for.
struct Header<H> {
    hasher: H,
    /// Where the fields are.
    fields: core::ops::Range<usize>,
    /// Where the blocks start, and how many there are.
    at: usize,
    #[cfg_attr(
        not(feature = "alloc"),
        allow(dead_code, reason = "read by decode_owned only")
    )]
    blocks: usize,
}

fn malformed<T>(m: Malformed) -> Result<T> {
    Err(Error::Malformed(m))
}

fn header<H: PortableHash>(bytes: &[u8], kind: Kind, width: u8) -> Result<Header<H>> {
    let Some(head) = bytes.first_chunk::<HEADER>() else {
        return malformed(Malformed::Short {
            needed: HEADER,
            found: bytes.len(),
        });
    };
    let u32_at = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let u64_at = |i: usize| u64::from(u32_at(i)) | (u64::from(u32_at(i + 4)) << 32);
    if head[..4] != MAGIC {
        return malformed(Malformed::Magic);
    }
    let version = u16::from_le_bytes([head[4], head[5]]);
    // The version the bytes' own kind is written at, so that another
    // kind's encoding is refused as that (below), not as a version.
    let expected = Kind::from_tag(head[6]).map_or(kind.version(), Kind::version);
    if version != expected {
        return malformed(Malformed::Version { found: version });
    }
    if head[6] != kind.tag() {
        return malformed(Malformed::Kind {
            expected: kind,
            found: head[6],
        });
    }
    if head[7] != width {
        return malformed(Malformed::Width {
            expected: width,
            found: head[7],
        });
    }
    if u32_at(8) != H::ID {
        return malformed(Malformed::Hasher {
            expected: H::ID,
            found: u32_at(8),
        });
    }
    if u32_at(12) != 0 {
        return malformed(Malformed::Field { name: "reserved" });
    }
    let Some(hasher) = H::from_seeds([u64_at(16), u64_at(24)]) else {
        return malformed(Malformed::Seeds);
    };
    let overflow = |name| Error::Malformed(Malformed::Overflow { name });
    let fields_len = usize::try_from(u64_at(32)).map_err(|_| overflow("fields length"))?;
    let blocks = usize::try_from(u64_at(40)).map_err(|_| overflow("block count"))?;
    let at = fields_len
        .checked_add(HEADER + 63)
        .map(|n| n / 64 * 64)
        .ok_or(overflow("fields length"))?;
    let total = blocks
        .checked_mul(Block::BYTES)
        .and_then(|b| b.checked_add(at))
        .ok_or(overflow("block count"))?;
    if bytes.len() < total {
        return malformed(Malformed::Short {
            needed: total,
            found: bytes.len(),
        });
    }
    if bytes.len() > total {
        return malformed(Malformed::Trailing {
            extra: bytes.len() - total,
        });
    }
    let fields = HEADER..HEADER + fields_len;
    if bytes[fields.end..at].iter().any(|&b| b != 0) {
        return malformed(Malformed::Field { name: "padding" });
    }
    Ok(Header {
        hasher,
        fields,
        at,
        blocks,
    })
}

/// Reads an encoding of `kind` with `width`-bit cells into owned blocks
/// and hands the fields, blocks and hasher to `build`, the filter's
/// decoder; checks that it read every field.
#[cfg(feature = "alloc")]
pub(crate) fn decode_owned<H: PortableHash, T>(
    bytes: &[u8],
    kind: Kind,
    width: u8,
    build: impl FnOnce(&mut Fields<'_>, alloc::vec::Vec<Block>, H) -> Result<T>,
) -> Result<T> {
    let h = header::<H>(bytes, kind, width)?;
    let mut blocks = crate::store::zeroed(h.blocks)?;
    bytemuck::cast_slice_mut::<Block, u8>(&mut blocks).copy_from_slice(&bytes[h.at..]);
    let mut fields = Fields {
        bytes: &bytes[h.fields],
    };
    let f = build(&mut fields, blocks, h.hasher)?;
    fields.finish()?;
    Ok(f)
}

/// [`decode_owned`] over the blocks where they are in `bytes`, which must
/// be 64-byte aligned at their start: no copy, no allocator.
pub(crate) fn decode_view<'a, H: PortableHash, T>(
    bytes: &'a mut [u8],
    kind: Kind,
    width: u8,
    build: impl FnOnce(&mut Fields<'_>, &'a mut [Block], H) -> Result<T>,
) -> Result<T> {
    let h = header::<H>(bytes, kind, width)?;
    let (head, tail) = bytes.split_at_mut(h.at);
    let blocks = bytemuck::try_cast_slice_mut::<u8, Block>(tail)
        .map_err(|_| Error::Malformed(Malformed::Misaligned))?;
    let mut fields = Fields {
        bytes: &head[h.fields],
    };
    let f = build(&mut fields, blocks, h.hasher)?;
    fields.finish()?;
    Ok(f)
}
