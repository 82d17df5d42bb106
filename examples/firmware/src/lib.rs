//! The firmware's work, apart from its entry point so that it also runs as a
//! host test: `cargo test --lib --target <host>` in this folder runs it
//! against `streambloom` built exactly as the firmware builds it (no
//! `alloc`, so with the allocation-free default hasher).
//!
//! Two filters live in fixed buffers on the caller's stack: no heap, no
//! global allocator, no `unsafe`.
#![no_std]

use core::hint::black_box;

use streambloom::hash::seeded_hasher;
use streambloom::spectral::{Blocked, MinimalIncrease, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{Block, W16, W4};

/// The Stable filter's memory: 16 blocks of 128 4-bit cells (1 KiB).
const STABLE_BLOCKS: usize = 16;
/// Room for the Spectral filter's counters: 16 blocks of 32 16-bit counters.
const SPECTRAL_BLOCKS: usize = 16;

/// What went wrong in [`run`].
///
/// ```
/// use streambloom_firmware::{run, Fault};
/// match run() {
///     Ok(()) => {}
///     Err(Fault::WrongAnswer) => unreachable!("a filter broke its guarantee"),
///     Err(f) => unreachable!("bad setup: {f:?}"),
/// }
/// ```
#[derive(Debug, PartialEq)]
pub enum Fault {
    /// A constructor rejected the parameters or the buffer.
    Filter(streambloom::Error),
    /// The Spectral filter needs more blocks than its buffer has.
    BufferTooSmall,
    /// A filter answered wrongly: a false negative or an undercount.
    WrongAnswer,
}

impl From<streambloom::Error> for Fault {
    fn from(e: streambloom::Error) -> Self {
        Fault::Filter(e)
    }
}

/// Deduplicates a short stream with a Stable filter and counts it with a
/// Spectral filter, checking the answers the filters guarantee.
///
/// ```
/// assert_eq!(streambloom_firmware::run(), Ok(()));
/// ```
pub fn run() -> Result<(), Fault> {
    // Sweep eviction never forgets an item seen at most
    // (Max - 1) * m / P + 1 = 6 * 2048 / 8 + 1 = 1537 items back.
    let params = StableParams {
        cells: STABLE_BLOCKS * 128,
        bits_per_cell: 3,
        k: 3,
        p: 8,
        eviction: Eviction::Sweep,
        layout: Layout::OneBlock,
    };
    let mut stable_buf = [Block::ZERO; STABLE_BLOCKS];
    let mut seen =
        StableBloom::<W4, _, _>::with_storage(params, &mut stable_buf[..], seeded_hasher(1))?;

    type Counts<'a> = Spectral<MinimalIncrease, Blocked<W16, &'a mut [Block]>>;
    let counters = SPECTRAL_BLOCKS * 32;
    let spectral = SpectralParams::<MinimalIncrease>::new(counters, 4);
    let needed = spectral.blocks::<W16>()?;
    let mut spectral_buf = [Block::ZERO; SPECTRAL_BLOCKS];
    let storage = spectral_buf
        .get_mut(..needed)
        .ok_or(Fault::BufferTooSmall)?;
    let mut counts = Counts::with_storage(spectral, storage, seeded_hasher(2))?;

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
    black_box(&seen);
    black_box(&counts);
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The firmware's checks pass, and the default hasher is the
    /// allocation-free one (the build the firmware links).
    #[test]
    fn firmware_run_passes_without_alloc() {
        assert_eq!(super::run(), Ok(()));
        extern crate std;
        use std::format;
        let h = format!("{:?}", streambloom::hash::seeded_hasher(0));
        assert!(h.contains("foldhash"), "{h}");
    }
}
