//! AVX2 kernels: a block is two 256-bit vectors.
//!
//! **Select kernels (W4, W8, W16, W32).** The selection mask is expanded to
//! lanes of all ones (`select`: broadcast the mask, `vpshufb` each mask byte
//! under the lanes it governs, `and` with a one-bit-per-lane pattern, compare)
//! and every update is then branch-free over the whole block:
//!
//! - `max_assign`, `add_sat`, `sub_sat` apply the operation with the operand
//!   `and`-ed with the selection, so unselected lanes get `max(c, 0)`,
//!   `c + 0` or `c - 0` and need no blend;
//! - `assign` blends the broadcast value into the selected lanes;
//! - `any_zero` (W8, W16, W32) needs no expansion at all: it turns "cell is
//!   zero" into a cell bitmap (`movemask`) and tests it against the mask;
//! - `min_count` forces unselected lanes to all ones, reduces the minimum
//!   horizontally (`phminposuw` does the last step), then counts the selected
//!   cells equal to it with a bitmap and `count_ones`.
//!
//! Operands above `W::MAX` are clamped to `W::MAX` before broadcasting, which
//! is exactly the scalar reference's saturation (`add_sat` by a clamped `r`
//! still saturates, `sub_sat` by `MAX` still floors at 0). 32-bit cells have
//! no saturating add or subtract instruction: `min(c, !r) + r` and
//! `max(c, r) - r` are the same thing in two instructions.
//!
//! 4-bit cells are split into a low-nibble and a high-nibble byte vector
//! (`c & 0x0f`, `(c >> 4) & 0x0f`), each selected by its own lane mask, handled
//! as 8-bit cells with `MAX = 15`, and joined back.
//!
//! **Runs (W4, W8, W16, W32).** A run of cells is a contiguous byte range of
//! the blocks, which are contiguous in memory. Each full 32-byte step is one
//! load, one operation, one store. The last partial step is one vector too:
//! it starts where the full steps stopped (or, in the last 32 bytes of the
//! blocks, ends where the run ends) and only the lanes inside the run are
//! kept (`vpblendvb` with a window loaded from a constant
//! `0..0 ff..ff 0..0` table), so a run of any length costs
//! `ceil(bytes / 32)` vector steps and no scalar loop. Odd nibbles at either
//! end of a W4 run are done by the scalar reference.
//!
//! - `dec_run`: `subs_epu8(c, 1)` (W8), `subs_epu16(c, 1)` (W16),
//!   `max(c, 1) - 1` (W32), and for W4 bytes
//!   `subs_epu8(c & 0x0f, 1) | subs_epu8(c & 0xf0, 0x10)`.
//! - `zero_count`: one byte of 1 per zero cell (compare, `and` with 1 in the
//!   cell's low byte), summed with `psadbw` into 64-bit accumulators.
//!
//! **Left scalar.** W1 and W2 use [`crate::arch::all`] throughout: their
//! cells are not lanes of any AVX2 instruction.
//!
//! **Measured** with `cargo bench -p streambloom-bench --bench kernels`
//! (the README's table): select kernels 1.1–3.6× faster than scalar, runs
//! 5–39×. Every slot that is SIMD here beat the scalar one. (LLVM first
//! compiled the W32 updates to `vpmaskmovd`, which is slow on AMD and blocks
//! store forwarding; building the W32 selection bytewise gives plain stores.)

use core::arch::x86_64::*;

use crate::arch::all;
use crate::{Block, Isa, Kernels, MinCount, W1, W2, W4};

type V = __m256i;

/// The two halves of `block`.
#[inline]
#[target_feature(enable = "avx2")]
fn load(block: &Block) -> [V; 2] {
    *bytemuck::cast_ref(block)
}

/// Writes the two halves of `block`.
#[inline]
#[target_feature(enable = "avx2")]
fn store(block: &mut Block, v: [V; 2]) {
    *bytemuck::cast_mut(block) = v;
}

/// The selected lanes of `x` with the others set to all ones.
#[inline]
#[target_feature(enable = "avx2")]
fn or_unselected(x: V, sel: V) -> V {
    _mm256_or_si256(x, _mm256_andnot_si256(sel, _mm256_set1_epi8(-1)))
}

/// The minimum of the 16 bytes of `x`.
#[inline]
#[target_feature(enable = "avx2")]
fn hmin_u8(x: __m128i) -> u32 {
    // Each 16-bit lane becomes the min of its two bytes, then `phminposuw`.
    let y = _mm_min_epu8(x, _mm_srli_epi16::<8>(x));
    (_mm_cvtsi128_si32(_mm_minpos_epu16(y)) as u32) & 0xffff
}

/// Shared shape of the select kernels for the widths whose cells are
/// lanes (W8, W16, W32). The invoking module defines the lane vocabulary:
/// `M` (the mask type), `select`, `bits`, `eq`, `min`, `max`, `adds`, `subs`,
/// `splat` (clamped to `MAX`) and `hmin`.
macro_rules! lane_kernels {
    () => {
        #[target_feature(enable = "avx2")]
        pub(super) fn any_zero(block: &Block, mask: M) -> bool {
            let [a, b] = load(block);
            let z = _mm256_setzero_si256();
            bits([eq(a, z), eq(b, z)]) & mask != 0
        }

        #[target_feature(enable = "avx2")]
        pub(super) fn min_count(block: &Block, mask: M) -> MinCount {
            if mask == 0 {
                return MinCount::EMPTY;
            }
            let [a, b] = load(block);
            let [sa, sb] = select(mask);
            let m = hmin(min(or_unselected(a, sa), or_unselected(b, sb)));
            let s = splat(m);
            MinCount {
                min: m,
                count: (bits([eq(a, s), eq(b, s)]) & mask).count_ones(),
            }
        }

        #[target_feature(enable = "avx2")]
        pub(super) fn max_assign(block: &mut Block, mask: M, v: u32) {
            let [a, b] = load(block);
            let [sa, sb] = select(mask);
            let v = splat(v);
            let r = [
                max(a, _mm256_and_si256(v, sa)),
                max(b, _mm256_and_si256(v, sb)),
            ];
            store(block, r);
        }

        #[target_feature(enable = "avx2")]
        pub(super) fn assign(block: &mut Block, mask: M, v: u32) {
            let [a, b] = load(block);
            let [sa, sb] = select(mask);
            let v = splat(v);
            let r = [_mm256_blendv_epi8(a, v, sa), _mm256_blendv_epi8(b, v, sb)];
            store(block, r);
        }

        #[target_feature(enable = "avx2")]
        pub(super) fn add_sat(block: &mut Block, mask: M, r: u32) {
            let [a, b] = load(block);
            let [sa, sb] = select(mask);
            let r = splat(r);
            let out = [
                adds(a, _mm256_and_si256(r, sa)),
                adds(b, _mm256_and_si256(r, sb)),
            ];
            store(block, out);
        }

        #[target_feature(enable = "avx2")]
        pub(super) fn sub_sat(block: &mut Block, mask: M, r: u32) {
            let [a, b] = load(block);
            let [sa, sb] = select(mask);
            let r = splat(r);
            let out = [
                subs(a, _mm256_and_si256(r, sa)),
                subs(b, _mm256_and_si256(r, sb)),
            ];
            store(block, out);
        }
    };
}

mod w8 {
    use super::*;

    type M = u64;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn select(mask: u64) -> [V; 2] {
        // Bytes 0..8 of a half take mask byte 0, 8..16 byte 1, and so on;
        // `vpshufb` works within 128-bit lanes, and the broadcast puts the
        // half's four mask bytes at 0..4 of both.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, //
            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        let half = |m: u32| {
            let s = _mm256_shuffle_epi8(_mm256_set1_epi32(m as i32), spread);
            _mm256_cmpeq_epi8(_mm256_and_si256(s, bit), bit)
        };
        [half(mask as u32), half((mask >> 32) as u32)]
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn bits([a, b]: [V; 2]) -> u64 {
        let lo = _mm256_movemask_epi8(a) as u32;
        let hi = _mm256_movemask_epi8(b) as u32;
        u64::from(lo) | (u64::from(hi) << 32)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn eq(a: V, b: V) -> V {
        _mm256_cmpeq_epi8(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn min(a: V, b: V) -> V {
        _mm256_min_epu8(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn max(a: V, b: V) -> V {
        _mm256_max_epu8(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn adds(a: V, b: V) -> V {
        _mm256_adds_epu8(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn subs(a: V, b: V) -> V {
        _mm256_subs_epu8(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: u32) -> V {
        _mm256_set1_epi8(v.min(0xff) as u8 as i8)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn hmin(x: V) -> u32 {
        hmin_u8(_mm_min_epu8(
            _mm256_castsi256_si128(x),
            _mm256_extracti128_si256::<1>(x),
        ))
    }

    lane_kernels!();
}

mod w16 {
    use super::*;

    type M = u32;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn select(mask: u32) -> [V; 2] {
        let bit = _mm256_setr_epi16(
            1,
            2,
            4,
            8,
            16,
            32,
            64,
            128,
            256,
            512,
            1024,
            2048,
            4096,
            8192,
            16384,
            i16::MIN,
        );
        let half = |m: u32| {
            let s = _mm256_and_si256(_mm256_set1_epi16(m as u16 as i16), bit);
            _mm256_cmpeq_epi16(s, bit)
        };
        [half(mask), half(mask >> 16)]
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn bits([a, b]: [V; 2]) -> u32 {
        // `packs` interleaves the halves by 128-bit lane; the permute puts the
        // 64-bit groups back in cell order.
        let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(a, b));
        _mm256_movemask_epi8(packed) as u32
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn eq(a: V, b: V) -> V {
        _mm256_cmpeq_epi16(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn min(a: V, b: V) -> V {
        _mm256_min_epu16(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn max(a: V, b: V) -> V {
        _mm256_max_epu16(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn adds(a: V, b: V) -> V {
        _mm256_adds_epu16(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn subs(a: V, b: V) -> V {
        _mm256_subs_epu16(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: u32) -> V {
        _mm256_set1_epi16(v.min(0xffff) as u16 as i16)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn hmin(x: V) -> u32 {
        let y = _mm_min_epu16(_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
        (_mm_cvtsi128_si32(_mm_minpos_epu16(y)) as u32) & 0xffff
    }

    lane_kernels!();
}

mod w32 {
    use super::*;

    type M = u16;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn select(mask: u16) -> [V; 2] {
        // Built byte by byte (each byte of cell i tests bit i) rather than as
        // a 32-bit compare: LLVM turns 32-bit selects over a loaded block into
        // `vpmaskmovd` stores, microcoded on AMD and a store-forwarding stall
        // for the next probe of the block; byte lanes keep plain stores.
        let bit = _mm256_setr_epi8(
            1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8, //
            16, 16, 16, 16, 32, 32, 32, 32, 64, 64, 64, 64, -128, -128, -128, -128,
        );
        let half = |m: u16| {
            let s = _mm256_and_si256(_mm256_set1_epi8(m as u8 as i8), bit);
            _mm256_cmpeq_epi8(s, bit)
        };
        [half(mask & 0xff), half(mask >> 8)]
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn bits([a, b]: [V; 2]) -> u16 {
        let lo = _mm256_movemask_ps(_mm256_castsi256_ps(a)) as u16;
        let hi = _mm256_movemask_ps(_mm256_castsi256_ps(b)) as u16;
        lo | (hi << 8)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn eq(a: V, b: V) -> V {
        _mm256_cmpeq_epi32(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn min(a: V, b: V) -> V {
        _mm256_min_epu32(a, b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn max(a: V, b: V) -> V {
        _mm256_max_epu32(a, b)
    }

    /// `min(a + b, u32::MAX)` as `min(a, !b) + b`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn adds(a: V, b: V) -> V {
        let not_b = _mm256_xor_si256(b, _mm256_set1_epi8(-1));
        _mm256_add_epi32(_mm256_min_epu32(a, not_b), b)
    }

    /// `a - b` floored at 0, as `max(a, b) - b`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn subs(a: V, b: V) -> V {
        _mm256_sub_epi32(_mm256_max_epu32(a, b), b)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: u32) -> V {
        _mm256_set1_epi32(v as i32)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn hmin(x: V) -> u32 {
        let y = _mm_min_epu32(_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
        let y = _mm_min_epu32(y, _mm_shuffle_epi32::<0b01_00_11_10>(y));
        let y = _mm_min_epu32(y, _mm_shuffle_epi32::<0b10_11_00_01>(y));
        _mm_cvtsi128_si32(y) as u32
    }

    lane_kernels!();
}

mod w4 {
    use super::*;

    /// One half of a block as nibble vectors: `lo[j]` is cell `2j`, `hi[j]`
    /// cell `2j + 1` (byte `j` of the half), with their selections.
    struct Half {
        lo: V,
        hi: V,
        sel_lo: V,
        sel_hi: V,
    }

    /// Splits `x` and expands `word`, the 64 mask bits of its cells.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn split(x: V, word: u64) -> Half {
        // Byte j needs mask bits 2j and 2j + 1, both in mask byte j / 4:
        // spread mask bytes 0..4 over the low 128-bit lane, 4..8 over the high.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, //
            4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
        );
        let s = _mm256_shuffle_epi8(_mm256_set1_epi64x(word as i64), spread);
        let even = _mm256_set1_epi32(0x4010_0401);
        let odd = _mm256_set1_epi32(0x8020_0802_u32 as i32);
        let nib = _mm256_set1_epi8(0x0f);
        Half {
            lo: _mm256_and_si256(x, nib),
            hi: _mm256_and_si256(_mm256_srli_epi16::<4>(x), nib),
            sel_lo: _mm256_cmpeq_epi8(_mm256_and_si256(s, even), even),
            sel_hi: _mm256_cmpeq_epi8(_mm256_and_si256(s, odd), odd),
        }
    }

    /// Bytes of low-nibble and high-nibble cells (each `<= 15`) joined.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn join(lo: V, hi: V) -> V {
        _mm256_or_si256(lo, _mm256_slli_epi16::<4>(hi))
    }

    /// Applies `f(cells, selection)` to both nibble vectors of both halves.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn update(block: &mut Block, mask: [u64; 2], f: impl Fn(V, V) -> V) {
        let [a, b] = load(block);
        let half = |x: V, word: u64| {
            let h = split(x, word);
            join(f(h.lo, h.sel_lo), f(h.hi, h.sel_hi))
        };
        store(block, [half(a, mask[0]), half(b, mask[1])]);
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(v: u32) -> V {
        _mm256_set1_epi8(v.min(15) as i8)
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn any_zero(block: &Block, mask: [u64; 2]) -> bool {
        let [a, b] = load(block);
        let z = _mm256_setzero_si256();
        let zeros = |h: Half| {
            _mm256_or_si256(
                _mm256_and_si256(_mm256_cmpeq_epi8(h.lo, z), h.sel_lo),
                _mm256_and_si256(_mm256_cmpeq_epi8(h.hi, z), h.sel_hi),
            )
        };
        let any = _mm256_or_si256(zeros(split(a, mask[0])), zeros(split(b, mask[1])));
        _mm256_testz_si256(any, any) == 0
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn min_count(block: &Block, mask: [u64; 2]) -> MinCount {
        if mask == [0, 0] {
            return MinCount::EMPTY;
        }
        let [a, b] = load(block);
        let halves = [split(a, mask[0]), split(b, mask[1])];
        let least = |h: &Half| {
            _mm256_min_epu8(or_unselected(h.lo, h.sel_lo), or_unselected(h.hi, h.sel_hi))
        };
        let m = _mm256_min_epu8(least(&halves[0]), least(&halves[1]));
        let m = hmin_u8(_mm_min_epu8(
            _mm256_castsi256_si128(m),
            _mm256_extracti128_si256::<1>(m),
        ));
        let s = splat(m);
        let at_min = |x: V, sel: V| {
            let e = _mm256_and_si256(_mm256_cmpeq_epi8(x, s), sel);
            (_mm256_movemask_epi8(e) as u32).count_ones()
        };
        let count = halves
            .iter()
            .map(|h| at_min(h.lo, h.sel_lo) + at_min(h.hi, h.sel_hi))
            .sum();
        MinCount { min: m, count }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn max_assign(block: &mut Block, mask: [u64; 2], v: u32) {
        let v = splat(v);
        update(block, mask, |c, sel| {
            _mm256_max_epu8(c, _mm256_and_si256(v, sel))
        });
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn assign(block: &mut Block, mask: [u64; 2], v: u32) {
        let v = splat(v);
        update(block, mask, |c, sel| _mm256_blendv_epi8(c, v, sel));
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn add_sat(block: &mut Block, mask: [u64; 2], r: u32) {
        let r = splat(r);
        let max = splat(15);
        update(block, mask, |c, sel| {
            _mm256_min_epu8(_mm256_add_epi8(c, _mm256_and_si256(r, sel)), max)
        });
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn sub_sat(block: &mut Block, mask: [u64; 2], r: u32) {
        let r = splat(r);
        update(block, mask, |c, sel| {
            _mm256_subs_epu8(c, _mm256_and_si256(r, sel))
        });
    }
}

/// The cells `start .. start + len` of a run over `cells` cells, clipped
/// (as [`all::dec_run`] does).
#[inline]
pub(super) fn run_bounds(cells: usize, start: usize, len: usize) -> (usize, usize) {
    let start = start.min(cells);
    (start, start.saturating_add(len).min(cells))
}

/// `0` bytes, `0xff` bytes, `0` bytes: the 32 bytes at offset `n` select
/// lanes `32 - n ..`, those at offset `64 - n` lanes `.. n`.
static WINDOW: [u8; 96] = {
    let mut w = [0; 96];
    let mut i = 32;
    while i < 64 {
        w[i] = 0xff;
        i += 1;
    }
    w
};

#[inline]
#[target_feature(enable = "avx2")]
fn load_at(bytes: &[u8], at: usize) -> V {
    bytemuck::pod_read_unaligned(&bytes[at..at + 32])
}

#[inline]
#[target_feature(enable = "avx2")]
fn store_at(bytes: &mut [u8], at: usize, v: V) {
    bytes[at..at + 32].copy_from_slice(bytemuck::bytes_of(&v));
}

/// Where the last `at..end` (fewer than 32) bytes of a range in a buffer of
/// `len` bytes are processed: the vector's offset and the lanes of it inside
/// the range. The vector starts at `at` when it fits, so it never overlaps
/// the previous step's store (a store-forwarding stall); otherwise it ends
/// at `end`, which is at least 32 because `len` is a whole number of blocks.
#[inline]
#[target_feature(enable = "avx2")]
fn tail(len: usize, at: usize, end: usize) -> (usize, V) {
    let n = end - at;
    if at + 32 <= len {
        (at, load_at(&WINDOW, 64 - n))
    } else {
        (end - 32, load_at(&WINDOW, n))
    }
}

/// Replaces bytes `start..end` of `bytes` by `f` of them, 32 at a time;
/// `f` must map whole cells (`start` and `end` are cell boundaries).
#[inline]
#[target_feature(enable = "avx2")]
fn map_bytes(bytes: &mut [u8], start: usize, end: usize, f: impl Fn(V) -> V) {
    let mut at = start;
    while at + 32 <= end {
        store_at(bytes, at, f(load_at(bytes, at)));
        at += 32;
    }
    if at < end {
        let (pos, keep) = tail(bytes.len(), at, end);
        let x = load_at(bytes, pos);
        store_at(bytes, pos, _mm256_blendv_epi8(x, f(x), keep));
    }
}

/// The sum over bytes `start..end` of `f` of them, where `f` gives a small
/// count per byte.
#[inline]
#[target_feature(enable = "avx2")]
fn sum_bytes(bytes: &[u8], start: usize, end: usize, f: impl Fn(V) -> V) -> usize {
    let z = _mm256_setzero_si256();
    let mut acc = z;
    let mut at = start;
    while at + 32 <= end {
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(f(load_at(bytes, at)), z));
        at += 32;
    }
    if at < end {
        let (pos, keep) = tail(bytes.len(), at, end);
        let counts = _mm256_and_si256(f(load_at(bytes, pos)), keep);
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(counts, z));
    }
    let lanes: [u64; 4] = bytemuck::cast(acc);
    lanes.iter().sum::<u64>() as usize
}

#[target_feature(enable = "avx2")]
fn dec_run_w8(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 64, start, len);
    let one = _mm256_set1_epi8(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), lo, hi, |x| {
        _mm256_subs_epu8(x, one)
    });
}

#[target_feature(enable = "avx2")]
fn dec_run_w16(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 32, start, len);
    let one = _mm256_set1_epi16(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), 2 * lo, 2 * hi, |x| {
        _mm256_subs_epu16(x, one)
    });
}

#[target_feature(enable = "avx2")]
fn dec_run_w32(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 16, start, len);
    let one = _mm256_set1_epi32(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), 4 * lo, 4 * hi, |x| {
        _mm256_sub_epi32(_mm256_max_epu32(x, one), one)
    });
}

/// The bytes `lo..hi` wholly inside a W4 run, after handing a lone nibble
/// at either end to `edge(cell)`.
#[inline]
pub(super) fn w4_bytes(
    blocks: usize,
    start: usize,
    len: usize,
    mut edge: impl FnMut(usize),
) -> (usize, usize) {
    let (mut lo, mut hi) = run_bounds(blocks * 128, start, len);
    if lo < hi && lo % 2 == 1 {
        edge(lo);
        lo += 1;
    }
    if lo < hi && hi % 2 == 1 {
        hi -= 1;
        edge(hi);
    }
    (lo / 2, hi / 2)
}

#[target_feature(enable = "avx2")]
fn dec_run_w4(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = w4_bytes(blocks.len(), start, len, |i| {
        all::dec_run::<W4>(blocks, i, 1)
    });
    let low = _mm256_set1_epi8(0x0f);
    let one = _mm256_set1_epi8(1);
    let sixteen = _mm256_set1_epi8(0x10);
    map_bytes(bytemuck::cast_slice_mut(blocks), lo, hi, |x| {
        _mm256_or_si256(
            _mm256_subs_epu8(_mm256_and_si256(x, low), one),
            _mm256_subs_epu8(_mm256_andnot_si256(low, x), sixteen),
        )
    });
}

/// One byte of 1 in each cell of `bytes_per_cell` bytes that is zero.
#[inline]
#[target_feature(enable = "avx2")]
fn zero_count_lanes(
    blocks: &[Block],
    lo: usize,
    hi: usize,
    eq_zero: impl Fn(V) -> V,
    one: V,
) -> usize {
    sum_bytes(bytemuck::cast_slice(blocks), lo, hi, |x| {
        _mm256_and_si256(eq_zero(x), one)
    })
}

#[target_feature(enable = "avx2")]
fn zero_count_w8(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 64, start, len);
    let z = _mm256_setzero_si256();
    let eq = |x| _mm256_cmpeq_epi8(x, z);
    zero_count_lanes(blocks, lo, hi, eq, _mm256_set1_epi8(1))
}

#[target_feature(enable = "avx2")]
fn zero_count_w16(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 32, start, len);
    let z = _mm256_setzero_si256();
    let eq = |x| _mm256_cmpeq_epi16(x, z);
    zero_count_lanes(blocks, 2 * lo, 2 * hi, eq, _mm256_set1_epi16(1))
}

#[target_feature(enable = "avx2")]
fn zero_count_w32(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 16, start, len);
    let z = _mm256_setzero_si256();
    let eq = |x| _mm256_cmpeq_epi32(x, z);
    zero_count_lanes(blocks, 4 * lo, 4 * hi, eq, _mm256_set1_epi32(1))
}

#[target_feature(enable = "avx2")]
fn zero_count_w4(blocks: &[Block], start: usize, len: usize) -> usize {
    let mut edges = 0;
    let (lo, hi) = w4_bytes(blocks.len(), start, len, |i| {
        edges += all::zero_count::<W4>(blocks, i, 1);
    });
    let z = _mm256_setzero_si256();
    let low = _mm256_set1_epi8(0x0f);
    let high = _mm256_set1_epi8(0xf0_u8 as i8);
    let inner = sum_bytes(bytemuck::cast_slice(blocks), lo, hi, |x| {
        // Each compare is 0 or -1 per byte: negate the sum for 0..=2.
        let zeros = _mm256_add_epi8(
            _mm256_cmpeq_epi8(_mm256_and_si256(x, low), z),
            _mm256_cmpeq_epi8(_mm256_and_si256(x, high), z),
        );
        _mm256_sub_epi8(z, zeros)
    });
    edges + inner
}

pub(crate) const TABLE_W1: Kernels<W1> = Kernels::scalar_as(Isa::Avx2);
pub(crate) const TABLE_W2: Kernels<W2> = Kernels::scalar_as(Isa::Avx2);

crate::dispatch::module_table!(Isa::Avx2, TABLE_W4, W4, w4, dec_run_w4, zero_count_w4);
crate::dispatch::module_table!(Isa::Avx2, TABLE_W8, W8, w8, dec_run_w8, zero_count_w8);
crate::dispatch::module_table!(Isa::Avx2, TABLE_W16, W16, w16, dec_run_w16, zero_count_w16);
crate::dispatch::module_table!(Isa::Avx2, TABLE_W32, W32, w32, dec_run_w32, zero_count_w32);

#[cfg(test)]
pub(super) mod tests {
    //! Differential checks of a backend's tables against the scalar
    //! reference; the AVX-512 tests reuse [`check_all`].

    use crate::{arch::all, set_cell, Block, Isa, Kernels, Mask, Width};
    use crate::{W1, W16, W2, W32, W4, W8};

    /// xorshift64*: enough to spread inputs, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Cells drawn from 0, 1, MAX - 1, MAX and uniform, so that minima,
    /// ties and saturation all occur.
    fn block<W: Width>(rng: &mut Rng) -> Block {
        let mut b = Block::ZERO;
        let skew = rng.below(4);
        for i in 0..W::CELLS {
            let v = match rng.below(4 + skew) {
                0 => 0,
                1 => 1,
                2 => W::MAX - 1,
                3 => W::MAX,
                _ => rng.next() as u32,
            };
            set_cell::<W>(&mut b, i, v);
        }
        b
    }

    /// Empty, full, single, sparse (a filter's k hashes) and dense masks.
    fn mask<W: Width>(rng: &mut Rng) -> W::Mask {
        match rng.below(6) {
            0 => W::Mask::default(),
            1 => W::Mask::from_words(&[u64::MAX; 8]),
            2 => W::Mask::default().with(rng.below(W::CELLS)),
            3 | 4 => {
                let mut m = W::Mask::default();
                for _ in 0..1 + rng.below(8) {
                    m = m.with(rng.below(W::CELLS));
                }
                m
            }
            _ => {
                let mut words = [0; 8];
                words.iter_mut().for_each(|w| *w = rng.next() & rng.next());
                W::Mask::from_words(&words)
            }
        }
    }

    fn value<W: Width>(rng: &mut Rng) -> u32 {
        let edges = [
            0,
            1,
            2,
            W::MAX - 1,
            W::MAX,
            W::MAX.saturating_add(1),
            W::MAX / 2,
            u32::MAX - 1,
            u32::MAX,
        ];
        match rng.below(12) {
            i if i < edges.len() => edges[i],
            9 => rng.next() as u32,
            _ => rng.next() as u32 & W::MAX,
        }
    }

    /// A select-then-update kernel as a method of the table.
    type Update<W> = fn(&Kernels<W>, &mut Block, <W as Width>::Mask, u32);

    /// Random cases per width; Miri emulates every instruction, so fewer.
    const CASES: usize = if cfg!(miri) { 24 } else { 20_000 };

    fn select<W: Width>(k: &Kernels<W>, rng: &mut Rng) {
        let s = Kernels::<W>::scalar();
        for _ in 0..CASES {
            let b = block::<W>(rng);
            let m = mask::<W>(rng);
            let v = value::<W>(rng);
            let ctx = (W::BITS, b, m, v);
            assert_eq!(k.any_zero(&b, m), s.any_zero(&b, m), "any_zero {ctx:?}");
            assert_eq!(k.min_count(&b, m), s.min_count(&b, m), "min_count {ctx:?}");
            let updates: [Update<W>; 4] = [
                Kernels::max_assign,
                Kernels::assign,
                Kernels::add_sat,
                Kernels::sub_sat,
            ];
            for (op, update) in updates.iter().enumerate() {
                let (mut got, mut want) = (b, b);
                update(k, &mut got, m, v);
                update(s, &mut want, m, v);
                assert_eq!(got, want, "update #{op} {ctx:?}");
            }
        }
    }

    /// Stride over run starts and lengths; 1 natively, coarser under Miri.
    const STEP: usize = if cfg!(miri) { 97 } else { 1 };

    fn runs<W: Width>(k: &Kernels<W>, rng: &mut Rng) {
        const BLOCKS: usize = 6;
        for nblocks in [0, 1, BLOCKS] {
            let mut blocks = [Block::ZERO; BLOCKS];
            blocks.iter_mut().for_each(|b| *b = block::<W>(rng));
            let blocks = &mut blocks[..nblocks];
            for start in (0..=130)
                .step_by(STEP)
                .chain([W::CELLS * BLOCKS - 1, usize::MAX])
            {
                for len in (0..=300).step_by(STEP).chain([usize::MAX]) {
                    assert_eq!(
                        k.zero_count(blocks, start, len),
                        all::zero_count::<W>(blocks, start, len),
                        "zero_count bits={} blocks={nblocks} start={start} len={len}",
                        W::BITS,
                    );
                    let mut got = [Block::ZERO; BLOCKS];
                    let got = &mut got[..nblocks];
                    got.copy_from_slice(blocks);
                    k.dec_run(got, start, len);
                    all::dec_run::<W>(blocks, start, len);
                    assert_eq!(
                        got,
                        blocks,
                        "dec_run bits={} blocks={nblocks} start={start} len={len}",
                        W::BITS,
                    );
                }
            }
        }
    }

    fn check<W: Width>(isa: Isa, seed: u64) {
        let k = Kernels::<W>::for_isa(isa).expect("isa is available");
        assert_eq!(k.isa(), isa);
        let mut rng = Rng(seed);
        select(k, &mut rng);
        runs(k, &mut rng);
    }

    /// Every kernel of every width of `isa` against the scalar reference.
    pub(crate) fn check_all(isa: Isa) {
        check::<W1>(isa, 1);
        check::<W2>(isa, 2);
        check::<W4>(isa, 3);
        check::<W8>(isa, 4);
        check::<W16>(isa, 5);
        check::<W32>(isa, 6);
    }

    #[test]
    fn avx2_matches_scalar() {
        if Isa::Avx2.is_available() {
            check_all(Isa::Avx2);
        }
    }
}
