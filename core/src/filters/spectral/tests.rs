//! Property tests of the Spectral filters against exact `HashMap` models.

use super::blocked::{MARKER_SALT, SECONDARY_SALT};
use super::*;
use crate::hash::{self, Layout, Placement, mix64};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::collections::HashMap;
use streambloom_kernels::{Block, Mask, W1, W4, cell};

fn config() -> Config {
    crate::proptest_config(48, 4, 0x05EC_70A1)
}

/// A stream of (key, r) insertions over a small key space.
fn stream() -> impl Strategy<Value = Vec<(u16, u32)>> {
    proptest::collection::vec((0u16..150, 1u32..4), 0..crate::scaled(600))
}

fn rm() -> RecurringMinimum {
    RecurringMinimum::new()
}

fn rm_marker() -> RecurringMinimum {
    RecurringMinimum::new().with_marker(8192)
}

fn model(s: &[(u16, u32)]) -> HashMap<u16, u32> {
    let mut m = HashMap::new();
    for &(k, r) in s {
        *m.entry(k).or_insert(0) += r;
    }
    m
}

fn never_under<P: Policy>(p: P, counters: usize, s: &[(u16, u32)]) {
    let mut f = Spectral::<P, Blocked<W16>>::new(
        SpectralParams {
            counters,
            k: 4,
            policy: p,
            layout: Layout::OneBlock,
        },
        11,
    )
    .unwrap();
    for &(k, r) in s {
        f.insert_n(&k, r);
    }
    for (k, &n) in &model(s) {
        assert!(
            f.estimate(k) >= n,
            "{}: {k} {} < {n}",
            P::NAME,
            f.estimate(k)
        );
        assert!(f.at_least(k, n));
    }
}

/// Recurring Minimum's primary is a Minimum Selection filter: its estimate
/// is never above the MS estimate of the same stream.
fn never_above_minimum_selection(p: RecurringMinimum, counters: usize, s: &[(u16, u32)]) {
    let mut rm = Spectral::<RecurringMinimum, Blocked<W16>>::new(
        SpectralParams {
            counters,
            k: 4,
            policy: p,
            layout: Layout::OneBlock,
        },
        11,
    )
    .unwrap();
    let mut ms = Spectral::<MinimumSelection, Blocked<W16>>::new(
        SpectralParams::new(rm.counters(), 4).with_layout(Layout::OneBlock),
        11,
    )
    .unwrap();
    for &(k, r) in s {
        rm.insert_n(&k, r);
        ms.insert_n(&k, r);
    }
    for k in 0u16..150 {
        assert!(rm.estimate(&k) <= ms.estimate(&k));
        assert_eq!(
            rm.primary_minimum_hash(rm.hash(&k)),
            ms.primary_minimum_hash(ms.hash(&k))
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn inserts_never_under_estimate(s in stream(), counters in 96usize..2048) {
        never_under(MinimumSelection, counters, &s);
        never_under(MinimalIncrease, counters, &s);
        never_under(rm_marker(), counters.max(200), &s);
        never_above_minimum_selection(rm(), counters.max(200), &s);
        never_above_minimum_selection(rm_marker(), counters.max(200), &s);
    }

    #[test]
    fn deletions_of_present_items_never_under_estimate(
        s in stream(),
        dels in proptest::collection::vec((0usize..600, 1u32..4), 0..crate::scaled(200)),
        counters in 200usize..2048,
    ) {
        fn run<P: Removable>(p: P, counters: usize, s: &[(u16, u32)], dels: &[(usize, u32)]) {
            let mut f = Spectral::<P, Blocked<W16>>::new(SpectralParams { counters, k: 4, policy: p, layout: Layout::OneBlock }, 3).unwrap();
            let mut m = model(s);
            for &(k, r) in s {
                f.insert_n(&k, r);
            }
            for &(i, r) in dels {
                let Some(&(k, _)) = s.get(i) else { continue };
                let have = m.get_mut(&k).unwrap();
                let r = r.min(*have);
                *have -= r;
                f.remove_n(&k, r);
            }
            for (k, &n) in &m {
                assert!(f.estimate(k) >= n, "{}: {k} {} < {n}", P::NAME, f.estimate(k));
            }
            assert_eq!(f.total(), m.values().map(|&v| u64::from(v)).sum::<u64>());
        }
        run(MinimumSelection, counters, &s, &dels);
        run(rm_marker(), counters, &s, &dels);
    }

    #[test]
    fn batches_equal_item_by_item(
        s in stream(),
        // Both sides of PREFETCH_MIN_BYTES (in 16-bit counters): the
        // plain loop and the prefetching one.
        counters in prop_oneof![96usize..2048, PREFETCH_COUNTERS..PREFETCH_COUNTERS + 4000],
    ) {
        fn run<P: Policy + Clone>(p: P, counters: usize, s: &[(u16, u32)]) -> core::result::Result<(), TestCaseError> {
            let mut one = Spectral::<P, Blocked<W16>>::new(SpectralParams { counters, k: 5, policy: p, layout: Layout::OneBlock }, 3).unwrap();
            let mut batched = one.clone();
            let hashes: Vec<u64> = s.iter().map(|(key, _)| one.hash(key)).collect();
            hashes.iter().for_each(|&h| one.insert_hash(h));
            batched.insert_batch_hash(&hashes);
            prop_assert_eq!(batched.store().blocks(), one.store().blocks());
            let mut counts = alloc::vec![0; hashes.len()];
            batched.estimate_batch_hash(&hashes, &mut counts).unwrap();
            let want: Vec<u32> = hashes.iter().map(|&h| one.estimate_hash(h)).collect();
            prop_assert_eq!(counts, want);
            prop_assert!(batched.estimate_batch_hash(&hashes, &mut []).is_err() || hashes.is_empty());
            Ok(())
        }
        run(MinimumSelection, counters, &s)?;
        run(MinimalIncrease, counters, &s)?;
        run(rm(), counters, &s)?;
        run(rm_marker(), counters, &s)?;
    }

    #[test]
    fn minimum_selection_union_is_the_filter_of_both_streams(a in stream(), b in stream()) {
        let mut fa = Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(1000, 4), 5).unwrap();
        let mut fb = fa.clone();
        let mut both = fa.clone();
        for &(k, r) in &a { fa.insert_n(&k, r); both.insert_n(&k, r); }
        for &(k, r) in &b { fb.insert_n(&k, r); both.insert_n(&k, r); }
        fa.union(&fb).unwrap();
        prop_assert_eq!(fa.store().blocks(), both.store().blocks());
        prop_assert_eq!(fa.total(), both.total());
    }

    #[test]
    fn unions_and_joins_never_under_estimate(a in stream(), b in stream()) {
        fn run<P: Policy>(p: P, a: &[(u16, u32)], b: &[(u16, u32)]) {
            let mut fa = Spectral::<P, Blocked<W32>>::new(SpectralParams { counters: 1200, k: 4, policy: p, layout: Layout::OneBlock }, 5).unwrap();
            let mut fb = fa.clone();
            for &(k, r) in a { fa.insert_n(&k, r); }
            for &(k, r) in b { fb.insert_n(&k, r); }
            let mut joined = fa.clone();
            joined.join(&fb).unwrap();
            fa.union(&fb).unwrap();
            let (ma, mb) = (model(a), model(b));
            for k in ma.keys().chain(mb.keys()) {
                let (x, y) = (ma.get(k).copied().unwrap_or(0), mb.get(k).copied().unwrap_or(0));
                assert!(fa.estimate(k) >= x + y, "{} union", P::NAME);
                assert!(joined.estimate(k) >= x * y, "{} join", P::NAME);
            }
            // A filter updated after a union keeps the guarantee (Recurring
            // Minimum keeps it right after the union, where it answers from
            // the summed primary; later moves into its crowded secondary
            // are subject to the coincidence its docs describe).
            if P::NAME == RecurringMinimum::NAME { return; }
            for &(k, r) in a { fa.insert_n(&k, r); }
            for (k, &x) in &ma {
                assert!(fa.estimate(k) >= 2 * x + mb.get(k).copied().unwrap_or(0), "{} after union", P::NAME);
            }
        }
        run(MinimumSelection, &a, &b);
        run(MinimalIncrease, &a, &b);
        run(rm(), &a, &b);
        run(rm_marker(), &a, &b);
    }

    /// A sliding window against a deque of its items: no estimate below
    /// the deque's count (for Minimum Selection and Recurring Minimum with
    /// `B_f`), and once a window of fresh keys has pushed the old ones out,
    /// an old key with a counter that no key in the window shares counts 0
    /// (in a large filter, almost every old key).
    #[test]
    fn window_matches_a_deque(keys in proptest::collection::vec(0u16..60, 0..crate::scaled(500)), window in 1usize..80) {
        fn run<P: Removable>(p: P, counters: usize, one_sided: bool, keys: &[u16], window: usize) {
            let f = Spectral::<P, Blocked<W16>>::new(SpectralParams { counters, k: 4, policy: p, layout: Layout::OneBlock }, 9).unwrap();
            let mut w = SlidingWindow::new(f, window).unwrap();
            let mut q = VecDeque::new();
            let count = |q: &VecDeque<u16>, k: u16| q.iter().filter(|&&x| x == k).count() as u32;
            for &k in keys {
                w.insert(&k);
                q.push_back(k);
                if q.len() > window { q.pop_front(); }
                if one_sided {
                    assert!(w.estimate(&k) >= count(&q, k), "{} {k}", P::NAME);
                }
            }
            assert_eq!(w.len(), q.len());
            if one_sided {
                for k in 0u16..60 {
                    assert!(w.estimate(&k) >= count(&q, k), "{} {k}", P::NAME);
                }
            }
            let fresh: Vec<u32> = (0..window as u32).map(|i| 1000 + i).collect();
            for k in &fresh { w.insert(k); }
            let cells = |h: u64| probe_cells(w.filter().store.geo.primary::<W16>(h)).into_iter();
            let taken: std::collections::HashSet<usize> =
                fresh.iter().flat_map(|k| cells(w.filter().hash(k))).collect();
            for k in 0u16..60 {
                let free = cells(w.filter().hash(&k)).any(|c| !taken.contains(&c));
                assert!(!free || w.estimate(&k) == 0, "{} {k} left the window: {}", P::NAME, w.estimate(&k));
            }
        }
        // Crowded, medium and large; under Miri, which checks memory
        // safety rather than numbers, only the crowded one.
        let sizes: &[usize] = if cfg!(miri) { &[300] } else { &[300, 1500, 1 << 16] };
        for &counters in sizes {
            run(MinimumSelection, counters, true, &keys, window);
            run(RecurringMinimum::new().with_marker(1 << 16), counters, true, &keys, window);
            run(RecurringMinimum::new(), counters, false, &keys, window);
        }
    }

    #[test]
    fn range_counts_never_under_estimate(
        values in proptest::collection::vec(0u64..4096, 0..crate::scaled(150)),
        lo in 0u64..4096,
        len in 0u64..4096,
    ) {
        let f = Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(8192, 4), 2).unwrap();
        let mut t = RangeTree::new(f, 12).unwrap();
        for &v in &values { t.insert(v).unwrap(); }
        let hi = (lo + len).min(4095);
        let r = t.range_count(lo, hi).unwrap();
        let truth = values.iter().filter(|&&v| (lo..=hi).contains(&v)).count() as u64;
        prop_assert!(r.count >= truth);
        let width = hi - lo + 1;
        let bound = if width == 1 { 1 } else { 2 * width.ilog2() };
        prop_assert!(r.nodes <= bound, "{} nodes for {width} values", r.nodes);
        for &v in &values {
            let n = values.iter().filter(|&&w| w == v).count() as u32;
            prop_assert!(t.count(v).unwrap() >= n);
        }
    }
}

#[test]
fn every_isa_gives_identical_counters() {
    fn run<P: Policy>(p: P) {
        let mut reference: Option<Vec<Block>> = None;
        for isa in Isa::available() {
            let mut f = Spectral::<P, Blocked<W8>>::new(
                SpectralParams {
                    counters: 3000,
                    k: 5,
                    policy: p.clone(),
                    layout: Layout::OneBlock,
                },
                4,
            )
            .unwrap();
            f.set_isa(isa).unwrap();
            assert_eq!(f.isa(), isa);
            let mut x = 1u64;
            for _ in 0..crate::scaled(20_000) {
                x = mix64(x);
                f.insert_n(&(x % 700), 1 + (x >> 60) as u32);
            }
            match &reference {
                None => reference = Some(f.store().blocks().to_vec()),
                Some(r) => assert_eq!(f.store().blocks(), &r[..], "{} on {isa:?}", P::NAME),
            }
        }
    }
    run(MinimumSelection);
    run(MinimalIncrease);
    run(rm());
    run(rm_marker());
    run(RecurringMinimum::new().with_trapping());
}

#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn minimal_increase_is_never_worse_than_minimum_selection() {
    let mut ms =
        Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(640, 5), 1).unwrap();
    let mut mi =
        Spectral::<MinimalIncrease, Blocked<W16>>::new(SpectralParams::new(640, 5), 1).unwrap();
    let mut x = 7u64;
    for _ in 0..5000 {
        x = mix64(x);
        let key = (x % 400) as u32;
        ms.insert(&key);
        mi.insert(&key);
    }
    let (mut worse, mut better) = (0, 0);
    for key in 0u32..400 {
        let (a, b) = (ms.estimate(&key), mi.estimate(&key));
        worse += u32::from(b > a);
        better += u32::from(b < a);
    }
    assert_eq!(worse, 0);
    assert!(better > 0, "the filter was crowded enough for MS to err");
}

/// Recurring Minimum given 1.5 times Minimum Selection's memory (3000
/// primary + 1500 secondary counters against 3000: Table 2's "50 % more
/// memory"): every insertion that leaves a single minimum moves the item to
/// the secondary, whose smaller estimates make it exact more often than
/// Minimum Selection. At equal memory it is not (see the README). Over 30
/// seeds, a sign test: were the two equally good, RM would have fewer
/// errors in about half the seeds where they differ; asserted is at least
/// 3 standard deviations above that half (measured: 34 wins in 40 seeds).
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn recurring_minimum_moves_single_minima_and_is_tighter_than_ms() {
    let (mut wins, mut differ, mut from_secondary) = (0u32, 0u32, 0usize);
    for seed in 1..=30u64 {
        let mut ms =
            Spectral::<MinimumSelection, Blocked<W16>>::new(SpectralParams::new(3000, 5), seed)
                .unwrap();
        let mut rm =
            Spectral::<RecurringMinimum, Blocked<W16>>::new(SpectralParams::new(4500, 5), seed)
                .unwrap();
        assert_eq!((ms.counters(), rm.counters()), (3008, 3008));
        assert_eq!(
            rm.store().blocks().len(),
            ms.store().blocks().len() + 1504 / W16::CELLS
        );
        let mut x = seed;
        let mut truth = HashMap::new();
        for _ in 0..20_000 {
            x = mix64(x);
            let key = ((x % 400) * (x % 400) / 400) as u32;
            *truth.entry(key).or_insert(0u32) += 1;
            ms.insert(&key);
            rm.insert(&key);
            let h = rm.hash(&key);
            let single = rm.primary_minimum_hash(h).count < 2;
            assert!(
                !single
                    || rm
                        .store()
                        .read(streambloom_kernels::Scalar::new())
                        .min_count(Table::Secondary, h)
                        .min
                        > 0,
                "key {key} has a single minimum but was not moved"
            );
        }
        let err = |f: &dyn Fn(&u32) -> u32| truth.iter().filter(|&(k, &n)| f(k) != n).count();
        let (e_ms, e_rm) = (err(&|k| ms.estimate(k)), err(&|k| rm.estimate(k)));
        wins += u32::from(e_rm < e_ms);
        differ += u32::from(e_rm != e_ms);
        from_secondary += truth
            .keys()
            .filter(|k| rm.estimate(*k) < rm.primary_minimum_hash(rm.hash(*k)).min)
            .count();
    }
    let half = f64::from(differ) / 2.0;
    let sd = (f64::from(differ) / 4.0).sqrt();
    assert!(
        f64::from(wins) > half + 3.0 * sd,
        "RM fewer errors in {wins} of {differ} seeds"
    );
    assert!(from_secondary > 0, "no estimate came from the secondary");
}

/// Trapping with deletions: after 20 000 insertions, more than half the
/// items are exact, and once every occurrence is removed at most a tenth
/// of them keep a count. Per seed the fractions vary (100 seeds: left 0.068,
/// standard deviation 0.014; exact 0.81, standard deviation 0.036), so the
/// test pools 8 seeds: the claims then sit 6.6 and 24 standard errors from
/// the measured means.
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn trapping_deletes_and_refuses_merges() {
    let p = RecurringMinimum::new().with_trapping();
    assert!(p.is_trapping() && !p.has_marker());
    let (mut items, mut exact, mut left) = (0, 0, 0);
    for seed in 1..=8u64 {
        let mut f = Spectral::<RecurringMinimum, Blocked<W32>>::new(
            SpectralParams {
                counters: 3000,
                k: 4,
                policy: p.clone(),
                layout: Layout::OneBlock,
            },
            seed,
        )
        .unwrap();
        let mut truth = HashMap::new();
        let mut x = seed;
        for _ in 0..20_000 {
            x = mix64(x);
            let key = ((x % 600) * (x % 600) / 600) as u32;
            *truth.entry(key).or_insert(0u32) += 1;
            f.insert(&key);
        }
        items += truth.len();
        exact += truth.iter().filter(|&(k, &n)| f.estimate(k) == n).count();
        let other = f.clone();
        assert_eq!(
            f.union(&other),
            Err(Error::Incompatible {
                what: "policy (Trapping filters cannot be merged)"
            })
        );
        for (k, &n) in &truth {
            f.remove_n(k, n);
        }
        left += truth.keys().filter(|k| f.estimate(*k) > 0).count();
        f.clear();
        assert_eq!(f.estimate(&0u32), 0);
    }
    assert!(exact * 2 > items, "{exact} of {items} exact");
    assert!(left * 10 < items, "{left} of {items} items still counted");
}

#[test]
fn saturation_and_over_removal_stop_at_the_bounds() {
    let mut f =
        Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(640, 3), 1).unwrap();
    f.insert_n("a", 300);
    assert_eq!(f.estimate("a"), 255);
    f.insert_n("a", 0);
    f.remove_n("a", 1000);
    assert_eq!(f.estimate("a"), 0);
    f.remove_n("a", 0);
    assert_eq!(f.total(), 0);
    f.insert("b");
    f.clear();
    assert_eq!((f.estimate("b"), f.total()), (0, 0));
}

/// Lemma 3: the unbiased estimator's mean error is 0. Tolerances are 4
/// standard errors of the mean, from the counters themselves: a key's
/// estimate varies with the mean of its `k` counters (variance `V`, see
/// [`mean_of_k_variance`]), so over `n` keys never inserted, placed
/// independently, the mean has variance `V / n` (over 100 seeds with
/// `n = 2000`: standard deviation 0.578 measured, 0.578 predicted). An inserted key's error is
/// the other keys' counts on its counters; a pair of inserted keys sharing
/// a counter errs in both, so by `(a + b)² ≤ 2a² + 2b²` the inserted keys'
/// mean error has at most 4 times that variance (measured: 2.2 times).
/// Collapsing repeats add a variance common to all keys (below).
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn unbiased_estimator_averages_to_the_truth() {
    let mut f =
        Spectral::<MinimumSelection, Blocked<W32>>::new(SpectralParams::new(2000, 4), 6).unwrap();
    let mut truth = HashMap::new();
    let mut x = 9u64;
    for _ in 0..40_000 {
        x = mix64(x);
        *truth.entry(x % 2000).or_insert(0u32) += 1;
        f.insert(&(x % 2000));
    }
    // Keys 0..2000 were inserted about 20 times each; 2000..42000 never.
    let (n, absent) = (2000u64, 40_000u64);
    let error = |k: u64| f.estimate_unbiased(&k) - f64::from(truth.get(&k).copied().unwrap_or(0));
    let seen = (0..n).map(error).sum::<f64>() / n as f64;
    let unseen = (n..n + absent).map(error).sum::<f64>() / absent as f64;
    let v = mean_of_k_variance(&f);
    // With repeats collapsing, an item adds to a random number `D` of
    // counters, so the filter's mass is `Σ f_y D_y`, not the `N·E[D]` the
    // estimator subtracts: an offset common to every key, of variance
    // `Var(D) Σ f_y² / (m - E[D])²`.
    let offset = {
        let (b, k) = (W32::CELLS as f64, f64::from(f.k()));
        let mean_d = f.store.geo.placement().expected_cells::<W32>(f.k());
        let var_d = if mean_d < k {
            let pair = b
                * (b - 1.0)
                * (1.0 - 2.0 * libm::pow(1.0 - 1.0 / b, k) + libm::pow(1.0 - 2.0 / b, k));
            mean_d + pair - mean_d * mean_d
        } else {
            0.0
        };
        let squares: f64 = truth.values().map(|&c| f64::from(c) * f64::from(c)).sum();
        let m = f.counters() as f64;
        var_d * squares / ((m - mean_d) * (m - mean_d))
    };
    let (se_seen, se_unseen) = (
        (4.0 * v / n as f64 + offset).sqrt(),
        (v / absent as f64 + offset).sqrt(),
    );
    assert!(
        seen.abs() < 4.0 * se_seen,
        "{seen} (standard error {se_seen})"
    );
    assert!(
        unseen.abs() < 4.0 * se_unseen,
        "{unseen} (standard error {se_unseen})"
    );
    let biased: f64 = (n..n + absent)
        .map(|k| f64::from(f.estimate(&k)))
        .sum::<f64>()
        / absent as f64;
    assert!(
        biased > unseen + 4.0 * se_unseen,
        "Minimum Selection's {biased}"
    );
}

#[test]
fn constructors_reject_bad_parameters() {
    type Ms = Spectral<MinimumSelection, Blocked<W8>>;
    // Sizes near usize::MAX: an error, not an overflow (found by fuzzing).
    for counters in [usize::MAX, usize::MAX - 2] {
        assert!(Ms::new(SpectralParams::new(counters, 1), 0).is_err());
        assert!(
            SpectralParams::<MinimalIncrease>::new(counters, 16)
                .blocks::<W16>()
                .is_err()
        );
    }
    assert!(matches!(
        Ms::new(SpectralParams::new(0, 4), 1).unwrap_err(),
        Error::Parameter {
            name: "counters",
            ..
        }
    ));
    assert!(matches!(
        Ms::new(SpectralParams::new(64, 0), 1).unwrap_err(),
        Error::Parameter { name: "k", .. }
    ));
    assert!(matches!(
        Ms::new(SpectralParams::new(6400, 65), 1),
        Err(Error::Parameter { name: "k", .. })
    ));
    assert!(matches!(
        Ms::new(SpectralParams::new(64, 64), 1),
        Err(Error::Parameter { name: "k", .. })
    ));
    assert!(Ms::new(SpectralParams::new(64, 63), 1).is_ok());
    assert!(matches!(
        Spectral::<MinimumSelection, Blocked<W32>>::new(SpectralParams::new(6400, 17), 1),
        Err(Error::Parameter { name: "k", .. })
    ));
    assert!(matches!(
        Spectral::<RecurringMinimum>::new(SpectralParams::new(2, 1), 1),
        Err(Error::Parameter {
            name: "secondary",
            ..
        })
    ));
    for s in [0, 100] {
        let p = RecurringMinimum::new().with_secondary(s);
        assert!(
            Spectral::<RecurringMinimum>::new(
                SpectralParams {
                    counters: 100,
                    k: 2,
                    policy: p,
                    layout: Layout::OneBlock
                },
                1
            )
            .is_err()
        );
    }
    let mut buf = [Block::ZERO; 3];
    let e = Spectral::<MinimumSelection, Blocked<W8, &mut [Block]>>::with_storage(
        SpectralParams {
            counters: 640,
            k: 4,
            policy: MinimumSelection,
            layout: Layout::OneBlock,
        },
        &mut buf[..],
        hash::seeded_hasher(1),
    )
    .unwrap_err();
    assert_eq!(
        e,
        Error::Length {
            name: "storage",
            expected: 10,
            found: 3
        }
    );
    let f = Ms::new(SpectralParams::new(640, 4), 1).unwrap();
    let mut w = f.clone();
    assert!(SlidingWindow::new(f.clone(), 0).is_err());
    assert!(RangeTree::new(f.clone(), 0).is_err());
    assert!(RangeTree::new(f.clone(), 65).is_err());
    let mut t = RangeTree::new(f.clone(), 8).unwrap();
    assert!(t.insert(256).is_err() && t.remove(256).is_err() && t.count(256).is_err());
    assert!(t.range_count(0, 256).is_err());
    assert!(matches!(
        t.range_count(5, 4).unwrap_err(),
        Error::Parameter { name: "lo", .. }
    ));
    let full = RangeTree::new(f.clone(), 64).unwrap();
    assert_eq!(full.range_count(0, u64::MAX).unwrap().nodes, 1);
    assert!(w.set_isa(Isa::Scalar).is_ok());
    let missing = Isa::ALL.into_iter().find(|i| !i.is_available());
    if let Some(isa) = missing {
        assert!(w.set_isa(isa).is_err());
        assert_eq!(w.isa(), Isa::Scalar);
    }
    let _ = W4::BITS;
}

#[test]
fn merges_refuse_mismatched_filters() {
    const SHAPE: &str = "sizes, k or counter width";
    type Ms = Spectral<MinimumSelection, Blocked<W16>>;
    let mut a = Ms::new(SpectralParams::new(1000, 4), 1).unwrap();
    let seeds = Ms::new(SpectralParams::new(1000, 4), 2).unwrap();
    let size = Ms::new(SpectralParams::new(2000, 4), 1).unwrap();
    let k = Ms::new(SpectralParams::new(1000, 5), 1).unwrap();
    assert_eq!(
        a.union(&seeds),
        Err(Error::Incompatible {
            what: "hasher or seeds"
        })
    );
    assert_eq!(a.join(&size), Err(Error::Incompatible { what: SHAPE }));
    assert_eq!(a.union(&k), Err(Error::Incompatible { what: SHAPE }));
    // Counters of another width: as many, placed in other blocks.
    let narrow =
        Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(1024, 4), 1).unwrap();
    assert_eq!(narrow.counters(), a.counters());
    assert_eq!(a.union(&narrow), Err(Error::Incompatible { what: SHAPE }));
    // The same shape in caller memory merges.
    let mut buf = [Block::ZERO; 32];
    let mut slice = Spectral::<MinimumSelection, Blocked<W16, &mut [Block]>>::with_storage(
        SpectralParams::new(1000, 4),
        &mut buf[..],
        crate::hash::seeded_hasher(1),
    )
    .unwrap();
    slice.insert_n("x", 3);
    a.union(&slice).unwrap();
    assert_eq!(a.estimate("x"), 3);
    let mut r =
        Spectral::<RecurringMinimum, Blocked<W16>>::new(SpectralParams::new(1000, 4), 1).unwrap();
    let marked = Spectral::<RecurringMinimum, Blocked<W16>>::new(
        SpectralParams {
            counters: 1000,
            k: 4,
            policy: rm_marker(),
            layout: Layout::OneBlock,
        },
        1,
    )
    .unwrap();
    assert_eq!(r.union(&marked), Err(Error::Incompatible { what: SHAPE }));
}

/// The reproduction: `b` is moved, removed (its secondary counters
/// emptied), inserted again while its primary minimum recurs, then `a`'s
/// return raises those counters. `b` stays marked in `B_f`, so its
/// re-insertions must reach its secondary counters too.
#[test]
fn recurring_minimum_with_marker_counts_reinsertions_after_a_removal() -> Result<()> {
    let h = |r: u64| r.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (a, b, c, d) = (h(10), h(4), h(1), h(9));
    let p = RecurringMinimum::new().with_marker(1 << 20);
    let mut f = Spectral::<RecurringMinimum, Blocked<W32>>::new(
        SpectralParams {
            counters: 48,
            k: 2,
            policy: p,
            layout: Layout::OneBlock,
        },
        0,
    )?;
    for x in [a, b, c, d] {
        f.insert_hash(x);
    }
    f.remove_hash(b);
    f.remove_hash(a);
    f.insert_hash(b);
    f.insert_hash(b);
    f.insert_hash(a);
    assert!(f.estimate_hash(b) >= 2, "{}", f.estimate_hash(b));
    assert!(f.estimate_hash(a) >= 1, "{}", f.estimate_hash(a));
    Ok(())
}

/// What [`audit_marker`] saw.
#[derive(Debug, Default)]
struct Audit {
    /// Estimates checked (after each operation, of its key; at the end, of
    /// every key).
    checked: usize,
    /// Checked estimates below the true count.
    under: usize,
    /// Keys found in `B_f` without having moved, after occurrences of them
    /// were inserted: the false positives of `B_f` that can cause an
    /// under-count.
    late: usize,
    /// Removals of keys marked in `B_f` (the case the issue is about).
    marked_removals: usize,
}

/// The secondary counters of `key`, as indices into the whole filter.
fn secondary_cells<W: Counter>(f: &Spectral<RecurringMinimum, Blocked<W>>, key: u64) -> Vec<usize> {
    probe_cells(f.store.geo.secondary::<W>(f.hash(&key)))
}

/// The cells of an item's probes (one or two blocks), as indices into the
/// whole filter.
fn probe_cells<W: Counter>(p: crate::hash::Probes<W>) -> Vec<usize> {
    let mut out = Vec::new();
    for q in core::iter::once(p.first).chain(p.second) {
        let mut mask = q.mask;
        while let Some(i) = mask.pop_lowest() {
            out.push(q.block * W::CELLS + i);
        }
    }
    out
}

/// What the audit knows of `B_f` beside the filter.
#[derive(Default)]
struct Marks {
    /// Whether `B_f` held the key after its last operation.
    after_last: HashMap<u64, bool>,
    late: std::collections::HashSet<u64>,
    late_cells: std::collections::HashSet<usize>,
}

impl Marks {
    /// Notes `key`, holding `n` occurrences, as marked late if `B_f` holds
    /// it now but did not after its last operation; says whether it holds
    /// it.
    fn observe<W: Counter>(
        &mut self,
        f: &Spectral<RecurringMinimum, Blocked<W>>,
        key: u64,
        n: u32,
        audit: &mut Audit,
    ) -> bool {
        let now = f
            .store()
            .read(streambloom_kernels::Scalar::new())
            .marked(f.hash(&key));
        let before = self.after_last.insert(key, now).unwrap_or(false);
        if now && !before && n > 0 && self.late.insert(key) {
            audit.late += 1;
            self.late_cells.extend(secondary_cells(f, key));
        }
        now
    }

    /// Checks the estimate of `key` against its true count `n`.
    fn check<W: Counter>(
        &self,
        f: &Spectral<RecurringMinimum, Blocked<W>>,
        key: u64,
        n: u32,
        audit: &mut Audit,
    ) {
        audit.checked += 1;
        let e = f.estimate(&key);
        if e < n {
            audit.under += 1;
            let explained = self.late.contains(&key)
                || secondary_cells(f, key)
                    .iter()
                    .any(|c| self.late_cells.contains(c));
            assert!(
                explained,
                "key {key}: {e} < {n}, and no false positive of B_f explains it"
            );
        }
    }
}

/// Replays `ops` (key, `r`, remove?) on Recurring Minimum with a marker of
/// `marker` bits, removing at most what the model holds, and checks the
/// documented guarantee after every operation (for its key) and at the end
/// (for every key): an estimate below the true count only for a key that
/// `B_f` marked late (see [`Audit::late`]) or one sharing a secondary
/// counter with such a key.
fn audit_marker<W: Counter>(
    marker: usize,
    counters: usize,
    k: u32,
    ops: impl IntoIterator<Item = (u64, u32, bool)>,
) -> Audit {
    let p = RecurringMinimum::new().with_marker(marker);
    let mut f = Spectral::<RecurringMinimum, Blocked<W>>::new(
        SpectralParams {
            counters,
            k,
            policy: p,
            layout: Layout::OneBlock,
        },
        17,
    )
    .unwrap();
    let mut model: HashMap<u64, u32> = HashMap::new();
    let mut marks = Marks::default();
    let mut audit = Audit::default();
    for (key, r, remove) in ops {
        let n = model.get(&key).copied().unwrap_or(0);
        let marked = marks.observe(&f, key, n, &mut audit);
        let n = if remove {
            let r = r.min(n);
            f.remove_n(&key, r);
            audit.marked_removals += usize::from(marked && r > 0);
            n - r
        } else {
            f.insert_n(&key, r);
            n + r
        };
        model.insert(key, n);
        marks.after_last.insert(
            key,
            f.store()
                .read(streambloom_kernels::Scalar::new())
                .marked(f.hash(&key)),
        );
        marks.check(&f, key, n, &mut audit);
    }
    for (&key, &n) in &model {
        marks.observe(&f, key, n, &mut audit);
    }
    for (&key, &n) in &model {
        marks.check(&f, key, n, &mut audit);
    }
    assert_eq!(
        f.total(),
        model.values().map(|&v| u64::from(v)).sum::<u64>()
    );
    audit
}

/// A stream of insertions and removals, `(key, r, remove?)`, over a small
/// key space: keys leave and come back while their minima change.
fn ops_with_removals() -> impl Strategy<Value = Vec<(u64, u32, bool)>> {
    proptest::collection::vec(
        (0u64..40, 1u32..3, proptest::bool::weighted(0.45)),
        0..crate::scaled(400),
    )
}

proptest! {
    #![proptest_config(config())]

    /// With a marker too large for false positives, Recurring Minimum never
    /// under-estimates, whatever the removals and re-insertions; with the
    /// paper's marker of `m` bits, every under-estimate is one the docs
    /// allow (a late false positive of `B_f`).
    #[test]
    fn recurring_minimum_with_marker_survives_removals(
        ops in ops_with_removals(),
        counters in 48usize..600,
        k in 2u32..6,
    ) {
        let big = audit_marker::<W16>(1 << 16, counters, k, ops.iter().copied());
        prop_assert_eq!((big.late, big.under), (0, 0), "{:?}", big);
        audit_marker::<W16>(counters, counters, k, ops.iter().copied());
        audit_marker::<W32>(counters, counters, k, ops.iter().copied());
    }
}

/// `len` draws from a Zipf distribution of skew 0.5 over `values` values,
/// from a fixed `seed` (Table 1's data).
fn zipf(values: usize, len: usize, seed: u64) -> Vec<u64> {
    let cdf: Vec<f64> = (1..=values)
        .scan(0.0, |sum, i| {
            *sum += 1.0 / (i as f64).sqrt();
            Some(*sum)
        })
        .collect();
    let total = cdf[values - 1];
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = mix64(x);
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * total;
            cdf.partition_point(|&c| c <= u).min(values - 1) as u64
        })
        .collect()
}

/// Table 1's setting (k = 5, 1000 distinct values of skew 0.5, γ = 0.7,
/// `m_s = m/2`) with the paper's `B_f` of `m` bits, over a sliding window
/// of 2000 items, so items are removed and inserted again many times:
/// records how often the estimate falls below the window's count, and
/// checks every such case is one the docs allow (a late false positive of
/// `B_f`; see [`audit_marker`]).
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn recurring_minimum_with_the_papers_marker_under_counts_only_after_its_false_positives() {
    let m = (1000.0 * 5.0 / 0.7) as usize;
    for seed in 1..=8 {
        let stream = zipf(1000, 30_000, seed);
        let window = 2000;
        let ops = stream.iter().enumerate().flat_map(|(i, &key)| {
            let old = i.checked_sub(window).map(|j| (stream[j], 1, true));
            old.into_iter().chain([(key, 1, false)])
        });
        let a = audit_marker::<W16>(m, m + m / 2, 5, ops);
        std::eprintln!(
            "seed {seed}: {} of {} estimates under the count ({:.2e}), {} keys marked late, {} removals of marked keys",
            a.under,
            a.checked,
            a.under as f64 / a.checked as f64,
            a.late,
            a.marked_removals
        );
        assert!(a.marked_removals > 1000, "{a:?}");
    }
}

/// The variance, over a key's random placement, of the mean of its `k`
/// primary counters: `k` distinct counters of a random block, so the
/// variance between block means plus the mean within-block variance of a
/// sample of `k` out of `W32::CELLS` drawn without replacement.
fn mean_of_k_variance<P: Policy>(f: &Spectral<P, Blocked<W32>>) -> f64 {
    let c = W32::CELLS as f64;
    let k = f64::from(f.k());
    let blocks = f.counters() / W32::CELLS;
    let (mut sum_mu, mut sum_mu2, mut within) = (0.0, 0.0, 0.0);
    for b in 0..blocks {
        let cells: Vec<f64> = (0..W32::CELLS)
            .map(|i| f64::from(f.store.cells.get(b * W32::CELLS + i).unwrap()))
            .collect();
        let mu = cells.iter().sum::<f64>() / c;
        let var = cells.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / c;
        sum_mu += mu;
        sum_mu2 += mu * mu;
        within += var / k * (c - k) / (c - 1.0);
    }
    let n = blocks as f64;
    let mean_mu = sum_mu / n;
    (sum_mu2 / n - mean_mu * mean_mu) + within / n
}

/// 16-bit counters from which the batch forms prefetch
/// ([`crate::store::PREFETCH_MIN_BYTES`]): the property tests draw filters on
/// both sides of it.
const PREFETCH_COUNTERS: usize = crate::store::PREFETCH_MIN_BYTES / 2;

/// Asserts that `a` and `b` are the same filter, policy state (Trapping's
/// traps) included, which `PartialEq` leaves out.
fn same_filter<P: Policy + PartialEq>(
    a: &Spectral<P, Blocked<W16>>,
    b: &Spectral<P, Blocked<W16>>,
    what: &str,
) -> core::result::Result<(), TestCaseError> {
    prop_assert!(a == b, "{} ({}): counters or total differ", what, P::NAME);
    prop_assert!(
        a.policy == b.policy,
        "{} ({}): policy state differs",
        what,
        P::NAME
    );
    Ok(())
}

/// The keyed `insert_batch` and `estimate_batch` against `insert` and
/// `estimate` one key at a time (the pre-hashed batches have
/// `batches_equal_item_by_item`); returns the three filters (item by item,
/// keyed batches, pre-hashed batches), equal, for more operations.
#[allow(clippy::type_complexity)]
fn keyed_batches<P: Policy + PartialEq>(
    policy: P,
    counters: usize,
    keys: &[u16],
    probes: &[u16],
) -> core::result::Result<
    (
        Spectral<P, Blocked<W16>>,
        Spectral<P, Blocked<W16>>,
        Spectral<P, Blocked<W16>>,
    ),
    TestCaseError,
> {
    let mut one = Spectral::<P, Blocked<W16>>::new(
        SpectralParams {
            counters,
            k: 5,
            policy,
            layout: Layout::OneBlock,
        },
        3,
    )
    .unwrap();
    prop_assert_eq!(one.store.cells.prefetching(), counters >= PREFETCH_COUNTERS);
    let (mut keyed, mut hashed) = (one.clone(), one.clone());
    for key in keys {
        one.insert(key);
    }
    keyed.insert_batch(keys);
    let hashes: Vec<u64> = keys.iter().map(|key| one.hash(key)).collect();
    hashed.insert_batch_hash(&hashes);
    same_filter(&keyed, &one, "insert_batch")?;
    same_filter(&hashed, &one, "insert_batch_hash")?;
    let want: Vec<u32> = probes.iter().map(|key| one.estimate(key)).collect();
    let mut got = alloc::vec![0; probes.len()];
    keyed.estimate_batch(probes, &mut got).unwrap();
    prop_assert_eq!(&got, &want);
    let n = probes.len();
    let mut long = alloc::vec![u32::MAX; n + 1];
    let wrong = Error::Length {
        name: "counts",
        expected: n,
        found: n + 1,
    };
    prop_assert_eq!(keyed.estimate_batch(probes, &mut long), Err(wrong));
    let probe_hashes: Vec<u64> = probes.iter().map(|key| one.hash(key)).collect();
    prop_assert_eq!(
        hashed.estimate_batch_hash(&probe_hashes, &mut long),
        Err(wrong)
    );
    prop_assert!(
        long.iter().all(|&c| c == u32::MAX),
        "a failed batch wrote answers"
    );
    Ok((one, keyed, hashed))
}

/// [`keyed_batches`], then `remove_batch` and `remove_batch_hash` against
/// `remove` one key at a time, and the three filters still estimate alike.
fn remove_batches<P: Removable + PartialEq>(
    policy: P,
    counters: usize,
    keys: &[u16],
    removals: &[u16],
) -> core::result::Result<(), TestCaseError> {
    let (mut one, mut keyed, mut hashed) = keyed_batches(policy, counters, keys, removals)?;
    for key in removals {
        one.remove(key);
    }
    keyed.remove_batch(removals);
    let hashes: Vec<u64> = removals.iter().map(|key| one.hash(key)).collect();
    hashed.remove_batch_hash(&hashes);
    same_filter(&keyed, &one, "remove_batch")?;
    same_filter(&hashed, &one, "remove_batch_hash")?;
    for key in keys.iter().chain(removals) {
        let want = one.estimate(key);
        prop_assert_eq!(keyed.estimate(key), want);
        prop_assert_eq!(hashed.estimate(key), want);
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config(24, 2, 0x05EC_BA7C))]

    /// Every keyed batch, and the pre-hashed removal batch, leaves the same
    /// filter (counters, total, policy state) and gives the same answers as
    /// the keyed single-item forms in order, for every policy, below and
    /// above the prefetching threshold, with batches longer than the keyed
    /// forms' hashing chunk; a wrong output length is [`Error::Length`] and
    /// writes nothing. The removals include keys never inserted, whose
    /// counters stop at 0.
    #[test]
    #[cfg_attr(miri, ignore = "filters past the prefetch threshold (2 MiB) are too slow under Miri; the kernels' memory safety is covered by the small cases elsewhere")]
    fn keyed_and_removal_batches_equal_item_by_item(
        keys in proptest::collection::vec(0u16..300, 0..crate::scaled(700)),
        removals in proptest::collection::vec(0u16..400, 0..crate::scaled(500)),
        counters in prop_oneof![96usize..2048, PREFETCH_COUNTERS..PREFETCH_COUNTERS + 4000],
    ) {
        // Recurring Minimum's primary is 2/3 of the budget: keep its whole
        // filter on the same side of the threshold as the others.
        let rm_counters = if counters >= PREFETCH_COUNTERS { counters } else { counters.max(200) };
        keyed_batches(MinimalIncrease, counters, &keys, &removals)?;
        remove_batches(MinimumSelection, counters, &keys, &removals)?;
        remove_batches(rm(), rm_counters, &keys, &removals)?;
        remove_batches(rm_marker(), rm_counters, &keys, &removals)?;
        remove_batches(RecurringMinimum::new().with_trapping(), rm_counters, &keys, &removals)?;
    }
}

/// A naive [`CounterStore`]: plain tables (`Vec<u32>` counters,
/// `Vec<bool>` marker bits), with the [`Blocked`] store's placement restated
/// independently of its geometry and of [`Ctx`], no kernels, and `&Self`
/// as its views. A filter over it and a filter over [`Blocked`] must give
/// the same answers and hold the same counters: the policies and the
/// filter see a store only through the trait.
#[derive(Clone, Debug)]
struct Reference<W: Counter> {
    primary: Vec<u32>,
    secondary: Vec<u32>,
    marker: Vec<bool>,
    /// Blocks of each table, from the filter's plan.
    blocks: [usize; 3],
    k: u32,
    layout: Layout,
    width: core::marker::PhantomData<W>,
}

/// The distinct cells, in increasing order, of hash `h` in a table of
/// `blocks` blocks of `cells` cells: the block is `⌊mix64(h)·blocks /
/// 2^64⌋`; the cells are `min(k, cells)` independent `log2(cells)`-bit
/// fields read from the top of `mix64(h ^ SALT)`, then of
/// `mix64(h ^ SALT ^ round·C)` (round 1, 2, ...) when fewer bits than a
/// field are left, repeats collapsing ([`Placement::Collapsing`], restated).
///
/// In the two-block layout the first `⌈k/2⌉` cells are so placed, and the
/// other `⌊k/2⌋` in block `⌊mix64(h ^ B2)·blocks / 2^64⌋` with fields from
/// `h ^ C2` (the salts of `hash::probes`, restated); a cell in both halves
/// counts once.
fn restated(h: u64, blocks: usize, cells: usize, k: u32, layout: Layout) -> Vec<usize> {
    const B2: u64 = 0xBB67_AE85_84CA_A73B;
    const C2: u64 = 0x3C6E_F372_FE94_F82B;
    let block = |x: u64| ((u128::from(mix64(x)) * blocks as u128) >> 64) as usize;
    let (k1, k2) = match layout {
        Layout::OneBlock => (k, 0),
        Layout::TwoBlocks => (k - k / 2, k / 2),
    };
    let mut out: Vec<usize> = restated_fields(h, cells, k1)
        .into_iter()
        .map(|f| block(h) * cells + f)
        .collect();
    if k2 > 0 {
        out.extend(
            restated_fields(h ^ C2, cells, k2)
                .into_iter()
                .map(|f| block(h ^ B2) * cells + f),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The cells, within a block of `cells`, of `k` independent `log2(cells)`-bit
/// fields read from the top of `mix64(h ^ SALT)`, then of
/// `mix64(h ^ SALT ^ round·C)` (round 1, 2, ...) when fewer bits than a
/// field are left ([`Placement::Collapsing`], restated; repeats are
/// removed by [`restated`]).
fn restated_fields(h: u64, cells: usize, k: u32) -> Vec<usize> {
    const SALT: u64 = 0x6A09_E667_F3BC_C909;
    const ROUND: u64 = 0xD6E8_FEB8_6659_FD93;
    let bits = cells.trailing_zeros();
    let (mut x, mut left, mut round) = (mix64(h ^ SALT), 64u32, 0u64);
    (0..k.min(cells as u32))
        .map(|_| {
            if left < bits {
                round += 1;
                x = mix64(h ^ SALT ^ round.wrapping_mul(ROUND));
                left = 64;
            }
            let field = (x >> (64 - bits)) as usize;
            x <<= bits;
            left -= bits;
            field
        })
        .collect()
}

impl<W: Counter> Reference<W> {
    /// An empty store with `f`'s table sizes.
    fn like<P: Policy, S: Storage, H>(f: &Spectral<P, Blocked<W, S>, H>) -> Self {
        let g = &f.store.geo;
        Reference {
            primary: alloc::vec![0; g.primary * W::CELLS],
            secondary: alloc::vec![0; g.secondary * W::CELLS],
            marker: alloc::vec![false; g.marker * W1::CELLS],
            blocks: [g.primary, g.secondary, g.marker],
            k: g.k,
            layout: g.layout,
            width: core::marker::PhantomData,
        }
    }

    /// The item's counters in `table`: the table and indices into it.
    fn cells(&mut self, table: Table, h: u64) -> (&mut Vec<u32>, Vec<usize>) {
        match table {
            Table::Primary => (
                &mut self.primary,
                restated(h, self.blocks[0], W::CELLS, self.k, self.layout),
            ),
            Table::Secondary => (
                &mut self.secondary,
                restated(
                    mix64(h ^ SECONDARY_SALT),
                    self.blocks[1],
                    W::CELLS,
                    self.k,
                    self.layout,
                ),
            ),
        }
    }

    fn marker_bits(&self, h: u64) -> Vec<usize> {
        restated(
            mix64(h ^ MARKER_SALT),
            self.blocks[2],
            W1::CELLS,
            self.k,
            self.layout,
        )
    }

    /// Applies `op` to each of the item's counters in `table`, clamping the
    /// result to `0..=W::MAX`.
    fn update(&mut self, table: Table, h: u64, op: impl Fn(u64) -> u64) {
        let (t, cells) = self.cells(table, h);
        for c in cells {
            t[c] = op(u64::from(t[c])).min(u64::from(W::MAX)) as u32;
        }
    }
}

/// Equal tables (derived equality would ask `W: PartialEq`).
impl<W: Counter> PartialEq for Reference<W> {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.primary,
            &self.secondary,
            &self.marker,
            self.blocks,
            self.k,
        ) == (
            &other.primary,
            &other.secondary,
            &other.marker,
            other.blocks,
            other.k,
        )
    }
}

impl<W: Counter> CounterStore for Reference<W> {
    type Read<'a, B: Backend> = &'a Self;
    type Write<'a, B: Backend> = &'a mut Self;
    const MAX: u32 = W::MAX;

    fn read<B: Backend>(&self, _: B) -> &Self {
        self
    }
    fn write<B: Backend>(&mut self, _: B) -> &mut Self {
        self
    }
    fn engine(&self) -> streambloom_kernels::Engine {
        streambloom_kernels::Engine::new(Isa::Scalar).unwrap()
    }
    fn set_isa(&mut self, _: Isa) -> Result<()> {
        Ok(())
    }
    fn prefetching(&self) -> bool {
        false
    }
    fn prefetch(&self, _: u64) {}
    fn k(&self) -> u32 {
        self.k
    }
    fn counters(&self) -> usize {
        self.primary.len()
    }
    fn budget(&self) -> usize {
        self.primary.len() + self.secondary.len()
    }
    fn expected_item_counters(&self) -> f64 {
        let e = |k| Placement::Collapsing.expected_cells::<W>(k);
        match self.layout.halves(self.k) {
            (k, 0) => e(k),
            (k1, k2) => {
                let same = 1.0 / self.blocks[0] as f64;
                (1.0 - same) * (e(k1) + e(k2)) + same * e(self.k)
            }
        }
    }
    fn shape(&self) -> Shape {
        Shape {
            store: "reference",
            layout: self.layout,
            bits: W::BITS,
            counters: self.primary.len(),
            secondary: self.secondary.len(),
            marker: self.marker.len(),
            k: self.k,
            placement: Placement::Collapsing,
        }
    }
    fn primary(&self, i: usize) -> u32 {
        self.primary.get(i).copied().unwrap_or(0)
    }
    fn set_primary(&mut self, i: usize, v: u32) {
        if let Some(c) = self.primary.get_mut(i) {
            *c = v.min(W::MAX);
        }
    }
    fn clear_secondary(&mut self) {
        self.secondary.fill(0);
        self.marker.fill(false);
    }
    fn clear(&mut self) {
        self.primary.fill(0);
        self.clear_secondary();
    }
}

impl<W: Counter> Counters for Reference<W> {
    fn min_count(&self, table: Table, h: u64) -> MinCount {
        let (t, cells) = match table {
            Table::Primary => (
                &self.primary,
                restated(h, self.blocks[0], W::CELLS, self.k, self.layout),
            ),
            Table::Secondary => (
                &self.secondary,
                restated(
                    mix64(h ^ SECONDARY_SALT),
                    self.blocks[1],
                    W::CELLS,
                    self.k,
                    self.layout,
                ),
            ),
        };
        let min = cells.iter().map(|&c| t[c]).min().unwrap_or(u32::MAX);
        let count = cells.iter().filter(|&&c| t[c] == min).count() as u32;
        MinCount { min, count }
    }

    fn marked(&self, h: u64) -> bool {
        self.blocks[2] > 0 && self.marker_bits(h).iter().all(|&b| self.marker[b])
    }

    fn primary_counters(&self, h: u64, out: &mut [(usize, u32); MAX_ITEM_COUNTERS]) -> usize {
        let cells = restated(h, self.blocks[0], W::CELLS, self.k, self.layout);
        for (slot, &c) in out.iter_mut().zip(&cells) {
            *slot = (c, self.primary[c]);
        }
        cells.len()
    }
}

impl<W: Counter> CountersMut for Reference<W> {
    fn add(&mut self, table: Table, h: u64, r: u32) {
        self.update(table, h, |c| c + u64::from(r));
    }

    fn sub(&mut self, table: Table, h: u64, r: u32) {
        self.update(table, h, |c| c.saturating_sub(u64::from(r)));
    }

    fn raise_to(&mut self, table: Table, h: u64, v: u32) {
        self.update(table, h, |c| c.max(u64::from(v)));
    }

    fn mark(&mut self, h: u64) {
        if self.blocks[2] > 0 {
            for b in self.marker_bits(h) {
                self.marker[b] = true;
            }
        }
    }
}

/// An operation of a counting stream, on a small key space.
#[derive(Clone, Copy, Debug)]
enum CountOp {
    Insert(u16, u32),
    Remove(u16, u32),
    Estimate(u16),
}

/// Insertions (with `r` up to 300, so that 8-bit counters saturate),
/// removals (of keys present or not) and estimates.
fn count_ops() -> impl Strategy<Value = Vec<CountOp>> {
    let op = prop_oneof![
        4 => (0u16..80, 1u32..4).prop_map(|(k, r)| CountOp::Insert(k, r)),
        1 => (0u16..80, 4u32..300).prop_map(|(k, r)| CountOp::Insert(k, r)),
        2 => (0u16..80, 1u32..4).prop_map(|(k, r)| CountOp::Remove(k, r)),
        2 => (0u16..80).prop_map(CountOp::Estimate),
    ];
    proptest::collection::vec(op, 0..crate::scaled(400))
}

/// Takes `r` occurrences of `h` back from the filter over the naive
/// store and from the filter over [`Blocked`].
type RemoveBoth<P, W> = fn(&mut Spectral<P, Reference<W>>, &mut Spectral<P, Blocked<W>>, u64, u32);

fn remove_both<P: Removable, W: Counter>(
    reference: &mut Spectral<P, Reference<W>>,
    f: &mut Spectral<P, Blocked<W>>,
    h: u64,
    r: u32,
) {
    reference.remove_n_hash(h, r);
    f.remove_n_hash(h, r);
}

/// Every counter of every table of a [`Blocked`] filter, as the naive
/// store lays them out.
fn tables_of<P: Policy, W: Counter>(f: &Spectral<P, Blocked<W>>) -> Reference<W> {
    let mut out = Reference::like(f);
    let blocks = f.blocks();
    let g = f.store.geo;
    let at = |first: usize, i: usize| cell::<W>(&blocks[first + i / W::CELLS], i % W::CELLS);
    for (i, c) in out.primary.iter_mut().enumerate() {
        *c = at(0, i);
    }
    for (i, c) in out.secondary.iter_mut().enumerate() {
        *c = at(g.primary, i);
    }
    for (i, b) in out.marker.iter_mut().enumerate() {
        let first = g.primary + g.secondary;
        *b = cell::<W1>(&blocks[first + i / W1::CELLS], i % W1::CELLS) == 1;
    }
    out
}

/// Drives the same stream through a `Spectral` filter over the naive
/// [`Reference`] store and through the same filter over [`Blocked`] with
/// each available kernel implementation, through the public API only:
/// item inserts and removals (removals skipped when `remove` is not
/// given), estimates after each operation (of its key), then the batch
/// estimate of every key, a union and a join with a copy: every answer,
/// total and counter must be equal.
fn agrees_with_reference<P: Policy, W: Counter>(
    policy: P,
    counters: usize,
    k: u32,
    layout: Layout,
    ops: &[CountOp],
    remove: Option<RemoveBoth<P, W>>,
) -> core::result::Result<(), TestCaseError> {
    let params = SpectralParams {
        counters,
        k: k.min(W::CELLS as u32),
        policy,
        layout,
    };
    for isa in Isa::available() {
        let mut f = Spectral::<P, Blocked<W>>::new(params.clone(), 7).unwrap();
        f.set_isa(isa).unwrap();
        let store = Reference::like(&f);
        let mut reference =
            Spectral::from_store(store, params.policy.clone(), hash::seeded_hasher(7)).unwrap();
        let what = |op: &CountOp| std::format!("{} W{} {isa:?} {op:?}", P::NAME, W::BITS);
        for op in ops {
            let key = match *op {
                CountOp::Insert(key, r) => {
                    reference.insert_n(&key, r);
                    f.insert_n(&key, r);
                    key
                }
                CountOp::Remove(key, r) => {
                    if let Some(remove) = remove {
                        let h = f.hash(&key);
                        remove(&mut reference, &mut f, h, r);
                    }
                    key
                }
                CountOp::Estimate(key) => key,
            };
            prop_assert_eq!(f.estimate(&key), reference.estimate(&key), "{}", what(op));
        }
        prop_assert_eq!(f.total(), reference.total());
        prop_assert_eq!(
            &tables_of(&f),
            reference.store(),
            "{} W{} tables",
            P::NAME,
            W::BITS
        );
        let keys: Vec<u16> = (0..80).collect();
        let (mut mine, mut theirs) = ([0; 80], [0; 80]);
        f.estimate_batch(&keys, &mut mine).unwrap();
        reference.estimate_batch(&keys, &mut theirs).unwrap();
        prop_assert_eq!(mine, theirs);
        let (f_copy, r_copy) = (f.clone(), reference.clone());
        prop_assert_eq!(f.union(&f_copy), reference.union(&r_copy));
        prop_assert_eq!(f.join(&f_copy), reference.join(&r_copy));
        prop_assert_eq!(f.total(), reference.total());
        prop_assert_eq!(
            &tables_of(&f),
            reference.store(),
            "{} W{} merged",
            P::NAME,
            W::BITS
        );
    }
    Ok(())
}

/// Every policy and width through [`agrees_with_reference`].
fn every_policy_agrees<W: Counter>(
    counters: usize,
    k: u32,
    layout: Layout,
    marker: usize,
    ops: &[CountOp],
) -> core::result::Result<(), TestCaseError> {
    let rm_counters = counters.max(3 * W::CELLS);
    agrees_with_reference::<_, W>(
        MinimumSelection,
        counters,
        k,
        layout,
        ops,
        Some(remove_both),
    )?;
    agrees_with_reference::<_, W>(MinimalIncrease, counters, k, layout, ops, None)?;
    agrees_with_reference::<_, W>(rm(), rm_counters, k, layout, ops, Some(remove_both))?;
    let marked = RecurringMinimum::new().with_marker(marker);
    agrees_with_reference::<_, W>(
        marked.clone(),
        rm_counters,
        k,
        layout,
        ops,
        Some(remove_both),
    )?;
    let trapping = RecurringMinimum::new().with_trapping();
    agrees_with_reference::<_, W>(trapping, rm_counters, k, layout, ops, Some(remove_both))?;
    agrees_with_reference::<_, W>(
        marked.with_trapping(),
        rm_counters,
        k,
        layout,
        ops,
        Some(remove_both),
    )
}

proptest! {
    #![proptest_config(crate::proptest_config(48, 2, 0x05EC_C0DE))]

    /// The policies give identical answers on the counter-store interface:
    /// the filter over its blocked fixed-width cells ([`Ctx`], [`CtxMut`])
    /// and the naive [`Reference`] store agree on every estimate and every
    /// counter, for every policy (Recurring Minimum plain, with a marker,
    /// with Trapping, with both) and width, on crowded filters (Bloom
    /// errors, moves, traps) and with 8-bit counters that saturate.
    #[test]
    fn policies_agree_on_every_counter_store(
        counters in 40usize..1500,
        k in 1u32..9,
        marker in 1usize..2048,
        layout in prop_oneof![Just(Layout::OneBlock), Just(Layout::TwoBlocks)],
        ops in count_ops(),
    ) {
        prop_assert_eq!(PLACEMENT, Placement::Collapsing, "Reference restates Collapsing");
        // Under Miri one width a case, by `k` (the most costly test there;
        // each width's kernels have Miri tests of their own).
        let width = |w: u32| !cfg!(miri) || k % 3 == w;
        if width(0) {
            every_policy_agrees::<W8>(counters, k, layout, marker, &ops)?;
        }
        if width(1) {
            every_policy_agrees::<W16>(counters, k, layout, marker, &ops)?;
        }
        if width(2) {
            every_policy_agrees::<W32>(counters, k, layout, marker, &ops)?;
        }
    }
}

/// `restore` adopts the counters and the total but not Trapping's traps,
/// which live outside the blocks: a restored Trapping filter is the saved
/// one with its traps cleared, and evolves as that one does.
#[test]
fn a_restored_trapping_filter_is_the_saved_one_without_its_traps() {
    let trapping = RecurringMinimum::new().with_trapping();
    let params = SpectralParams {
        counters: 600,
        k: 4,
        policy: trapping.clone(),
        layout: Layout::OneBlock,
    };
    let mut f = Spectral::<RecurringMinimum, Blocked<W16>>::new(params.clone(), 5).unwrap();
    let mut x = 3u64;
    for _ in 0..crate::scaled(3000) {
        x = mix64(x);
        f.insert_n(&(x % 200), 1 + (x >> 62) as u32);
    }
    assert!(f.policy != trapping, "the stream set no trap");
    let mut g = Spectral::<RecurringMinimum, Blocked<W16>>::restore(
        params,
        f.store().blocks().to_vec(),
        hash::seeded_hasher(5),
        f.total(),
    )
    .unwrap();
    assert!(g == f);
    assert_eq!(g.policy, trapping);
    let mut cleared = f.clone();
    cleared.policy.reset();
    for i in 0..crate::scaled(3000) {
        x = mix64(x);
        let key = x % 200;
        if i % 4 == 3 {
            g.remove(&key);
            cleared.remove(&key);
        } else {
            g.insert(&key);
            cleared.insert(&key);
        }
        assert_eq!(g.estimate(&key), cleared.estimate(&key));
    }
    assert!(g == cleared && g.policy == cleared.policy);
}

/// `SlidingWindow::with_params` turns Recurring Minimum's marker on, and
/// that is what keeps a window's counts fresh: on a skewed stream the
/// window without the marker errs on more of the keys present (stale
/// secondary counts), the one with it on fewer, against exact window counts.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn a_window_gets_the_marker_and_errs_less() {
    let params = SpectralParams::<RecurringMinimum>::new(3000, 4).with_layout(Layout::OneBlock);
    let mut plain = SlidingWindow::new(
        Spectral::<RecurringMinimum>::new(params.clone(), 3).unwrap(),
        2000,
    )
    .unwrap();
    let mut marked = SlidingWindow::<RecurringMinimum>::with_params(params, 2000, 3).unwrap();
    assert!(!plain.filter().policy().has_marker() && marked.filter().policy().has_marker());
    let mut window = VecDeque::new();
    let mut rng = crate::rng::Rng::new(0x71D0);
    for _ in 0..crate::scaled(40_000) {
        // Skewed keys: the smaller of two uniform draws in 0..1000.
        let key = rng.next_u64() % 1000;
        let key = key.min(rng.next_u64() % 1000);
        plain.insert(&key);
        marked.insert(&key);
        window.push_back(key);
        if window.len() > 2000 {
            window.pop_front();
        }
    }
    let mut truth = HashMap::new();
    for k in &window {
        *truth.entry(*k).or_insert(0u32) += 1;
    }
    let wrong = |w: &SlidingWindow<RecurringMinimum>| {
        truth.iter().filter(|&(k, &c)| w.estimate(k) != c).count()
    };
    let (p, m) = (wrong(&plain), wrong(&marked));
    std::println!(
        "keys in the window {}: wrong without the marker {p}, with it {m}",
        truth.len()
    );
    assert!(m < p, "without the marker {p}, with it {m}");
}
