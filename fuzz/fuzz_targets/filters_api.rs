//! The public API on raw parameters and arbitrary operations: nothing
//! panics, constructors accept exactly the valid parameters, and the cheap
//! one-sided guarantees hold against a model.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::collections::{HashMap, HashSet, VecDeque};
use streambloom::analysis::apbf as apbf_analysis;
use streambloom::analysis::spectral as analysis;
use streambloom::analysis::stable::{blocked_fpr, layout_fpr, stable_point};
use streambloom::analysis::timing::Age;
use streambloom::apbf::{Apbf, ApbfParams, Ring};
use streambloom::importance::{self, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::reservoir::{ReservoirBloom, ReservoirParams, Reset};
use streambloom::spectral::{
    Blocked, Counter, MinimalIncrease, MinimumSelection, Policy, RangeTree, RecurringMinimum,
    Removable, SlidingWindow, Spectral, SpectralParams,
};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::timing::{TimingBloom, TimingLayout, TimingParams};
use streambloom::{Classic, ClassicParams, Error, Isa, Width, W1, W16, W2, W32, W4, W8};

/// Largest cell count a filter is built with (validation sees raw values).
const CAP: usize = 1 << 16;

fn cap(n: usize) -> usize {
    if n > CAP {
        n % (CAP + 1)
    } else {
        n
    }
}

#[derive(Arbitrary, Debug)]
struct Params {
    cells: usize,
    bits: u32,
    k: u32,
    p: usize,
    /// The Stable filter's eviction ([`stable_eviction`]); its low bit
    /// also sets the RSBF's resets during the fill.
    eviction: u8,
    /// Two blocks an item (`Layout::TwoBlocks`) for Classic and Stable.
    two: bool,
    seed: u64,
    window: usize,
    range_bits: u32,
    secondary: Option<usize>,
    marker: usize,
    trapping: bool,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Observe(u16),
    Insert(u16),
    Contains(u16),
    Clear,
    SetIsa(u8),
    Stats(usize, f64),
    InsertN(u16, u32),
    RemoveN(u16, u32, bool),
    AtLeast(u16, u32),
    InsertB(u16, u32),
    Union,
    Join,
    Window(u16),
    RangeInsert(u64, bool),
    RangeCount(u64, u64, bool),
    /// Raw arguments for the formula, planning and analysis functions.
    Formulas(u64, u64, u32, f64, f64),
    /// The batch forms over these keys, against the keyed forms one by one
    /// on a clone: the same answers and the same filter.
    Batch(Vec<u16>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    a: Params,
    b: Params,
    ops: Vec<Op>,
}

fn set_isa(x: u8, set: impl FnOnce(Isa) -> streambloom::Result<()>) {
    let isa = Isa::ALL[usize::from(x) % Isa::ALL.len()];
    assert_eq!(set(isa).is_ok(), isa.is_available(), "{isa:?}");
}

/// Whether `x` is a rate.
fn is_rate(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

/// Whether `blocks` blocks pass `isize::MAX` bytes, which every
/// constructor rejects before allocating.
fn past_isize(blocks: usize) -> bool {
    blocks
        .checked_mul(64)
        .is_none_or(|b| isize::try_from(b).is_err())
}

/// The Classic formulas and planner on raw parameters: rates in `[0, 1]`
/// whatever the size, `k` or load, and plans that meet their target.
fn classic_formulas(raw: ClassicParams, n: u64, target: f64) {
    assert!(is_rate(raw.predicted_fpr(n)), "{raw:?} {n}");
    assert!(is_rate(raw.unblocked_fpr(n)), "{raw:?} {n}");
    if let Ok(p) = ClassicParams::plan(n, target) {
        assert!(p.cells % 512 == 0 && (1..=32).contains(&p.k), "{p:?}");
        assert!(p.predicted_fpr(n) <= target, "{p:?} {n} {target}");
    }
}

/// The Stable formulas and planner on raw parameters: no panic or hang;
/// for valid parameters, rates in `[0, 1]` and plans that meet their
/// target.
fn stable_formulas<W: Width>(raw: &StableParams, memory: usize, target: f64) {
    let free = stable_point(raw.eviction, raw.cells, raw.k, raw.p, raw.max());
    assert!(free.is_err() || is_rate(free.unwrap()), "{raw:?}");
    let blocked = blocked_fpr(raw.eviction, raw.cells, W::CELLS, raw.k, raw.p, raw.max());
    assert!(blocked.is_err() || is_rate(blocked.unwrap()), "{raw:?}");
    let laid = layout_fpr(
        raw.layout,
        raw.eviction,
        raw.cells,
        W::CELLS,
        raw.k,
        raw.p,
        raw.max(),
    );
    assert_eq!(laid.is_err(), blocked.is_err(), "{raw:?}");
    assert!(laid.is_err() || is_rate(laid.unwrap()), "{raw:?}");
    let _ = (
        raw.stable_point(raw.cells),
        raw.paper_false_positive_bound(raw.cells),
    );
    if let Ok(m) = raw.effective_cells::<W>() {
        assert!(is_rate(raw.stable_point(m).unwrap()), "{raw:?}");
        assert!(
            is_rate(raw.paper_false_positive_bound(m).unwrap()),
            "{raw:?}"
        );
        assert!(is_rate(raw.predicted_fpr::<W>().unwrap()), "{raw:?}");
    }
    if let Ok(p) = raw.with_smallest_p::<W>(target) {
        assert!(p.predicted_fpr::<W>().unwrap() <= target, "{p:?} {target}");
    }
    if let Ok(p) = StableParams::plan::<W>(memory, target, raw.eviction) {
        let m = p.effective_cells::<W>().unwrap();
        assert!(m / W::CELLS * 64 <= memory, "{p:?} {memory}");
        assert!(p.predicted_fpr::<W>().unwrap() <= target, "{p:?} {target}");
    }
}

/// The Spectral paper's formulas on raw arguments: no panic or hang, and
/// the Bloom error a rate wherever `γ` is one.
fn spectral_formulas(n: u64, m: u64, k: u32, z: f64, t: f64) {
    let gamma = analysis::gamma(n, k, m);
    if gamma >= 0.0 && gamma.is_finite() {
        assert!(is_rate(analysis::bloom_error(k, gamma)), "{k} {gamma}");
    }
    let _ = analysis::bloom_error(k, t);
    let _ = analysis::zipf_relative_error_bound(m, n, k, z, t);
    let _ = analysis::recurring_minimum_error(z, t, n, k, m as f64);
}

fn formulas<W: Width>(i: &Input) {
    // A few per input: the planners take milliseconds.
    let ops = i.ops.iter().filter_map(|op| match *op {
        Op::Formulas(n, m, k, z, t) => Some((n, m, k, z, t)),
        _ => None,
    });
    for (n, m, k, z, t) in ops.take(4) {
        {
            classic_formulas(
                ClassicParams::new(m as usize, k).with_layout(layout(i.a.two)),
                n,
                t,
            );
            let raw = StableParams {
                cells: m as usize,
                bits_per_cell: k % 40,
                k: i.a.k,
                p: n as usize,
                eviction: stable_eviction(i.a.eviction),
                layout: layout(i.a.two),
            };
            stable_formulas::<W>(&raw, i.a.cells, t);
            spectral_formulas(n, m, k, z, t);
        }
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

fn classic(i: &Input) {
    let (bits, k) = (cap(i.a.cells), i.a.k);
    let f = Classic::new(
        ClassicParams::new(bits, k).with_layout(layout(i.a.two)),
        i.a.seed,
    );
    assert_eq!(f.is_ok(), bits >= 1 && (1..=512).contains(&k));
    let Ok(mut f) = f else { return };
    let mut model = HashSet::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x) | Op::Observe(x) => {
                f.insert(&x);
                model.insert(x);
                assert!(f.contains(&x));
            }
            Op::Contains(x) => assert!(f.contains(&x) || !model.contains(&x)),
            Op::Clear => {
                f.clear();
                model.clear();
                assert!(f.fill_ratio() == 0.0);
            }
            Op::SetIsa(x) => set_isa(x, |isa| f.set_isa(isa)),
            Op::Stats(n, _) => {
                let _ = (f.predicted_fpr(n as u64), f.unblocked_fpr(n as u64));
            }
            Op::Batch(ref keys) => {
                let mut one = f.clone();
                let want: Vec<bool> = keys.iter().map(|x| one.contains(x)).collect();
                let mut found = vec![false; keys.len()];
                f.contains_batch(keys, &mut found).unwrap();
                assert_eq!(found, want);
                keys.iter().for_each(|x| {
                    one.insert(x);
                });
                f.insert_batch(keys);
                assert!(f == one);
                model.extend(keys.iter().copied());
                assert!(
                    f.contains_batch(keys, &mut found[..keys.len().saturating_sub(1)])
                        .is_err()
                        || keys.is_empty()
                );
            }
            _ => {}
        }
    }
    assert!(model.iter().all(|x| f.contains(x)));
}

/// Whether `p` is valid for width `W` (the documented rules, and at most
/// `isize::MAX` bytes).
fn stable_valid<W: Width>(p: &StableParams) -> bool {
    let m = p.cells.div_ceil(W::CELLS).checked_mul(W::CELLS);
    !past_isize(p.cells.div_ceil(W::CELLS))
        && (1..=W::BITS).contains(&p.bits_per_cell)
        && (1..=W::CELLS as u32).contains(&p.k)
        && p.cells >= 1
        && m.is_some_and(|m| (1..=m).contains(&p.p))
}

fn stable<W: Width>(i: &Input) {
    let eviction = stable_eviction(i.a.eviction);
    let (bits, k, p) = (i.a.bits, i.a.k, i.a.p);
    let raw = StableParams {
        cells: i.a.cells,
        bits_per_cell: bits,
        k,
        p,
        eviction,
        layout: layout(i.a.two),
    };
    assert_eq!(
        raw.blocks::<W>().is_ok(),
        stable_valid::<W>(&raw),
        "{raw:?}"
    );
    if past_isize(i.a.cells.div_ceil(W::CELLS)) {
        let e = StableBloom::<W>::new(raw, i.a.seed).unwrap_err();
        assert!(matches!(e, Error::Parameter { .. }), "{e:?}");
    }
    let params = StableParams {
        cells: cap(i.a.cells),
        ..raw
    };
    let f = StableBloom::<W>::new(params, i.a.seed);
    assert_eq!(f.is_ok(), stable_valid::<W>(&params), "{params:?}");
    let Ok(mut f) = f else { return };
    for op in &i.ops {
        match *op {
            Op::Observe(x) => {
                f.observe(&x);
                assert!(f.contains(&x));
            }
            Op::Insert(x) => {
                f.insert(&x);
                assert!(f.contains(&x) && f.observe(&x));
            }
            Op::Contains(x) => {
                f.contains(&x);
            }
            Op::Clear => {
                f.clear();
                assert_eq!(f.zero_fraction(), 1.0);
            }
            Op::SetIsa(x) => set_isa(x, |isa| f.set_isa(isa)),
            Op::Stats(memory, target) => {
                let _ = (
                    f.current_fpr(),
                    f.stable_point(),
                    f.paper_false_positive_bound(),
                );
                let _ = params.with_smallest_p::<W>(target);
                let _ = StableParams::plan::<W>(cap(memory), target, eviction);
            }
            Op::Batch(ref keys) => {
                let mut one = f.clone();
                let want: Vec<bool> = keys.iter().map(|x| one.contains(x)).collect();
                let mut found = vec![false; keys.len()];
                f.contains_batch(keys, &mut found).unwrap();
                assert_eq!(found, want);
                let want: Vec<bool> = keys.iter().map(|x| one.observe(x)).collect();
                let mut dup = vec![false; keys.len()];
                f.observe_batch(keys, &mut dup).unwrap();
                assert_eq!(dup, want);
                assert!(f == one);
                keys.iter().for_each(|x| one.insert(x));
                f.insert_batch(keys);
                assert!(f == one);
            }
            _ => {}
        }
    }
}

/// What the target knows of a Spectral policy.
trait Pol: Policy {
    /// Whether the estimate never falls below the true count (MS, MI).
    const ONE_SIDED: bool;
    fn make(a: &Params) -> Self;
    /// Removes, if the policy can.
    fn remove<W: Counter>(f: &mut Spectral<Self, Blocked<W>>, x: u16, r: u32) -> bool;
    /// Drives a sliding window, if the policy can have one.
    fn window<W: Counter>(f: Spectral<Self, Blocked<W>>, i: &Input);
}

impl Pol for MinimumSelection {
    const ONE_SIDED: bool = true;
    fn make(_: &Params) -> Self {
        MinimumSelection
    }
    fn remove<W: Counter>(f: &mut Spectral<Self, Blocked<W>>, x: u16, r: u32) -> bool {
        f.remove_n(&x, r);
        true
    }
    fn window<W: Counter>(f: Spectral<Self, Blocked<W>>, i: &Input) {
        window(f, i, true);
    }
}

impl Pol for MinimalIncrease {
    const ONE_SIDED: bool = true;
    fn make(_: &Params) -> Self {
        MinimalIncrease
    }
    fn remove<W: Counter>(_: &mut Spectral<Self, Blocked<W>>, _: u16, _: u32) -> bool {
        false
    }
    fn window<W: Counter>(_: Spectral<Self, Blocked<W>>, _: &Input) {}
}

impl Pol for RecurringMinimum {
    const ONE_SIDED: bool = false;
    fn make(a: &Params) -> Self {
        let mut p = RecurringMinimum::new().with_marker(cap(a.marker));
        if let Some(s) = a.secondary {
            p = p.with_secondary(s);
        }
        if a.trapping {
            p = p.with_trapping();
        }
        p
    }
    fn remove<W: Counter>(f: &mut Spectral<Self, Blocked<W>>, x: u16, r: u32) -> bool {
        f.remove_n(&x, r);
        true
    }
    fn window<W: Counter>(f: Spectral<Self, Blocked<W>>, i: &Input) {
        window(f, i, false);
    }
}

fn window<P: Removable, W: Counter>(f: Spectral<P, Blocked<W>>, i: &Input, one_sided: bool) {
    let w = SlidingWindow::new(f, i.a.window);
    assert_eq!(w.is_ok(), i.a.window >= 1);
    let Ok(mut w) = w else { return };
    let mut model = VecDeque::new();
    for op in &i.ops {
        match *op {
            Op::Window(x) => {
                w.insert(&x);
                if model.len() == i.a.window {
                    model.pop_front();
                }
                model.push_back(x);
                assert_eq!(w.len(), model.len());
                // No counter can saturate while the window fits in one.
                if one_sided && i.a.window <= W::MAX as usize {
                    let n = model.iter().filter(|&&y| y == x).count();
                    assert!(w.estimate(&x) as usize >= n);
                }
            }
            Op::Clear => {
                w.clear();
                model.clear();
                assert!(w.is_empty());
            }
            _ => {}
        }
    }
}

/// A model of a Spectral filter's contents.
#[derive(Clone, Default)]
struct Model {
    counts: HashMap<u16, u64>,
    /// Occurrences inserted since the last clear (bounds any counter).
    mass: u64,
    /// Whether anything was removed.
    removed: bool,
    /// Whether more was removed than inserted: no guarantee is left.
    tainted: bool,
}

impl Model {
    /// Counts saturate as `mass` does: a join multiplies them, so they
    /// can reach `u64::MAX` (a fuzzed input did, at 3.2·10^6 runs), and the
    /// filter's own counters cap far below.
    fn insert(&mut self, x: u16, r: u32) {
        let c = self.counts.entry(x).or_default();
        *c = c.saturating_add(u64::from(r));
        self.mass = self.mass.saturating_add(u64::from(r));
    }
    /// The count the estimate must reach, if the model still knows one.
    fn floor<W: Counter>(&self, x: u16) -> Option<u64> {
        let saturated = self.removed && self.mass > u64::from(W::MAX);
        let c = self.counts.get(&x).copied().unwrap_or(0);
        (!self.tainted && !saturated).then_some(c.min(u64::from(W::MAX)))
    }
}

fn spectral<P: Pol, W: Counter>(i: &Input) {
    let make = |p: &Params| {
        let (policy, counters, k) = (P::make(p), cap(p.cells), p.k);
        let f = Spectral::<P, Blocked<W>>::new(
            SpectralParams {
                counters,
                k,
                policy,
                layout: Layout::OneBlock,
            },
            p.seed,
        );
        let blocks = counters.div_ceil(W::CELLS);
        let valid =
            counters >= 1 && (1..=W::CELLS as u32).contains(&k) && blocks * W::CELLS > k as usize;
        if P::ONE_SIDED {
            assert_eq!(f.is_ok(), valid, "{p:?}");
        } else if k == 0 || counters == 0 {
            assert!(f.is_err());
        }
        f
    };
    // Validation alone, on the raw size: it allocates nothing.
    let blocks = SpectralParams {
        counters: i.a.cells,
        k: i.a.k,
        policy: P::make(&i.a),
        layout: Layout::OneBlock,
    }
    .blocks::<W>();
    if let Ok(b) = blocks {
        assert!(!past_isize(b), "{b}");
    }
    // Past `isize::MAX` bytes the constructor refuses before allocating.
    if past_isize(i.a.cells.div_ceil(W::CELLS)) {
        let f = Spectral::<P, Blocked<W>>::new(
            SpectralParams {
                counters: i.a.cells,
                k: i.a.k,
                policy: P::make(&i.a),
                layout: Layout::OneBlock,
            },
            1,
        );
        assert!(f.is_err());
    }
    let (Ok(mut a), Ok(mut b)) = (make(&i.a), make(&i.b)) else {
        return;
    };
    if let Ok(f) = make(&i.a) {
        P::window(f, i);
    }
    if let Ok(f) = make(&i.a) {
        range(f, i);
    }
    let (mut ma, mut mb) = (Model::default(), Model::default());
    let check = |f: &Spectral<P, Blocked<W>>, m: &Model, x: u16| {
        if let (true, Some(floor)) = (P::ONE_SIDED, m.floor::<W>(x)) {
            assert!(u64::from(f.estimate(&x)) >= floor, "{x}: {floor}");
        }
    };
    for op in &i.ops {
        match *op {
            Op::Insert(x) | Op::Observe(x) => {
                a.insert(&x);
                ma.insert(x, 1);
                check(&a, &ma, x);
            }
            Op::InsertN(x, r) => {
                a.insert_n(&x, r);
                ma.insert(x, r);
                check(&a, &ma, x);
            }
            Op::RemoveN(x, r, present) => {
                let c = ma.counts.entry(x).or_default();
                let r = if present {
                    r.min(u32::try_from(*c).unwrap_or(u32::MAX))
                } else {
                    r
                };
                if P::remove(&mut a, x, r) {
                    ma.tainted |= u64::from(r) > *c;
                    *c = c.saturating_sub(u64::from(r));
                    ma.removed |= r > 0;
                }
                check(&a, &ma, x);
            }
            Op::Contains(x) => check(&a, &ma, x),
            Op::AtLeast(x, t) => assert_eq!(a.at_least(&x, t), a.estimate(&x) >= t),
            Op::Batch(ref keys) => {
                let mut one = a.clone();
                keys.iter().for_each(|x| one.insert(x));
                a.insert_batch(keys);
                assert!(a == one);
                let want: Vec<u32> = keys.iter().map(|x| one.estimate(x)).collect();
                let mut counts = vec![0; keys.len()];
                a.estimate_batch(keys, &mut counts).unwrap();
                assert_eq!(counts, want);
                for &x in keys {
                    ma.insert(x, 1);
                }
                for &x in keys {
                    check(&a, &ma, x);
                }
            }
            Op::InsertB(x, r) => {
                b.insert_n(&x, r);
                mb.insert(x, r);
            }
            Op::Clear => {
                a.clear();
                ma = Model::default();
                assert!(a.blocks().iter().all(|b| b.0 == [0; 64]) && a.total() == 0);
            }
            Op::SetIsa(x) => set_isa(x, |isa| a.set_isa(isa)),
            Op::Union | Op::Join => {
                let compatible =
                    a.counters() == b.counters() && a.k() == b.k() && i.a.seed == i.b.seed;
                let keys: Vec<u16> = ma.counts.keys().chain(mb.counts.keys()).copied().collect();
                let before: Vec<u32> = keys
                    .iter()
                    .map(|x| a.estimate(x).max(b.estimate(x)))
                    .collect();
                let blocks = a.blocks().to_vec();
                let r = if matches!(op, Op::Union) {
                    a.union(&b)
                } else {
                    a.join(&b)
                };
                if P::ONE_SIDED {
                    assert_eq!(r.is_ok(), compatible);
                } else if i.a.seed != i.b.seed || i.a.trapping || i.b.trapping {
                    assert!(r.is_err());
                }
                if r.is_err() {
                    assert!(a.blocks() == &blocks[..]);
                    continue;
                }
                if matches!(op, Op::Union) {
                    for (x, e) in keys.iter().zip(before) {
                        if P::ONE_SIDED {
                            assert!(a.estimate(x) >= e);
                        }
                    }
                    for (&x, &c) in &mb.counts {
                        let a = ma.counts.entry(x).or_default();
                        *a = a.saturating_add(c);
                    }
                    ma.mass = ma.mass.saturating_add(mb.mass);
                } else {
                    for (x, c) in ma.counts.iter_mut() {
                        *c = c.saturating_mul(mb.counts.get(x).copied().unwrap_or(0));
                    }
                    ma.mass = ma.mass.saturating_mul(mb.mass);
                }
                for x in keys {
                    check(&a, &ma, x);
                }
            }
            _ => {}
        }
    }
    for &x in ma.counts.keys() {
        check(&a, &ma, x);
    }
}

fn range<P: Pol, W: Counter>(f: Spectral<P, Blocked<W>>, i: &Input) {
    let bits = i.a.range_bits;
    let t = RangeTree::new(f, bits);
    assert_eq!(t.is_ok(), (1..=64).contains(&bits));
    let Ok(mut t) = t else { return };
    let fits = |v: u64| bits == 64 || v >> bits == 0;
    let clip = |v: u64, c: bool| {
        if c && bits < 64 {
            v & ((1 << bits) - 1)
        } else {
            v
        }
    };
    let mut values = Vec::new();
    for op in &i.ops {
        match *op {
            Op::RangeInsert(v, c) => {
                let v = clip(v, c);
                assert_eq!(t.insert(v).is_ok(), fits(v));
                if fits(v) {
                    values.push(v);
                }
            }
            Op::RangeCount(lo, hi, c) => {
                let (lo, hi) = (clip(lo, c), clip(hi, c));
                let r = t.range_count(lo, hi);
                assert_eq!(r.is_ok(), fits(lo) && fits(hi) && lo <= hi);
                let _ = t.count(lo);
                let Ok(r) = r else { continue };
                assert!(r.nodes <= 2 * (bits + 1));
                let n = values.iter().filter(|v| (lo..=hi).contains(v)).count() as u64;
                if P::ONE_SIDED {
                    assert!(r.count >= n.min(u64::from(W::MAX)), "{r:?} < {n}");
                }
            }
            _ => {}
        }
    }
}

/// The Importance-aware filter: raw parameters are validated as the
/// Stable filter's (plus the map), an importance outside `1..=50` is an
/// error that changes nothing, an observed key is found right after, and
/// the batch form answers as the keyed form.
fn importance<W: Width>(i: &Input) {
    let eviction = match i.a.marker % 4 {
        0 => importance::Eviction::Random,
        1 => importance::Eviction::Sweep,
        2 => importance::Eviction::Interleaved,
        _ => importance::Eviction::ByValue,
    };
    // By-value eviction draws up to `BY_VALUE_TRIES·P` cells an item in an
    // almost empty filter: a `P` of tens of thousands made it most of this
    // target's time (`perf`: about 60 %, ~950 inputs/s). Its validation
    // is the same as the other evictions', which keep the raw `P`.
    let p = if eviction == importance::Eviction::ByValue {
        i.a.p % 129
    } else {
        i.a.p
    };
    let params = ImportanceParams {
        cells: cap(i.a.cells),
        bits_per_cell: i.a.bits,
        k: i.a.k,
        p,
        eviction,
        layout: layout(i.a.two),
        insert: match i.a.range_bits % 3 {
            0 => Insert::Max,
            1 => Insert::TwoClass {
                important_from: 1 + (i.a.window % 50) as u32,
            },
            _ => Insert::ByImportance,
        },
        map: ImportanceMap::Linear { top: 50 },
    };
    let f = ImportanceBloom::<W>::new(params, i.a.seed);
    // M/2-insert needs ⌊Max/2⌋ ≥ 1: cells of at least 2 bits.
    let two_class_ok =
        !matches!(params.insert, Insert::TwoClass { .. }) || params.bits_per_cell >= 2;
    assert_eq!(
        f.is_ok(),
        stable_valid::<W>(&params.stable()) && two_class_ok,
        "{params:?}"
    );
    let Ok(mut f) = f else { return };
    for op in &i.ops {
        match *op {
            Op::InsertN(x, imp) | Op::InsertB(x, imp) => {
                let before = f.blocks().to_vec();
                match f.observe(&x, imp) {
                    Ok(_) => assert!((1..=50).contains(&imp) && f.contains(&x)),
                    Err(e) => {
                        assert!(!(1..=50).contains(&imp), "{e:?}");
                        assert_eq!(f.blocks(), &before[..]);
                    }
                }
            }
            Op::Contains(x) => {
                let before = f.blocks().to_vec();
                f.contains(&x);
                assert_eq!(f.blocks(), &before[..]);
            }
            Op::Clear => {
                f.clear();
                assert_eq!(f.zero_fraction(), 1.0);
            }
            Op::SetIsa(x) => set_isa(x, |isa| f.set_isa(isa)),
            Op::Batch(ref keys) => {
                let imps: Vec<u32> = keys.iter().map(|&k| 1 + u32::from(k) % 50).collect();
                let mut one = f.clone();
                let want: Vec<bool> = keys
                    .iter()
                    .zip(&imps)
                    .map(|(k, &imp)| one.observe(k, imp).unwrap())
                    .collect();
                let mut got = vec![false; keys.len()];
                f.observe_batch(keys, &imps, &mut got).unwrap();
                assert_eq!(got, want);
                assert!(f == one);
            }
            _ => {}
        }
    }
}

/// The Reservoir-sampling filter: raw parameters are accepted exactly
/// when valid; an item that was inserted is found right after; the fill
/// phase without resets never forgets; queries change nothing; the batch
/// form answers as the keyed form; the planners and the analysis never
/// panic on raw arguments.
fn reservoir(i: &Input) {
    let bits = cap(i.a.cells);
    let p_star = f64::from(i.a.range_bits) / 1e4;
    let params = ReservoirParams::new(bits, i.a.k)
        .with_p_star(p_star)
        .with_reset_during_fill(i.a.eviction & 1 == 1)
        .with_reset(if i.a.trapping {
            Reset::Uniform
        } else {
            Reset::OwnBlock
        })
        .with_layout(layout(i.a.two));
    let valid = bits > 0 && (1..=512).contains(&i.a.k) && p_star > 0.0 && p_star <= 1.0;
    let f = ReservoirBloom::new(params, i.a.seed);
    assert_eq!(f.is_ok(), valid, "{params:?}");
    let Ok(mut f) = f else { return };
    let s = f.sub_filter_bits();
    let mut fill: HashSet<u16> = HashSet::new();
    for op in &i.ops {
        match *op {
            Op::Observe(x) | Op::Insert(x) => {
                let (before, position) = (f.insertions(), f.position());
                f.observe(&x);
                assert_eq!(f.position(), position + 1);
                if f.insertions() > before {
                    assert!(f.contains(&x));
                }
                if !params.reset_during_fill && f.position() <= s {
                    fill.insert(x);
                    assert!(fill.iter().all(|y| f.contains(y)));
                }
            }
            Op::Contains(x) => {
                let before = f.blocks().to_vec();
                f.contains(&x);
                assert_eq!(f.blocks(), &before[..]);
            }
            Op::Clear => {
                f.clear();
                fill.clear();
                assert_eq!((f.ones(), f.position()), (0, 0));
            }
            Op::SetIsa(x) => set_isa(x, |isa| f.set_isa(isa)),
            Op::Stats(n, x) => {
                let m = f.model();
                let n = (n % 4096) as u64;
                let fpr = m.fpr_after(n);
                assert!((0.0..=1.0).contains(&fpr), "{fpr}");
                let _ = (
                    ReservoirParams::plan(n as usize, x),
                    ReservoirParams::plan_fpr(n as usize, x),
                );
                let _ = (
                    streambloom::analysis::reservoir::fpr_distinct(s, f.k(), n),
                    streambloom::analysis::reservoir::printed_fpr(s, f.k(), n, x),
                    streambloom::analysis::reservoir::fnr_bound(s, f.k(), n, x),
                    streambloom::analysis::reservoir::long_run_fpr(x, f.k()),
                );
            }
            Op::Batch(ref keys) => {
                let mut one = f.clone();
                let want: Vec<bool> = keys.iter().map(|k| one.observe(k)).collect();
                let mut got = vec![false; keys.len()];
                f.observe_batch(keys, &mut got).unwrap();
                assert_eq!(got, want);
                assert!(f == one);
                fill.clear();
            }
            _ => {}
        }
    }
}

/// Whether raw Timing parameters are valid for width `W`.
fn timing_valid<W: Width>(p: &TimingParams) -> bool {
    let least = p
        .window
        .checked_div(p.block)
        .map(|q| q + u64::from(p.window % p.block.max(1) != 0))
        .and_then(|q| q.checked_add(1))
        .and_then(|q| q.checked_add(p.padding));
    !past_isize(p.cells.div_ceil(W::CELLS))
        && p.cells >= 1
        && (2..=W::BITS.min(31)).contains(&p.bits_per_timer)
        && (1..=if p.layout == TimingLayout::Unblocked {
            64
        } else {
            W::CELLS.min(64) as u32
        })
            .contains(&p.k)
        && p.window >= 1
        && p.block >= 1
        && least.is_some_and(|l| u64::from(p.t_omega) >= l)
        && u64::from(p.t_omega) + 2 <= 1u64 << p.bits_per_timer
}

/// The Timing filter on raw parameters: constructors accept exactly the
/// valid ones; against a window of the last insertions (a `VecDeque`),
/// the standard query has no false negatives; answers, evidence and
/// posteriors agree; bad priors and penalties are errors; batches equal
/// the keyed forms.
fn timing<W: Width>(i: &Input) {
    let raw = TimingParams {
        cells: i.a.cells,
        k: i.a.k,
        window: i.a.window as u64,
        block: i.a.p as u64,
        padding: i.a.marker as u64,
        t_omega: i.a.range_bits,
        bits_per_timer: i.a.bits,
        layout: timing_layout(i.a.trapping, i.a.two),
    };
    assert_eq!(
        raw.blocks::<W>().is_ok(),
        timing_valid::<W>(&raw),
        "{raw:?}"
    );
    if past_isize(i.a.cells.div_ceil(W::CELLS)) {
        let e = TimingBloom::<W>::new(raw, i.a.seed).unwrap_err();
        assert!(matches!(e, Error::Parameter { .. }), "{e:?}");
    }
    // Small windows and blocks so that the clock wraps within a run.
    let params = TimingParams {
        layout: timing_layout(i.a.trapping, i.a.two),
        ..TimingParams::new(
            cap(i.a.cells),
            i.a.k,
            (i.a.window % 300) as u64,
            (i.a.p % 40) as u64,
            (i.a.marker % 6) as u64,
            i.a.bits,
        )
    };
    let f = TimingBloom::<W>::new(params, i.a.seed);
    assert_eq!(f.is_ok(), timing_valid::<W>(&params), "{params:?}");
    let Ok(mut f) = f else { return };
    let mut recent = VecDeque::new();
    for op in &i.ops {
        match *op {
            Op::Insert(x) | Op::Observe(x) => {
                f.insert(&x);
                recent.push_back(x);
                if recent.len() as u64 > params.window.min(32) {
                    recent.pop_front();
                }
                assert!(recent.iter().all(|y| f.contains(y)), "{params:?}");
            }
            Op::Contains(x) => {
                let e = f.evidence(&x);
                assert_eq!(f.contains(&x), e.age != Age::Expired);
                assert!(e.oldest_count() <= e.distinct() && e.distinct() <= params.k);
            }
            Op::Stats(n, prior) => {
                let x = n as u16;
                match f.posterior(&x, prior) {
                    Ok(p) => {
                        assert!(is_rate(prior) && is_rate(p), "{prior} {p}");
                        if !f.contains(&x) {
                            assert_eq!(p, 0.0);
                        }
                    }
                    Err(e) => assert!(!is_rate(prior), "{e:?}"),
                }
                let (fp, fn_) = (prior * 10.0 - 1.0, 1.0 - prior);
                match f.decide(&x, 0.5, fp, fn_) {
                    Ok(_) => assert!(fp >= 0.0 && fn_ >= 0.0),
                    Err(e) => assert!(!(fp >= 0.0 && fn_ >= 0.0), "{e:?}"),
                }
            }
            Op::Clear => {
                f.clear();
                recent.clear();
            }
            Op::SetIsa(x) => set_isa(x, |isa| f.set_isa(isa)),
            Op::Batch(ref keys) => {
                let mut one = f.clone();
                let want: Vec<bool> = keys.iter().map(|x| one.contains(x)).collect();
                let mut found = vec![false; keys.len()];
                f.contains_batch(keys, &mut found).unwrap();
                assert_eq!(found, want);
                keys.iter().for_each(|x| one.insert(x));
                f.insert_batch(keys);
                assert!(f == one);
                recent.extend(keys.iter().copied());
                while recent.len() as u64 > params.window.min(32) {
                    recent.pop_front();
                }
            }
            _ => {}
        }
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

/// Whether `p` is valid for an `Apbf` (the documented rules, and at most
/// `isize::MAX` bytes).
fn apbf_valid(p: &ApbfParams) -> bool {
    (1..=64).contains(&p.k)
        && p.l >= 1
        && p.g >= 1
        && p.slice_bits >= 1
        && p.k.checked_add(p.l).is_some_and(|h| {
            p.slice_bits
                .div_ceil(512)
                .checked_mul(h as usize)
                .is_some_and(|b| !past_isize(b))
        })
}

/// The Age-Partitioned Bloom Filter on raw parameters: constructors
/// accept exactly the valid ones; against a model of the last `l + 1`
/// generations (a `VecDeque` of generations), nothing of the last `l·g`
/// insertions (nor of the current generation) is ever missed, across
/// forced generation ends (`Window`) and clears; the rates are rates and
/// the planner keeps its promises; batches equal the keyed forms; a
/// saved filter restores equal.
fn apbf(i: &Input) {
    let raw = ApbfParams {
        k: i.a.k,
        l: i.a.bits,
        g: i.a.window as u64,
        slice_bits: i.a.cells,
    };
    assert_eq!(raw.blocks().is_ok(), apbf_valid(&raw), "{raw:?}");
    if !apbf_valid(&raw) {
        assert!(matches!(
            Apbf::new(raw, i.a.seed),
            Err(Error::Parameter { .. })
        ));
    }
    // Small rings and generations, so that the ring turns within a run.
    let params = ApbfParams {
        k: i.a.k % 9,
        l: i.a.bits % 7,
        g: (i.a.window % 50) as u64,
        slice_bits: cap(i.a.cells) % 5000,
    };
    let f = Apbf::new(params, i.a.seed);
    assert_eq!(f.is_ok(), apbf_valid(&params), "{params:?}");
    let Ok(mut f) = f else { return };
    let mut gens: VecDeque<Vec<u16>> = VecDeque::from([Vec::new()]);
    let mut planned = false;
    for op in &i.ops {
        match *op {
            Op::Insert(x) | Op::Observe(x) => {
                if gens[0].len() as u64 == params.g {
                    gens.push_front(Vec::new());
                }
                gens[0].push(x);
                f.insert(&x);
            }
            Op::Contains(x) => {
                let must = gens.iter().any(|g| g.contains(&x));
                assert!(f.contains(&x) || !must, "{params:?} lost {x}");
            }
            Op::Window(_) => {
                f.next_generation();
                gens.push_front(Vec::new());
            }
            Op::Clear => {
                f.clear();
                gens = VecDeque::from([Vec::new()]);
                assert_eq!(f.current_fpr(), 0.0);
            }
            Op::Stats(n, target) => {
                assert!(is_rate(f.predicted_fpr(n as u64)) && is_rate(f.current_fpr()));
                // The planner takes milliseconds: once an input.
                if !planned {
                    planned = true;
                    let window = (n % 5000) as u64;
                    match ApbfParams::plan(window, target) {
                        Ok(p) => {
                            assert!(p.window() >= window && p.steady_fpr() <= target, "{p:?}");
                            assert!(p.blocks().is_ok());
                        }
                        // Below 1e-12 a rate may need k > 64.
                        Err(_) => assert!(window == 0 || !(target >= 1e-12 && target < 1.0)),
                    }
                }
            }
            Op::Formulas(n, m, k, z, _) => {
                let (k, l) = (k % 70, (m % 200) as u32);
                let g = n % 10_000;
                assert!(is_rate(apbf_analysis::paper_fpr(k, l)));
                assert!(is_rate(apbf_analysis::predicted_fpr(
                    k,
                    l,
                    g,
                    (m % 100_000) as usize,
                    n
                )));
                assert!(is_rate(apbf_analysis::run_probability(
                    k,
                    (l % 100) as usize,
                    |_| z
                )));
            }
            Op::Batch(ref keys) => {
                let mut one = f.clone();
                let want: Vec<bool> = keys.iter().map(|x| one.contains(x)).collect();
                let mut found = vec![false; keys.len()];
                f.contains_batch(keys, &mut found).unwrap();
                assert_eq!(found, want);
                keys.iter().for_each(|x| one.insert(x));
                f.insert_batch(keys);
                assert!(f == one);
                for &x in keys {
                    if gens[0].len() as u64 == params.g {
                        gens.push_front(Vec::new());
                    }
                    gens[0].push(x);
                }
                assert!(
                    f.contains_batch(keys, &mut found[..keys.len().saturating_sub(1)])
                        .is_err()
                        || keys.is_empty()
                );
            }
            _ => {}
        }
        gens.truncate(params.l as usize + 1);
    }
    assert!(gens.iter().flatten().all(|x| f.contains(x)), "{params:?}");
    let hasher = streambloom::hash::seeded_hasher(i.a.seed);
    let g = Apbf::restore(params, f.blocks().to_vec(), hasher, f.ring()).unwrap();
    assert!(g == f);
    let bad = Ring {
        newest: params.k + params.l,
        count: 0,
    };
    let hasher = streambloom::hash::seeded_hasher(i.a.seed);
    assert!(Apbf::restore(params, f.blocks().to_vec(), hasher, bad).is_err());
}

fuzz_target!(|i: Input| match i.kind % 28 {
    27 => apbf(&i),
    24 => reservoir(&i),
    25 => timing::<W8>(&i),
    26 => timing::<W16>(&i),
    22 => importance::<W4>(&i),
    23 => importance::<W8>(&i),
    16 => formulas::<W1>(&i),
    17 => formulas::<W2>(&i),
    18 => formulas::<W4>(&i),
    19 => formulas::<W8>(&i),
    20 => formulas::<W16>(&i),
    21 => formulas::<W32>(&i),
    0 => classic(&i),
    1 => stable::<W1>(&i),
    2 => stable::<W2>(&i),
    3 => stable::<W4>(&i),
    4 => stable::<W8>(&i),
    5 => stable::<W16>(&i),
    6 => stable::<W32>(&i),
    7 => spectral::<MinimumSelection, W8>(&i),
    8 => spectral::<MinimumSelection, W16>(&i),
    9 => spectral::<MinimumSelection, W32>(&i),
    10 => spectral::<MinimalIncrease, W8>(&i),
    11 => spectral::<MinimalIncrease, W16>(&i),
    12 => spectral::<MinimalIncrease, W32>(&i),
    13 => spectral::<RecurringMinimum, W8>(&i),
    14 => spectral::<RecurringMinimum, W16>(&i),
    _ => spectral::<RecurringMinimum, W32>(&i),
});

/// The Stable filter's eviction for input byte `b`.
fn stable_eviction(b: u8) -> Eviction {
    match b % 3 {
        0 => Eviction::Random,
        1 => Eviction::Sweep,
        _ => Eviction::Interleaved,
    }
}
