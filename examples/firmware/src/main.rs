//! A firmware image with no heap and no global allocator, for the
//! Cortex-M4F target `thumbv7em-none-eabihf`: it runs
//! [`streambloom_firmware::run`] over a `StableBloom` and a `Spectral`
//! filter that live in `static` memory ([`take_filters`]: `static_cell`,
//! no `unsafe`).
//!
//! It exists to be linked: CI builds it (`cargo build --release` in this
//! folder), which fails if anything in `streambloom`'s `no_std` build
//! without `alloc` asks for an allocator. If a check in `run` fails, the
//! core parks in `fault`, a loop a debugger can break on.
//!
//! The hash seeds are fixed here (the emulated board has no random number
//! generator); a device that hashes keys from outside reads them from its
//! hardware RNG at boot, so that no one can craft keys that flood one block.
#![no_std]
#![no_main]

use core::hint::{black_box, spin_loop};
use core::panic::PanicInfo;

use cortex_m_rt::entry;
use streambloom_firmware::{run, take_filters, Fault};

#[entry]
fn main() -> ! {
    /// Fixed for this example; from a hardware RNG on a real device.
    const SEEDS: [u64; 2] = [1, 2];
    match take_filters(SEEDS).and_then(|mut filters| run(&mut filters)) {
        Ok(()) => loop {
            spin_loop();
        },
        Err(f) => fault(f),
    }
}

/// Parks the core with the fault in hand.
fn fault(f: Fault) -> ! {
    black_box(&f);
    loop {
        spin_loop();
    }
}

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    black_box(info);
    loop {
        spin_loop();
    }
}
