//! The AVX2 form of [`crate::arch::bits::hash_words`]: the eight words are
//! two vectors, each lane shifted by its own count (`vpsrlvq`, `vpsllvq`).
//! Left to itself, LLVM vectorizes the scalar form in some callers and
//! not in others (it may also turn the constant shifts into multiplies),
//! so the hot path gets it written out.

use core::arch::x86_64::*;

/// [`crate::arch::bits::hash_words`] in AVX2.
///
/// # Safety
///
/// The CPU must run AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn hash_words(x: u64, top: u32, used: u64) -> [u64; 8] {
    let top = i64::from(top);
    let (x, used) = (
        _mm256_set1_epi64x(x as i64),
        _mm256_set1_epi64x(used as i64),
    );
    let (low6, one) = (_mm256_set1_epi64x(63), _mm256_set1_epi64x(1));
    // Word `w`'s field, `(x >> (58 - top - 6w)) & 63`, and its bit of
    // `used`, for words 0..4 and 4..8.
    let base = _mm256_set1_epi64x(58 - top);
    let at_lo = _mm256_sub_epi64(base, _mm256_setr_epi64x(0, 6, 12, 18));
    let at_hi = _mm256_sub_epi64(base, _mm256_setr_epi64x(24, 30, 36, 42));
    let field_lo = _mm256_and_si256(_mm256_srlv_epi64(x, at_lo), low6);
    let field_hi = _mm256_and_si256(_mm256_srlv_epi64(x, at_hi), low6);
    let bit_lo = _mm256_srlv_epi64(used, _mm256_setr_epi64x(0, 1, 2, 3));
    let bit_hi = _mm256_srlv_epi64(used, _mm256_setr_epi64x(4, 5, 6, 7));
    let lo = _mm256_sllv_epi64(_mm256_and_si256(bit_lo, one), field_lo);
    let hi = _mm256_sllv_epi64(_mm256_and_si256(bit_hi, one), field_hi);
    let mut out = [0u64; 8];
    // SAFETY: `out` is 64 writable bytes, two unaligned 32-byte stores.
    unsafe {
        _mm256_storeu_si256(out.as_mut_ptr().cast(), lo);
        _mm256_storeu_si256(out.as_mut_ptr().add(4).cast(), hi);
    }
    out
}
