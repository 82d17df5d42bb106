//! The timer kernels (`expire_run`, `oldest_count`): the scalar table
//! against a naive model over decoded cells, and every available backend
//! against the scalar table byte for byte, over every width, run lengths,
//! offsets and positions of `T_+` (at 0, in the middle, at `T_Ω`; fresh
//! block or not), with guard blocks around the input that must come back
//! untouched; and each engine's `Ops` against its own table.

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed, TestCaseError};
use streambloom_kernels::arch::timers::{AgeCount, NEVER};
use streambloom_kernels::{
    cell, set_cell, Backend, Block, Body, Engine, Isa, Kernels, Mask, Ops, TimerClock, Width, W1,
    W16, W2, W32, W4, W8,
};

/// Whether to check the scalar table against the model; every backend is
/// checked against the scalar table, so against the model too. Under Miri,
/// which looks for undefined behaviour in the backends, decoding every cell
/// for the model checks no unsafe code: skipped, as in `differential.rs`.
const MODEL: bool = !cfg!(miri);

/// The most blocks an `expire` case runs over: four, so that runs wrap and
/// cross several block edges; two under Miri (a W1 block is 512 cells,
/// each generated and interpreted), where the wrap and the edges remain.
const EXPIRE_BLOCKS: usize = if cfg!(miri) { 2 } else { 4 };

/// A block no kernel is given to write: fills the padding around inputs.
const GUARD: Block = Block([0xa5; 64]);

fn config() -> ProptestConfig {
    let base = ProptestConfig {
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x7133_E125),
        ..ProptestConfig::default()
    };
    if cfg!(miri) {
        ProptestConfig {
            cases: 8,
            rng_algorithm: RngAlgorithm::XorShift,
            ..base
        }
    } else {
        ProptestConfig { cases: 512, ..base }
    }
}

/// The model's age: `(T_+ - v) mod (T_Ω + 1)` in wide arithmetic, `NEVER`
/// above `T_Ω` or at `T_+` in a fresh block.
fn model_age(c: TimerClock, v: u32) -> u32 {
    if v > c.top || (c.fresh_block && v == c.now) {
        return NEVER;
    }
    let period = u64::from(c.top) + 1;
    ((u64::from(c.now) + period - u64::from(v)) % period) as u32
}

fn decode<W: Width>(blocks: &[Block]) -> Vec<u32> {
    blocks
        .iter()
        .flat_map(|b| (0..W::CELLS).map(move |i| cell::<W>(b, i)))
        .collect()
}

/// The available tables other than scalar.
fn tables<W: Width>() -> impl Iterator<Item = &'static Kernels<W>> {
    Isa::available()
        .filter(|&isa| isa != Isa::Scalar)
        .map(|isa| Kernels::<W>::for_isa(isa).expect("available ISA has a table"))
}

fn padded(blocks: &[Block], f: impl FnOnce(&mut [Block])) -> Result<Vec<Block>, TestCaseError> {
    let mut buf = [&[GUARD][..], blocks, &[GUARD]].concat();
    let n = blocks.len();
    f(&mut buf[1..=n]);
    prop_assert_eq!(buf[0], GUARD, "block before the input was written");
    prop_assert_eq!(buf[n + 1], GUARD, "block after the input was written");
    Ok(buf[1..=n].to_vec())
}

fn check_expire<W: Width>(
    blocks: &[Block],
    start: usize,
    len: usize,
    clock: TimerClock,
    limit: u32,
    expired: u32,
) -> Result<(), TestCaseError> {
    let scalar = Kernels::<W>::scalar();
    let want = padded(blocks, |b| {
        scalar.expire_run(b, start, len, clock, limit, expired)
    })?;
    if MODEL {
        let mut c = decode::<W>(blocks);
        let total = c.len();
        for i in (0..len.min(total)).map(|i| (start + i) % total) {
            if model_age(clock, c[i]) >= limit {
                c[i] = expired.min(W::MAX);
            }
        }
        prop_assert_eq!(decode::<W>(&want), c, "scalar expire_run vs model");
    }
    for k in tables::<W>() {
        let got = padded(blocks, |b| {
            k.expire_run(b, start, len, clock, limit, expired)
        })?;
        prop_assert_eq!(
            &got,
            &want,
            "{:?} expire_run({}, {}, {:?}, {}, {})",
            k.isa(),
            start,
            len,
            clock,
            limit,
            expired
        );
    }
    Ok(())
}

fn check_oldest<W: Width>(
    block: &Block,
    mask: W::Mask,
    clock: TimerClock,
) -> Result<(), TestCaseError> {
    let want = Kernels::<W>::scalar().oldest_count(block, mask, clock);
    if MODEL {
        let ages: Vec<u32> = (0..W::CELLS)
            .filter(|&i| mask.contains(i))
            .map(|i| model_age(clock, cell::<W>(block, i)))
            .collect();
        let model = ages
            .iter()
            .max()
            .map_or(AgeCount::EMPTY, |&oldest| AgeCount {
                oldest,
                count: ages.iter().filter(|&&a| a == oldest).count() as u32,
            });
        prop_assert_eq!(want, model, "scalar oldest_count vs model");
    }
    for k in tables::<W>() {
        prop_assert_eq!(k.oldest_count(block, mask, clock), want, "{:?}", k.isa());
    }
    Ok(())
}

/// Clocks within the kernels' contract: `now <= top < W::MAX`, with `top`
/// and `now` often at their edges.
fn clock<W: Width>() -> impl Strategy<Value = TimerClock> {
    let tops = prop_oneof![
        Just(0u32),
        Just(1),
        Just(W::MAX - 1),
        Just((W::MAX - 1) / 2),
        0..W::MAX,
    ]
    .prop_map(|t| t.min(W::MAX - 1));
    (tops, any::<u32>(), 0..4u8, any::<bool>()).prop_map(|(top, r, edge, fresh_block)| {
        let now = match edge {
            0 => 0,
            1 => top,
            _ => r % (top + 1),
        };
        TimerClock {
            now,
            top,
            fresh_block,
        }
    })
}

/// Blocks whose cells sit near the clock's landmarks: 0, `T_+ ± 1`,
/// `T_Ω`, `T_Ω + 1`, `W::MAX`, or anything.
fn blocks<W: Width>(clock: TimerClock, n: usize) -> impl Strategy<Value = Vec<Block>> {
    let marks = [
        0,
        clock.now,
        clock.now.saturating_sub(1),
        clock.now.saturating_add(1).min(W::MAX),
        clock.top,
        clock.top.saturating_add(1).min(W::MAX),
        W::MAX,
    ];
    prop::collection::vec(
        prop::collection::vec((0..8usize, any::<u32>()), W::CELLS),
        1..=n,
    )
    .prop_map(move |bs| {
        bs.into_iter()
            .map(|cells| {
                let mut b = Block::ZERO;
                for (i, (pick, r)) in cells.into_iter().enumerate() {
                    let v = marks.get(pick).copied().unwrap_or(r & W::MAX);
                    set_cell::<W>(&mut b, i, v);
                }
                b
            })
            .collect()
    })
}

fn limit(clock: TimerClock) -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(clock.top),
        Just(clock.top.saturating_add(1)),
        Just(u32::MAX),
        0..=clock.top.saturating_add(1),
    ]
}

fn mask<W: Width>() -> impl Strategy<Value = W::Mask> {
    let none = W::Mask::default();
    prop_oneof![
        Just(none),
        (0..W::CELLS).prop_map(move |i| none.with(i)),
        Just(W::Mask::from_words(&[u64::MAX; 8])),
        any::<[u64; 8]>().prop_map(|w| W::Mask::from_words(&w)),
        prop::collection::vec(0..W::CELLS, 1..=30)
            .prop_map(move |ix| ix.into_iter().fold(none, Mask::with)),
    ]
}

/// Runs both kernels through an engine's `Ops`.
struct ViaOps<'a, W: Width> {
    blocks: &'a mut [Block],
    mask: W::Mask,
    clock: TimerClock,
}

impl<W: Width> Body for ViaOps<'_, W> {
    type Output = AgeCount;
    fn run<B: Backend>(self, backend: B) -> AgeCount {
        let ops = Ops::<W, B>::new(backend);
        let found = ops.oldest_count(&self.blocks[0], self.mask, self.clock);
        ops.expire_run(self.blocks, 3, W::CELLS + 5, self.clock, 1, W::MAX);
        found
    }
}

macro_rules! timers {
    ($name:ident, $w:ty) => {
        mod $name {
            use super::*;
            type W = $w;

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn expire(
                    (clock, blocks, limit) in clock::<W>().prop_flat_map(|c| {
                        (Just(c), blocks::<W>(c, EXPIRE_BLOCKS), limit(c))
                    }),
                    start in 0..=3 * W::CELLS,
                    len in 0..=4 * W::CELLS,
                    expired in prop_oneof![Just(W::MAX), 0..=W::MAX, any::<u32>()],
                ) {
                    check_expire::<W>(&blocks, start, len, clock, limit, expired)?;
                }

                #[test]
                fn oldest(
                    (clock, blocks) in clock::<W>().prop_flat_map(|c| (Just(c), blocks::<W>(c, 1))),
                    mask in mask::<W>(),
                ) {
                    check_oldest::<W>(&blocks[0], mask, clock)?;
                }
            }

            /// Every start and length over three blocks, `T_+` at 0, in
            /// the middle and at `T_Ω`, in a fresh block and not, with
            /// the cells cycling through every value near the clock: the
            /// runs' first and last partial vectors at every phase, and
            /// the wrap past the last cell.
            #[test]
            #[cfg_attr(miri, ignore = "exhaustive")]
            fn every_run_and_clock() {
                let c = W::CELLS;
                let top = (W::MAX - 1).min(40);
                for now in [0, top / 2, top] {
                    for fresh_block in [false, true] {
                        let clock = TimerClock {
                            now,
                            top,
                            fresh_block,
                        };
                        let mut blocks = [Block::ZERO; 3];
                        for i in 0..3 * c {
                            let v = (i as u32 * 7 + now) % (top + 3);
                            set_cell::<W>(&mut blocks[i / c], i % c, v.min(W::MAX));
                        }
                        let step = if c > 64 { 7 } else { 1 };
                        for start in (0..=2 * c).step_by(step) {
                            for len in (0..=3 * c).step_by(step) {
                                check_expire::<W>(&blocks, start, len, clock, top / 3 + 1, W::MAX)
                                    .unwrap();
                            }
                        }
                        let all = <W as Width>::Mask::from_words(&[u64::MAX; 8]);
                        check_oldest::<W>(&blocks[0], all, clock).unwrap();
                    }
                }
            }

            /// Each engine runs its own table's timer kernels.
            #[test]
            fn engines_run_their_tables() {
                let clock = TimerClock {
                    now: 1,
                    top: 2.min(W::MAX - 1),
                    fresh_block: false,
                };
                let mut start = [Block::ZERO; 2];
                for i in 0..2 * W::CELLS {
                    set_cell::<W>(&mut start[i / W::CELLS], i % W::CELLS, i as u32 % 4);
                }
                let mask = <W as Width>::Mask::default().with(0).with(2).with(3);
                for isa in Isa::available() {
                    let table = Kernels::<W>::for_isa(isa).unwrap();
                    let mut a = start;
                    let got = Engine::new(isa).unwrap().run(ViaOps::<W> {
                        blocks: &mut a,
                        mask,
                        clock,
                    });
                    let mut b = start;
                    assert_eq!(got, table.oldest_count(&b[0], mask, clock), "{isa:?}");
                    table.expire_run(&mut b, 3, W::CELLS + 5, clock, 1, W::MAX);
                    assert_eq!(a, b, "{isa:?}");
                    assert_ne!(a, start, "{isa:?}: the run expired nothing");
                }
            }
        }
    };
}

timers!(w1, W1);
timers!(w2, W2);
timers!(w4, W4);
timers!(w8, W8);
timers!(w16, W16);
timers!(w32, W32);
