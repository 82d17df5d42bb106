//! The cell store: a filter's memory as cache-line [`Block`]s of `W`-bit
//! saturating cells, owned or borrowed, with the kernel table that works on
//! them.
//!
//! Storage is anything that is `AsRef<[Block]> + AsMut<[Block]>`: a
//! `Vec<Block>` or `Box<[Block]>` (with `alloc`), an array `[Block; N]`, or a
//! `&mut [Block]` borrowed from a static buffer, so a filter never needs an
//! allocator; with feature `huge-pages`, `HugePages`, a memory map advised
//! for transparent huge pages, for filters far larger than the TLB's reach.
//!
//! Cells are numbered across blocks: cell `i` is cell `i % W::CELLS` of block
//! `i / W::CELLS`. Runs of consecutive cells (eviction, sweeps) follow that
//! numbering.

use crate::{Error, Result};
use streambloom_kernels::{Backend, Block, Engine, Isa, Kernels, Mask, Ops, Width, cell, set_cell};

#[cfg(feature = "huge-pages")]
mod huge;
#[cfg(feature = "huge-pages")]
pub use huge::HugePages;

/// The chunk of the `*_batch` operations' prefetch: they prefetch a chunk
/// of this many items, then work on the one before it, so an item is
/// prefetched one to two chunks ahead: enough to cover a DRAM miss
/// (~100 ns) at a few ns per item.
/// Chosen by that arithmetic, not by a sweep of values; what prefetching
/// buys at 64 MiB (batch against item by item, e.g. 18 against 70 ns per
/// Classic insert) is in the README's per-filter tables.
///
/// ```
/// assert!(streambloom::store::LOOKAHEAD >= 8);
/// ```
pub const LOOKAHEAD: usize = 16;

/// The smallest filter (in bytes of blocks) for which the `*_batch`
/// operations prefetch: below it the blocks sit in the L2 cache or close
/// to it, where the prefetching loop (the lookahead's prefetches, the
/// Stable filter's staged eviction starts) costs more than the misses it
/// hides.
///
/// Measured on a Zen 5 (1 MiB L2 a core) by a sweep of sizes, every
/// batch target with prefetching from 256 KiB (the value before) and with
/// none, three interleaved runs each (`latency --json --target
/// classic-insert-batch,classic-contains-batch,stable-batch,stable-two-batch,stable-sweep-batch,spectral-insert-batch,spectral-estimate-batch,importance-batch
/// --isa avx2 --sizes 256K,512K,1M,2M,4M,8M,16M,32M`; the ratios below
/// are of the medians of the three p50s each run printed, combined by
/// hand, not printed by the command): without
/// prefetching the batches were 0.70–0.93× the time at 256–512 KiB and
/// 0.81–0.95× at 1 MiB; at 2 MiB the two were even (0.94–1.13×); at
/// 16 MiB prefetching won by 1.11–4.96× for every target but Classic's
/// insert (0.84×), at 32 MiB by 2.64–4.30× for all. So 2 MiB. A core with a smaller
/// L2 (a Zen 3's 512 KiB) may gain from prefetching a little below it;
/// that was not measured.
///
/// ```
/// use streambloom::store::PREFETCH_MIN_BYTES;
/// assert_eq!(PREFETCH_MIN_BYTES, 2 * 1024 * 1024);
/// ```
pub const PREFETCH_MIN_BYTES: usize = 2 * 1024 * 1024;

/// Memory a filter can keep its blocks in: anything that lends a slice of
/// blocks, owned or borrowed.
///
/// ```
/// use streambloom::store::Storage;
/// use streambloom::Block;
/// fn blocks<S: Storage>(s: &S) -> usize { s.as_ref().len() }
/// assert_eq!(blocks(&[Block::ZERO; 4]), 4);
/// assert_eq!(blocks(&vec![Block::ZERO; 2]), 2);
/// ```
pub trait Storage: AsRef<[Block]> + AsMut<[Block]> {}
impl<S: AsRef<[Block]> + AsMut<[Block]>> Storage for S {}

/// The storage a filter owns when none is given: a `Vec` of blocks with
/// `alloc`, else a `'static` buffer the caller lends.
///
/// ```
/// let owned: streambloom::store::DefaultStorage = vec![streambloom::Block::ZERO; 2];
/// assert_eq!(owned.len(), 2);
/// ```
#[cfg(feature = "alloc")]
pub type DefaultStorage = alloc::vec::Vec<Block>;
/// The storage a filter owns when none is given: a `Vec` of blocks with
/// `alloc`, else a `'static` buffer the caller lends.
#[cfg(not(feature = "alloc"))]
pub type DefaultStorage = &'static mut [Block];

/// Owned storage of `blocks` zeroed blocks, allocated fallibly: an error,
/// not a panic or an abort, when the size passes `isize::MAX` bytes
/// ([`bytes_for`]) or the allocator cannot provide it.
#[cfg(feature = "alloc")]
pub(crate) fn zeroed(blocks: usize) -> Result<alloc::vec::Vec<Block>> {
    let bytes = bytes_for(blocks, "cells", blocks)?;
    let mut v = alloc::vec::Vec::new();
    v.try_reserve_exact(blocks)
        .map_err(|_| Error::Allocation { bytes })?;
    v.resize(blocks, Block::ZERO);
    Ok(v)
}

/// What a size must be to be allocated.
pub(crate) const TOO_LARGE: &str =
    "small enough that the blocks fit in isize::MAX bytes, the most any machine can address";

/// The bytes of `blocks` blocks; an error naming parameter `name`, whose
/// value was `given`, when they pass `isize::MAX`, the most any Rust
/// allocation (or slice) can hold.
pub(crate) fn bytes_for(blocks: usize, name: &'static str, given: usize) -> Result<usize> {
    blocks
        .checked_mul(Block::BYTES)
        .filter(|&b| isize::try_from(b).is_ok())
        .ok_or(Error::param(name, given, TOO_LARGE))
}

/// Blocks needed for `cells` cells of width `W`, rounded up; an error for 0
/// cells or for more blocks than fit in `isize::MAX` bytes.
///
/// ```
/// use streambloom::store::blocks_for;
/// use streambloom::W4;
/// assert_eq!(blocks_for::<W4>(129), Ok(2)); // 128 cells a block
/// assert!(blocks_for::<W4>(0).is_err());
/// assert!(blocks_for::<W4>(usize::MAX).is_err());
/// ```
pub fn blocks_for<W: Width>(cells: usize) -> Result<usize> {
    blocks_named::<W>(cells, "cells")
}

/// [`blocks_for`] with errors naming parameter `name` (a filter's own name
/// for its cells: `"counters"`, `"bits"`).
pub(crate) fn blocks_named<W: Width>(cells: usize, name: &'static str) -> Result<usize> {
    if cells == 0 {
        return Err(Error::param(name, cells, "at least 1"));
    }
    let blocks = cells.div_ceil(W::CELLS);
    bytes_for(blocks, name, cells)?;
    Ok(blocks)
}

/// `W`-bit cells in blocks held by `S`, and the kernel implementation that
/// works on them (an [`Engine`]: hot loops run through
/// [`Engine::run`], compiled once per instruction set).
#[derive(Clone)]
pub(crate) struct Cells<W: Width, S> {
    blocks: S,
    engine: Engine,
    width: core::marker::PhantomData<W>,
}

impl<W: Width, S: Storage> core::fmt::Debug for Cells<W, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cells")
            .field("bits", &W::BITS)
            .field("blocks", &self.blocks.as_ref().len())
            .field("isa", &self.engine.isa())
            .finish()
    }
}

impl<W: Width, S: Storage> Cells<W, S> {
    /// Wraps `blocks`, which must hold exactly `expected` blocks, running the
    /// best kernels this CPU has. The blocks' current contents are kept.
    pub fn new(blocks: S, expected: usize) -> Result<Self> {
        let found = blocks.as_ref().len();
        if found != expected || found == 0 {
            return Err(Error::Length {
                name: "storage",
                expected: expected.max(1),
                found,
            });
        }
        Ok(Cells {
            blocks,
            engine: Engine::best(),
            width: core::marker::PhantomData,
        })
    }

    /// Forces the kernel implementation; an error if `isa` is not available
    /// on this CPU.
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.engine = Engine::new(isa).ok_or(Error::Unsupported { isa: isa.name() })?;
        Ok(())
    }

    /// The kernel implementation in use.
    pub fn isa(&self) -> Isa {
        self.engine.isa()
    }

    /// The engine that runs the filter's hot loops.
    #[inline(always)]
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The kernel table of the implementation in use, for paths off the
    /// hot loop (statistics); hot loops take [`Ops`] inside
    /// [`Engine::run`] instead.
    pub fn kernels(&self) -> &'static Kernels<W> {
        Kernels::for_isa(self.engine.isa()).unwrap_or_else(Kernels::scalar)
    }

    /// Number of blocks.
    #[inline(always)]
    pub fn block_count(&self) -> usize {
        self.blocks.as_ref().len()
    }

    /// Whether the filter's batch forms prefetch: at least
    /// [`PREFETCH_MIN_BYTES`] of blocks.
    #[inline(always)]
    pub fn prefetching(&self) -> bool {
        self.block_count() * Block::BYTES >= PREFETCH_MIN_BYTES
    }

    /// Number of cells (`blocks × W::CELLS`).
    #[inline(always)]
    pub fn cells(&self) -> usize {
        self.block_count() * W::CELLS
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
            .ok_or(Error::param("i", i, "less than the cell count"))?;
        set_cell::<W>(b, i % W::CELLS, v);
        Ok(())
    }

    /// Saturating decrement of `len` consecutive cells from `start`,
    /// wrapping past the last cell to cell 0, with `ops`'s kernels: one
    /// kernel call, which proves its offsets in bounds once (callers pass
    /// `start < cells()` and `len <= cells()`, as eviction draws them; past
    /// that the kernel reduces them, never out of bounds).
    #[inline(always)]
    pub fn dec_run_wrapping<B: Backend>(&mut self, ops: Ops<W, B>, start: usize, len: usize) {
        debug_assert!(start < self.cells() && len <= self.cells());
        ops.dec_run(self.blocks.as_mut(), start, len);
    }

    /// Saturating decrement of `len` consecutive cells from `start` in the
    /// *interleaved* order over groups of `group` adjacent blocks (the last
    /// group has the blocks left over): position `e` of a group of `g`
    /// blocks whose first cell is `f` is cell `(e - f) / g` of the group's
    /// block `(e - f) % g`, so a run of `len` positions decrements about
    /// `len / g` consecutive cells of each block of its group. Wraps past
    /// the last position to position 0 ([`Eviction::Interleaved`]).
    ///
    /// One masked [`sub_sat`](Ops::sub_sat) per block of a group the run
    /// covers in part (its cells are consecutive: one range mask), one
    /// [`dec_run`](Ops::dec_run) per group it covers whole. Callers pass
    /// `start < cells()`, `len <= cells()` and `group >= 1`. (A
    /// `dec_run` per block instead, with two divisions each, cost about
    /// 1.8× this at 16 KiB: `stable-two-interleaved-batch`, AVX-512, Zen 5,
    /// three same-run before/after comparisons chained.)
    ///
    /// [`Eviction::Interleaved`]: crate::stable::Eviction::Interleaved
    #[inline(always)]
    pub fn dec_interleaved<B: Backend>(
        &mut self,
        ops: Ops<W, B>,
        start: usize,
        len: usize,
        group: usize,
    ) {
        let (m, blocks) = (self.cells(), self.block_count());
        debug_assert!(start < m && len <= m && group >= 1);
        let group_cells = group * W::CELLS;
        let (mut e, mut left) = (start, len);
        while left > 0 {
            // The group's first cell: groups are contiguous in memory.
            let first = e / group_cells * group_cells;
            let g = (blocks - first / W::CELLS).min(group);
            let size = g * W::CELLS;
            let w0 = e - first;
            let take = left.min(size - w0);
            if take == size {
                ops.dec_run(self.blocks.as_mut(), first, size);
            } else {
                let (block0, w1) = (first / W::CELLS, w0 + take);
                if g == group {
                    // A whole group: `group` is the caller's constant, so
                    // this copy divides by shifts and unrolls its loop.
                    self.dec_in_group(ops, block0, w0, w1, group);
                } else {
                    self.dec_in_group(ops, block0, w0, w1, g);
                }
            }
            e += take;
            if e == m {
                e = 0;
            }
            left -= take;
        }
    }

    /// The interleaved positions `w0..w1` of the group of `g` blocks from
    /// block `block0` ([`dec_interleaved`](Self::dec_interleaved)).
    #[inline(always)]
    fn dec_in_group<B: Backend>(
        &mut self,
        ops: Ops<W, B>,
        block0: usize,
        w0: usize,
        w1: usize,
        g: usize,
    ) {
        // Block `r` holds the positions `c·g + r`: the cells `c` with
        // `w0 <= c·g + r < w1`, `c` from `⌈(w0 - r)/g⌉`, which is `w0 / g`
        // plus one when `r < w0 % g`, to the same of `w1` (two divisions a
        // group, not two a block).
        let (q0, r0, q1, r1) = (w0 / g, w0 % g, w1 / g, w1 % g);
        for r in 0..g {
            let lo = q0 + usize::from(r < r0);
            let hi = q1 + usize::from(r < r1);
            // None when `hi <= lo`: an empty mask, which spares a
            // mispredicted branch.
            ops.sub_sat(self.block_mut(block0 + r), range_mask::<W>(lo, hi), 1);
        }
    }

    /// Number of zero cells.
    pub fn zero_cells(&self) -> usize {
        self.kernels()
            .zero_count(self.blocks.as_ref(), 0, self.cells())
    }

    /// Sets every cell to 0.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
    }
}

/// The mask of cells `lo..hi` of a block (empty when `hi <= lo`; `hi` at
/// most `W::CELLS`), built word by word: for masks of one word the other
/// words are never read and fold away.
#[inline(always)]
fn range_mask<W: Width>(lo: usize, hi: usize) -> W::Mask {
    // The low `n` bits of a word, `n` in `0..=64`.
    let ones = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let words = core::array::from_fn(|i| {
        let (start, end) = (64 * i, 64 * i + 64);
        let (a, b) = (lo.clamp(start, end) - start, hi.clamp(start, end) - start);
        ones(b) & !ones(a)
    });
    W::Mask::from_words(&words)
}

/// The cell of interleaved eviction position `e` in `blocks` blocks of
/// `per_block` cells dealt in groups of `group`, by the definition in
/// [`Cells::dec_interleaved`]'s docs, written cell by cell: the model the
/// store's and the Stable filter's tests check the kernels against.
#[cfg(test)]
pub(crate) fn interleaved_cell(blocks: usize, group: usize, per_block: usize, e: usize) -> usize {
    let first = e / (group * per_block) * group * per_block;
    let g = (blocks - first / per_block).min(group);
    let w = e - first;
    first + (w % g) * per_block + w / g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpectralParams;
    use alloc::{vec, vec::Vec};
    use streambloom_kernels::{W1, W4, W8, W32};

    #[test]
    fn wrong_length_is_an_error() {
        let mut buf = [Block::ZERO; 3];
        let e = Cells::<W8, _>::new(&mut buf[..], 4).unwrap_err();
        assert_eq!(
            e,
            Error::Length {
                name: "storage",
                expected: 4,
                found: 3
            }
        );
        assert!(Cells::<W8, _>::new(&mut buf[..0], 0).is_err());
        assert_eq!(
            blocks_for::<W4>(0),
            Err(Error::param("cells", 0usize, "at least 1"))
        );
        assert_eq!(blocks_for::<W4>(129), Ok(2));
    }

    #[test]
    fn sizes_past_isize_max_are_errors() {
        let too_big = |n: usize| Err(Error::param("cells", n, TOO_LARGE));
        // 2^58 blocks of 16 cells: 2^64 bytes.
        assert_eq!(blocks_for::<W32>(usize::MAX), too_big(usize::MAX));
        let n = usize::MAX / 64 + 1;
        assert_eq!(bytes_for(n, "cells", n), too_big(n));
        let n = isize::MAX as usize / 64 + 1;
        assert_eq!(bytes_for(n, "cells", n), too_big(n));
        let most = isize::MAX as usize / 64;
        assert_eq!(bytes_for(most, "cells", most), Ok(most * 64));
        // 2^55 blocks of 512 cells: 2^61 bytes, addressable in principle.
        assert_eq!(blocks_for::<W1>(usize::MAX), Ok(1 << 55));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model a failing allocator")]
    fn an_allocation_the_machine_cannot_make_is_an_error() {
        // 2^61 bytes: within isize::MAX, beyond any machine's memory.
        assert_eq!(
            zeroed(1 << 55).unwrap_err(),
            Error::Allocation { bytes: 1 << 61 }
        );
        assert_eq!(zeroed(3).unwrap().len(), 3);
    }

    /// The filters' constructors at sizes past what any machine can
    /// allocate return errors instead of panicking ("capacity overflow") or
    /// aborting the process.
    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model a failing allocator")]
    fn constructors_past_memory_are_errors() {
        use crate::hash::Layout;
        use crate::spectral::{Blocked, MinimumSelection, Spectral};
        use crate::stable::{Eviction, StableBloom, StableParams};
        let params = StableParams {
            cells: 1 << 63,
            bits_per_cell: 3,
            k: 3,
            p: 10,
            eviction: Eviction::Random,
            layout: Layout::OneBlock,
        };
        // 2^57 blocks of 64 cells: 2^63 bytes, past isize::MAX.
        assert_eq!(
            StableBloom::<W8>::new(params, 1).unwrap_err(),
            Error::param("cells", 1usize << 63, TOO_LARGE)
        );
        assert_eq!(
            Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(1 << 63, 4), 1)
                .unwrap_err(),
            Error::param("counters", 1usize << 63, TOO_LARGE)
        );
        // 2^60 counters of 32 bits: 2^62 bytes, which the allocator refuses.
        assert_eq!(
            Spectral::<MinimumSelection, Blocked<W32>>::new(SpectralParams::new(1 << 60, 4), 1)
                .unwrap_err(),
            Error::Allocation { bytes: 1 << 62 }
        );
        // Whatever the planner makes of the largest budgets, building the
        // filter is an error, not a panic.
        for memory in [usize::MAX, isize::MAX as usize] {
            if let Ok(p) = StableParams::plan::<W32>(memory, 0.01, Eviction::Random) {
                assert!(StableBloom::<W32>::new(p, 1).is_err(), "{p:?}");
            }
        }
    }

    #[test]
    fn wrapping_run_matches_cell_by_cell() {
        let mut buf = [Block::ZERO; 2];
        let mut c = Cells::<W4, _>::new(&mut buf, 2).unwrap();
        for i in 0..c.cells() {
            c.set(i, (i % 3) as u32).unwrap();
        }
        let before: [u32; 256] = core::array::from_fn(|i| c.get(i).unwrap());
        struct Run<'a, 'b>(&'a mut Cells<W4, &'b mut [Block; 2]>);
        impl streambloom_kernels::Body for Run<'_, '_> {
            type Output = ();
            fn run<B: Backend>(self, backend: B) {
                self.0.dec_run_wrapping(Ops::new(backend), 250, 10);
            }
        }
        let engine = c.engine();
        engine.run(Run(&mut c));
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

    fn check_interleaved<W: Width>(blocks: usize, group: usize, start_step: usize) {
        struct Run<'a, W: Width>(&'a mut Cells<W, Vec<Block>>, usize, usize, usize);
        impl<W: Width> streambloom_kernels::Body for Run<'_, W> {
            type Output = ();
            fn run<B: Backend>(self, backend: B) {
                self.0
                    .dec_interleaved(Ops::new(backend), self.1, self.2, self.3);
            }
        }
        let m = blocks * W::CELLS;
        // The mapping is a bijection of the cells.
        let mut seen = vec![false; m];
        for e in 0..m {
            let c = super::interleaved_cell(blocks, group, W::CELLS, e);
            assert!(!seen[c], "cell {c} twice");
            seen[c] = true;
        }
        let lens = [
            0,
            1,
            5,
            W::CELLS - 1,
            W::CELLS,
            group * W::CELLS + 7,
            m - 1,
            m,
        ];
        for start in (0..m).step_by(start_step) {
            for &len in lens.iter().filter(|&&l| l <= m) {
                let mut c = Cells::<W, _>::new(zeroed(blocks).unwrap(), blocks).unwrap();
                for i in 0..m {
                    c.set(i, ((i % 3) as u32).min(W::MAX)).unwrap();
                }
                let mut want: Vec<u32> = (0..m).map(|i| c.get(i).unwrap()).collect();
                for j in 0..len {
                    let cell = super::interleaved_cell(blocks, group, W::CELLS, (start + j) % m);
                    want[cell] = want[cell].saturating_sub(1);
                }
                let engine = c.engine();
                engine.run(Run(&mut c, start, len, group));
                let got: Vec<u32> = (0..m).map(|i| c.get(i).unwrap()).collect();
                assert_eq!(
                    got, want,
                    "blocks {blocks} group {group} start {start} len {len}"
                );
            }
        }
    }

    #[test]
    fn interleaved_run_matches_cell_by_cell() {
        // Miri runs the store's tests: a few runs there (a second each).
        if cfg!(miri) {
            check_interleaved::<W8>(9, 8, 199);
            check_interleaved::<W1>(3, 2, 1536);
            return;
        }
        for (blocks, group) in [(1, 8), (3, 1), (3, 2), (9, 8), (17, 8), (12, 5)] {
            check_interleaved::<W8>(blocks, group, 7);
        }
        check_interleaved::<W4>(10, 8, 21);
        check_interleaved::<W1>(3, 2, 77);
        check_interleaved::<W32>(19, 8, 7);
    }
}
