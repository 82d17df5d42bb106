//! [`ImportanceBloom`] in the byte format ([`crate::format`]). Its fields:
//! `cells` (u64), `bits_per_cell` (u32), `k` (u32), `p` (u64), the eviction
//! (a byte: 0 random, 1 sweep, 2 by value), the layout (0 one block, 1 two
//! blocks), the insert policy (0 M-insert, 1 M/2-insert then
//! `important_from` as u32, 2 Imp-insert), the importance map (0 linear
//! then `top` as u32, 1 classes then their count and thresholds as u32,
//! 2 a function: nothing, as code cannot be written), then the state: the
//! sweep pointer (u64) and the PRNG's 32 bytes.
//!
//! A filter whose map is a function is read back with the function
//! ([`ImportanceBloom::from_bytes_with_map`]); the bytes record that it
//! was one, and a class table is checked against the one recorded.

use super::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use crate::format::{Fields, Kind, Persisted, Sink, decode_view, index_of};
use crate::hash::{Layout, PortableHash};
use crate::stable::StableBloom;
use crate::store::Storage;
use crate::{Block, Error, Result, Width};

/// The evictions in the order of their bytes (a new one takes the next).
const EVICTIONS: [Eviction; 4] = [
    Eviction::Random,
    Eviction::Sweep,
    Eviction::ByValue,
    Eviction::Interleaved,
];

impl<W: Width, S: Storage, H: PortableHash> Persisted for ImportanceBloom<W, S, H> {
    const KIND: Kind = Kind::Importance;
    const WIDTH: u8 = W::BITS as u8;
    type Hasher = H;

    fn hasher(&self) -> &H {
        self.stable.hasher()
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = &self.params;
        out.usize(p.cells);
        out.u32(p.bits_per_cell);
        out.u32(p.k);
        out.usize(p.p);
        out.u8(index_of(&p.eviction, &EVICTIONS));
        out.u8(index_of(&p.layout, &Layout::ALL));
        match p.insert {
            Insert::Max => out.u8(0),
            Insert::TwoClass { important_from } => {
                out.u8(1);
                out.u32(important_from);
            }
            Insert::ByImportance => out.u8(2),
        }
        match p.map {
            ImportanceMap::Linear { top } => {
                out.u8(0);
                out.u32(top);
            }
            ImportanceMap::Classes(bounds) => {
                out.u8(1);
                out.usize(bounds.len());
                for &b in bounds {
                    out.u32(b);
                }
            }
            ImportanceMap::Function(_) => out.u8(2),
        }
        self.stable.put_state(out);
    }

    fn blocks(&self) -> &[Block] {
        self.stable.blocks()
    }
}

/// Reads the parameters; the map is `map` if given (checked against the
/// recorded one as far as bytes can say), the recorded linear map
/// otherwise.
fn params(f: &mut Fields<'_>, map: Option<ImportanceMap>) -> Result<ImportanceParams> {
    let (cells, bits_per_cell, k, p) = (
        f.usize("cells")?,
        f.u32("bits_per_cell")?,
        f.u32("k")?,
        f.usize("p")?,
    );
    let eviction = f.pick("eviction", &EVICTIONS)?;
    let layout = f.pick("layout", &Layout::ALL)?;
    let insert = match f.pick("insert", &[0, 1, 2])? {
        0 => Insert::Max,
        1 => Insert::TwoClass {
            important_from: f.u32("important_from")?,
        },
        _ => Insert::ByImportance,
    };
    let mismatch = Error::Incompatible {
        what: "importance map (the bytes record another one)",
    };
    let map = match (f.pick("map", &[0, 1, 2])?, map) {
        (0, None) => ImportanceMap::Linear { top: f.u32("top")? },
        (0, Some(m @ ImportanceMap::Linear { top })) if f.u32("top")? == top => m,
        (1, None) | (2, None) => {
            return Err(Error::Incompatible {
                what: "importance map: the bytes hold a class table or a function; pass it to from_bytes_with_map",
            });
        }
        (1, Some(m @ ImportanceMap::Classes(bounds))) => {
            if f.usize("classes")? != bounds.len() {
                return Err(mismatch);
            }
            for &b in bounds {
                if f.u32("class")? != b {
                    return Err(mismatch);
                }
            }
            m
        }
        (2, Some(m @ ImportanceMap::Function(_))) => m,
        _ => return Err(mismatch),
    };
    Ok(ImportanceParams {
        cells,
        bits_per_cell,
        k,
        p,
        eviction,
        layout,
        insert,
        map,
    })
}

impl<W: Width, S: Storage, H: PortableHash> ImportanceBloom<W, S, H> {
    fn decode(
        f: &mut Fields<'_>,
        map: Option<ImportanceMap>,
        storage: S,
        hasher: H,
    ) -> Result<Self> {
        let params = params(f, map)?;
        Self::from_stable(params, |stable| {
            StableBloom::decode(stable, f, storage, hasher)
        })
    }
}

#[cfg(feature = "alloc")]
impl<W: Width, H: PortableHash> ImportanceBloom<W, crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory, sweep pointer and PRNG included. A filter with a class
    /// table or a function map needs it back:
    /// [`from_bytes_with_map`](Self::from_bytes_with_map).
    /// [`Error::Malformed`](crate::Error::Malformed) if the bytes are not an
    /// importance-aware filter of `W` cells hashed with `H`; the
    /// constructor's error for parameters it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Layout, W8};
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::ByValue,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(2))?;
    /// f.observe("a", 9)?;
    /// let mut g = ImportanceBloom::<W8, _, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f.observe("b", 3)?, g.observe("b", 3)?);
    /// assert_eq!(f.blocks(), g.blocks());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(
            bytes,
            Kind::Importance,
            W::BITS as u8,
            |f, blocks, hasher| Self::decode(f, None, blocks, hasher),
        )
    }

    /// [`from_bytes`](Self::from_bytes) with the filter's importance map,
    /// which must be the kind recorded (a linear map's `top` and a class
    /// table's thresholds are checked; a function cannot be, so it must be
    /// the writer's). [`Error::Incompatible`] for another map.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Layout, W8};
    /// let map = ImportanceMap::Function(|i| i.min(7));
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map };
    /// let f = ImportanceBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(2))?;
    /// let bytes = f.to_bytes();
    /// assert!(ImportanceBloom::<W8, _, PortableHasher>::from_bytes(&bytes).is_err());
    /// let g = ImportanceBloom::<W8, _, PortableHasher>::from_bytes_with_map(&bytes, map)?;
    /// assert_eq!(f.blocks(), g.blocks());
    /// let other = ImportanceMap::Classes(&[3, 5]);
    /// assert!(ImportanceBloom::<W8, _, PortableHasher>::from_bytes_with_map(&bytes, other).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes_with_map(bytes: &[u8], map: ImportanceMap) -> Result<Self> {
        crate::format::decode_owned(
            bytes,
            Kind::Importance,
            W::BITS as u8,
            |f, blocks, hasher| Self::decode(f, Some(map), blocks, hasher),
        )
    }
}

impl<'a, W: Width, H: PortableHash> ImportanceBloom<W, &'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned), with
    /// the recorded linear map. Its cells change in `bytes`; its sweep
    /// pointer and PRNG do not. Errors as
    /// [`from_bytes`](ImportanceBloom::from_bytes), and
    /// [`Malformed::Misaligned`](crate::format::Malformed::Misaligned).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Block, Layout, W8};
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::Max, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(2))?;
    /// f.observe("a", 1)?;
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = ImportanceBloom::<W8, _, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert!(g.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(
            bytes,
            Kind::Importance,
            W::BITS as u8,
            |f, blocks, hasher| Self::decode(f, None, blocks, hasher),
        )
    }

    /// [`view_bytes`](Self::view_bytes) with the filter's importance map
    /// (as [`from_bytes_with_map`](ImportanceBloom::from_bytes_with_map)).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
    /// use streambloom::{Block, Layout, W8};
    /// let map = ImportanceMap::Classes(&[4, 8]);
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map };
    /// let mut f = ImportanceBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(2))?;
    /// f.observe("a", 9)?;
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = ImportanceBloom::<W8, _, PortableHasher>::view_bytes_with_map(bytemuck::cast_slice_mut(&mut buf), map)?;
    /// assert!(g.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes_with_map(bytes: &'a mut [u8], map: ImportanceMap) -> Result<Self> {
        decode_view(
            bytes,
            Kind::Importance,
            W::BITS as u8,
            |f, blocks, hasher| Self::decode(f, Some(map), blocks, hasher),
        )
    }
}

/// Cell-wise max, as [`StableBloom`]'s merge: an item keeps the level of
/// its most important recording on either side. Errors: other parameters
/// (insert policy, eviction, map kind), or another hasher or seed.
///
/// ```
/// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
/// use streambloom::{Layout, Merge, W8};
/// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
/// let mut a = ImportanceBloom::<W8>::new(params, 1)?;
/// let mut b = ImportanceBloom::<W8>::new(params, 1)?;
/// b.observe("b", 10)?;
/// a.merge(&b)?;
/// assert!(a.contains("b"));
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<W: Width, S: Storage, H: core::hash::BuildHasher> crate::Merge for ImportanceBloom<W, S, H> {
    fn merge(&mut self, other: &Self) -> Result<()> {
        let (a, b) = (&self.params, &other.params);
        let same_map = matches!(
            (a.map, b.map),
            (ImportanceMap::Linear { top: x }, ImportanceMap::Linear { top: y }) if x == y
        ) || matches!(
            (a.map, b.map),
            (ImportanceMap::Classes(x), ImportanceMap::Classes(y)) if x == y
        ) || matches!(
            (a.map, b.map),
            (ImportanceMap::Function(x), ImportanceMap::Function(y)) if core::ptr::fn_addr_eq(x, y)
        );
        crate::merge::require(
            a.insert == b.insert && a.eviction == b.eviction && same_map,
            "importance policies or map",
        )?;
        self.stable.merge(&other.stable)
    }
}
