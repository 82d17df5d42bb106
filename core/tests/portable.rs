//! What must be the same on every target CI runs (x86_64 natively,
//! aarch64 under qemu, big-endian s390x under Miri), through the public
//! API: the portable hash's recorded values, and encoded filters kept in
//! the repository (`core/src/format/fixtures/NAME.sbf`, one per filter
//! kind and policy), so a change to the format, a hash or a filter's
//! placement is a decision and not an accident: each fixture must still
//! load, encode back to the same bytes, equal what its recipe builds
//! today, and answer the probes as recorded (`fixtures/NAME.answers`).
//! A filter written on x86_64 is so checked to answer identically on the
//! others, and one built there (its kernels NEON on aarch64) to encode
//! to the same bytes.
//!
//! An integration test, not a unit test, so the targets CI emulates build
//! only these recipes and not every unit test of the crate (the aarch64
//! run's build of the core's unit tests was most of its step).
//!
//! After a deliberate change, rewrite the fixtures with
//! `cargo test -p streambloom --test portable write_fixtures -- --ignored`
//! (and say why in the commit: old bytes stop loading or answer
//! differently).

use core::hash::BuildHasher;
use streambloom::format::Encode;
use streambloom::hash::PortableHasher;
use streambloom::importance::{self, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::spectral::{Blocked, MinimalIncrease, MinimumSelection, RecurringMinimum};
use streambloom::stable::{Eviction, StableParams};
use streambloom::timing::TimingParams;
use streambloom::{
    Classic, ClassicParams, Layout, ReservoirBloom, ReservoirParams, Spectral, SpectralParams,
    StableBloom, TimingBloom, W4, W8, W16, W32,
};

/// Items the recipes insert, and probes: half of them were inserted.
const ITEMS: u64 = 200;
const PROBES: u64 = 64;

fn h() -> PortableHasher {
    PortableHasher::new(0x00F1_C57E_5EED)
}

/// One fixture: its file name, bytes, recorded answers, and how today's
/// build makes and reads it.
struct Fixture {
    name: &'static str,
    bytes: &'static [u8],
    answers: &'static str,
    /// The recipe's filter, encoded.
    build: fn() -> Vec<u8>,
    /// Loads bytes and answers the probes `ITEMS - PROBES/2 ..`.
    answer: fn(&[u8]) -> streambloom::Result<Vec<u64>>,
}

fn probes() -> impl Iterator<Item = u64> {
    ITEMS - PROBES / 2..ITEMS + PROBES / 2
}

macro_rules! fixture {
    ($name:literal, $build:expr, $load:expr, $answer:expr) => {
        Fixture {
            name: $name,
            bytes: include_bytes!(concat!("../src/format/fixtures/", $name, ".sbf")),
            answers: include_str!(concat!("../src/format/fixtures/", $name, ".answers")),
            build: || $build.to_bytes(),
            answer: |b| {
                let f = $load(b)?;
                probes().map(|k| $answer(&f, k)).collect()
            },
        }
    };
}

fn classic() -> Classic<Vec<streambloom::Block>, PortableHasher> {
    let mut f = Classic::with_hasher(
        ClassicParams::new(4096, 4).with_layout(Layout::TwoBlocks),
        h(),
    )
    .unwrap();
    for i in 0..ITEMS {
        f.insert(&i);
    }
    f
}

fn stable() -> StableBloom<W4, Vec<streambloom::Block>, PortableHasher> {
    let params = StableParams {
        cells: 1024,
        bits_per_cell: 3,
        k: 3,
        p: 4,
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
    };
    let mut f = StableBloom::with_hasher(params, h()).unwrap();
    (0..ITEMS).for_each(|i| {
        f.observe(&i);
    });
    f
}

/// Two blocks and interleaved eviction over several groups (the last one
/// short: 20 blocks in groups of 8).
fn stable_interleaved() -> StableBloom<W8, Vec<streambloom::Block>, PortableHasher> {
    let params = StableParams {
        cells: 20 * 64,
        bits_per_cell: 3,
        k: 4,
        p: 21,
        eviction: Eviction::Interleaved,
        layout: Layout::TwoBlocks,
    };
    let mut f = StableBloom::with_hasher(params, h()).unwrap();
    (0..ITEMS).for_each(|i| {
        f.observe(&i);
    });
    f
}

fn importance() -> ImportanceBloom<W8, Vec<streambloom::Block>, PortableHasher> {
    let params = ImportanceParams {
        cells: 512,
        bits_per_cell: 3,
        k: 3,
        p: 3,
        eviction: importance::Eviction::ByValue,
        layout: Layout::OneBlock,
        insert: Insert::ByImportance,
        map: ImportanceMap::Linear { top: 7 },
    };
    let mut f = ImportanceBloom::with_hasher(params, h()).unwrap();
    (0..ITEMS).for_each(|i| {
        f.observe(&i, (i % 7 + 1) as u32).unwrap();
    });
    f
}

fn reservoir() -> ReservoirBloom<Vec<streambloom::Block>, PortableHasher> {
    let mut f = ReservoirBloom::with_hasher(ReservoirParams::new(2048, 3), h()).unwrap();
    (0..ITEMS).for_each(|i| {
        f.observe(&i);
    });
    f
}

fn spectral() -> Spectral<MinimumSelection, Blocked<W16>, PortableHasher> {
    let mut f = Spectral::with_hasher(SpectralParams::new(1024, 3), h()).unwrap();
    (0..ITEMS).for_each(|i| f.insert_n(&i, (i % 5 + 1) as u32));
    f
}

fn minimal() -> Spectral<MinimalIncrease, Blocked<W8>, PortableHasher> {
    let mut f = Spectral::with_hasher(SpectralParams::new(1024, 3), h()).unwrap();
    (0..ITEMS).for_each(|i| f.insert_n(&i, (i % 5 + 1) as u32));
    f
}

fn recurring() -> Spectral<RecurringMinimum, Blocked<W32>, PortableHasher> {
    let rm = RecurringMinimum::new().with_marker(1024).with_trapping();
    let mut f = Spectral::with_hasher(SpectralParams::new(768, 3).with_policy(rm), h()).unwrap();
    (0..ITEMS).for_each(|i| f.insert_n(&i, (i % 5 + 1) as u32));
    (0..ITEMS / 4).for_each(|i| f.remove(&i));
    f
}

fn timing() -> TimingBloom<W8, Vec<streambloom::Block>, PortableHasher> {
    let mut f = TimingBloom::with_hasher(TimingParams::new(1024, 3, 100, 4, 1, 8), h()).unwrap();
    (0..ITEMS).for_each(|i| f.insert(&i));
    f
}

fn apbf() -> streambloom::Apbf<Vec<streambloom::Block>, PortableHasher> {
    let mut f =
        streambloom::Apbf::with_hasher(streambloom::ApbfParams::new(4, 3, 40), h()).unwrap();
    for i in 0..ITEMS {
        f.insert(&i);
    }
    f
}

fn fixtures() -> [Fixture; 10] {
    [
        fixture!(
            "classic",
            classic(),
            Classic::<_, PortableHasher>::from_bytes,
            |f: &Classic<_, _>, k| Ok(u64::from(f.contains(&k)))
        ),
        fixture!(
            "stable",
            stable(),
            StableBloom::<W4, _, PortableHasher>::from_bytes,
            |f: &StableBloom<W4, _, _>, k| Ok(u64::from(f.contains(&k)))
        ),
        fixture!(
            "stable-interleaved",
            stable_interleaved(),
            StableBloom::<W8, _, PortableHasher>::from_bytes,
            |f: &StableBloom<W8, _, _>, k| Ok(u64::from(f.contains(&k)))
        ),
        fixture!(
            "importance",
            importance(),
            ImportanceBloom::<W8, _, PortableHasher>::from_bytes,
            |f: &ImportanceBloom<W8, _, _>, k| Ok(u64::from(f.contains(&k)))
        ),
        fixture!(
            "reservoir",
            reservoir(),
            ReservoirBloom::<_, PortableHasher>::from_bytes,
            |f: &ReservoirBloom<_, _>, k| Ok(u64::from(f.contains(&k)))
        ),
        fixture!(
            "spectral-ms",
            spectral(),
            Spectral::<MinimumSelection, Blocked<W16>, PortableHasher>::from_bytes,
            |f: &Spectral<MinimumSelection, Blocked<W16>, _>, k| Ok(u64::from(f.estimate(&k)))
        ),
        fixture!(
            "spectral-mi",
            minimal(),
            Spectral::<MinimalIncrease, Blocked<W8>, PortableHasher>::from_bytes,
            |f: &Spectral<MinimalIncrease, Blocked<W8>, _>, k| Ok(u64::from(f.estimate(&k)))
        ),
        fixture!(
            "spectral-rm",
            recurring(),
            Spectral::<RecurringMinimum, Blocked<W32>, PortableHasher>::from_bytes,
            |f: &Spectral<RecurringMinimum, Blocked<W32>, _>, k| Ok(u64::from(f.estimate(&k)))
        ),
        fixture!(
            "timing",
            timing(),
            TimingBloom::<W8, _, PortableHasher>::from_bytes,
            |f: &TimingBloom<W8, _, _>, k| f.posterior(&k, 0.5).map(f64::to_bits)
        ),
        fixture!(
            "apbf",
            apbf(),
            streambloom::Apbf::<_, PortableHasher>::from_bytes,
            |f: &streambloom::Apbf<_, _>, k| Ok(u64::from(f.contains(&k)))
        ),
    ]
}

fn answers_text(answers: &[u64]) -> String {
    let mut s = String::new();
    for a in answers {
        s.push_str(&format!("{a}\n"));
    }
    s
}

#[test]
fn fixtures_load_and_answer_as_recorded() {
    for fx in fixtures() {
        assert_eq!(
            (fx.build)(),
            fx.bytes,
            "{}: today's build encodes differently",
            fx.name
        );
        assert_eq!(
            answers_text(&(fx.answer)(fx.bytes).unwrap()),
            fx.answers,
            "{}: answers differ",
            fx.name
        );
    }
}

/// Damaged fixtures: every truncation is refused, and every byte of
/// every fixture changed (three ways) loads or is refused, never panics;
/// what loads answers the probes without panicking either. These are
/// hand-picked malformed inputs for every filter kind; the `bytes` fuzz
/// target explores further.
#[test]
#[cfg_attr(miri, ignore = "about 40 000 loads: minutes under Miri")]
fn damaged_fixtures_are_refused_or_load_never_panic() {
    for fx in fixtures() {
        for cut in 0..fx.bytes.len() {
            assert!(
                (fx.answer)(&fx.bytes[..cut]).is_err(),
                "{}: a truncation to {cut} bytes loaded",
                fx.name
            );
        }
        let mut b = fx.bytes.to_vec();
        for at in 0..b.len() {
            for flip in [0x01u8, 0x80, 0xFF] {
                b[at] ^= flip;
                let _ = (fx.answer)(&b);
                b[at] ^= flip;
            }
        }
    }
}

/// Rewrites the fixtures from the recipes (see the module docs).
#[test]
#[ignore = "writes files: run by hand after a deliberate format change"]
fn write_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/format/fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    for fx in fixtures() {
        let bytes = (fx.build)();
        std::fs::write(dir.join(format!("{}.sbf", fx.name)), &bytes).unwrap();
        let answers = answers_text(&(fx.answer)(&bytes).unwrap());
        std::fs::write(dir.join(format!("{}.answers", fx.name)), answers).unwrap();
    }
}

/// Hashes fixed on one target and checked on every other one CI runs
/// (x86_64, aarch64 under qemu, s390x under Miri): if any differs,
/// filters written on one cannot be read on another.
#[test]
fn same_hashes_on_every_target() {
    let h = PortableHasher::new(0x5EED);
    let got = [
        h.hash_one(()),
        h.hash_one(42u32),
        h.hash_one(42usize),
        h.hash_one(-1i16),
        h.hash_one("10.0.0.1:443"),
        h.hash_one((7u8, 'x', 1u64, 2u64)),
        h.hash_one([0xABu8; 200].as_slice()),
    ];
    assert_eq!(
        got,
        [
            0x52A2_D296_AA03_1B06,
            0x934B_B348_C9B5_2C92,
            0x46E1_D22F_2FB2_2CAE,
            0xB4A4_EF38_7CB7_24F5,
            0x8DF8_A7D0_C083_7281,
            0x9159_BE78_9CC8_FBB8,
            0x5AC4_401C_FD84_51B9,
        ]
    );
}
