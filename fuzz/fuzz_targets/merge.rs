//! Merging filters built apart, one of them shipped through the byte
//! format first: each filter's merge keeps what its rule promises (the
//! classic filter's OR and Minimum Selection's sum are exactly the filter
//! of both streams; Stable, Timing and Minimal Increase lose nothing
//! either side held, nor does the age-partitioned filter's OR at equal
//! rings), and a merge with another seed or size is refused
//! and changes nothing.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use streambloom::format::Encode;
use streambloom::hash::PortableHasher as P;
use streambloom::spectral::{Blocked, MinimalIncrease, MinimumSelection, Spectral, SpectralParams};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::timing::{TimingBloom, TimingParams};
use streambloom::{Apbf, ApbfParams, Block, Classic, ClassicParams, Merge, W16, W4, W8};

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    /// Cells, in 64-byte blocks (1..=16).
    blocks: u8,
    k: u8,
    seed: u64,
    /// The second filter's seed differs (the merge must be refused).
    other_seed: bool,
    two: bool,
    /// Keys, each to the left filter or the right one.
    items: Vec<(u16, bool)>,
}

/// Ships `f` through the byte format.
fn shipped<F: Encode>(f: &F, read: impl Fn(&[u8]) -> streambloom::Result<F>) -> F {
    read(&f.to_bytes()).expect("a filter's own bytes load")
}

/// Merges `b` into `a`: refused and unchanged when `refuse`, else `Ok`.
fn merge_checked<F: Merge + Clone + PartialEq + core::fmt::Debug>(
    a: &mut F,
    b: &F,
    refuse: bool,
) -> bool {
    let before = a.clone();
    match a.merge(b) {
        Ok(()) => {
            assert!(!refuse, "a merge with another seed was accepted");
            true
        }
        Err(_) => {
            assert!(refuse, "a merge of compatible filters was refused");
            assert_eq!(*a, before, "a refused merge changed the filter");
            false
        }
    }
}

/// After a lockstep merge (each item `key` went to one side and `key +
/// 100 000` to the other): whatever either side held, the merge holds.
fn keeps_lockstep(
    items: &[(u16, bool)],
    held: impl Fn(&u32) -> bool,
    merged: impl Fn(&u32) -> bool,
) {
    for &(key, _) in items {
        for x in [u32::from(key), u32::from(key) + 100_000] {
            assert!(!held(&x) || merged(&x), "lost {x}");
        }
    }
}

fuzz_target!(|input: Input| {
    let blocks = usize::from(input.blocks % 16) + 1;
    let k = u32::from(input.k % 6) + 1;
    let layout = if input.two {
        Layout::TwoBlocks
    } else {
        Layout::OneBlock
    };
    let seed_b = if input.other_seed {
        input.seed ^ 1
    } else {
        input.seed
    };
    let refuse = input.other_seed;
    let (ha, hb) = (P::new(input.seed), P::new(seed_b));
    match input.kind % 6 {
        0 => {
            let p = ClassicParams::new(blocks * 512, k).with_layout(layout);
            let (mut a, mut b) = (
                Classic::with_hasher(p, ha).unwrap(),
                Classic::with_hasher(p, hb).unwrap(),
            );
            let mut both = Classic::with_hasher(p, ha).unwrap();
            for &(key, left) in &input.items {
                if left {
                    a.insert(&key)
                } else {
                    b.insert(&key)
                };
                both.insert(&key);
            }
            let b = shipped(&b, Classic::<Vec<Block>, P>::from_bytes);
            if merge_checked(&mut a, &b, refuse) {
                assert_eq!(a, both);
            }
        }
        1 => {
            let eviction = if input.two {
                Eviction::Sweep
            } else {
                Eviction::Random
            };
            let p = StableParams {
                cells: blocks * 128,
                bits_per_cell: 3,
                k: k.min(4),
                p: 3,
                eviction,
                layout,
            };
            let (mut a, mut b) = (
                StableBloom::<W4, _, _>::with_hasher(p, ha).unwrap(),
                StableBloom::<W4, _, _>::with_hasher(p, hb).unwrap(),
            );
            for &(key, left) in &input.items {
                if left {
                    a.observe(&key)
                } else {
                    b.observe(&key)
                };
            }
            let b = shipped(&b, StableBloom::<W4, Vec<Block>, P>::from_bytes);
            let sides = a.clone();
            if merge_checked(&mut a, &b, refuse) {
                for key in input.items.iter().map(|&(k, _)| k).chain(0..256) {
                    if sides.contains(&key) || b.contains(&key) {
                        assert!(a.contains(&key), "lost {key}");
                    }
                }
            }
        }
        2 => {
            let p = SpectralParams::<MinimumSelection>::new(blocks * 32, k).with_layout(layout);
            let mk = |h| {
                Spectral::<MinimumSelection, Blocked<W16>, _>::with_hasher(p.clone(), h).unwrap()
            };
            let (mut a, mut b, mut both) = (mk(ha), mk(hb), mk(ha));
            for &(key, left) in &input.items {
                if left {
                    a.insert(&key)
                } else {
                    b.insert(&key)
                };
                both.insert(&key);
            }
            let b = shipped(
                &b,
                Spectral::<MinimumSelection, Blocked<W16>, P>::from_bytes,
            );
            if merge_checked(&mut a, &b, refuse) {
                assert_eq!(a, both);
            }
        }
        3 => {
            let p = SpectralParams::<MinimalIncrease>::new(blocks * 64, k).with_layout(layout);
            let mk =
                |h| Spectral::<MinimalIncrease, Blocked<W8>, _>::with_hasher(p.clone(), h).unwrap();
            let (mut a, mut b) = (mk(ha), mk(hb));
            let mut truth: HashMap<u16, u32> = HashMap::new();
            for &(key, left) in &input.items {
                if left {
                    a.insert(&key)
                } else {
                    b.insert(&key)
                };
                *truth.entry(key).or_default() += 1;
            }
            let b = shipped(&b, Spectral::<MinimalIncrease, Blocked<W8>, P>::from_bytes);
            if merge_checked(&mut a, &b, refuse) {
                for (key, &n) in &truth {
                    assert!(a.estimate(key) >= n.min(255), "under-count of {key}");
                }
            }
        }
        4 => {
            // Lockstep, as for the timing filter: the rings agree.
            let p = ApbfParams::new(
                k,
                u32::from(input.blocks % 4) + 1,
                u64::from(input.k % 5) + 1,
            );
            let (mut a, mut b) = (
                Apbf::with_hasher(p, ha).unwrap(),
                Apbf::with_hasher(p, hb).unwrap(),
            );
            for &(key, left) in &input.items {
                let other = u32::from(key) + 100_000;
                let (x, y) = if left {
                    (&mut a, &mut b)
                } else {
                    (&mut b, &mut a)
                };
                x.insert(&key);
                y.insert(&other);
            }
            let b = shipped(&b, Apbf::<Vec<Block>, P>::from_bytes);
            let sides = a.clone();
            if merge_checked(&mut a, &b, refuse) {
                keeps_lockstep(
                    &input.items,
                    |x| sides.contains(x) || b.contains(x),
                    |x| a.contains(x),
                );
            }
        }
        _ => {
            let p = TimingParams::new(blocks * 64, k.min(4), 40, u64::from(input.k % 3) + 1, 1, 8);
            let (mut a, mut b) = (
                TimingBloom::<W8, _, _>::with_hasher(p, ha).unwrap(),
                TimingBloom::<W8, _, _>::with_hasher(p, hb).unwrap(),
            );
            // Lockstep: each side inserts once per item, so the clocks agree.
            for &(key, left) in &input.items {
                let other = u32::from(key) + 100_000;
                if left {
                    a.insert(&key);
                    b.insert(&other)
                } else {
                    b.insert(&key);
                    a.insert(&other)
                };
            }
            let b = shipped(&b, TimingBloom::<W8, Vec<Block>, P>::from_bytes);
            let sides = a.clone();
            if merge_checked(&mut a, &b, refuse) {
                keeps_lockstep(
                    &input.items,
                    |x| sides.contains(x) || b.contains(x),
                    |x| a.contains(x),
                );
            }
        }
    }
});
