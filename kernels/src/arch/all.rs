//! The scalar reference kernels: always compiled, on every target, and the
//! oracle every SIMD backend is tested against.
//!
//! Each function is the plainest loop that states the kernel's contract; a
//! backend is correct exactly when it agrees with these on every input.

use crate::{cell, set_cell, Block, Mask, MinCount, Width};

pub use crate::arch::timers::{expire_run, oldest_count};

/// Whether any selected cell is zero (`false` for an empty mask).
#[inline]
pub fn any_zero<W: Width>(block: &Block, mut mask: W::Mask) -> bool {
    while let Some(i) = mask.pop_lowest() {
        if cell::<W>(block, i) == 0 {
            return true;
        }
    }
    false
}

/// The minimum of the selected cells and how many selected cells hold it.
/// An empty mask gives [`MinCount::EMPTY`].
#[inline]
pub fn min_count<W: Width>(block: &Block, mut mask: W::Mask) -> MinCount {
    let mut out = MinCount::EMPTY;
    while let Some(i) = mask.pop_lowest() {
        let v = cell::<W>(block, i);
        if v < out.min || out.count == 0 {
            out = MinCount { min: v, count: 1 };
        } else if v == out.min {
            out.count += 1;
        }
    }
    out
}

/// Each selected cell becomes `max(cell, min(v, W::MAX))`.
#[inline]
pub fn max_assign<W: Width>(block: &mut Block, mut mask: W::Mask, v: u32) {
    while let Some(i) = mask.pop_lowest() {
        let c = cell::<W>(block, i);
        set_cell::<W>(block, i, c.max(v));
    }
}

/// Each selected cell becomes `min(v, W::MAX)`.
#[inline]
pub fn assign<W: Width>(block: &mut Block, mut mask: W::Mask, v: u32) {
    while let Some(i) = mask.pop_lowest() {
        set_cell::<W>(block, i, v);
    }
}

/// Each selected cell becomes `min(cell + r, W::MAX)`.
#[inline]
pub fn add_sat<W: Width>(block: &mut Block, mut mask: W::Mask, r: u32) {
    while let Some(i) = mask.pop_lowest() {
        let c = cell::<W>(block, i);
        set_cell::<W>(block, i, c.saturating_add(r));
    }
}

/// Each selected cell becomes `cell - r`, or 0 where `r > cell`.
#[inline]
pub fn sub_sat<W: Width>(block: &mut Block, mut mask: W::Mask, r: u32) {
    while let Some(i) = mask.pop_lowest() {
        let c = cell::<W>(block, i);
        set_cell::<W>(block, i, c.saturating_sub(r));
    }
}

/// The cells `start .. start + len` of a run over `total` cells (numbered
/// across blocks), clipped to the cells that exist.
#[inline(always)]
pub(crate) fn run_bounds(total: usize, start: usize, len: usize) -> (usize, usize) {
    let start = start.min(total);
    (start, start.saturating_add(len).min(total))
}

/// The run of `len` cells from `start` that [`dec_run`] decrements, over
/// `total` cells: `None` when it is empty, else `start` taken modulo
/// `total` and `len` capped at `total` (a run never decrements a cell
/// twice). Callers that already pass `start < total` and `len <= total`
/// (eviction draws them so) take one predicted branch and no division.
#[inline(always)]
pub(crate) fn wrap_bounds(total: usize, start: usize, len: usize) -> Option<(usize, usize)> {
    if len == 0 || total == 0 {
        return None;
    }
    if start < total && len <= total {
        return Some((start, len));
    }
    Some((start % total, len.min(total)))
}

/// Decrements each non-zero cell of the run of `len` cells from `start`,
/// wrapping past the last cell to cell 0 (a Stable filter's eviction). A
/// `start` past the end is taken modulo the cell count, and `len` is capped
/// at it: every cell is decremented at most once.
#[inline]
pub fn dec_run<W: Width>(blocks: &mut [Block], start: usize, len: usize) {
    let total = blocks.len() * W::CELLS;
    let Some((start, len)) = wrap_bounds(total, start, len) else {
        return;
    };
    let first = len.min(total - start);
    dec_cells::<W>(blocks, start..start + first);
    dec_cells::<W>(blocks, 0..len - first);
}

/// Decrements each non-zero cell of `cells` (in the blocks) by one.
#[inline(always)]
fn dec_cells<W: Width>(blocks: &mut [Block], cells: core::ops::Range<usize>) {
    for i in cells {
        let b = &mut blocks[i / W::CELLS];
        let c = cell::<W>(b, i % W::CELLS);
        set_cell::<W>(b, i % W::CELLS, c.saturating_sub(1));
    }
}

/// Counts the zero cells of the run `start .. start + len`, clipped to the
/// cells that exist.
#[inline]
pub fn zero_count<W: Width>(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * W::CELLS, start, len);
    (lo..hi)
        .filter(|&i| cell::<W>(&blocks[i / W::CELLS], i % W::CELLS) == 0)
        .count()
}

crate::dispatch::tables!(crate::Isa::Scalar);
