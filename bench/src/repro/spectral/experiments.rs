//! The experiments of §6.1–6.2: insertions only, deletion phases and a
//! sliding window, each run on the filters of one layout, several runs per
//! point, each run with its own stream and hash seed.

use std::collections::VecDeque;

use indicatif::ProgressBar;
use serde::Serialize;

use super::library::{self, bloom_error, Rng, W16, W32};
use super::reference::{Family, Flat, FlatMi, FlatMs, FlatRm, Hashing};
use super::workload::{counters, score, Counts, Deletes, Scale, Score, Zipf, K, N};

/// Where the counters are: the library's blocked layout at a width, or the
/// unblocked reference with one of its hash families.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Layout {
    /// `Spectral<P, Blocked<W16>>`: 32 counters per block.
    Blocked16,
    /// `Spectral<P, Blocked<W32>>`: 16 counters per block.
    Blocked32,
    /// The reference of [`super::reference`], our hash.
    Unblocked,
    /// The reference with the paper's hash `⌈m(αv mod 1)⌉`.
    UnblockedPaper,
}

impl Layout {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Blocked16 => "blocked W16",
            Layout::Blocked32 => "blocked W32",
            Layout::Unblocked => "unblocked",
            Layout::UnblockedPaper => "unblocked αv",
        }
    }

    /// The largest count a counter holds.
    pub fn max(self) -> u32 {
        match self {
            Layout::Blocked16 => u32::from(u16::MAX),
            Layout::Blocked32 | Layout::Unblocked | Layout::UnblockedPaper => u32::MAX,
        }
    }

    /// The reference's hash family, for the unblocked layouts.
    pub fn family(self) -> Option<Family> {
        match self {
            Layout::Blocked16 | Layout::Blocked32 => None,
            Layout::Unblocked => Some(Family::Mixed),
            Layout::UnblockedPaper => Some(Family::Paper),
        }
    }
}

/// The two readings of Recurring Minimum's memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub enum Reading {
    /// §6.1: primary and secondary together use the `m` counters of the
    /// other policies (primary `m − m/3`, secondary `m/3`).
    Equal,
    /// Table 1: the primary has `m`, the secondary `m/2` on top.
    Extra,
}

impl Reading {
    /// Both, in report order.
    pub const BOTH: [Reading; 2] = [Reading::Equal, Reading::Extra];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Reading::Equal => "equal memory",
            Reading::Extra => "secondary extra",
        }
    }

    /// (primary, secondary) counters for a budget of `m`.
    pub fn split(self, m: usize) -> (usize, usize) {
        match self {
            Reading::Equal => (m - m / 3, m / 3),
            Reading::Extra => (m, m / 2),
        }
    }
}

/// One filter of an experiment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Filter {
    /// Minimum Selection, `m` counters.
    Ms,
    /// Minimal Increase, `m` counters.
    Mi,
    /// Recurring Minimum under a memory reading, with `B_f` of `m` bits or
    /// without.
    Rm {
        /// How its memory compares with the others'.
        reading: Reading,
        /// Whether it has the marker filter `B_f`.
        marker: bool,
    },
}

impl Filter {
    /// The name in reports: `RM=` at equal memory, `RM+` with the secondary
    /// as extra memory, `B_f` with the marker.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Ms => "MS",
            Filter::Mi => "MI",
            Filter::Rm {
                reading: Reading::Equal,
                marker: false,
            } => "RM=",
            Filter::Rm {
                reading: Reading::Extra,
                marker: false,
            } => "RM+",
            Filter::Rm {
                reading: Reading::Equal,
                marker: true,
            } => "RM= B_f",
            Filter::Rm {
                reading: Reading::Extra,
                marker: true,
            } => "RM+ B_f",
        }
    }
}

/// Recurring Minimum without `B_f` under `reading`.
pub const fn rm(reading: Reading) -> Filter {
    Filter::Rm {
        reading,
        marker: false,
    }
}

/// Recurring Minimum with `B_f` under `reading`.
pub const fn rm_marked(reading: Reading) -> Filter {
    Filter::Rm {
        reading,
        marker: true,
    }
}

/// Which experiment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Insertions only (§6.1).
    Insert,
    /// Deletion phases (§6.2): 5 phases of M/5 insertions, each followed by
    /// deleting 5 % of the present values entirely.
    Delete,
    /// A sliding window of the last M/5 items (§6.2).
    Window,
}

impl Mode {
    /// The filters the experiment runs: `B_f` only where there are
    /// removals (without them it changes nothing the experiment measures
    /// but the reading of the secondary).
    pub fn filters(self) -> Vec<Filter> {
        let mut f = vec![
            Filter::Ms,
            Filter::Mi,
            rm(Reading::Equal),
            rm(Reading::Extra),
        ];
        if self != Mode::Insert {
            f.extend([rm_marked(Reading::Equal), rm_marked(Reading::Extra)]);
        }
        f
    }

    fn tag(self) -> u64 {
        match self {
            Mode::Insert => 1,
            Mode::Delete => 2,
            Mode::Window => 3,
        }
    }
}

/// The seed of run `run` at point `point` of experiment `tag`: every
/// (experiment, point, run) has its own stream and hash seed; the layouts
/// share them (paired runs).
pub fn seed(tag: u64, point: usize, run: u64) -> u64 {
    streambloom::hash::mix64(0x5EC7_0000_0000_0000 ^ (tag << 40) ^ ((point as u64) << 20) ^ run)
}

/// One run's scores, in the order of [`Mode::filters`], and the largest
/// counter seen.
struct Trial {
    s: Vec<Score>,
    peak: u32,
}

fn insert_only(stream: &[u64], f: &mut [Box<dyn Counts>]) -> Trial {
    let mut truth = vec![0u32; N];
    for &v in stream {
        truth[v as usize] += 1;
        for g in f.iter_mut() {
            g.insert(v);
        }
    }
    Trial {
        peak: f.iter().map(|g| g.peak()).max().unwrap_or(0),
        s: f.iter().map(|g| score(&truth, g.as_ref())).collect(),
    }
}

fn with_deletes(mode: Mode, stream: &[u64], rng: &mut Rng, f: &mut [Box<dyn Deletes>]) -> Trial {
    let mut truth = vec![0u32; N];
    let mut peak = 0;
    let fifth = stream.len() / 5;
    if mode == Mode::Delete {
        for phase in stream.chunks(fifth) {
            for &v in phase {
                truth[v as usize] += 1;
                for g in f.iter_mut() {
                    g.insert(v);
                }
            }
            peak = f.iter().map(|g| g.peak()).fold(peak, u32::max);
            let present: Vec<u64> = (0..N as u64).filter(|&v| truth[v as usize] > 0).collect();
            let mut pick = present.clone();
            for i in 0..pick.len() {
                let j = i + rng.below((pick.len() - i) as u64) as usize;
                pick.swap(i, j);
            }
            for &v in &pick[..present.len() / 20] {
                let r = std::mem::take(&mut truth[v as usize]);
                for g in f.iter_mut() {
                    g.remove(v, r);
                }
            }
        }
    } else {
        // The window holds M/5 items, so no counter exceeds M/5 < 65 535:
        // the peak need not be tracked here.
        let mut ring = VecDeque::with_capacity(fifth + 1);
        for &v in stream {
            if ring.len() == fifth {
                let old = ring.pop_front().unwrap_or_default();
                truth[old as usize] -= 1;
                for g in f.iter_mut() {
                    g.remove(old, 1);
                }
            }
            ring.push_back(v);
            truth[v as usize] += 1;
            for g in f.iter_mut() {
                g.insert(v);
            }
        }
    }
    Trial {
        s: f.iter().map(|g| score(&truth, g.as_ref())).collect(),
        peak,
    }
}

/// The unblocked reference's `filter` at `m` counters.
fn flat(filter: Filter, m: usize, family: Family, seed: u64) -> Box<dyn Deletes> {
    match filter {
        Filter::Ms => Box::new(FlatMs(Flat::new(m, Hashing::new(family, seed)))),
        Filter::Mi => Box::new(FlatMi(Flat::new(m, Hashing::new(family, seed)))),
        Filter::Rm { reading, marker } => {
            let (p, s) = reading.split(m);
            Box::new(FlatRm::new(p, s, if marker { m } else { 0 }, family, seed))
        }
    }
}

/// One run of the experiment's filters on one stream.
fn run_once(
    layout: Layout,
    point: &Point,
    mode: Mode,
    scale: Scale,
    seed: u64,
) -> Result<Trial, String> {
    let m = counters(point.gamma);
    let zipf = Zipf::new(point.skew);
    let mut rng = Rng::new(seed);
    let stream: Vec<u64> = (0..scale.items).map(|_| zipf.sample(&mut rng)).collect();
    let hash_seed = streambloom::hash::mix64(seed ^ 0x4A54);
    let filters = mode.filters();
    if let Some(family) = layout.family() {
        let mut f: Vec<_> = filters
            .iter()
            .map(|&x| flat(x, m, family, hash_seed))
            .collect();
        return Ok(if mode == Mode::Insert {
            let mut f: Vec<Box<dyn Counts>> = f.into_iter().map(|g| g as Box<dyn Counts>).collect();
            insert_only(&stream, &mut f)
        } else {
            with_deletes(mode, &stream, &mut rng, &mut f)
        });
    }
    let wide = layout == Layout::Blocked32;
    Ok(if mode == Mode::Insert {
        let mut f = filters
            .iter()
            .map(|&x| {
                if wide {
                    library::counts::<W32>(x, m, hash_seed)
                } else {
                    library::counts::<W16>(x, m, hash_seed)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        insert_only(&stream, &mut f)
    } else {
        let mut f = filters
            .iter()
            .map(|&x| {
                if wide {
                    library::deletes::<W32>(x, m, hash_seed)
                } else {
                    library::deletes::<W16>(x, m, hash_seed)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        with_deletes(mode, &stream, &mut rng, &mut f)
    })
}

/// A mean over runs and its standard error.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Spread {
    /// The mean over runs.
    pub mean: f64,
    /// Its standard error, `sd / √runs` (0 for one run).
    pub se: f64,
}

impl Spread {
    /// The mean and standard error of `xs`.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Spread {
        let xs: Vec<f64> = xs.into_iter().collect();
        let n = xs.len() as f64;
        if xs.is_empty() {
            return Spread::default();
        }
        let mean = xs.iter().sum::<f64>() / n;
        let var = if xs.len() > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Spread {
            mean,
            se: (var / n).sqrt(),
        }
    }
}

/// One filter's §6.1 metrics at one point: mean ± standard error over runs.
#[derive(Clone, Debug, Serialize)]
pub struct FilterScore {
    /// The filter's name ([`Filter::name`]).
    pub filter: &'static str,
    /// `E_add`.
    pub e_add: Spread,
    /// `E_ratio`.
    pub e_ratio: Spread,
    /// The false-negative rate.
    pub fn_rate: Spread,
}

/// One layout's results at one point: every filter's scores over the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// Per filter, in the order of [`Mode::filters`].
    pub filters: Vec<FilterScore>,
    /// Per run, per filter: the scores the means are taken over (for the
    /// paired comparisons of the claims).
    #[serde(skip)]
    pub runs: Vec<Vec<Score>>,
    /// The largest counter any filter held in any run.
    #[serde(skip)]
    pub peak: u32,
}

impl Measured {
    fn of(filters: &[Filter], runs: Vec<Vec<Score>>, peak: u32) -> Measured {
        let spread = |i: usize, f: fn(&Score) -> f64| Spread::of(runs.iter().map(|r| f(&r[i])));
        Measured {
            filters: filters
                .iter()
                .enumerate()
                .map(|(i, f)| FilterScore {
                    filter: f.name(),
                    e_add: spread(i, |s| s.e_add),
                    e_ratio: spread(i, |s| s.e_ratio),
                    fn_rate: spread(i, |s| s.fn_rate),
                })
                .collect(),
            runs,
            peak,
        }
    }

    /// The scores of `filter`, if the experiment ran it.
    pub fn get(&self, filter: Filter) -> Option<&FilterScore> {
        self.filters.iter().find(|s| s.filter == filter.name())
    }

    /// The position of `filter` in the runs' scores.
    pub fn index(&self, filter: Filter) -> Option<usize> {
        self.filters.iter().position(|s| s.filter == filter.name())
    }
}

/// A point of a figure: its label, load and skew.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// `γ=0.7` or `z=0.5`.
    pub label: String,
    /// Load `γ = nk/m`.
    pub gamma: f64,
    /// Zipf skew.
    pub skew: f64,
    /// The Bloom error `E_b = (1 − e^−γ)^k` at this load.
    pub e_b: f64,
}

impl Point {
    /// The point at load `gamma` and skew `skew`.
    pub fn new(label: String, gamma: f64, skew: f64) -> Point {
        Point {
            label,
            gamma,
            skew,
            e_b: bloom_error(K as u32, gamma),
        }
    }
}

/// One experiment over `points`: per layout, per point, the filters'
/// scores over `scale.runs` runs.
pub fn sweep(
    layouts: &[Layout],
    points: &[Point],
    mode: Mode,
    scale: Scale,
    bar: &ProgressBar,
) -> Result<Vec<Vec<Measured>>, String> {
    let filters = mode.filters();
    let mut out = vec![Vec::new(); layouts.len()];
    for (i, point) in points.iter().enumerate() {
        for (l, &layout) in layouts.iter().enumerate() {
            bar.set_message(format!("{mode:?} {} {}", point.label, layout.name()));
            let mut runs = Vec::new();
            let mut peak = 0;
            for run in 0..scale.runs {
                let t = run_once(layout, point, mode, scale, seed(mode.tag(), i, run))?;
                peak = peak.max(t.peak);
                runs.push(t.s);
            }
            out[l].push(Measured::of(&filters, runs, peak));
            bar.inc(1);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_mean_and_standard_error() {
        let s = Spread::of([1.0, 2.0, 3.0, 6.0]);
        assert_eq!(s.mean, 3.0);
        // Sample variance 14/3, over 4 runs.
        assert!((s.se - (14.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(Spread::of([5.0]), Spread { mean: 5.0, se: 0.0 });
    }

    #[test]
    fn seeds_differ_by_experiment_point_and_run() {
        let mut all: Vec<u64> = (1..=3)
            .flat_map(|t| (0..9).flat_map(move |p| (0..8).map(move |r| seed(t, p, r))))
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn readings_split_the_budget() {
        assert_eq!(Reading::Equal.split(7143), (4762, 2381));
        assert_eq!(Reading::Extra.split(7143), (7143, 3571));
        let names: Vec<_> = Mode::Delete.filters().iter().map(|f| f.name()).collect();
        assert_eq!(names, ["MS", "MI", "RM=", "RM+", "RM= B_f", "RM+ B_f"]);
        assert_eq!(Mode::Insert.filters().len(), 4);
    }
}
