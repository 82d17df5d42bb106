//! `from_bytes` and `view_bytes` of every filter on arbitrary input: nothing
//! panics, and whatever loads behaves — it re-encodes to bytes that load
//! to the same filter, the zero-copy view answers as the owned copy, an
//! insert is found afterwards (no false negative where the filter promises
//! none) and a count never falls below what was added (no under-count).
//! The seed corpus holds the fixtures of `core/src/format/fixtures`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use streambloom::format::Encode;
use streambloom::hash::PortableHasher as P;
use streambloom::importance::ImportanceBloom;
use streambloom::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, RecurringMinimum, Spectral,
};
use streambloom::stable::StableBloom;
use streambloom::timing::TimingBloom;
use streambloom::{Apbf, Block, Classic, ReservoirBloom, W1, W16, W2, W32, W4, W8};

/// Loads `data` as a filter by `from_bytes` and by `view_bytes` over an
/// aligned copy; checks they agree and that the loaded filter re-encodes
/// to bytes that load to it again; then runs `exercise` on it.
macro_rules! check {
    ($data:expr, $owned:ty, $view:ty, |$f:ident, $key:ident| $answer:expr, |$g:ident| $exercise:expr) => {{
        let data: &[u8] = $data;
        let owned = <$owned>::from_bytes(data);
        let mut aligned = vec![Block::ZERO; data.len().div_ceil(64)];
        let buf = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut aligned)[..data.len()];
        buf.copy_from_slice(data);
        let view = <$view>::view_bytes(buf);
        assert_eq!(
            owned.is_ok(),
            view.is_ok(),
            "{:?} / {:?}",
            owned.as_ref().err(),
            view.as_ref().err()
        );
        if let (Ok(mut $g), Ok(view)) = (owned, view) {
            for $key in 0u32..16 {
                let from_copy = {
                    let $f = &$g;
                    $answer
                };
                let from_view = {
                    let $f = &view;
                    $answer
                };
                assert_eq!(from_copy, from_view, "view and copy disagree on {}", $key);
            }
            let again = $g.to_bytes();
            let reloaded =
                <$owned>::from_bytes(&again).expect("a loaded filter re-encodes to valid bytes");
            assert_eq!(reloaded.to_bytes(), again);
            $exercise;
        }
    }};
}

fuzz_target!(|input: (u8, Vec<u8>)| {
    let (which, data) = input;
    let data = &data[..];
    match which % 13 {
        0 => {
            check!(data, Classic<Vec<Block>, P>, Classic<&mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
            })
        }
        1 => {
            check!(data, StableBloom<W1, Vec<Block>, P>, StableBloom<W1, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
            })
        }
        2 => {
            check!(data, StableBloom<W4, Vec<Block>, P>, StableBloom<W4, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
            })
        }
        3 => {
            check!(data, StableBloom<W8, Vec<Block>, P>, StableBloom<W8, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.observe(&7u32);
                assert!(g.contains(&7u32));
            })
        }
        4 => {
            check!(data, ImportanceBloom<W8, Vec<Block>, P>, ImportanceBloom<W8, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                let _ = g.observe(&7u32, 1);
            })
        }
        5 => {
            check!(data, ReservoirBloom<Vec<Block>, P>, ReservoirBloom<&mut [Block], P>, |f, key| f.contains(&key), |g| {
                for k in 0..64u32 {
                    g.observe(&k);
                }
            })
        }
        6 => {
            check!(data, Spectral<MinimumSelection, Blocked<W16>, P>, Spectral<MinimumSelection, Blocked<W16, &mut [Block]>, P>, |f, key| f.estimate(&key), |g| {
                let before = g.estimate(&7u32);
                g.insert_n(&7u32, 3);
                assert!(g.estimate(&7u32) >= before.saturating_add(3).min(u16::MAX.into()));
            })
        }
        7 => {
            check!(data, Spectral<MinimalIncrease, Blocked<W8>, P>, Spectral<MinimalIncrease, Blocked<W8, &mut [Block]>, P>, |f, key| f.estimate(&key), |g| {
                let before = g.estimate(&7u32);
                g.insert_n(&7u32, 3);
                assert!(g.estimate(&7u32) >= before.saturating_add(3).min(u8::MAX.into()));
            })
        }
        8 => {
            check!(data, Spectral<RecurringMinimum, Blocked<W32>, P>, Spectral<RecurringMinimum, Blocked<W32, &mut [Block]>, P>, |f, key| f.estimate(&key), |g| {
                g.insert(&7u32);
                g.remove(&7u32);
            })
        }
        9 => {
            check!(data, TimingBloom<W8, Vec<Block>, P>, TimingBloom<W8, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
                let _ = g.posterior(&7u32, 0.5);
            })
        }
        10 => {
            check!(data, TimingBloom<W16, Vec<Block>, P>, TimingBloom<W16, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
            })
        }
        11 => {
            check!(data, Apbf<Vec<Block>, P>, Apbf<&mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
                g.next_generation();
                assert!(g.contains(&7u32), "l >= 1 keeps an item one generation");
            })
        }
        _ => {
            check!(data, StableBloom<W2, Vec<Block>, P>, StableBloom<W2, &mut [Block], P>, |f, key| f.contains(&key), |g| {
                g.insert(&7u32);
                assert!(g.contains(&7u32));
            })
        }
    }
});
