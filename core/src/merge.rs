//! Merging filters built apart — on many machines, threads or partitions —
//! into the filter of their combined stream, where the mathematics allows
//! it. Each filter's [`Merge`] impl states its rule:
//!
//! | filter | merge | why |
//! |---|---|---|
//! | [`Classic`](crate::Classic) | bitwise OR | a bit is set iff one of the inserts set it in either filter: exactly the filter of both streams |
//! | [`StableBloom`](crate::StableBloom), [`ImportanceBloom`](crate::ImportanceBloom) | cell-wise max | each cell holds the freshest (most important) recording of either side; the stationary analysis no longer applies exactly, but no item either side holds is lost |
//! | [`Spectral`](crate::Spectral) | counter-wise saturating sum ([`Spectral::union`](crate::Spectral::union)) | §5.3: the counters of a multiset union |
//! | [`TimingBloom`](crate::TimingBloom) | the fresher timer of each cell, at equal clocks only | a timer's age means something only against one clock `T_+` |
//! | [`ReservoirBloom`](crate::ReservoirBloom) | refused | the union of two samples is not a sample of the combined stream |
//!
//! Both filters must have equal parameters and the same hasher and seeds
//! (compared by hashing fixed keys), or the merge is
//! [`Error::Incompatible`] and changes nothing.

use crate::hash::{self, mix64};
use crate::{Error, Result, Width};
use core::hash::BuildHasher;
use streambloom_kernels::Block;

/// A filter that absorbs another built on another part of the stream (see
/// the [module docs](self) for each filter's rule).
///
/// ```
/// use streambloom::{Classic, ClassicParams, Merge};
/// let mut a = Classic::new(ClassicParams::new(4096, 4), 7)?;
/// let mut b = Classic::new(ClassicParams::new(4096, 4), 7)?;
/// a.insert("from a");
/// b.insert("from b");
/// a.merge(&b)?;
/// assert!(a.contains("from a") && a.contains("from b"));
/// let other_seed = Classic::new(ClassicParams::new(4096, 4), 8)?;
/// assert!(a.merge(&other_seed).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub trait Merge {
    /// Absorbs `other`; on error (parameters, hasher or state that do not
    /// match, or a filter that cannot merge) nothing changes.
    fn merge(&mut self, other: &Self) -> Result<()>;
}

/// A value that differs between hashers with different algorithms or
/// seeds: four fixed keys hashed and mixed.
pub(crate) fn fingerprint<H: BuildHasher>(hasher: &H) -> u64 {
    (0u64..4).fold(0, |acc, i| {
        mix64(acc ^ hash::hash_key(hasher, &(0x5B1F_u64 ^ i)))
    })
}

/// [`Error::Incompatible`] unless `same`.
pub(crate) fn require(same: bool, what: &'static str) -> Result<()> {
    if same {
        Ok(())
    } else {
        Err(Error::Incompatible { what })
    }
}

/// Sets each cell of `dst` to `op(dst cell, src cell)`: cells of `W` bits,
/// packed little-endian in each block ([`Block`]).
pub(crate) fn combine_cells<W: Width>(
    dst: &mut [Block],
    src: &[Block],
    op: impl Fn(u32, u32) -> u32,
) {
    let bits = W::BITS as usize;
    for (d, s) in dst.iter_mut().zip(src) {
        if bits >= 8 {
            let bytes = bits / 8;
            for (dc, sc) in d.0.chunks_exact_mut(bytes).zip(s.0.chunks_exact(bytes)) {
                let mut a = [0u8; 4];
                let mut b = [0u8; 4];
                a[..bytes].copy_from_slice(dc);
                b[..bytes].copy_from_slice(sc);
                let v = op(u32::from_le_bytes(a), u32::from_le_bytes(b));
                dc.copy_from_slice(&v.to_le_bytes()[..bytes]);
            }
        } else {
            let mask = (1u8 << bits) - 1;
            for (db, &sb) in d.0.iter_mut().zip(&s.0) {
                let mut out = 0u8;
                for shift in (0..8).step_by(bits) {
                    let a = u32::from((*db >> shift) & mask);
                    let b = u32::from((sb >> shift) & mask);
                    out |= (op(a, b) as u8 & mask) << shift;
                }
                *db = out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Cells;
    use crate::{W1, W2, W4, W8, W16, W32};

    /// Against cell-by-cell `get`/`set` on every width.
    fn matches_cells<W: Width>() {
        let n = 3;
        let fill = |seed: u64| {
            let mut blocks = std::vec![Block::ZERO; n];
            let mut x = seed;
            for b in &mut blocks {
                for byte in &mut b.0 {
                    x = mix64(x.wrapping_add(1));
                    *byte = x as u8;
                }
            }
            blocks
        };
        let (a, b) = (fill(1), fill(2));
        let mut got = a.clone();
        combine_cells::<W>(&mut got, &b, u32::max);
        let ca = Cells::<W, _>::new(a, n).unwrap();
        let cb = Cells::<W, _>::new(b, n).unwrap();
        let cg = Cells::<W, _>::new(got, n).unwrap();
        for i in 0..ca.cells() {
            assert_eq!(
                cg.get(i),
                Some(ca.get(i).unwrap().max(cb.get(i).unwrap())),
                "W{} cell {i}",
                W::BITS
            );
        }
    }

    #[test]
    fn combine_is_cell_wise_on_every_width() {
        matches_cells::<W1>();
        matches_cells::<W2>();
        matches_cells::<W4>();
        matches_cells::<W8>();
        matches_cells::<W16>();
        matches_cells::<W32>();
    }

    mod filters {
        //! Each filter's merge against what its rule promises, on random
        //! streams split between two filters.

        use crate::spectral::{MinimalIncrease, MinimumSelection, RecurringMinimum};
        use crate::stable::{Eviction, StableParams};
        use crate::timing::TimingParams;
        use crate::{
            Classic, ClassicParams, Error, Layout, Merge, ReservoirBloom, ReservoirParams,
            Spectral, SpectralParams, StableBloom, TimingBloom, W4, W8,
        };
        use proptest::prelude::*;
        use std::collections::HashMap;
        use std::vec::Vec;

        fn split() -> impl Strategy<Value = Vec<(u64, bool)>> {
            proptest::collection::vec((0u64..500, any::<bool>()), 0..crate::scaled(400))
        }

        proptest! {
            #![proptest_config(crate::proptest_config(32, 2, 0x3E76E))]

            /// OR is exact: the merged filter is the filter of both streams.
            #[test]
            fn classic_or_is_the_filter_of_both_streams(items in split(), two in any::<bool>()) {
                let layout = if two { Layout::TwoBlocks } else { Layout::OneBlock };
                let p = ClassicParams::new(2048, 4).with_layout(layout);
                let (mut a, mut b, mut both) = (Classic::new(p, 3).unwrap(), Classic::new(p, 3).unwrap(), Classic::new(p, 3).unwrap());
                for &(k, left) in &items {
                    if left { a.insert(&k) } else { b.insert(&k) };
                    both.insert(&k);
                }
                a.merge(&b).unwrap();
                prop_assert_eq!(a, both);
            }

            /// Nothing either side holds is lost.
            #[test]
            fn stable_max_keeps_both_sides(items in split()) {
                let p = StableParams { cells: 1024, bits_per_cell: 3, k: 3, p: 2, eviction: Eviction::Random, layout: Layout::OneBlock };
                let (mut a, mut b) = (StableBloom::<W4>::new(p, 3).unwrap(), StableBloom::<W4>::new(p, 3).unwrap());
                for &(k, left) in &items {
                    if left { a.observe(&k) } else { b.observe(&k) };
                }
                let before = a.clone();
                a.merge(&b).unwrap();
                for k in 0..500u64 {
                    prop_assert!(!(before.contains(&k) || b.contains(&k)) || a.contains(&k));
                }
            }

            /// Counts add: Minimum Selection's merged estimate is the
            /// estimate of the filter of both streams, and never below the
            /// true count; Minimal Increase's never below the true count.
            #[test]
            fn spectral_sum_never_under_counts(items in split()) {
                let p = SpectralParams::<MinimumSelection>::new(1024, 3);
                let (mut a, mut b, mut both) = (
                    Spectral::<MinimumSelection>::new(p.clone(), 3).unwrap(),
                    Spectral::<MinimumSelection>::new(p.clone(), 3).unwrap(),
                    Spectral::<MinimumSelection>::new(p, 3).unwrap(),
                );
                let q = SpectralParams::<MinimalIncrease>::new(1024, 3);
                let (mut c, mut d) = (Spectral::<MinimalIncrease>::new(q.clone(), 3).unwrap(), Spectral::<MinimalIncrease>::new(q, 3).unwrap());
                let mut truth: HashMap<u64, u32> = HashMap::new();
                for &(k, left) in &items {
                    if left { a.insert(&k); c.insert(&k) } else { b.insert(&k); d.insert(&k) };
                    both.insert(&k);
                    *truth.entry(k).or_default() += 1;
                }
                a.merge(&b).unwrap();
                c.merge(&d).unwrap();
                prop_assert_eq!(&a, &both);
                for (k, &n) in &truth {
                    prop_assert!(a.estimate(k) >= n && c.estimate(k) >= n);
                }
            }

            /// At equal clocks every item either side holds in its window
            /// stays held.
            #[test]
            fn timing_fresher_keeps_both_windows(items in split(), block in 1u64..4) {
                let p = TimingParams::new(1024, 3, 60, block, 1, 8);
                let (mut a, mut b) = (TimingBloom::<W8>::new(p, 3).unwrap(), TimingBloom::<W8>::new(p, 3).unwrap());
                for &(k, left) in &items {
                    // Both clocks advance: the other side inserts a key of its own.
                    if left { a.insert(&k); b.insert(&(k + 10_000)) } else { b.insert(&k); a.insert(&(k + 10_000)) };
                }
                let (sa, sb) = (a.clone(), b.clone());
                a.merge(&b).unwrap();
                for k in (0..500u64).chain(10_000..10_500) {
                    prop_assert!(!(sa.contains(&k) || sb.contains(&k)) || a.contains(&k), "key {}", k);
                }
            }
        }

        #[test]
        fn mismatches_are_refused_and_change_nothing() {
            let p = ClassicParams::new(2048, 4);
            let mut a = Classic::new(p, 3).unwrap();
            a.insert("a");
            let saved = a.clone();
            let e = a
                .merge(&Classic::new(ClassicParams::new(2048, 5), 3).unwrap())
                .unwrap_err();
            assert_eq!(e, Error::Incompatible { what: "parameters" });
            let e = a.merge(&Classic::new(p, 4).unwrap()).unwrap_err();
            assert_eq!(
                e,
                Error::Incompatible {
                    what: "hasher or seeds"
                }
            );
            assert_eq!(a, saved);
            let mut t = TimingBloom::<W8>::new(TimingParams::new(1024, 3, 60, 1, 1, 8), 3).unwrap();
            let mut u = t.clone();
            u.insert("u");
            assert!(t.merge(&u).is_err());
            let mut r = ReservoirBloom::new(ReservoirParams::new(2048, 3), 1).unwrap();
            assert!(r.merge(&r.clone()).is_err());
            let rm =
                SpectralParams::new(1536, 3).with_policy(RecurringMinimum::new().with_trapping());
            let mut s = Spectral::<RecurringMinimum>::new(rm, 1).unwrap();
            assert!(s.merge(&s.clone()).is_err());
        }
    }
}
