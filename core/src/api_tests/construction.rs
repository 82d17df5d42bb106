//! The one construction pattern of every filter, through the public API:
//! `with_storage` **zeroes** the caller's blocks (a filter built over dirty
//! memory is the empty filter `new` builds with the same seed), `restore`
//! **adopts** them (a filter's `blocks()`, with its sweep pointer or total,
//! gives back an equal filter that answers and evolves as the saved one),
//! and every error names the parameter, the value given and what is
//! allowed.
//!
//! What `restore` does not bring back, by design (the docs of each
//! `restore` say so): the Stable filter's eviction PRNG, which restarts
//! from the hasher's seed (so a restored `Eviction::Random` filter evolves
//! as the saved one would only if that one had drawn nothing yet), and
//! Trapping's traps, which start empty (`spectral::tests` checks that a
//! restored Trapping filter evolves as the saved one with its traps
//! cleared).

use std::string::ToString;
use std::vec::Vec;
use streambloom::classic::{Classic, ClassicParams};
use streambloom::hash::{mix64, seeded_hasher};
use streambloom::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, RecurringMinimum, Removable, Spectral,
    SpectralParams,
};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{Block, Error, Isa, Value, W4, W8, W16};

/// `n` blocks of non-zero garbage, different in every byte.
fn dirty(n: usize) -> Vec<Block> {
    (0..n)
        .map(|b| {
            let mut block = Block::ZERO;
            for (i, byte) in block.0.iter_mut().enumerate() {
                *byte = (mix64((b * 64 + i) as u64) as u8) | 1;
            }
            block
        })
        .collect()
}

/// A stream of keys that repeat (a few hundred distinct ones).
fn keys(n: u64, salt: u64) -> impl Iterator<Item = u64> {
    (0..n).map(move |i| mix64(i ^ salt) % 300)
}

fn stable(eviction: Eviction) -> StableParams {
    StableParams {
        cells: 4096,
        bits_per_cell: 3,
        k: 3,
        p: 6,
        eviction,
        layout: Layout::OneBlock,
    }
}

#[test]
fn classic_with_storage_zeroes_and_restore_adopts() {
    let params = ClassicParams::new(4096, 5);
    let blocks = params.blocks().unwrap();
    let fresh = Classic::new(params, 9).unwrap();
    let mut f = Classic::with_storage(params, dirty(blocks), seeded_hasher(9)).unwrap();
    assert!(f == fresh, "with_storage over dirty blocks is not empty");
    assert_eq!(f.fill_ratio(), 0.0);
    let mut buf = dirty(blocks);
    let borrowed = Classic::with_storage(params, &mut buf[..], seeded_hasher(9)).unwrap();
    assert_eq!(borrowed.blocks(), fresh.blocks());

    for key in keys(1500, 1) {
        f.insert(&key);
    }
    let mut g = Classic::restore(params, f.blocks().to_vec(), seeded_hasher(9)).unwrap();
    assert!(g == f);
    for key in keys(3000, 2) {
        assert_eq!(g.contains(&key), f.contains(&key));
        assert_eq!(g.insert(&key), f.insert(&key));
    }
    assert!(g == f);
}

/// Observes `stream` on both filters, asserting the same answers and,
/// after each, equal filters.
fn observe_alike<W: streambloom::Width, S: streambloom::Storage, T: streambloom::Storage>(
    a: &mut StableBloom<W, S>,
    b: &mut StableBloom<W, T>,
    stream: impl Iterator<Item = u64>,
) {
    for key in stream {
        assert_eq!(a.observe(&key), b.observe(&key), "key {key}");
        assert_eq!(a.blocks(), b.blocks());
        assert_eq!(a.cursor(), b.cursor());
    }
}

#[test]
fn stable_with_storage_zeroes_and_is_new() {
    for eviction in [Eviction::Random, Eviction::Sweep] {
        let params = stable(eviction);
        let blocks = params.blocks::<W4>().unwrap();
        let mut fresh = StableBloom::<W4>::new(params, 5).unwrap();
        let mut f =
            StableBloom::<W4>::with_storage(params, dirty(blocks), seeded_hasher(5)).unwrap();
        assert!(
            f == fresh,
            "{eviction:?}: with_storage over dirty blocks is not empty"
        );
        assert_eq!((f.zero_fraction(), f.cursor()), (1.0, 0));
        // The same eviction PRNG too: they evolve alike.
        observe_alike(&mut f, &mut fresh, keys(3000, 3));
        let mut buf = dirty(blocks);
        let mut borrowed =
            StableBloom::<W4, _, _>::with_storage(params, &mut buf[..], seeded_hasher(5)).unwrap();
        let mut fresh = StableBloom::<W4>::new(params, 5).unwrap();
        observe_alike(&mut borrowed, &mut fresh, keys(3000, 4));
    }
}

#[test]
fn stable_sweep_restore_answers_and_evolves_as_saved() {
    let params = stable(Eviction::Sweep);
    let mut f = StableBloom::<W4>::new(params, 5).unwrap();
    for key in keys(2500, 5) {
        f.observe(&key);
    }
    assert_ne!(
        f.cursor(),
        0,
        "a cursor of 0 would not test that it is kept"
    );
    let mut g =
        StableBloom::<W4>::restore(params, f.blocks().to_vec(), seeded_hasher(5), f.cursor())
            .unwrap();
    assert!(g == f);
    for key in keys(600, 6) {
        assert_eq!(g.contains(&key), f.contains(&key));
    }
    observe_alike(&mut g, &mut f, keys(3000, 7));
}

/// A restored `Random` filter keeps the cells (and answers every query as
/// the saved one), but its eviction PRNG restarts from the hasher: it
/// evolves as any other filter restored from the same blocks, and as the
/// saved one only when that one had drawn nothing yet.
#[test]
fn stable_random_restore_keeps_cells_and_restarts_the_prng() {
    let params = stable(Eviction::Random);
    let mut f = StableBloom::<W4>::new(params, 5).unwrap();
    for key in keys(2500, 8) {
        f.observe(&key);
    }
    let saved = f.blocks().to_vec();
    let mut g = StableBloom::<W4>::restore(params, saved.clone(), seeded_hasher(5), 0).unwrap();
    assert!(g == f);
    for key in keys(600, 9) {
        assert_eq!(g.contains(&key), f.contains(&key));
    }
    let mut h = StableBloom::<W4>::restore(params, saved, seeded_hasher(5), 0).unwrap();
    observe_alike(&mut g, &mut h, keys(3000, 10));
    // The saved filter had drawn 2500 eviction starts: from the same state
    // it now evicts elsewhere.
    let mut g =
        StableBloom::<W4>::restore(params, f.blocks().to_vec(), seeded_hasher(5), 0).unwrap();
    for key in keys(200, 11) {
        g.insert(&key);
        f.insert(&key);
    }
    assert!(g != f, "the PRNG's position was restored: update the docs");
    // Restored from a filter that has drawn nothing: the very same filter.
    let mut fresh = StableBloom::<W4>::new(params, 5).unwrap();
    let mut restored =
        StableBloom::<W4>::restore(params, fresh.blocks().to_vec(), seeded_hasher(5), 0).unwrap();
    observe_alike(&mut restored, &mut fresh, keys(3000, 12));
}

/// Inserts, removes and estimates `stream` on both filters alike.
fn count_alike<P: Removable>(
    a: &mut Spectral<P, Blocked<W16>>,
    b: &mut Spectral<P, Blocked<W16>>,
    salt: u64,
) {
    for (i, key) in keys(3000, salt).enumerate() {
        if i % 4 == 3 {
            a.remove(&key);
            b.remove(&key);
        } else {
            a.insert_n(&key, 1 + (i % 3) as u32);
            b.insert_n(&key, 1 + (i % 3) as u32);
        }
        assert_eq!(a.estimate(&key), b.estimate(&key), "{} key {key}", P::NAME);
    }
    assert!(a == b, "{}", P::NAME);
}

fn spectral_roundtrip<P: Removable>(policy: P) {
    let params = SpectralParams {
        counters: 3000,
        k: 4,
        policy,
        layout: Layout::OneBlock,
    };
    let blocks = params.blocks::<W16>().unwrap();
    let mut fresh = Spectral::<P, Blocked<W16>>::new(params.clone(), 21).unwrap();
    let mut f =
        Spectral::<P, Blocked<W16>>::with_storage(params.clone(), dirty(blocks), seeded_hasher(21))
            .unwrap();
    assert!(
        f == fresh,
        "{}: with_storage over dirty blocks is not empty",
        P::NAME
    );
    assert_eq!(f.total(), 0);
    count_alike(&mut f, &mut fresh, 13);
    let mut g = Spectral::<P, Blocked<W16>>::restore(
        params,
        f.blocks().to_vec(),
        seeded_hasher(21),
        f.total(),
    )
    .unwrap();
    assert!(g == f, "{}: restore", P::NAME);
    assert_eq!(g.total(), f.total());
    count_alike(&mut g, &mut f, 14);
}

#[test]
fn spectral_with_storage_zeroes_and_restore_adopts() {
    spectral_roundtrip(MinimumSelection);
    spectral_roundtrip(RecurringMinimum::new());
    spectral_roundtrip(RecurringMinimum::new().with_marker(4096));
    // Minimal Increase has no removals: inserts and estimates only.
    let params = SpectralParams::<MinimalIncrease>::new(3000, 4);
    let mut f = Spectral::<MinimalIncrease, Blocked<W8>>::with_storage(
        params.clone(),
        dirty(params.blocks::<W8>().unwrap()),
        seeded_hasher(2),
    )
    .unwrap();
    assert!(f == Spectral::<MinimalIncrease, Blocked<W8>>::new(params.clone(), 2).unwrap());
    for key in keys(2000, 15) {
        f.insert(&key);
    }
    let mut g = Spectral::<MinimalIncrease, Blocked<W8>>::restore(
        params,
        f.blocks().to_vec(),
        seeded_hasher(2),
        f.total(),
    )
    .unwrap();
    for key in keys(2000, 16) {
        f.insert_n(&key, 2);
        g.insert_n(&key, 2);
        assert_eq!(f.estimate(&key), g.estimate(&key));
    }
    assert!(f == g);
}

/// `restore` of storage of the wrong length, and of a sweep pointer past the
/// cells, are errors naming what is wrong; a pointer on the last cell is
/// fine.
#[test]
fn restore_rejects_what_it_cannot_adopt() {
    let length = |e: Error, expected: usize, found: usize| {
        assert_eq!(
            e,
            Error::Length {
                name: "storage",
                expected,
                found
            }
        );
        let text = e.to_string();
        for part in [
            "`storage`",
            found.to_string().as_str(),
            expected.to_string().as_str(),
        ] {
            assert!(text.contains(part), "{text:?} lacks {part:?}");
        }
    };
    let cp = ClassicParams::new(4096, 5);
    length(
        Classic::restore(cp, dirty(7), seeded_hasher(1)).unwrap_err(),
        8,
        7,
    );
    length(
        Classic::restore(cp, dirty(9), seeded_hasher(1)).unwrap_err(),
        8,
        9,
    );
    let sp = stable(Eviction::Sweep);
    length(
        StableBloom::<W4>::restore(sp, dirty(33), seeded_hasher(1), 0).unwrap_err(),
        32,
        33,
    );
    length(
        StableBloom::<W8>::restore(sp, dirty(32), seeded_hasher(1), 0).unwrap_err(),
        64,
        32,
    );
    let params = SpectralParams::<MinimumSelection>::new(3000, 4);
    length(
        Spectral::<_, Blocked<W16>>::restore(params, dirty(3), seeded_hasher(1), 0).unwrap_err(),
        94,
        3,
    );
    let rm = SpectralParams {
        counters: 3000,
        k: 4,
        policy: RecurringMinimum::new().with_marker(1024),
        layout: Layout::OneBlock,
    };
    // 63 primary and 32 secondary blocks of 16-bit counters, 2 marker blocks.
    length(
        Spectral::<_, Blocked<W16>>::restore(rm, dirty(96), seeded_hasher(1), 0).unwrap_err(),
        97,
        96,
    );

    for eviction in [Eviction::Sweep, Eviction::Random] {
        let cells = 4096;
        for cursor in [cells, cells + 1, usize::MAX] {
            let e =
                StableBloom::<W4>::restore(stable(eviction), dirty(32), seeded_hasher(1), cursor)
                    .unwrap_err();
            let Error::Parameter {
                name,
                given,
                allowed,
            } = e
            else {
                panic!("{e:?}");
            };
            assert_eq!((name, given), ("cursor", Value::from(cursor)));
            let text = e.to_string();
            for part in ["`cursor`", cursor.to_string().as_str(), allowed] {
                assert!(text.contains(part), "{text:?} lacks {part:?}");
            }
        }
        // Cells at most Max = 7 (`bits_per_cell` 3) are adopted; the dirty
        // blocks' nibbles above 7 are refused.
        let mut valid = dirty(32);
        for byte in valid.iter_mut().flat_map(|b| b.0.iter_mut()) {
            *byte &= 0x77;
        }
        assert!(
            StableBloom::<W4>::restore(stable(eviction), valid, seeded_hasher(1), cells - 1)
                .is_ok()
        );
        assert!(matches!(
            StableBloom::<W4>::restore(stable(eviction), dirty(32), seeded_hasher(1), cells - 1),
            Err(Error::Parameter {
                name: "storage",
                ..
            })
        ));
    }
    // Parameters are validated as by `new`.
    assert!(matches!(
        Classic::restore(ClassicParams::new(4096, 0), dirty(8), seeded_hasher(1)),
        Err(Error::Parameter { name: "k", .. })
    ));
}

/// The `Display` of every error kind names the parameter (or slice, or
/// resource), the value given and what is allowed.
#[test]
fn every_error_says_what_was_given_and_what_is_allowed() {
    let says = |e: Error, parts: &[&str]| {
        let text = e.to_string();
        for part in parts {
            assert!(
                text.contains(part),
                "{e:?} displays {text:?}, which lacks {part:?}"
            );
        }
    };
    let e = Classic::new(ClassicParams::new(4096, 600), 1).unwrap_err();
    let Error::Parameter { allowed, .. } = e else {
        panic!("{e:?}")
    };
    says(e, &["`k`", "600", allowed]);
    let e = StableBloom::<W4>::new(
        StableParams {
            bits_per_cell: 9,
            ..stable(Eviction::Random)
        },
        1,
    )
    .unwrap_err();
    let Error::Parameter { allowed, .. } = e else {
        panic!("{e:?}")
    };
    says(e, &["`bits_per_cell`", "9", allowed]);
    let e = ClassicParams::plan(1000, 1.5).unwrap_err();
    let Error::Parameter { allowed, .. } = e else {
        panic!("{e:?}")
    };
    says(e, &["`target_fpr`", "1.5", allowed]);

    let mut f =
        Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(3000, 4), 1).unwrap();
    let e = f.estimate_batch(&[1u32, 2, 3], &mut [0; 2]).unwrap_err();
    assert_eq!(
        e,
        Error::Length {
            name: "counts",
            expected: 3,
            found: 2
        }
    );
    says(e, &["`counts`", "2", "3"]);

    let other =
        Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(3000, 4), 2).unwrap();
    let e = f.union(&other).unwrap_err();
    says(e, &["seeds"]);

    if let Some(isa) = Isa::ALL.into_iter().find(|isa| !isa.is_available()) {
        let e = f.set_isa(isa).unwrap_err();
        assert_eq!(e, Error::Unsupported { isa: isa.name() });
        says(e, &[isa.name(), "not available", Isa::detect().name()]);
    }
    says(
        Error::Allocation { bytes: 1 << 61 },
        &[(1u64 << 61).to_string().as_str(), "fewer cells"],
    );
}
