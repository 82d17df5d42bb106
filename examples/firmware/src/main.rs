//! A firmware image with no heap and no global allocator, for the
//! Cortex-M4F target `thumbv7em-none-eabihf`: it runs
//! [`streambloom_firmware::run`], whose `StableBloom` and `Spectral` filters
//! live in fixed buffers on the stack.
//!
//! It exists to be linked: CI builds it (`cargo build --release` in this
//! folder), which fails if anything in `streambloom`'s `no_std` build
//! without `alloc` asks for an allocator. If a check in `run` fails, the
//! core parks in `fault`, a loop a debugger can break on.
#![no_std]
#![no_main]

use core::hint::{black_box, spin_loop};
use core::panic::PanicInfo;

use cortex_m_rt::entry;
use streambloom_firmware::{run, Fault};

#[entry]
fn main() -> ! {
    match run() {
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
