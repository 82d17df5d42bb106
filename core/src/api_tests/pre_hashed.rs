//! The `*_hash` forms take any `u64`, not only uniform 64-bit hashes:
//! sequential ids and 32-bit hashes (in the low or the high half of the
//! word) must give every filter the false-positive rate a uniform hash
//! gives it. (Before placement remixed the hash, every value below 2^32
//! landed in block 0: a `Classic` reported every new id as present.)
//!
//! Each filter is built twice per input family: fed the family's values, and
//! fed `mix64` of the same ids (uniform hashes, the reference). The two
//! measured rates must agree within 5 standard errors of their difference.
//! The standard error comes from sample sizes only: a measured rate is the
//! mean, over `q` queries, of the filter state's rate, which is the mean
//! over `nb` blocks of per-block rates `f_b` in `[0, 1]`, so its variance is
//! at most `p/nb` (as `Var f_b <= E f_b² <= E f_b = p`, block loads being
//! at most negatively correlated) plus the binomial `p/q` given the state.
//! The `Classic` filter is held to its planned rate in
//! `classic::tests::pre_hashed_ids_meet_the_planned_rate`, with the
//! formula's exact variance.

use std::vec::Vec;
use std::{format, vec};
use streambloom::hash::mix64;
use streambloom::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Spectral,
};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{SpectralParams, W4, W16};

/// FNV-1a over the id's 8 little-endian bytes: a real 32-bit hash.
fn fnv32(id: u64) -> u64 {
    let mut h = 0x811C_9DC5u32;
    for b in id.to_le_bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    u64::from(h)
}

/// A family of inputs: its name, and what it turns id `i` into.
type Family = (&'static str, fn(u64) -> u64);

/// The families fed to the filters, each turning an id into the `u64`
/// handed to the `*_hash` forms.
const FAMILIES: [Family; 3] = [
    ("sequential ids", |i| i),
    ("FNV-1a 32-bit hashes", fnv32),
    ("32-bit hashes in the high half", |i| fnv32(i) << 32),
];

/// Asserts that `got` (a non-uniform family) and `want` (uniform hashes)
/// agree: `|got - want| <= 5 √(2 p̄ (1/nb + 1/q))`, `p̄` their mean.
fn agree(what: &str, got: f64, want: f64, nb: f64, q: f64) {
    let p = (got + want) / 2.0;
    let tol = 5.0 * (2.0 * p * (1.0 / nb + 1.0 / q)).sqrt();
    assert!(
        (got - want).abs() <= tol,
        "{what}: rate {got:.5} against {want:.5} with uniform hashes (tolerance {tol:.5})"
    );
}

/// A Stable filter (4-bit cells, d = 3, K = 3, P for a 1 % bound) fed
/// distinct values through `observe_batch_hash`, then `q` more distinct
/// values through `observe_hash`: the fraction reported as duplicates.
fn stable_rate(place: impl Fn(u64) -> u64, q: u64) -> (f64, f64) {
    let params = StableParams {
        cells: 1 << 22,
        bits_per_cell: 3,
        k: 3,
        p: 1,
        eviction: Eviction::Random,
        layout: Layout::OneBlock,
    }
    .with_smallest_p::<W4>(0.01)
    .unwrap();
    let mut f = StableBloom::<W4>::new(params, 11).unwrap();
    let m = f.cells() as u64;
    // Stable after a few m/K items.
    let warm = 4 * m / 3;
    let hashes: Vec<u64> = (0..warm).map(&place).collect();
    let mut dup = vec![false; hashes.len()];
    f.observe_batch_hash(&hashes, &mut dup).unwrap();
    let hits = (warm..warm + q)
        .filter(|&i| f.observe_hash(place(i)))
        .count();
    let nb = (f.cells() / 128) as f64; // 128 cells a block
    (hits as f64 / q as f64, nb)
}

#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn stable_bloom_takes_any_u64() {
    let q = 1_000_000;
    let (want, nb) = stable_rate(mix64, q);
    for (name, place) in FAMILIES {
        let (got, _) = stable_rate(place, q);
        agree(&format!("StableBloom, {name}"), got, want, nb, q as f64);
    }
}

/// A Spectral filter of 16-bit counters loaded to γ = nk/m = 0.7 with `n`
/// distinct values (through `insert_batch_hash`, every fourth through
/// `insert_n_hash`), queried with `q` values never
/// inserted through `estimate_batch_hash`, `estimate_hash` and
/// `at_least_hash`: the fraction estimated above 0, and the blocks that
/// bound the rate's variance (for Recurring Minimum, a third of the
/// budget is the secondary filter: the smaller region).
fn spectral_rate<P: Policy + Default>(place: impl Fn(u64) -> u64, n: u64, q: u64) -> (f64, f64) {
    let k = 5;
    let counters = (n as f64 * f64::from(k) / 0.7) as usize;
    let mut f = Spectral::<P, Blocked<W16>>::new(SpectralParams::new(counters, k), 5).unwrap();
    let hashes: Vec<u64> = (0..n).filter(|i| i % 4 != 0).map(&place).collect();
    f.insert_batch_hash(&hashes);
    for i in (0..n).step_by(4) {
        f.insert_n_hash(place(i), 1);
    }
    let queries: Vec<u64> = (n..n + q).map(&place).collect();
    let mut counts = vec![0; queries.len()];
    f.estimate_batch_hash(&queries, &mut counts).unwrap();
    for (&h, &c) in queries.iter().zip(&counts).step_by(97) {
        assert_eq!(f.estimate_hash(h), c);
        assert_eq!(f.at_least_hash(h, 1), c >= 1);
    }
    let hits = counts.iter().filter(|&&c| c > 0).count();
    let nb = f.store().blocks().len() as f64 / 3.0;
    (hits as f64 / q as f64, nb)
}

fn spectral_takes_any_u64<P: Policy + Default>() {
    let (n, q) = (100_000, 400_000);
    let (want, nb) = spectral_rate::<P>(mix64, n, q);
    for (name, place) in FAMILIES {
        let (got, _) = spectral_rate::<P>(place, n, q);
        agree(
            &format!("Spectral<{}>, {name}", P::NAME),
            got,
            want,
            nb,
            q as f64,
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn spectral_minimum_selection_takes_any_u64() {
    spectral_takes_any_u64::<MinimumSelection>();
}

#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn spectral_minimal_increase_takes_any_u64() {
    spectral_takes_any_u64::<MinimalIncrease>();
}

#[test]
#[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
fn spectral_recurring_minimum_takes_any_u64() {
    spectral_takes_any_u64::<RecurringMinimum>();
}
