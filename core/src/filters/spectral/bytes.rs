//! [`Spectral`] on [`Blocked`] counters in the byte format
//! ([`crate::format`]). Its fields: `counters` (u64), `k` (u32), the layout
//! (a byte: 0 one block, 1 two blocks), the policy (0 Minimum Selection,
//! 1 Minimal Increase, 2 Recurring Minimum then its configuration and
//! Trapping's traps), then the total of insertions (u64). The blocks are
//! every table's: primary, secondary, marker.

use super::{Blocked, Counter, Policy, Spectral, SpectralParams};
use crate::format::{Fields, Kind, Malformed, Persisted, Sink, decode_view, index_of};
use crate::hash::{Layout, PortableHash};
use crate::store::Storage;
use crate::{Block, Error, Result};

impl<P: Policy, W: Counter, S: Storage, H: PortableHash> Persisted
    for Spectral<P, Blocked<W, S>, H>
{
    const KIND: Kind = Kind::Spectral;
    const WIDTH: u8 = W::BITS as u8;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = self.params();
        out.usize(p.counters);
        out.u32(p.k);
        out.u8(index_of(&p.layout, &Layout::ALL));
        out.u8(P::TAG);
        self.policy.put(out);
        out.u64(self.total);
    }

    fn blocks(&self) -> &[Block] {
        self.store.blocks()
    }
}

impl<P: Policy, W: Counter, S: Storage, H: PortableHash> Spectral<P, Blocked<W, S>, H> {
    fn decode(f: &mut Fields<'_>, storage: S, hasher: H) -> Result<Self> {
        let counters = f.usize("counters")?;
        let k = f.u32("k")?;
        let layout = f.pick("layout", &Layout::ALL)?;
        let tag = f.u8("policy")?;
        if tag != P::TAG {
            return Err(Error::Malformed(Malformed::Field { name: "policy" }));
        }
        let params = SpectralParams {
            counters,
            k,
            policy: P::read(f)?,
            layout,
        };
        let total = f.u64("total")?;
        Spectral::restore(params, storage, hasher, total)
    }
}

#[cfg(feature = "alloc")]
impl<P: Policy, W: Counter, H: PortableHash> Spectral<P, Blocked<W>, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory: every table, the total and (with Trapping) the traps.
    /// [`Error::Malformed`](crate::Error::Malformed) if the bytes are not a
    /// spectral filter of policy `P` and `W` counters hashed with `H`; the
    /// constructor's error for parameters it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::spectral::{Blocked, MinimalIncrease, RecurringMinimum, Spectral, SpectralParams};
    /// use streambloom::W16;
    /// let mut f = Spectral::<MinimalIncrease, Blocked<W16>, _>::with_hasher(SpectralParams::new(4096, 4), PortableHasher::new(8))?;
    /// f.insert_n("a", 3);
    /// let bytes = f.to_bytes();
    /// let g = Spectral::<MinimalIncrease, Blocked<W16>, PortableHasher>::from_bytes(&bytes)?;
    /// assert_eq!((g.estimate("a"), g.total()), (3, 3));
    /// // Another policy's bytes do not load.
    /// assert!(Spectral::<RecurringMinimum, Blocked<W16>, PortableHasher>::from_bytes(&bytes).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Spectral, W::BITS as u8, Self::decode)
    }
}

impl<'a, P: Policy, W: Counter, H: PortableHash> Spectral<P, Blocked<W, &'a mut [Block]>, H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned). Its
    /// counters change in `bytes`; its total and traps do not (write the
    /// filter again with [`Encode`](crate::format::Encode) to keep them).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
    /// use streambloom::{Block, W32};
    /// let mut f = Spectral::<MinimumSelection, Blocked<W32>, _>::with_hasher(SpectralParams::new(4096, 4), PortableHasher::new(8))?;
    /// f.insert_n("a", 2);
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = Spectral::<MinimumSelection, Blocked<W32, _>, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert_eq!(g.estimate("a"), 2);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Spectral, W::BITS as u8, Self::decode)
    }
}

/// [`Spectral::union`]: counters add, saturating (§5.3), so an estimate
/// of the merged filter never falls below the item's count in both
/// streams. Errors as [`Spectral::union`] (sizes, `k`, width, hasher,
/// seeds, or Recurring Minimum with Trapping, whose traps cannot merge).
///
/// ```
/// use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
/// use streambloom::Merge;
/// let mut a = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
/// let mut b = Spectral::<MinimumSelection>::new(SpectralParams::new(4096, 4), 1)?;
/// a.insert_n("x", 2);
/// b.insert_n("x", 3);
/// a.merge(&b)?;
/// assert_eq!(a.estimate("x"), 5);
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<P: Policy, C: super::CounterStore, H: core::hash::BuildHasher> crate::Merge
    for Spectral<P, C, H>
{
    fn merge(&mut self, other: &Self) -> Result<()> {
        self.union(other)
    }
}
