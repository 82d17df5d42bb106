//! The select kernels of 1- and 2-bit cells, over the block's eight 64-bit
//! words: written once in plain integer code with no loop exit and no
//! data-dependent branch, and stamped per instruction set by
//! [`stamp_bits!`] (inside `#[target_feature]` functions, where the
//! compiler turns the eight words into two AVX2 vectors, or four SSE2 /
//! NEON ones).
//!
//! The scalar reference ([`crate::arch::all`]) visits the selected cells one
//! by one: each `pop_lowest` scans the mask's words with a branch the
//! predictor cannot learn (which word holds the next cell is the hash's
//! choice), about ten mispredictions for a check-and-set of five bits, some
//! 50 ns. Here a kernel is a fixed sequence of word operations.
//!
//! **Cells as bit planes.** Word `w` of a block holds 64 one-bit cells, or
//! 32 two-bit cells whose low bits are the even bits (`x & LOW`) and high
//! bits the odd ones (`(x >> 1) & LOW`). A mask's selection of word `w` is
//! its word `w` (1-bit cells), or half a mask word spread to the even bits
//! (2-bit cells). The updates are bit-sliced arithmetic on the planes
//! against the operand's planes (all ones or all zeros): a ripple-carry add
//! or subtract of two bits whose carry or borrow out saturates, a compare
//! for `max`, then a blend into the selected cells.

use crate::arch::generic::Op;
use crate::{Block, Mask, MinCount, Width};

/// The low bit of every cell of a word of `W`'s cells.
#[inline(always)]
const fn low<W: Width>() -> u64 {
    if W::BITS == 1 {
        u64::MAX
    } else {
        0x5555_5555_5555_5555
    }
}

/// The block as eight little-endian words.
#[inline(always)]
fn load(block: &Block) -> [u64; 8] {
    let mut words = [0; 8];
    for (w, x) in words.iter_mut().enumerate() {
        let mut b = [0; 8];
        b.copy_from_slice(&block.0[8 * w..8 * w + 8]);
        *x = u64::from_le_bytes(b);
    }
    words
}

/// Writes eight little-endian words to the block.
#[inline(always)]
fn store(block: &mut Block, words: [u64; 8]) {
    for (w, x) in words.into_iter().enumerate() {
        block.0[8 * w..8 * w + 8].copy_from_slice(&x.to_le_bytes());
    }
}

/// The 32 bits of `x` spread to the even bits of a word: bit `i` to bit
/// `2i`.
#[inline(always)]
fn spread(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

/// The low bit of each selected cell, word by word of the block.
#[inline(always)]
fn selection<W: Width>(mask: W::Mask) -> [u64; 8] {
    let m = mask.to_words();
    if W::BITS == 1 {
        return m;
    }
    let mut sel = [0; 8];
    for (w, s) in sel.iter_mut().enumerate() {
        *s = spread((m[w / 2] >> (32 * (w % 2))) as u32);
    }
    sel
}

/// A word's cells as planes: low bits and high bits (0 for 1-bit cells),
/// each at its cells' low bit.
#[inline(always)]
fn planes<W: Width>(x: u64) -> (u64, u64) {
    if W::BITS == 1 {
        (x, 0)
    } else {
        (x & low::<W>(), (x >> 1) & low::<W>())
    }
}

/// For each word, the low bit of each selected cell equal to `v` (`v` at
/// most `W::MAX`).
#[inline(always)]
fn equal<W: Width>(words: &[u64; 8], sel: &[u64; 8], v: u32) -> [u64; 8] {
    let (vl, vh) = operand::<W>(v);
    let mut out = [0; 8];
    for w in 0..8 {
        let (l, h) = planes::<W>(words[w]);
        out[w] = sel[w] & !(l ^ vl) & !(h ^ vh) & low::<W>();
    }
    out
}

/// Whether any word is non-zero.
#[inline(always)]
fn any(words: &[u64; 8]) -> bool {
    let mut or = 0;
    for x in words {
        or |= x;
    }
    or != 0
}

/// The set bits of all words.
#[inline(always)]
fn ones(words: &[u64; 8]) -> u32 {
    let mut n = 0;
    for x in words {
        n += x.count_ones();
    }
    n
}

/// Whether any selected cell is zero.
#[inline(always)]
pub(crate) fn any_zero<W: Width>(block: &Block, mask: W::Mask) -> bool {
    any(&equal::<W>(&load(block), &selection::<W>(mask), 0))
}

/// The minimum of the selected cells and how many hold it.
#[inline(always)]
pub(crate) fn min_count<W: Width>(block: &Block, mask: W::Mask) -> MinCount {
    let (words, sel) = (load(block), selection::<W>(mask));
    if !any(&sel) {
        return MinCount::EMPTY;
    }
    // The first value some selected cell holds; `MAX` when no smaller one.
    let mut min = W::MAX;
    for v in (0..W::MAX).rev() {
        if any(&equal::<W>(&words, &sel, v)) {
            min = v;
        }
    }
    MinCount {
        min,
        count: ones(&equal::<W>(&words, &sel, min)),
    }
}

/// The planes of the operand `v` (at most `W::MAX`): all ones or all zeros.
#[inline(always)]
fn operand<W: Width>(v: u32) -> (u64, u64) {
    // All ones where the bit is set: `0 - 1`.
    let (l, h) = (u64::from(v & 1), u64::from(v >> 1 & 1));
    (l.wrapping_neg() & low::<W>(), h.wrapping_neg() & low::<W>())
}

/// Each selected cell `c` becomes `op(c, min(v, W::MAX))`, saturating.
#[inline(always)]
fn update<W: Width>(block: &mut Block, mask: W::Mask, v: u32, op: Op) {
    let (vl, vh) = operand::<W>(v.min(W::MAX));
    let (words, sel) = (load(block), selection::<W>(mask));
    let mut out = [0; 8];
    for w in 0..8 {
        let (x, s) = (words[w], sel[w]);
        let (l, h) = planes::<W>(x);
        // The new planes (only their cells' low bits count).
        let (nl, nh) = match op {
            Op::Assign => (vl, vh),
            Op::Max if W::BITS == 1 => (l | vl, 0),
            Op::Add if W::BITS == 1 => (l | vl, 0),
            Op::Sub if W::BITS == 1 => (l & !vl, 0),
            Op::Max => {
                // `c < v`: the borrow out of `c - v`.
                let lt = (!h & vh) | (!(h ^ vh) & !l & vl);
                ((l & !lt) | (vl & lt), (h & !lt) | (vh & lt))
            }
            Op::Add => {
                let carry = l & vl;
                let over = (h & vh) | (carry & (h ^ vh));
                ((l ^ vl) | over, (h ^ vh ^ carry) | over)
            }
            Op::Sub => {
                let borrow = !l & vl;
                let under = (!h & vh) | (borrow & !(h ^ vh));
                ((l ^ vl) & !under, (h ^ vh ^ borrow) & !under)
            }
        };
        let cell = if W::BITS == 1 { s } else { s | s << 1 };
        let new = (nl & low::<W>()) | (nh & low::<W>()) << 1;
        out[w] = (x & !cell) | (new & cell);
    }
    store(block, out);
}

/// Each selected cell becomes `max(cell, min(v, W::MAX))`.
#[inline(always)]
pub(crate) fn max_assign<W: Width>(block: &mut Block, mask: W::Mask, v: u32) {
    update::<W>(block, mask, v, Op::Max);
}

/// Each selected cell becomes `min(v, W::MAX)`.
#[inline(always)]
pub(crate) fn assign<W: Width>(block: &mut Block, mask: W::Mask, v: u32) {
    update::<W>(block, mask, v, Op::Assign);
}

/// Each selected cell becomes `min(cell + r, W::MAX)`.
#[inline(always)]
pub(crate) fn add_sat<W: Width>(block: &mut Block, mask: W::Mask, r: u32) {
    update::<W>(block, mask, r, Op::Add);
}

/// Each selected cell becomes `cell - r`, or 0 where `r > cell`.
#[inline(always)]
pub(crate) fn sub_sat<W: Width>(block: &mut Block, mask: W::Mask, r: u32) {
    update::<W>(block, mask, r, Op::Sub);
}

/// One bit in each word of a block that `used` selects (bit `w` of `used`
/// for word `w`, `w < 8`), named by a 6-bit field of `x`: word `w` is
/// `((used >> w) & 1) << field_w`, where `field_w` is the 6 bits of `x`
/// from bit `top + 6w` counted from the top (`top <= 16`, so every field
/// lies inside `x`). A split-block mask of one cell per word, built from
/// the hash: the scalar form, which [`crate::Backend::hash_words`] runs
/// where no backend overrides it.
#[inline(always)]
pub(crate) fn hash_words(x: u64, top: u32, used: u64) -> [u64; 8] {
    let mut words = [0; 8];
    for (w, word) in (0u32..).zip(words.iter_mut()) {
        let field = (x >> (58 - top - 6 * w)) & 63;
        *word = (used >> w & 1) << field;
    }
    words
}

/// The `TABLE_W1` and `TABLE_W2` constants of a backend: the select kernels
/// above stamped inside functions with `$features` enabled (so the words
/// vectorize with the backend's instructions), the run kernels from the
/// scalar reference.
macro_rules! stamp_bits {
    ($isa:expr, $features:tt, $($w:ident: $table:ident),*) => {
        $($crate::arch::bits::stamp_bits!(@table $isa, $features, $w, $table);)*
    };
    (@table $isa:expr, [$($f:literal)?], $w:ident, $table:ident) => {
            pub(crate) const $table: $crate::Kernels<$crate::$w> = {
                type W = $crate::$w;
                use $crate::arch::bits as b;
                #[inline]
                $(#[target_feature(enable = $f)])?
                fn any_zero(block: &$crate::Block, mask: <W as $crate::Width>::Mask) -> bool {
                    b::any_zero::<W>(block, mask)
                }
                #[inline]
                $(#[target_feature(enable = $f)])?
                fn min_count(
                    block: &$crate::Block,
                    mask: <W as $crate::Width>::Mask,
                ) -> $crate::MinCount {
                    b::min_count::<W>(block, mask)
                }
                $crate::arch::bits::stamp_bits!(@update [$($f)?] max_assign);
                $crate::arch::bits::stamp_bits!(@update [$($f)?] assign);
                $crate::arch::bits::stamp_bits!(@update [$($f)?] add_sat);
                $crate::arch::bits::stamp_bits!(@update [$($f)?] sub_sat);
                $crate::Kernels {
                    any_zero,
                    min_count,
                    max_assign,
                    assign,
                    add_sat,
                    sub_sat,
                    ..$crate::Kernels::scalar_as($isa)
                }
            };
    };
    (@update [$($f:literal)?] $k:ident) => {
        #[inline]
        $(#[target_feature(enable = $f)])?
        fn $k(block: &mut $crate::Block, mask: <W as $crate::Width>::Mask, v: u32) {
            b::$k::<W>(block, mask, v)
        }
    };
}
pub(crate) use stamp_bits;
