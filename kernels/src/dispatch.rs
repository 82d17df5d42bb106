//! Run-time choice of a kernel implementation, made once and cached.
//!
//! Following memchr: the best instruction set the CPU offers is detected on
//! first use and stored in an atomic; later calls load it. A filter resolves
//! its [`Kernels`] table once, at construction, so the per-item cost of
//! dispatch is one indirect call, never a feature test.

use crate::arch::timers::{AgeCount, TimerClock};
use crate::{Block, Width};
use core::sync::atomic::{AtomicU8, Ordering};

/// An implementation of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Isa {
    /// The scalar reference ([`crate::arch::all`]): every target.
    Scalar = 0,
    /// Portable SIMD on the `wide` crate: the compile target's baseline
    /// vectors (SSE2 on x86-64, NEON on aarch64, scalar emulation elsewhere).
    Portable = 1,
    /// AVX2 on x86-64, detected at run time.
    Avx2 = 2,
    /// AVX-512 F+BW on x86-64 (masked byte and word operations), detected at
    /// run time.
    ///
    /// Opt-in: [`Isa::detect`] never picks it. Timed on a Zen 5 (the
    /// README's *AVX-512 against AVX2*), every filter operation ran at
    /// 0.93–1.08× the speed of AVX2: too little to make it the default on
    /// CPUs whose 512-bit instructions may lower the clock. Select it with
    /// [`Kernels::for_isa`] or a filter's `set_isa` where the CPU has it.
    Avx512 = 3,
    /// NEON on aarch64.
    Neon = 4,
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(cpuid_avx2, "avx2");
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(cpuid_avx512, "avx512f", "avx512bw");

impl Isa {
    /// Every implementation, in order of preference from least to most
    /// specialised.
    pub const ALL: [Isa; 5] = [
        Isa::Scalar,
        Isa::Portable,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Neon,
    ];

    /// A short lower-case name (`"scalar"`, `"portable"`, `"avx2"`,
    /// `"avx512"`, `"neon"`).
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Whether this implementation is compiled for this target and the CPU
    /// running now supports it. On x86-64 this asks CPUID (through
    /// `cpufeatures`, which works without `std`).
    pub fn is_available(self) -> bool {
        match self {
            Isa::Scalar | Isa::Portable => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Isa::Avx2 => cpuid_avx2::get(),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Isa::Avx512 => cpuid_avx512::get(),
            // Miri has no CPUID but emulates the intrinsics: it runs a
            // backend when the build enables its features
            // (`-C target-feature=+avx512f,+avx512bw`), which is how CI tests
            // AVX-512 on machines without it.
            #[cfg(all(target_arch = "x86_64", miri))]
            Isa::Avx2 => cfg!(target_feature = "avx2"),
            #[cfg(all(target_arch = "x86_64", miri))]
            Isa::Avx512 => cfg!(all(target_feature = "avx512f", target_feature = "avx512bw")),
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            Isa::Neon => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The implementations available here, least specialised first.
    pub fn available() -> impl Iterator<Item = Isa> {
        Isa::ALL.into_iter().filter(|isa| isa.is_available())
    }

    /// The implementation filters use by default, detected on the first call
    /// and cached: the first available of AVX2, NEON, portable and scalar.
    ///
    /// [`Isa::Avx512`] is left out even where the CPU has it. Timed against
    /// AVX2 on a CPU with both (AMD Zen 5, every filter's hot operations at
    /// 16 KiB, 1 MiB and 64 MiB: the README's *AVX-512 against AVX2*), it
    /// is 0.93–1.08× as fast: up to 8 % faster on Stable and Spectral in
    /// cache, no faster on Classic, within 7 % either way out of cache; on the
    /// Intel server parts whose 512-bit instructions lower the clock it is
    /// unmeasured. A default that gains a few per cent on one CPU family and
    /// may lose on another is not taken. It stays selectable with
    /// [`Kernels::for_isa`] and the filters' `set_isa`.
    ///
    /// ```
    /// use streambloom_kernels::Isa;
    /// let isa = Isa::detect();
    /// assert!(isa.is_available());
    /// assert_ne!(isa, Isa::Avx512);
    /// ```
    pub fn detect() -> Isa {
        const UNSET: u8 = u8::MAX;
        static BEST: AtomicU8 = AtomicU8::new(UNSET);
        let cached = BEST.load(Ordering::Relaxed);
        if let Some(isa) = Isa::from_u8(cached) {
            return isa;
        }
        let best = Isa::preferred(Isa::is_available);
        BEST.store(best as u8, Ordering::Relaxed);
        best
    }

    /// What [`Isa::detect`] picks when `available` says which
    /// implementations the CPU runs: the first available of the measured
    /// ones, fastest first; scalar when none is.
    fn preferred(available: impl Fn(Isa) -> bool) -> Isa {
        [Isa::Avx2, Isa::Neon, Isa::Portable]
            .into_iter()
            .find(|&isa| available(isa))
            .unwrap_or(Isa::Scalar)
    }

    /// Parses a name given by [`Isa::name`].
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|isa| isa.name() == name)
    }

    fn from_u8(v: u8) -> Option<Isa> {
        Isa::ALL.get(usize::from(v)).copied()
    }
}

/// The minimum of a set of selected cells and how many of them hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MinCount {
    /// The smallest selected value.
    pub min: u32,
    /// How many selected cells hold `min` (0 only for an empty selection).
    pub count: u32,
}

impl MinCount {
    /// What an empty selection reduces to: no cell, so `min` is `u32::MAX`.
    pub const EMPTY: MinCount = MinCount {
        min: u32::MAX,
        count: 0,
    };
}

/// One implementation's kernels for cells of width `W`.
///
/// Obtain a table with [`Kernels::best`] or [`Kernels::for_isa`]; both check
/// that the CPU supports the implementation, which is what makes the safe
/// methods below sound.
///
/// ```
/// use streambloom_kernels::{Block, Isa, Kernels, Mask, W8};
/// let k = Kernels::<W8>::best();
/// let mut b = Block::ZERO;
/// let m = 0u64.with(3).with(10);
/// assert!(k.any_zero(&b, m));
/// k.assign(&mut b, m, 7);
/// assert_eq!(k.min_count(&b, m.with(11)).min, 0);
/// assert_eq!(k.min_count(&b, m).count, 2);
/// assert_eq!(Kernels::<W8>::for_isa(Isa::Scalar).unwrap().isa(), Isa::Scalar);
/// ```
pub struct Kernels<W: Width> {
    pub(crate) isa: Isa,
    pub(crate) any_zero: unsafe fn(&Block, W::Mask) -> bool,
    pub(crate) min_count: unsafe fn(&Block, W::Mask) -> MinCount,
    pub(crate) max_assign: unsafe fn(&mut Block, W::Mask, u32),
    pub(crate) assign: unsafe fn(&mut Block, W::Mask, u32),
    pub(crate) add_sat: unsafe fn(&mut Block, W::Mask, u32),
    pub(crate) sub_sat: unsafe fn(&mut Block, W::Mask, u32),
    pub(crate) dec_run: unsafe fn(&mut [Block], usize, usize),
    pub(crate) zero_count: unsafe fn(&[Block], usize, usize) -> usize,
    pub(crate) expire_run: unsafe fn(&mut [Block], usize, usize, TimerClock, u32, u32),
    pub(crate) oldest_count: unsafe fn(&Block, W::Mask, TimerClock) -> AgeCount,
}

impl<W: Width> core::fmt::Debug for Kernels<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernels")
            .field("isa", &self.isa)
            .field("bits", &W::BITS)
            .finish()
    }
}

impl<W: Width> Kernels<W> {
    /// Every slot from the scalar reference, labelled `isa`: the table of a
    /// width a backend does not accelerate.
    pub(crate) const fn scalar_as(isa: Isa) -> Kernels<W> {
        use crate::arch::all;
        Kernels {
            isa,
            any_zero: all::any_zero::<W>,
            min_count: all::min_count::<W>,
            max_assign: all::max_assign::<W>,
            assign: all::assign::<W>,
            add_sat: all::add_sat::<W>,
            sub_sat: all::sub_sat::<W>,
            dec_run: all::dec_run::<W>,
            zero_count: all::zero_count::<W>,
            expire_run: crate::arch::timers::expire_run_for::<W>(isa),
            oldest_count: all::oldest_count::<W>,
        }
    }

    /// The table of the implementation [`Isa::detect`] picks.
    pub fn best() -> &'static Kernels<W> {
        Self::for_isa(Isa::detect()).unwrap_or_else(Self::scalar)
    }

    /// The scalar reference table (always available).
    pub fn scalar() -> &'static Kernels<W> {
        W::scalar_table()
    }

    /// The table of `isa`, or `None` when it is not compiled for this target
    /// or the CPU lacks it.
    pub fn for_isa(isa: Isa) -> Option<&'static Kernels<W>> {
        if isa.is_available() {
            W::table(isa)
        } else {
            None
        }
    }

    /// Which implementation this table runs.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Whether any selected cell is zero ([`crate::arch::all::any_zero`]).
    #[inline(always)]
    pub fn any_zero(&self, block: &Block, mask: W::Mask) -> bool {
        // SAFETY: tables are only handed out after `Isa::is_available`
        // confirmed the CPU runs this implementation's instructions.
        unsafe { (self.any_zero)(block, mask) }
    }

    /// Minimum of the selected cells and its multiplicity
    /// ([`crate::arch::all::min_count`]).
    #[inline(always)]
    pub fn min_count(&self, block: &Block, mask: W::Mask) -> MinCount {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.min_count)(block, mask) }
    }

    /// Selected cells become `max(cell, v)` ([`crate::arch::all::max_assign`]).
    #[inline(always)]
    pub fn max_assign(&self, block: &mut Block, mask: W::Mask, v: u32) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.max_assign)(block, mask, v) }
    }

    /// Selected cells become `v` ([`crate::arch::all::assign`]).
    #[inline(always)]
    pub fn assign(&self, block: &mut Block, mask: W::Mask, v: u32) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.assign)(block, mask, v) }
    }

    /// Selected cells gain `r`, saturating ([`crate::arch::all::add_sat`]).
    #[inline(always)]
    pub fn add_sat(&self, block: &mut Block, mask: W::Mask, r: u32) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.add_sat)(block, mask, r) }
    }

    /// Selected cells lose `r`, stopping at 0 ([`crate::arch::all::sub_sat`]).
    #[inline(always)]
    pub fn sub_sat(&self, block: &mut Block, mask: W::Mask, r: u32) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.sub_sat)(block, mask, r) }
    }

    /// Saturating decrement of `len` cells from `start`, wrapping past the
    /// last cell to cell 0 ([`crate::arch::all::dec_run`]).
    #[inline(always)]
    pub fn dec_run(&self, blocks: &mut [Block], start: usize, len: usize) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.dec_run)(blocks, start, len) }
    }

    /// Zero cells in a run of cells ([`crate::arch::all::zero_count`]).
    #[inline(always)]
    pub fn zero_count(&self, blocks: &[Block], start: usize, len: usize) -> usize {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.zero_count)(blocks, start, len) }
    }

    /// Marks `expired` every cell of the run of `len` cells from `start`
    /// (wrapping) whose age under `clock` is at least `limit`
    /// ([`crate::arch::timers::expire_run`]).
    #[inline(always)]
    pub fn expire_run(
        &self,
        blocks: &mut [Block],
        start: usize,
        len: usize,
        clock: TimerClock,
        limit: u32,
        expired: u32,
    ) {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.expire_run)(blocks, start, len, clock, limit, expired) }
    }

    /// The oldest age among the selected cells and how many hold it
    /// ([`crate::arch::timers::oldest_count`]).
    #[inline(always)]
    pub fn oldest_count(&self, block: &Block, mask: W::Mask, clock: TimerClock) -> AgeCount {
        // SAFETY: as in `any_zero`: the CPU supports this table's ISA.
        unsafe { (self.oldest_count)(block, mask, clock) }
    }
}

/// Builds the table of every width from the generic kernel functions in
/// scope at the call site (`any_zero::<W>`, ...), as constants: the scalar
/// reference's tables. The SIMD backends' tables are stamped by
/// `arch::generic::stamp!`.
macro_rules! tables {
    ($isa:expr) => {
        $crate::dispatch::tables!(@one $isa, TABLE_W1, W1);
        $crate::dispatch::tables!(@one $isa, TABLE_W2, W2);
        $crate::dispatch::tables!(@one $isa, TABLE_W4, W4);
        $crate::dispatch::tables!(@one $isa, TABLE_W8, W8);
        $crate::dispatch::tables!(@one $isa, TABLE_W16, W16);
        $crate::dispatch::tables!(@one $isa, TABLE_W32, W32);
    };
    (@one $isa:expr, $name:ident, $w:ident) => {
        pub(crate) const $name: $crate::Kernels<$crate::$w> = $crate::Kernels {
            isa: $isa,
            any_zero: any_zero::<$crate::$w>,
            min_count: min_count::<$crate::$w>,
            max_assign: max_assign::<$crate::$w>,
            assign: assign::<$crate::$w>,
            add_sat: add_sat::<$crate::$w>,
            sub_sat: sub_sat::<$crate::$w>,
            dec_run: dec_run::<$crate::$w>,
            zero_count: zero_count::<$crate::$w>,
            expire_run: expire_run::<$crate::$w>,
            oldest_count: oldest_count::<$crate::$w>,
        };
    };
}
pub(crate) use tables;

/// `Some(&TABLE_Wn)` of the backend `isa` compiled for this target, else
/// `None`. Used by each [`Width`]'s `table`.
macro_rules! table_for {
    ($isa:expr, $table:ident) => {
        match $isa {
            $crate::Isa::Scalar => Some(&$crate::arch::all::$table),
            $crate::Isa::Portable => Some(&$crate::arch::portable::$table),
            #[cfg(target_arch = "x86_64")]
            $crate::Isa::Avx2 => Some(&$crate::arch::x86_64::avx2::$table),
            #[cfg(target_arch = "x86_64")]
            $crate::Isa::Avx512 => Some(&$crate::arch::x86_64::avx512::$table),
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            $crate::Isa::Neon => Some(&$crate::arch::aarch64::neon::$table),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    };
}
pub(crate) use table_for;

#[cfg(test)]
mod tests {
    use super::Isa;

    /// Whatever set of implementations a CPU has, `detect` never picks
    /// AVX-512 (unmeasured), picks an available one, and prefers AVX2 to
    /// portable to scalar.
    #[test]
    fn detect_prefers_measured_implementations() {
        for set in 0u32..1 << Isa::ALL.len() {
            let available = |isa: Isa| set & (1 << isa as u32) != 0;
            let pick = Isa::preferred(available);
            assert_ne!(pick, Isa::Avx512, "set {set:#07b}");
            assert!(available(pick) || pick == Isa::Scalar, "set {set:#07b}");
        }
        let all = Isa::preferred(|_| true);
        assert_eq!(all, Isa::Avx2);
        let x86 = |isa| matches!(isa, Isa::Scalar | Isa::Portable | Isa::Avx2 | Isa::Avx512);
        assert_eq!(Isa::preferred(x86), Isa::Avx2);
        let no_avx2 = |isa| matches!(isa, Isa::Scalar | Isa::Portable | Isa::Avx512);
        assert_eq!(Isa::preferred(no_avx2), Isa::Portable);
        let neon = |isa| matches!(isa, Isa::Scalar | Isa::Portable | Isa::Neon);
        assert_eq!(Isa::preferred(neon), Isa::Neon);
        assert_eq!(Isa::preferred(|isa| isa == Isa::Scalar), Isa::Scalar);
    }
}
