//! The cell store: a filter's memory as cache-line [`Block`]s of `W`-bit
//! saturating cells, owned or borrowed, with the kernel table that works on
//! them.
//!
//! Storage is anything that is `AsRef<[Block]> + AsMut<[Block]>`: a
//! `Vec<Block>` or `Box<[Block]>` (with `alloc`), an array `[Block; N]`, or a
//! `&mut [Block]` borrowed from a static buffer, so a filter never needs an
//! allocator.
//!
//! Cells are numbered across blocks: cell `i` is cell `i % W::CELLS` of block
//! `i / W::CELLS`. Runs of consecutive cells (eviction, sweeps) follow that
//! numbering.

use crate::{Error, Result};
use streambloom_kernels::{cell, set_cell, Block, Isa, Kernels, Width};

/// Memory a filter can keep its blocks in.
pub trait Storage: AsRef<[Block]> + AsMut<[Block]> {}
impl<S: AsRef<[Block]> + AsMut<[Block]>> Storage for S {}

/// Owned storage of `blocks` zeroed blocks.
#[cfg(feature = "alloc")]
pub(crate) fn zeroed(blocks: usize) -> alloc::vec::Vec<Block> {
    alloc::vec![Block::ZERO; blocks]
}

/// Blocks needed for `cells` cells of width `W`, rounded up; an error for 0
/// cells or a size that overflows.
pub fn blocks_for<W: Width>(cells: usize) -> Result<usize> {
    if cells == 0 {
        return Err(Error::param("cells", "must be at least 1"));
    }
    Ok(cells.div_ceil(W::CELLS))
}

/// `W`-bit cells in blocks held by `S`, and the kernels that work on them.
#[derive(Clone)]
pub struct Cells<W: Width, S> {
    blocks: S,
    kernels: &'static Kernels<W>,
}

impl<W: Width, S: Storage> core::fmt::Debug for Cells<W, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cells")
            .field("bits", &W::BITS)
            .field("blocks", &self.blocks.as_ref().len())
            .field("isa", &self.kernels.isa())
            .finish()
    }
}

impl<W: Width, S: Storage> Cells<W, S> {
    /// Wraps `blocks`, which must hold exactly `expected` blocks, running the
    /// best kernels this CPU has. The blocks' current contents are kept.
    pub fn new(blocks: S, expected: usize) -> Result<Self> {
        let found = blocks.as_ref().len();
        if found != expected || found == 0 {
            return Err(Error::StorageLength { expected, found });
        }
        Ok(Cells {
            blocks,
            kernels: Kernels::best(),
        })
    }

    /// Forces the kernel implementation; an error if `isa` is not available
    /// on this CPU.
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.kernels =
            Kernels::for_isa(isa).ok_or(Error::param("isa", "is not available on this CPU"))?;
        Ok(())
    }

    /// The kernel implementation in use.
    pub fn isa(&self) -> Isa {
        self.kernels.isa()
    }

    /// The kernel table in use.
    #[inline(always)]
    pub fn kernels(&self) -> &'static Kernels<W> {
        self.kernels
    }

    /// Number of blocks.
    #[inline(always)]
    pub fn block_count(&self) -> usize {
        self.blocks.as_ref().len()
    }

    /// Number of cells (`blocks × W::CELLS`).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.block_count() * W::CELLS
    }

    /// Always `false`: a store holds at least one block.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The blocks.
    #[inline(always)]
    pub fn blocks(&self) -> &[Block] {
        self.blocks.as_ref()
    }

    /// The blocks, mutably.
    #[inline(always)]
    pub fn blocks_mut(&mut self) -> &mut [Block] {
        self.blocks.as_mut()
    }

    /// Block `i` (callers pass `i < block_count()`, which hashing
    /// guarantees).
    #[inline(always)]
    pub fn block(&self, i: usize) -> &Block {
        &self.blocks.as_ref()[i]
    }

    /// Block `i`, mutably.
    #[inline(always)]
    pub fn block_mut(&mut self, i: usize) -> &mut Block {
        &mut self.blocks.as_mut()[i]
    }

    /// The value of cell `i`, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<u32> {
        let b = self.blocks.as_ref().get(i / W::CELLS)?;
        Some(cell::<W>(b, i % W::CELLS))
    }

    /// Sets cell `i` to `v` (saturated to `W::MAX`); an error past the end.
    pub fn set(&mut self, i: usize, v: u32) -> Result<()> {
        let b = self
            .blocks
            .as_mut()
            .get_mut(i / W::CELLS)
            .ok_or(Error::param("i", "is past the last cell"))?;
        set_cell::<W>(b, i % W::CELLS, v);
        Ok(())
    }

    /// Saturating decrement of `len` consecutive cells from `start`,
    /// wrapping past the last cell to cell 0; `len` is capped at the cell
    /// count.
    #[inline]
    pub fn dec_run_wrapping(&mut self, start: usize, len: usize) {
        let total = self.len();
        let len = len.min(total);
        let start = start % total;
        let first = len.min(total - start);
        let k = self.kernels;
        k.dec_run(self.blocks.as_mut(), start, first);
        if first < len {
            k.dec_run(self.blocks.as_mut(), 0, len - first);
        }
    }

    /// Number of zero cells.
    pub fn zero_cells(&self) -> usize {
        self.kernels.zero_count(self.blocks.as_ref(), 0, self.len())
    }

    /// Sets every cell to 0.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
    }

    /// Gives the storage back.
    pub fn into_inner(self) -> S {
        self.blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streambloom_kernels::{W4, W8};

    #[test]
    fn wrong_length_is_an_error() {
        let mut buf = [Block::ZERO; 3];
        let e = Cells::<W8, _>::new(&mut buf[..], 4).unwrap_err();
        assert_eq!(
            e,
            Error::StorageLength {
                expected: 4,
                found: 3
            }
        );
        assert!(Cells::<W8, _>::new(&mut buf[..0], 0).is_err());
        assert_eq!(
            blocks_for::<W4>(0),
            Err(Error::param("cells", "must be at least 1"))
        );
        assert_eq!(blocks_for::<W4>(129), Ok(2));
    }

    #[test]
    fn wrapping_run_matches_cell_by_cell() {
        let mut buf = [Block::ZERO; 2];
        let mut c = Cells::<W4, _>::new(&mut buf, 2).unwrap();
        for i in 0..c.len() {
            c.set(i, (i % 3) as u32).unwrap();
        }
        let before: [u32; 256] = core::array::from_fn(|i| c.get(i).unwrap());
        c.dec_run_wrapping(250, 10);
        for (i, &b) in before.iter().enumerate() {
            let hit = !(4..250).contains(&i);
            let want = if hit { b.saturating_sub(1) } else { b };
            assert_eq!(c.get(i), Some(want), "cell {i}");
        }
        assert_eq!(c.get(256), None);
        assert!(c.set(256, 1).is_err());
        c.clear();
        assert_eq!(c.zero_cells(), 256);
    }
}
