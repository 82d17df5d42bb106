//! [`TimingBloom`] in the byte format ([`crate::format`]). Its fields:
//! `cells` (u64), `k` (u32), `window`, `block`, `padding` (u64 each),
//! `t_omega`, `bits_per_timer` (u32 each), the layout (a byte: 0 one
//! block, 1 two blocks, 2 unblocked), then its state: the clock (`now` as
//! u32, `offset` and `cursor` as u64) and the posteriors' stream model
//! ([`Distinct`](crate::analysis::timing::Distinct)), so a loaded filter
//! expires, sweeps and infers exactly as the written one would have.

use super::{Clock, TimingBloom, TimingLayout, TimingParams};
use crate::analysis::timing::Distinct;
use crate::format::{Fields, Kind, Persisted, Sink, decode_view, index_of};
use crate::hash::PortableHash;
use crate::store::Storage;
use crate::{Block, Result, Width};

/// The layouts in the order of their bytes.
const LAYOUTS: [TimingLayout; 3] = [
    TimingLayout::OneBlock,
    TimingLayout::TwoBlocks,
    TimingLayout::Unblocked,
];

impl<W: Width, S: Storage, H: PortableHash> Persisted for TimingBloom<W, S, H> {
    const KIND: Kind = Kind::Timing;
    const WIDTH: u8 = W::BITS as u8;
    type Hasher = H;

    fn hasher(&self) -> &H {
        &self.hasher
    }

    fn put_fields(&self, out: &mut dyn Sink) {
        let p = &self.params;
        out.usize(p.cells);
        out.u32(p.k);
        out.u64(p.window);
        out.u64(p.block);
        out.u64(p.padding);
        out.u32(p.t_omega);
        out.u32(p.bits_per_timer);
        out.u8(index_of(&p.layout, &LAYOUTS));
        out.u32(self.clock.now);
        out.u64(self.clock.offset);
        out.usize(self.clock.cursor);
        self.stream().put(out);
    }

    fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }
}

impl<W: Width, S: Storage, H: PortableHash> TimingBloom<W, S, H> {
    fn decode(f: &mut Fields<'_>, storage: S, hasher: H) -> Result<Self> {
        let params = TimingParams {
            cells: f.usize("cells")?,
            k: f.u32("k")?,
            window: f.u64("window")?,
            block: f.u64("block")?,
            padding: f.u64("padding")?,
            t_omega: f.u32("t_omega")?,
            bits_per_timer: f.u32("bits_per_timer")?,
            layout: f.pick("layout", &LAYOUTS)?,
        };
        let clock = Clock {
            now: f.u32("now")?,
            offset: f.u64("offset")?,
            cursor: f.usize("cursor")?,
        };
        let stream = Distinct::read(f)?;
        let mut t = TimingBloom::restore(params, storage, hasher, clock)?;
        t.set_stream(stream);
        Ok(t)
    }
}

#[cfg(feature = "alloc")]
impl<W: Width, H: PortableHash> TimingBloom<W, crate::store::DefaultStorage, H> {
    /// Reads a filter [`Encode`](crate::format::Encode) wrote, into owned
    /// memory, clock and stream model included.
    /// [`Error::Malformed`](crate::Error::Malformed) if the bytes are not a
    /// timing filter of `W` cells hashed with `H`; the constructor's error
    /// for parameters or a clock it refuses.
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::W8;
    /// let mut f = TimingBloom::<W8, _, _>::with_hasher(TimingParams::new(4096, 3, 100, 4, 1, 8), PortableHasher::new(5))?;
    /// f.insert("a");
    /// let mut g = TimingBloom::<W8, _, PortableHasher>::from_bytes(&f.to_bytes())?;
    /// f.insert("b");
    /// g.insert("b");
    /// assert_eq!(f, g);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::format::decode_owned(bytes, Kind::Timing, W::BITS as u8, Self::decode)
    }
}

impl<'a, W: Width, H: PortableHash> TimingBloom<W, &'a mut [Block], H> {
    /// A filter over the blocks of an encoding where they are in `bytes`
    /// (no copy, no allocator; `bytes` must start 64-byte aligned). Its
    /// timers change in `bytes`; its clock does not (write the filter again
    /// with [`Encode`](crate::format::Encode) to keep it).
    ///
    /// ```
    /// use streambloom::format::Encode;
    /// use streambloom::hash::PortableHasher;
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::{Block, W8};
    /// let mut f = TimingBloom::<W8, _, _>::with_hasher(TimingParams::new(4096, 3, 100, 4, 1, 8), PortableHasher::new(5))?;
    /// f.insert("a");
    /// let mut buf = vec![Block::ZERO; f.encoded_len() / 64];
    /// f.encode_into(bytemuck::cast_slice_mut(&mut buf))?;
    /// let g = TimingBloom::<W8, _, PortableHasher>::view_bytes(bytemuck::cast_slice_mut(&mut buf))?;
    /// assert!(g.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn view_bytes(bytes: &'a mut [u8]) -> Result<Self> {
        decode_view(bytes, Kind::Timing, W::BITS as u8, Self::decode)
    }
}

/// Each timer becomes the fresher of the two (an expired timer is the
/// oldest), so every item either filter holds in its window stays in it.
/// Only at equal clocks: a timer's age means something only against its
/// filter's `T_+`, so filters fed in lockstep (the same number of
/// insertions, or a clock advanced together) merge, and others are
/// refused. Errors: other parameters, clocks, hasher or seed.
///
/// ```
/// use streambloom::timing::{TimingBloom, TimingParams};
/// use streambloom::{Merge, W8};
/// let params = TimingParams::new(4096, 3, 100, 4, 1, 8);
/// let mut a = TimingBloom::<W8>::new(params, 1)?;
/// let mut b = TimingBloom::<W8>::new(params, 1)?;
/// a.insert("a");
/// b.insert("b");
/// a.merge(&b)?;
/// assert!(a.contains("a") && a.contains("b"));
/// b.insert("c");
/// assert!(a.merge(&b).is_err()); // clocks differ
/// # Ok::<(), streambloom::Error>(())
/// ```
impl<W: Width, S: Storage, H: core::hash::BuildHasher> crate::Merge for TimingBloom<W, S, H> {
    fn merge(&mut self, other: &Self) -> Result<()> {
        crate::merge::require(self.params == other.params, "parameters")?;
        crate::merge::require(
            self.clock == other.clock,
            "clocks (timing filters merge only at equal clocks)",
        )?;
        crate::merge::require(
            crate::merge::fingerprint(&self.hasher) == crate::merge::fingerprint(&other.hasher),
            "hasher or seeds",
        )?;
        let clock = self.timer_clock();
        let age = |v| super::wide_age(streambloom_kernels::arch::timers::age(clock, v));
        let fresher = |a: u32, b: u32| {
            if age(b) < age(a) { b } else { a }
        };
        crate::merge::combine_cells::<W>(self.cells.blocks_mut(), other.cells.blocks(), fresher);
        Ok(())
    }
}
