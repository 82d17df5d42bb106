use super::*;
use crate::rng::Rng;
use crate::{Error, W1, W2, W4, W8, W16, W32};
use proptest::prelude::*;
use std::collections::HashMap;
use std::format;
use std::vec;
use std::vec::Vec;

fn params(cells: usize, bits: u32, k: u32, p: usize, eviction: Eviction) -> StableParams {
    StableParams {
        cells,
        bits_per_cell: bits,
        k,
        p,
        eviction,
        layout: Layout::OneBlock,
    }
}

/// `p` with two blocks an item if `two` (for the property tests' draws).
fn in_layout(p: StableParams, two: bool) -> StableParams {
    let layout = if two {
        Layout::TwoBlocks
    } else {
        Layout::OneBlock
    };
    StableParams { layout, ..p }
}

/// A cell count whose whole blocks hold more cells than a `usize` counts
/// (1-bit cells, 512 a block, in far fewer bytes than `isize::MAX`) is an
/// error, not an overflow: found by the `filters_api` fuzz target.
/// Every width, at every cell count from the largest down to where its
/// blocks fit: an error or a count that fits, never a panic; the largest
/// counts are `cells` errors.
#[test]
fn cells_past_usize_in_whole_blocks_are_an_error() {
    fn check<W: Width>() {
        let p = params(usize::MAX, 1, 3, 10, Eviction::Random);
        for e in [
            p.blocks::<W>().unwrap_err(),
            p.effective_cells::<W>().unwrap_err(),
        ] {
            assert!(matches!(e, Error::Parameter { name: "cells", .. }), "{e}");
        }
        for shift in 0..12 {
            for cells in [usize::MAX >> shift, (usize::MAX >> shift) - W::CELLS] {
                let p = params(cells, 1, 3, 10, Eviction::Random);
                if let Ok(m) = p.effective_cells::<W>() {
                    assert!(m >= cells && m - cells < W::CELLS, "{cells}: {m}");
                }
            }
        }
    }
    check::<W1>();
    check::<W2>();
    check::<W4>();
    check::<W8>();
    check::<W16>();
    check::<W32>();
}

#[test]
fn every_bad_input_is_an_error() {
    let ok = params(1024, 3, 3, 10, Eviction::Random);
    let bad = |p: StableParams| StableBloom::<W4>::new(p, 1).unwrap_err();
    assert!(matches!(
        bad(StableParams { cells: 0, ..ok }),
        Error::Parameter { name: "cells", .. }
    ));
    assert!(matches!(
        bad(StableParams { k: 0, ..ok }),
        Error::Parameter { name: "k", .. }
    ));
    assert!(matches!(
        bad(StableParams { k: 129, ..ok }),
        Error::Parameter { name: "k", .. }
    ));
    assert!(StableBloom::<W4>::new(StableParams { k: 128, ..ok }, 1).is_ok());
    assert!(matches!(
        bad(StableParams { p: 0, ..ok }),
        Error::Parameter { name: "p", .. }
    ));
    // 1000 cells round up to 1024: P may reach the effective m, not beyond.
    assert!(
        StableBloom::<W4>::new(
            StableParams {
                cells: 1000,
                p: 1024,
                ..ok
            },
            1
        )
        .is_ok()
    );
    assert!(matches!(
        bad(StableParams { p: 1025, ..ok }),
        Error::Parameter { name: "p", .. }
    ));
    assert!(matches!(
        bad(StableParams {
            bits_per_cell: 0,
            ..ok
        }),
        Error::Parameter {
            name: "bits_per_cell",
            ..
        }
    ));
    assert!(matches!(
        bad(StableParams {
            bits_per_cell: 5,
            ..ok
        }),
        Error::Parameter {
            name: "bits_per_cell",
            ..
        }
    ));
    assert!(
        StableBloom::<W4>::new(
            StableParams {
                bits_per_cell: 4,
                ..ok
            },
            1
        )
        .is_ok()
    );
    let mut buf = [Block::ZERO; 9];
    let e = StableBloom::<W4, _, _>::with_storage(ok, &mut buf[..], hash::seeded_hasher(1))
        .unwrap_err();
    assert_eq!(
        e,
        Error::Length {
            name: "storage",
            expected: 8,
            found: 9
        }
    );
    let mut f =
        StableBloom::<W4, _, _>::with_storage(ok, &mut buf[..8], hash::seeded_hasher(1)).unwrap();
    if !Isa::Avx512.is_available() {
        assert!(f.set_isa(Isa::Avx512).is_err());
    }
    for fpr in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(StableParams::plan::<W8>(1 << 16, fpr, Eviction::Random).is_err());
        assert!(ok.with_smallest_p::<W4>(fpr).is_err());
    }
    assert!(StableParams::plan::<W8>(63, 0.01, Eviction::Random).is_err());
    // Budgets whose cells overflow usize (1-bit cells: 8 a byte) are errors,
    // not overflow panics (found by the filters_api fuzz target).
    assert!(StableParams::plan::<W1>(isize::MAX as usize, 0.01, Eviction::Random).is_err());
    assert!(StableParams::plan::<W1>(usize::MAX, 0.01, Eviction::Sweep).is_err());
    // One block of 1-bit cells reaches at best (K/512)^K >= 2^-128 (K <= 32).
    assert!(matches!(
        StableParams::plan::<W1>(64, 1e-40, Eviction::Sweep),
        Err(Error::Parameter {
            name: "target_fpr",
            ..
        })
    ));
}

/// The algorithm restated over a `Vec<u32>` of cells with scalar code, the
/// same probe function and the same PRNG draws.
struct Model {
    cells: Vec<u32>,
    rng: Rng,
    params: StableParams,
    cursor: usize,
    blocks: usize,
    per_block: usize,
}

impl Model {
    fn new<W: Width>(params: StableParams, seed: u64) -> Model {
        let blocks = params.blocks::<W>().unwrap();
        Model {
            cells: std::vec![0; blocks * W::CELLS],
            // The filter seeds its PRNG with its hasher's hash of
            // `RNG_DOMAIN`.
            rng: Rng::new(core::hash::BuildHasher::hash_one(
                &hash::seeded_hasher(seed),
                super::RNG_DOMAIN,
            )),
            params,
            cursor: 0,
            blocks,
            per_block: W::CELLS,
        }
    }

    /// The item's cells, placed by a plain restatement of the Stable
    /// filter's placement ([`super::PLACEMENT`], Floyd's sampling) and
    /// layout, so a change to either shows here. One block: all `K` cells
    /// of [`Self::half`]`(h, h, K)`. Two blocks: `half(h, h, ⌈K/2⌉)` and
    /// `half(h ^ SECOND_BLOCK_SALT, h ^ SECOND_CELLS_SALT, ⌊K/2⌋)`; a cell
    /// in both (the halves share a block) is one cell.
    fn locate(&self, h: u64) -> Vec<usize> {
        let k = self.params.k.min(self.per_block as u32);
        if self.params.layout == Layout::OneBlock || k == 1 {
            return self.half(h, h, k);
        }
        let mut cells = self.half(h, h, k - k / 2);
        for c in self.half(
            h ^ hash::SECOND_BLOCK_SALT,
            h ^ hash::SECOND_CELLS_SALT,
            k / 2,
        ) {
            if !cells.contains(&c) {
                cells.push(c);
            }
        }
        cells
    }

    /// `k` cells in the block of `block_hash`, placed from `cell_hash`: the
    /// block is `⌊mix64(block_hash)·blocks / 2^64⌋`; the cells come from
    /// Floyd's algorithm over the block's `B` cells (for `j` in `B-k..B`,
    /// draw `t` uniform in `0..=j` and take `t`, or `j` if `t` is taken),
    /// with `t` the high word of `x·(j+1)` for a 64-bit state `x` that
    /// keeps the low word, reseeded as `mix64(cell_hash ^ SALT ^ round·C)`
    /// before a draw would take the bits used past 48.
    fn half(&self, block_hash: u64, cell_hash: u64, k: u32) -> Vec<usize> {
        const SALT: u64 = 0x6A09_E667_F3BC_C909;
        const ROUND: u64 = 0xD6E8_FEB8_6659_FD93;
        let block = ((u128::from(hash::mix64(block_hash)) * self.blocks as u128) >> 64) as usize;
        let b = self.per_block;
        let k = k as usize;
        let (mut x, mut used, mut round) = (hash::mix64(cell_hash ^ SALT), 0u32, 0u64);
        let mut cells: Vec<usize> = Vec::new();
        for j in b - k..b {
            let n = j as u64 + 1;
            let bits = 64 - (n - 1).leading_zeros();
            if used + bits > 48 {
                round += 1;
                x = hash::mix64(cell_hash ^ SALT ^ round.wrapping_mul(ROUND));
                used = 0;
            }
            used += bits;
            let wide = u128::from(x) * u128::from(n);
            x = wide as u64;
            let t = (wide >> 64) as usize;
            cells.push(if cells.contains(&t) { j } else { t });
        }
        cells
            .into_iter()
            .map(|c| block * self.per_block + c)
            .collect()
    }

    fn contains(&self, h: u64) -> bool {
        self.locate(h).iter().all(|&c| self.cells[c] != 0)
    }

    fn insert(&mut self, h: u64) {
        let m = self.cells.len();
        let start = match self.params.eviction {
            Eviction::Random | Eviction::Interleaved => self.rng.below(m as u64) as usize,
            Eviction::Sweep => {
                let s = self.cursor;
                self.cursor = (s + self.params.p) % m;
                s
            }
        };
        for i in 0..self.params.p {
            let e = (start + i) % m;
            let cell = if self.params.eviction == Eviction::Interleaved {
                crate::store::interleaved_cell(self.blocks, INTERLEAVE, self.per_block, e)
            } else {
                e
            };
            let c = &mut self.cells[cell];
            *c = c.saturating_sub(1);
        }
        for c in self.locate(h) {
            self.cells[c] = self.params.max();
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Observe(u64),
    Insert(u64),
    Contains(u64),
}

fn op() -> impl Strategy<Value = Op> {
    // A small key space, so the stream repeats keys.
    prop_oneof![
        (0..64u64).prop_map(Op::Observe),
        (0..64u64).prop_map(Op::Insert),
        (0..64u64).prop_map(Op::Contains),
    ]
}

/// Every eviction policy.
fn evictions() -> impl Strategy<Value = Eviction> {
    prop_oneof![
        Just(Eviction::Random),
        Just(Eviction::Sweep),
        Just(Eviction::Interleaved)
    ]
}

/// Runs `ops` on the filter (kernels forced to `isa`) and on the model,
/// comparing every answer and, at the end, every cell.
fn agrees_with_model<W: Width>(
    blocks: usize,
    bits: u32,
    k: u32,
    p_frac: f64,
    (eviction, two): (Eviction, bool),
    seed: u64,
    ops: &[Op],
) -> std::result::Result<(), TestCaseError> {
    let m = blocks * W::CELLS;
    // `p_frac` above 1 means P = m, the longest run (every cell, every item).
    let p = if p_frac > 1.0 {
        m
    } else {
        ((p_frac * m as f64) as usize).clamp(1, m)
    };
    let params = in_layout(
        params(
            m,
            bits.clamp(1, W::BITS),
            k.clamp(1, W::CELLS as u32),
            p,
            eviction,
        ),
        two,
    );
    for isa in Isa::available() {
        let mut f = StableBloom::<W, _, _>::with_storage(
            params,
            crate::store::zeroed(blocks).unwrap(),
            hash::seeded_hasher(seed),
        )
        .unwrap();
        f.set_isa(isa).unwrap();
        let mut model = Model::new::<W>(params, seed);
        for &op in ops {
            match op {
                Op::Observe(key) => {
                    let h = hash::hash_key(&f.hasher, &key);
                    let want = model.contains(h);
                    model.insert(h);
                    prop_assert_eq!(f.observe(&key), want, "{:?} {:?}", isa, op);
                }
                Op::Insert(key) => {
                    let h = hash::hash_key(&f.hasher, &key);
                    model.insert(h);
                    f.insert(&key);
                }
                Op::Contains(key) => {
                    let h = hash::hash_key(&f.hasher, &key);
                    prop_assert_eq!(f.contains(&key), model.contains(h), "{:?}", isa);
                }
            }
        }
        for (i, &want) in model.cells.iter().enumerate() {
            prop_assert_eq!(f.cells.get(i), Some(want), "{:?} cell {}", isa, i);
        }
        let zeros = model.cells.iter().filter(|&&c| c == 0).count();
        prop_assert_eq!(f.zero_fraction(), zeros as f64 / m as f64);
    }
    Ok(())
}

fn cases() -> ProptestConfig {
    crate::proptest_config(64, 2, 0x57AB_1E00)
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn equals_the_naive_model(
        blocks in 1..4usize,
        bits in 1..33u32,
        k in 1..20u32,
        p_frac in 0.0..1.2f64,
        eviction in evictions(),
        two: bool,
        seed: u64,
        ops in proptest::collection::vec(op(), 0..crate::scaled(200)),
    ) {
        let how = (eviction, two);
        agrees_with_model::<W1>(blocks, bits, k, p_frac, how, seed, &ops)?;
        agrees_with_model::<W2>(blocks, bits, k, p_frac, how, seed, &ops)?;
        agrees_with_model::<W4>(blocks, bits, k, p_frac, how, seed, &ops)?;
        agrees_with_model::<W8>(blocks, bits, k, p_frac, how, seed, &ops)?;
        agrees_with_model::<W16>(blocks, bits, k, p_frac, how, seed, &ops)?;
        agrees_with_model::<W32>(blocks, bits, k, p_frac, how, seed, &ops)?;
    }

    #[test]
    fn a_batch_equals_item_by_item(
        // Both sides of PREFETCH_MIN_BYTES: the plain loop and the
        // prefetching one.
        blocks in prop_oneof![1..40usize, PREFETCH_BLOCKS..PREFETCH_BLOCKS + 104],
        k in 1..8u32,
        p in 1..200usize,
        eviction in evictions(),
        two: bool,
        seed: u64,
        hashes in proptest::collection::vec(0..500u64, 0..crate::scaled(300)),
    ) {
        let params = in_layout(params(blocks * 64, 3, k, p.min(blocks * 64), eviction), two);
        let mut one = StableBloom::<W8>::new(params, seed).unwrap();
        let mut batched = one.clone();
        let want: Vec<bool> = hashes.iter().map(|&h| one.observe_hash(hash::mix64(h))).collect();
        let mixed: Vec<u64> = hashes.iter().map(|&h| hash::mix64(h)).collect();
        let mut got = vec![false; hashes.len()];
        batched.observe_batch_hash(&mixed, &mut got).unwrap();
        prop_assert_eq!(got, want);
        prop_assert_eq!(batched.cells.blocks(), one.cells.blocks());
        let keys: Vec<u64> = hashes.clone();
        let mut by_key = vec![false; keys.len()];
        batched.observe_batch(&keys, &mut by_key).unwrap();
        let again: Vec<bool> = keys.iter().map(|key| one.observe(key)).collect();
        prop_assert_eq!(by_key, again);
        prop_assert_eq!(batched.cells.blocks(), one.cells.blocks());
    }

    #[test]
    fn a_key_just_recorded_is_found(
        bits in 1..5u32,
        k in 1..20u32,
        p in 1..1024usize,
        eviction in evictions(),
        seed: u64,
        two: bool,
        keys in proptest::collection::vec(any::<u64>(), 1..crate::scaled(100)),
    ) {
        let params = in_layout(params(1024, bits, k, p, eviction), two);
        let mut f = StableBloom::<W4>::new(params, seed).unwrap();
        for (i, key) in keys.iter().enumerate() {
            if i % 2 == 0 {
                f.insert(key);
            } else {
                f.observe(key);
            }
            prop_assert!(f.contains(key));
        }
    }
}

/// Observes `hashes` in batches of `split` (the last one shorter) on one
/// copy of a sweep filter and one at a time on another, with `isa`'s
/// kernels, and compares every answer and, after each batch, the cells and
/// the sweep pointer.
fn sweep_batches_agree<W: Width>(
    blocks: usize,
    p_frac: f64,
    (k, two): (u32, bool),
    seed: u64,
    hashes: &[u64],
    split: usize,
) -> std::result::Result<(), TestCaseError> {
    let m = blocks * W::CELLS;
    // `p_frac` above 1 means P = m: every item's run is every cell.
    let p = if p_frac > 1.0 {
        m
    } else {
        ((p_frac * m as f64) as usize).clamp(1, m)
    };
    let bits = W::BITS.min(3);
    let params = in_layout(
        params(m, bits, k.min(W::CELLS as u32), p, Eviction::Sweep),
        two,
    );
    for isa in Isa::available() {
        let mut one = StableBloom::<W>::new(params, seed).unwrap();
        one.set_isa(isa).unwrap();
        let mut batched = one.clone();
        for chunk in hashes.chunks(split.max(1)) {
            let want: Vec<bool> = chunk.iter().map(|&h| one.observe_hash(h)).collect();
            let mut got = vec![false; chunk.len()];
            batched.observe_batch_hash(chunk, &mut got).unwrap();
            prop_assert_eq!(&got, &want, "{:?} answers, P = {}", isa, p);
            prop_assert_eq!(batched.blocks(), one.blocks(), "{:?} cells, P = {}", isa, p);
            prop_assert_eq!(batched.cursor(), one.cursor(), "{:?}", isa);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config(64, 2, 0x5EE9_BA7C))]

    /// The batched sweep (decrements put off and made in one pass,
    /// [`StableBloom::sweep_run`]) leaves the same cells and sweep pointer
    /// and gives the same answers as item by item, for every width and
    /// backend, in filters of a few blocks, where items' blocks meet the
    /// put-off cells all the time, with `P` up to `m` (where the put-off
    /// cells fill the filter after one item), and with batches starting at
    /// any sweep position.
    #[test]
    fn a_sweep_batch_equals_item_by_item(
        blocks in 1..6usize,
        p_frac in 0.0..1.2f64,
        k in 1..8u32,
        two: bool,
        seed: u64,
        keys in proptest::collection::vec(0..300u64, 0..crate::scaled(400)),
        split in 1..150usize,
    ) {
        let hashes: Vec<u64> = keys.iter().map(|&key| hash::mix64(key)).collect();
        let k = (k, two);
        sweep_batches_agree::<W1>(blocks, p_frac, k, seed, &hashes, split)?;
        sweep_batches_agree::<W2>(blocks, p_frac, k, seed, &hashes, split)?;
        sweep_batches_agree::<W4>(blocks, p_frac, k, seed, &hashes, split)?;
        sweep_batches_agree::<W8>(blocks, p_frac, k, seed, &hashes, split)?;
        sweep_batches_agree::<W16>(blocks, p_frac, k, seed, &hashes, split)?;
        sweep_batches_agree::<W32>(blocks, p_frac, k, seed, &hashes, split)?;
    }
}

/// Feeds `n` distinct pre-hashed keys (the images of `offset..offset + n`
/// under a bijection) to `f` with `insert_hash`.
fn feed<W: Width>(f: &mut StableBloom<W>, offset: u64, n: u64) {
    for i in offset..offset + n {
        f.insert_hash(hash::mix64(i));
    }
}

/// Items to reach the stable point from an empty filter: a cell never set
/// since the start is counted zero whatever its decrements, and that bias,
/// `(1 - K/m)^n`, is below `e^-30` after `30·m/K` items; the `Max + 2`
/// sweeps let every cell be decremented `Max` times.
fn warm_up(p: &StableParams, m: usize) -> u64 {
    let sweeps = (u64::from(p.max()) + 2) * m.div_ceil(p.p) as u64;
    (30 * m as u64 / u64::from(p.k)).max(sweeps)
}

/// The zero fraction of `f` and the standard error of it by batch means:
/// the cells are cut into 64 runs of `m/64` consecutive cells. Cells are
/// correlated over a few blocks and a few `P` (shared blocks, shared
/// decrement runs), so the binomial standard error would be too small;
/// runs much longer than that correlation are nearly independent, and the
/// spread of their means estimates the standard error honestly.
fn zero_fraction_and_se<W: Width>(f: &StableBloom<W>) -> (f64, f64) {
    let m = f.cells();
    let g = 64;
    let run = m / g;
    let zs: Vec<f64> = (0..g)
        .map(|i| {
            let z = f.cells.kernels().zero_count(f.cells.blocks(), i * run, run);
            z as f64 / run as f64
        })
        .collect();
    let mean = zs.iter().sum::<f64>() / g as f64;
    let var = zs.iter().map(|z| (z - mean) * (z - mean)).sum::<f64>() / (g - 1) as f64;
    (mean, libm::sqrt(var / g as f64))
}

/// The measured zero fraction after a long stream of distinct keys lies
/// within 5 standard errors of `stable_point()`, and so does the measured
/// false-positive rate of never-seen keys around `current_fpr()` (given the
/// state, each query is an independent Bernoulli trial, so its standard
/// error is binomial).
fn check_stable_point<W: Width>(p: StableParams, seed: u64) {
    let mut f = StableBloom::<W>::new(p, seed).unwrap();
    let m = f.cells();
    assert!(m >= 1 << 16, "m must be large enough for 64 batches");
    feed(&mut f, 0, warm_up(&p, m));
    let (z, se) = zero_fraction_and_se(&f);
    assert_eq!(z, f.zero_fraction());
    let want = f.stable_point();
    assert!(
        (z - want).abs() <= 5.0 * se,
        "{p:?}: zero fraction {z:.5}, stable point {want:.5}, se {se:.5}"
    );
    let queries = 100_000u64;
    let hits = (0..queries)
        .filter(|i| f.contains_hash(hash::mix64(i + (1 << 62))))
        .count();
    let fpr = hits as f64 / queries as f64;
    let expected = f.current_fpr();
    let se = libm::sqrt(expected * (1.0 - expected) / queries as f64);
    assert!(
        (fpr - expected).abs() <= 5.0 * se + 1.0 / queries as f64,
        "{p:?}: measured FPR {fpr:.5}, current_fpr {expected:.5}"
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn random_eviction_reaches_the_papers_stable_point() {
    let m = 1 << 16;
    check_stable_point::<W4>(params(m, 3, 3, 10, Eviction::Random), 1);
    check_stable_point::<W8>(params(m, 2, 5, 20, Eviction::Random), 2);
    check_stable_point::<W8>(params(m, 4, 6, 64, Eviction::Random), 3);
    check_stable_point::<W2>(params(m, 1, 4, 4, Eviction::Random), 4);
    // Two blocks keep each cell's marginal law, so the stable point.
    let two = StableParams {
        layout: Layout::TwoBlocks,
        ..params(m, 2, 5, 20, Eviction::Random)
    };
    check_stable_point::<W8>(two, 9);
}

#[test]
#[cfg_attr(miri, ignore)]
fn sweep_eviction_reaches_its_stable_point() {
    // P divides m here, where the sweep formula is exact; 10 does not.
    let m = 1 << 16;
    check_stable_point::<W4>(params(m, 3, 3, 16, Eviction::Sweep), 5);
    check_stable_point::<W4>(params(m, 3, 3, 10, Eviction::Sweep), 5);
    check_stable_point::<W8>(params(m, 2, 5, 32, Eviction::Sweep), 6);
    check_stable_point::<W8>(params(m, 4, 6, 64, Eviction::Sweep), 7);
    check_stable_point::<W2>(params(m, 1, 4, 4, Eviction::Sweep), 8);
    let two = StableParams {
        layout: Layout::TwoBlocks,
        ..params(m, 3, 5, 32, Eviction::Sweep)
    };
    check_stable_point::<W8>(two, 10);
}

/// The false-positive rate of the filter's current state for never-seen
/// keys ([`StableBloom::current_fpr`]) and its standard error by batch
/// means over 64 runs of consecutive blocks (blocks interact only through
/// decrement runs that cross them, so runs of many blocks are nearly
/// independent). With two blocks the rate is the product `M1·M2` of the
/// two halves' means over blocks; its standard error is the delta method's,
/// the batch means of `M2·m1 + M1·m2` (`m1`, `m2` a run's means), which is
/// the one-block batch means when `m2 = M2 = 1`.
fn state_fpr_and_se<W: Width>(f: &StableBloom<W>) -> (f64, f64) {
    let blocks = f.cells.block_count();
    let (k1, k2) = f.params.layout.halves(f.params.k);
    let per_block = |b: usize, k: u32| {
        let set = W::CELLS
            - f.cells
                .kernels()
                .zero_count(f.cells.blocks(), b * W::CELLS, W::CELLS);
        (0..k as usize)
            .map(|j| set.saturating_sub(j) as f64 / (W::CELLS - j) as f64)
            .product::<f64>()
    };
    let g = 64.min(blocks);
    let run = blocks / g;
    let means: Vec<(f64, f64)> = (0..g)
        .map(|i| {
            let run_mean = |k| {
                (i * run..(i + 1) * run)
                    .map(|b| per_block(b, k))
                    .sum::<f64>()
                    / run as f64
            };
            (run_mean(k1), run_mean(k2))
        })
        .collect();
    let m1 = means.iter().map(|m| m.0).sum::<f64>() / g as f64;
    let m2 = means.iter().map(|m| m.1).sum::<f64>() / g as f64;
    let z: Vec<f64> = means
        .iter()
        .map(|&(a, b)| m2 * a + m1 * b - m1 * m2)
        .collect();
    let mean = m1 * m2;
    let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (g - 1) as f64;
    (mean, libm::sqrt(var / g as f64))
}

/// Runs `f` to its steady state on distinct keys and averages the state's
/// false-positive rate over `snaps` snapshots `m/K` items apart: the mean
/// and a standard error (batch means within each snapshot; snapshots are
/// correlated, so their standard errors are averaged, not pooled).
fn steady_fpr<W: Width>(f: &mut StableBloom<W>, snaps: u64) -> (f64, f64) {
    let p = f.params;
    let m = f.cells();
    let n = warm_up(&p, m);
    feed(f, 0, n);
    let (mut mean, mut se) = (0.0, 0.0);
    for s in 0..snaps {
        feed(f, n + s * m as u64, (m / p.k as usize) as u64);
        let (x, e) = state_fpr_and_se(f);
        mean += x;
        se += e;
    }
    (mean / snaps as f64, se / snaps as f64)
}

/// The blocked model ([`blocked_fpr`]) against the filter at settings
/// spanning short and long runs, few and many bits, few and many cells per
/// item, for every width a Stable filter uses: exact for `Sweep` (within 5
/// standard errors), an upper bound for `Random` (never below the measured
/// rate by more than 5 standard errors), and tight for `Random` when runs
/// are much longer than a block. The paper's bound is exceeded at most of
/// these settings.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn blocked_model_matches_the_filter() {
    fn check<W: Width>(bits: u32, k: u32, p: usize, eviction: Eviction) -> bool {
        let pr = params(1 << 16, bits, k, p, eviction);
        let mut f = StableBloom::<W>::new(pr, u64::from(bits * 100 + k) + p as u64).unwrap();
        let (fpr, se) = steady_fpr(&mut f, 4);
        let model = f.predicted_fpr();
        let what = format!(
            "W{} {pr:?}: measured {fpr:.5} ± {se:.5}, model {model:.5}",
            W::BITS
        );
        match eviction {
            Eviction::Sweep => assert!((fpr - model).abs() <= 5.0 * se, "{what}"),
            Eviction::Random | Eviction::Interleaved => {
                assert!(fpr <= model + 5.0 * se, "{what}");
                if p >= 8 * W::CELLS {
                    assert!(model - fpr <= 0.05 * fpr + 5.0 * se, "{what}");
                }
            }
        }
        fpr > f.paper_false_positive_bound()
    }
    let mut exceeded = 0;
    for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
        exceeded += u32::from(check::<W4>(3, 3, 86, eviction));
        exceeded += u32::from(check::<W8>(3, 5, 67, eviction));
        exceeded += u32::from(check::<W8>(2, 5, 20, eviction));
        exceeded += u32::from(check::<W2>(1, 4, 4, eviction));
        exceeded += u32::from(check::<W16>(4, 6, 64, eviction));
        exceeded += u32::from(check::<W16>(3, 5, 500, eviction));
        exceeded += u32::from(check::<W4>(1, 8, 3, eviction));
        exceeded += u32::from(check::<W8>(3, 8, 200, eviction));
    }
    assert!(
        exceeded >= 18,
        "the paper's bound was exceeded at only {exceeded} of 24"
    );
}

/// The two-block model ([`layout_fpr`](crate::analysis::stable::layout_fpr))
/// against the filter with two blocks an item, at the settings of
/// `blocked_model_matches_the_filter`: within 5 standard errors for
/// `Sweep`, an upper bound for `Random` (tight when runs are much longer
/// than a block), and below the one-block rate everywhere.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn two_block_model_matches_the_filter() {
    fn check<W: Width>(bits: u32, k: u32, p: usize, eviction: Eviction) {
        let one = params(1 << 16, bits, k, p, eviction);
        let pr = StableParams {
            layout: Layout::TwoBlocks,
            ..one
        };
        let mut f = StableBloom::<W>::new(pr, u64::from(bits * 100 + k) + p as u64).unwrap();
        let (fpr, se) = steady_fpr(&mut f, 4);
        let model = f.predicted_fpr();
        let what = format!(
            "W{} {pr:?}: measured {fpr:.5} ± {se:.5}, model {model:.5}",
            W::BITS
        );
        match eviction {
            Eviction::Sweep => assert!((fpr - model).abs() <= 5.0 * se, "{what}"),
            Eviction::Random | Eviction::Interleaved => {
                assert!(fpr <= model + 5.0 * se, "{what}");
                if p >= 8 * W::CELLS {
                    assert!(model - fpr <= 0.05 * fpr + 5.0 * se, "{what}");
                }
            }
        }
        assert!(model < one.predicted_fpr::<W>().unwrap(), "{what}");
    }
    for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
        check::<W4>(3, 3, 86, eviction);
        check::<W8>(3, 5, 67, eviction);
        check::<W8>(2, 5, 20, eviction);
        check::<W2>(1, 4, 4, eviction);
        check::<W16>(4, 6, 64, eviction);
        check::<W16>(3, 5, 500, eviction);
        check::<W4>(1, 8, 3, eviction);
        check::<W8>(3, 8, 200, eviction);
    }
}

/// Issue 9's claim for the Stable filter: with two blocks the delivered
/// rate comes within 1.3× of the paper's bound `(1 - stable_point)^K` at
/// the README's sweep setting (W8, d = 3, K = 5, the `P` the one-block
/// planner chose for 1 %), where one block does not. The model, exact for
/// `Sweep` (`two_block_model_matches_the_filter`), is within 1.3× of the
/// bound; the measured steady-state rate (`steady_fpr`) is not above
/// 1.3× by more than 5 standard errors with two blocks, and is above it by
/// more than 5 with one (each fails with probability below `10⁻⁶` when
/// the claim is true). Random eviction with runs of a block or two keeps
/// more correlation: 1.5× at its `P`, see `report_layout`.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn two_blocks_come_close_to_the_papers_bound() {
    let one = params(1 << 16, 3, 5, 78, Eviction::Sweep);
    for layout in Layout::ALL {
        let p = StableParams { layout, ..one };
        let mut f = StableBloom::<W8>::new(p, 23).unwrap();
        let (fpr, se) = steady_fpr(&mut f, 4);
        let paper = f.paper_false_positive_bound();
        let what = format!("{layout:?}: measured {fpr:.5} ± {se:.5}, paper's bound {paper:.5}");
        match layout {
            Layout::OneBlock => assert!(fpr - 5.0 * se > 1.3 * paper, "{what}"),
            Layout::TwoBlocks => {
                assert!(fpr - 5.0 * se < 1.3 * paper, "{what}");
                assert!(f.predicted_fpr() < 1.3 * paper, "{what}");
            }
        }
    }
}

/// The same claim with random eviction at the README's setting (W8,
/// d = 3, K = 5, `P` for 1 % with one block; `m = 2^20`): with two blocks, runs of
/// consecutive cells (`Random`) keep the rate above 1.3× the paper's bound
/// by more than 5 standard errors, and with the interleaved order
/// (`Interleaved`, the same per-cell law) it is not above 1.3× by more
/// than 5, as `two_blocks_come_close_to_the_papers_bound` asks of `Sweep`
/// (the module's table, printed by `report_layout`, measures 1.24× at this
/// setting, 1.50× for `Random`). Its model, `Random`'s upper bound, stays
/// above the measured rate.
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn interleaved_eviction_comes_close_to_the_papers_bound() {
    // 2^20 cells: a state's batch means then resolve 1.3× from 1.5×.
    let one = params(1 << 20, 3, 5, 1, Eviction::Random)
        .with_smallest_p::<W8>(0.01)
        .unwrap();
    for eviction in [Eviction::Random, Eviction::Interleaved] {
        let p = StableParams {
            eviction,
            layout: Layout::TwoBlocks,
            ..one
        };
        let mut f = StableBloom::<W8>::new(p, 29).unwrap();
        let (fpr, se) = steady_fpr(&mut f, 4);
        let paper = f.paper_false_positive_bound();
        let what = format!("{p:?}: measured {fpr:.5} ± {se:.5}, paper's bound {paper:.5}");
        match eviction {
            Eviction::Interleaved => {
                assert!(fpr - 5.0 * se < 1.3 * paper, "{what}");
                assert!(fpr <= f.predicted_fpr() + 5.0 * se, "{what}");
            }
            _ => assert!(fpr - 5.0 * se > 1.3 * paper, "{what}"),
        }
    }
}

/// The sweep's window without false negatives, exactly: a key seen `g`
/// items back is always found when `(g - 1)·P <= (Max - 1)·m`, and is
/// sometimes lost just past it.
#[test]
#[cfg_attr(miri, ignore)]
fn sweep_has_no_false_negatives_inside_its_window() {
    let p = params(4096, 3, 3, 16, Eviction::Sweep);
    let mut f = StableBloom::<W4>::new(p, 11).unwrap();
    let (m, max) = (f.cells(), p.max() as usize);
    // Largest g with (g - 1)·P <= (Max - 1)·m.
    let window = (max - 1) * m / p.p + 1;
    let keys: Vec<u64> = (0..8000u64).map(hash::mix64).collect();
    let (mut inside, mut lost_inside, mut lost_beyond) = (0u64, 0u64, 0u64);
    for (t, &key) in keys.iter().enumerate() {
        f.insert_hash(key);
        // Key `keys[t + 1 - g]`, queried now, is what item `t + 1` would
        // probe for a duplicate `g` items after its previous occurrence.
        for g in 1..=window + m / p.p {
            let Some(s) = (t + 1).checked_sub(g) else {
                break;
            };
            let found = f.contains_hash(keys[s]);
            if g <= window {
                inside += 1;
                lost_inside += u64::from(!found);
            } else {
                lost_beyond += u64::from(!found);
            }
        }
    }
    assert!(inside > 5_000_000);
    assert_eq!(lost_inside, 0);
    assert!(lost_beyond > 0, "the window should be tight");
}

/// The rate the planners promise is the rate the filter delivers: plan at
/// several (memory, target, width, eviction) settings, run a stream of
/// distinct keys to the steady state, then ask never-seen keys. The
/// measured rate may exceed the target only by 4 standard errors of the
/// query count (binomial at the target) and the state's fluctuation
/// (batch means, [`state_fpr_and_se`]).
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn planned_filters_deliver_their_target() {
    fn check<W: Width>(planned: StableParams, target: f64) -> (f64, StableParams) {
        let mut f = StableBloom::<W>::new(planned, 17).unwrap();
        let m = f.cells();
        feed(&mut f, 0, warm_up(&planned, m));
        let (_, state_se) = state_fpr_and_se(&f);
        let queries = 400_000u64;
        let hits = (0..queries)
            .filter(|i| f.contains_hash(hash::mix64(i + (1 << 62))))
            .count();
        let fpr = hits as f64 / queries as f64;
        let se = libm::sqrt(target * (1.0 - target) / queries as f64) + state_se;
        assert!(
            fpr <= target + 4.0 * se,
            "W{} {planned:?}: target {target}, delivered {fpr:.5} (se {se:.5})",
            W::BITS
        );
        assert!(planned.predicted_fpr::<W>().unwrap() <= target);
        (fpr, planned)
    }
    let plan = |eviction, target| StableParams::plan::<W8>(1 << 20, target, eviction).unwrap();
    check::<W8>(plan(Eviction::Random, 0.01), 0.01);
    check::<W8>(plan(Eviction::Sweep, 0.01), 0.01);
    check::<W8>(plan(Eviction::Random, 0.05), 0.05);
    let w4 = |eviction, target| StableParams::plan::<W4>(1 << 18, target, eviction).unwrap();
    check::<W4>(w4(Eviction::Random, 0.001), 0.001);
    check::<W4>(w4(Eviction::Sweep, 0.05), 0.05);
    let w16 = StableParams::plan::<W16>(1 << 18, 0.01, Eviction::Random).unwrap();
    check::<W16>(w16, 0.01);
    let w2 = StableParams::plan::<W2>(1 << 16, 0.02, Eviction::Sweep).unwrap();
    check::<W2>(w2, 0.02);
    // The settings: d = 3, K = 5, P the smallest for the target.
    for (m, target) in [(1 << 16, 0.01), (1 << 20, 0.01), (1 << 16, 0.05)] {
        for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
            let p = params(m, 3, 5, 1, eviction)
                .with_smallest_p::<W8>(target)
                .unwrap();
            let below = StableParams { p: p.p - 1, ..p };
            assert!(p.p == 1 || below.predicted_fpr::<W8>().unwrap() > target);
            check::<W8>(p, target);
        }
    }
}

/// Prints the blocked model beside the filter's measured steady-state rate
/// and the paper's bound over a grid of settings (the evidence behind
/// [`blocked_fpr`]'s docs). Run with `cargo test --release -p streambloom
/// --lib stable::tests::report_blocked_model -- --ignored --nocapture`.
#[test]
#[ignore]
fn report_blocked_model() {
    fn row<W: Width>(bits: u32, k: u32, p: usize, eviction: Eviction) {
        let pr = params(1 << 16, bits, k, p, eviction);
        let Ok(mut f) = StableBloom::<W>::new(pr, 5) else {
            return;
        };
        let (fpr, se) = steady_fpr(&mut f, 8);
        let (model, paper) = (f.predicted_fpr(), f.paper_false_positive_bound());
        std::println!(
            "{eviction:<6?} W{:<2} d={bits} K={k:<2} P={p:<4} | measured {fpr:.5} ± {se:.5} | model {model:.5} ({:.2}×) | paper {paper:.5} ({:.2}×)",
            W::BITS,
            model / fpr,
            paper / fpr
        );
    }
    for eviction in [Eviction::Random, Eviction::Sweep] {
        for (bits, k, p) in [
            (3, 3, 10),
            (3, 3, 86),
            (3, 5, 67),
            (2, 5, 20),
            (1, 4, 4),
            (4, 6, 64),
            (1, 8, 3),
            (3, 8, 200),
            (1, 29, 5),
            (3, 5, 500),
        ] {
            row::<W4>(bits, k, p, eviction);
            row::<W8>(bits, k, p, eviction);
            if bits <= 2 {
                row::<W2>(bits, k, p, eviction);
            }
            row::<W16>(bits, k, p, eviction);
        }
    }
}

/// Random vs Sweep at one setting: prints FPR (fresh keys reported as
/// duplicates) and FNR by gap (duplicates reported as new). Run with
/// `cargo test -p streambloom --lib stable::tests::report_random_vs_sweep
/// -- --ignored --nocapture`.
#[test]
#[ignore]
fn report_random_vs_sweep() {
    let m = 1usize << 20;
    for target in [0.05, 0.01] {
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let p = params(m, 3, 3, 1, eviction)
                .with_smallest_p::<W4>(target)
                .unwrap();
            let mut f = StableBloom::<W4>::new(p, 1).unwrap();
            feed(&mut f, 1 << 40, warm_up(&p, m));
            let gaps: [u64; 8] = [
                1 << 10,
                1 << 12,
                1 << 14,
                1 << 16,
                1 << 18,
                1 << 19,
                1 << 20,
                1 << 21,
            ];
            let mut rng = Rng::new(3);
            let mut history: Vec<u64> = Vec::new();
            let mut last: HashMap<u64, u64> = HashMap::new();
            let (mut fresh, mut fp) = (0u64, 0u64);
            let mut by_gap = [(0u64, 0u64); 23];
            let n = 4u64 << 20;
            for t in 0..n {
                let g = gaps[rng.below(gaps.len() as u64) as usize];
                let key = if rng.below(2) == 0 && t >= g {
                    history[(t - g) as usize]
                } else {
                    hash::mix64(t)
                };
                history.push(key);
                let dup = f.observe_hash(key);
                match last.insert(key, t) {
                    None => {
                        fresh += 1;
                        fp += u64::from(dup);
                    }
                    Some(prev) => {
                        let bucket = (63 - (t - prev).leading_zeros()) as usize;
                        by_gap[bucket.min(22)].0 += 1;
                        by_gap[bucket.min(22)].1 += u64::from(!dup);
                    }
                }
            }
            let window = (u64::from(p.max()) - 1) * m as u64 / p.p as u64 + 1;
            std::println!(
                "{eviction:?} target {target}: d=3 K=3 P={} m=2^20: FPR {:.4} (paper's bound {:.4}), sweep window {window}",
                p.p,
                fp as f64 / fresh as f64,
                f.paper_false_positive_bound(),
            );
            for (b, &(seen, lost)) in by_gap.iter().enumerate() {
                if seen > 1000 {
                    std::println!(
                        "  gap in [2^{b}, 2^{}): FNR {:.4} ({lost}/{seen})",
                        b + 1,
                        lost as f64 / seen as f64
                    );
                }
            }
        }
    }
}

/// The planners' promises against delivery (the table in the README): for
/// each plan, the paper's bound, the blocked model's rate and the rate
/// measured on 400 000 never-seen keys at the steady state. Run with
/// `cargo test --release -p streambloom --lib stable::tests::report_planner
/// -- --ignored --nocapture`.
#[test]
#[ignore]
fn report_planner() {
    fn row<W: Width>(label: &str, p: StableParams, target: f64) {
        let mut f = StableBloom::<W>::new(p, 17).unwrap();
        let m = f.cells();
        feed(&mut f, 0, warm_up(&p, m));
        let queries = 400_000u64;
        let hits = (0..queries)
            .filter(|i| f.contains_hash(hash::mix64(i + (1 << 62))))
            .count();
        std::println!(
            "| {label} | {target} | d = {}, K = {}, P = {} | {:.4} | {:.4} | {:.4} |",
            p.bits_per_cell,
            p.k,
            p.p,
            f.paper_false_positive_bound(),
            f.predicted_fpr(),
            hits as f64 / queries as f64
        );
    }
    std::println!("| plan | target | chose | paper's bound | predicted (blocked) | delivered |");
    std::println!("|---|---|---|---|---|---|");
    for (m, target) in [(1 << 16, 0.01), (1 << 20, 0.01), (1 << 16, 0.05)] {
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let p = params(m, 3, 5, 1, eviction)
                .with_smallest_p::<W8>(target)
                .unwrap();
            let label = format!(
                "W8, d = 3, K = 5, `with_smallest_p`, m = 2^{}, {eviction:?}",
                m.trailing_zeros()
            );
            row::<W8>(&label, p, target);
        }
    }
    for eviction in [Eviction::Random, Eviction::Sweep] {
        for target in [0.01, 0.001] {
            let p = StableParams::plan::<W8>(1 << 20, target, eviction).unwrap();
            row::<W8>(&format!("`plan::<W8>(1 MiB, {eviction:?})`"), p, target);
            let p = StableParams::plan::<W4>(1 << 20, target, eviction).unwrap();
            row::<W4>(&format!("`plan::<W4>(1 MiB, {eviction:?})`"), p, target);
            let p = StableParams::plan::<W16>(1 << 20, target, eviction).unwrap();
            row::<W16>(&format!("`plan::<W16>(1 MiB, {eviction:?})`"), p, target);
        }
    }
}

/// Blocks from which the batch forms prefetch
/// ([`crate::store::PREFETCH_MIN_BYTES`]): the property tests draw filters on
/// both sides of it.
const PREFETCH_BLOCKS: usize = crate::store::PREFETCH_MIN_BYTES / Block::BYTES;

/// Asserts that `a` and `b` are the same filter, eviction PRNG included
/// (which `PartialEq` leaves out), so that they evolve alike.
fn same_filter<W: Width>(
    a: &StableBloom<W>,
    b: &StableBloom<W>,
    what: &str,
) -> std::result::Result<(), TestCaseError> {
    prop_assert!(a == b, "{}: cells or cursor differ", what);
    prop_assert_eq!(&a.rng, &b.rng, "{}: eviction PRNG differs", what);
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config(32, 2, 0x57AB_BA7C))]

    /// `insert_batch`, `insert_batch_hash`, `contains_batch` and
    /// `contains_batch_hash` leave the same filter (cells, sweep pointer
    /// and eviction PRNG) and give the same answers as `insert` and
    /// `contains` one key at a time, in order, below and above the
    /// prefetching threshold (where eviction starts are drawn ahead), with
    /// batches longer than the keyed forms' hashing chunk. An output of the
    /// wrong length is [`Error::Length`], and `observe_batch` then changes
    /// neither the filter nor the output.
    #[test]
    #[cfg_attr(miri, ignore = "filters past the prefetch threshold (2 MiB) are too slow under Miri; the kernels' memory safety is covered by the small cases elsewhere")]
    fn insert_and_contains_batches_equal_item_by_item(
        blocks in prop_oneof![1..40usize, PREFETCH_BLOCKS..PREFETCH_BLOCKS + 100],
        bits in 1..9u32,
        k in 1..8u32,
        p in 1..200usize,
        eviction in evictions(),
        two: bool,
        seed: u64,
        keys in proptest::collection::vec(0..2000u64, 0..crate::scaled(700)),
        probes in proptest::collection::vec(0..4000u64, 0..crate::scaled(700)),
    ) {
        let params = params(blocks * W8::CELLS, bits, k, p.min(blocks * W8::CELLS), eviction);
        let params = in_layout(params, two);
        let mut one = StableBloom::<W8>::new(params, seed).unwrap();
        prop_assert_eq!(one.cells.prefetching(), blocks >= PREFETCH_BLOCKS);
        let (mut keyed, mut hashed) = (one.clone(), one.clone());
        for key in &keys {
            one.insert(key);
        }
        keyed.insert_batch(&keys);
        let hashes: Vec<u64> = keys.iter().map(|key| one.hash(key)).collect();
        hashed.insert_batch_hash(&hashes);
        same_filter(&keyed, &one, "insert_batch")?;
        same_filter(&hashed, &one, "insert_batch_hash")?;

        let want: Vec<bool> = probes.iter().map(|key| one.contains(key)).collect();
        let mut got = vec![false; probes.len()];
        keyed.contains_batch(&probes, &mut got).unwrap();
        prop_assert_eq!(&got, &want);
        let probe_hashes: Vec<u64> = probes.iter().map(|key| one.hash(key)).collect();
        let mut got = vec![false; probes.len()];
        hashed.contains_batch_hash(&probe_hashes, &mut got).unwrap();
        prop_assert_eq!(&got, &want);

        let n = probes.len();
        let mut long = vec![true; n + 1];
        let found = Error::Length { name: "found", expected: n, found: n + 1 };
        prop_assert_eq!(keyed.contains_batch(&probes, &mut long), Err(found));
        prop_assert_eq!(hashed.contains_batch_hash(&probe_hashes, &mut long), Err(found));
        let duplicates = Error::Length { name: "duplicates", expected: n, found: n + 1 };
        prop_assert_eq!(keyed.observe_batch(&probes, &mut long), Err(duplicates));
        prop_assert_eq!(hashed.observe_batch_hash(&probe_hashes, &mut long), Err(duplicates));
        prop_assert!(long.iter().all(|&b| b), "a failed batch wrote answers");
        same_filter(&keyed, &one, "failed observe_batch")?;
        same_filter(&hashed, &one, "failed observe_batch_hash")?;

        // And they go on alike: the same observations from here.
        for key in &probes {
            let want = one.observe(key);
            prop_assert_eq!(keyed.observe(key), want);
            prop_assert_eq!(hashed.observe(key), want);
        }
        same_filter(&keyed, &one, "after more observations")?;
    }
}

/// What `restore` keeps of the eviction PRNG: nothing. It restarts from the
/// hasher, as in a new filter, whatever the saved filter had drawn (the
/// cells and the sweep pointer are kept: `api_tests/construction.rs`).
#[test]
fn restore_restarts_the_eviction_prng_from_the_hasher() {
    let p = params(4096, 3, 3, 6, Eviction::Random);
    let mut f = StableBloom::<W4>::new(p, 5).unwrap();
    let fresh = f.rng.clone();
    for h in 0..crate::scaled(100) as u64 {
        f.observe_hash(h);
    }
    assert_ne!(f.rng, fresh);
    let g = StableBloom::<W4>::restore(p, f.blocks().to_vec(), hash::seeded_hasher(5), 0).unwrap();
    assert!(g == f);
    assert_eq!(g.rng, fresh);
}

/// The two layouts against the paper's bound at the README's Stable
/// settings (the planner table's W8, d = 3, K = 5 filters at the `P` the
/// one-block planner chose, and the planner's 1 MiB plans): per layout
/// the rate measured on 400 000 never-seen keys at the steady state, the
/// steady state's own rate (`current_fpr` averaged over 8 snapshots, ±
/// its standard error), the model (`predicted_fpr`) and the ratio of the
/// measured rate to the paper's bound `(1 - stable_point)^K`. Run with
/// `cargo test --release -p streambloom --lib report_layout -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn report_layout() {
    fn row<W: Width>(label: &str, p: StableParams) {
        for layout in Layout::ALL {
            let p = StableParams { layout, ..p };
            let mut f = StableBloom::<W>::new(p, 17).unwrap();
            let (state, se) = steady_fpr(&mut f, 8);
            let queries = 400_000u64;
            let hits = (0..queries)
                .filter(|i| f.contains_hash(hash::mix64(i + (1 << 62))))
                .count();
            let measured = hits as f64 / queries as f64;
            let paper = f.paper_false_positive_bound();
            std::println!(
                "| {label} | {layout:?} | {paper:.5} | {measured:.5} ({:.2}×) | {state:.5} ± {se:.5} ({:.2}×) | {:.5} |",
                measured / paper,
                state / paper,
                f.predicted_fpr(),
            );
        }
    }
    std::println!(
        "| setting | layout | paper's bound | measured (÷ bound) | steady state (÷ bound) | model |"
    );
    std::println!("|---|---|---|---|---|---|");
    for (m, target) in [(1 << 16, 0.01), (1 << 20, 0.01), (1 << 16, 0.05)] {
        // Interleaved at Random's `P`: the same per-cell law.
        let random = params(m, 3, 5, 1, Eviction::Random)
            .with_smallest_p::<W8>(target)
            .unwrap();
        let label = format!(
            "W8 d=3 K=5 P={} m=2^{} Interleaved",
            random.p,
            m.trailing_zeros()
        );
        row::<W8>(
            &label,
            StableParams {
                eviction: Eviction::Interleaved,
                ..random
            },
        );
        for eviction in [Eviction::Random, Eviction::Sweep] {
            let p = params(m, 3, 5, 1, eviction)
                .with_smallest_p::<W8>(target)
                .unwrap();
            let label = format!(
                "W8 d=3 K=5 P={} m=2^{} {eviction:?}",
                p.p,
                m.trailing_zeros()
            );
            row::<W8>(&label, p);
        }
    }
    // Issue 9's worst one-block case (W32, d = 2, K = 5), at a grid `P`.
    for eviction in [Eviction::Random, Eviction::Sweep, Eviction::Interleaved] {
        let p = params(1 << 16, 2, 5, 20, eviction);
        row::<W32>(&format!("W32 d=2 K=5 P=20 m=2^16 {eviction:?}"), p);
    }
    for eviction in [Eviction::Random, Eviction::Sweep] {
        for target in [0.01, 0.001] {
            let p = StableParams::plan::<W8>(1 << 20, target, eviction).unwrap();
            let label = format!(
                "plan::<W8>(1 MiB, {target}, {eviction:?}): d={} K={} P={}",
                p.bits_per_cell, p.k, p.p
            );
            row::<W8>(&label, p);
            let p = StableParams::plan::<W4>(1 << 20, target, eviction).unwrap();
            let label = format!(
                "plan::<W4>(1 MiB, {target}, {eviction:?}): d={} K={} P={}",
                p.bits_per_cell, p.k, p.p
            );
            row::<W4>(&label, p);
        }
    }
}

/// Storage or bytes holding a cell above `Max` are refused: restore and
/// both readers of the byte format (an audit of the public API found them
/// loading a W4 filter of `Max` 7 with cells of 15, whose items then stay
/// 2.3× longer than any filter of these parameters keeps them); cells at
/// `Max` load; `with_storage` zeroes whatever it is lent.
#[test]
fn cells_above_max_are_refused() {
    use crate::format::Encode;
    use crate::hash::PortableHasher;
    let p = params(1024, 3, 3, 2, Eviction::Sweep);
    let mut f = StableBloom::<W4, _, _>::with_hasher(p, PortableHasher::new(1)).unwrap();
    f.observe("a");
    let bytes = f.to_bytes();
    let blocks_at = bytes.len() - f.blocks().len() * Block::BYTES;
    for (fill, ok) in [
        (0x77u8, true),
        (0x00, true),
        (0xFF, false),
        (0x80, false),
        (0x08, false),
    ] {
        let mut b = bytes.clone();
        b[blocks_at + 5] = fill;
        let read = StableBloom::<W4, _, PortableHasher>::from_bytes(&b);
        assert_eq!(read.is_ok(), ok, "byte {fill:#x}: {read:?}");
        if !ok {
            assert!(matches!(
                read,
                Err(Error::Parameter {
                    name: "storage",
                    ..
                })
            ));
        }
        let mut stored = f.blocks().to_vec();
        stored[0].0[5] = fill;
        let restored =
            StableBloom::<W4, _, _>::restore(p, stored.clone(), PortableHasher::new(1), 0);
        assert_eq!(restored.is_ok(), ok, "byte {fill:#x}");
        let lent =
            StableBloom::<W4, _, _>::with_storage(p, stored, PortableHasher::new(1)).unwrap();
        assert!(lent.blocks().iter().all(|b| *b == Block::ZERO));
    }
    // Cells of the full width have no value above Max.
    let p8 = params(1024, 8, 3, 2, Eviction::Sweep);
    let full = vec![Block([0xFF; 64]); p8.blocks::<W8>().unwrap()];
    assert!(StableBloom::<W8, _, _>::restore(p8, full, PortableHasher::new(1), 0).is_ok());
}

/// The steady-state rate over seeds: the mean of [`StableBloom::current_fpr`]
/// (exact for the state) over `seeds` filters, each sampled at `snaps`
/// states `m/K` items apart after the warm-up, and the standard error of
/// that mean from the spread of the filters' own means.
fn mean_state_fpr<W: Width>(p: StableParams, seeds: u64, snaps: u64) -> (f64, f64) {
    let means: Vec<f64> = (0..seeds)
        .map(|seed| {
            let mut f = StableBloom::<W>::new(p, seed).unwrap();
            let m = f.cells();
            let n = warm_up(&p, m);
            let offset = seed << 40;
            feed(&mut f, offset, n);
            let mut sum = 0.0;
            for s in 0..snaps {
                feed(
                    &mut f,
                    offset + n + s * m as u64,
                    (m / p.k as usize).max(1) as u64,
                );
                sum += f.current_fpr();
            }
            sum / snaps as f64
        })
        .collect();
    let mean = means.iter().sum::<f64>() / seeds as f64;
    let var = means.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (seeds - 1) as f64;
    (mean, libm::sqrt(var / seeds as f64))
}

/// Plans of a few blocks in two blocks an item deliver their target: a
/// key's halves then often share a block, which the model now counts
/// ([`layout_fpr`](crate::analysis::stable::layout_fpr)); before it did,
/// the plan of 256 bytes of W32 for 0.001 (Sweep: d = 2, K = 6, P = 57,
/// 4 blocks) delivered 0.00128 ([`report_small_two_block`]).
#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn small_two_block_plans_deliver_their_target() {
    fn check<W: Width>(bytes: usize, target: f64, eviction: Eviction) {
        let p = StableParams::plan::<W>(bytes, target, eviction).unwrap();
        assert_eq!(p.layout, Layout::TwoBlocks);
        let (fpr, se) = mean_state_fpr::<W>(p, 24, 64);
        assert!(
            fpr <= target + 4.0 * se,
            "W{} {bytes} B {eviction:?}: {p:?} delivered {fpr:.6} ± {se:.6} for {target}",
            W::BITS
        );
    }
    for eviction in [Eviction::Sweep, Eviction::Random] {
        check::<W32>(256, 0.001, eviction);
        check::<W32>(128, 0.01, eviction);
        check::<W16>(192, 0.001, eviction);
        check::<W8>(128, 0.001, eviction);
        check::<W16>(512, 0.001, eviction);
        check::<W32>(1024, 0.001, eviction);
    }
}

/// The two-block model against the measured rate where halves share a
/// block most: 1 to 16 blocks. Run with `cargo test --release -p
/// streambloom --lib stable::tests::report_small_two_block -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn report_small_two_block() {
    for blocks in [1usize, 2, 4, 16] {
        for eviction in [Eviction::Sweep, Eviction::Random] {
            let p = StableParams {
                layout: Layout::TwoBlocks,
                ..params(16 * blocks, 2, 6, 57.min(16 * blocks), eviction)
            };
            let (fpr, se) = mean_state_fpr::<W32>(p, 24, 64);
            let model = p.predicted_fpr::<W32>().unwrap();
            std::println!(
                "W32 blocks {blocks:<2} {eviction:<6?} d=2 K=6 P={:<3} | measured {fpr:.6} ± {se:.6} | model {model:.6} ({:.3}×)",
                p.p,
                model / fpr
            );
        }
    }
}
