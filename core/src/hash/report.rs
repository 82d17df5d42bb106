//! The placement comparison the [`hash`](super) module docs quote: every
//! [`Placement`] in every filter at equal memory, accuracy with a standard
//! error, and the in-cache cost of an insert. Run with
//!
//! ```text
//! cargo test --release -p streambloom --lib report_placement -- --ignored --nocapture
//! ```
//!
//! Each figure is a mean over independent runs (fixed seeds) ± its
//! standard error (the spread of the runs' values over `√runs`).

use super::{Placement, mix64};
use crate::rng::Rng;
use crate::spectral::{Blocked, Counter, MinimalIncrease, MinimumSelection, Policy, Spectral};
use crate::stable::{Eviction, Layout, StableBloom, StableParams};
use crate::{Classic, RecurringMinimum, W4, W8, W16, W32, Width};
use crate::{ClassicParams, SpectralParams};
use std::time::Instant;
use std::vec::Vec;
use std::{format, println, string::String};

/// Mean and standard error of independent runs' values.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, libm::sqrt(var / n))
}

fn cell(xs: &[f64]) -> String {
    let (m, se) = mean_se(xs);
    format!("{m:.5} ± {se:.5}")
}

/// Nanoseconds per call of `op` over `n` pre-hashed keys (best of 3).
fn ns_per(n: u64, mut op: impl FnMut(u64)) -> f64 {
    (0..3)
        .map(|r| {
            let t = Instant::now();
            for i in 0..n {
                op(mix64(i ^ (r << 40)));
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Classic, 2^20 bits, k = 7, `n` keys: the false-positive rate over runs
/// of 200 000 queries each.
fn classic(place: Placement, n: u64, runs: u64) -> Vec<f64> {
    (0..runs)
        .map(|r| {
            let mut f = Classic::new(ClassicParams::new(1 << 20, 7), 5 + r).unwrap();
            f.set_placement(place);
            let base = r << 48;
            for i in 0..n {
                f.insert_hash(mix64(base + i));
            }
            let q = 200_000u64;
            let hits = (n..n + q)
                .filter(|&i| f.contains_hash(mix64(base + i)))
                .count();
            hits as f64 / q as f64
        })
        .collect()
}

/// A Stable filter of `params` run to its steady state on distinct keys:
/// per run, the zero fraction and the false-positive rate of 100 000
/// never-seen keys; and `stable_point()`.
fn stable<W: Width>(
    place: Placement,
    params: StableParams,
    runs: u64,
) -> (Vec<f64>, Vec<f64>, f64) {
    let (mut zs, mut fprs, mut point) = (Vec::new(), Vec::new(), 0.0);
    for r in 0..runs {
        let mut f = StableBloom::<W>::new(params, 11 + r).unwrap();
        f.set_placement(place);
        let m = f.cells() as u64;
        let warm = (30 * m / u64::from(params.k))
            .max((u64::from(params.max()) + 2) * m.div_ceil(params.p as u64));
        let base = r << 48;
        for i in 0..warm {
            f.insert_hash(mix64(base + i));
        }
        zs.push(f.zero_fraction());
        let q = 100_000u64;
        let hits = (0..q)
            .filter(|i| f.contains_hash(mix64(base + (1 << 47) + i)))
            .count();
        fprs.push(hits as f64 / q as f64);
        point = f.stable_point();
    }
    (zs, fprs, point)
}

/// Zipf(`z`) over `0..n` by inverse CDF (the workload of
/// `streambloom-bench repro spectral`).
fn zipf_stream(n: usize, len: usize, z: f64, rng: &mut Rng) -> Vec<u64> {
    let w: Vec<f64> = (1..=n).map(|i| libm::pow(i as f64, -z)).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    let cdf: Vec<f64> = w
        .iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect();
    (0..len)
        .map(|_| {
            let u = rng.unit();
            cdf.partition_point(|&c| c < u).min(n - 1) as u64
        })
        .collect()
}

/// The Spectral error ratio (share of the 1000 values whose estimate is
/// wrong) of policy `P` at `γ = n·k/m`, skew 0.5, 100 000 items, k = 5,
/// one value per run.
fn spectral<P: Policy + Default, W: Counter>(place: Placement, gamma: f64, runs: u64) -> Vec<f64> {
    let (n, len, k) = (1000usize, 100_000usize, 5u32);
    let m = (n as f64 * f64::from(k) / gamma).round() as usize;
    (0..runs)
        .map(|r| {
            let mut rng = Rng::new(0x5EC7 + r);
            let stream = zipf_stream(n, len, 0.5, &mut rng);
            let mut f =
                Spectral::<P, Blocked<W>>::new(SpectralParams::new(m, k), 0x5EC7 + r).unwrap();
            f.set_placement(place);
            let mut truth = std::vec![0u32; n];
            for &v in &stream {
                truth[v as usize] += 1;
                f.insert_hash(mix64(v ^ (r << 32)));
            }
            let wrong = (0..n)
                .filter(|&v| f.estimate_hash(mix64(v as u64 ^ (r << 32))) != truth[v])
                .count();
            wrong as f64 / n as f64
        })
        .collect()
}

fn spectral_rows<W: Counter>(gamma: f64, runs: u64) {
    for place in Placement::ALL {
        println!(
            "W{:<2} γ {gamma:.1} {place:<10?} | MS {} | MI {} | RM {}",
            W::BITS,
            cell(&spectral::<MinimumSelection, W>(place, gamma, runs)),
            cell(&spectral::<MinimalIncrease, W>(place, gamma, runs)),
            cell(&spectral::<RecurringMinimum, W>(place, gamma, runs)),
        );
    }
}

fn stable_rows<W: Width>(params: StableParams, runs: u64) {
    for place in Placement::ALL {
        let (zs, fprs, point) = stable::<W>(place, params, runs);
        println!(
            "W{:<2} d {} K {} P {:<3} {:<6?} {place:<10?} | zero fraction {} (stable_point {point:.5}) | FPR {}",
            W::BITS,
            params.bits_per_cell,
            params.k,
            params.p,
            params.eviction,
            cell(&zs),
            cell(&fprs),
        );
    }
}

#[test]
#[ignore = "a report: run with --release -- --ignored --nocapture"]
fn report_placement() {
    println!("Classic, 2^20 bits, k = 7 (FPR over 200 000 queries, 20 runs)");
    for n in [100_000u64, 150_000] {
        for place in Placement::ALL {
            println!(
                "n {n:>6} {place:<10?} | FPR {}",
                cell(&classic(place, n, 20))
            );
        }
    }

    println!("\nStable, m = 2^16 cells, steady state (100 000 queries, 12 runs)");
    let m = 1 << 16;
    for eviction in [Eviction::Random, Eviction::Sweep] {
        let p = |bits, k, p| StableParams {
            cells: m,
            bits_per_cell: bits,
            k,
            p,
            eviction,
            layout: Layout::OneBlock,
        };
        stable_rows::<W8>(p(3, 5, 67), 12);
        stable_rows::<W4>(p(3, 3, 86), 12);
        stable_rows::<W4>(p(1, 8, 3), 12);
        stable_rows::<W16>(p(4, 6, 64), 12);
    }

    println!("\nSpectral error ratio, Zipf 0.5, n = 1000, 100 000 items, k = 5 (40 runs)");
    for gamma in [0.7, 1.0] {
        spectral_rows::<W8>(gamma, 40);
        spectral_rows::<W16>(gamma, 40);
        spectral_rows::<W32>(gamma, 40);
    }
}

/// The in-cache cost of an insert per placement. Run with
/// `cargo test --release -p streambloom --lib report_placement_speed -- --ignored --nocapture`.
#[test]
#[ignore = "a report: run with --release -- --ignored --nocapture"]
fn report_placement_speed() {
    println!("In-cache insert, 16 KiB, ns per item (best of 3 passes of 2^20 keys)");
    let n = 1 << 20;
    for place in Placement::ALL {
        let mut c = Classic::new(ClassicParams::new(16 * 1024 * 8, 7), 1).unwrap();
        c.set_placement(place);
        let mut s = StableBloom::<W8>::new(
            StableParams {
                cells: 16 * 1024,
                bits_per_cell: 3,
                k: 5,
                p: 67,
                eviction: Eviction::Random,
                layout: Layout::OneBlock,
            },
            1,
        )
        .unwrap();
        s.set_placement(place);
        let mut ms =
            Spectral::<MinimumSelection, Blocked<W32>>::new(SpectralParams::new(4096, 5), 1)
                .unwrap();
        ms.set_placement(place);
        let mut ms8 =
            Spectral::<MinimumSelection, Blocked<W8>>::new(SpectralParams::new(16 * 1024, 5), 1)
                .unwrap();
        ms8.set_placement(place);
        println!(
            "{place:<10?} | Classic k=7 {:5.1} | Stable W8 K=5 observe {:5.1} | Spectral MS W32 {:5.1} | MS W8 {:5.1}",
            ns_per(n, |h| {
                c.insert_hash(h);
            }),
            ns_per(n, |h| {
                s.observe_hash(h);
            }),
            ns_per(n, |h| ms.insert_hash(h)),
            ns_per(n, |h| ms8.insert_hash(h)),
        );
    }
}
