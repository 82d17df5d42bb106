//! The compact store against models: the [`StringArray`] against a
//! `Vec<u32>`, the codes against their definitions, and Spectral filters on
//! [`Compact`] against the same filters on [`Blocked`] counters.

use super::codes::{BitReader, BitWriter, bit_len, elias_len, get_bits, put_bits, steps_len};
use super::*;
use crate::hash::{Layout, seeded_hasher};
use crate::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, RecurringMinimum, Removable, Spectral, W8, W16,
};
use alloc::vec;
use alloc::vec::Vec;
use proptest::prelude::*;
use proptest::test_runner::Config;

fn config() -> Config {
    crate::proptest_config(48, 4, 0xC0_4AC7)
}

/// An operation on an array: set, add, subtract (at an index reduced
/// modulo the length), or rebuild.
#[derive(Clone, Debug)]
enum Op {
    Set(usize, u32),
    Add(usize, u32),
    Sub(usize, u32),
    Rebuild,
}

/// Values across the fields' lengths: mostly small, sometimes any.
fn value() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..4, 3 => 0u32..300, 1 => any::<u32>()]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<usize>(), value()).prop_map(|(i, v)| Op::Set(i, v)),
        6 => (any::<usize>(), value()).prop_map(|(i, r)| Op::Add(i, r)),
        3 => (any::<usize>(), value()).prop_map(|(i, r)| Op::Sub(i, r)),
        1 => Just(Op::Rebuild),
    ]
}

/// Applies `ops` to a fresh array and to a `Vec<u32>`, checking every
/// answer, the whole array after each operation and the invariants.
fn against_model(len: usize, max_bits: u32, ops: &[Op]) {
    let mut a = StringArray::new(len, max_bits).unwrap();
    let mut model = vec![0u32; len];
    let max = if max_bits == 32 {
        u32::MAX
    } else {
        (1 << max_bits) - 1
    };
    for op in ops {
        match *op {
            Op::Set(i, v) => {
                let i = i % len;
                a.set(i, v).unwrap();
                model[i] = v.min(max);
            }
            Op::Add(i, r) => {
                let i = i % len;
                model[i] = model[i].saturating_add(r).min(max);
                assert_eq!(a.add(i, r).unwrap(), model[i]);
            }
            Op::Sub(i, r) => {
                let i = i % len;
                model[i] = model[i].saturating_sub(r);
                assert_eq!(a.sub(i, r).unwrap(), model[i]);
            }
            Op::Rebuild => a.rebuild(),
        }
        for (i, &m) in model.iter().enumerate() {
            assert_eq!(a.get(i), Some(m), "counter {i} after {op:?}");
        }
    }
    a.check();
    assert_eq!(a.get(len), None);
    assert!(a.set(len, 1).is_err());
    assert_eq!(a, StringArray::from_values(&model, max_bits).unwrap());
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn string_array_agrees_with_a_vec(
        len in 1usize..300,
        max_bits in 1u32..=32,
        ops in proptest::collection::vec(op(), 0..crate::scaled(300)),
    ) {
        against_model(len, max_bits, &ops);
    }

    #[test]
    fn from_values_reads_back(values in proptest::collection::vec(value(), 1..crate::scaled(500))) {
        let a = StringArray::from_values(&values, 32).unwrap();
        a.check();
        for (i, &v) in values.iter().enumerate() {
            prop_assert_eq!(a.get(i), Some(v));
        }
    }

    #[test]
    fn codes_round_trip(cs in proptest::collection::vec((any::<u64>(), 0u64..20, 0u8..3), 0..40)) {
        // Half the values small (where the codes differ most), half any.
        let cs: Vec<(u64, u8)> = cs.iter().map(|&(big, small, code)| {
            (if big % 2 == 0 { small } else { big }, code)
        }).collect();
        let mut words = vec![0u64; 40 * 2];
        let mut w = BitWriter::new(&mut words);
        let mut ends = Vec::new();
        for &(c, code) in &cs {
            let start = w.position();
            match code {
                0 => w.log_bits(c),
                1 => w.elias(c),
                _ => w.steps(c),
            }
            let len = match code {
                0 => bit_len(c),
                1 => elias_len(c),
                _ => steps_len(c),
            };
            prop_assert_eq!(w.position() - start, len as usize);
            ends.push(w.position());
        }
        let mut r = BitReader::new(&words);
        for (&(c, code), &end) in cs.iter().zip(&ends) {
            let back = match code {
                0 => r.log_bits(bit_len(c)),
                1 => r.elias(),
                _ => r.steps(),
            };
            prop_assert_eq!(back, Some(c));
            prop_assert_eq!(r.position(), end);
        }
    }

    #[test]
    fn bit_fields_leave_the_rest_alone(
        before in proptest::collection::vec(any::<u64>(), 3),
        pos in 0usize..128,
        len in 0u32..=64,
        v in any::<u64>(),
    ) {
        let mut words = before.clone();
        put_bits(&mut words, pos, len, v);
        let mask = if len == 64 { u64::MAX } else { (1 << len) - 1 };
        prop_assert_eq!(get_bits(&words, pos, len), v & mask);
        for bit in (0..192).filter(|&b| b < pos || b >= pos + len as usize) {
            prop_assert_eq!(get_bits(&words, bit, 1), get_bits(&before, bit, 1), "bit {}", bit);
        }
    }
}

/// The Elias code's length is §4.5's `L₂(n) = ⌊log₂ n⌋ +
/// 2⌊log₂(⌊log₂ n⌋ + 1)⌋ + 1`, applied to `n + 1`; its example: 1 (coded
/// as 2) takes 4 bits, and the steps code takes 1.5 bits a counter on half
/// 0s, half 1s.
#[test]
fn code_lengths_are_the_papers() {
    for n in (0..5000u64).chain([u64::MAX / 3, u64::MAX - 1]) {
        let x = n + 1;
        let l = x.ilog2();
        assert_eq!(elias_len(n), l + 2 * (l + 1).ilog2() + 1, "n = {n}");
    }
    assert_eq!(elias_len(1), 4);
    assert_eq!(f64::from(steps_len(0) + steps_len(1)) / 2.0, 1.5);
    // u64::MAX is coded as 2^64: 64 + 2·6 + 1 bits.
    assert_eq!(elias_len(u64::MAX), 77);
}

/// A counter set beyond the encodable range saturates, and its
/// neighbours keep their values, for every maximum width.
#[test]
fn out_of_range_saturates_and_spares_the_neighbours() {
    for max_bits in 1..=32 {
        let len = 200;
        let mut a = StringArray::new(len, max_bits).unwrap();
        let max = a.max();
        let pattern = |i: usize| (i as u32).wrapping_mul(2_654_435_761) & max;
        for i in 0..len {
            a.set(i, pattern(i)).unwrap();
        }
        for target in [0, 1, 63, 64, 100, len - 1] {
            a.set(target, u32::MAX).unwrap();
            assert_eq!(a.add(target, 5).unwrap(), max);
            for i in (0..len).filter(|&i| i != target) {
                let expect = if [0, 1, 63, 64, 100, len - 1].contains(&i) && i < target {
                    max
                } else {
                    pattern(i)
                };
                assert_eq!(
                    a.get(i),
                    Some(expect),
                    "max_bits {max_bits}, {target} set, {i} read"
                );
            }
        }
        a.check();
    }
}

/// A counter that outgrows its field takes its neighbours' slack without a
/// rebuild (§4.4), moving them, and the index follows.
#[test]
fn growth_pushes_into_the_nearest_slack() {
    let mut a = StringArray::new(1000, 32).unwrap();
    let base = a.footprint().base;
    // Counter 10 is in a 0-bit field; 3 needs 2 bits, from counters 11
    // (1 slack bit) and 13.
    a.set(10, 3).unwrap();
    a.set(500, 1000).unwrap();
    assert_eq!(a.rebuilds(), 0);
    assert_eq!(a.footprint().base, base);
    assert_eq!(
        (a.get(10), a.get(500), a.get(11)),
        (Some(3), Some(1000), Some(0))
    );
    a.check();
    // Beyond the slack in reach: a rebuild, the array larger.
    for i in 0..a.len() {
        a.set(i, 1 << 20).unwrap();
    }
    assert!(a.rebuilds() > 0);
    assert!(a.footprint().base >= 1000 * 21);
    assert!((0..1000).all(|i| a.get(i) == Some(1 << 20)));
    a.check();
}

/// The storage the module docs describe: 24 bits a chunk of level 3, an
/// offset vector per chunk with a field above 3 bits.
#[test]
fn footprint_follows_the_layout() {
    let a = StringArray::new(64 * 100 - 1, 16).unwrap();
    let f = a.footprint();
    assert_eq!(f.level3, 100 * 8 * 24);
    assert_eq!(f.level2, 100 * 92);
    // Empty: every chunk small, the pool only its spare.
    assert_eq!(f.offset_vectors, (800 / 16 + 4) * 64);
    // Half the fields hold one slack bit; the padding item three.
    assert_eq!(f.base, (64 * 100 - 1) / 2 + 3);
    assert!(a.words().len() * 64 >= f.index() + f.base);
}

#[test]
fn bad_parameters_are_errors() {
    assert!(StringArray::new(0, 8).is_err());
    assert!(StringArray::new(MAX_COUNTERS + 1, 8).is_err());
    assert!(StringArray::new(8, 0).is_err());
    assert!(StringArray::new(8, 33).is_err());
    let mut a = StringArray::new(8, 8).unwrap();
    assert!(a.add(8, 1).is_err() && a.sub(9, 1).is_err());
    assert_eq!((0..8).map(|i| a.get(i).unwrap()).sum::<u32>(), 0);
}

const SEED: u64 = 0x5EED;

/// The same filter on both stores.
fn pair<P: Policy, W: Counter>(
    params: &SpectralParams<P>,
) -> (Spectral<P, Blocked<W>>, Spectral<P, Compact<W>>) {
    let blocked = Spectral::<P, Blocked<W>>::new(params.clone(), SEED).unwrap();
    let store = Compact::<W>::new(params).unwrap();
    let compact = Spectral::from_store(store, params.policy.clone(), seeded_hasher(SEED)).unwrap();
    (blocked, compact)
}

/// Both filters estimate every key alike and hold the same primary
/// counters.
fn assert_same<P: Policy, W: Counter>(
    b: &Spectral<P, Blocked<W>>,
    c: &Spectral<P, Compact<W>>,
    keys: u16,
) {
    for k in 0..keys {
        assert_eq!(b.estimate(&k), c.estimate(&k), "{}: key {k}", P::NAME);
    }
    assert_eq!(b.store().counters(), c.store().counters());
    for i in 0..b.store().counters() {
        assert_eq!(b.store().primary(i), c.store().primary(i), "counter {i}");
    }
    assert_eq!(b.total(), c.total());
    assert_eq!(
        b.store().expected_item_counters(),
        c.store().expected_item_counters()
    );
}

/// Takes `r` occurrences of a key from both filters.
type Remove<P, W> = fn(&mut Spectral<P, Blocked<W>>, &mut Spectral<P, Compact<W>>, u16, u32);

/// Insertions (and deletions where `remove` is given) on both stores,
/// comparing the key's estimate after each and everything at the end.
fn agree<P: Policy, W: Counter>(
    params: SpectralParams<P>,
    ops: &[(u16, u32, bool)],
    remove: Option<Remove<P, W>>,
) {
    let (mut b, mut c) = pair::<P, W>(&params);
    for &(k, r, del) in ops {
        match remove {
            Some(remove) if del => remove(&mut b, &mut c, k, r),
            _ => {
                b.insert_n(&k, r);
                c.insert_n(&k, r);
            }
        }
        assert_eq!(b.estimate(&k), c.estimate(&k), "{}: key {k}", P::NAME);
    }
    assert_same(&b, &c, KEYS);
    c.store().array().check();
}

fn removes<P: Removable, W: Counter>(
    b: &mut Spectral<P, Blocked<W>>,
    c: &mut Spectral<P, Compact<W>>,
    k: u16,
    r: u32,
) {
    b.remove_n(&k, r);
    c.remove_n(&k, r);
}

const KEYS: u16 = 300;

fn ops() -> impl Strategy<Value = Vec<(u16, u32, bool)>> {
    let r = prop_oneof![8 => 1u32..4, 1 => 1u32..100_000];
    proptest::collection::vec(
        (0..KEYS, r, proptest::bool::weighted(0.3)),
        0..crate::scaled(400),
    )
}

fn params<P: Policy>(policy: P, counters: usize, two: bool) -> SpectralParams<P> {
    SpectralParams {
        counters,
        k: 4,
        policy,
        layout: if two {
            Layout::TwoBlocks
        } else {
            Layout::OneBlock
        },
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn spectral_on_compact_answers_as_on_blocked(
        ops in ops(),
        counters in 200usize..1500,
        two in any::<bool>(),
    ) {
        agree::<_, W8>(params(MinimumSelection, counters, two), &ops, Some(removes));
        agree::<_, W32>(params(MinimumSelection, counters, two), &ops, Some(removes));
        agree::<_, W8>(params(MinimalIncrease, counters, two), &ops, None);
        agree::<_, W16>(params(MinimalIncrease, counters, two), &ops, None);
        agree::<_, W16>(params(RecurringMinimum::new(), counters, two), &ops, Some(removes));
        agree::<_, W8>(params(RecurringMinimum::new().with_marker(1024), counters, two), &ops, Some(removes));
        agree::<_, W16>(params(RecurringMinimum::new().with_trapping(), counters, two), &ops, Some(removes));
    }
}

/// Batches, unions and joins run on the compact store as on blocked
/// counters.
#[test]
fn batches_unions_and_joins_agree() {
    let p = params(MinimumSelection, 900, true);
    let (mut b1, mut c1) = pair::<_, W16>(&p);
    let (mut b2, mut c2) = pair::<_, W16>(&p);
    let hashes: Vec<u64> = (0..crate::scaled(3000) as u64).map(|i| i % 257).collect();
    b1.insert_batch_hash(&hashes);
    c1.insert_batch_hash(&hashes);
    b2.insert_batch_hash(&hashes[..hashes.len() / 2]);
    c2.insert_batch_hash(&hashes[..hashes.len() / 2]);
    c1.remove_batch_hash(&hashes[..100]);
    b1.remove_batch_hash(&hashes[..100]);
    let (mut eb, mut ec) = (vec![0; 300], vec![0; 300]);
    let probe: Vec<u64> = (0..300).collect();
    b1.estimate_batch_hash(&probe, &mut eb).unwrap();
    c1.estimate_batch_hash(&probe, &mut ec).unwrap();
    assert_eq!(eb, ec);
    b1.union(&b2).unwrap();
    c1.union(&c2).unwrap();
    assert_same(&b1, &c1, KEYS);
    b1.join(&b2).unwrap();
    c1.join(&c2).unwrap();
    assert_same(&b1, &c1, KEYS);
    // A compact store and a blocked one do not merge: other shapes.
    assert!(c1.union(&b2).is_err());
    assert!(c1 != c2);
    c1.clear();
    assert_eq!(c1.estimate_hash(1), 0);
}

/// Saturation through the filter: 8-bit counters stop at 255 on both
/// stores, and the other items' counters are untouched.
#[test]
fn filter_counters_saturate_alike() {
    let p = params(MinimumSelection, 640, false);
    let (mut b, mut c) = pair::<_, W8>(&p);
    for k in 0..50u16 {
        b.insert_n(&k, u32::from(k) + 1);
        c.insert_n(&k, u32::from(k) + 1);
    }
    b.insert_n("big", 100_000);
    c.insert_n("big", 100_000);
    assert_eq!(c.estimate("big"), 255);
    assert_same(&b, &c, 50);
    c.store().array().check();
}

#[test]
fn isa_and_shape() {
    let p = params(MinimumSelection, 640, false);
    let (_, mut c) = pair::<_, W8>(&p);
    c.set_isa(crate::Isa::Scalar).unwrap();
    assert_eq!(c.isa(), crate::Isa::Scalar);
    let shape = c.store().shape();
    assert_eq!(
        (shape.store, shape.bits, shape.counters),
        ("compact", 0, 640)
    );
    assert!(!c.store().prefetching());
    assert_eq!(c.store().primary(640), 0);
}
