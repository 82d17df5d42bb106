//! The experiments of §6.1–6.2: insertions only, deletion phases and a
//! sliding window, each run on the three policies (MS, MI, RM) of one
//! layout and averaged over fixed seeds.

use std::collections::VecDeque;

use indicatif::ProgressBar;
use serde::Serialize;

use super::library::{self, bloom_error, Rng, W16, W32};
use super::reference::{Flat, FlatMi, FlatMs, FlatRm};
use super::workload::{counters, score, Counts, Deletes, Scale, Score, Zipf, K, N};

/// Where the counters are: the library's blocked layout at a width, or the
/// unblocked reference.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Layout {
    /// `Spectral<P, W16>`: 32 counters per block.
    Blocked16,
    /// `Spectral<P, W32>`: 16 counters per block.
    Blocked32,
    /// The reference of [`super::reference`].
    Unblocked,
}

impl Layout {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Blocked16 => "blocked W16",
            Layout::Blocked32 => "blocked W32",
            Layout::Unblocked => "unblocked",
        }
    }

    /// The largest count a counter holds.
    pub fn max(self) -> u32 {
        match self {
            Layout::Blocked16 => u32::from(u16::MAX),
            Layout::Blocked32 | Layout::Unblocked => u32::MAX,
        }
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

/// Scores of [MS, MI, RM] on one point, and the largest counter seen.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trial {
    /// Minimum Selection, Minimal Increase, Recurring Minimum.
    pub s: [Score; 3],
    /// The largest counter any of them held.
    pub peak: u32,
}

fn insert_only(stream: &[u64], mut f: [&mut dyn Counts; 3]) -> Trial {
    let mut truth = vec![0u32; N];
    for &v in stream {
        truth[v as usize] += 1;
        for g in f.iter_mut() {
            g.insert(v);
        }
    }
    Trial {
        peak: f.iter().map(|g| g.peak()).max().unwrap_or(0),
        s: f.map(|g| score(&truth, g)),
    }
}

fn with_deletes(mode: Mode, stream: &[u64], rng: &mut Rng, mut f: [&mut dyn Deletes; 3]) -> Trial {
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
        s: f.map(|g| score(&truth, g)),
        peak,
    }
}

fn blocked<W: library::Counter>(
    m: usize,
    mode: Mode,
    stream: &[u64],
    rng: &mut Rng,
    seed: u64,
) -> Result<Trial, String> {
    Ok(if mode == Mode::Insert {
        let (mut ms, mut mi, mut rm) = library::insert_only::<W>(m, seed)?;
        insert_only(stream, [&mut ms, &mut mi, &mut rm])
    } else {
        let (mut ms, mut mi, mut rm) = library::with_deletes::<W>(m, seed)?;
        with_deletes(mode, stream, rng, [&mut ms, &mut mi, &mut rm])
    })
}

fn unblocked(m: usize, mode: Mode, stream: &[u64], rng: &mut Rng, seed: u64) -> Trial {
    let mut ms = FlatMs(Flat::new(m, seed));
    let mut mi = FlatMi(Flat::new(m, seed));
    let mut rm = FlatRm::new(m - m / 3, m / 3, seed);
    if mode == Mode::Insert {
        insert_only(stream, [&mut ms, &mut mi, &mut rm])
    } else {
        with_deletes(mode, stream, rng, [&mut ms, &mut mi, &mut rm])
    }
}

/// One run of the three policies on one stream.
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
    match layout {
        Layout::Blocked16 => blocked::<W16>(m, mode, &stream, &mut rng, seed),
        Layout::Blocked32 => blocked::<W32>(m, mode, &stream, &mut rng, seed),
        Layout::Unblocked => Ok(unblocked(m, mode, &stream, &mut rng, seed)),
    }
}

/// [`run_once`] averaged over `scale.runs` fixed seeds.
fn averaged(layout: Layout, point: &Point, mode: Mode, scale: Scale) -> Result<Trial, String> {
    let mut acc = Trial::default();
    let runs = scale.runs as f64;
    for seed in 0..scale.runs {
        let r = run_once(layout, point, mode, scale, 0x5EC7 + seed)?;
        for (a, s) in acc.s.iter_mut().zip(r.s) {
            a.e_add += s.e_add / runs;
            a.e_ratio += s.e_ratio / runs;
            a.fn_rate += s.fn_rate / runs;
        }
        acc.peak = acc.peak.max(r.peak);
    }
    Ok(acc)
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

/// One experiment over `points`: per layout, the points' trials.
pub fn sweep(
    layouts: &[Layout],
    points: &[Point],
    mode: Mode,
    scale: Scale,
    bar: &ProgressBar,
) -> Result<Vec<Vec<Trial>>, String> {
    let mut out = vec![Vec::new(); layouts.len()];
    for point in points {
        for (l, &layout) in layouts.iter().enumerate() {
            bar.set_message(format!("{mode:?} {} {}", point.label, layout.name()));
            out[l].push(averaged(layout, point, mode, scale)?);
            bar.inc(1);
        }
    }
    Ok(out)
}
