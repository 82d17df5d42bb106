//! AVX2: a block is two 256-bit vectors, and a selection is a vector of
//! all-ones lanes ([`crate::arch::generic`] has the kernels).
//!
//! - `select` broadcasts the mask and tests each lane's bit: `vpshufb`
//!   spreads mask bytes over the byte lanes they govern; 4-bit cells take
//!   their mask byte `j / 4` the same way and test the even and the odd bit
//!   of each pair. 32-bit lanes are selected byte by byte: LLVM turns 32-bit
//!   selects over a loaded block into `vpmaskmovd` stores, microcoded on AMD
//!   and a store-forwarding stall for the next probe of the block.
//! - 32-bit lanes have no saturating add or subtract: `min(c, !r) + r` and
//!   `max(c, r) - r` are the same in two instructions.
//! - The minimum of a vector is reduced with `phminposuw` for 8- and 16-bit
//!   lanes; byte counts are summed with `psadbw`.
//!
//! W1 and W2 have word kernels of their own ([`crate::arch::bits`]): their
//! cells are no lanes.

use core::arch::x86_64::*;

use crate::arch::generic::{stamp, Lane, Vector, WINDOW};
use crate::Isa;

type V = __m256i;

/// The AVX2 backend: only code compiled with AVX2 enabled makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

/// The minimum of the 16 bytes of `x` (`phminposuw` on byte pair minima).
#[inline(always)]
fn hmin_u8(x: __m128i) -> u32 {
    // SAFETY: an `Avx2` exists only where the CPU runs AVX2 (and SSE4.1).
    unsafe {
        let y = _mm_min_epu8(x, _mm_srli_epi16::<8>(x));
        (_mm_cvtsi128_si32(_mm_minpos_epu16(y)) as u32) & 0xffff
    }
}

// SAFETY (every `unsafe` block below): an `Avx2` value exists only inside
// functions compiled for AVX2, which run only where the CPU has it (see
// `stamp!`), and every pointer access is to a bounds-checked slice of the
// vector's size.
impl Vector for Avx2 {
    type V = V;
    type Sel = V;
    const BYTES: usize = 32;

    #[inline(always)]
    fn load(self, _: Lane, bytes: &[u8], at: usize) -> V {
        let s = &bytes[at..at + 32];
        // SAFETY: see the impl; `s` is 32 readable bytes.
        unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
    }
    #[inline(always)]
    fn store(self, _: Lane, bytes: &mut [u8], at: usize, v: V) {
        let s = &mut bytes[at..at + 32];
        // SAFETY: see the impl; `s` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) }
    }
    #[inline(always)]
    fn splat(self, l: Lane, v: u32) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_set1_epi8(v as i8),
                Lane::U16 => _mm256_set1_epi16(v as i16),
                Lane::U32 => _mm256_set1_epi32(v as i32),
            }
        }
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn min(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_min_epu8(a, b),
                Lane::U16 => _mm256_min_epu16(a, b),
                Lane::U32 => _mm256_min_epu32(a, b),
            }
        }
    }
    #[inline(always)]
    fn max(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_max_epu8(a, b),
                Lane::U16 => _mm256_max_epu16(a, b),
                Lane::U32 => _mm256_max_epu32(a, b),
            }
        }
    }
    #[inline(always)]
    fn adds(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_adds_epu8(a, b),
                Lane::U16 => _mm256_adds_epu16(a, b),
                Lane::U32 => {
                    let not_b = _mm256_xor_si256(b, _mm256_set1_epi8(-1));
                    _mm256_add_epi32(_mm256_min_epu32(a, not_b), b)
                }
            }
        }
    }
    #[inline(always)]
    fn subs(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_subs_epu8(a, b),
                Lane::U16 => _mm256_subs_epu16(a, b),
                Lane::U32 => _mm256_sub_epi32(_mm256_max_epu32(a, b), b),
            }
        }
    }
    #[inline(always)]
    fn eq(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm256_cmpeq_epi8(a, b),
                Lane::U16 => _mm256_cmpeq_epi16(a, b),
                Lane::U32 => _mm256_cmpeq_epi32(a, b),
            }
        }
    }
    #[inline(always)]
    fn both(self, a: V, b: V) -> V {
        self.and(a, b)
    }
    #[inline(always)]
    fn bits(self, l: Lane, s: V) -> u64 {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => u64::from(_mm256_movemask_epi8(s) as u32),
                Lane::U16 => {
                    // Per 128-bit lane: the eight words as bytes, then zeros.
                    let m = _mm256_movemask_epi8(_mm256_packs_epi16(s, _mm256_setzero_si256()));
                    u64::from(m as u32 & 0xff | (m as u32 >> 8) & 0xff00)
                }
                Lane::U32 => u64::from(_mm256_movemask_ps(_mm256_castsi256_ps(s)) as u32),
            }
        }
    }
    #[inline(always)]
    fn bits2(self, l: Lane, a: V, b: V) -> u64 {
        if l != Lane::U16 {
            return self.bits(l, a) | self.bits(l, b) << (32 / l.bytes());
        }
        // SAFETY: see the impl.
        unsafe {
            // `packs` interleaves the two by 128-bit lane; the permute puts
            // the 64-bit groups back in cell order.
            let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(a, b));
            u64::from(_mm256_movemask_epi8(packed) as u32)
        }
    }
    #[inline(always)]
    fn select(self, l: Lane, bits: u64) -> V {
        // SAFETY: see the impl.
        unsafe {
            let (spread, bit) = match l {
                Lane::U8 => (
                    // Byte j of each 128-bit lane takes mask byte j / 8 of
                    // that lane's pair (the broadcast puts all four in both).
                    _mm256_shuffle_epi8(
                        _mm256_set1_epi32(bits as i32),
                        _mm256_setr_epi8(
                            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, //
                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
                        ),
                    ),
                    _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64),
                ),
                Lane::U16 => (
                    _mm256_set1_epi16(bits as i16),
                    _mm256_setr_epi16(
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
                    ),
                ),
                Lane::U32 => (
                    _mm256_set1_epi8(bits as i8),
                    _mm256_setr_epi8(
                        1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8, //
                        16, 16, 16, 16, 32, 32, 32, 32, 64, 64, 64, 64, -128, -128, -128, -128,
                    ),
                ),
            };
            match l {
                Lane::U16 => _mm256_cmpeq_epi16(_mm256_and_si256(spread, bit), bit),
                _ => _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
            }
        }
    }
    #[inline(always)]
    fn masked(self, _: Lane, v: V, s: V) -> V {
        self.and(v, s)
    }
    #[inline(always)]
    fn blend(self, _: Lane, x: V, s: V, v: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm256_blendv_epi8(x, v, s) }
    }
    #[inline(always)]
    fn fill_unselected(self, _: Lane, x: V, s: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm256_or_si256(x, _mm256_andnot_si256(s, _mm256_set1_epi8(-1))) }
    }
    #[inline(always)]
    fn hmin(self, l: Lane, x: V) -> u32 {
        // SAFETY: see the impl.
        unsafe {
            let (a, b) = (_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
            match l {
                Lane::U8 => hmin_u8(_mm_min_epu8(a, b)),
                Lane::U16 => {
                    (_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_min_epu16(a, b))) as u32) & 0xffff
                }
                Lane::U32 => {
                    let y = _mm_min_epu32(a, b);
                    let y = _mm_min_epu32(y, _mm_shuffle_epi32::<0b01_00_11_10>(y));
                    let y = _mm_min_epu32(y, _mm_shuffle_epi32::<0b10_11_00_01>(y));
                    _mm_cvtsi128_si32(y) as u32
                }
            }
        }
    }
    #[inline(always)]
    fn select_nibbles(self, mask: [u64; 2], j: usize) -> [V; 2] {
        // SAFETY: see the impl.
        unsafe {
            // Byte i needs mask bits 2i and 2i + 1, both in mask byte i / 4:
            // spread mask bytes 0..4 over the low 128-bit lane, 4..8 over
            // the high one.
            let spread = _mm256_setr_epi8(
                0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, //
                4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
            );
            let s = _mm256_shuffle_epi8(_mm256_set1_epi64x(mask[j] as i64), spread);
            let even = _mm256_set1_epi32(0x4010_0401);
            let odd = _mm256_set1_epi32(0x8020_0802_u32 as i32);
            [
                _mm256_cmpeq_epi8(_mm256_and_si256(s, even), even),
                _mm256_cmpeq_epi8(_mm256_and_si256(s, odd), odd),
            ]
        }
    }
    #[inline(always)]
    fn sub8(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm256_sub_epi8(a, b) }
    }
    #[inline(always)]
    fn hsum8(self, v: V) -> u32 {
        // SAFETY: see the impl.
        let sums: [u64; 4] = unsafe { bytemuck::cast(_mm256_sad_epu8(v, _mm256_setzero_si256())) };
        sums.iter().sum::<u64>() as u32
    }
    #[inline(always)]
    fn window(self, lo: usize, hi: usize) -> V {
        self.load(Lane::U8, &WINDOW, if lo == 0 { 128 - hi } else { 64 - lo })
    }
}

stamp! {
    isa: Isa::Avx2, token: Avx2, new: Avx2(()), features: ["avx2"],
    W4: TABLE_W4 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W8: TABLE_W8 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W16: TABLE_W16 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W32: TABLE_W32 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
}
