//! The workload of §6.1: Zipf draws over a domain of [`N`] values, what the
//! experiments ask of a filter, and the error metrics.

use serde::Serialize;

use super::library::Rng;
use super::reference::Move;

/// Distinct values in the domain (the paper's n).
pub const N: usize = 1000;
/// Counters each item touches (the paper's k).
pub const K: usize = 5;

/// How much to run: the paper's scale, or a smoke run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Scale {
    /// Items in each stream (the paper's M).
    pub items: usize,
    /// Runs per point, each with its own stream and hash seed (fixed, so
    /// that a rerun prints the same figures).
    pub runs: u64,
}

impl Scale {
    /// The paper's M = 100 000 items; 8 runs per point (the paper
    /// averages 5), each with its own stream and hash seed, so that a
    /// finding does not rest on one draw of hashes.
    pub const PAPER: Scale = Scale {
        items: 100_000,
        runs: 8,
    };
    /// A smoke run: M = 10 000, two runs per point (the fewest with a
    /// spread; figures not comparable with the paper's).
    pub const QUICK: Scale = Scale {
        items: 10_000,
        runs: 2,
    };
}

/// Zipf(`z`) over `0..N` by inverse CDF.
pub struct Zipf(Vec<f64>);

impl Zipf {
    /// The distribution of skew `z` (0 is uniform).
    pub fn new(z: f64) -> Zipf {
        let w: Vec<f64> = (1..=N).map(|i| (i as f64).powf(-z)).collect();
        let total: f64 = w.iter().sum();
        let mut acc = 0.0;
        Zipf(
            w.iter()
                .map(|x| {
                    acc += x / total;
                    acc
                })
                .collect(),
        )
    }

    /// One value.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.0.partition_point(|&c| c < u).min(N - 1) as u64
    }
}

/// What the experiments ask of a filter, keyed by the value itself.
pub trait Counts {
    /// Counts one occurrence of `v`.
    fn insert(&mut self, v: u64);
    /// The filter's estimate of `v`'s count.
    fn estimate(&self, v: u64) -> u32;
    /// The largest counter now (to check that `W16` never saturates).
    fn peak(&self) -> u32;
}

/// A filter that can also take back `r` occurrences of a value.
pub trait Deletes: Counts {
    /// Takes back `r` occurrences of `v`.
    fn remove(&mut self, v: u64, r: u32);
}

/// A Recurring Minimum filter, for Table 1.
pub trait Recurring: Counts {
    /// The smallest primary counter of `v` and how many of its counters hold
    /// it.
    fn primary_minimum(&self, v: u64) -> (u32, u32);
    /// `v`'s first move to the secondary, when the filter records moves
    /// (the unblocked reference's [`FlatRm::traced`]); `None` otherwise.
    ///
    /// [`FlatRm::traced`]: super::reference::FlatRm::traced
    fn first_move(&self, v: u64) -> Option<Move>;
}

/// The §6.1 metrics of one filter over the domain.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Score {
    /// `E_add = sqrt(Σ (f̂_i − f_i)² / n)`.
    pub e_add: f64,
    /// `E_ratio`: the fraction of values with `f̂_i ≠ f_i`.
    pub e_ratio: f64,
    /// The fraction of values with `f̂_i < f_i` (false negatives).
    pub fn_rate: f64,
}

/// Scores `f` against the true counts `truth` (indexed by value).
pub fn score(truth: &[u32], f: &dyn Counts) -> Score {
    let mut s = Score::default();
    for (v, &t) in truth.iter().enumerate() {
        let e = f.estimate(v as u64);
        let d = f64::from(e) - f64::from(t);
        s.e_add += d * d;
        s.e_ratio += f64::from(u8::from(e != t));
        s.fn_rate += f64::from(u8::from(e < t));
    }
    let n = truth.len() as f64;
    Score {
        e_add: (s.e_add / n).sqrt(),
        e_ratio: s.e_ratio / n,
        fn_rate: s.fn_rate / n,
    }
}

/// The counters that give load `γ = nk/m`.
pub fn counters(gamma: f64) -> usize {
    (N as f64 * K as f64 / gamma).round() as usize
}
