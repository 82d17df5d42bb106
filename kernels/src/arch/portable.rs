//! Portable SIMD on the `wide` crate: 128-bit vectors in the compile
//! target's baseline instructions (SSE2 on x86-64, NEON on aarch64, simd128
//! on wasm, plain arrays where there is no SIMD), and no `unsafe`. A block is
//! four vectors, a selection a vector of all-ones lanes;
//! [`crate::arch::generic`] has the kernels.
//!
//! **SIMD earns its place slot by slot**: a slot is vectorised only where the
//! criterion bench (`cargo bench -p streambloom-bench --bench kernels`) ran it
//! faster than scalar on x86-64's SSE2 baseline. Selecting five cells of one
//! block costs little in scalar code, so building four select vectors often
//! does not pay (SSE2 has no horizontal byte minimum, no unsigned 16-bit
//! minimum, and five byte stores beat four select vectors); runs always do.
//!
//! | width | vectorised | left scalar ([`crate::arch::all`]) |
//! |---|---|---|
//! | W1, W2 | the select kernels (word code, [`crate::arch::bits`]) | dec_run, zero_count |
//! | W4 | dec_run, zero_count | the select kernels |
//! | W8 | any_zero, dec_run, zero_count | min_count and the updates |
//! | W16 | any_zero, max_assign, add_sat, sub_sat, dec_run, zero_count | min_count, assign |
//! | W32 | any_zero, dec_run, zero_count | min_count and the updates |
//!
//! Cells are little-endian in memory; on a big-endian target the 16- and
//! 32-bit lanes are byte-swapped after loading and before storing.

use crate::arch::generic::{stamp, Lane, Vector};
use crate::Isa;
use wide::{u16x8, u32x4, u64x2, u8x16};

type V = u8x16;

/// The portable backend: every target runs it.
#[derive(Clone, Copy)]
pub(crate) struct Portable;

/// `v`'s lanes of `l` as 16-bit lanes.
#[inline(always)]
fn w16(v: V) -> u16x8 {
    bytemuck::cast(v)
}

/// `v`'s lanes of `l` as 32-bit lanes.
#[inline(always)]
fn w32(v: V) -> u32x4 {
    bytemuck::cast(v)
}

/// Little-endian lanes of `l` to native ones and back (the swap is its own
/// inverse).
#[inline(always)]
fn swap_le(l: Lane, v: V) -> V {
    if cfg!(target_endian = "little") || l == Lane::U8 {
        return v;
    }
    let s = (w16(v) << 8) | (w16(v) >> 8);
    if l == Lane::U16 {
        bytemuck::cast(s)
    } else {
        let s = w32(bytemuck::cast(s));
        bytemuck::cast((s << 16) | (s >> 16))
    }
}

/// Applies the 8-, 16- or 32-bit version of an operation as `l` says.
macro_rules! by_lane {
    ($l:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {
        match $l {
            Lane::U8 => {
                let ($x, $y) = ($a, $b);
                $e
            }
            Lane::U16 => {
                let ($x, $y) = (w16($a), w16($b));
                bytemuck::cast($e)
            }
            Lane::U32 => {
                let ($x, $y) = (w32($a), w32($b));
                bytemuck::cast($e)
            }
        }
    };
}

impl Vector for Portable {
    type V = V;
    type Sel = V;
    const BYTES: usize = 16;

    #[inline(always)]
    fn load(self, l: Lane, bytes: &[u8], at: usize) -> V {
        swap_le(l, bytemuck::pod_read_unaligned(&bytes[at..at + 16]))
    }
    #[inline(always)]
    fn store(self, l: Lane, bytes: &mut [u8], at: usize, v: V) {
        bytes[at..at + 16].copy_from_slice(bytemuck::bytes_of(&swap_le(l, v)));
    }
    #[inline(always)]
    fn splat(self, l: Lane, v: u32) -> V {
        match l {
            Lane::U8 => u8x16::splat(v as u8),
            Lane::U16 => bytemuck::cast(u16x8::splat(v as u16)),
            Lane::U32 => bytemuck::cast(u32x4::splat(v)),
        }
    }
    #[inline(always)]
    fn and(self, a: V, b: V) -> V {
        a & b
    }
    #[inline(always)]
    fn or(self, a: V, b: V) -> V {
        a | b
    }
    #[inline(always)]
    fn min(self, l: Lane, a: V, b: V) -> V {
        // SSE2 has no unsigned 16-bit minimum; a saturating subtract makes one.
        by_lane!(l, a, b, |x, y| x - x.saturating_sub(y))
    }
    #[inline(always)]
    fn max(self, l: Lane, a: V, b: V) -> V {
        by_lane!(l, a, b, |x, y| x + y.saturating_sub(x))
    }
    #[inline(always)]
    fn adds(self, l: Lane, a: V, b: V) -> V {
        by_lane!(l, a, b, |x, y| x.saturating_add(y))
    }
    #[inline(always)]
    fn subs(self, l: Lane, a: V, b: V) -> V {
        by_lane!(l, a, b, |x, y| x.saturating_sub(y))
    }
    #[inline(always)]
    fn eq(self, l: Lane, a: V, b: V) -> V {
        by_lane!(l, a, b, |x, y| x.simd_eq(y))
    }
    #[inline(always)]
    fn both(self, a: V, b: V) -> V {
        a & b
    }
    #[inline(always)]
    fn bits(self, l: Lane, s: V) -> u64 {
        u64::from(match l {
            Lane::U8 => s.to_bitmask(),
            Lane::U16 => w16(s).to_bitmask(),
            Lane::U32 => w32(s).to_bitmask(),
        })
    }
    #[inline(always)]
    fn select(self, l: Lane, bits: u64) -> V {
        match l {
            Lane::U8 => {
                let byte = |b: u64| (b & 0xff) * 0x0101_0101_0101_0101;
                let spread: u8x16 = bytemuck::cast(u64x2::new([byte(bits), byte(bits >> 8)]));
                let bit = u8x16::new([1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128]);
                (spread & bit).simd_eq(bit)
            }
            Lane::U16 => {
                let bit = u16x8::new([1, 2, 4, 8, 16, 32, 64, 128]);
                bytemuck::cast((u16x8::splat(bits as u16) & bit).simd_eq(bit))
            }
            Lane::U32 => {
                let bit = u32x4::new([1, 2, 4, 8]);
                bytemuck::cast((u32x4::splat(bits as u32) & bit).simd_eq(bit))
            }
        }
    }
    #[inline(always)]
    fn masked(self, _: Lane, v: V, s: V) -> V {
        v & s
    }
    #[inline(always)]
    fn blend(self, _: Lane, x: V, s: V, v: V) -> V {
        (v & s) | (x & !s)
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(always)]
    fn fill_unselected(self, _: Lane, x: V, s: V) -> V {
        x | !s
    }
    #[inline(always)]
    fn sub8(self, a: V, b: V) -> V {
        a - b
    }
    #[inline(always)]
    fn hsum8(self, v: V) -> u32 {
        let pairs: u16x8 = (w16(v) & u16x8::splat(0xff)) + (w16(v) >> 8);
        pairs.to_array().into_iter().map(u32::from).sum()
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(always)]
    fn hmin(self, l: Lane, v: V) -> u32 {
        match l {
            Lane::U8 => v.to_array().into_iter().min().map_or(0, u32::from),
            Lane::U16 => w16(v).to_array().into_iter().min().map_or(0, u32::from),
            Lane::U32 => w32(v).to_array().into_iter().min().unwrap_or(0),
        }
    }
}

stamp! {
    isa: Isa::Portable, token: Portable, new: Portable, features: [],
    W4: TABLE_W4 [dec_run, zero_count],
    W8: TABLE_W8 [any_zero, dec_run, zero_count],
    W16: TABLE_W16 [any_zero, max_assign, add_sat, sub_sat, dec_run, zero_count],
    W32: TABLE_W32 [any_zero, dec_run, zero_count],
}
