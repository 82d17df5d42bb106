//! Portable SIMD kernels on the `wide` crate: 128-bit vectors in the compile
//! target's baseline instructions (SSE2 on x86-64, NEON on aarch64, simd128 on
//! wasm, plain arrays where there is no SIMD), and no `unsafe`.
//!
//! A block is four 128-bit vectors. A selection mask becomes one select vector
//! per 128 bits (lane all-ones where the cell is selected); updates then need
//! no blend: `max(cell, v & sel)`, `cell +sat (r & sel)`, `cell -sat (r & sel)`.
//! `any_zero` compares the whole block and tests the lane bitmask against the
//! mask.
//!
//! **SIMD earns its place slot by slot**: a slot is vectorised only where the
//! criterion bench (`cargo bench -p streambloom-bench --bench kernels`) ran it
//! at least 10 % faster than scalar on x86-64's SSE2 baseline (AMD EPYC,
//! shared machine; ns per call, scalar → portable, 5-cell masks, runs of 180
//! cells). Selecting five cells of one block costs little in scalar code, so
//! building four select vectors often does not pay; runs always do.
//!
//! | width | vectorised | left scalar ([`crate::arch::all`]) |
//! |---|---|---|
//! | W1, W2 | — | every kernel |
//! | W4 | dec_run 577→33, zero_count 194→41 | the select kernels: the nibble versions ran 2–11 % slower (assign 17.0 vs 18.9) |
//! | W8 | any_zero 3.6→2.5, dec_run 170→19, zero_count 135→30 | min_count (8.2 vs 9.4: no horizontal byte min in SSE2), max_assign (6.5 vs 6.6), assign, add_sat, sub_sat (five byte stores beat four select vectors) |
//! | W16 | any_zero 3.3→2.6, max_assign 6.8→4.7, add_sat 6.6→4.8, sub_sat 5.3→4.7, dec_run 178→17, zero_count 157→31 | min_count (no unsigned 16-bit min in SSE2), assign (4.2 vs 4.3) |
//! | W32 | any_zero 3.2→2.2, dec_run 159→27, zero_count 144→37 | min_count, max_assign (5.5 vs 5.3), assign (4.1 vs 3.8), add_sat and sub_sat (5.3 vs 5.5) |
//!
//! Runs are numbered across blocks; a run is clipped to the cells that exist,
//! split into an unaligned scalar head and tail and an aligned vector middle.
//! Cells are little-endian in memory; on a big-endian target the 16- and
//! 32-bit lanes are byte-swapped after loading and before storing.

use crate::{Block, Isa, Kernels, W1, W16, W2, W32, W4, W8};
use bytemuck::{Pod, Zeroable};
use core::ops::{BitAnd, BitOr, Not};
use wide::{u16x8, u32x4, u64x2, u8x16};

/// A 128-bit vector of cells of one width (8, 16 or 32 bits, one cell a
/// lane): what the generic kernels below need.
trait Lanes: Pod + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> {
    /// One cell as it sits in memory.
    type Cell: Pod + Eq;
    /// The selection mask of this width.
    type Mask: Copy + Into<u64>;
    /// Cells per vector.
    const LANES: usize;
    /// The largest cell value.
    const MAX: u32;
    /// Every lane `v` (`v <= MAX`).
    fn splat(v: u32) -> Self;
    /// Lane `i` all-ones where bit `i` of `bits` is set, else zero.
    fn select(bits: u64) -> Self;
    /// Little-endian lanes to native ones (and back: the swap is its own
    /// inverse).
    fn swap_le(self) -> Self;
    /// Bit `i` set where lane `i` equals `rhs`'s.
    fn eq_bits(self, rhs: Self) -> u64;
    /// Lane-wise unsigned maximum.
    fn max(self, rhs: Self) -> Self;
    /// Lane-wise saturating add.
    fn sat_add(self, rhs: Self) -> Self;
    /// Lane-wise saturating subtract.
    fn sat_sub(self, rhs: Self) -> Self;
    /// Saturating decrement of one little-endian cell in memory.
    fn dec_cell(cell: &mut Self::Cell);
}

/// Bit `k` set in byte lane `k` (twice), to expand 16 mask bits into bytes.
const BYTE_BITS: u8x16 = u8x16::new([1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128]);
const WORD_BITS: u16x8 = u16x8::new([1, 2, 4, 8, 16, 32, 64, 128]);
const DWORD_BITS: u32x4 = u32x4::new([1, 2, 4, 8]);

/// `b`'s low byte in every byte of a `u64`.
#[inline(always)]
fn broadcast_byte(b: u64) -> u64 {
    (b & 0xFF) * 0x0101_0101_0101_0101
}

impl Lanes for u8x16 {
    type Cell = u8;
    type Mask = u64;
    const LANES: usize = 16;
    const MAX: u32 = 0xFF;
    #[inline(always)]
    fn splat(v: u32) -> Self {
        u8x16::splat(v as u8)
    }
    #[inline(always)]
    fn select(bits: u64) -> Self {
        let spread = u64x2::new([broadcast_byte(bits), broadcast_byte(bits >> 8)]);
        (bytemuck::cast::<u64x2, u8x16>(spread) & BYTE_BITS).simd_eq(BYTE_BITS)
    }
    #[inline(always)]
    fn swap_le(self) -> Self {
        self
    }
    #[inline(always)]
    fn eq_bits(self, rhs: Self) -> u64 {
        u64::from(self.simd_eq(rhs).to_bitmask())
    }
    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        u8x16::max(self, rhs)
    }
    #[inline(always)]
    fn sat_add(self, rhs: Self) -> Self {
        self.saturating_add(rhs)
    }
    #[inline(always)]
    fn sat_sub(self, rhs: Self) -> Self {
        self.saturating_sub(rhs)
    }
    #[inline(always)]
    fn dec_cell(cell: &mut u8) {
        *cell = cell.saturating_sub(1);
    }
}

impl Lanes for u16x8 {
    type Cell = u16;
    type Mask = u32;
    const LANES: usize = 8;
    const MAX: u32 = 0xFFFF;
    #[inline(always)]
    fn splat(v: u32) -> Self {
        u16x8::splat(v as u16)
    }
    #[inline(always)]
    fn select(bits: u64) -> Self {
        (u16x8::splat(bits as u16) & WORD_BITS).simd_eq(WORD_BITS)
    }
    #[inline(always)]
    fn swap_le(self) -> Self {
        if cfg!(target_endian = "big") {
            (self << 8) | (self >> 8)
        } else {
            self
        }
    }
    #[inline(always)]
    fn eq_bits(self, rhs: Self) -> u64 {
        u64::from(self.simd_eq(rhs).to_bitmask())
    }
    // SSE2 has no unsigned 16-bit max; saturating subtract makes one.
    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        self + rhs.saturating_sub(self)
    }
    #[inline(always)]
    fn sat_add(self, rhs: Self) -> Self {
        self.saturating_add(rhs)
    }
    #[inline(always)]
    fn sat_sub(self, rhs: Self) -> Self {
        self.saturating_sub(rhs)
    }
    #[inline(always)]
    fn dec_cell(cell: &mut u16) {
        *cell = u16::from_le(*cell).saturating_sub(1).to_le();
    }
}

impl Lanes for u32x4 {
    type Cell = u32;
    type Mask = u16;
    const LANES: usize = 4;
    const MAX: u32 = u32::MAX;
    #[inline(always)]
    fn splat(v: u32) -> Self {
        u32x4::splat(v)
    }
    #[inline(always)]
    fn select(bits: u64) -> Self {
        (u32x4::splat(bits as u32) & DWORD_BITS).simd_eq(DWORD_BITS)
    }
    #[inline(always)]
    fn swap_le(self) -> Self {
        if cfg!(target_endian = "big") {
            let m = u32x4::splat(0x00FF_00FF);
            let v = ((self >> 8) & m) | ((self & m) << 8);
            (v >> 16) | (v << 16)
        } else {
            self
        }
    }
    #[inline(always)]
    fn eq_bits(self, rhs: Self) -> u64 {
        u64::from(self.simd_eq(rhs).to_bitmask())
    }
    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        u32x4::max(self, rhs)
    }
    #[inline(always)]
    fn sat_add(self, rhs: Self) -> Self {
        self.saturating_add(rhs)
    }
    #[inline(always)]
    fn sat_sub(self, rhs: Self) -> Self {
        self.saturating_sub(rhs)
    }
    #[inline(always)]
    fn dec_cell(cell: &mut u32) {
        *cell = u32::from_le(*cell).saturating_sub(1).to_le();
    }
}

/// One select vector per quarter of the block.
#[inline(always)]
fn selects<L: Lanes>(mask: u64) -> [L; 4] {
    core::array::from_fn(|j| L::select(mask >> (j * L::LANES)))
}

/// Bit `i` set where cell `i` of the four vectors equals the lane of `x`.
#[inline(always)]
fn eq_mask<L: Lanes>(v: &[L; 4], x: L) -> u64 {
    v.iter()
        .enumerate()
        .fold(0, |acc, (j, q)| acc | q.eq_bits(x) << (j * L::LANES))
}

fn any_zero<L: Lanes>(block: &Block, mask: L::Mask) -> bool {
    let v = bytemuck::cast_ref::<Block, [L; 4]>(block);
    eq_mask(v, L::splat(0)) & mask.into() != 0
}

/// Cell `c` of each lane becomes `f(c, sel, x)`, where `sel` is the lane's
/// select vector and `x` is `v` saturated to `L::MAX`.
#[inline(always)]
fn update<L: Lanes>(block: &mut Block, mask: L::Mask, v: u32, f: impl Fn(L, L, L) -> L) {
    let x = L::splat(v.min(L::MAX));
    let sel = selects::<L>(mask.into());
    for (q, s) in bytemuck::cast_mut::<Block, [L; 4]>(block)
        .iter_mut()
        .zip(sel)
    {
        *q = f(q.swap_le(), s, x).swap_le();
    }
}

fn max_assign<L: Lanes>(block: &mut Block, mask: L::Mask, v: u32) {
    update::<L>(block, mask, v, |c, s, x| c.max(x & s));
}

fn add_sat<L: Lanes>(block: &mut Block, mask: L::Mask, r: u32) {
    update::<L>(block, mask, r, |c, s, x| c.sat_add(x & s));
}

fn sub_sat<L: Lanes>(block: &mut Block, mask: L::Mask, r: u32) {
    update::<L>(block, mask, r, |c, s, x| c.sat_sub(x & s));
}

/// The cells `start .. start + len` of a store of `total` cells, clipped to
/// the cells that exist (as [`crate::arch::all::dec_run`] does).
#[inline(always)]
pub(crate) fn run_bounds(total: usize, start: usize, len: usize) -> (usize, usize) {
    let lo = start.min(total);
    (lo, lo.saturating_add(len).min(total))
}

fn dec_run<L: Lanes>(blocks: &mut [Block], start: usize, len: usize) {
    let cells = bytemuck::cast_slice_mut::<Block, L::Cell>(blocks);
    let (lo, hi) = run_bounds(cells.len(), start, len);
    let (head, middle, tail) = bytemuck::pod_align_to_mut::<L::Cell, L>(&mut cells[lo..hi]);
    head.iter_mut().chain(tail).for_each(L::dec_cell);
    let one = L::splat(1);
    for q in middle {
        *q = q.swap_le().sat_sub(one).swap_le();
    }
}

fn zero_count<L: Lanes>(blocks: &[Block], start: usize, len: usize) -> usize {
    let cells = bytemuck::cast_slice::<Block, L::Cell>(blocks);
    let (lo, hi) = run_bounds(cells.len(), start, len);
    let (head, middle, tail) = bytemuck::pod_align_to::<L::Cell, L>(&cells[lo..hi]);
    let zero = L::splat(0);
    let ends = head.iter().chain(tail).filter(|&&c| c == L::Cell::zeroed());
    let vectors = middle.iter().map(|q| q.eq_bits(zero).count_ones() as usize);
    ends.count() + vectors.sum::<usize>()
}

const LOW: u8 = 0x0F;
const HIGH: u8 = 0xF0;

/// Saturating decrement of both nibbles of a byte.
#[inline(always)]
fn dec_byte(b: u8) -> u8 {
    (b & LOW).saturating_sub(1) | (b & HIGH).saturating_sub(0x10)
}

/// Decrements nibble `i` (0 = low, 1 = high) of `b`.
#[inline(always)]
fn dec_nibble(b: &mut u8, i: usize) {
    let keep = if i == 0 { HIGH } else { LOW };
    *b = (*b & keep) | (dec_byte(*b) & !keep);
}

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
    let (head, middle, tail) = bytemuck::pod_align_to_mut::<u8, u8x16>(&mut bytes[lo / 2..hi / 2]);
    for b in head.iter_mut().chain(tail) {
        *b = dec_byte(*b);
    }
    let (low, high) = (u8x16::splat(LOW), u8x16::splat(HIGH));
    for q in middle {
        *q = (*q & low).saturating_sub(u8x16::splat(1))
            | (*q & high).saturating_sub(u8x16::splat(0x10));
    }
}

fn zero_count_w4(blocks: &[Block], start: usize, len: usize) -> usize {
    let bytes = bytemuck::cast_slice::<Block, u8>(blocks);
    let (mut lo, mut hi) = run_bounds(2 * bytes.len(), start, len);
    let nibble_zero = |i: usize| usize::from(bytes[i / 2] >> (4 * (i % 2)) & LOW == 0);
    let mut zeros = 0;
    if lo % 2 == 1 && lo < hi {
        zeros += nibble_zero(lo);
        lo += 1;
    }
    if hi % 2 == 1 && lo < hi {
        hi -= 1;
        zeros += nibble_zero(hi);
    }
    let (head, middle, tail) = bytemuck::pod_align_to::<u8, u8x16>(&bytes[lo / 2..hi / 2]);
    for &b in head.iter().chain(tail) {
        zeros += usize::from(b & LOW == 0) + usize::from(b & HIGH == 0);
    }
    let zero = u8x16::splat(0);
    for &q in middle {
        zeros += (q & u8x16::splat(LOW)).eq_bits(zero).count_ones() as usize
            + (q & u8x16::splat(HIGH)).eq_bits(zero).count_ones() as usize;
    }
    zeros
}

pub(crate) const TABLE_W1: Kernels<W1> = Kernels::scalar_as(Isa::Portable);
pub(crate) const TABLE_W2: Kernels<W2> = Kernels::scalar_as(Isa::Portable);

pub(crate) const TABLE_W4: Kernels<W4> = Kernels {
    dec_run: dec_run_w4,
    zero_count: zero_count_w4,
    ..Kernels::scalar_as(Isa::Portable)
};

pub(crate) const TABLE_W8: Kernels<W8> = Kernels {
    any_zero: any_zero::<u8x16>,
    dec_run: dec_run::<u8x16>,
    zero_count: zero_count::<u8x16>,
    ..Kernels::scalar_as(Isa::Portable)
};

pub(crate) const TABLE_W16: Kernels<W16> = Kernels {
    any_zero: any_zero::<u16x8>,
    max_assign: max_assign::<u16x8>,
    add_sat: add_sat::<u16x8>,
    sub_sat: sub_sat::<u16x8>,
    dec_run: dec_run::<u16x8>,
    zero_count: zero_count::<u16x8>,
    ..Kernels::scalar_as(Isa::Portable)
};

pub(crate) const TABLE_W32: Kernels<W32> = Kernels {
    any_zero: any_zero::<u32x4>,
    dec_run: dec_run::<u32x4>,
    zero_count: zero_count::<u32x4>,
    ..Kernels::scalar_as(Isa::Portable)
};

/// The differential property test of a backend against
/// [`crate::arch::all`], shared by every backend's test module.
#[cfg(test)]
pub(crate) mod tests {
    use crate::{cell, set_cell, Block, Kernels, Mask, Width, W1, W16, W2, W32, W4, W8};

    /// xorshift64*: tiny, deterministic, good enough to spread test inputs.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A block of random bytes, or of cells drawn from the edge values.
    fn block<W: Width>(rng: &mut Rng) -> Block {
        let mut b = Block::ZERO;
        if rng.below(3) == 0 {
            b.0.iter_mut().for_each(|x| *x = rng.next() as u8);
        } else {
            for i in 0..W::CELLS {
                let v = match rng.below(5) {
                    0 => 0,
                    1 => 1,
                    2 => W::MAX - 1,
                    3 => W::MAX,
                    _ => rng.next() as u32,
                };
                set_cell::<W>(&mut b, i, v);
            }
        }
        b
    }

    /// Empty, full, single, a few (as a filter's k hashes) or random cells.
    fn mask<W: Width>(rng: &mut Rng) -> W::Mask {
        match rng.below(6) {
            0 => W::Mask::default(),
            1 => W::Mask::from_words(&[u64::MAX; 8]),
            2 => W::Mask::default().with(rng.below(W::CELLS as u64) as usize),
            3 | 4 => (0..1 + rng.below(8)).fold(W::Mask::default(), |m, _| {
                m.with(rng.below(W::CELLS as u64) as usize)
            }),
            _ => W::Mask::from_words(&core::array::from_fn(|_| rng.next())),
        }
    }

    fn value<W: Width>(rng: &mut Rng) -> u32 {
        match rng.below(8) {
            0 => 0,
            1 => 1,
            2 => W::MAX,
            3 => W::MAX.saturating_add(1),
            4 => u32::MAX,
            5 => W::MAX - 1,
            _ => rng.next() as u32 >> rng.below(32),
        }
    }

    fn cells<W: Width>(blocks: &[Block]) -> impl Iterator<Item = u32> + '_ {
        blocks
            .iter()
            .flat_map(|b| (0..W::CELLS).map(move |i| cell::<W>(b, i)))
    }

    /// `t` agrees with the scalar reference on random and edge-case blocks,
    /// masks and operands, and on every run offset `0..=130` and length
    /// `0..=300` over three blocks (plus runs past the end).
    pub(crate) fn check_table<W: Width>(t: &Kernels<W>) {
        let s = Kernels::<W>::scalar();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(W::BITS));
        // Miri emulates every instruction: far fewer cases there (the
        // differential tests in `tests/` cover the rest).
        let (cases, stride) = if cfg!(miri) { (24, 97) } else { (20_000, 1) };
        for _ in 0..cases {
            let b = block::<W>(&mut rng);
            let m = mask::<W>(&mut rng);
            let v = value::<W>(&mut rng);
            let ctx = (W::BITS, b, m, v);
            assert_eq!(t.any_zero(&b, m), s.any_zero(&b, m), "any_zero {ctx:?}");
            assert_eq!(t.min_count(&b, m), s.min_count(&b, m), "min_count {ctx:?}");
            type Update<W> = fn(&Kernels<W>, &mut Block, <W as Width>::Mask, u32);
            let updates: [(&str, Update<W>); 4] = [
                ("max_assign", Kernels::max_assign),
                ("assign", Kernels::assign),
                ("add_sat", Kernels::add_sat),
                ("sub_sat", Kernels::sub_sat),
            ];
            for (name, op) in updates {
                let (mut got, mut want) = (b, b);
                op(t, &mut got, m, v);
                op(s, &mut want, m, v);
                assert_eq!(got, want, "{name} {ctx:?}");
            }
        }
        let blocks: [Block; 3] = core::array::from_fn(|_| block::<W>(&mut rng));
        let runs = (0..=130)
            .step_by(stride)
            .flat_map(move |start| (0..=300).step_by(stride).map(move |len| (start, len)))
            .chain([(3 * W::CELLS - 1, 5), (3 * W::CELLS, 1), (7, usize::MAX)]);
        for (start, len) in runs {
            for n in [1, 3] {
                let blocks = &blocks[..n];
                let ctx = (W::BITS, n, start, len);
                assert_eq!(
                    t.zero_count(blocks, start, len),
                    s.zero_count(blocks, start, len),
                    "zero_count {ctx:?}"
                );
                let (mut got, mut want) = ([Block::ZERO; 3], [Block::ZERO; 3]);
                got[..n].copy_from_slice(blocks);
                want[..n].copy_from_slice(blocks);
                t.dec_run(&mut got[..n], start, len);
                s.dec_run(&mut want[..n], start, len);
                assert!(cells::<W>(&got).eq(cells::<W>(&want)), "dec_run {ctx:?}");
            }
        }
    }

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
