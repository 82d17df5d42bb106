use super::*;
use crate::analysis::importance::{Chain, zero_fraction};
use crate::hash::{mix64, probes};
use crate::rng::Rng;
use crate::{Mask as _, W4, W8, W16, W32};
use proptest::prelude::*;
use std::vec;
use std::vec::Vec;

fn params(cells: usize, bits: u32, k: u32, p: usize, insert: Insert) -> ImportanceParams {
    ImportanceParams {
        cells,
        bits_per_cell: bits,
        k,
        p,
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
        insert,
        map: ImportanceMap::Linear { top: 50 },
    }
}

/// The filter restated over a plain `Vec` of cells with the sweep (whose
/// starts need no PRNG): probe, decrement `P` cells from the pointer,
/// raise the item's cells to its level.
struct Model {
    cells: Vec<u32>,
    cursor: usize,
    params: ImportanceParams,
    max: u32,
}

impl Model {
    fn observe<W: Width>(&mut self, h: u64, level: u32) -> bool {
        let blocks = self.cells.len() / W::CELLS;
        let pr = probes::<W>(
            self.params.layout,
            crate::stable::PLACEMENT,
            h,
            blocks,
            self.params.k,
        );
        let ids: Vec<usize> = core::iter::once(pr.first)
            .chain(pr.second)
            .flat_map(|q| {
                let mut m = q.mask;
                let mut out = Vec::new();
                while let Some(i) = m.pop_lowest() {
                    out.push(q.block * W::CELLS + i);
                }
                out
            })
            .collect();
        let duplicate = ids.iter().all(|&i| self.cells[i] != 0);
        let m = self.cells.len();
        for j in 0..self.params.p {
            let c = &mut self.cells[(self.cursor + j) % m];
            *c = c.saturating_sub(1);
        }
        self.cursor = (self.cursor + self.params.p) % m;
        for i in ids {
            self.cells[i] = self.cells[i].max(level.min(self.max));
        }
        duplicate
    }
}

fn cell<W: Width>(f: &ImportanceBloom<W>, i: usize) -> u32 {
    streambloom_kernels::cell::<W>(&f.blocks()[i / W::CELLS], i % W::CELLS)
}

fn cells_of<W: Width>(f: &ImportanceBloom<W>) -> Vec<u32> {
    (0..f.cells()).map(|i| cell(f, i)).collect()
}

proptest! {
    #![proptest_config(crate::proptest_config(64, 4, 0x1B_F00D))]

    /// Every insert policy, both layouts, against the model: the same
    /// answers and the same cells after every item.
    #[test]
    fn matches_the_model(
        blocks in 1usize..6,
        k in 1u32..8,
        p in 1usize..40,
        two in any::<bool>(),
        policy in 0u8..3,
        items in proptest::collection::vec((0u64..60, 1u32..=50), 0..crate::scaled(300)),
    ) {
        let insert = match policy {
            0 => Insert::Max,
            1 => Insert::TwoClass { important_from: 26 },
            _ => Insert::ByImportance,
        };
        let layout = if two { Layout::TwoBlocks } else { Layout::OneBlock };
        let cells = blocks * W8::CELLS;
        let params = ImportanceParams {
            eviction: Eviction::Sweep,
            layout,
            p: p.min(cells),
            ..params(cells, 3, k, 1, insert)
        };
        let mut f = ImportanceBloom::<W8>::new(params, 3).unwrap();
        let mut model = Model { cells: vec![0; cells], cursor: 0, params, max: 7 };
        for (key, importance) in items {
            let h = mix64(key);
            let level = f.level(importance).unwrap();
            prop_assert_eq!(f.observe_hash(h, importance).unwrap(), model.observe::<W8>(h, level));
            prop_assert_eq!(cells_of(&f), model.cells.clone());
        }
    }
}

#[test]
fn m_insert_is_the_stable_filter() {
    for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
        for layout in Layout::ALL {
            let params = ImportanceParams {
                eviction,
                layout,
                ..params(4096, 3, 4, 9, Insert::Max)
            };
            let mut f = ImportanceBloom::<W4>::new(params, 5).unwrap();
            let mut s = StableBloom::<W4>::new(params.stable(), 5).unwrap();
            let mut x = 1u64;
            for i in 0..crate::scaled(20_000) {
                x = mix64(x);
                let key = x % 3000;
                assert_eq!(
                    f.observe(&key, 1 + (i % 50) as u32).unwrap(),
                    s.observe(&key)
                );
            }
            assert_eq!(f.blocks(), s.blocks(), "{eviction:?} {layout:?}");
        }
    }
}

#[test]
fn every_isa_gives_identical_cells() {
    for eviction in [Eviction::Random, Eviction::ByValue, Eviction::Interleaved] {
        for insert in [
            Insert::TwoClass { important_from: 26 },
            Insert::ByImportance,
        ] {
            let mut reference: Option<Vec<Block>> = None;
            for isa in Isa::available() {
                let params = ImportanceParams {
                    eviction,
                    layout: Layout::TwoBlocks,
                    ..params(2048, 4, 5, 12, insert)
                };
                let mut f = ImportanceBloom::<W8>::new(params, 9).unwrap();
                f.set_isa(isa).unwrap();
                let mut x = 7u64;
                for i in 0..crate::scaled(5000) {
                    x = mix64(x);
                    f.observe(&(x % 900), 1 + (i % 50) as u32).unwrap();
                }
                match &reference {
                    None => reference = Some(f.blocks().to_vec()),
                    Some(r) => assert_eq!(f.blocks(), &r[..], "{isa:?} {eviction:?} {insert:?}"),
                }
            }
        }
    }
}

/// The batch forms give item by item's answers and cells, in every
/// eviction, layout and insert policy, at lengths around the batch chunk
/// (64) and the prefetch distance, on a filter small enough for the sweep's
/// put-off decrements to meet the items' blocks, and through the
/// prefetching path of a filter that prefetches.
#[test]
#[cfg_attr(miri, ignore = "thousands of items in 36 configurations")]
fn batches_equal_item_by_item() {
    let inserts = [
        Insert::Max,
        Insert::TwoClass { important_from: 26 },
        Insert::ByImportance,
    ];
    let evictions = [
        Eviction::Random,
        Eviction::Sweep,
        Eviction::ByValue,
        Eviction::Interleaved,
    ];
    for (cells, len) in [
        (512, 0),
        (512, 1),
        (512, 63),
        (1024, 65),
        (4096, 3000),
        // 8-bit cells, one a byte: past the prefetching threshold.
        (crate::store::PREFETCH_MIN_BYTES, 700),
    ] {
        for eviction in evictions {
            for layout in [Layout::OneBlock, Layout::TwoBlocks] {
                for insert in inserts {
                    let params = ImportanceParams {
                        eviction,
                        layout,
                        ..params(cells, 3, 5, 10, insert)
                    };
                    let mut one = ImportanceBloom::<W8>::new(params, 2).unwrap();
                    let mut batch = one.clone();
                    let keys: Vec<u64> = (0..len as u64).map(|i| mix64(i) % 1000).collect();
                    let imps: Vec<u32> = (0..len as u32).map(|i| 1 + i * 7 % 50).collect();
                    let want: Vec<bool> = keys
                        .iter()
                        .zip(&imps)
                        .map(|(k, &i)| one.observe(k, i).unwrap())
                        .collect();
                    let mut got = vec![false; len];
                    batch.observe_batch(&keys, &imps, &mut got).unwrap();
                    let at = (cells, len, eviction, layout, insert);
                    assert_eq!(got, want, "{at:?}");
                    assert!(batch == one, "{at:?}");
                    let hashes: Vec<u64> = keys.iter().map(|k| one.hash(k)).collect();
                    let mut found = vec![false; len];
                    one.contains_batch_hash(&hashes, &mut found).unwrap();
                    let each: Vec<bool> = hashes.iter().map(|&h| one.contains_hash(h)).collect();
                    assert_eq!(found, each, "{at:?}");
                }
            }
        }
    }
}

/// An importance outside the map's domain ends a batch with its error,
/// the items before it observed (answers and cells as item by item) and
/// none after, wherever it falls in or across the chunks.
#[test]
fn a_refused_importance_ends_the_batch_after_the_items_before_it() {
    for eviction in [
        Eviction::Random,
        Eviction::Sweep,
        Eviction::ByValue,
        Eviction::Interleaved,
    ] {
        for bad in [0, 1, 63, 64, 65, 150] {
            let params = ImportanceParams {
                eviction,
                ..params(1024, 3, 5, 10, Insert::ByImportance)
            };
            let mut one = ImportanceBloom::<W8>::new(params, 3).unwrap();
            let mut batch = one.clone();
            let hashes: Vec<u64> = (0..200u64).map(mix64).collect();
            let mut imps: Vec<u32> = (0..200u32).map(|i| 1 + i % 50).collect();
            imps[bad] = 51;
            let want: Vec<bool> = hashes[..bad]
                .iter()
                .zip(&imps)
                .map(|(&h, &i)| one.observe_hash(h, i).unwrap())
                .collect();
            let mut got = vec![false; 200];
            let err = batch.observe_batch_hash(&hashes, &imps, &mut got);
            assert!(
                matches!(
                    err,
                    Err(Error::Parameter {
                        name: "importance",
                        ..
                    })
                ),
                "{eviction:?} {bad}: {err:?}"
            );
            assert_eq!(&got[..bad], &want[..], "{eviction:?} {bad}");
            assert!(batch == one, "{eviction:?} {bad}");
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let ok = params(1024, 3, 4, 4, Insert::ByImportance);
    let bad = |p: ImportanceParams| ImportanceBloom::<W8>::new(p, 1).unwrap_err();
    assert!(matches!(
        bad(ImportanceParams { k: 0, ..ok }),
        Error::Parameter { name: "k", .. }
    ));
    assert!(matches!(
        bad(ImportanceParams {
            map: ImportanceMap::Linear { top: 0 },
            ..ok
        }),
        Error::Parameter { name: "top", .. }
    ));
    assert!(matches!(
        bad(ImportanceParams {
            map: ImportanceMap::Classes(&[1, 2, 3, 4, 5, 6, 7]),
            ..ok
        }),
        Error::Parameter { name: "map", .. }
    ));
    assert!(matches!(
        bad(ImportanceParams {
            map: ImportanceMap::Classes(&[5, 5]),
            ..ok
        }),
        Error::Parameter { name: "map", .. }
    ));
    assert!(matches!(
        bad(ImportanceParams {
            insert: Insert::TwoClass { important_from: 0 },
            ..ok
        }),
        Error::Parameter {
            name: "important_from",
            ..
        }
    ));
    // One-bit cells: M/2-insert's ⌊Max/2⌋ is 0, which would set nothing.
    let one_bit = ImportanceParams {
        bits_per_cell: 1,
        insert: Insert::TwoClass { important_from: 26 },
        ..ok
    };
    assert!(matches!(
        bad(one_bit),
        Error::Parameter {
            name: "bits_per_cell",
            ..
        }
    ));
    assert!(
        ImportanceBloom::<W8>::new(
            ImportanceParams {
                bits_per_cell: 2,
                ..one_bit
            },
            1
        )
        .is_ok()
    );
    assert!(
        ImportanceBloom::<W8>::new(
            ImportanceParams {
                insert: Insert::Max,
                ..one_bit
            },
            1
        )
        .is_ok()
    );
    let mut f = ImportanceBloom::<W8>::new(ok, 1).unwrap();
    let before = f.blocks().to_vec();
    for importance in [0, 51, u32::MAX] {
        assert!(matches!(
            f.observe("x", importance),
            Err(Error::Parameter {
                name: "importance",
                ..
            })
        ));
    }
    assert_eq!(
        f.blocks(),
        &before[..],
        "a refused observe changed the filter"
    );
    let wild = ImportanceParams {
        map: ImportanceMap::Function(|i| i),
        ..ok
    };
    let mut g = ImportanceBloom::<W8>::new(wild, 1).unwrap();
    assert!(g.observe("x", 7).is_ok());
    assert!(g.observe("x", 8).is_err()); // beyond Max = 7
    let mut dup = [false; 2];
    assert!(matches!(
        g.observe_batch_hash(&[1, 2], &[1], &mut dup),
        Err(Error::Length { .. })
    ));
}

/// The stationary zero fraction of IBF-2C and IBF-MC on a stream of
/// distinct items with importance uniform on `1..=50`, measured at
/// snapshots spaced well past the chain's relaxation time, against the
/// exact chain's `V_0`: within 5 standard errors of the snapshots' mean
/// (from their own spread) plus 1 % of `V_0` for what the model leaves
/// out (the two-block layout's merged halves, the blocks' shared load).
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn zero_fraction_matches_the_markov_chain() {
    // (m, d, K, P): Table II's, and two others.
    for (m, d, k, p) in [(16_384, 3, 5, 10), (8_192, 2, 3, 6), (32_768, 4, 4, 40)] {
        for insert in [
            Insert::TwoClass { important_from: 26 },
            Insert::ByImportance,
        ] {
            for layout in Layout::ALL {
                let params = ImportanceParams {
                    layout,
                    ..params(m, d, k, p, insert)
                };
                let mut f = ImportanceBloom::<W8>::new(params, 11).unwrap();
                let max = (1u32 << d) - 1;
                // The levels' law: the map's over importance 1..=50.
                let mut q = vec![0.0; max as usize];
                for imp in 1..=50 {
                    q[f.level(imp).unwrap() as usize - 1] += 1.0 / 50.0;
                }
                let v0 = zero_fraction(Chain::Exact, p as f64 / m as f64, k as f64 / m as f64, &q)
                    .unwrap();
                let mut rng = Rng::new(0x2E40 ^ m as u64);
                let mut observe = |f: &mut ImportanceBloom<W8>, n: usize| {
                    for _ in 0..n {
                        let h = rng.next_u64();
                        f.observe_hash(h, 1 + rng.below(50) as u32).unwrap();
                    }
                };
                // Relaxation: about 1 500 items a cell-visit (m/K·Max/P…);
                // warm up for 40 relaxation times of the slowest here.
                let relax = (m as f64 / p as f64 * f64::from(max)) as usize;
                observe(&mut f, 8 * relax);
                let snaps: Vec<f64> = (0..24)
                    .map(|_| {
                        observe(&mut f, relax);
                        f.zero_fraction()
                    })
                    .collect();
                let n = snaps.len() as f64;
                let mean = snaps.iter().sum::<f64>() / n;
                let var = snaps.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
                let se = (var / n).sqrt();
                assert!(
                    (mean - v0).abs() <= 5.0 * se + 0.01 * v0,
                    "m {m} d {d} K {k} P {p} {insert:?} {layout:?}: measured {mean} (se {se}), chain {v0}"
                );
            }
        }
    }
}

/// IBF-H's sampler: the values of the cells it decrements follow
/// `n_v/v / Σ_u n_u/u` (χ² over the levels, fixed seed, 1 % critical
/// value), on a fixed array restored before every round.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn by_value_eviction_draws_inversely_to_the_value() {
    let m = 64 * W8::CELLS;
    let params = ImportanceParams {
        eviction: Eviction::ByValue,
        ..params(m, 3, 3, 50, Insert::ByImportance)
    };
    // Cells of every value 0..=7, in equal numbers.
    let mut start = ImportanceBloom::<W8>::new(params, 1).unwrap();
    {
        let (cells, _) = start.stable.cells_and_rng();
        for i in 0..m {
            cells.set(i, (i % 8) as u32).unwrap();
        }
    }
    let mut counts = [0u64; 8];
    let mut f = start.clone();
    for _ in 0..200 {
        // The cells restored, the PRNG not: independent rounds.
        f.stable
            .cells_and_rng()
            .0
            .blocks_mut()
            .copy_from_slice(start.blocks());
        f.evict_by_value();
        for i in 0..m {
            let (was, now) = (cell(&start, i), cell(&f, i));
            // A cell drawn twice was decremented at `was`, then `was − 1`.
            assert!(now <= was, "a cell rose");
            for v in now + 1..=was {
                counts[v as usize] += 1;
            }
        }
    }
    assert_eq!(counts[0], 0, "a zero cell was decremented");
    let total: u64 = counts.iter().sum();
    assert_eq!(total, 200 * 50, "every round makes its P decrements");
    let weight: f64 = (1..8).map(|v| 1.0 / v as f64).sum();
    let chi2: f64 = (1..8)
        .map(|v| {
            let want = total as f64 * (1.0 / v as f64) / weight;
            let got = counts[v] as f64;
            (got - want) * (got - want) / want
        })
        .sum();
    // 6 degrees of freedom: the 1 % critical value is 16.81.
    assert!(chi2 < 16.81, "χ² {chi2}: {counts:?}");
}

#[test]
fn levels_follow_the_policy_and_map() {
    let ok = params(1024, 3, 4, 4, Insert::ByImportance);
    let f = ImportanceBloom::<W16>::new(ok, 1).unwrap();
    // ⌈i·7/50⌉: levels 1..6 get 7 importances each, level 7 gets 8.
    let mut per_level = [0; 8];
    for i in 1..=50 {
        per_level[f.level(i).unwrap() as usize] += 1;
    }
    assert_eq!(per_level, [0, 7, 7, 7, 7, 7, 7, 8]);
    let classes = ImportanceParams {
        map: ImportanceMap::Classes(&[10, 20]),
        ..ok
    };
    let g = ImportanceBloom::<W16>::new(classes, 1).unwrap();
    assert_eq!(
        [g.level(1), g.level(10), g.level(25)].map(Result::unwrap),
        [1, 2, 3]
    );
    let max = ImportanceParams {
        insert: Insert::Max,
        ..ok
    };
    assert_eq!(
        ImportanceBloom::<W16>::new(max, 1)
            .unwrap()
            .level(3)
            .unwrap(),
        7
    );
}

/// The level table answers as the computation, inside and outside every
/// map's domain and past the table's end.
#[test]
fn the_level_table_is_the_computed_level() {
    let maps = [
        ImportanceMap::Linear { top: 50 },
        ImportanceMap::Linear { top: 200 },
        ImportanceMap::Classes(&[3, 40, 70]),
    ];
    let inserts = [
        Insert::Max,
        Insert::TwoClass { important_from: 26 },
        Insert::ByImportance,
    ];
    for map in maps {
        for insert in inserts {
            let p = ImportanceParams {
                map,
                ..params(1024, 3, 4, 4, insert)
            };
            let f = ImportanceBloom::<W8>::new(p, 1).unwrap();
            for i in 0..300 {
                assert_eq!(f.level(i), f.computed_level(i), "{map:?} {insert:?} {i}");
            }
        }
    }
}

/// Importance weights (index = importance) over `1..=50`: equal,
/// proportional to the importance, inversely proportional (§IV-D's three
/// streams).
fn law(kind: usize) -> Vec<f64> {
    (0..=50)
        .map(|i| match (i, kind) {
            (0, _) => 0.0,
            (_, 0) => 1.0,
            (_, 1) => f64::from(i),
            _ => 1.0 / f64::from(i),
        })
        .collect()
}

/// An importance drawn with probability `∝ weights[i]`.
fn draw(rng: &mut Rng, cumulative: &[f64]) -> u32 {
    let u = rng.unit() * cumulative[cumulative.len() - 1];
    cumulative.partition_point(|&c| c <= u) as u32
}

/// Runs `f` to its steady state on distinct keys with importances drawn
/// from `weights`, then returns the rate at which fresh keys are reported
/// duplicates (each `observe` of a fresh key is a false-positive trial)
/// and its standard error by batch means: 32 batches of `4·Max·m/P` items,
/// each many times the time over which the cells' state is correlated (a
/// set cell lives `v·m/P` items), so the batches are nearly independent.
fn steady_fpr<W: Width>(f: &mut ImportanceBloom<W>, weights: &[f64], seed: u64) -> (f64, f64) {
    let p = *f.params();
    let m = f.cells();
    let max = p.stable().max() as usize;
    let cumulative: Vec<f64> = weights
        .iter()
        .scan(0.0, |s, &w| {
            *s += w;
            Some(*s)
        })
        .collect();
    let mut rng = Rng::new(seed);
    let mut fresh = |f: &mut ImportanceBloom<W>, n: usize| {
        (0..n)
            .filter(|_| {
                let imp = draw(&mut rng, &cumulative);
                f.observe_hash(rng.next_u64(), imp).unwrap()
            })
            .count()
    };
    // A cell never set since the start biases the state for
    // `(1 − K/m)^n`: below e^-30 after 30·m/K items; `Max + 2` sweeps
    // let every cell be decremented `Max` times.
    let warm = (30 * m / p.k as usize).max((max + 2) * m.div_ceil(p.p));
    fresh(f, warm);
    let (g, run) = (32, 4 * max * m.div_ceil(p.p));
    let rates: Vec<f64> = (0..g).map(|_| fresh(f, run) as f64 / run as f64).collect();
    let mean = rates.iter().sum::<f64>() / g as f64;
    let var = rates.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (g - 1) as f64;
    (mean, libm::sqrt(var / g as f64))
}

/// The rate the planner promises is the rate the filter delivers: plan at
/// several (memory, target, policy, importance law, width) points, run a
/// stream of fresh keys to the steady state and measure. The promise
/// ([`ImportanceParams::predicted_fpr`], at most the target) is exact up
/// to the sweep's stagger for `Sweep`, so the measured rate lies within 5
/// standard errors of it; for `Random` it is an upper bound (as the Stable
/// filter's), so the measured rate is at most 5 standard errors above it,
/// and not below 80 % of it (the bound is within 1.25× where eviction runs
/// span a few blocks, as the plans' do); for `Interleaved`, planned by
/// `Random`'s model and nearer the unblocked filter's rate with two blocks,
/// not below half of it.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn planned_filters_deliver_their_target() {
    fn check<W: Width>(
        memory: usize,
        target: f64,
        eviction: Eviction,
        insert: Insert,
        map: ImportanceMap,
        weights: &[f64],
        layout: Layout,
    ) {
        let planned = ImportanceParams::plan_with_layout::<W>(
            memory, target, eviction, insert, map, weights, layout,
        )
        .unwrap();
        let promised = planned.predicted_fpr::<W>(weights).unwrap();
        assert!(
            promised <= target,
            "{planned:?}: promised {promised} > {target}"
        );
        let mut f = ImportanceBloom::<W>::new(planned, 23).unwrap();
        assert_eq!(f.cells() * W::BITS as usize / 8, memory);
        let (fpr, se) = steady_fpr(&mut f, weights, 0x91A7 ^ memory as u64);
        std::println!(
            "W{} {memory} B, target {target}: d {} K {} P {} {eviction:?} {insert:?} {layout:?}: \
             promised {promised:.5}, delivered {fpr:.5} (se {se:.5})",
            W::BITS,
            planned.bits_per_cell,
            planned.k,
            planned.p
        );
        assert!(
            fpr <= promised + 5.0 * se,
            "{planned:?}: promised {promised}, delivered {fpr} (se {se})"
        );
        let floor = match eviction {
            Eviction::Sweep => promised - 5.0 * se,
            Eviction::Interleaved => 0.5 * promised - 5.0 * se,
            _ => 0.8 * promised - 5.0 * se,
        };
        assert!(
            fpr >= floor,
            "{planned:?}: promised {promised}, delivered {fpr} (se {se})"
        );
    }
    let linear = ImportanceMap::Linear { top: 50 };
    let two_class = Insert::TwoClass { important_from: 26 };
    let two = Layout::TwoBlocks;
    check::<W8>(
        16 << 10,
        0.05,
        Eviction::Random,
        Insert::ByImportance,
        linear,
        &law(0),
        two,
    );
    check::<W8>(
        16 << 10,
        0.01,
        Eviction::Sweep,
        two_class,
        linear,
        &law(0),
        two,
    );
    check::<W8>(
        64 << 10,
        0.01,
        Eviction::Random,
        Insert::ByImportance,
        linear,
        &law(2),
        two,
    );
    check::<W8>(
        64 << 10,
        0.01,
        Eviction::Interleaved,
        Insert::ByImportance,
        linear,
        &law(2),
        two,
    );
    let classes = ImportanceMap::Classes(&[10, 30, 45]);
    check::<W8>(
        64 << 10,
        0.2,
        Eviction::Sweep,
        Insert::ByImportance,
        classes,
        &law(1),
        two,
    );
    check::<W8>(
        16 << 10,
        0.02,
        Eviction::Random,
        Insert::Max,
        linear,
        &law(0),
        Layout::OneBlock,
    );
    check::<W4>(
        16 << 10,
        0.05,
        Eviction::Random,
        two_class,
        linear,
        &law(2),
        two,
    );
    check::<W16>(
        32 << 10,
        0.1,
        Eviction::Sweep,
        Insert::ByImportance,
        linear,
        &law(1),
        Layout::OneBlock,
    );
}

/// The planner's bad input: memory, target, IBF-H's eviction, weights,
/// importances outside the map's domain (checked before any search).
#[test]
fn planner_bad_input_is_an_error() {
    let linear = ImportanceMap::Linear { top: 50 };
    let mc = Insert::ByImportance;
    let plan = |memory, target, eviction, map, weights: &[f64]| {
        ImportanceParams::plan::<W8>(memory, target, eviction, mc, map, weights)
    };
    let name = |r: Result<ImportanceParams>| match r {
        Err(Error::Parameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    let w = law(0);
    assert_eq!(
        name(plan(63, 0.05, Eviction::Random, linear, &w)),
        "memory_bytes"
    );
    assert_eq!(
        name(plan(usize::MAX, 0.05, Eviction::Random, linear, &w)),
        "memory_bytes"
    );
    for target in [0.0, 1.0, -0.5, f64::NAN] {
        assert_eq!(
            name(plan(16 << 10, target, Eviction::Random, linear, &w)),
            "target_fpr"
        );
    }
    assert_eq!(
        name(plan(16 << 10, 0.05, Eviction::ByValue, linear, &w)),
        "eviction"
    );
    for weights in [&[][..], &[0.0, 0.0], &[0.0, -1.0], &[0.0, f64::INFINITY]] {
        assert_eq!(
            name(plan(16 << 10, 0.05, Eviction::Random, linear, weights)),
            "importance_weights"
        );
    }
    // Importance 0, and 51 > top: outside the linear map's domain.
    assert_eq!(
        name(plan(16 << 10, 0.05, Eviction::Random, linear, &[1.0, 1.0])),
        "importance"
    );
    let mut past_top = law(0);
    past_top.push(1.0);
    assert_eq!(
        name(plan(16 << 10, 0.05, Eviction::Random, linear, &past_top)),
        "importance"
    );
    // M/2-insert at d = 1 has level 0 for the unimportant class.
    let d1 = ImportanceParams {
        insert: Insert::TwoClass { important_from: 26 },
        ..params(16_384, 1, 3, 10, mc)
    };
    assert!(matches!(
        d1.predicted_fpr::<W8>(&w),
        Err(Error::Parameter {
            name: "bits_per_cell",
            ..
        })
    ));
}

/// The planner's searches: a function map that fits only some `d` is
/// planned at those; a map no `d` fits is its error; a target out of
/// reach is an error; `with_smallest_p` is minimal.
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn planner_searches_where_it_can() {
    let linear = ImportanceMap::Linear { top: 50 };
    let mc = Insert::ByImportance;
    let plan = |memory, target, eviction, map, weights: &[f64]| {
        ImportanceParams::plan::<W8>(memory, target, eviction, mc, map, weights)
    };
    let name = |r: Result<ImportanceParams>| match r {
        Err(Error::Parameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    let w = law(0);
    assert!(plan(16 << 10, 0.05, Eviction::Random, linear, &w).is_ok());
    // A function sending importance 9 to level 9 fits only d >= 4: those
    // are planned; sending it to 300, no d of a W8 cell fits.
    let nine = ImportanceMap::Function(|i| i);
    let mut upto9 = vec![1.0; 10];
    upto9[0] = 0.0;
    let p = plan(16 << 10, 0.05, Eviction::Random, nine, &upto9).unwrap();
    assert!(p.bits_per_cell >= 4, "{p:?}");
    let big = ImportanceMap::Function(|i| 300 * i);
    assert_eq!(
        name(plan(16 << 10, 0.05, Eviction::Random, big, &upto9)),
        "importance"
    );
    // Unreachable: one block (64 cells) and a target below its reach.
    assert_eq!(
        name(plan(64, 1e-12, Eviction::Sweep, linear, &w)),
        "target_fpr"
    );
    // with_smallest_p: the smallest P meeting the target.
    let base = params(16_384, 3, 5, 1, mc);
    let planned = base.with_smallest_p::<W8>(0.05, &law(2)).unwrap();
    assert!(planned.predicted_fpr::<W8>(&law(2)).unwrap() <= 0.05);
    let below = ImportanceParams {
        p: planned.p - 1,
        ..planned
    };
    assert!(below.predicted_fpr::<W8>(&law(2)).unwrap() > 0.05);
}

/// The planner's pruned search (each `(d, K)` searched only for a `P`
/// that would beat the best so far) returns what the exhaustive search of
/// its docs returns: the smallest `P` at every `d` and `K`, plans above
/// `PLAN_MAX_RUN_BLOCKS` blocks' cells or refused by the constructor
/// skipped, the longest memory kept, ties to the smaller `d`, then `K`.
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn planner_is_the_exhaustive_search() {
    fn exhaustive<W: Width>(
        memory: usize,
        target: f64,
        eviction: Eviction,
        insert: Insert,
        layout: Layout,
        weights: &[f64],
    ) -> Option<std::string::String> {
        let cells = memory / Block::BYTES * W::CELLS;
        let mut best: Option<(f64, ImportanceParams)> = None;
        for bits_per_cell in 1..=W::BITS {
            for k in 1..=(W::CELLS.min(32) as u32) {
                let base = ImportanceParams {
                    eviction,
                    layout,
                    ..params(cells, bits_per_cell, k, 1, insert)
                };
                let Ok(levels) = base.level_distribution(weights) else {
                    continue;
                };
                let Ok(planned) = base.with_smallest_p::<W>(target, weights) else {
                    continue;
                };
                if planned.p > crate::stable::PLAN_MAX_RUN_BLOCKS * W::CELLS
                    || planned.validate::<W>().is_err()
                {
                    continue;
                }
                let mean: f64 = levels.iter().map(|&(v, x)| f64::from(v) * x).sum();
                let decrements = if eviction == Eviction::Sweep {
                    mean - 0.5
                } else {
                    mean
                };
                let lifetime = decrements * cells as f64 / planned.p as f64;
                if best.is_none_or(|(b, _)| lifetime > b) {
                    best = Some((lifetime, planned));
                }
            }
        }
        best.map(|(_, p)| std::format!("{p:?}"))
    }
    let linear = ImportanceMap::Linear { top: 50 };
    let mut checked = 0;
    for target in [0.2, 0.02] {
        for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
            for insert in [
                Insert::ByImportance,
                Insert::TwoClass { important_from: 26 },
            ] {
                for layout in [Layout::OneBlock, Layout::TwoBlocks] {
                    let w = law(2);
                    let want = exhaustive::<W8>(8 << 10, target, eviction, insert, layout, &w);
                    let got = ImportanceParams::plan_with_layout::<W8>(
                        8 << 10,
                        target,
                        eviction,
                        insert,
                        linear,
                        &w,
                        layout,
                    );
                    assert_eq!(
                        got.ok().map(|p| std::format!("{p:?}")),
                        want,
                        "{target} {eviction:?} {insert:?} {layout:?}"
                    );
                    checked += usize::from(want.is_some());
                }
            }
        }
    }
    // Cells of 16 and 32 bits: levels 1..=50 spread over `Max` up to
    // 2^32 − 1.
    let w = law(1);
    let mc = Insert::ByImportance;
    let two = Layout::TwoBlocks;
    let want = exhaustive::<W16>(4096, 0.05, Eviction::Random, mc, two, &w);
    let got = ImportanceParams::plan::<W16>(4096, 0.05, Eviction::Random, mc, linear, &w);
    assert_eq!(got.ok().map(|p| std::format!("{p:?}")), want);
    let wide = exhaustive::<W32>(4096, 0.02, Eviction::Sweep, mc, two, &w);
    let got = ImportanceParams::plan::<W32>(4096, 0.02, Eviction::Sweep, mc, linear, &w);
    assert_eq!(got.ok().map(|p| std::format!("{p:?}")), wide);
    assert!(wide.is_some());
    assert!(checked >= 6 && want.is_some(), "{checked}");
}

/// What planning costs with many importance levels (cells of 16 bits,
/// importances `1..=top` mapped linearly, uniform weights, 1 MiB, target
/// 0.05): a report, not a test of speed.
/// `cargo test --release -p streambloom --lib importance_plan_cost_report -- --ignored --nocapture`
#[test]
#[ignore = "a report: prints the planner's time"]
fn importance_plan_cost_report() {
    for top in [50u32, 500, 4000] {
        let mut w = vec![1.0; top as usize + 1];
        w[0] = 0.0;
        let map = ImportanceMap::Linear { top };
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let start = std::time::Instant::now();
            let p = ImportanceParams::plan::<W16>(
                1 << 20,
                0.05,
                eviction,
                Insert::ByImportance,
                map,
                &w,
            )
            .unwrap();
            std::println!(
                "importances 1..={top:5} {eviction:?}: {:7.3} s  d {} K {} P {}",
                start.elapsed().as_secs_f64(),
                p.bits_per_cell,
                p.k,
                p.p
            );
        }
    }
}

/// The audit's plans the constructor refused: M/2-insert with every
/// weighted importance important (`important_from` 1, or 26 with all the
/// weight on 50) planned `d = 1`, whose `⌊Max/2⌋ = 0` the constructor
/// refuses whatever the weights; `important_from` 0 planned at all. The
/// params-level functions refuse what the constructor refuses.
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn planner_and_constructor_agree_on_two_class() {
    let linear = ImportanceMap::Linear { top: 50 };
    let mut top = vec![0.0; 51];
    top[50] = 1.0;
    for (from, w) in [(1, law(0)), (26, top.clone()), (50, top)] {
        let insert = Insert::TwoClass {
            important_from: from,
        };
        let planned =
            ImportanceParams::plan::<W8>(4096, 0.2, Eviction::Random, insert, linear, &w).unwrap();
        assert!(planned.bits_per_cell >= 2, "{from}: {planned:?}");
        ImportanceBloom::<W8>::new(planned, 1).unwrap();
        ImportanceBloom::<W8>::plan(4096, 0.2, Eviction::Random, insert, linear, &w, 1).unwrap();
        // d = 1: every params-level function refuses it, as `new` does.
        let d1 = ImportanceParams {
            insert,
            ..params(4096, 1, 2, 3, Insert::Max)
        };
        let bits = |r: Result<ImportanceParams>| {
            matches!(
                r,
                Err(Error::Parameter {
                    name: "bits_per_cell",
                    ..
                })
            )
        };
        assert!(bits(ImportanceBloom::<W8>::new(d1, 1).map(|f| *f.params())));
        assert!(bits(d1.level_distribution(&w).map(|_| d1)));
        assert!(bits(d1.predicted_fpr::<W8>(&w).map(|_| d1)));
        assert!(bits(d1.with_smallest_p::<W8>(0.2, &w)));
    }
    // `important_from` 0: refused by all, the planner included.
    let zero = Insert::TwoClass { important_from: 0 };
    let from0 = |r: Result<ImportanceParams>| {
        matches!(
            r,
            Err(Error::Parameter {
                name: "important_from",
                ..
            })
        )
    };
    let w = law(0);
    let p3 = ImportanceParams {
        insert: zero,
        ..params(4096, 3, 2, 3, Insert::Max)
    };
    assert!(from0(
        ImportanceBloom::<W8>::new(p3, 1).map(|f| *f.params())
    ));
    assert!(from0(p3.level_distribution(&w).map(|_| p3)));
    assert!(from0(p3.predicted_fpr::<W8>(&w).map(|_| p3)));
    assert!(from0(p3.with_smallest_p::<W8>(0.2, &w)));
    assert!(from0(ImportanceParams::plan::<W8>(
        4096,
        0.2,
        Eviction::Random,
        zero,
        linear,
        &w
    )));
    // Parameters the Stable filter refuses: refused before the weights.
    let k0 = ImportanceParams {
        k: 0,
        ..params(4096, 3, 2, 3, Insert::ByImportance)
    };
    assert!(matches!(
        k0.predicted_fpr::<W8>(&w),
        Err(Error::Parameter { name: "k", .. })
    ));
}

/// Every plan the planner returns constructs: a sweep over insert
/// policies (M/2-insert with `important_from` 0, 1, mid and top), maps,
/// weight vectors, memory sizes, targets, evictions, layouts and widths.
#[test]
#[cfg_attr(miri, ignore = "numerics, not memory safety: too slow under Miri")]
fn every_plan_constructs() {
    fn sweep<W: Width>(memories: &[usize], checked: &mut (usize, usize)) {
        let mut top = vec![0.0; 51];
        top[50] = 1.0;
        let mut bottom = vec![0.0; 51];
        bottom[1] = 1.0;
        let weights = [law(0), law(1), law(2), top, bottom];
        let maps = [
            ImportanceMap::Linear { top: 50 },
            ImportanceMap::Classes(&[10, 30, 45]),
            ImportanceMap::Function(|i| 1 + i / 10),
        ];
        let inserts = [
            Insert::Max,
            Insert::ByImportance,
            Insert::TwoClass { important_from: 0 },
            Insert::TwoClass { important_from: 1 },
            Insert::TwoClass { important_from: 26 },
            Insert::TwoClass { important_from: 50 },
        ];
        for &memory in memories {
            for target in [0.3, 0.02] {
                for eviction in [Eviction::Random, Eviction::Sweep] {
                    for layout in Layout::ALL {
                        for insert in inserts {
                            for map in maps {
                                for w in &weights {
                                    let planned = ImportanceParams::plan_with_layout::<W>(
                                        memory, target, eviction, insert, map, w, layout,
                                    );
                                    checked.0 += 1;
                                    if let Ok(p) = planned {
                                        checked.1 += 1;
                                        if let Err(e) = ImportanceBloom::<W>::new(p, 3) {
                                            panic!(
                                                "W{} {memory} {target} {eviction:?} {layout:?} {insert:?} {map:?} {w:?}: \
                                                 planned {p:?}, refused: {e:?}",
                                                W::BITS
                                            );
                                        }
                                        assert!(p.predicted_fpr::<W>(w).unwrap() <= target);
                                    } else if let Insert::TwoClass { important_from: 0 } = insert {
                                    } else {
                                        // Only unreachable targets here.
                                        assert!(
                                            matches!(
                                                planned,
                                                Err(Error::Parameter {
                                                    name: "target_fpr",
                                                    ..
                                                })
                                            ),
                                            "W{} {memory} {target} {insert:?} {map:?}: {planned:?}",
                                            W::BITS
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    let mut checked = (0, 0);
    sweep::<W4>(&[64, 4096], &mut checked);
    sweep::<W8>(&[64, 4096], &mut checked);
    assert!(checked.1 * 2 > checked.0, "{checked:?}");
}

/// The Markov chain models random eviction: there the measured zero
/// fraction is the chain's `V_0` and the delivered rate (one cell an item,
/// so no blocks) is `1 − V_0`, at or above the paper's `(1 − V_0)^K`.
/// Under the sweep neither holds: the zero fraction is the sweep's
/// `steady_zero_fraction`, not `V_0`, and at `d = 1` the delivered rate
/// falls below the "bound". (m = 4096, `d = 1`, `K = P = 1`, and `d = 5`, `K = 1`,
/// `P = 16`: settings the other zero-fraction tests do not use.)
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn the_chain_models_random_eviction_not_the_sweep() {
    use crate::analysis::importance::{false_positive_bound, steady_zero_fraction};
    for (m, d, p) in [(4096usize, 1u32, 1usize), (4096, 5, 16)] {
        let max = (1u32 << d) - 1;
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let params = ImportanceParams {
                eviction,
                ..params(m, d, 1, p, Insert::ByImportance)
            };
            let mut f = ImportanceBloom::<W8>::new(params, 5).unwrap();
            let mut q = vec![0.0; max as usize];
            for imp in 1..=50 {
                q[f.level(imp).unwrap() as usize - 1] += 1.0 / 50.0;
            }
            let levels: Vec<(u32, f64)> = (1..=max)
                .zip(q.iter().copied())
                .filter(|&(_, x)| x > 0.0)
                .collect();
            let v0 = zero_fraction(Chain::Exact, p as f64 / m as f64, 1.0 / m as f64, &q).unwrap();
            let bound = false_positive_bound(v0, 1);
            let mut rng = Rng::new(0x5EE9 ^ u64::from(d));
            let relax = m / p * max as usize;
            let mut zeros = Vec::new();
            let mut hits = 0usize;
            let mut trials = 0usize;
            for round in 0..40 {
                for _ in 0..relax {
                    let dup = f
                        .observe_hash(rng.next_u64(), 1 + rng.below(50) as u32)
                        .unwrap();
                    if round >= 8 {
                        hits += usize::from(dup);
                        trials += 1;
                    }
                }
                if round >= 8 {
                    zeros.push(f.zero_fraction());
                }
            }
            let n = zeros.len() as f64;
            let mean = zeros.iter().sum::<f64>() / n;
            let var = zeros.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
            let se = (var / n).sqrt();
            let fpr = hits as f64 / trials as f64;
            let predicted =
                steady_zero_fraction(params.stable().eviction, m, 1, p, &levels).unwrap();
            let ctx = std::format!(
                "m {m} d {d} P {p} {eviction:?}: zeros {mean} (se {se}), chain V_0 {v0}, \
                 predicted {predicted}; fpr {fpr}, bound {bound}"
            );
            // The prediction: the chain for Random, the sweep's for Sweep.
            assert!(
                (mean - predicted).abs() <= 5.0 * se + 0.01 * predicted,
                "{ctx}"
            );
            match eviction {
                Eviction::Random => {
                    assert!((predicted - v0).abs() < 1e-12, "{ctx}");
                    assert!(fpr >= bound - 0.01, "{ctx}");
                    assert!((fpr - (1.0 - v0)).abs() < 0.01, "{ctx}");
                }
                // At d = 1 the sweep's zero fraction is far from V_0, and
                // the rate below the "bound".
                _ if d == 1 => {
                    assert!(mean > v0 + 0.05, "{ctx}");
                    assert!(fpr < bound - 0.05, "{ctx}");
                }
                _ => {}
            }
        }
    }
}
