//! AVX-512 F+BW: a block is one 512-bit vector, and a selection is a mask
//! register (`__mmask64`, `__mmask32`, `__mmask16`: bit `i` is lane `i`), so
//! a selection mask of 8-, 16- or 32-bit cells *is* the selection and the
//! updates are single masked instructions (`vpmaxu`, `vpaddus`, `vpsubus`,
//! moves; 32-bit cells have no saturating add or subtract, so
//! `min(c, !r) + r` and `max(c, r) - r` under the mask).
//! [`crate::arch::generic`] has the kernels.
//!
//! The selection of 4-bit cells (128 bits, cells `2j` and `2j + 1` in byte
//! `j`) is de-interleaved into one `__mmask64` per nibble with `vpshufb`
//! (each byte fetches the mask byte holding its two bits) and `vptestmb`
//! against the even and the odd bit of each pair: AVX-512BW only, no BMI2
//! `pext`, which this backend does not require.
//!
//! W1 and W2 run the scalar reference. The tables are only handed out when
//! CPUID reports both AVX-512F and AVX-512BW ([`Isa::Avx512`]).

use core::arch::x86_64::*;

use crate::arch::generic::{stamp, Lane, Vector};
use crate::{Block, Isa};

type V = __m512i;

/// The AVX-512 F+BW backend: only code compiled with both enabled makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

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

/// Bits `lo..hi` of a word (`lo, hi <= 64`; none when `lo >= hi`).
#[inline(always)]
fn range(lo: usize, hi: usize) -> u64 {
    let upto = |n: usize| if n >= 64 { u64::MAX } else { (1 << n) - 1 };
    upto(hi) & !upto(lo)
}

/// The lanes of `l` in a 512-bit vector, as a mask.
#[inline(always)]
fn lanes(l: Lane) -> u64 {
    range(0, 64 / l.bytes())
}

// SAFETY (every `unsafe` block below): an `Avx512` value exists only inside
// functions compiled for AVX-512 F+BW, which run only where the CPU has
// them (see `stamp!`), and every pointer access is to a bounds-checked
// slice of the vector's size.
impl Vector for Avx512 {
    type V = V;
    type Sel = u64;
    const BYTES: usize = 64;

    #[inline(always)]
    fn load(self, _: Lane, bytes: &[u8], at: usize) -> V {
        let s = &bytes[at..at + 64];
        // SAFETY: see the impl; `s` is 64 readable bytes.
        unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
    }
    #[inline(always)]
    fn store(self, _: Lane, bytes: &mut [u8], at: usize, v: V) {
        let s = &mut bytes[at..at + 64];
        // SAFETY: see the impl; `s` is 64 writable bytes.
        unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
    }
    #[inline(always)]
    fn splat(self, l: Lane, v: u32) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_set1_epi8(v as i8),
                Lane::U16 => _mm512_set1_epi16(v as i16),
                Lane::U32 => _mm512_set1_epi32(v as i32),
            }
        }
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    fn min(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_min_epu8(a, b),
                Lane::U16 => _mm512_min_epu16(a, b),
                Lane::U32 => _mm512_min_epu32(a, b),
            }
        }
    }
    #[inline(always)]
    fn max(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_max_epu8(a, b),
                Lane::U16 => _mm512_max_epu16(a, b),
                Lane::U32 => _mm512_max_epu32(a, b),
            }
        }
    }
    #[inline(always)]
    fn adds(self, l: Lane, a: V, b: V) -> V {
        self.adds_sel(l, a, u64::MAX, b)
    }
    #[inline(always)]
    fn subs(self, l: Lane, a: V, b: V) -> V {
        self.subs_sel(l, a, u64::MAX, b)
    }
    #[inline(always)]
    fn eq(self, l: Lane, a: V, b: V) -> u64 {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_cmpeq_epi8_mask(a, b),
                Lane::U16 => u64::from(_mm512_cmpeq_epi16_mask(a, b)),
                Lane::U32 => u64::from(_mm512_cmpeq_epi32_mask(a, b)),
            }
        }
    }
    #[inline(always)]
    fn both(self, a: u64, b: u64) -> u64 {
        a & b
    }
    #[inline(always)]
    fn bits(self, _: Lane, s: u64) -> u64 {
        s
    }
    #[inline(always)]
    fn select(self, l: Lane, bits: u64) -> u64 {
        bits & lanes(l)
    }
    #[inline(always)]
    fn masked(self, l: Lane, v: V, s: u64) -> V {
        // SAFETY: see the impl.
        unsafe { self.blend(l, _mm512_setzero_si512(), s, v) }
    }
    #[inline(always)]
    fn blend(self, l: Lane, x: V, s: u64, v: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_mask_mov_epi8(x, s, v),
                Lane::U16 => _mm512_mask_mov_epi16(x, s as u32, v),
                Lane::U32 => _mm512_mask_mov_epi32(x, s as u16, v),
            }
        }
    }
    #[inline(always)]
    fn fill_unselected(self, l: Lane, x: V, s: u64) -> V {
        // SAFETY: see the impl.
        unsafe { self.blend(l, _mm512_set1_epi8(-1), s, x) }
    }
    #[inline(always)]
    fn hmin(self, l: Lane, x: V) -> u32 {
        // SAFETY: see the impl.
        unsafe {
            if l == Lane::U32 {
                return _mm512_reduce_min_epu32(x);
            }
            let (a, b) = (_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64::<1>(x));
            let y = if l == Lane::U8 {
                _mm256_min_epu8(a, b)
            } else {
                _mm256_min_epu16(a, b)
            };
            let (c, d) = (_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y));
            let z = if l == Lane::U8 {
                let z = _mm_min_epu8(c, d);
                _mm_min_epu8(z, _mm_srli_epi16::<8>(z))
            } else {
                _mm_min_epu16(c, d)
            };
            (_mm_cvtsi128_si32(_mm_minpos_epu16(z)) as u32) & 0xffff
        }
    }
    #[inline(always)]
    fn sub8(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { _mm512_sub_epi8(a, b) }
    }
    #[inline(always)]
    fn hsum8(self, v: V) -> u32 {
        // SAFETY: see the impl.
        unsafe { _mm512_reduce_add_epi64(_mm512_sad_epu8(v, _mm512_setzero_si512())) as u32 }
    }
    #[inline(always)]
    fn select_nibbles(self, mask: [u64; 2], _: usize) -> [u64; 2] {
        // SAFETY: see the impl.
        unsafe {
            let m = _mm512_broadcast_i32x4(_mm_set_epi64x(mask[1] as i64, mask[0] as i64));
            let s = _mm512_shuffle_epi8(m, self.load(Lane::U8, &SPREAD.0, 0));
            let even = _mm512_set1_epi32(0x4010_0401);
            let odd = _mm512_set1_epi32(0x8020_0802_u32 as i32);
            [
                _mm512_test_epi8_mask(s, even),
                _mm512_test_epi8_mask(s, odd),
            ]
        }
    }
    #[inline(always)]
    fn window(self, lo: usize, hi: usize) -> u64 {
        range(lo, hi)
    }
    #[inline(always)]
    fn span(self, lo: usize, hi: usize) -> u64 {
        range(lo, hi)
    }
    #[inline(always)]
    fn max_sel(self, l: Lane, c: V, s: u64, v: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_mask_max_epu8(c, s, c, v),
                Lane::U16 => _mm512_mask_max_epu16(c, s as u32, c, v),
                Lane::U32 => _mm512_mask_max_epu32(c, s as u16, c, v),
            }
        }
    }
    #[inline(always)]
    fn adds_sel(self, l: Lane, c: V, s: u64, v: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_mask_adds_epu8(c, s, c, v),
                Lane::U16 => _mm512_mask_adds_epu16(c, s as u32, c, v),
                Lane::U32 => {
                    let not_v = _mm512_xor_si512(v, _mm512_set1_epi32(-1));
                    _mm512_mask_add_epi32(c, s as u16, _mm512_min_epu32(c, not_v), v)
                }
            }
        }
    }
    #[inline(always)]
    fn subs_sel(self, l: Lane, c: V, s: u64, v: V) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => _mm512_mask_subs_epu8(c, s, c, v),
                Lane::U16 => _mm512_mask_subs_epu16(c, s as u32, c, v),
                Lane::U32 => _mm512_mask_sub_epi32(c, s as u16, _mm512_max_epu32(c, v), v),
            }
        }
    }
}

stamp! {
    isa: Isa::Avx512, token: Avx512, new: Avx512(()), features: ["avx2,avx512f,avx512bw"],
    W4: TABLE_W4 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W8: TABLE_W8 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W16: TABLE_W16 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W32: TABLE_W32 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
}
