//! The scalar reference kernels: always compiled, on every target, and the
//! oracle every SIMD backend is tested against.
//!
//! Each function is the plainest loop that states the kernel's contract; a
//! backend is correct exactly when it agrees with these on every input.

use crate::{cell, set_cell, Block, Mask, MinCount, Width};

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

/// Decrements each non-zero cell of the run `start .. start + len` by one.
/// The run is clipped to the cells that exist; it does not wrap.
#[inline]
pub fn dec_run<W: Width>(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * W::CELLS, start, len);
    for i in lo..hi {
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
