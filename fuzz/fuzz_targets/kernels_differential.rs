//! Every available backend agrees with the scalar kernels on one operation
//! (the timer kernels included).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use streambloom_kernels::{Block, Isa, Kernels, Mask, TimerClock, Width, W1, W16, W2, W32, W4, W8};

#[derive(Arbitrary, Debug)]
struct Input {
    width: u8,
    op: u8,
    mask: [u64; 8],
    value: u32,
    start: u16,
    len: u16,
    first: [u8; 64],
    more: Vec<[u8; 64]>,
}

/// The chosen operation on a copy of the 1..=5 blocks: (result, blocks after).
fn run<W: Width>(k: &Kernels<W>, i: &Input) -> (u64, Vec<Block>) {
    let first = core::iter::once(&i.first);
    let mut b: Vec<Block> = first
        .chain(i.more.iter().take(4))
        .map(|&x| Block(x))
        .collect();
    let (m, v) = (W::Mask::from_words(&i.mask), i.value);
    // Runs start and end anywhere in the blocks or up to a block past them.
    let start = usize::from(i.start) % (6 * W::CELLS);
    let len = usize::from(i.len) % (6 * W::CELLS);
    let update = [
        Kernels::max_assign,
        Kernels::assign,
        Kernels::add_sat,
        Kernels::sub_sat,
    ];
    // A timer clock within the timer kernels' contract (`now <= top <
    // W::MAX`), from the same bytes.
    let top = i.value % W::MAX;
    let clock = TimerClock {
        now: u32::from(i.len) % (top + 1),
        top,
        fresh_block: i.op & 0x80 != 0,
    };
    let out = match i.op % 10 {
        0 => k.any_zero(&b[0], m).into(),
        1 => {
            let c = k.min_count(&b[0], m);
            (u64::from(c.min) << 32) | u64::from(c.count)
        }
        2 => k.zero_count(&b, start, len) as u64,
        3 => {
            k.dec_run(&mut b, start, len);
            0
        }
        8 => {
            let limit = u32::from(i.start) % (top + 2);
            k.expire_run(&mut b, start, len, clock, limit, W::MAX);
            0
        }
        9 => {
            let c = k.oldest_count(&b[0], m, clock);
            (u64::from(c.oldest) << 32) | u64::from(c.count)
        }
        op => {
            update[usize::from(op) - 4](k, &mut b[0], m, v);
            0
        }
    };
    (out, b)
}

fn check<W: Width>(i: &Input) {
    let want = run(Kernels::<W>::scalar(), i);
    for isa in Isa::available() {
        let k = Kernels::<W>::for_isa(isa).expect("an available ISA has a table");
        assert_eq!(run(k, i), want, "{isa:?} disagrees with scalar on {i:?}");
    }
}

fuzz_target!(|i: Input| match i.width % 6 {
    0 => check::<W1>(&i),
    1 => check::<W2>(&i),
    2 => check::<W4>(&i),
    3 => check::<W8>(&i),
    4 => check::<W16>(&i),
    _ => check::<W32>(&i),
});
