//! [`Classic`] in the byte format ([`crate::format`]). Its fields: `cells`
//! (u64), `k` (u32), the layout (a byte: 0 one block, 1 two blocks). A
//! classic filter has no other state: its bits are its future.

use super::{Classic, ClassicParams};
use crate::format::{Fields, Kind, Persisted, Sink, decode_view, index_of};
use crate::hash::{Layout, PortableHash};
use crate::store::Storage;
use crate::{Block, Result};

impl<S: Storage, H: PortableHash> Persisted for Classic<S, H> {
    const KIND: Kind = Kind::Classic;
    const WIDTH: u8 = 1;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = self.params();
        out.usize(p.cells);
        out.u32(p.k);
        out.u8(index_of(&p.layout, &Layout::ALL));
    }

    fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

fn params(f: &mut Fields<'_>) -> Result<ClassicParams> {
    Ok(ClassicParams {
        cells: f.usize("cells")?,
        k: f.u32("k")?,
        layout: f.pick("layout", &Layout::ALL)?,
    })
}

#[cfg(feature = "alloc")]
impl<H: PortableHash> Classic<crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory. [`Error::Malformed`](crate::Error::Malformed) if the bytes are
    /// not a classic filter hashed with `H`, and the constructor's error
    /// for parameters it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Classic, ClassicParams};
    /// let mut f = Classic::with_hasher(ClassicParams::new(4096, 5), PortableHasher::new(3))?;
    /// f.insert("a");
    /// let g = Classic::<_, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Classic, 1, |f, blocks, hasher| {
            Classic::restore(params(f)?, blocks, hasher)
        })
    }
}

impl<'a, H: PortableHash> Classic<&'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator): queries and inserts read and write
    /// `bytes`, which stays a valid encoding of the filter. `bytes` must
    /// start 64-byte aligned ([`Malformed::Misaligned`] otherwise); other
    /// errors as [`from_bytes`](Classic::from_bytes).
    ///
    /// [`Malformed::Misaligned`]: crate::format::Malformed::Misaligned
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::{Block, Classic, ClassicParams};
    /// let f = Classic::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(1))?;
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let mut g = Classic::<_, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// g.insert("x");
    /// let h = Classic::<_, PortableHasher>::from_bytes(bytemuck::cast_slice(&buf))?;
    /// assert!(h.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Classic, 1, |f, blocks, hasher| {
            Classic::restore(params(f)?, blocks, hasher)
        })
    }
}

/// Bitwise OR (see [`crate::merge`]): the filter of both streams, exactly.
/// Errors: other parameters, or another hasher or seed.
///
/// ```
/// use streambloom::{Classic, ClassicParams, Merge};
/// let mut a = Classic::new(ClassicParams::new(4096, 4), 1)?;
/// let mut b = Classic::new(ClassicParams::new(4096, 4), 1)?;
/// b.insert("b");
/// a.merge(&b)?;
/// assert!(a.contains("b"));
/// assert!(a.merge(&Classic::new(ClassicParams::new(4096, 5), 1)?).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<S: Storage, H: core::hash::BuildHasher> crate::Merge for Classic<S, H> {
    fn merge(&mut self, other: &Self) -> Result<()> {
        crate::merge::require(self.params() == other.params(), "parameters")?;
        crate::merge::require(
            crate::merge::fingerprint(&self.hasher) == crate::merge::fingerprint(&other.hasher),
            "hasher or seeds",
        )?;
        crate::merge::combine_cells::<crate::W1>(
            self.cells.blocks_mut(),
            other.cells.blocks(),
            |a, b| a | b,
        );
        Ok(())
    }
}
