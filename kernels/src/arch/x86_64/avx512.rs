//! AVX-512 F+BW kernels: a block is one 512-bit vector, and a selection mask
//! of 8-, 16- or 32-bit cells *is* an AVX-512 mask register (`__mmask64`,
//! `__mmask32`, `__mmask16`: bit `i` is lane `i`).
//!
//! **Select kernels (W4, W8, W16, W32).** One load, one masked instruction,
//! one store; nothing to expand:
//!
//! - `any_zero`: `vptestnm` under the mask (selected lanes that are zero);
//! - `min_count`: unselected lanes set to all ones by a masked move, the
//!   minimum reduced horizontally (`phminposuw` for the last step of 8- and
//!   16-bit cells), then a masked compare and `count_ones`;
//! - `max_assign`, `assign`, `add_sat`, `sub_sat`: masked `vpmaxu`, move,
//!   `vpaddus`, `vpsubus`, with the operand clamped to `W::MAX` first (which
//!   is the scalar reference's saturation). 32-bit cells have no saturating
//!   add or subtract: `min(c, !r) + r` and `max(c, r) - r` under the mask.
//!
//! 4-bit cells are split into low-nibble and high-nibble byte vectors
//! (`c & 0x0f`, `(c >> 4) & 0x0f`), handled as 8-bit cells with `MAX = 15`,
//! and joined back. Their selection (128 bits, cell `2j` and `2j + 1` in byte
//! `j`) is de-interleaved into one `__mmask64` per nibble with `vpshufb` (each
//! byte fetches the mask byte holding its two bits) and `vptestmb` against
//! the even and the odd bit of each pair: AVX-512BW only, no BMI2 `pext`,
//! which this backend does not require.
//!
//! **Runs (W4, W8, W16, W32).** A run of cells is a contiguous byte range of
//! the blocks. It is processed 64 bytes at a time with byte-masked loads and
//! stores, so the last partial step is one masked vector too (masked-off
//! bytes are never accessed, so no read or write leaves the run). Odd nibbles
//! at either end of a W4 run are done by the scalar reference.
//!
//! - `dec_run`: `subs_epu8(c, 1)` (W8), `subs_epu16(c, 1)` (W16),
//!   `max(c, 1) - 1` (W32), and for W4 bytes
//!   `subs_epu8(c & 0x0f, 1) | subs_epu8(c & 0xf0, 0x10)`.
//! - `zero_count`: a `vptestnm` mask of the zero cells becomes one byte of 1
//!   per zero cell, summed with `psadbw` into 64-bit accumulators. Bytes past
//!   the run load as `0xff`, which is no zero cell of any width.
//!
//! **Left scalar.** W1 and W2 use [`crate::arch::all`] throughout.
//!
//! The tables are only handed out when CPUID reports both AVX-512F and
//! AVX-512BW ([`Isa::Avx512`]); the functions enable exactly those.

use core::arch::x86_64::*;

use super::avx2::{run_bounds, w4_bytes};
use crate::arch::all;
use crate::{Block, Isa, Kernels, MinCount, W1, W2, W4};

type V = __m512i;

#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load(block: &Block) -> V {
    // SAFETY: a `Block` is 64 readable bytes aligned to 64.
    unsafe { _mm512_load_si512(core::ptr::from_ref(block).cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store(block: &mut Block, v: V) {
    // SAFETY: a `Block` is 64 writable bytes aligned to 64.
    unsafe { _mm512_store_si512(core::ptr::from_mut(block).cast(), v) }
}

/// The minimum of the 16 bytes of `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn hmin_u8_128(x: __m128i) -> u32 {
    // Each 16-bit lane becomes the min of its two bytes, then `phminposuw`.
    let y = _mm_min_epu8(x, _mm_srli_epi16::<8>(x));
    (_mm_cvtsi128_si32(_mm_minpos_epu16(y)) as u32) & 0xffff
}

/// The minimum of the 64 bytes of `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn hmin_u8(x: V) -> u32 {
    let y = _mm256_min_epu8(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64::<1>(x));
    hmin_u8_128(_mm_min_epu8(
        _mm256_castsi256_si128(y),
        _mm256_extracti128_si256::<1>(y),
    ))
}

/// Shared shape of the select kernels for the widths whose cells are
/// lanes (W8, W16, W32). The invoking module defines the lane vocabulary:
/// `M` (the mask type), `testn` (`vptestnm`), `mov`, `eq` (masked compare),
/// `max`, `adds`, `subs` (merge-masked), `splat` (clamped to `MAX`) and
/// `hmin`.
macro_rules! lane_kernels {
    () => {
        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn any_zero(block: &Block, mask: M) -> bool {
            let x = load(block);
            testn(mask, x) != 0
        }

        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn min_count(block: &Block, mask: M) -> MinCount {
            if mask == 0 {
                return MinCount::EMPTY;
            }
            let x = load(block);
            let m = hmin(mov(_mm512_set1_epi8(-1), mask, x));
            MinCount {
                min: m,
                count: eq(mask, x, splat(m)).count_ones(),
            }
        }

        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn max_assign(block: &mut Block, mask: M, v: u32) {
            let x = load(block);
            store(block, max(x, mask, splat(v)));
        }

        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn assign(block: &mut Block, mask: M, v: u32) {
            let x = load(block);
            store(block, mov(x, mask, splat(v)));
        }

        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn add_sat(block: &mut Block, mask: M, r: u32) {
            let x = load(block);
            store(block, adds(x, mask, splat(r)));
        }

        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) fn sub_sat(block: &mut Block, mask: M, r: u32) {
            let x = load(block);
            store(block, subs(x, mask, splat(r)));
        }
    };
}

mod w8 {
    use super::*;

    type M = u64;

    /// Selected lanes of `x` that are zero.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn testn(k: u64, x: V) -> u64 {
        _mm512_mask_testn_epi8_mask(k, x, x)
    }

    /// `x` with the selected lanes taken from `y`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn mov(x: V, k: u64, y: V) -> V {
        _mm512_mask_mov_epi8(x, k, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn eq(k: u64, x: V, y: V) -> u64 {
        _mm512_mask_cmpeq_epi8_mask(k, x, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn max(x: V, k: u64, v: V) -> V {
        _mm512_mask_max_epu8(x, k, x, v)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn adds(x: V, k: u64, r: V) -> V {
        _mm512_mask_adds_epu8(x, k, x, r)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn subs(x: V, k: u64, r: V) -> V {
        _mm512_mask_subs_epu8(x, k, x, r)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn splat(v: u32) -> V {
        _mm512_set1_epi8(v.min(0xff) as u8 as i8)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn hmin(x: V) -> u32 {
        hmin_u8(x)
    }

    lane_kernels!();
}

mod w16 {
    use super::*;

    type M = u32;

    /// Selected lanes of `x` that are zero.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn testn(k: u32, x: V) -> u32 {
        _mm512_mask_testn_epi16_mask(k, x, x)
    }

    /// `x` with the selected lanes taken from `y`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn mov(x: V, k: u32, y: V) -> V {
        _mm512_mask_mov_epi16(x, k, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn eq(k: u32, x: V, y: V) -> u32 {
        _mm512_mask_cmpeq_epi16_mask(k, x, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn max(x: V, k: u32, v: V) -> V {
        _mm512_mask_max_epu16(x, k, x, v)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn adds(x: V, k: u32, r: V) -> V {
        _mm512_mask_adds_epu16(x, k, x, r)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn subs(x: V, k: u32, r: V) -> V {
        _mm512_mask_subs_epu16(x, k, x, r)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn splat(v: u32) -> V {
        _mm512_set1_epi16(v.min(0xffff) as u16 as i16)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn hmin(x: V) -> u32 {
        let y = _mm256_min_epu16(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64::<1>(x));
        let y = _mm_min_epu16(_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y));
        (_mm_cvtsi128_si32(_mm_minpos_epu16(y)) as u32) & 0xffff
    }

    lane_kernels!();
}

mod w32 {
    use super::*;

    type M = u16;

    /// Selected lanes of `x` that are zero.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn testn(k: u16, x: V) -> u16 {
        _mm512_mask_testn_epi32_mask(k, x, x)
    }

    /// `x` with the selected lanes taken from `y`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn mov(x: V, k: u16, y: V) -> V {
        _mm512_mask_mov_epi32(x, k, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn eq(k: u16, x: V, y: V) -> u16 {
        _mm512_mask_cmpeq_epi32_mask(k, x, y)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn max(x: V, k: u16, v: V) -> V {
        _mm512_mask_max_epu32(x, k, x, v)
    }

    /// `min(x + r, u32::MAX)` in the selected lanes, as `min(x, !r) + r`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn adds(x: V, k: u16, r: V) -> V {
        let not_r = _mm512_xor_si512(r, _mm512_set1_epi32(-1));
        _mm512_mask_add_epi32(x, k, _mm512_min_epu32(x, not_r), r)
    }

    /// `x - r` floored at 0 in the selected lanes, as `max(x, r) - r`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn subs(x: V, k: u16, r: V) -> V {
        _mm512_mask_sub_epi32(x, k, _mm512_max_epu32(x, r), r)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn splat(v: u32) -> V {
        _mm512_set1_epi32(v as i32)
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn hmin(x: V) -> u32 {
        _mm512_reduce_min_epu32(x)
    }

    lane_kernels!();
}

mod w4 {
    use super::*;

    /// `vpshufb` indices: byte `j` fetches mask byte `j / 4` (the one holding
    /// bits `2j` and `2j + 1`) from the mask broadcast to every 128-bit lane.
    static SPREAD: Block = {
        let mut b = [0; 64];
        let mut j = 0;
        while j < 64 {
            b[j] = (j / 4) as u8;
            j += 1;
        }
        Block(b)
    };

    /// The selection of the low nibbles (cells `2j`, bit `j`) and of the
    /// high nibbles (cells `2j + 1`, bit `j`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn nibble_masks(mask: [u64; 2]) -> (u64, u64) {
        let m = _mm512_broadcast_i32x4(_mm_set_epi64x(mask[1] as i64, mask[0] as i64));
        let s = _mm512_shuffle_epi8(m, load(&SPREAD));
        let even = _mm512_set1_epi32(0x4010_0401);
        let odd = _mm512_set1_epi32(0x8020_0802_u32 as i32);
        (
            _mm512_test_epi8_mask(s, even),
            _mm512_test_epi8_mask(s, odd),
        )
    }

    /// The low-nibble and high-nibble cells of `x`, one per byte.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn split(x: V) -> (V, V) {
        let nib = _mm512_set1_epi8(0x0f);
        (
            _mm512_and_si512(x, nib),
            _mm512_and_si512(_mm512_srli_epi16::<4>(x), nib),
        )
    }

    /// Applies `f(cells, selection)` to both nibble vectors.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn update(block: &mut Block, mask: [u64; 2], f: impl Fn(V, u64) -> V) {
        let (k_lo, k_hi) = nibble_masks(mask);
        let (lo, hi) = split(load(block));
        let joined = _mm512_or_si512(f(lo, k_lo), _mm512_slli_epi16::<4>(f(hi, k_hi)));
        store(block, joined);
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn splat(v: u32) -> V {
        _mm512_set1_epi8(v.min(15) as i8)
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn any_zero(block: &Block, mask: [u64; 2]) -> bool {
        let (k_lo, k_hi) = nibble_masks(mask);
        let x = load(block);
        let lo = _mm512_mask_testn_epi8_mask(k_lo, x, _mm512_set1_epi8(0x0f));
        let hi = _mm512_mask_testn_epi8_mask(k_hi, x, _mm512_set1_epi8(0xf0_u8 as i8));
        lo | hi != 0
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn min_count(block: &Block, mask: [u64; 2]) -> MinCount {
        if mask == [0, 0] {
            return MinCount::EMPTY;
        }
        let (k_lo, k_hi) = nibble_masks(mask);
        let (lo, hi) = split(load(block));
        let ones = _mm512_set1_epi8(-1);
        let m = hmin_u8(_mm512_min_epu8(
            _mm512_mask_mov_epi8(ones, k_lo, lo),
            _mm512_mask_mov_epi8(ones, k_hi, hi),
        ));
        let s = splat(m);
        let count = _mm512_mask_cmpeq_epi8_mask(k_lo, lo, s).count_ones()
            + _mm512_mask_cmpeq_epi8_mask(k_hi, hi, s).count_ones();
        MinCount { min: m, count }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn max_assign(block: &mut Block, mask: [u64; 2], v: u32) {
        let v = splat(v);
        update(block, mask, |c, k| _mm512_mask_max_epu8(c, k, c, v));
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn assign(block: &mut Block, mask: [u64; 2], v: u32) {
        let v = splat(v);
        update(block, mask, |c, k| _mm512_mask_mov_epi8(c, k, v));
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn add_sat(block: &mut Block, mask: [u64; 2], r: u32) {
        let r = splat(r);
        let max = splat(15);
        update(block, mask, |c, k| {
            _mm512_mask_min_epu8(c, k, _mm512_add_epi8(c, r), max)
        });
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) fn sub_sat(block: &mut Block, mask: [u64; 2], r: u32) {
        let r = splat(r);
        update(block, mask, |c, k| _mm512_mask_subs_epu8(c, k, c, r));
    }
}

/// The lane mask of the first `n` bytes (`n <= 64`).
#[inline]
fn first(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// Bytes `at..at + n` of `bytes` (`n <= 64`) in the low lanes, `0xff` above.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_n(bytes: &[u8], at: usize, n: usize) -> V {
    let part = &bytes[at..at + n];
    // SAFETY: the mask selects exactly the `n` bytes of `part`, which are
    // readable; masked-off bytes are not accessed (AVX-512 masked loads
    // suppress faults on them).
    unsafe { _mm512_mask_loadu_epi8(_mm512_set1_epi8(-1), first(n), part.as_ptr().cast()) }
}

/// Writes the low `n` lanes of `v` to bytes `at..at + n` of `bytes`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store_n(bytes: &mut [u8], at: usize, n: usize, v: V) {
    let part = &mut bytes[at..at + n];
    // SAFETY: the mask selects exactly the `n` bytes of `part`, which are
    // writable and borrowed exclusively; masked-off bytes are not accessed.
    unsafe { _mm512_mask_storeu_epi8(part.as_mut_ptr().cast(), first(n), v) }
}

/// Replaces bytes `start..end` of `bytes` by `f` of them, 64 at a time;
/// `f` must map whole cells (`start` and `end` are cell boundaries).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn map_bytes(bytes: &mut [u8], start: usize, end: usize, f: impl Fn(V) -> V) {
    let mut at = start;
    while at < end {
        let n = (end - at).min(64);
        store_n(bytes, at, n, f(load_n(bytes, at, n)));
        at += n;
    }
}

/// The sum over bytes `start..end` of `f` of them, where `f` gives a small
/// count per byte (and none for `0xff` bytes, which pad the last step).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn sum_bytes(bytes: &[u8], start: usize, end: usize, f: impl Fn(V) -> V) -> usize {
    let z = _mm512_setzero_si512();
    let mut acc = z;
    let mut at = start;
    while at < end {
        let n = (end - at).min(64);
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(f(load_n(bytes, at, n)), z));
        at += n;
    }
    _mm512_reduce_add_epi64(acc) as usize
}

#[target_feature(enable = "avx512f,avx512bw")]
fn dec_run_w8(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 64, start, len);
    let one = _mm512_set1_epi8(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), lo, hi, |x| {
        _mm512_subs_epu8(x, one)
    });
}

#[target_feature(enable = "avx512f,avx512bw")]
fn dec_run_w16(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 32, start, len);
    let one = _mm512_set1_epi16(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), 2 * lo, 2 * hi, |x| {
        _mm512_subs_epu16(x, one)
    });
}

#[target_feature(enable = "avx512f,avx512bw")]
fn dec_run_w32(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = run_bounds(blocks.len() * 16, start, len);
    let one = _mm512_set1_epi32(1);
    map_bytes(bytemuck::cast_slice_mut(blocks), 4 * lo, 4 * hi, |x| {
        _mm512_sub_epi32(_mm512_max_epu32(x, one), one)
    });
}

#[target_feature(enable = "avx512f,avx512bw")]
fn dec_run_w4(blocks: &mut [Block], start: usize, len: usize) {
    let (lo, hi) = w4_bytes(blocks.len(), start, len, |i| {
        all::dec_run::<W4>(blocks, i, 1)
    });
    let low = _mm512_set1_epi8(0x0f);
    let one = _mm512_set1_epi8(1);
    let sixteen = _mm512_set1_epi8(0x10);
    map_bytes(bytemuck::cast_slice_mut(blocks), lo, hi, |x| {
        _mm512_or_si512(
            _mm512_subs_epu8(_mm512_and_si512(x, low), one),
            _mm512_subs_epu8(_mm512_andnot_si512(low, x), sixteen),
        )
    });
}

#[target_feature(enable = "avx512f,avx512bw")]
fn zero_count_w8(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 64, start, len);
    let one = _mm512_set1_epi8(1);
    sum_bytes(bytemuck::cast_slice(blocks), lo, hi, |x| {
        _mm512_maskz_mov_epi8(_mm512_testn_epi8_mask(x, x), one)
    })
}

#[target_feature(enable = "avx512f,avx512bw")]
fn zero_count_w16(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 32, start, len);
    let one = _mm512_set1_epi16(1);
    sum_bytes(bytemuck::cast_slice(blocks), 2 * lo, 2 * hi, |x| {
        _mm512_maskz_mov_epi16(_mm512_testn_epi16_mask(x, x), one)
    })
}

#[target_feature(enable = "avx512f,avx512bw")]
fn zero_count_w32(blocks: &[Block], start: usize, len: usize) -> usize {
    let (lo, hi) = run_bounds(blocks.len() * 16, start, len);
    let one = _mm512_set1_epi32(1);
    sum_bytes(bytemuck::cast_slice(blocks), 4 * lo, 4 * hi, |x| {
        _mm512_maskz_mov_epi32(_mm512_testn_epi32_mask(x, x), one)
    })
}

#[target_feature(enable = "avx512f,avx512bw")]
fn zero_count_w4(blocks: &[Block], start: usize, len: usize) -> usize {
    let mut edges = 0;
    let (lo, hi) = w4_bytes(blocks.len(), start, len, |i| {
        edges += all::zero_count::<W4>(blocks, i, 1);
    });
    let one = _mm512_set1_epi8(1);
    let low = _mm512_set1_epi8(0x0f);
    let high = _mm512_set1_epi8(0xf0_u8 as i8);
    let inner = sum_bytes(bytemuck::cast_slice(blocks), lo, hi, |x| {
        _mm512_add_epi8(
            _mm512_maskz_mov_epi8(_mm512_testn_epi8_mask(x, low), one),
            _mm512_maskz_mov_epi8(_mm512_testn_epi8_mask(x, high), one),
        )
    });
    edges + inner
}

pub(crate) const TABLE_W1: Kernels<W1> = Kernels::scalar_as(Isa::Avx512);
pub(crate) const TABLE_W2: Kernels<W2> = Kernels::scalar_as(Isa::Avx512);

crate::dispatch::module_table!(Isa::Avx512, TABLE_W4, W4, w4, dec_run_w4, zero_count_w4);
crate::dispatch::module_table!(Isa::Avx512, TABLE_W8, W8, w8, dec_run_w8, zero_count_w8);
crate::dispatch::module_table!(
    Isa::Avx512,
    TABLE_W16,
    W16,
    w16,
    dec_run_w16,
    zero_count_w16
);
crate::dispatch::module_table!(
    Isa::Avx512,
    TABLE_W32,
    W32,
    w32,
    dec_run_w32,
    zero_count_w32
);

#[cfg(test)]
mod tests {
    use crate::Isa;

    /// Every kernel of every width against the scalar reference. Where
    /// AVX-512 is unavailable nothing of it can run; CI runs it under Miri
    /// built with AVX-512, as it does the slot-by-slot wiring check of
    /// `tests/differential.rs` (`slots_are_wired`).
    #[test]
    fn avx512_matches_scalar() {
        if Isa::Avx512.is_available() {
            super::super::avx2::tests::check_all(Isa::Avx512);
        }
    }
}
