//! NEON kernels (`core::arch::aarch64`), compiled where NEON is enabled at
//! compile time (every aarch64 Linux, macOS and Windows target).
//!
//! A block is four 128-bit vectors. A selection mask becomes one select vector
//! per 128 bits (`vtstq` of the broadcast mask bits against per-lane bit
//! constants). Reductions need no bitmask, which NEON lacks: unselected lanes
//! are forced to all-ones (`vornq`), so `vminvq` gives the minimum and
//! `any_zero` is "that minimum is 0"; the count of cells at the minimum sums
//! `vceqq & sel` lanes with `vaddvq`. Updates are blend-free: `vmaxq(c, v &
//! sel)`, `vqaddq(c, r & sel)`, `vqsubq(c, r & sel)`; `assign` is `vbslq`.
//! 4-bit cells are handled in place as the low and high nibbles of each byte,
//! each with its own select vector.
//!
//! | width | vectorised | scalar ([`crate::arch::all`]) |
//! |---|---|---|
//! | W1, W2 | — | every kernel |
//! | W4, W8, W16, W32 | any_zero, min_count, max_assign, assign, add_sat, sub_sat, dec_run, zero_count | — |
//!
//! Runs are clipped to the cells that exist; whole vectors are loaded
//! unaligned (free on aarch64), and the cells left over at the end of the run
//! (and an odd nibble at either end) are done in scalar code. Cells are
//! little-endian in memory; on big-endian aarch64 the 16- and 32-bit lanes
//! are byte-swapped after loading and before storing.

use crate::arch::portable::run_bounds;
use crate::{Block, Isa, Kernels, MinCount, W1, W16, W2, W32, W4, W8};
use core::arch::aarch64::*;

/// Lane `i` all-ones where bit `i` of `bits` is set (16 byte lanes).
#[inline]
#[target_feature(enable = "neon")]
fn select_u8(bits: u64) -> uint8x16_t {
    let lane_bits = vcreate_u8(0x8040_2010_0804_0201);
    let spread = vcombine_u8(vdup_n_u8(bits as u8), vdup_n_u8((bits >> 8) as u8));
    vtstq_u8(spread, vcombine_u8(lane_bits, lane_bits))
}

/// Lane `i` all-ones where bit `i` of `bits` is set (8 lanes of 16 bits).
#[inline]
#[target_feature(enable = "neon")]
fn select_u16(bits: u64) -> uint16x8_t {
    let lane_bits = vcombine_u16(
        vcreate_u16(0x0008_0004_0002_0001),
        vcreate_u16(0x0080_0040_0020_0010),
    );
    vtstq_u16(vdupq_n_u16(bits as u16), lane_bits)
}

/// Lane `i` all-ones where bit `i` of `bits` is set (4 lanes of 32 bits).
#[inline]
#[target_feature(enable = "neon")]
fn select_u32(bits: u64) -> uint32x4_t {
    let lane_bits = vcombine_u32(vcreate_u32(0x2_0000_0001), vcreate_u32(0x8_0000_0004));
    vtstq_u32(vdupq_n_u32(bits as u32), lane_bits)
}

/// Bytes need no reordering.
#[inline]
#[target_feature(enable = "neon")]
fn le_u8(v: uint8x16_t) -> uint8x16_t {
    v
}

/// Little-endian 16-bit lanes to native ones and back.
#[inline]
#[target_feature(enable = "neon")]
fn le_u16(v: uint16x8_t) -> uint16x8_t {
    if cfg!(target_endian = "big") {
        vreinterpretq_u16_u8(vrev16q_u8(vreinterpretq_u8_u16(v)))
    } else {
        v
    }
}

/// Little-endian 32-bit lanes to native ones and back.
#[inline]
#[target_feature(enable = "neon")]
fn le_u32(v: uint32x4_t) -> uint32x4_t {
    if cfg!(target_endian = "big") {
        vreinterpretq_u32_u8(vrev32q_u8(vreinterpretq_u8_u32(v)))
    } else {
        v
    }
}

/// Stamps the kernels of one cell width whose cells are whole lanes (8, 16
/// or 32 bits) into module `$m`, from that lane type's intrinsics.
macro_rules! lane_kernels {
    (
        $m:ident: $w:ident, $cell:ty, $v:ty, lanes $lanes:expr,
        select $select:ident, le $le:ident, ld $ld:ident, st $st:ident, dup $dup:ident,
        and $and:ident, orn $orn:ident, bsl $bsl:ident, ceq $ceq:ident, ceqz $ceqz:ident,
        min $min:ident, max $max:ident, minv $minv:ident, qadd $qadd:ident, qsub $qsub:ident,
        sub $sub:ident, addv $addv:ident, addlv $addlv:ident $(,)?
    ) => {
        mod $m {
            use super::*;

            type Mask = <$w as crate::Width>::Mask;

            /// The block's four vectors, lanes in native order.
            #[inline]
            #[target_feature(enable = "neon")]
            fn load(block: &Block) -> [$v; 4] {
                let p = block.0.as_ptr().cast::<$cell>();
                // SAFETY: the block is 64 readable bytes, aligned for the
                // cell type: four vectors at cell offsets 0, 1, 2 and 3
                // times `$lanes`.
                let v = unsafe {
                    [
                        $ld(p),
                        $ld(p.add($lanes)),
                        $ld(p.add(2 * $lanes)),
                        $ld(p.add(3 * $lanes)),
                    ]
                };
                [$le(v[0]), $le(v[1]), $le(v[2]), $le(v[3])]
            }

            /// Stores four vectors of native lanes into the block.
            #[inline]
            #[target_feature(enable = "neon")]
            fn store(block: &mut Block, v: [$v; 4]) {
                let p = block.0.as_mut_ptr().cast::<$cell>();
                for (j, q) in v.into_iter().enumerate() {
                    // SAFETY: as in `load`, with the block borrowed mutably.
                    unsafe { $st(p.add(j * $lanes), $le(q)) };
                }
            }

            #[inline]
            #[target_feature(enable = "neon")]
            fn selects(mask: u64) -> [$v; 4] {
                [
                    $select(mask),
                    $select(mask >> $lanes),
                    $select(mask >> (2 * $lanes)),
                    $select(mask >> (3 * $lanes)),
                ]
            }

            /// The minimum of the selected lanes; all-ones when none is.
            #[inline]
            #[target_feature(enable = "neon")]
            fn selected_min(v: &[$v; 4], sel: &[$v; 4]) -> $cell {
                let lo = $min($orn(v[0], sel[0]), $orn(v[1], sel[1]));
                let hi = $min($orn(v[2], sel[2]), $orn(v[3], sel[3]));
                $minv($min(lo, hi))
            }

            #[target_feature(enable = "neon")]
            pub(super) fn any_zero(block: &Block, mask: Mask) -> bool {
                let sel = selects(u64::from(mask));
                selected_min(&load(block), &sel) == 0
            }

            #[target_feature(enable = "neon")]
            pub(super) fn min_count(block: &Block, mask: Mask) -> MinCount {
                if mask == 0 {
                    return MinCount::EMPTY;
                }
                let (v, sel) = (load(block), selects(u64::from(mask)));
                let min = selected_min(&v, &sel);
                let target = $dup(min);
                // Equal lanes are all-ones, -1: subtracting counts them.
                let mut count = $dup(0);
                for j in 0..4 {
                    count = $sub(count, $and($ceq(v[j], target), sel[j]));
                }
                MinCount {
                    min: u32::from(min),
                    count: u32::from($addv(count)),
                }
            }

            #[target_feature(enable = "neon")]
            pub(super) fn max_assign(block: &mut Block, mask: Mask, v: u32) {
                let (c, sel) = (load(block), selects(u64::from(mask)));
                let x = $dup(v.min(<$w as crate::Width>::MAX) as $cell);
                let mut out = c;
                for j in 0..4 {
                    out[j] = $max(c[j], $and(x, sel[j]));
                }
                store(block, out);
            }

            #[target_feature(enable = "neon")]
            pub(super) fn assign(block: &mut Block, mask: Mask, v: u32) {
                let (c, sel) = (load(block), selects(u64::from(mask)));
                let x = $dup(v.min(<$w as crate::Width>::MAX) as $cell);
                let mut out = c;
                for j in 0..4 {
                    out[j] = $bsl(sel[j], x, c[j]);
                }
                store(block, out);
            }

            #[target_feature(enable = "neon")]
            pub(super) fn add_sat(block: &mut Block, mask: Mask, r: u32) {
                let (c, sel) = (load(block), selects(u64::from(mask)));
                let x = $dup(r.min(<$w as crate::Width>::MAX) as $cell);
                let mut out = c;
                for j in 0..4 {
                    out[j] = $qadd(c[j], $and(x, sel[j]));
                }
                store(block, out);
            }

            #[target_feature(enable = "neon")]
            pub(super) fn sub_sat(block: &mut Block, mask: Mask, r: u32) {
                let (c, sel) = (load(block), selects(u64::from(mask)));
                let x = $dup(r.min(<$w as crate::Width>::MAX) as $cell);
                let mut out = c;
                for j in 0..4 {
                    out[j] = $qsub(c[j], $and(x, sel[j]));
                }
                store(block, out);
            }

            #[target_feature(enable = "neon")]
            pub(super) fn dec_run(blocks: &mut [Block], start: usize, len: usize) {
                let cells = bytemuck::cast_slice_mut::<Block, $cell>(blocks);
                let (lo, hi) = run_bounds(cells.len(), start, len);
                let mut chunks = cells[lo..hi].chunks_exact_mut($lanes);
                let one = $dup(1);
                for c in &mut chunks {
                    // SAFETY: `c` is `$lanes` cells, one vector, borrowed
                    // mutably.
                    unsafe { $st(c.as_mut_ptr(), $le($qsub($le($ld(c.as_ptr())), one))) };
                }
                for c in chunks.into_remainder() {
                    *c = <$cell>::from_le(*c).saturating_sub(1).to_le();
                }
            }

            #[target_feature(enable = "neon")]
            pub(super) fn zero_count(blocks: &[Block], start: usize, len: usize) -> usize {
                let cells = bytemuck::cast_slice::<Block, $cell>(blocks);
                let (lo, hi) = run_bounds(cells.len(), start, len);
                let mut zeros = 0;
                // Lane counters of 8 bits hold 255 vectors' counts.
                for group in cells[lo..hi].chunks(255 * $lanes) {
                    let mut chunks = group.chunks_exact($lanes);
                    let mut count = $dup(0);
                    for c in &mut chunks {
                        // SAFETY: `c` is `$lanes` readable cells, one vector.
                        count = $sub(count, $ceqz(unsafe { $ld(c.as_ptr()) }));
                    }
                    zeros += $addlv(count) as usize;
                    zeros += chunks.remainder().iter().filter(|&&c| c == 0).count();
                }
                zeros
            }
        }
    };
}

lane_kernels!(w8: W8, u8, uint8x16_t, lanes 16,
    select select_u8, le le_u8, ld vld1q_u8, st vst1q_u8, dup vdupq_n_u8,
    and vandq_u8, orn vornq_u8, bsl vbslq_u8, ceq vceqq_u8, ceqz vceqzq_u8,
    min vminq_u8, max vmaxq_u8, minv vminvq_u8, qadd vqaddq_u8, qsub vqsubq_u8,
    sub vsubq_u8, addv vaddvq_u8, addlv vaddlvq_u8);
lane_kernels!(w16: W16, u16, uint16x8_t, lanes 8,
    select select_u16, le le_u16, ld vld1q_u16, st vst1q_u16, dup vdupq_n_u16,
    and vandq_u16, orn vornq_u16, bsl vbslq_u16, ceq vceqq_u16, ceqz vceqzq_u16,
    min vminq_u16, max vmaxq_u16, minv vminvq_u16, qadd vqaddq_u16, qsub vqsubq_u16,
    sub vsubq_u16, addv vaddvq_u16, addlv vaddlvq_u16);
lane_kernels!(w32: W32, u32, uint32x4_t, lanes 4,
    select select_u32, le le_u32, ld vld1q_u32, st vst1q_u32, dup vdupq_n_u32,
    and vandq_u32, orn vornq_u32, bsl vbslq_u32, ceq vceqq_u32, ceqz vceqzq_u32,
    min vminq_u32, max vmaxq_u32, minv vminvq_u32, qadd vqaddq_u32, qsub vqsubq_u32,
    sub vsubq_u32, addv vaddvq_u32, addlv vaddlvq_u32);

/// The block's four byte vectors.
#[inline]
#[target_feature(enable = "neon")]
fn load_bytes(block: &Block) -> [uint8x16_t; 4] {
    let p = block.0.as_ptr();
    // SAFETY: the block is 64 readable bytes: four vectors of 16.
    unsafe {
        [
            vld1q_u8(p),
            vld1q_u8(p.add(16)),
            vld1q_u8(p.add(32)),
            vld1q_u8(p.add(48)),
        ]
    }
}

/// Stores four byte vectors into the block.
#[inline]
#[target_feature(enable = "neon")]
fn store_bytes(block: &mut Block, v: [uint8x16_t; 4]) {
    let p = block.0.as_mut_ptr();
    for (j, q) in v.into_iter().enumerate() {
        // SAFETY: the block is 64 writable bytes: four vectors of 16.
        unsafe { vst1q_u8(p.add(16 * j), q) };
    }
}

/// Select vectors of the low nibbles and of the high nibbles of a block's
/// bytes, from a 4-bit-cell mask.
#[inline]
#[target_feature(enable = "neon")]
fn nibble_selects(mask: [u64; 2]) -> [[uint8x16_t; 4]; 2] {
    nibble_masks(mask).map(|m| {
        [
            select_u8(m),
            select_u8(m >> 16),
            select_u8(m >> 32),
            select_u8(m >> 48),
        ]
    })
}

/// The minimum of the selected nibbles; 15 when none is.
#[inline]
#[target_feature(enable = "neon")]
fn selected_min_w4(v: &[uint8x16_t; 4], lo: &[uint8x16_t; 4], hi: &[uint8x16_t; 4]) -> u8 {
    let low = vdupq_n_u8(0x0F);
    let mut m = low;
    for j in 0..4 {
        // Unselected nibbles read as 15 or more, so never win.
        let l = vornq_u8(vandq_u8(v[j], low), lo[j]);
        let h = vshrq_n_u8::<4>(vornq_u8(v[j], hi[j]));
        m = vminq_u8(m, vminq_u8(l, h));
    }
    vminvq_u8(m)
}

#[target_feature(enable = "neon")]
fn any_zero_w4(block: &Block, mask: [u64; 2]) -> bool {
    let [lo, hi] = nibble_selects(mask);
    selected_min_w4(&load_bytes(block), &lo, &hi) == 0
}

#[target_feature(enable = "neon")]
fn min_count_w4(block: &Block, mask: [u64; 2]) -> MinCount {
    if mask == [0, 0] {
        return MinCount::EMPTY;
    }
    let v = load_bytes(block);
    let [lo, hi] = nibble_selects(mask);
    let min = selected_min_w4(&v, &lo, &hi);
    let (low, high) = (vdupq_n_u8(0x0F), vdupq_n_u8(0xF0));
    let (lo_min, hi_min) = (vdupq_n_u8(min), vdupq_n_u8(min << 4));
    // Equal nibbles give all-ones, -1: subtracting counts them.
    let mut count = vdupq_n_u8(0);
    for j in 0..4 {
        let l = vandq_u8(vceqq_u8(vandq_u8(v[j], low), lo_min), lo[j]);
        let h = vandq_u8(vceqq_u8(vandq_u8(v[j], high), hi_min), hi[j]);
        count = vsubq_u8(vsubq_u8(count, l), h);
    }
    MinCount {
        min: u32::from(min),
        count: u32::from(vaddlvq_u8(count)),
    }
}

/// The even bits of `x` packed together: bit `k` of the result is bit `2k` of
/// `x`. Turns a 4-bit-cell mask into one bit per byte (its low nibble); shift
/// `x` right by one first for the high nibbles.
#[inline(always)]
fn even_bits(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x >> 4) & 0x00FF_00FF_00FF_00FF;
    x = (x | x >> 8) & 0x0000_FFFF_0000_FFFF;
    (x | x >> 16) as u32
}

/// A 4-bit-cell mask as two byte masks over the block's 64 bytes: the bytes
/// whose low nibble is selected, and those whose high nibble is.
#[inline(always)]
fn nibble_masks(mask: [u64; 2]) -> [u64; 2] {
    let [a, b] = mask;
    [
        u64::from(even_bits(a)) | u64::from(even_bits(b)) << 32,
        u64::from(even_bits(a >> 1)) | u64::from(even_bits(b >> 1)) << 32,
    ]
}

/// Each nibble `c` becomes `f(c, sel, x, nib)`, in place in its byte: `nib`
/// is the nibble's lane mask (`0x0F` or `0xF0`), `sel` its select vector and
/// `x` the operand `v` (saturated to 15) at the nibble's position.
#[inline]
#[target_feature(enable = "neon")]
fn update_w4(
    block: &mut Block,
    mask: [u64; 2],
    v: u32,
    f: impl Fn(uint8x16_t, uint8x16_t, uint8x16_t, uint8x16_t) -> uint8x16_t,
) {
    let x = v.min(15) as u8;
    let [lo, hi] = nibble_selects(mask);
    let (low, high) = (vdupq_n_u8(0x0F), vdupq_n_u8(0xF0));
    let (x_lo, x_hi) = (vdupq_n_u8(x), vdupq_n_u8(x << 4));
    let mut q = load_bytes(block);
    for j in 0..4 {
        q[j] = vorrq_u8(
            f(vandq_u8(q[j], low), lo[j], x_lo, low),
            f(vandq_u8(q[j], high), hi[j], x_hi, high),
        );
    }
    store_bytes(block, q);
}

#[target_feature(enable = "neon")]
fn max_assign_w4(block: &mut Block, mask: [u64; 2], v: u32) {
    update_w4(block, mask, v, |c, s, x, _| vmaxq_u8(c, vandq_u8(x, s)));
}

#[target_feature(enable = "neon")]
fn assign_w4(block: &mut Block, mask: [u64; 2], v: u32) {
    update_w4(block, mask, v, |c, s, x, _| vbslq_u8(s, x, c));
}

/// Nibbles in place are multiples of their unit, so a sum past the nibble's
/// largest value either stays below 256 or saturates to 255: `min` with the
/// nibble mask clips both to the largest value.
#[target_feature(enable = "neon")]
fn add_sat_w4(block: &mut Block, mask: [u64; 2], r: u32) {
    update_w4(block, mask, r, |c, s, x, nib| {
        vminq_u8(vqaddq_u8(c, vandq_u8(x, s)), nib)
    });
}

#[target_feature(enable = "neon")]
fn sub_sat_w4(block: &mut Block, mask: [u64; 2], r: u32) {
    update_w4(block, mask, r, |c, s, x, _| vqsubq_u8(c, vandq_u8(x, s)));
}

/// Saturating decrement of both nibbles of a byte.
#[inline]
fn dec_byte(b: u8) -> u8 {
    (b & 0x0F).saturating_sub(1) | (b & 0xF0).saturating_sub(0x10)
}

/// Decrements nibble `i` (0 = low, 1 = high) of `b`.
#[inline]
fn dec_nibble(b: &mut u8, i: usize) {
    let keep = if i == 0 { 0xF0 } else { 0x0F };
    *b = (*b & keep) | (dec_byte(*b) & !keep);
}

#[target_feature(enable = "neon")]
fn dec_run_w4(blocks: &mut [Block], start: usize, len: usize) {
    let bytes = bytemuck::cast_slice_mut::<Block, u8>(blocks);
    let (mut lo, mut hi) = run_bounds(2 * bytes.len(), start, len);
    if lo % 2 == 1 && lo < hi {
        dec_nibble(&mut bytes[lo / 2], 1);
        lo += 1;
    }
    if hi % 2 == 1 && lo < hi {
        hi -= 1;
        dec_nibble(&mut bytes[hi / 2], 0);
    }
    let mut chunks = bytes[lo / 2..hi / 2].chunks_exact_mut(16);
    let (low, high) = (vdupq_n_u8(0x0F), vdupq_n_u8(0xF0));
    let (one, sixteen) = (vdupq_n_u8(1), vdupq_n_u8(0x10));
    for c in &mut chunks {
        // SAFETY: `c` is 16 bytes, one vector, borrowed mutably.
        let q = unsafe { vld1q_u8(c.as_ptr()) };
        let q = vorrq_u8(
            vqsubq_u8(vandq_u8(q, low), one),
            vqsubq_u8(vandq_u8(q, high), sixteen),
        );
        // SAFETY: as above.
        unsafe { vst1q_u8(c.as_mut_ptr(), q) };
    }
    for b in chunks.into_remainder() {
        *b = dec_byte(*b);
    }
}

#[target_feature(enable = "neon")]
fn zero_count_w4(blocks: &[Block], start: usize, len: usize) -> usize {
    let bytes = bytemuck::cast_slice::<Block, u8>(blocks);
    let (mut lo, mut hi) = run_bounds(2 * bytes.len(), start, len);
    let nibble_zero = |i: usize| usize::from(bytes[i / 2] >> (4 * (i % 2)) & 0x0F == 0);
    let mut zeros = 0;
    if lo % 2 == 1 && lo < hi {
        zeros += nibble_zero(lo);
        lo += 1;
    }
    if hi % 2 == 1 && lo < hi {
        hi -= 1;
        zeros += nibble_zero(hi);
    }
    let (low, high) = (vdupq_n_u8(0x0F), vdupq_n_u8(0xF0));
    // Lane counters of 8 bits hold 127 vectors' counts, two per byte.
    for group in bytes[lo / 2..hi / 2].chunks(127 * 16) {
        let mut chunks = group.chunks_exact(16);
        let mut count = vdupq_n_u8(0);
        for c in &mut chunks {
            // SAFETY: `c` is 16 readable bytes, one vector.
            let q = unsafe { vld1q_u8(c.as_ptr()) };
            let l = vceqzq_u8(vandq_u8(q, low));
            let h = vceqzq_u8(vandq_u8(q, high));
            count = vsubq_u8(vsubq_u8(count, l), h);
        }
        zeros += usize::from(vaddlvq_u8(count));
        for &b in chunks.remainder() {
            zeros += usize::from(b & 0x0F == 0) + usize::from(b & 0xF0 == 0);
        }
    }
    zeros
}

crate::dispatch::module_table!(Isa::Neon, TABLE_W8, W8, w8, w8::dec_run, w8::zero_count);
crate::dispatch::module_table!(
    Isa::Neon,
    TABLE_W16,
    W16,
    w16,
    w16::dec_run,
    w16::zero_count
);
crate::dispatch::module_table!(
    Isa::Neon,
    TABLE_W32,
    W32,
    w32,
    w32::dec_run,
    w32::zero_count
);

pub(crate) const TABLE_W4: Kernels<W4> = Kernels {
    isa: Isa::Neon,
    any_zero: any_zero_w4,
    min_count: min_count_w4,
    max_assign: max_assign_w4,
    assign: assign_w4,
    add_sat: add_sat_w4,
    sub_sat: sub_sat_w4,
    dec_run: dec_run_w4,
    zero_count: zero_count_w4,
};

pub(crate) const TABLE_W1: Kernels<W1> = Kernels::scalar_as(Isa::Neon);
pub(crate) const TABLE_W2: Kernels<W2> = Kernels::scalar_as(Isa::Neon);

#[cfg(test)]
mod tests {
    use crate::arch::portable::tests::check_table;
    use crate::{W1, W16, W2, W32, W4, W8};

    #[test]
    fn agrees_with_scalar() {
        check_table::<W1>(&super::TABLE_W1);
        check_table::<W2>(&super::TABLE_W2);
        check_table::<W4>(&super::TABLE_W4);
        check_table::<W8>(&super::TABLE_W8);
        check_table::<W16>(&super::TABLE_W16);
        check_table::<W32>(&super::TABLE_W32);
    }
}
