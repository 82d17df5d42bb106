//! NEON (`core::arch::aarch64`), compiled where NEON is enabled at compile
//! time (every aarch64 Linux, macOS and Windows target): a block is four
//! 128-bit vectors, a selection a vector of all-ones lanes (`vtstq` of the
//! broadcast mask bits against per-lane bit constants);
//! [`crate::arch::generic`] has the kernels. NEON has no `movemask`: a lane
//! bitmap is the across-vector sum (`vaddv`) of each lane's bit; the minimum
//! of a vector is `vminvq`.
//!
//! W1 and W2 run the scalar reference. Cells are little-endian in memory; on
//! big-endian aarch64 the 16- and 32-bit lanes are byte-swapped after
//! loading and before storing.

use core::arch::aarch64::*;

use crate::arch::generic::{stamp, Lane, Vector};
use crate::Isa;

type V = uint8x16_t;

/// The NEON backend.
#[derive(Clone, Copy)]
pub(crate) struct Neon(());

/// Applies the 8-, 16- or 32-bit version of an intrinsic as `l` says.
macro_rules! by_lane {
    ($l:expr, $a:expr, $b:expr, $u8:ident, $u16:ident, $u32:ident) => {
        match $l {
            Lane::U8 => $u8($a, $b),
            Lane::U16 => {
                vreinterpretq_u8_u16($u16(vreinterpretq_u16_u8($a), vreinterpretq_u16_u8($b)))
            }
            Lane::U32 => {
                vreinterpretq_u8_u32($u32(vreinterpretq_u32_u8($a), vreinterpretq_u32_u8($b)))
            }
        }
    };
}

// SAFETY (every `unsafe` block below): NEON is enabled at compile time on
// this target (the module is compiled only then), and every pointer access
// is to a bounds-checked slice of the vector's size.
impl Neon {
    /// Little-endian lanes of `l` to native ones and back.
    #[inline(always)]
    fn swap_le(self, l: Lane, v: V) -> V {
        if cfg!(target_endian = "little") {
            return v;
        }
        // SAFETY: see above.
        unsafe {
            match l {
                Lane::U8 => v,
                Lane::U16 => vrev16q_u8(v),
                Lane::U32 => vrev32q_u8(v),
            }
        }
    }
}

impl Vector for Neon {
    type V = V;
    type Sel = V;
    const BYTES: usize = 16;

    #[inline(always)]
    fn load(self, l: Lane, bytes: &[u8], at: usize) -> V {
        let s = &bytes[at..at + 16];
        // SAFETY: see the impl; `s` is 16 readable bytes.
        self.swap_le(l, unsafe { vld1q_u8(s.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, l: Lane, bytes: &mut [u8], at: usize, v: V) {
        let s = &mut bytes[at..at + 16];
        // SAFETY: see the impl; `s` is 16 writable bytes.
        unsafe { vst1q_u8(s.as_mut_ptr(), self.swap_le(l, v)) }
    }
    #[inline(always)]
    fn splat(self, l: Lane, v: u32) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => vdupq_n_u8(v as u8),
                Lane::U16 => vreinterpretq_u8_u16(vdupq_n_u16(v as u16)),
                Lane::U32 => vreinterpretq_u8_u32(vdupq_n_u32(v)),
            }
        }
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { vandq_u8(a, b) }
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { vorrq_u8(a, b) }
    }
    #[inline(always)]
    fn min(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { by_lane!(l, a, b, vminq_u8, vminq_u16, vminq_u32) }
    }
    #[inline(always)]
    fn max(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { by_lane!(l, a, b, vmaxq_u8, vmaxq_u16, vmaxq_u32) }
    }
    #[inline(always)]
    fn adds(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { by_lane!(l, a, b, vqaddq_u8, vqaddq_u16, vqaddq_u32) }
    }
    #[inline(always)]
    fn subs(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { by_lane!(l, a, b, vqsubq_u8, vqsubq_u16, vqsubq_u32) }
    }
    #[inline(always)]
    fn eq(self, l: Lane, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { by_lane!(l, a, b, vceqq_u8, vceqq_u16, vceqq_u32) }
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
                Lane::U8 => {
                    let b = vandq_u8(s, vreinterpretq_u8_u64(vdupq_n_u64(0x8040_2010_0804_0201)));
                    u64::from(vaddv_u8(vget_low_u8(b))) | u64::from(vaddv_u8(vget_high_u8(b))) << 8
                }
                Lane::U16 => {
                    let bit = vcombine_u16(
                        vcreate_u16(0x0008_0004_0002_0001),
                        vcreate_u16(0x0080_0040_0020_0010),
                    );
                    u64::from(vaddvq_u16(vandq_u16(vreinterpretq_u16_u8(s), bit)))
                }
                Lane::U32 => {
                    let bit = vcombine_u32(vcreate_u32(0x2_0000_0001), vcreate_u32(0x8_0000_0004));
                    u64::from(vaddvq_u32(vandq_u32(vreinterpretq_u32_u8(s), bit)))
                }
            }
        }
    }
    #[inline(always)]
    fn select(self, l: Lane, bits: u64) -> V {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => {
                    let bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040_2010_0804_0201));
                    let spread = vcombine_u8(vdup_n_u8(bits as u8), vdup_n_u8((bits >> 8) as u8));
                    vtstq_u8(spread, bit)
                }
                Lane::U16 => {
                    let bit = vcombine_u16(
                        vcreate_u16(0x0008_0004_0002_0001),
                        vcreate_u16(0x0080_0040_0020_0010),
                    );
                    vreinterpretq_u8_u16(vtstq_u16(vdupq_n_u16(bits as u16), bit))
                }
                Lane::U32 => {
                    let bit = vcombine_u32(vcreate_u32(0x2_0000_0001), vcreate_u32(0x8_0000_0004));
                    vreinterpretq_u8_u32(vtstq_u32(vdupq_n_u32(bits as u32), bit))
                }
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
        unsafe { vbslq_u8(s, v, x) }
    }
    #[inline(always)]
    fn fill_unselected(self, _: Lane, x: V, s: V) -> V {
        // SAFETY: see the impl.
        unsafe { vornq_u8(x, s) }
    }
    #[inline(always)]
    fn sub8(self, a: V, b: V) -> V {
        // SAFETY: see the impl.
        unsafe { vsubq_u8(a, b) }
    }
    #[inline(always)]
    fn hsum8(self, v: V) -> u32 {
        // SAFETY: see the impl.
        u32::from(unsafe { vaddlvq_u8(v) })
    }
    #[inline(always)]
    fn hmin(self, l: Lane, v: V) -> u32 {
        // SAFETY: see the impl.
        unsafe {
            match l {
                Lane::U8 => u32::from(vminvq_u8(v)),
                Lane::U16 => u32::from(vminvq_u16(vreinterpretq_u16_u8(v))),
                Lane::U32 => vminvq_u32(vreinterpretq_u32_u8(v)),
            }
        }
    }
}

stamp! {
    isa: Isa::Neon, token: Neon, new: Neon(()), features: [],
    W4: TABLE_W4 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W8: TABLE_W8 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W16: TABLE_W16 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
    W32: TABLE_W32 [any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count],
}
