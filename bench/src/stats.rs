//! Summaries of timing samples: nearest-rank percentiles and the mean.

use serde::Serialize;

/// The nearest-rank percentile of `sorted` (ascending): the smallest sample
/// with at least `permille`/1000 of the samples at or below it. `None` when
/// there is no sample.
pub fn nearest_rank(sorted: &[f64], permille: usize) -> Option<f64> {
    let i = (permille * sorted.len()).div_ceil(1000);
    sorted.get(i.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// The median of `samples` (nearest rank, so always one of the samples);
/// `None` when there is none.
pub fn median(mut samples: Vec<f64>) -> Option<f64> {
    samples.sort_unstable_by(f64::total_cmp);
    nearest_rank(&samples, 500)
}

/// Percentiles and mean of per-item samples, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Median.
    #[serde(rename = "p50_ns")]
    pub p50: f64,
    /// 99th percentile.
    #[serde(rename = "p99_ns")]
    pub p99: f64,
    /// 99.9th percentile.
    #[serde(rename = "p999_ns")]
    pub p999: f64,
    /// Arithmetic mean.
    #[serde(rename = "mean_ns")]
    pub mean: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there is none.
    pub fn of(mut samples: Vec<f64>) -> Option<Summary> {
        samples.sort_unstable_by(f64::total_cmp);
        Some(Summary {
            p50: nearest_rank(&samples, 500)?,
            p99: nearest_rank(&samples, 990)?,
            p999: nearest_rank(&samples, 999)?,
            mean: samples.iter().sum::<f64>() / samples.len() as f64,
        })
    }

    /// Items per second, 1 / mean; `None` when the mean is zero.
    pub fn items_per_s(&self) -> Option<f64> {
        (self.mean > 0.0).then(|| 1e9 / self.mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, read literally: the smallest sample `x` such that at
    /// least `permille`/1000 of the samples are `<= x` (and at least one).
    fn naive(samples: &[f64], permille: usize) -> f64 {
        let n = samples.len();
        let need = (permille * n).div_ceil(1000).max(1);
        samples
            .iter()
            .copied()
            .filter(|&x| samples.iter().filter(|&&y| y <= x).count() >= need)
            .fold(f64::INFINITY, f64::min)
    }

    /// A fixed-seed stream of samples with many ties (values drawn from
    /// 0..50), so ranks that fall inside a run of equal values are covered.
    fn samples(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % 50) as f64 * 0.5
            })
            .collect()
    }

    #[test]
    fn percentiles_match_the_definition() {
        for n in [1, 2, 3, 7, 10, 99, 100, 101, 999, 1000, 1001, 1500] {
            let s = samples(n, n as u64);
            let sum = Summary::of(s.clone()).unwrap();
            for (permille, got) in [(500, sum.p50), (990, sum.p99), (999, sum.p999)] {
                assert_eq!(got, naive(&s, permille), "n = {n}, {permille}‰");
            }
            assert_eq!(median(s.clone()), Some(naive(&s, 500)), "n = {n}");
            let mean = s.iter().sum::<f64>() / n as f64;
            // Summation order differs (sorted or not): allow rounding only.
            assert!(
                (sum.mean - mean).abs() <= 1e-12 * mean.abs().max(1.0),
                "n = {n}"
            );
        }
    }

    #[test]
    fn percentiles_of_known_samples() {
        let s = Summary::of((1..=1000).rev().map(f64::from).collect()).unwrap();
        assert_eq!((s.p50, s.p99, s.p999), (500.0, 990.0, 999.0));
        assert_eq!(s.mean, 500.5);
        assert_eq!(s.items_per_s(), Some(1e9 / 500.5));
        let one = Summary::of(vec![3.0]).unwrap();
        assert_eq!((one.p50, one.p999), (3.0, 3.0));
        assert_eq!(Summary::of(vec![0.0]).unwrap().items_per_s(), None);
    }

    #[test]
    fn no_samples_no_summary() {
        assert_eq!(Summary::of(Vec::new()), None);
        assert_eq!(median(Vec::new()), None);
    }
}
