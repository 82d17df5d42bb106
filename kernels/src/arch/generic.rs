//! The kernels written once, over a small [`Vector`] trait, and stamped per
//! instruction set: memchr's `arch/generic` and simdutf8's "written once,
//! stamped per ISA".
//!
//! A backend is a zero-sized token type implementing [`Vector`]: a vector of
//! [`Vector::BYTES`] bytes and a few `#[inline(always)]` lane operations (8-,
//! 16- or 32-bit lanes, picked by a [`Lane`] that is a constant after
//! inlining). [`stamp!`] instantiates the kernels below inside one
//! `#[target_feature]` function per kernel and width, so every trait method
//! inlines into code compiled for the backend's instructions, and builds the
//! backend's `TABLE_Wn` constants from them (the slots it does not list keep
//! the scalar reference; 1- and 2-bit cells have their own word kernels,
//! [`crate::arch::bits`]).
//!
//! **Cells as lanes.** 8-, 16- and 32-bit cells are lanes. 4-bit cells are
//! two byte-lane *planes* handled in place: the low nibbles (`byte & 0x0f`)
//! and the high nibbles (`byte & 0xf0`, values in steps of 16), each with its
//! own selection ([`Vector::select_nibbles`]). In place, `max`, saturating
//! subtract and blend need no shift, and a saturating add is clipped to the
//! plane's top (`0x0f` or `0xf0`).
//!
//! **Select kernels.** A mask becomes a selection per vector
//! ([`Vector::select`]: lanes of all ones on AVX2, `wide` and NEON, the mask
//! register itself on AVX-512) and every update is branch-free over the
//! block: `max(c, v & sel)`, `c +sat (v & sel)`, `c -sat (v & sel)` (or the
//! masked instruction, where a backend has one), a blend for `assign`.
//! `any_zero` of lane cells needs no selection: the bitmap of zero lanes is
//! tested against the mask. `min_count` fills unselected lanes with ones,
//! takes the vertical then the horizontal minimum, and counts the selected
//! lanes equal to it.
//!
//! **Runs.** `zero_count` reads a contiguous byte range of the blocks: full
//! vectors, then the last partial vector as one vector too, inside the
//! blocks (a window selects the run's lanes), so a run costs
//! `ceil(bytes / BYTES)` steps and no scalar loop; an odd nibble at either
//! end of a 4-bit run is counted by the scalar reference. `dec_run`, the
//! eviction on every Stable item, rewrites the *aligned* vectors that hold
//! its cells, the run's lanes selected by a window at either end (nibbles
//! too), so it wraps past the last cell for free and needs no scalar edge;
//! its vector count depends only on the run's length. Operands above
//! `W::MAX` are clamped to it first, which is the reference's saturation.

use crate::arch::all;
use crate::{Block, Mask, Width};

/// A lane width of a vector operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// 8-bit lanes (8-bit cells, and the nibble planes of 4-bit cells).
    U8,
    /// 16-bit lanes.
    U16,
    /// 32-bit lanes.
    U32,
}

impl Lane {
    /// The lanes that hold cells of width `W` (4-bit cells are in bytes).
    #[inline(always)]
    pub(crate) const fn of<W: Width>() -> Lane {
        match W::BITS {
            32 => Lane::U32,
            16 => Lane::U16,
            _ => Lane::U8,
        }
    }

    /// Bytes per lane.
    #[inline(always)]
    pub(crate) const fn bytes(self) -> usize {
        match self {
            Lane::U8 => 1,
            Lane::U16 => 2,
            Lane::U32 => 4,
        }
    }
}

/// One backend's vector and the operations the kernels need, each
/// `#[inline(always)]`. Implemented by a zero-sized token that only code
/// compiled for the backend's instructions creates, so the methods are safe.
///
/// Cells are little-endian in memory: `load` and `store` convert lanes of
/// `l` to and from native order (a no-op on little-endian targets).
pub(crate) trait Vector: Copy {
    /// A vector register.
    type V: Copy;
    /// A selection of lanes: a vector of all-ones lanes, or a mask register.
    type Sel: Copy;
    /// Bytes per vector (16, 32 or 64).
    const BYTES: usize;

    /// The vector at `bytes[at..at + BYTES]`.
    fn load(self, l: Lane, bytes: &[u8], at: usize) -> Self::V;
    /// Writes `v` to `bytes[at..at + BYTES]`.
    fn store(self, l: Lane, bytes: &mut [u8], at: usize, v: Self::V);
    /// Every lane `v` (`v` fits a lane).
    fn splat(self, l: Lane, v: u32) -> Self::V;
    /// Bitwise and.
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise or.
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// Unsigned lane minimum.
    fn min(self, l: Lane, a: Self::V, b: Self::V) -> Self::V;
    /// Unsigned lane maximum.
    fn max(self, l: Lane, a: Self::V, b: Self::V) -> Self::V;
    /// Saturating unsigned add.
    fn adds(self, l: Lane, a: Self::V, b: Self::V) -> Self::V;
    /// Saturating unsigned subtract.
    fn subs(self, l: Lane, a: Self::V, b: Self::V) -> Self::V;
    /// The lanes where `a` equals `b`.
    fn eq(self, l: Lane, a: Self::V, b: Self::V) -> Self::Sel;
    /// The lanes selected by both.
    fn both(self, a: Self::Sel, b: Self::Sel) -> Self::Sel;
    /// Bit `i` set where lane `i` is selected (no bits above the lanes).
    fn bits(self, l: Lane, s: Self::Sel) -> u64;
    /// Lane `i` selected where bit `i` of `bits` is set (higher bits ignored).
    fn select(self, l: Lane, bits: u64) -> Self::Sel;
    /// `v` in the selected lanes, zero in the others.
    fn masked(self, l: Lane, v: Self::V, s: Self::Sel) -> Self::V;
    /// `v` in the selected lanes, `x` in the others.
    fn blend(self, l: Lane, x: Self::V, s: Self::Sel, v: Self::V) -> Self::V;
    /// `x` in the selected lanes, all ones in the others.
    // This, `hmin`, `min_count` and `assign` serve the x86_64 and aarch64
    // backends only (the portable one leaves them scalar): elsewhere they
    // would be dead code.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn fill_unselected(self, l: Lane, x: Self::V, s: Self::Sel) -> Self::V;
    /// The minimum lane.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn hmin(self, l: Lane, v: Self::V) -> u32;
    /// Bytewise wrapping subtract.
    fn sub8(self, a: Self::V, b: Self::V) -> Self::V;
    /// The sum of the bytes.
    fn hsum8(self, v: Self::V) -> u32;

    /// The byte lanes of vector `j` of a block whose low nibble (`[0]`) or
    /// high nibble (`[1]`) is selected by the 4-bit-cell `mask`.
    #[inline(always)]
    fn select_nibbles(self, mask: [u64; 2], j: usize) -> [Self::Sel; 2] {
        let bit = 2 * Self::BYTES * j;
        let word = mask[bit / 64] >> (bit % 64);
        [
            self.select(Lane::U8, even_bits(word)),
            self.select(Lane::U8, even_bits(word >> 1)),
        ]
    }
    /// [`Vector::bits`] of two vectors' lanes, `a`'s first.
    #[inline(always)]
    fn bits2(self, l: Lane, a: Self::Sel, b: Self::Sel) -> u64 {
        self.bits(l, a) | self.bits(l, b) << (Self::BYTES / l.bytes())
    }
    /// Byte lanes `lo..hi`, where `lo == 0` or `hi == BYTES` unless the
    /// vector is a whole block (see `tail`): this default loads its window
    /// from [`WINDOW`], so a 64-byte backend must override it.
    #[inline(always)]
    fn window(self, lo: usize, hi: usize) -> Self::Sel {
        let at = if lo == 0 { 128 - hi } else { 64 - lo };
        let w = self.load(Lane::U8, &WINDOW, at);
        self.eq(Lane::U8, w, self.splat(Lane::U8, 0xff))
    }
    /// Byte lanes `lo..hi` (`lo, hi <= BYTES`; none when `lo >= hi`), of a
    /// vector anywhere in a run: the lanes of both windows.
    #[inline(always)]
    fn span(self, lo: usize, hi: usize) -> Self::Sel {
        self.both(self.window(lo, Self::BYTES), self.window(0, hi))
    }
    /// `max(c, v)` in the selected lanes.
    #[inline(always)]
    fn max_sel(self, l: Lane, c: Self::V, s: Self::Sel, v: Self::V) -> Self::V {
        self.max(l, c, self.masked(l, v, s))
    }
    /// `c +sat v` in the selected lanes.
    #[inline(always)]
    fn adds_sel(self, l: Lane, c: Self::V, s: Self::Sel, v: Self::V) -> Self::V {
        self.adds(l, c, self.masked(l, v, s))
    }
    /// `c -sat v` in the selected lanes.
    #[inline(always)]
    fn subs_sel(self, l: Lane, c: Self::V, s: Self::Sel, v: Self::V) -> Self::V {
        self.subs(l, c, self.masked(l, v, s))
    }
}

/// `0` bytes, `0xff` bytes, `0` bytes: the bytes at offset `128 - n` are
/// `0xff` in their first `n`, those at `64 - n` from their `n`th on.
pub(crate) static WINDOW: [u8; 192] = {
    let mut w = [0; 192];
    let mut i = 64;
    while i < 128 {
        w[i] = 0xff;
        i += 1;
    }
    w
};

/// The even bits of `x` packed: bit `k` is bit `2k` of `x`.
#[inline(always)]
pub(crate) fn even_bits(x: u64) -> u64 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) & 0xffff_ffff
}

/// Cell planes of width `W`: 2 for 4-bit cells (low and high nibbles),
/// else 1 (whole lanes).
const fn planes<W: Width>() -> usize {
    if W::BITS == 4 {
        2
    } else {
        1
    }
}

/// Plane `p`'s cells of `x` in place, the rest of each byte zero.
#[inline(always)]
fn cells<W: Width, B: Vector>(b: B, x: B::V, p: usize) -> B::V {
    if W::BITS == 4 {
        b.and(x, b.splat(Lane::U8, 0x0f << (4 * p)))
    } else {
        x
    }
}

/// Where a cell's value sits in plane `p`'s lanes.
#[inline(always)]
const fn shift<W: Width>(p: usize) -> u32 {
    if W::BITS == 4 {
        4 * p as u32
    } else {
        0
    }
}

/// The selection of each plane of vector `j` of a block.
#[inline(always)]
fn sels<W: Width, B: Vector>(b: B, mask: W::Mask, j: usize) -> [B::Sel; 2] {
    let w = mask.to_words();
    if W::BITS == 4 {
        b.select_nibbles([w[0], w[1]], j)
    } else {
        let l = Lane::of::<W>();
        let s = b.select(l, w[0] >> (j * (B::BYTES / l.bytes())));
        [s, s]
    }
}

/// Bit `i` set where cell `i` of `block` (of a width whose cells are lanes)
/// equals `v`'s lanes; vectors are taken in pairs ([`Vector::bits2`]).
#[inline(always)]
fn eq_bits<W: Width, B: Vector>(b: B, block: &Block, v: B::V) -> u64 {
    let l = Lane::of::<W>();
    let (vectors, lanes) = (64 / B::BYTES, B::BYTES / l.bytes());
    if vectors == 1 {
        return b.bits(l, eq_at::<W, B>(b, block, 0, v));
    }
    let mut out = 0;
    for j in (0..vectors).step_by(2) {
        let (x, y) = (
            eq_at::<W, B>(b, block, j, v),
            eq_at::<W, B>(b, block, j + 1, v),
        );
        out |= b.bits2(l, x, y) << (j * lanes);
    }
    out
}

/// The lanes of vector `j` of `block` equal to `v`'s.
#[inline(always)]
fn eq_at<W: Width, B: Vector>(b: B, block: &Block, j: usize, v: B::V) -> B::Sel {
    let l = Lane::of::<W>();
    b.eq(l, b.load(l, &block.0, j * B::BYTES), v)
}

/// Whether any selected cell is zero.
#[inline(always)]
pub(crate) fn any_zero<W: Width, B: Vector>(b: B, block: &Block, mask: W::Mask) -> bool {
    let l = Lane::of::<W>();
    let zero = b.splat(l, 0);
    if W::BITS != 4 {
        return eq_bits::<W, B>(b, block, zero) & mask.to_words()[0] != 0;
    }
    let mut hit = 0;
    for j in 0..64 / B::BYTES {
        let x = b.load(l, &block.0, j * B::BYTES);
        let s = sels::<W, B>(b, mask, j);
        for (p, s) in s.into_iter().enumerate() {
            hit |= b.bits(l, b.both(b.eq(l, cells::<W, B>(b, x, p), zero), s));
        }
    }
    hit != 0
}

/// The minimum of the selected cells and how many hold it.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn min_count<W: Width, B: Vector>(
    b: B,
    block: &Block,
    mask: W::Mask,
) -> crate::MinCount {
    if mask.is_empty() {
        return crate::MinCount::EMPTY;
    }
    let l = Lane::of::<W>();
    let n = 64 / B::BYTES;
    let ones = b.splat(l, u32::MAX >> (32 - 8 * l.bytes()));
    let mut acc = [ones; 2];
    for j in 0..n {
        let x = b.load(l, &block.0, j * B::BYTES);
        let s = sels::<W, B>(b, mask, j);
        for p in 0..planes::<W>() {
            let c = b.fill_unselected(l, cells::<W, B>(b, x, p), s[p]);
            acc[p] = b.min(l, acc[p], c);
        }
    }
    // An empty high-nibble plane gives 0xff >> 4 = 15, which never beats a
    // selected cell, and the count below only counts selected ones.
    let mut min = u32::MAX;
    for (p, &a) in acc.iter().enumerate().take(planes::<W>()) {
        min = min.min(b.hmin(l, a) >> shift::<W>(p));
    }
    if W::BITS != 4 {
        let at = eq_bits::<W, B>(b, block, b.splat(l, min));
        let count = (at & mask.to_words()[0]).count_ones();
        return crate::MinCount { min, count };
    }
    let mut count = 0;
    for j in 0..n {
        let x = b.load(l, &block.0, j * B::BYTES);
        let s = sels::<W, B>(b, mask, j);
        for (p, s) in s.into_iter().enumerate() {
            let at = b.eq(l, cells::<W, B>(b, x, p), b.splat(l, min << shift::<W>(p)));
            count += b.bits(l, b.both(at, s)).count_ones();
        }
    }
    crate::MinCount { min, count }
}

/// A select-then-update kernel (the word-sliced kernels of `bits` run the
/// same four).
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Max,
    Assign,
    Add,
    Sub,
}

/// Each selected cell `c` becomes `op(c, min(v, W::MAX))`, saturating.
/// Written without closures: a closure is a function of its own, compiled
/// without the caller's `#[target_feature]`, and where LLVM does not inline
/// it every intrinsic in it becomes a call.
#[inline(always)]
fn update<W: Width, B: Vector>(b: B, block: &mut Block, mask: W::Mask, v: u32, op: Op) {
    let l = Lane::of::<W>();
    let v = v.min(W::MAX);
    for j in 0..64 / B::BYTES {
        let x = b.load(l, &block.0, j * B::BYTES);
        let s = sels::<W, B>(b, mask, j);
        let mut out = x;
        for (p, &s) in s.iter().enumerate().take(planes::<W>()) {
            let c = cells::<W, B>(b, x, p);
            let v = b.splat(l, v << shift::<W>(p));
            let r = match op {
                Op::Max => b.max_sel(l, c, s, v),
                Op::Assign => b.blend(l, c, s, v),
                // A nibble in place saturates at its top, not the byte's.
                Op::Add if W::BITS == 4 => {
                    let top = b.splat(l, W::MAX << shift::<W>(p));
                    b.min(l, b.adds_sel(l, c, s, v), top)
                }
                Op::Add => b.adds_sel(l, c, s, v),
                Op::Sub => b.subs_sel(l, c, s, v),
            };
            out = if p == 0 { r } else { b.or(out, r) };
        }
        b.store(l, &mut block.0, j * B::BYTES, out);
    }
}

/// Each selected cell becomes `max(cell, min(v, W::MAX))`.
#[inline(always)]
pub(crate) fn max_assign<W: Width, B: Vector>(b: B, block: &mut Block, mask: W::Mask, v: u32) {
    update::<W, B>(b, block, mask, v, Op::Max);
}

/// Each selected cell becomes `min(v, W::MAX)`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn assign<W: Width, B: Vector>(b: B, block: &mut Block, mask: W::Mask, v: u32) {
    update::<W, B>(b, block, mask, v, Op::Assign);
}

/// Each selected cell becomes `min(cell + r, W::MAX)`.
#[inline(always)]
pub(crate) fn add_sat<W: Width, B: Vector>(b: B, block: &mut Block, mask: W::Mask, r: u32) {
    update::<W, B>(b, block, mask, r, Op::Add);
}

/// Each selected cell becomes `cell - r`, or 0 where `r > cell`.
#[inline(always)]
pub(crate) fn sub_sat<W: Width, B: Vector>(b: B, block: &mut Block, mask: W::Mask, r: u32) {
    update::<W, B>(b, block, mask, r, Op::Sub);
}

/// The bytes of the run `start .. start + len` (clipped); an odd nibble at
/// either end of a 4-bit run goes to `edge` (its cell number).
#[inline(always)]
fn run_bytes<W: Width>(
    blocks: usize,
    start: usize,
    len: usize,
    mut edge: impl FnMut(usize),
) -> (usize, usize) {
    let (mut lo, mut hi) = all::run_bounds(blocks * W::CELLS, start, len);
    if W::BITS != 4 {
        let bytes = W::BITS as usize / 8;
        return (lo * bytes, hi * bytes);
    }
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

/// Where the last `at..end` (fewer than `BYTES`) bytes of a range in a
/// buffer of `len` bytes (whole blocks) are processed: the vector's offset,
/// and the range's bytes in it. The vector starts at `at` when it fits, so
/// it does not overlap the previous step's store (a store-forwarding stall);
/// otherwise it ends at `end`, when `end >= BYTES`, which always holds for
/// vectors shorter than a block; a 64-byte vector is then the whole buffer,
/// with the range in its middle.
#[inline(always)]
fn tail<B: Vector>(len: usize, at: usize, end: usize) -> (usize, usize, usize) {
    if at + B::BYTES <= len {
        (at, 0, end - at)
    } else if end >= B::BYTES {
        (end - B::BYTES, at + B::BYTES - end, B::BYTES)
    } else {
        (0, at, end)
    }
}

/// `acc` plus one in each byte of each zero cell of `x` (at most 2 a byte).
#[inline(always)]
fn count_zeros<W: Width, B: Vector>(b: B, acc: B::V, x: B::V) -> B::V {
    let l = Lane::of::<W>();
    let (zero, ones) = (b.splat(l, 0), b.splat(l, u32::MAX));
    let mut acc = acc;
    for p in 0..planes::<W>() {
        let z = b.eq(l, cells::<W, B>(b, x, p), zero);
        acc = b.sub8(acc, b.masked(l, ones, z));
    }
    acc
}

/// Saturating decrement of `len` cells from `start`, wrapping past the last
/// cell (the contract of [`all::dec_run`]), in vector read-modify-writes
/// that decrement only the run's lanes (a window at the ends,
/// [`Vector::span`]).
///
/// Almost always (unless the run ends within a vector of the last cell)
/// the vectors start at the run's first byte: `ceil(bytes / BYTES)` of
/// them, all whole but the last (and, for 4-bit cells, the first), so a
/// filter's run of `P` cells is a fixed, predicted loop. Near the end the
/// run is done in the aligned vectors that hold it: the blocks' length is
/// a multiple of every vector's, so none straddles the end, and the wrap
/// to cell 0 costs a subtraction from the offset. Either way no byte
/// outside the blocks is touched (no padding is needed) and the offsets
/// are proven in bounds once per call, from `start < cells` and
/// `len <= cells`.
#[inline(always)]
pub(crate) fn dec_run<W: Width, B: Vector>(b: B, blocks: &mut [Block], start: usize, len: usize) {
    let total = blocks.len() * W::CELLS;
    if W::BITS < 4 {
        return all::dec_run::<W>(blocks, start, len);
    }
    let Some((s, len)) = all::wrap_bounds(total, start, len) else {
        return;
    };
    let e = s + len;
    // The run's bytes in each plane, not wrapped (`e < 2 · total`): for
    // 4-bit cells, the low nibbles of the even cells of `s..e` and the high
    // nibbles of the odd ones.
    let (lo, hi) = if W::BITS == 4 {
        ([s.div_ceil(2), s / 2], [e.div_ceil(2), e / 2])
    } else {
        let c = W::BITS as usize / 8;
        ([s * c; 2], [e * c; 2])
    };
    let run = Run::<W, B>::new(b, lo, hi);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(blocks);
    let (v, n) = (B::BYTES, bytes.len());
    let (first, end) = (lo[1], hi[0]);
    let count = (end - first).div_ceil(v);
    if first + count * v <= n {
        let last = first + (count - 1) * v;
        for j in 0..count - 1 {
            let at = first + j * v;
            let amount = if W::BITS == 4 && j == 0 {
                run.amount(at)
            } else {
                run.full
            };
            // SAFETY: `at + v <= last + v <= n`.
            unsafe { dec_vector(run, bytes, at, amount) };
        }
        // The run's lanes of the last vector are its first ones, unless it
        // is also the first vector of a 4-bit run.
        let amount = if W::BITS == 4 && count == 1 {
            run.amount(last)
        } else {
            run.head(last)
        };
        // SAFETY: `last + v <= n`.
        unsafe { dec_vector(run, bytes, last, amount) };
        return;
    }
    let base = first & !(v - 1);
    for j in 0..(end - base).div_ceil(v) {
        let off = base + j * v;
        // SAFETY: `off` is `base` plus a multiple of `v`, and `n` is a
        // multiple of `v`, so the wrapped offset is one too, and it is
        // below `n`: `base <= first < n` (as `s < total`), and
        // `off < end <= 2n`, so `off - n < n`. The vector ends by `n`.
        unsafe { dec_vector(run, bytes, wrap(off, n), run.amount(off)) };
    }
}

/// Byte `off` of a run, not wrapped (`off < 2n`), in blocks of `n` bytes.
#[inline(always)]
fn wrap(off: usize, n: usize) -> usize {
    if off >= n {
        off - n
    } else {
        off
    }
}

/// A run of [`dec_run`]: its bytes in each cell plane, not wrapped, and
/// the decrement vectors.
#[derive(Clone, Copy)]
struct Run<W: Width, B: Vector> {
    b: B,
    lo: [usize; 2],
    hi: [usize; 2],
    /// One in each plane's lanes: the decrement of a whole vector.
    full: B::V,
    /// One in plane `p`'s lanes.
    one: [B::V; 2],
    width: core::marker::PhantomData<W>,
}

impl<W: Width, B: Vector> Run<W, B> {
    #[inline(always)]
    fn new(b: B, lo: [usize; 2], hi: [usize; 2]) -> Self {
        let l = Lane::of::<W>();
        let one = [b.splat(l, 1), b.splat(l, 0x10)];
        let full = if W::BITS == 4 {
            b.or(one[0], one[1])
        } else {
            one[0]
        };
        Run {
            b,
            lo,
            hi,
            full,
            one,
            width: core::marker::PhantomData,
        }
    }

    /// The decrement of the vector at unwrapped byte `off`: one in the
    /// lanes of the run's cells, zero in the others. (No closures here: one
    /// is compiled out of line, without the backend's instructions.)
    #[inline(always)]
    fn amount(self, off: usize) -> B::V {
        if W::BITS == 4 {
            self.b.or(self.plane(0, off), self.plane(1, off))
        } else {
            self.plane(0, off)
        }
    }

    /// [`Run::amount`] of a vector at `off` that no lane of the run
    /// precedes (`lo <= off`) and that holds the run's end
    /// (`hi <= off + BYTES`): one window a plane.
    #[inline(always)]
    fn head(self, off: usize) -> B::V {
        let b = self.b;
        let low = b.masked(Lane::U8, self.one[0], b.window(0, self.hi[0] - off));
        if W::BITS == 4 {
            let high = b.masked(Lane::U8, self.one[1], b.window(0, self.hi[1] - off));
            b.or(low, high)
        } else {
            low
        }
    }

    /// [`Run::amount`] in plane `p`.
    #[inline(always)]
    fn plane(self, p: usize, off: usize) -> B::V {
        let (b, v) = (self.b, B::BYTES);
        let (from, to) = (
            self.lo[p].saturating_sub(off),
            self.hi[p].saturating_sub(off),
        );
        b.masked(Lane::U8, self.one[p], b.span(from.min(v), to.min(v)))
    }
}

/// Decrements, saturating, each cell of the vector at byte `at` of
/// `bytes` by its lane of `amount` (0 or 1).
///
/// # Safety
///
/// `at + B::BYTES <= bytes.len()`.
#[inline(always)]
unsafe fn dec_vector<W: Width, B: Vector>(
    run: Run<W, B>,
    bytes: &mut [u8],
    at: usize,
    amount: B::V,
) {
    let (b, l) = (run.b, Lane::of::<W>());
    // SAFETY: the caller's contract.
    let vector = unsafe { bytes.get_unchecked_mut(at..at + B::BYTES) };
    let x = b.load(l, vector, 0);
    let out = if W::BITS == 4 {
        let low = b.subs(l, cells::<W, B>(b, x, 0), cells::<W, B>(b, amount, 0));
        let high = b.subs(l, cells::<W, B>(b, x, 1), cells::<W, B>(b, amount, 1));
        b.or(low, high)
    } else {
        b.subs(l, x, amount)
    };
    b.store(l, vector, 0, out);
}

/// The number of zero cells in a run (clipped).
#[inline(always)]
pub(crate) fn zero_count<W: Width, B: Vector>(
    b: B,
    blocks: &[Block],
    start: usize,
    len: usize,
) -> usize {
    let mut n = 0;
    let (lo, hi) = run_bytes::<W>(blocks.len(), start, len, |i| {
        n += all::zero_count::<W>(blocks, i, 1);
    });
    let l = Lane::of::<W>();
    let zero = b.splat(l, 0);
    let bytes: &[u8] = bytemuck::cast_slice(blocks);
    let mut at = lo;
    // Byte counters gain at most 2 a vector: summed every 126 vectors, and
    // once at the end, with the last partial vector's counts.
    let mut acc = zero;
    let mut vectors = 0;
    while at + B::BYTES <= hi {
        acc = count_zeros::<W, B>(b, acc, b.load(l, bytes, at));
        at += B::BYTES;
        vectors += 1;
        if vectors == 126 {
            n += b.hsum8(acc) as usize / l.bytes();
            (acc, vectors) = (zero, 0);
        }
    }
    if at < hi {
        let (pos, from, to) = tail::<B>(bytes.len(), at, hi);
        let last = count_zeros::<W, B>(b, zero, b.load(l, bytes, pos));
        let last = b.masked(Lane::U8, last, b.window(from, to));
        acc = b.sub8(acc, b.sub8(zero, last));
    }
    n + b.hsum8(acc) as usize / l.bytes()
}

/// The `TABLE_W1` .. `TABLE_W32` constants of a backend whose token is
/// `$new` (of type `$token`), with each listed kernel stamped from the
/// generic one inside a function with `$features` enabled, and the other
/// slots running the scalar reference; the 1- and 2-bit tables come from
/// [`crate::arch::bits`] (their select kernels stamped the same way, their
/// run kernels the scalar reference).
///
/// Each stamped function is `#[inline]`: without the hint LLVM left some
/// out of line in the hot loops' instantiations (the 4-bit `any_zero`, its
/// mask passed through memory), and a `StableBloom<W4>::contains` spent
/// half its time in that call (`perf`, Zen 5, AVX2).
macro_rules! stamp {
    (
        isa: $isa:expr, token: $token:ty, new: $new:expr, features: $features:tt,
        $($w:ident: $table:ident [$($k:ident),* $(,)?]),* $(,)?
    ) => {
        $crate::arch::bits::stamp_bits!($isa, $features, W1: TABLE_W1, W2: TABLE_W2);
        $(
            pub(crate) const $table: $crate::Kernels<$crate::$w> = {
                type W = $crate::$w;
                use $crate::arch::generic as g;
                $($crate::arch::generic::stamp!(@$k, $token, $new, $features);)*
                $crate::Kernels {
                    $($k,)*
                    ..$crate::Kernels::scalar_as($isa)
                }
            };
        )*
    };
    (@any_zero, $token:ty, $new:expr, [$($f:literal)?]) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn any_zero(block: &$crate::Block, mask: <W as $crate::Width>::Mask) -> bool {
            g::any_zero::<W, $token>($new, block, mask)
        }
    };
    (@min_count, $token:ty, $new:expr, [$($f:literal)?]) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn min_count(
            block: &$crate::Block,
            mask: <W as $crate::Width>::Mask,
        ) -> $crate::MinCount {
            g::min_count::<W, $token>($new, block, mask)
        }
    };
    (@dec_run, $token:ty, $new:expr, [$($f:literal)?]) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn dec_run(blocks: &mut [$crate::Block], start: usize, len: usize) {
            g::dec_run::<W, $token>($new, blocks, start, len)
        }
    };
    (@zero_count, $token:ty, $new:expr, [$($f:literal)?]) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn zero_count(blocks: &[$crate::Block], start: usize, len: usize) -> usize {
            g::zero_count::<W, $token>($new, blocks, start, len)
        }
    };
    (@$k:ident, $token:ty, $new:expr, [$($f:literal)?]) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn $k(block: &mut $crate::Block, mask: <W as $crate::Width>::Mask, v: u32) {
            g::$k::<W, $token>($new, block, mask, v)
        }
    };
}
pub(crate) use stamp;
