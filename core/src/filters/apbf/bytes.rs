//! [`Apbf`] in the byte format ([`crate::format`]). Its fields: `k`, `l`
//! (u32 each), `g` (u64), `slice_bits` (u64), then its state: the ring
//! (`newest` as u32, `count` as u64), so a loaded filter shifts its
//! generations exactly when the written one would have.

use super::{Apbf, ApbfParams, Ring};
use crate::format::{Fields, Kind, Persisted, Sink, decode_view};
use crate::hash::PortableHash;
use crate::store::Storage;
use crate::{Block, Result};

impl<S: Storage, H: PortableHash> Persisted for Apbf<S, H> {
    const KIND: Kind = Kind::Apbf;
    const WIDTH: u8 = 1;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = &self.params;
        out.u32(p.k);
        out.u32(p.l);
        out.u64(p.g);
        out.usize(p.slice_bits);
        out.u32(self.ring.newest);
        out.u64(self.ring.count);
    }

    fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

impl<S: Storage, H: PortableHash> Apbf<S, H> {
    fn decode(f: &mut Fields<'_>, storage: S, hasher: H) -> Result<Self> {
        let params = ApbfParams {
            k: f.u32("k")?,
            l: f.u32("l")?,
            g: f.u64("g")?,
            slice_bits: f.usize("slice_bits")?,
        };
        let ring = Ring {
            newest: f.u32("newest")?,
            count: f.u64("count")?,
        };
        Apbf::restore(params, storage, hasher, ring)
    }
}

#[cfg(feature = "alloc")]
impl<H: PortableHash> Apbf<crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory, ring included. [`Error::Malformed`](crate::Error::Malformed)
    /// if the bytes are not an age-partitioned filter hashed with `H`; the
    /// constructor's error for parameters or a ring it refuses.
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// let mut f = Apbf::with_hasher(ApbfParams::new(4, 3, 100), PortableHasher::new(3))?;
    /// for i in 0..250u32 { f.insert(&i); }
    /// let mut g = Apbf::<_, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// for i in 250..400u32 { f.insert(&i); g.insert(&i); }
    /// assert_eq!(f, g);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Apbf, 1, Self::decode)
    }
}

impl<'a, H: PortableHash> Apbf<&'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned). Its
    /// slices change in `bytes`; its ring does not (write the filter again
    /// with [`Encode`](crate::format::Encode) to keep it).
    ///
    /// ```
    /// use streambloom::apbf::{Apbf, ApbfParams};
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::Block;
    /// let mut f = Apbf::with_hasher(ApbfParams::new(4, 3, 100), PortableHasher::new(3))?;
    /// f.insert("a");
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = Apbf::<_, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert!(g.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Apbf, 1, Self::decode)
    }
}

/// Bitwise OR of the slices, at equal rings only (the same newest slice
/// and count: filters fed in lockstep): every item either filter holds in
/// its window stays held, at the age it has there. The slices fill as
/// with both streams, so the false-positive rate is that of the combined
/// load. Errors: other parameters, rings, hasher or seed.
///
/// ```
/// use streambloom::apbf::{Apbf, ApbfParams};
/// use streambloom::Merge;
/// let mut a = Apbf::new(ApbfParams::new(4, 3, 100), 1)?;
/// let mut b = Apbf::new(ApbfParams::new(4, 3, 100), 1)?;
/// a.insert("a");
/// b.insert("b");
/// a.merge(&b)?;
/// assert!(a.contains("a") && a.contains("b"));
/// b.insert("c");
/// assert!(a.merge(&b).is_err()); // rings differ
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<S: Storage, H: core::hash::BuildHasher> crate::Merge for Apbf<S, H> {
    fn merge(&mut self, other: &Self) -> Result<()> {
        crate::merge::require(self.params == other.params, "parameters")?;
        crate::merge::require(
            self.ring == other.ring,
            "rings (age-partitioned filters merge only at equal generations)",
        )?;
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
