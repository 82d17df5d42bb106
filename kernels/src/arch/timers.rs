//! Timer kernels (Dautrich & Ravishankar, *Inferential Time-Decaying Bloom
//! Filters*, §3.2): cells that hold timestamps in `0..=T_Ω` of a clock
//! `T_+` that wraps, and an expired code above `T_Ω`.
//!
//! A timer's **age** is `(T_+ - T) mod (T_Ω + 1)`; a cell above `T_Ω` (the
//! expired code, or a value no filter writes) and, when no insertion was
//! made in the current clock block (`fresh_block`), a cell at `T_+` itself
//! (a full cycle old) are *never fresh*: age [`NEVER`]. Two kernels:
//!
//! - [`expire_run`]: over a run of cells (wrapping past the last cell, as
//!   [`dec_run`](crate::arch::all::dec_run)), every cell whose age is at
//!   least `limit` becomes the expired code; the others, and cells already
//!   holding the code, stay.
//! - [`oldest_count`]: the oldest age among the selected cells of a block
//!   and how many of them hold it (a min-and-count on ages: a timer's age
//!   is a cyclic difference, which the store's [`min_count`] cannot order).
//!
//! The functions here are the scalar reference (re-exported by
//! [`crate::arch::all`]); AVX2 (and AVX-512, which includes it) runs
//! [`expire_run`] for 8-, 16- and 32-bit cells a 32-byte vector at a time.
//! Every other backend and width uses the scalar code: [`oldest_count`]
//! reads an item's few selected cells, where scalar code is what the store's
//! select kernels found fastest too.
//!
//! [`min_count`]: crate::arch::all::min_count

use crate::arch::all::wrap_bounds;
use crate::{cell, set_cell, Block, Isa, Mask, Width};

/// The age of a cell that is never fresh.
pub const NEVER: u32 = u32::MAX;

/// The clock the timer kernels age cells by.
///
/// ```
/// use streambloom_kernels::arch::timers::{age, TimerClock, NEVER};
/// let c = TimerClock { now: 2, top: 9, fresh_block: false };
/// assert_eq!(age(c, 0), 2);
/// assert_eq!(age(c, 7), 5); // (2 - 7) mod 10
/// assert_eq!(age(c, 10), NEVER);
/// assert_eq!(age(TimerClock { fresh_block: true, ..c }, 2), NEVER);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimerClock {
    /// `T_+`, at most `top`.
    pub now: u32,
    /// `T_Ω`, the largest timestamp (below `u32::MAX`).
    pub top: u32,
    /// No insertion yet in the current clock block (`b = 0`): a cell at
    /// `now` is a full cycle old, never fresh.
    pub fresh_block: bool,
}

/// The age of a cell holding `v` under `clock` ([`NEVER`] for a cell never
/// fresh, see the [module docs](self)).
#[inline(always)]
pub fn age(clock: TimerClock, v: u32) -> u32 {
    let TimerClock {
        now,
        top,
        fresh_block,
    } = clock;
    let d = now.wrapping_sub(v);
    let a = if v <= now {
        d
    } else {
        d.wrapping_add(top.wrapping_add(1))
    };
    if v > top || (v == now && fresh_block) {
        NEVER
    } else {
        a
    }
}

/// The oldest age among selected cells and how many cells hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AgeCount {
    /// The oldest age ([`NEVER`] if a selected cell is never fresh).
    pub oldest: u32,
    /// How many selected cells are that old (0 only for an empty selection).
    pub count: u32,
}

impl AgeCount {
    /// What an empty selection reduces to.
    pub const EMPTY: AgeCount = AgeCount {
        oldest: 0,
        count: 0,
    };
}

/// The oldest age among the cells of `block` that `mask` selects, and how
/// many selected cells hold it; [`AgeCount::EMPTY`] for an empty mask.
///
/// ```
/// use streambloom_kernels::arch::timers::{oldest_count, AgeCount, TimerClock};
/// use streambloom_kernels::{set_cell, Block, Mask, W8};
/// let mut b = Block::ZERO;
/// for (i, v) in [(0, 5), (1, 3), (2, 6), (3, 3)] {
///     set_cell::<W8>(&mut b, i, v);
/// }
/// let clock = TimerClock { now: 1, top: 6, fresh_block: false };
/// // Ages (1 - v) mod 7: 3, 5, 2, 5.
/// let mask = 0u64.with(0).with(1).with(2).with(3);
/// assert_eq!(oldest_count::<W8>(&b, mask, clock), AgeCount { oldest: 5, count: 2 });
/// ```
#[inline]
pub fn oldest_count<W: Width>(block: &Block, mut mask: W::Mask, clock: TimerClock) -> AgeCount {
    let mut out = AgeCount::EMPTY;
    while let Some(i) = mask.pop_lowest() {
        let a = age(clock, cell::<W>(block, i));
        if a > out.oldest || out.count == 0 {
            out = AgeCount {
                oldest: a,
                count: 1,
            };
        } else if a == out.oldest {
            out.count += 1;
        }
    }
    out
}

/// Over the run of `len` cells from `start` (wrapping past the last cell
/// to cell 0; `start` taken modulo the cell count and `len` capped at it,
/// as [`dec_run`](crate::arch::all::dec_run)), every cell whose age under
/// `clock` is at least `limit` becomes `expired`.
///
/// ```
/// use streambloom_kernels::arch::timers::{expire_run, TimerClock};
/// use streambloom_kernels::{cell, set_cell, Block, W8};
/// let mut b = [Block::ZERO];
/// for (i, v) in [(0, 5), (1, 3), (2, 255), (3, 1)] {
///     set_cell::<W8>(&mut b[0], i, v);
/// }
/// let clock = TimerClock { now: 1, top: 6, fresh_block: false };
/// // Ages 3, 5, never, 0: the ages 5 and never are at least 4.
/// expire_run::<W8>(&mut b, 0, 4, clock, 4, 255);
/// assert_eq!([0, 1, 2, 3].map(|i| cell::<W8>(&b[0], i)), [5, 255, 255, 1]);
/// ```
#[inline]
pub fn expire_run<W: Width>(
    blocks: &mut [Block],
    start: usize,
    len: usize,
    clock: TimerClock,
    limit: u32,
    expired: u32,
) {
    let total = blocks.len() * W::CELLS;
    let Some((start, len)) = wrap_bounds(total, start, len) else {
        return;
    };
    let first = len.min(total - start);
    expire_cells::<W>(blocks, start, start + first, clock, limit, expired);
    expire_cells::<W>(blocks, 0, len - first, clock, limit, expired);
}

/// [`expire_run`] over the cells `lo..hi` (no wrap).
#[inline(always)]
fn expire_cells<W: Width>(
    blocks: &mut [Block],
    lo: usize,
    hi: usize,
    clock: TimerClock,
    limit: u32,
    expired: u32,
) {
    for i in lo..hi {
        let b = &mut blocks[i / W::CELLS];
        let v = cell::<W>(b, i % W::CELLS);
        // A select, not a branch: whether a timer is stale is data.
        let stale = age(clock, v) >= limit;
        set_cell::<W>(b, i % W::CELLS, if stale { expired } else { v });
    }
}

/// The [`expire_run`] of backend `isa` for width `W`: the AVX2 one for
/// AVX2 and AVX-512 on x86-64, else the scalar one. A table slot.
pub(crate) const fn expire_run_for<W: Width>(
    isa: Isa,
) -> unsafe fn(&mut [Block], usize, usize, TimerClock, u32, u32) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 | Isa::Avx512 => crate::arch::x86_64::timers::expire_run::<W>,
        _ => expire_run::<W>,
    }
}
