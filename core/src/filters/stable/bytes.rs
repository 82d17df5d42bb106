//! [`StableBloom`] in the byte format ([`crate::format`]). Its fields:
//! `cells` (u64), `bits_per_cell` (u32), `k` (u32), `p` (u64), the eviction
//! (a byte: 0 random, 1 sweep, 2 interleaved), the layout (0 one block, 1 two blocks),
//! then its state: the sweep pointer (u64) and the eviction PRNG's 32 bytes,
//! so a loaded filter evicts exactly what the written one would have.

use super::{Eviction, StableBloom, StableParams};
use crate::format::{Fields, Kind, Persisted, Sink, decode_view, index_of};
use crate::hash::{Layout, PortableHash};
use crate::rng::Rng;
use crate::store::Storage;
use crate::{Block, Result, Width};

/// The evictions in the order of their bytes.
const EVICTIONS: [Eviction; 3] = [Eviction::Random, Eviction::Sweep, Eviction::Interleaved];

impl<W: Width, S: Storage, H: PortableHash> Persisted for StableBloom<W, S, H> {
    const KIND: Kind = Kind::Stable;
    const WIDTH: u8 = W::BITS as u8;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = &self.params;
        out.usize(p.cells);
        out.u32(p.bits_per_cell);
        out.u32(p.k);
        out.usize(p.p);
        out.u8(index_of(&p.eviction, &EVICTIONS));
        out.u8(index_of(&p.layout, &Layout::ALL));
        self.put_state(out);
    }

    fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

impl<W: Width, S: Storage, H: PortableHash> StableBloom<W, S, H> {
    /// The sweep pointer and the PRNG: the state after the parameters
    /// (the importance-aware filter's too).
    pub(crate) fn put_state(&self, out: &mut dyn Sink) {
        out.usize(self.cursor);
        out.put(&self.rng.state());
    }

    /// [`StableBloom::restore`] with the state [`put_state`](Self::put_state)
    /// wrote.
    pub(crate) fn decode(
        params: StableParams,
        f: &mut Fields<'_>,
        storage: S,
        hasher: H,
    ) -> Result<Self> {
        let cursor = f.usize("cursor")?;
        let rng = Rng::from_state(f.array32("rng")?);
        let mut s = StableBloom::restore(params, storage, hasher, cursor)?;
        s.rng = rng;
        Ok(s)
    }
}

fn params(f: &mut Fields<'_>) -> Result<StableParams> {
    Ok(StableParams {
        cells: f.usize("cells")?,
        bits_per_cell: f.u32("bits_per_cell")?,
        k: f.u32("k")?,
        p: f.usize("p")?,
        eviction: f.pick("eviction", &EVICTIONS)?,
        layout: f.pick("layout", &Layout::ALL)?,
    })
}

#[cfg(feature = "alloc")]
impl<W: Width, H: PortableHash> StableBloom<W, crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory, sweep pointer and PRNG included.
    /// [`Error::Malformed`](crate::Error::Malformed) if the bytes are not a
    /// stable filter of `W` cells hashed with `H`; the constructor's error
    /// for parameters it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
    /// use streambloom::W4;
    /// let params = StableParams { cells: 4096, bits_per_cell: 3, k: 3, p: 4, eviction: Eviction::Sweep, layout: Layout::OneBlock };
    /// let mut f = StableBloom::<W4, _, _>::with_hasher(params, PortableHasher::new(1))?;
    /// f.observe("a");
    /// let mut g = StableBloom::<W4, _, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// assert_eq!(f, g);
    /// assert_eq!(f.observe("a"), g.observe("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Stable, W::BITS as u8, |f, blocks, hasher| {
            StableBloom::decode(params(f)?, f, blocks, hasher)
        })
    }
}

impl<'a, W: Width, H: PortableHash> StableBloom<W, &'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned). Its
    /// cells change in `bytes`; its sweep pointer and PRNG do not (write
    /// the filter again with [`Encode`](crate::format::Encode) to keep
    /// them). Errors as [`from_bytes`](StableBloom::from_bytes), and
    /// [`Malformed::Misaligned`](crate::format::Malformed::Misaligned).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
    /// use streambloom::{Block, W8};
    /// let params = StableParams { cells: 4096, bits_per_cell: 3, k: 3, p: 4, eviction: Eviction::Random, layout: Layout::OneBlock };
    /// let mut f = StableBloom::<W8, _, _>::with_hasher(params, PortableHasher::new(1))?;
    /// f.insert("a");
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = StableBloom::<W8, _, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert!(g.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Stable, W::BITS as u8, |f, blocks, hasher| {
            StableBloom::decode(params(f)?, f, blocks, hasher)
        })
    }
}

/// Cell-wise max (see [`crate::merge`]): every item either filter holds
/// stays held, at its freshest. The sweep pointer and PRNG stay this
/// filter's. Errors: other parameters, or another hasher or seed.
///
/// ```
/// use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
/// use streambloom::{Merge, W4};
/// let params = StableParams { cells: 4096, bits_per_cell: 3, k: 3, p: 4, eviction: Eviction::Random, layout: Layout::OneBlock };
/// let mut a = StableBloom::<W4>::new(params, 1)?;
/// let mut b = StableBloom::<W4>::new(params, 1)?;
/// b.insert("b");
/// a.merge(&b)?;
/// assert!(a.contains("b"));
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<W: Width, S: Storage, H: core::hash::BuildHasher> crate::Merge for StableBloom<W, S, H> {
    fn merge(&mut self, other: &Self) -> Result<()> {
        crate::merge::require(self.params == other.params, "parameters")?;
        crate::merge::require(
            crate::merge::fingerprint(&self.hasher) == crate::merge::fingerprint(&other.hasher),
            "hasher or seeds",
        )?;
        crate::merge::combine_cells::<W>(self.cells.blocks_mut(), other.cells.blocks(), u32::max);
        Ok(())
    }
}
