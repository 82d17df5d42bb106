//! Cell widths: how many bits a cell holds, and the mask type that selects
//! cells of that width within a block.

use crate::{dispatch::Kernels, Block, Isa, Mask};
use core::fmt::Debug;

/// The part of [`Width`] only this crate can name or implement.
///
/// The table accessors live here, not in [`Width`], because they hand out
/// tables without asking the CPU: a kernel of an instruction set the CPU
/// lacks dies with `SIGILL`, so safe code outside this crate must reach
/// tables only through [`Kernels::for_isa`], [`Kernels::best`] and
/// [`Kernels::scalar`], which check.
pub(crate) mod sealed {
    use crate::{Isa, Kernels, Width};

    pub trait Sealed {
        /// The kernel table of `isa` for this width, if that backend is
        /// compiled for this target. Does not check that the CPU supports
        /// it: callers must check [`Isa::is_available`] first.
        fn table(isa: Isa) -> Option<&'static Kernels<Self>>
        where
            Self: Width;

        /// The scalar reference table of this width.
        fn scalar_table() -> &'static Kernels<Self>
        where
            Self: Width;

        /// [`Sealed::table`] by value: a constant once inlined with a
        /// constant `isa`, so a call through it is a direct call (what
        /// [`crate::Backend`] relies on to inline kernels). The scalar
        /// table where `isa` is not compiled for this target. Unchecked,
        /// like [`Sealed::table`].
        fn table_const(isa: Isa) -> Kernels<Self>
        where
            Self: Width;
    }
}

/// A cell width of 1, 2, 4, 8, 16 or 32 bits.
///
/// Cells saturate: they hold `0..=MAX` and no kernel ever wraps a cell
/// around.
///
/// The trait is sealed: only this crate implements it. A width's kernels
/// are reached only through [`Kernels::for_isa`], [`Kernels::best`] and
/// [`Kernels::scalar`], which hand out an implementation only when the CPU
/// runs its instructions. The unchecked per-implementation lookup is private
/// to this crate, so safe code cannot get, say, the AVX-512 table on a CPU
/// without AVX-512 (where calling it would die with `SIGILL`):
///
/// ```compile_fail,E0576
/// use streambloom_kernels::{Isa, Width, W8};
/// let avx512 = <W8 as Width>::table(Isa::Avx512);
/// ```
///
/// ```compile_fail,E0599
/// use streambloom_kernels::{Isa, Width, W8};
/// let avx512 = W8::table(Isa::Avx512);
/// ```
///
/// The checked way:
///
/// ```
/// use streambloom_kernels::{Isa, Kernels, W8};
/// let avx512 = Kernels::<W8>::for_isa(Isa::Avx512);
/// assert_eq!(avx512.is_some(), Isa::Avx512.is_available());
/// ```
pub trait Width: Copy + Debug + Default + Send + Sync + 'static + sealed::Sealed {
    /// Bits per cell.
    const BITS: u32;
    /// Cells in one [`Block`].
    const CELLS: usize = Block::BITS / Self::BITS as usize;
    /// The largest value a cell holds, `2^BITS - 1`.
    const MAX: u32 = if Self::BITS == 32 {
        u32::MAX
    } else {
        (1 << Self::BITS) - 1
    };
    /// Selection mask over the [`Self::CELLS`] cells of a block.
    type Mask: Mask;
}

macro_rules! width {
    ($(#[$doc:meta])* $name:ident, $bits:expr, $mask:ty, $table:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {
            #[inline]
            fn table(isa: Isa) -> Option<&'static Kernels<Self>> {
                crate::dispatch::table_for!(isa, $table)
            }
            #[inline]
            fn scalar_table() -> &'static Kernels<Self> {
                &crate::arch::all::$table
            }
            #[inline(always)]
            fn table_const(isa: Isa) -> Kernels<Self> {
                match isa {
                    Isa::Portable => crate::arch::portable::$table,
                    #[cfg(target_arch = "x86_64")]
                    Isa::Avx2 => crate::arch::x86_64::avx2::$table,
                    #[cfg(target_arch = "x86_64")]
                    Isa::Avx512 => crate::arch::x86_64::avx512::$table,
                    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
                    Isa::Neon => crate::arch::aarch64::neon::$table,
                    _ => crate::arch::all::$table,
                }
            }
        }
        impl Width for $name {
            const BITS: u32 = $bits;
            type Mask = $mask;
        }
    };
}

width!(
    /// 1-bit cells (512 per block): a classic Bloom filter's bits.
    W1, 1, [u64; 8], TABLE_W1
);
width!(
    /// 2-bit cells (256 per block), `MAX = 3`.
    W2, 2, [u64; 4], TABLE_W2
);
width!(
    /// 4-bit cells (128 per block), `MAX = 15`.
    W4, 4, [u64; 2], TABLE_W4
);
width!(
    /// 8-bit cells (64 per block), `MAX = 255`.
    W8, 8, u64, TABLE_W8
);
width!(
    /// 16-bit cells (32 per block), `MAX = 65535`.
    W16, 16, u32, TABLE_W16
);
width!(
    /// 32-bit cells (16 per block), `MAX = u32::MAX`: for counts.
    W32, 32, u16, TABLE_W32
);

/// Reads cell `i` of `block` (`i < W::CELLS`): the portable definition of the
/// cell layout every backend must agree with.
///
/// ```
/// use streambloom_kernels::{cell, set_cell, Block, W4};
/// let mut b = Block::ZERO;
/// set_cell::<W4>(&mut b, 3, 9);
/// assert_eq!(cell::<W4>(&b, 3), 9);
/// assert_eq!(b.0[1], 0x90);
/// ```
#[inline(always)]
pub fn cell<W: Width>(block: &Block, i: usize) -> u32 {
    let i = i % W::CELLS;
    match W::BITS {
        32 => {
            let o = 4 * i;
            u32::from_le_bytes([block.0[o], block.0[o + 1], block.0[o + 2], block.0[o + 3]])
        }
        16 => u32::from(u16::from_le_bytes([block.0[2 * i], block.0[2 * i + 1]])),
        8 => u32::from(block.0[i]),
        _ => {
            let bit = i * W::BITS as usize;
            u32::from(block.0[bit / 8] >> (bit % 8)) & W::MAX
        }
    }
}

/// Writes `v` (saturated to `W::MAX`) into cell `i` of `block`.
#[inline(always)]
pub fn set_cell<W: Width>(block: &mut Block, i: usize, v: u32) {
    let i = i % W::CELLS;
    let v = v.min(W::MAX);
    match W::BITS {
        32 => block.0[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
        16 => block.0[2 * i..2 * i + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        8 => block.0[i] = v as u8,
        _ => {
            let bit = i * W::BITS as usize;
            let shift = bit % 8;
            let m = (W::MAX as u8) << shift;
            let byte = &mut block.0[bit / 8];
            *byte = (*byte & !m) | (((v as u8) << shift) & m);
        }
    }
}
