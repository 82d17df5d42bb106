//! One operation stream, one filter per available ISA (forced with
//! `set_isa`): every answer and every final cell must agree.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use streambloom::hash::seeded_hasher;
use streambloom::importance::{self, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::reservoir::{ReservoirBloom, ReservoirParams, Reset};
use streambloom::spectral::{
    Blocked, Counter, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Spectral,
    SpectralParams,
};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::timing::{Evidence, TimingBloom, TimingLayout, TimingParams};
use streambloom::{Block, Classic, ClassicParams, Isa, Width, W1, W16, W2, W32, W4, W8};

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    /// Cells or counters, modulo 4096 (small filters collide more).
    cells: u16,
    bits: u8,
    k: u8,
    p: u16,
    /// The Stable filter's eviction ([`stable_eviction`]); its low bit
    /// also sets the RSBF's resets during the fill.
    eviction: u8,
    /// Two blocks an item (`Layout::TwoBlocks`) for Classic and Stable.
    two: bool,
    marker: u16,
    trapping: bool,
    seed: u64,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(u16, u32),
    Query(u16, u32),
    Remove(u16, u32),
    Clear,
}

/// Runs `f` once per available ISA; all results must equal the scalar one.
fn agree<T: PartialEq + std::fmt::Debug>(i: &Input, f: impl Fn(Isa) -> Option<T>) {
    let want = f(Isa::Scalar);
    for isa in Isa::available() {
        assert_eq!(f(isa), want, "{isa:?} disagrees with scalar on {i:?}");
    }
}

/// [`Layout::TwoBlocks`] if `two`.
fn layout(two: bool) -> Layout {
    if two {
        Layout::TwoBlocks
    } else {
        Layout::OneBlock
    }
}

fn classic(i: &Input, isa: Isa) -> Option<(Vec<bool>, Vec<Block>)> {
    let bits = usize::from(i.cells % 4096);
    let mut buf = vec![Block::ZERO; bits.div_ceil(512)];
    let mut f = Classic::with_storage(
        ClassicParams::new(bits, u32::from(i.k)).with_layout(layout(i.two)),
        &mut buf[..],
        seeded_hasher(i.seed),
    )
    .ok()?;
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, _) => out.push(f.insert(&x)),
            Op::Query(x, _) | Op::Remove(x, _) => out.push(f.contains(&x)),
            Op::Clear => f.clear(),
        }
    }
    drop(f);
    Some((out, buf))
}

fn stable<W: Width>(i: &Input, isa: Isa) -> Option<(Vec<bool>, u64, Vec<Block>)> {
    let params = StableParams {
        cells: usize::from(i.cells % 4096),
        bits_per_cell: u32::from(i.bits % 34),
        k: u32::from(i.k),
        p: usize::from(i.p),
        eviction: stable_eviction(i.eviction),
        layout: layout(i.two),
    };
    let mut buf = vec![Block::ZERO; params.blocks::<W>().ok()?];
    let mut f =
        StableBloom::<W, _, _>::with_storage(params, &mut buf[..], seeded_hasher(i.seed)).ok()?;
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, _) => out.push(f.observe(&x)),
            Op::Query(x, _) => out.push(f.contains(&x)),
            Op::Remove(x, _) => f.insert(&x),
            Op::Clear => f.clear(),
        }
    }
    let fpr = f.current_fpr().to_bits() ^ f.zero_fraction().to_bits();
    drop(f);
    Some((out, fpr, buf))
}

/// `P` for the Importance-aware filter: below [`BY_VALUE_P`] with
/// by-value eviction, as drawn otherwise.
///
/// By-value eviction draws up to `BY_VALUE_TRIES·P` cells an item in an
/// almost empty filter (all scalar code: there is no kernel whose ISAs
/// could disagree), so a `P` of thousands made it most of this target's
/// time (`perf`: about 60 %) and the target ran at ~950 inputs/s.
fn by_value_p(eviction: importance::Eviction, p: usize) -> usize {
    if eviction == importance::Eviction::ByValue {
        p % BY_VALUE_P
    } else {
        p
    }
}

/// The bound [`by_value_p`] keeps `P` under with by-value eviction.
const BY_VALUE_P: usize = 129;

/// The Importance-aware filter: every insert policy and eviction, the
/// op's `u32` as the importance (in `1..=50`, or out of the map's domain).
fn importance<W: Width>(i: &Input, isa: Isa) -> Option<(Vec<Option<bool>>, Vec<Block>)> {
    let eviction = match i.marker % 4 {
        0 => importance::Eviction::Random,
        1 => importance::Eviction::Sweep,
        2 => importance::Eviction::Interleaved,
        _ => importance::Eviction::ByValue,
    };
    let params = ImportanceParams {
        cells: usize::from(i.cells % 4096),
        bits_per_cell: u32::from(i.bits % 34),
        k: u32::from(i.k),
        p: by_value_p(eviction, usize::from(i.p)),
        eviction,
        layout: layout(i.two),
        insert: match i.bits / 34 % 3 {
            0 => Insert::Max,
            1 => Insert::TwoClass { important_from: 26 },
            _ => Insert::ByImportance,
        },
        map: ImportanceMap::Linear { top: 50 },
    };
    let mut buf = vec![Block::ZERO; params.stable().blocks::<W>().ok()?];
    let mut f =
        ImportanceBloom::<W, _, _>::with_storage(params, &mut buf[..], seeded_hasher(i.seed))
            .ok()?;
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, imp) | Op::Remove(x, imp) => out.push(f.observe(&x, imp % 52).ok()),
            Op::Query(x, _) => out.push(Some(f.contains(&x))),
            Op::Clear => f.clear(),
        }
    }
    drop(f);
    Some((out, buf))
}

/// The Reservoir-sampling filter: both resets and layouts, `p*` from the
/// `p` field; its single-bit operations run no kernel, so the ISAs must
/// agree trivially (this keeps it so).
fn reservoir(i: &Input, isa: Isa) -> Option<(Vec<bool>, u64, Vec<Block>)> {
    let params = ReservoirParams::new(usize::from(i.cells % 4096), u32::from(i.k))
        .with_p_star(f64::from(i.p) / 1000.0)
        .with_reset_during_fill(i.eviction & 1 == 1)
        .with_reset(if i.trapping {
            Reset::Uniform
        } else {
            Reset::OwnBlock
        })
        .with_layout(layout(i.two));
    let mut buf = vec![Block::ZERO; params.blocks().ok()?];
    let mut f = ReservoirBloom::with_storage(params, &mut buf[..], seeded_hasher(i.seed)).ok()?;
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, _) | Op::Remove(x, _) => out.push(f.observe(&x)),
            Op::Query(x, _) => out.push(f.contains(&x)),
            Op::Clear => f.clear(),
        }
    }
    let state = f.insertions() ^ f.position().rotate_left(32);
    drop(f);
    Some((out, state, buf))
}

/// A policy the stream can drive (removal only where it exists).
trait Pol: Policy {
    fn make(i: &Input) -> Self;
    fn remove<W: Counter>(_: &mut Spectral<Self, Blocked<W>>, _: u16, _: u32) {}
}
impl Pol for MinimumSelection {
    fn make(_: &Input) -> Self {
        MinimumSelection
    }
    fn remove<W: Counter>(f: &mut Spectral<Self, Blocked<W>>, x: u16, r: u32) {
        f.remove_n(&x, r);
    }
}
impl Pol for MinimalIncrease {
    fn make(_: &Input) -> Self {
        MinimalIncrease
    }
}
impl Pol for RecurringMinimum {
    fn make(i: &Input) -> Self {
        let p = RecurringMinimum::new().with_marker(usize::from(i.marker % 4096));
        if i.trapping {
            p.with_trapping()
        } else {
            p
        }
    }
    fn remove<W: Counter>(f: &mut Spectral<Self, Blocked<W>>, x: u16, r: u32) {
        f.remove_n(&x, r);
    }
}

fn spectral<P: Pol, W: Counter>(i: &Input, isa: Isa) -> Option<(Vec<u32>, u64, Vec<Block>)> {
    let (counters, k) = (usize::from(i.cells % 4096), u32::from(i.k));
    let mut f = Spectral::<P, Blocked<W>>::new(
        SpectralParams {
            counters,
            k,
            policy: P::make(i),
            layout: Layout::OneBlock,
        },
        i.seed,
    )
    .ok()?;
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, r) => f.insert_n(&x, r),
            Op::Query(x, t) => {
                out.push(f.estimate(&x));
                out.push(f.at_least(&x, t).into());
                out.push(f.primary_minimum_hash(f.hash(&x)).count);
            }
            Op::Remove(x, r) => P::remove(&mut f, x, r),
            Op::Clear => f.clear(),
        }
    }
    Some((out, f.total(), f.blocks().to_vec()))
}

/// A Timing filter: window `p`, block `marker`, padding `bits`, all small;
/// built once (its posterior's cache costs up to a millisecond at `k = 64`
/// under the sanitizer) and cloned for each ISA.
fn timing_filter<W: Width>(i: &Input) -> Option<TimingBloom<W>> {
    let params = TimingParams {
        layout: timing_layout(i.trapping, i.two),
        ..TimingParams::new(
            usize::from(i.cells % 4096),
            u32::from(i.k),
            u64::from(i.p % 512),
            u64::from(i.marker % 64),
            u64::from(i.bits % 8),
            W::BITS.min(12),
        )
    };
    TimingBloom::<W>::new(params, i.seed).ok()
}

/// Every standard answer, evidence and posterior (bit for bit) of a Timing
/// filter on `isa`, then the timers and the clock.
fn timing<W: Width>(
    i: &Input,
    mut f: TimingBloom<W>,
    isa: Isa,
) -> (Vec<(bool, Evidence, u64)>, Vec<Block>, u64) {
    f.set_isa(isa).unwrap();
    let mut out = Vec::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x, _) => f.insert(&x),
            Op::Query(x, r) | Op::Remove(x, r) => {
                let prior = f64::from(r) / f64::from(u32::MAX);
                let p = f.posterior(&x, prior).unwrap();
                out.push((f.contains(&x), f.evidence(&x), p.to_bits()));
            }
            Op::Clear => f.clear(),
        }
    }
    let clock = f.clock();
    (
        out,
        f.blocks().to_vec(),
        clock.now as u64 ^ clock.offset << 32 ^ (clock.cursor as u64) << 40,
    )
}

/// [`timing`] on every ISA, from one filter.
fn timing_agree<W: Width>(i: &Input) {
    if let Some(f) = timing_filter::<W>(i) {
        agree(i, |isa| Some(timing(i, f.clone(), isa)));
    }
}

/// The timing filter's layout: unblocked (the `trapping` flag, unused by
/// this filter otherwise), or one or two blocks.
fn timing_layout(unblocked: bool, two: bool) -> TimingLayout {
    if unblocked {
        TimingLayout::Unblocked
    } else {
        layout(two).into()
    }
}

fuzz_target!(|i: Input| match i.kind % 21 {
    0 => agree(&i, |isa| classic(&i, isa)),
    1 => agree(&i, |isa| stable::<W1>(&i, isa)),
    2 => agree(&i, |isa| stable::<W2>(&i, isa)),
    3 => agree(&i, |isa| stable::<W4>(&i, isa)),
    4 => agree(&i, |isa| stable::<W8>(&i, isa)),
    5 => agree(&i, |isa| stable::<W16>(&i, isa)),
    6 => agree(&i, |isa| stable::<W32>(&i, isa)),
    7 => agree(&i, |isa| spectral::<MinimumSelection, W8>(&i, isa)),
    8 => agree(&i, |isa| spectral::<MinimumSelection, W16>(&i, isa)),
    9 => agree(&i, |isa| spectral::<MinimumSelection, W32>(&i, isa)),
    10 => agree(&i, |isa| spectral::<MinimalIncrease, W8>(&i, isa)),
    11 => agree(&i, |isa| spectral::<MinimalIncrease, W16>(&i, isa)),
    12 => agree(&i, |isa| spectral::<MinimalIncrease, W32>(&i, isa)),
    13 => agree(&i, |isa| spectral::<RecurringMinimum, W8>(&i, isa)),
    14 => agree(&i, |isa| spectral::<RecurringMinimum, W16>(&i, isa)),
    15 => agree(&i, |isa| spectral::<RecurringMinimum, W32>(&i, isa)),
    16 => agree(&i, |isa| importance::<W4>(&i, isa)),
    17 => timing_agree::<W8>(&i),
    18 => timing_agree::<W16>(&i),
    19 => agree(&i, |isa| reservoir(&i, isa)),
    _ => agree(&i, |isa| importance::<W8>(&i, isa)),
});

/// The Stable filter's eviction for input byte `b`.
fn stable_eviction(b: u8) -> Eviction {
    match b % 3 {
        0 => Eviction::Random,
        1 => Eviction::Sweep,
        _ => Eviction::Interleaved,
    }
}
