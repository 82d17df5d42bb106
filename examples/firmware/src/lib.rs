//! The firmware's work, apart from its entry point so that it also runs as a
//! host test: `cargo test --lib --target <host>` in this folder runs it
//! against `streambloom` built exactly as the firmware builds it (no
//! `alloc`, so with the allocation-free default hasher).
//!
//! # Filters in `static` memory, without `unsafe`
//!
//! Both filters live in `static` storage: no heap, no global allocator, no
//! `unsafe`, and next to nothing on the stack. [`take_filters`] does it
//! the way embedded Rust does it, with the [`static_cell`] crate (the
//! pattern of the embassy and RTIC ecosystems):
//!
//! - each filter's blocks are a `static`
//!   [`ConstStaticCell`]`<[Block; N]>` built by a `const` expression, so
//!   they sit zeroed in `.bss` and are never copied through the stack;
//!   [`ConstStaticCell::try_take`] hands out their `&'static mut` once;
//! - each filter (a few words: the parameters, the hasher's keys, the
//!   PRNG, a pointer to its blocks) is moved into a `static`
//!   [`StaticCell`], whose [`try_init`](StaticCell::try_init) gives a
//!   `&'static mut` to it, once: a filter that can be handed to a task or
//!   kept for the life of the device.
//!
//! Why this and not the alternatives. `static mut` needs `unsafe` at every
//! use. A `const` constructor in `streambloom` would not remove the need
//! for a cell (a `static` is mutated only through one), and a filter's
//! constructor is not `const`-evaluable anyway: it validates its
//! parameters through traits (the cell width, the Spectral policy) and
//! seeds its eviction PRNG by hashing with a generic `BuildHasher`, and
//! trait methods cannot run in a `const fn` on stable Rust.
//! `critical_section::Mutex<RefCell<_>>` is the choice when an interrupt
//! handler and the main loop share a filter, at the cost of a critical
//! section (interrupts masked) around every access; a filter owned by one
//! context, as here, needs only the one-time hand-out of `StaticCell`
//! (an atomic flag, checked once at boot).
//!
//! # Parameters fixed at compile time
//!
//! [`STABLE`] and [`SPECTRAL`] are `const` struct literals, checked on the
//! host by this crate's test (`blocks()` equals the buffers' sizes) and on
//! the device by the constructors (an [`Error::Length`](streambloom::Error)
//! if they disagree). The firmware never calls a planner
//! (`StableParams::plan`, `predicted_fpr`, …), so none of their
//! double-precision arithmetic (software floating point on a Cortex-M4F,
//! whose FPU is single-precision) is linked: CI checks that the binary
//! holds no `__aeabi_d*`, `libm` or `streambloom::analysis` symbol.
//!
//! # Seeds
//!
//! With hash seeds an attacker knows, keys can be crafted that all land in
//! one block of a filter (HashDoS: that block saturates, its false
//! positives go to 1; see `streambloom::hash`). A device whose keys come
//! from outside takes its seeds from its hardware random number generator
//! at boot and passes them to [`take_filters`]; this example, whose board
//! (QEMU's `mps2-an386`) has none, passes fixed ones.
#![no_std]
#![forbid(unsafe_code)]

use core::hint::black_box;

use static_cell::{ConstStaticCell, StaticCell};
use streambloom::hash::{seeded_hasher, DefaultHasher};
use streambloom::spectral::{Blocked, MinimalIncrease, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{Block, W16, W4};

/// The Stable filter's memory: 16 blocks of 128 4-bit cells (1 KiB).
pub const STABLE_BLOCKS: usize = 16;
/// The Spectral filter's memory: 16 blocks of 32 16-bit counters (1 KiB).
pub const SPECTRAL_BLOCKS: usize = 16;

/// The Stable filter's parameters. Sweep eviction never forgets an item
/// seen at most `(Max - 1) * m / P + 1 = 6 * 2048 / 8 + 1 = 1537` items
/// back.
pub const STABLE: StableParams = StableParams {
    cells: STABLE_BLOCKS * 128,
    bits_per_cell: 3,
    k: 3,
    p: 8,
    eviction: Eviction::Sweep,
    layout: Layout::OneBlock,
};

/// The Spectral filter's parameters: 512 counters, 4 an item, in two
/// blocks an item.
pub const SPECTRAL: SpectralParams<MinimalIncrease> = SpectralParams {
    counters: SPECTRAL_BLOCKS * 32,
    k: 4,
    policy: MinimalIncrease,
    layout: Layout::TwoBlocks,
};

/// The deduplicating filter, over its `static` blocks.
pub type Seen = StableBloom<W4, &'static mut [Block], DefaultHasher>;
/// The counting filter, over its `static` blocks.
pub type Counts = Spectral<MinimalIncrease, Blocked<W16, &'static mut [Block]>, DefaultHasher>;

/// The firmware's two filters, each in `static` memory.
pub struct Filters {
    /// Deduplicates the stream.
    pub seen: &'static mut Seen,
    /// Counts it.
    pub counts: &'static mut Counts,
}

/// What went wrong in [`take_filters`] or [`run`].
///
/// ```
/// use streambloom_firmware::{run, take_filters, Fault};
/// match take_filters([1, 2]).and_then(|mut f| run(&mut f)) {
///     Ok(()) => {}
///     Err(Fault::WrongAnswer) => unreachable!("a filter broke its guarantee"),
///     Err(f) => unreachable!("bad setup: {f:?}"),
/// }
/// ```
#[derive(Debug, PartialEq)]
pub enum Fault {
    /// A constructor rejected the parameters or the buffer.
    Filter(streambloom::Error),
    /// [`take_filters`] was called before: the `static` filters are
    /// handed out once.
    AlreadyTaken,
    /// A filter answered wrongly: a false negative or an undercount.
    WrongAnswer,
}

impl From<streambloom::Error> for Fault {
    fn from(e: streambloom::Error) -> Self {
        Fault::Filter(e)
    }
}

/// Builds the two filters in their `static` memory, hashing with seeds
/// `seeds[0]` (the Stable filter) and `seeds[1]` (the Spectral one), and
/// hands them out: once; a second call is [`Fault::AlreadyTaken`].
///
/// ```
/// use streambloom_firmware::{take_filters, Fault};
/// let f = take_filters([1, 2]).unwrap();
/// assert!(!f.seen.contains("boot"));
/// assert_eq!(f.counts.total(), 0);
/// assert_eq!(take_filters([1, 2]).err(), Some(Fault::AlreadyTaken));
/// ```
pub fn take_filters(seeds: [u64; 2]) -> Result<Filters, Fault> {
    static STABLE_CELLS: ConstStaticCell<[Block; STABLE_BLOCKS]> =
        ConstStaticCell::new([Block::ZERO; STABLE_BLOCKS]);
    static SPECTRAL_COUNTERS: ConstStaticCell<[Block; SPECTRAL_BLOCKS]> =
        ConstStaticCell::new([Block::ZERO; SPECTRAL_BLOCKS]);
    static SEEN: StaticCell<Seen> = StaticCell::new();
    static COUNTS: StaticCell<Counts> = StaticCell::new();

    let cells = STABLE_CELLS.try_take().ok_or(Fault::AlreadyTaken)?;
    let counters = SPECTRAL_COUNTERS.try_take().ok_or(Fault::AlreadyTaken)?;
    let seen = Seen::with_storage(STABLE, &mut cells[..], seeded_hasher(seeds[0]))?;
    let counts = Counts::with_storage(SPECTRAL, &mut counters[..], seeded_hasher(seeds[1]))?;
    Ok(Filters {
        seen: SEEN.try_init(seen).ok_or(Fault::AlreadyTaken)?,
        counts: COUNTS.try_init(counts).ok_or(Fault::AlreadyTaken)?,
    })
}

/// Deduplicates a short stream with the Stable filter and counts it with
/// the Spectral filter, checking the answers the filters guarantee.
///
/// ```
/// use streambloom_firmware::{run, take_filters};
/// let mut filters = take_filters([1, 2]).unwrap();
/// assert_eq!(run(&mut filters), Ok(()));
/// ```
pub fn run(filters: &mut Filters) -> Result<(), Fault> {
    let Filters { seen, counts } = filters;
    // A stream of 1 950 items: key i, then key i - 50 again (from i = 50
    // on). A repeat comes 101 items after its first occurrence, inside the
    // sweep window, so the filter must report every one. Each item's key
    // modulo 64 is also counted, beside an exact count to hold the
    // estimates against.
    let mut truth = [0u32; 64];
    for i in 0u32..1000 {
        seen.observe(&black_box(i));
        counts.insert(&(i % 64));
        truth[(i % 64) as usize] += 1;
        if let Some(repeat) = i.checked_sub(50) {
            if !seen.observe(&black_box(repeat)) {
                return Err(Fault::WrongAnswer);
            }
            counts.insert(&(repeat % 64));
            truth[(repeat % 64) as usize] += 1;
        }
    }
    seen.insert("boot");
    if !seen.contains("boot") {
        return Err(Fault::WrongAnswer);
    }
    // Minimal Increase never undercounts.
    for (r, &n) in (0u32..).zip(truth.iter()) {
        if counts.estimate(&r) < n {
            return Err(Fault::WrongAnswer);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `const` parameters need exactly the `static` buffers' blocks.
    #[test]
    fn const_params_fit_the_static_buffers() {
        assert_eq!(STABLE.blocks::<W4>(), Ok(STABLE_BLOCKS));
        assert_eq!(SPECTRAL.blocks::<W16>(), Ok(SPECTRAL_BLOCKS));
    }

    /// The firmware's checks pass over the `static` filters, which are
    /// handed out once; the default hasher is the allocation-free one (the
    /// build the firmware links). (The only test of this binary to take
    /// the filters.)
    #[test]
    fn firmware_run_passes_without_alloc() {
        let mut filters = take_filters([1, 2]).unwrap();
        assert_eq!(run(&mut filters), Ok(()));
        assert!(filters.seen.contains("boot"));
        assert_eq!(filters.counts.total(), 1950);
        assert_eq!(take_filters([1, 2]).err(), Some(Fault::AlreadyTaken));
        extern crate std;
        use std::format;
        let h = format!("{:?}", seeded_hasher(0));
        assert!(h.contains("foldhash"), "{h}");
    }
}
