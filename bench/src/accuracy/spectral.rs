//! Spectral rows: the §6.1 workload (Zipf, skew 1, over 1000 values,
//! k = 5) at loads γ = nk/m of 0.7 and 1, for Minimum Selection, Minimal
//! Increase and Recurring Minimum (at equal memory: the library's default
//! `RecurringMinimum::new()`, a third of the counters to the secondary), at
//! W8, W16 and W32; error ratio and additive error per layout, beside the
//! unblocked reference of `repro spectral` (plain `u32` counters, k
//! independent positions, so one column for every width).

use streambloom::spectral::{
    Blocked, Counter, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Spectral,
    SpectralParams,
};
use streambloom::{Layout, W16, W32, W8};

use super::report::Row;
use super::{Scale, LAYOUTS};
use crate::repro::spectral::experiments::Reading;
use crate::repro::spectral::library::Rng;
use crate::repro::spectral::reference::{Family, Flat, FlatMi, FlatMs, FlatRm, Hashing};
use crate::repro::spectral::workload::{counters, score, Counts, Score, Zipf, K, N};

/// The loads of the rows.
pub const GAMMAS: [f64; 2] = [0.7, 1.0];

/// The policies of the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Estimator {
    Ms,
    Mi,
    Rm,
}

const ESTIMATORS: [Estimator; 3] = [Estimator::Ms, Estimator::Mi, Estimator::Rm];

impl Estimator {
    fn name(self) -> &'static str {
        match self {
            Estimator::Ms => "MS",
            Estimator::Mi => "MI",
            Estimator::Rm => "RM",
        }
    }
}

/// The library's filter of `P` at `m` counters of width `W` in `layout`.
fn blocked<P: Policy + Default + 'static, W: Counter>(
    m: usize,
    layout: Layout,
    seed: u64,
) -> Result<Box<dyn Counts>, String>
where
    Spectral<P, Blocked<W>>: Counts,
{
    let params = SpectralParams::new(m, K as u32).with_layout(layout);
    Spectral::<P, Blocked<W>>::new(params, seed)
        .map(|f| Box::new(f) as Box<dyn Counts>)
        .map_err(|e| e.to_string())
}

/// The library's filter of `e` (Recurring Minimum: its default split).
fn library<W: Counter>(
    e: Estimator,
    m: usize,
    layout: Layout,
    seed: u64,
) -> Result<Box<dyn Counts>, String> {
    match e {
        Estimator::Ms => blocked::<MinimumSelection, W>(m, layout, seed),
        Estimator::Mi => blocked::<MinimalIncrease, W>(m, layout, seed),
        Estimator::Rm => blocked::<RecurringMinimum, W>(m, layout, seed),
    }
}

/// The unblocked reference of `e` at `m` counters (Recurring Minimum split
/// as the library's default: a third to the secondary).
fn reference(e: Estimator, m: usize, seed: u64) -> Box<dyn Counts> {
    let flat = || Flat::new(m, Hashing::new(Family::Mixed, seed));
    match e {
        Estimator::Ms => Box::new(FlatMs(flat())),
        Estimator::Mi => Box::new(FlatMi(flat())),
        Estimator::Rm => {
            let (primary, secondary) = Reading::Equal.split(m);
            Box::new(FlatRm::new(primary, secondary, 0, Family::Mixed, seed))
        }
    }
}

/// The mean score of `make`'s filters over `streams` (each with its truth
/// and its hash seed).
fn mean_score(
    streams: &[(Vec<u64>, Vec<u32>, u64)],
    mut make: impl FnMut(u64) -> Result<Box<dyn Counts>, String>,
) -> Result<Score, String> {
    let mut sum = Score::default();
    for (items, truth, seed) in streams {
        let mut f = make(*seed)?;
        items.iter().for_each(|&v| f.insert(v));
        let s = score(truth, f.as_ref());
        sum.e_ratio += s.e_ratio;
        sum.e_add += s.e_add;
        sum.fn_rate += s.fn_rate;
    }
    let runs = streams.len().max(1) as f64;
    Ok(Score {
        e_ratio: sum.e_ratio / runs,
        e_add: sum.e_add / runs,
        fn_rate: sum.fn_rate / runs,
    })
}

/// The Zipf streams of the runs, each with its true counts and hash seed.
fn streams(scale: &Scale, seed: u64) -> Vec<(Vec<u64>, Vec<u32>, u64)> {
    let zipf = Zipf::new(1.0);
    (0..scale.spectral_runs)
        .map(|r| {
            let run_seed = seed ^ (r + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut rng = Rng::new(run_seed);
            let items: Vec<u64> = (0..scale.spectral_items)
                .map(|_| zipf.sample(&mut rng))
                .collect();
            let mut truth = vec![0u32; N];
            items.iter().for_each(|&v| truth[v as usize] += 1);
            (items, truth, run_seed.rotate_left(17))
        })
        .collect()
}

/// The rows, width by width; `tick` is called after each width and load.
pub fn rows(scale: &Scale, seed: u64, tick: &mut dyn FnMut()) -> Result<Vec<Row>, String> {
    let streams = streams(scale, seed);
    let mut rows = Vec::new();
    let mut unblocked = Vec::new();
    for gamma in GAMMAS {
        let m = counters(gamma);
        for e in ESTIMATORS {
            unblocked.push(mean_score(&streams, |s| Ok(reference(e, m, s)))?);
        }
    }
    for width in [8, 16, 32] {
        for (g, gamma) in GAMMAS.into_iter().enumerate() {
            let m = counters(gamma);
            for (j, e) in ESTIMATORS.into_iter().enumerate() {
                let [one, two] = LAYOUTS.map(|layout| {
                    mean_score(&streams, |s| match width {
                        8 => library::<W8>(e, m, layout, s),
                        16 => library::<W16>(e, m, layout, s),
                        _ => library::<W32>(e, m, layout, s),
                    })
                });
                let (one, two) = (one?, two?);
                let flat = unblocked[g * ESTIMATORS.len() + j];
                let setting = format!(
                    "{} W{width}, γ = {gamma:.1} (m = {m}), Zipf 1, M = {}, {} runs",
                    e.name(),
                    scale.spectral_items,
                    scale.spectral_runs
                );
                rows.push(Row::new(
                    "Spectral",
                    setting.clone(),
                    "error ratio",
                    [Some(one.e_ratio), Some(two.e_ratio), Some(flat.e_ratio)],
                    4,
                ));
                rows.push(Row::new(
                    "Spectral",
                    setting,
                    "additive error",
                    [Some(one.e_add), Some(two.e_add), Some(flat.e_add)],
                    2,
                ));
            }
            tick();
        }
    }
    Ok(rows)
}
