//! [`ReservoirBloom`] in the byte format ([`crate::format`]). Its fields:
//! `bits` (u64), `k` (u32), `p_star` (f64 bits), `reset_during_fill` (a
//! byte, 0 or 1), the reset (0 own block, 1 uniform), the layout (0 one
//! block, 1 two blocks), then its state: the stream position and the
//! insertion count (u64 each) and the PRNG's 32 bytes, so a loaded filter
//! samples exactly what the written one would have.

use super::{ReservoirBloom, ReservoirParams, Reset};
use crate::format::{Fields, Kind, Persisted, Sink, decode_view, index_of};
use crate::hash::{Layout, PortableHash};
use crate::rng::Rng;
use crate::store::Storage;
use crate::{Block, Result};

/// The resets in the order of their bytes.
const RESETS: [Reset; 2] = [Reset::OwnBlock, Reset::Uniform];

impl<S: Storage, H: PortableHash> Persisted for ReservoirBloom<S, H> {
    const KIND: Kind = Kind::Reservoir;
    const WIDTH: u8 = 1;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = &self.params;
        out.usize(p.bits);
        out.u32(p.k);
        out.f64(p.p_star);
        out.bool(p.reset_during_fill);
        out.u8(index_of(&p.reset, &RESETS));
        out.u8(index_of(&p.layout, &Layout::ALL));
        out.u64(self.stream.position);
        out.u64(self.stream.insertions);
        out.put(&self.rng.state());
    }

    fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

impl<S: Storage, H: PortableHash> ReservoirBloom<S, H> {
    fn decode(f: &mut Fields<'_>, storage: S, hasher: H) -> Result<Self> {
        let params = ReservoirParams {
            bits: f.usize("bits")?,
            k: f.u32("k")?,
            p_star: f.f64("p_star")?,
            reset_during_fill: f.bool("reset_during_fill")?,
            reset: f.pick("reset", &RESETS)?,
            layout: f.pick("layout", &Layout::ALL)?,
        };
        let position = f.u64("position")?;
        let insertions = f.u64("insertions")?;
        if insertions > position {
            return Err(crate::Error::param(
                "insertions",
                insertions,
                "at most the stream position (items observed)",
            ));
        }
        let rng = Rng::from_state(f.array32("rng")?);
        let mut r = ReservoirBloom::restore(params, storage, hasher, position)?;
        r.stream.insertions = insertions;
        r.rng = rng;
        Ok(r)
    }
}

#[cfg(feature = "alloc")]
impl<H: PortableHash> ReservoirBloom<crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory, stream position and PRNG included.
    /// [`Error::Malformed`](crate::Error::Malformed) if the bytes are not a
    /// reservoir-sampling filter hashed with `H`; the constructor's error
    /// for parameters it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// let mut f = ReservoirBloom::with_hasher(ReservoirParams::new(4096, 3), PortableHasher::new(4))?;
    /// for i in 0..1000u32 { f.observe(&i); }
    /// let mut g = ReservoirBloom::<_, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// for i in 1000..2000u32 { assert_eq!(f.observe(&i), g.observe(&i)); }
    /// assert_eq!(f.blocks(), g.blocks());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Reservoir, 1, Self::decode)
    }
}

impl<'a, H: PortableHash> ReservoirBloom<&'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned). Its
    /// bits change in `bytes`; its position and PRNG do not.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
    /// use streambloom::Block;
    /// let mut f = ReservoirBloom::with_hasher(ReservoirParams::new(4096, 3), PortableHasher::new(4))?;
    /// f.observe("a");
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = ReservoirBloom::<_, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert_eq!(g.contains("a"), f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Reservoir, 1, Self::decode)
    }
}

/// Refused: the filter holds a reservoir sample of its stream, and the
/// union of two samples is not a sample of the combined stream (its bits
/// would be about twice as full, and the sampling probabilities of §3
/// would no longer hold). Always [`Error::Incompatible`](crate::Error::Incompatible).
///
/// ```
/// use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
/// use streambloom::{Error, Merge};
/// let mut a = ReservoirBloom::new(ReservoirParams::new(4096, 3), 1)?;
/// let b = a.clone();
/// assert!(matches!(a.merge(&b), Err(Error::Incompatible { .. })));
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<S: Storage, H> crate::Merge for ReservoirBloom<S, H> {
    fn merge(&mut self, _: &Self) -> Result<()> {
        Err(crate::Error::Incompatible {
            what: "reservoir sampling state (a union of two samples is not a sample of the combined stream: reservoir filters do not merge)",
        })
    }
}
