//! [`expire_run`](crate::arch::timers::expire_run) in AVX2, for 8-, 16-
//! and 32-bit cells: each 32-byte half of a block the run touches is
//! loaded once, every lane's age computed, the stale lanes inside the run
//! replaced by the expired code with one blend, and the half stored back.
//! Unsigned `>=` is `max(a, b) == a`; ages wrap in lane arithmetic, exact
//! because a fresh timer's age is at most `T_Ω < W::MAX`. Other widths run
//! the scalar reference.

use core::arch::x86_64::*;

use crate::arch::all::wrap_bounds;
use crate::arch::timers::TimerClock;
use crate::{Block, Width};

/// The splatted constants of one run, in lanes of `W`.
#[derive(Clone, Copy)]
struct Splat {
    now: __m256i,
    top: __m256i,
    period: __m256i,
    limit: __m256i,
    expired: __m256i,
    fresh_block: __m256i,
}

/// `a >= b` lane by lane, unsigned, for lanes of `bits` bits.
#[inline(always)]
unsafe fn ge(bits: u32, a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: (and of every block in this file) these functions run only
    // inside `expire_run`, compiled for AVX2 and called only where the CPU
    // has it.
    unsafe {
        match bits {
            8 => _mm256_cmpeq_epi8(_mm256_max_epu8(a, b), a),
            16 => _mm256_cmpeq_epi16(_mm256_max_epu16(a, b), a),
            _ => _mm256_cmpeq_epi32(_mm256_max_epu32(a, b), a),
        }
    }
}

/// `a == b` lane by lane.
#[inline(always)]
unsafe fn eq(bits: u32, a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: see `ge`.
    unsafe {
        match bits {
            8 => _mm256_cmpeq_epi8(a, b),
            16 => _mm256_cmpeq_epi16(a, b),
            _ => _mm256_cmpeq_epi32(a, b),
        }
    }
}

/// `a - b` and `a + b` lane by lane, wrapping.
#[inline(always)]
unsafe fn sub_add(bits: u32, a: __m256i, b: __m256i, c: __m256i) -> (__m256i, __m256i) {
    // SAFETY: see `ge`.
    unsafe {
        let d = match bits {
            8 => _mm256_sub_epi8(a, b),
            16 => _mm256_sub_epi16(a, b),
            _ => _mm256_sub_epi32(a, b),
        };
        let e = match bits {
            8 => _mm256_add_epi8(d, c),
            16 => _mm256_add_epi16(d, c),
            _ => _mm256_add_epi32(d, c),
        };
        (d, e)
    }
}

/// `v` in every lane of `bits` bits (truncated to the lane).
#[inline(always)]
unsafe fn splat(bits: u32, v: u32) -> __m256i {
    // SAFETY: see `ge`.
    unsafe {
        match bits {
            8 => _mm256_set1_epi8(v as u8 as i8),
            16 => _mm256_set1_epi16(v as u16 as i16),
            _ => _mm256_set1_epi32(v as i32),
        }
    }
}

/// Stale lanes of `v`: never fresh (above `T_Ω`, or at `T_+` in a fresh
/// block) or of age at least the limit.
#[inline(always)]
unsafe fn stale(bits: u32, s: &Splat, v: __m256i) -> __m256i {
    // SAFETY: see `ge`.
    unsafe {
        let (d, wrapped) = sub_add(bits, s.now, v, s.period);
        let not_after = ge(bits, s.now, v);
        let age = _mm256_blendv_epi8(wrapped, d, not_after);
        let in_range = ge(bits, s.top, v);
        let full_cycle = _mm256_and_si256(eq(bits, v, s.now), s.fresh_block);
        let fresh = _mm256_andnot_si256(full_cycle, in_range);
        let never = _mm256_xor_si256(fresh, _mm256_set1_epi8(-1));
        _mm256_or_si256(never, ge(bits, age, s.limit))
    }
}

/// The run's cells `lo..hi` (no wrap), half-block by half-block.
#[inline(always)]
unsafe fn expire_cells<W: Width>(blocks: &mut [Block], lo: usize, hi: usize, s: &Splat) {
    let bytes = W::BITS as usize / 8;
    // SAFETY: see `ge`; every load and store is of a 32-byte slice.
    unsafe {
        let index = _mm256_setr_epi8(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27, 28, 29, 30, 31,
        );
        let mut at = lo;
        while at < hi {
            let (b, first) = (at / W::CELLS, at % W::CELLS);
            let end = (hi - b * W::CELLS).min(W::CELLS);
            let (from, to) = (first * bytes, end * bytes);
            let block = &mut blocks[b].0;
            for half in 0..2 {
                let (base, lo_b, hi_b) = (32 * half, from.max(32 * half), to.min(32 * half + 32));
                if lo_b >= hi_b {
                    continue;
                }
                let window = _mm256_andnot_si256(
                    _mm256_cmpgt_epi8(_mm256_set1_epi8((lo_b - base) as i8), index),
                    _mm256_cmpgt_epi8(_mm256_set1_epi8((hi_b - base) as i8), index),
                );
                let slot = &mut block[base..base + 32];
                let v = _mm256_loadu_si256(slot.as_ptr().cast());
                let sel = _mm256_and_si256(stale(W::BITS, s, v), window);
                let out = _mm256_blendv_epi8(v, s.expired, sel);
                _mm256_storeu_si256(slot.as_mut_ptr().cast(), out);
            }
            at = b * W::CELLS + end;
        }
    }
}

/// [`crate::arch::timers::expire_run`] in AVX2 (8-, 16- and 32-bit cells;
/// the scalar reference for the others). Clocks outside the kernel's
/// contract (`now <= top < W::MAX`) give unspecified cells, never unsafety.
///
/// # Safety
///
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn expire_run<W: Width>(
    blocks: &mut [Block],
    start: usize,
    len: usize,
    clock: TimerClock,
    limit: u32,
    expired: u32,
) {
    let bits = W::BITS;
    if !matches!(bits, 8 | 16 | 32) {
        crate::arch::timers::expire_run::<W>(blocks, start, len, clock, limit, expired);
        return;
    }
    let total = blocks.len() * W::CELLS;
    let Some((start, len)) = wrap_bounds(total, start, len) else {
        return;
    };
    // SAFETY: this function is compiled for AVX2 and the caller vouches
    // the CPU has it.
    let s = unsafe {
        Splat {
            now: splat(bits, clock.now),
            top: splat(bits, clock.top),
            period: splat(bits, clock.top.wrapping_add(1)),
            limit: splat(bits, limit.min(W::MAX)),
            expired: splat(bits, expired.min(W::MAX)),
            fresh_block: splat(bits, if clock.fresh_block { u32::MAX } else { 0 }),
        }
    };
    let first = len.min(total - start);
    // SAFETY: as above.
    unsafe {
        expire_cells::<W>(blocks, start, start + first, &s);
        expire_cells::<W>(blocks, 0, len - first, &s);
    }
}
