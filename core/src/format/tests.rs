//! The header's checks, on a classic filter (each filter's own tests
//! cover its fields).

use super::*;
use crate::hash::PortableHasher;
use crate::{Classic, ClassicParams, Error};
use std::vec::Vec;

type C = Classic<crate::store::DefaultStorage, PortableHasher>;

fn encoded() -> Vec<u8> {
    let mut f = C::with_hasher(ClassicParams::new(1024, 3), PortableHasher::new(9)).unwrap();
    f.insert("a");
    f.to_bytes()
}

fn err(bytes: &[u8]) -> Error {
    C::from_bytes(bytes).unwrap_err()
}

#[test]
fn round_trip_and_length() {
    let b = encoded();
    assert_eq!(b.len(), 64 + 2 * 64);
    let f = C::from_bytes(&b).unwrap();
    assert!(f.contains("a"));
    assert_eq!(f.to_bytes(), b);
}

/// Each kind is written at its own version ([`Kind::version`]), and an
/// APBF of version 1 (its bit positions before 2026-11-28) is refused, not
/// read as one of today's.
#[test]
fn versions_are_per_kind() {
    use crate::apbf::{Apbf, ApbfParams};
    assert_eq!(u16::from_le_bytes([encoded()[4], encoded()[5]]), VERSION);
    let mut a = Apbf::with_hasher(ApbfParams::new(4, 3, 100), PortableHasher::new(3)).unwrap();
    a.insert("a");
    let mut b = a.to_bytes();
    assert_eq!(u16::from_le_bytes([b[4], b[5]]), 2);
    assert!(Apbf::<_, PortableHasher>::from_bytes(&b).is_ok());
    b[4] = 1;
    assert_eq!(
        Apbf::<_, PortableHasher>::from_bytes(&b).unwrap_err(),
        Error::Malformed(Malformed::Version { found: 1 })
    );
    // A classic filter asked for as an APBF is another kind, whatever
    // the versions.
    assert_eq!(
        Apbf::<_, PortableHasher>::from_bytes(&encoded()).unwrap_err(),
        Error::Malformed(Malformed::Kind {
            expected: Kind::Apbf,
            found: Kind::Classic.tag()
        })
    );
}

#[test]
fn every_header_field_is_checked() {
    let b = encoded();
    let with = |i: usize, v: u8| {
        let mut c = b.clone();
        c[i] = v;
        c
    };
    let m = Error::Malformed;
    assert_eq!(err(&with(0, b'X')), m(Malformed::Magic));
    assert_eq!(err(&with(4, 2)), m(Malformed::Version { found: 2 }));
    assert_eq!(
        err(&with(6, 2)),
        m(Malformed::Kind {
            expected: Kind::Classic,
            found: 2
        })
    );
    assert_eq!(
        err(&with(7, 8)),
        m(Malformed::Width {
            expected: 1,
            found: 8
        })
    );
    assert_eq!(
        err(&with(8, 2)),
        m(Malformed::Hasher {
            expected: 1,
            found: 2
        })
    );
    assert_eq!(err(&with(12, 1)), m(Malformed::Field { name: "reserved" }));
    assert_eq!(err(&with(24, 1)), m(Malformed::Seeds));
    // Another seed loads: it is another hasher's filter.
    assert!(C::from_bytes(&with(16, 0)).is_ok());
    assert_eq!(
        err(&with(32, 0xFF)),
        m(Malformed::Short {
            needed: 320 + 128,
            found: 192
        })
    );
    let max = |at: usize| {
        let mut c = b.clone();
        c[at..at + 8].fill(0xFF);
        c
    };
    assert_eq!(
        err(&max(32)),
        m(Malformed::Overflow {
            name: "fields length"
        })
    );
    assert_eq!(
        err(&max(40)),
        m(Malformed::Overflow {
            name: "block count"
        })
    );
    assert_eq!(err(&with(63, 1)), m(Malformed::Field { name: "padding" }));
    assert_eq!(err(&with(60, 7)), m(Malformed::Field { name: "layout" }));
}

#[test]
fn lengths_are_exact() {
    let b = encoded();
    for cut in [0, 1, 47, 48, 63, 64, 100, b.len() - 1] {
        let e = err(&b[..cut]);
        assert!(
            matches!(e, Error::Malformed(Malformed::Short { .. })),
            "{cut}: {e:?}"
        );
    }
    let mut long = b.clone();
    long.push(0);
    assert_eq!(
        err(&long),
        Error::Malformed(Malformed::Trailing { extra: 1 })
    );
    // Fields shorter than the header says: the field length no longer matches.
    let mut fields = b.clone();
    fields[32] += 1;
    assert_eq!(
        err(&fields),
        Error::Malformed(Malformed::Field {
            name: "fields length"
        })
    );
    fields[32] -= 2;
    assert_eq!(
        err(&fields),
        Error::Malformed(Malformed::Field { name: "layout" })
    );
}

#[test]
fn parameters_the_constructor_refuses_are_its_errors() {
    let mut b = encoded();
    // k = 0
    b[56..60].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(err(&b), Error::Parameter { name: "k", .. }));
    // Two blocks recorded, parameters asking for 4.
    let mut b = encoded();
    b[48..56].copy_from_slice(&2048u64.to_le_bytes());
    assert!(matches!(
        err(&b),
        Error::Length {
            name: "storage",
            ..
        }
    ));
}

#[test]
fn views_need_alignment() {
    let b = encoded();
    let mut buf = std::vec![crate::Block::ZERO; b.len() / 64 + 1];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
    bytes[1..=b.len()].copy_from_slice(&b);
    assert_eq!(
        Classic::<_, PortableHasher>::view_bytes(&mut bytes[1..=b.len()]).unwrap_err(),
        Error::Malformed(Malformed::Misaligned)
    );
    bytes[..b.len()].copy_from_slice(&b);
    let v = Classic::<_, PortableHasher>::view_bytes(&mut bytes[..b.len()]).unwrap();
    assert!(v.contains("a"));
}

#[test]
fn messages_name_the_problem() {
    let e = err(b"nope, not a filter at all, but long enough to have a header ....");
    assert_eq!(
        std::format!("{e}"),
        "malformed filter bytes: not a streambloom filter (wrong magic)"
    );
}

mod round_trip {
    //! Every filter, written at any point of a stream and read back,
    //! continues it exactly as the original does: the same answers, and
    //! then the same bytes (cells, clocks, pointers, PRNG states).

    use crate::format::Encode;
    use crate::hash::PortableHasher;
    use crate::importance::{self, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
    use crate::spectral::{Blocked, MinimalIncrease, MinimumSelection, RecurringMinimum};
    use crate::stable::{Eviction, StableParams};
    use crate::timing::{TimingLayout, TimingParams};
    use crate::{
        Classic, ClassicParams, Layout, ReservoirBloom, ReservoirParams, Result, Spectral,
        SpectralParams, StableBloom, TimingBloom, W4, W8, W16,
    };
    use core::fmt::Debug;
    use proptest::prelude::*;
    use std::vec::Vec;

    /// Runs `keys[..split]` through `f`, writes it, reads it back, runs the
    /// rest through both, and compares every answer and the final bytes.
    fn continues<F: Encode + Debug>(
        mut f: F,
        read: impl Fn(&[u8]) -> Result<F>,
        step: impl Fn(&mut F, u64) -> u64,
        keys: &[u64],
        split: usize,
    ) {
        let split = split.min(keys.len());
        for &k in &keys[..split] {
            step(&mut f, k);
        }
        let bytes = f.to_bytes();
        let mut g = read(&bytes).unwrap();
        assert_eq!(g.to_bytes(), bytes, "read back differs");
        for &k in &keys[split..] {
            assert_eq!(step(&mut f, k), step(&mut g, k), "key {k}");
        }
        assert_eq!(f.to_bytes(), g.to_bytes());
    }

    fn hasher(seed: u64) -> PortableHasher {
        PortableHasher::new(seed)
    }

    fn keys() -> impl Strategy<Value = (Vec<u64>, usize, u64)> {
        (
            proptest::collection::vec(0u64..300, 0..crate::scaled(600)),
            0usize..crate::scaled(600),
            any::<u64>(),
        )
    }

    proptest! {
        #![proptest_config(crate::proptest_config(32, 2, 0x5EED_F0A1))]

        #[test]
        fn classic((keys, split, seed) in keys(), two in any::<bool>()) {
            let layout = if two { Layout::TwoBlocks } else { Layout::OneBlock };
            let f = Classic::with_hasher(ClassicParams::new(2048, 4).with_layout(layout), hasher(seed)).unwrap();
            continues(f, Classic::from_bytes, |f, k| {
                let was = f.contains(&k);
                f.insert(&k);
                u64::from(was)
            }, &keys, split);
        }

        #[test]
        fn stable((keys, split, seed) in keys(), sweep in any::<bool>(), two in any::<bool>()) {
            let params = StableParams {
                cells: 1024,
                bits_per_cell: 3,
                k: 3,
                p: 5,
                eviction: if sweep { Eviction::Sweep } else { Eviction::Random },
                layout: if two { Layout::TwoBlocks } else { Layout::OneBlock },
            };
            let f = StableBloom::<W4, _, _>::with_hasher(params, hasher(seed)).unwrap();
            continues(f, StableBloom::from_bytes, |f, k| u64::from(f.observe(&k)), &keys, split);
        }

        #[test]
        fn importance((keys, split, seed) in keys(), eviction in 0usize..4, insert in 0usize..3) {
            let params = ImportanceParams {
                cells: 1024,
                bits_per_cell: 3,
                k: 3,
                p: 4,
                eviction: [importance::Eviction::Random, importance::Eviction::Sweep, importance::Eviction::ByValue, importance::Eviction::Interleaved][eviction],
                layout: Layout::OneBlock,
                insert: [Insert::Max, Insert::TwoClass { important_from: 5 }, Insert::ByImportance][insert],
                map: ImportanceMap::Linear { top: 10 },
            };
            let f = ImportanceBloom::<W8, _, _>::with_hasher(params, hasher(seed)).unwrap();
            continues(f, ImportanceBloom::from_bytes, |f, k| {
                u64::from(f.observe(&k, (k % 10 + 1) as u32).unwrap())
            }, &keys, split);
        }

        #[test]
        fn reservoir((keys, split, seed) in keys(), uniform in any::<bool>()) {
            let mut params = ReservoirParams::new(2048, 3);
            if uniform {
                params.reset = crate::reservoir::Reset::Uniform;
            }
            let f = ReservoirBloom::with_hasher(params, hasher(seed)).unwrap();
            continues(f, ReservoirBloom::from_bytes, |f, k| u64::from(f.observe(&k)), &keys, split);
        }

        #[test]
        fn spectral((keys, split, seed) in keys()) {
            let f = Spectral::<MinimumSelection, Blocked<W16>, _>::with_hasher(SpectralParams::new(1024, 3), hasher(seed)).unwrap();
            continues(f, Spectral::from_bytes, |f, k| {
                if k % 7 == 0 && f.estimate(&(k + 1)) > 0 {
                    f.remove(&(k + 1));
                } else {
                    f.insert(&k);
                }
                u64::from(f.estimate(&k))
            }, &keys, split);
            let f = Spectral::<MinimalIncrease, Blocked<W8>, _>::with_hasher(SpectralParams::new(1024, 3), hasher(seed)).unwrap();
            continues(f, Spectral::from_bytes, |f, k| {
                f.insert_n(&k, (k % 3) as u32 + 1);
                u64::from(f.estimate(&k))
            }, &keys, split);
        }

        #[test]
        fn recurring((keys, split, seed) in keys(), marker in any::<bool>(), trapping in any::<bool>()) {
            let mut rm = RecurringMinimum::new();
            if marker {
                rm = rm.with_marker(2048);
            }
            if trapping {
                rm = rm.with_trapping();
            }
            let params = SpectralParams::new(1536, 3).with_policy(rm);
            let f = Spectral::<RecurringMinimum, Blocked<W16>, _>::with_hasher(params, hasher(seed)).unwrap();
            continues(f, Spectral::from_bytes, |f, k| {
                if k % 5 == 0 && f.estimate(&(k + 1)) > 0 {
                    f.remove(&(k + 1));
                } else {
                    f.insert(&k);
                }
                u64::from(f.estimate(&k))
            }, &keys, split);
        }

        #[test]
        fn apbf((keys, split, seed) in keys(), g in 1u64..40) {
            let f = crate::Apbf::with_hasher(crate::ApbfParams::new(3, 2, g), hasher(seed)).unwrap();
            continues(f, crate::Apbf::from_bytes, |f, k| {
                let was = f.contains(&k);
                f.insert(&k);
                u64::from(was)
            }, &keys, split);
        }

        #[test]
        fn timing((keys, split, seed) in keys(), block in 1u64..5, padding in 0u64..3, layout in 0usize..3, uniform in any::<bool>()) {
            let mut params = TimingParams::new(1024, 3, 50, block, padding, 8);
            params.layout = [TimingLayout::OneBlock, TimingLayout::TwoBlocks, TimingLayout::Unblocked][layout];
            let mut f = TimingBloom::<W16, _, _>::with_hasher(params, hasher(seed)).unwrap();
            if uniform {
                f.set_stream(crate::analysis::timing::Distinct::uniform(300.0).unwrap());
            } else {
                f.set_stream(crate::analysis::timing::Distinct::zipf(300).unwrap());
            }
            continues(f, TimingBloom::from_bytes, |f, k| {
                let p = f.posterior(&k, 0.5).unwrap();
                f.insert(&k);
                p.to_bits()
            }, &keys, split);
        }
    }
}

/// States no filter can reach are the constructors' errors, whatever the
/// bytes say.
#[test]
fn impossible_states_are_refused() {
    use crate::stable::{Eviction, StableParams};
    use crate::{ReservoirBloom, ReservoirParams, StableBloom, TimingBloom, TimingParams, W8};
    let mut r =
        ReservoirBloom::with_hasher(ReservoirParams::new(2048, 3), PortableHasher::new(1)).unwrap();
    r.observe("a");
    let mut b = r.to_bytes();
    // Fields: bits 8, k 4, p_star 8, three bytes, then position and insertions.
    b[48 + 23 + 8..48 + 23 + 16].copy_from_slice(&2u64.to_le_bytes());
    assert!(matches!(
        ReservoirBloom::<_, PortableHasher>::from_bytes(&b),
        Err(Error::Parameter {
            name: "insertions",
            ..
        })
    ));
    let p = StableParams {
        cells: 1024,
        bits_per_cell: 3,
        k: 3,
        p: 4,
        eviction: Eviction::Sweep,
        layout: crate::Layout::OneBlock,
    };
    let s = StableBloom::<W8, _, _>::with_hasher(p, PortableHasher::new(1)).unwrap();
    let mut b = s.to_bytes();
    // Fields: cells 8, bits 4, k 4, p 8, two bytes, then the cursor.
    b[48 + 26..48 + 34].copy_from_slice(&1024u64.to_le_bytes());
    assert!(matches!(
        StableBloom::<W8, _, PortableHasher>::from_bytes(&b),
        Err(Error::Parameter { name: "cursor", .. })
    ));
    let t = TimingBloom::<W8, _, _>::with_hasher(
        TimingParams::new(1024, 3, 50, 4, 1, 8),
        PortableHasher::new(1),
    )
    .unwrap();
    let mut b = t.to_bytes();
    // Fields: cells 8, k 4, window, block, padding 8 each, t_omega 4, bpt 4, layout 1, then now and offset.
    b[48 + 49 + 4..48 + 49 + 12].copy_from_slice(&4u64.to_le_bytes());
    assert!(matches!(
        TimingBloom::<W8, _, PortableHasher>::from_bytes(&b),
        Err(Error::Parameter { name: "offset", .. })
    ));
}
