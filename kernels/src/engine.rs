//! Dispatch once per operation, not once per kernel call: [`Engine`].

use crate::arch::timers::{AgeCount, TimerClock};
use crate::dispatch::{Isa, MinCount};
use crate::{Block, Width};
use core::marker::PhantomData;

mod token {
    pub trait Sealed {}
}

/// One implementation of the kernels, as a zero-sized value that proves
/// the CPU runs it (see [`Engine`]). Its methods are the
/// kernels of [`crate::Kernels`], generic over the cell width, and inline
/// into the caller.
pub trait Backend: Copy + Send + Sync + token::Sealed {
    /// Which implementation this is.
    const ISA: Isa;

    /// Whether any selected cell is zero ([`crate::arch::all::any_zero`]).
    fn any_zero<W: Width>(self, block: &Block, mask: W::Mask) -> bool;
    /// Minimum of the selected cells and its multiplicity
    /// ([`crate::arch::all::min_count`]).
    fn min_count<W: Width>(self, block: &Block, mask: W::Mask) -> MinCount;
    /// Selected cells become `max(cell, v)`.
    fn max_assign<W: Width>(self, block: &mut Block, mask: W::Mask, v: u32);
    /// Selected cells become `v`.
    fn assign<W: Width>(self, block: &mut Block, mask: W::Mask, v: u32);
    /// Selected cells gain `r`, saturating.
    fn add_sat<W: Width>(self, block: &mut Block, mask: W::Mask, r: u32);
    /// Selected cells lose `r`, stopping at 0.
    fn sub_sat<W: Width>(self, block: &mut Block, mask: W::Mask, r: u32);
    /// Saturating decrement of `len` cells from `start`, wrapping past the
    /// last cell ([`crate::arch::all::dec_run`]).
    fn dec_run<W: Width>(self, blocks: &mut [Block], start: usize, len: usize);
    /// Zero cells in the run `start .. start + len` (clipped).
    fn zero_count<W: Width>(self, blocks: &[Block], start: usize, len: usize) -> usize;
    /// Marks `expired` the cells of a run whose age is at least `limit`
    /// ([`crate::arch::timers::expire_run`]).
    fn expire_run<W: Width>(
        self,
        blocks: &mut [Block],
        start: usize,
        len: usize,
        clock: TimerClock,
        limit: u32,
        expired: u32,
    );
    /// The oldest age among the selected cells and how many hold it
    /// ([`crate::arch::timers::oldest_count`]).
    fn oldest_count<W: Width>(self, block: &Block, mask: W::Mask, clock: TimerClock) -> AgeCount;

    /// A mask of one bit in each of a block's 64-bit words that `used`
    /// selects, built from the hash `x` (see [`Ops::hash_words`]). Written
    /// out in AVX2 for the AVX2 and AVX-512 backends, as scalar code for
    /// the others.
    #[inline(always)]
    fn hash_words(self, x: u64, top: u32, used: u64) -> [u64; 8] {
        let top = top.min(16);
        #[cfg(target_arch = "x86_64")]
        if matches!(Self::ISA, Isa::Avx2 | Isa::Avx512) {
            // SAFETY: a value of this type exists only where the CPU runs
            // `Self::ISA` (module docs), and both of these include AVX2.
            return unsafe { crate::arch::x86_64::bits::hash_words(x, top, used) };
        }
        crate::arch::bits::hash_words(x, top, used)
    }
}

/// Implements [`Backend`] for `$ty` from the kernel tables of `$isa`, taken
/// by value (`table_const`): a constant once `W` is known, so each call
/// compiles to a direct call of the kernel, which inlines where the caller
/// is compiled for the same instruction set (inside [`Engine::run`]).
macro_rules! backend {
    ($(#[$doc:meta])* $ty:ident, $isa:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $ty(());
        impl token::Sealed for $ty {}
        impl Backend for $ty {
            const ISA: Isa = $isa;
            #[inline(always)]
            fn any_zero<W: Width>(self, block: &Block, mask: W::Mask) -> bool {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).any_zero)(block, mask) }
            }
            #[inline(always)]
            fn min_count<W: Width>(self, block: &Block, mask: W::Mask) -> MinCount {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).min_count)(block, mask) }
            }
            #[inline(always)]
            fn max_assign<W: Width>(self, block: &mut Block, mask: W::Mask, v: u32) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).max_assign)(block, mask, v) }
            }
            #[inline(always)]
            fn assign<W: Width>(self, block: &mut Block, mask: W::Mask, v: u32) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).assign)(block, mask, v) }
            }
            #[inline(always)]
            fn add_sat<W: Width>(self, block: &mut Block, mask: W::Mask, r: u32) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).add_sat)(block, mask, r) }
            }
            #[inline(always)]
            fn sub_sat<W: Width>(self, block: &mut Block, mask: W::Mask, r: u32) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).sub_sat)(block, mask, r) }
            }
            #[inline(always)]
            fn dec_run<W: Width>(self, blocks: &mut [Block], start: usize, len: usize) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).dec_run)(blocks, start, len) }
            }
            #[inline(always)]
            fn zero_count<W: Width>(self, blocks: &[Block], start: usize, len: usize) -> usize {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).zero_count)(blocks, start, len) }
            }
            #[inline(always)]
            fn expire_run<W: Width>(
                self,
                blocks: &mut [Block],
                start: usize,
                len: usize,
                clock: TimerClock,
                limit: u32,
                expired: u32,
            ) {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe {
                    (W::table_const(Self::ISA).expire_run)(blocks, start, len, clock, limit, expired)
                }
            }
            #[inline(always)]
            fn oldest_count<W: Width>(
                self,
                block: &Block,
                mask: W::Mask,
                clock: TimerClock,
            ) -> AgeCount {
                // SAFETY: a value of this type exists only where the
                // CPU runs `Self::ISA` (module docs).
                unsafe { (W::table_const(Self::ISA).oldest_count)(block, mask, clock) }
            }
        }
    };
}

backend!(
    /// The scalar reference kernels ([`crate::arch::all`]).
    Scalar,
    Isa::Scalar
);
backend!(
    /// Portable SIMD on `wide` (the target's baseline vectors).
    Portable,
    Isa::Portable
);
impl Scalar {
    /// The scalar backend, which every CPU runs: safe to make anywhere
    /// (statistics and tests that need no speed).
    pub const fn new() -> Scalar {
        Scalar(())
    }
}

impl Default for Scalar {
    fn default() -> Scalar {
        Scalar::new()
    }
}

#[cfg(target_arch = "x86_64")]
backend!(
    /// AVX2, inside [`Engine::run`]'s AVX2 instantiation.
    Avx2,
    Isa::Avx2
);
#[cfg(target_arch = "x86_64")]
backend!(
    /// AVX-512 F+BW, inside [`Engine::run`]'s AVX-512 instantiation.
    Avx512,
    Isa::Avx512
);
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
backend!(
    /// NEON on aarch64.
    Neon,
    Isa::Neon
);

/// An operation written once over any [`Backend`]: a filter's hot loop.
/// [`Engine::run`] calls [`Body::run`] once, with the backend the CPU runs.
pub trait Body {
    /// What the operation returns.
    type Output;
    /// Runs the operation with `backend`'s kernels.
    fn run<B: Backend>(self, backend: B) -> Self::Output;
}

/// A checked choice of kernel implementation: an [`Isa`] this CPU runs.
///
/// A filter's hot loop is written once, generic over a [`Backend`], as a
/// [`Body`]; [`Engine::run`] picks the instruction set with one predicted
/// branch and runs the body inside a function compiled for it
/// (`#[target_feature]`), where every kernel call inlines: an item costs no
/// indirect call and no feature test. A per-item operation is a batch of
/// one. This is memchr's and simdutf8's pattern (one generic algorithm,
/// stamped per ISA), with the kernels of [`crate::arch`] as the building
/// blocks.
///
/// **Soundness.** A backend value is a proof that the CPU runs its
/// instructions: its field is private, and the only place that makes one is
/// [`Engine::run`], whose `Engine` was built from an
/// [`Isa::is_available`] check. So safe code cannot run a kernel the CPU
/// lacks, whatever it does with the backend value it is handed.
///
/// ```
/// use streambloom_kernels::{Backend, Block, Body, Engine, Mask, Ops, W8};
///
/// /// Sets cells 1 and 9 to 3 and says whether any was zero before.
/// struct SetTwo<'a>(&'a mut Block);
/// impl Body for SetTwo<'_> {
///     type Output = bool;
///     fn run<B: Backend>(self, backend: B) -> bool {
///         let ops = Ops::<W8, B>::new(backend);
///         let mask = 0u64.with(1).with(9);
///         let was_zero = ops.any_zero(self.0, mask);
///         ops.assign(self.0, mask, 3);
///         was_zero
///     }
/// }
///
/// let mut block = Block::ZERO;
/// assert!(Engine::best().run(SetTwo(&mut block)));
/// assert!(!Engine::scalar().run(SetTwo(&mut block)));
/// assert_eq!(block.0[9], 3);
/// ```
///
/// ```
/// use streambloom_kernels::{Engine, Isa};
/// assert_eq!(Engine::scalar().isa(), Isa::Scalar);
/// assert_eq!(Engine::best().isa(), Isa::detect());
/// assert_eq!(Engine::new(Isa::Avx512).is_some(), Isa::Avx512.is_available());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Engine {
    isa: Isa,
}

impl Engine {
    /// The implementation [`Isa::detect`] picks.
    pub fn best() -> Engine {
        Engine { isa: Isa::detect() }
    }

    /// The scalar reference (every CPU).
    pub const fn scalar() -> Engine {
        Engine { isa: Isa::Scalar }
    }

    /// `isa`, if this target compiles it and the CPU runs it.
    pub fn new(isa: Isa) -> Option<Engine> {
        isa.is_available().then_some(Engine { isa })
    }

    /// Which implementation this engine runs.
    pub const fn isa(self) -> Isa {
        self.isa
    }

    /// Runs `body` with this engine's backend: one branch on the ISA, then
    /// a call to the body compiled for that ISA, with its kernels inlined.
    ///
    /// Every backend's body is a function of its own, never inlined here:
    /// a caller then holds one branch and a call, not a copy of the body
    /// per backend, and the optimizer's cost, which grows faster than a
    /// function's size, stays that of one body (with the portable and scalar
    /// bodies inlined, the core's test build took 20 minutes, most of it
    /// in the Recurring Minimum bodies). The call is one per operation or
    /// batch, as the `#[target_feature]` backends always had.
    #[inline]
    pub fn run<Bd: Body>(self, body: Bd) -> Bd::Output {
        match self.isa {
            Isa::Portable => run_portable(body),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Engine::new` and `Isa::detect` only give out
            // available ISAs, so this CPU runs AVX2.
            Isa::Avx2 => unsafe { run_avx2(body) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, this CPU runs AVX-512 F and BW.
            Isa::Avx512 => unsafe { run_avx512(body) },
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            Isa::Neon => run_neon(body),
            _ => run_scalar(body),
        }
    }
}

// Each backend's bodies are defined in a module of their own: rustc puts
// the instances of a generic function in the codegen unit of the module that
// defines it, so one module per backend lets the optimizer work on the
// backends' bodies in parallel (in one module they formed one unit, built on
// one core while the others idled).

/// The scalar backend's bodies.
mod scalar_bodies {
    use super::{Body, Scalar};

    /// [`Body::run`] on the scalar reference kernels.
    #[inline(never)]
    pub(super) fn run_scalar<Bd: Body>(body: Bd) -> Bd::Output {
        body.run(Scalar(()))
    }
}
use scalar_bodies::run_scalar;

/// The portable backend's bodies.
mod portable_bodies {
    use super::{Body, Portable};

    /// [`Body::run`] on the portable (`wide`) kernels.
    #[inline(never)]
    pub(super) fn run_portable<Bd: Body>(body: Bd) -> Bd::Output {
        body.run(Portable(()))
    }
}
use portable_bodies::run_portable;

/// The NEON backend's bodies.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon_bodies {
    use super::{Body, Neon};

    /// [`Body::run`] on the NEON kernels.
    #[inline(never)]
    pub(super) fn run_neon<Bd: Body>(body: Bd) -> Bd::Output {
        body.run(Neon(()))
    }
}
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
use neon_bodies::run_neon;

/// The AVX2 backend's bodies.
#[cfg(target_arch = "x86_64")]
mod avx2_bodies {
    use super::{Avx2, Body};

    /// [`Body::run`] compiled for AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn run_avx2<Bd: Body>(body: Bd) -> Bd::Output {
        body.run(Avx2(()))
    }
}
#[cfg(target_arch = "x86_64")]
use avx2_bodies::run_avx2;

/// The AVX-512 backend's bodies.
#[cfg(target_arch = "x86_64")]
mod avx512_bodies {
    use super::{Avx512, Body};

    /// [`Body::run`] compiled for AVX-512 F+BW.
    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    pub(super) fn run_avx512<Bd: Body>(body: Bd) -> Bd::Output {
        body.run(Avx512(()))
    }
}
#[cfg(target_arch = "x86_64")]
use avx512_bodies::run_avx512;

/// The kernels of one width over backend `B`, with the signatures of
/// [`crate::Kernels`]: what a [`Body`] calls.
#[derive(Clone, Copy, Debug)]
pub struct Ops<W: Width, B: Backend> {
    backend: B,
    width: PhantomData<W>,
}

impl<W: Width, B: Backend> Ops<W, B> {
    /// `backend`'s kernels for width `W`.
    #[inline(always)]
    pub fn new(backend: B) -> Self {
        Ops {
            backend,
            width: PhantomData,
        }
    }

    /// The same backend for another width (a Spectral filter's marker
    /// bits, say).
    #[inline(always)]
    pub fn width<V: Width>(self) -> Ops<V, B> {
        Ops::new(self.backend)
    }

    /// Which implementation runs.
    #[inline(always)]
    pub fn isa(self) -> Isa {
        B::ISA
    }

    /// Whether any selected cell is zero.
    #[inline(always)]
    pub fn any_zero(self, block: &Block, mask: W::Mask) -> bool {
        self.backend.any_zero::<W>(block, mask)
    }

    /// Minimum of the selected cells and its multiplicity.
    #[inline(always)]
    pub fn min_count(self, block: &Block, mask: W::Mask) -> MinCount {
        self.backend.min_count::<W>(block, mask)
    }

    /// Selected cells become `max(cell, v)`.
    #[inline(always)]
    pub fn max_assign(self, block: &mut Block, mask: W::Mask, v: u32) {
        self.backend.max_assign::<W>(block, mask, v)
    }

    /// Selected cells become `v`.
    #[inline(always)]
    pub fn assign(self, block: &mut Block, mask: W::Mask, v: u32) {
        self.backend.assign::<W>(block, mask, v)
    }

    /// Selected cells gain `r`, saturating.
    #[inline(always)]
    pub fn add_sat(self, block: &mut Block, mask: W::Mask, r: u32) {
        self.backend.add_sat::<W>(block, mask, r)
    }

    /// Selected cells lose `r`, stopping at 0.
    #[inline(always)]
    pub fn sub_sat(self, block: &mut Block, mask: W::Mask, r: u32) {
        self.backend.sub_sat::<W>(block, mask, r)
    }

    /// Saturating decrement of `len` cells from `start`, wrapping past the
    /// last cell to cell 0.
    #[inline(always)]
    pub fn dec_run(self, blocks: &mut [Block], start: usize, len: usize) {
        self.backend.dec_run::<W>(blocks, start, len)
    }

    /// Zero cells in a run of cells (clipped to the blocks).
    #[inline(always)]
    pub fn zero_count(self, blocks: &[Block], start: usize, len: usize) -> usize {
        self.backend.zero_count::<W>(blocks, start, len)
    }

    /// Marks `expired` the cells of the run of `len` cells from `start`
    /// (wrapping) whose age under `clock` is at least `limit`.
    #[inline(always)]
    pub fn expire_run(
        self,
        blocks: &mut [Block],
        start: usize,
        len: usize,
        clock: TimerClock,
        limit: u32,
        expired: u32,
    ) {
        self.backend
            .expire_run::<W>(blocks, start, len, clock, limit, expired)
    }

    /// The oldest age among the selected cells and how many hold it.
    #[inline(always)]
    pub fn oldest_count(self, block: &Block, mask: W::Mask, clock: TimerClock) -> AgeCount {
        self.backend.oldest_count::<W>(block, mask, clock)
    }

    /// A split-block mask built from the hash `x`: one bit in each 64-bit
    /// word `w` of a block that bit `w` of `used` selects, the bit named by
    /// the 6 bits of `x` from bit `top + 6w` counted from the top. Word `w`
    /// is `((used >> w) & 1) << ((x >> (58 - top - 6w)) & 63)`; `top` is
    /// taken as at most 16, so every field lies inside `x`. Every word is
    /// computed at once (two AVX2 vectors), with no branch on the data.
    ///
    /// ```
    /// use streambloom_kernels::{Backend, Body, Engine, Ops, W1};
    ///
    /// struct Words(u64);
    /// impl Body for Words {
    ///     type Output = [u64; 8];
    ///     fn run<B: Backend>(self, backend: B) -> [u64; 8] {
    ///         Ops::<W1, B>::new(backend).hash_words(self.0, 3, 0b101)
    ///     }
    /// }
    ///
    /// // Fields of 6 bits from bit 3: word 0's is 0b000101, word 2's 0b000011.
    /// let x = 0b000_000101_000000_000011u64 << 43;
    /// let want = [1 << 5, 0, 1 << 3, 0, 0, 0, 0, 0];
    /// assert_eq!(Engine::best().run(Words(x)), want);
    /// assert_eq!(Engine::scalar().run(Words(x)), want);
    /// ```
    #[inline(always)]
    pub fn hash_words(self, x: u64, top: u32, used: u64) -> [u64; 8] {
        self.backend.hash_words(x, top, used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kernels, Mask, W16, W4, W8};

    /// Runs every select kernel through `Ops` and returns the results, so
    /// each engine can be compared with the table of the same ISA.
    struct Probe<'a, W: Width>(&'a mut Block, W::Mask);
    impl<W: Width> Body for Probe<'_, W> {
        type Output = (Isa, bool, MinCount, Block, usize);
        fn run<B: Backend>(self, backend: B) -> Self::Output {
            let ops = Ops::<W, B>::new(backend);
            let z = ops.any_zero(self.0, self.1);
            ops.add_sat(self.0, self.1, 3);
            ops.max_assign(self.0, self.1, 5);
            ops.sub_sat(self.0, self.1, 1);
            let mc = ops.min_count(self.0, self.1);
            let blocks = core::slice::from_mut(self.0);
            ops.dec_run(blocks, 3, 40);
            let zeros = ops.zero_count(blocks, 0, W::CELLS);
            (ops.isa(), z, mc, *self.0, zeros)
        }
    }

    fn same_as_tables<W: Width>() {
        for isa in Isa::available() {
            let engine = Engine::new(isa).unwrap();
            let table = Kernels::<W>::for_isa(isa).unwrap();
            let mut a = Block::ZERO;
            for (i, b) in a.0.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(37);
            }
            let mut b = a;
            let mask = W::Mask::default().with(0).with(5).with(W::CELLS - 1);
            let (ran, z, mc, after, zeros) = engine.run(Probe::<W>(&mut a, mask));
            assert_eq!(ran, isa);
            assert_eq!(z, table.any_zero(&b, mask));
            table.add_sat(&mut b, mask, 3);
            table.max_assign(&mut b, mask, 5);
            table.sub_sat(&mut b, mask, 1);
            assert_eq!(mc, table.min_count(&b, mask));
            table.dec_run(core::slice::from_mut(&mut b), 3, 40);
            assert_eq!(after, b);
            assert_eq!(
                zeros,
                table.zero_count(core::slice::from_ref(&b), 0, W::CELLS)
            );
        }
    }

    #[test]
    fn every_engine_runs_its_own_tables() {
        same_as_tables::<W4>();
        same_as_tables::<W8>();
        same_as_tables::<W16>();
        same_as_tables::<crate::W32>();
        same_as_tables::<crate::W1>();
        same_as_tables::<crate::W2>();
    }

    #[test]
    fn engines_exist_only_for_available_isas() {
        for isa in Isa::ALL {
            assert_eq!(Engine::new(isa).is_some(), isa.is_available());
        }
        assert_eq!(Engine::best().isa(), Isa::detect());
    }
}
