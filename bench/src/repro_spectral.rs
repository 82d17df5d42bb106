//! `streambloom-bench repro spectral`: reruns §6.1–6.2 of the Spectral Bloom
//! filter report (Zipf data, 1000 distinct values, M = 100 000 items, k = 5)
//! and Table 1, and prints our figures beside the paper's.
//!
//! ```text
//! streambloom-bench repro spectral [--layout blocked|unblocked|both] [--width 16|32]
//! ```
//!
//! Metrics as in §6.1, over the n = 1000 values of the domain:
//! `E_add = sqrt(Σ (f̂_i − f_i)² / n)` and `E_ratio` = fraction of values
//! with `f̂_i ≠ f_i`; we add `FN` = fraction with `f̂_i < f_i`. Each point
//! averages 5 runs with fixed seeds. The paper gives Figures 6, 8 and 9 as
//! plots only, so beside them we print the Bloom error `E_b` it computes
//! (what its Minimum Selection error ratio follows) and check its stated
//! findings; Table 1 is printed number for number.
//!
//! **Two layouts.** `blocked` is the library: `Spectral<P, W>` with each
//! item's `k` counters in one 64-byte block (16 counters per block for
//! `W32`, 32 for `W16`). `unblocked` is a plain reference written here, the
//! paper's model: `m` `u32` counters, an item's `k` positions drawn
//! independently from all `m` (so two may coincide), and Minimum Selection
//! and Minimal Increase as §2.2 and §3.2 state them. Its Recurring Minimum
//! (§3.3, no `B_f`) follows the paper with the library's two documented
//! refinements, so that only the layout differs: an item already in the
//! secondary is counted there on every insertion (read literally, the paper
//! counts it only while its minimum is single, which under-estimates; the
//! paper reports no false negatives for RM), and a single minimum is
//! answered by the smaller of the primary and secondary minima. The
//! secondary takes the library's share of the budget, a third
//! (`m_s = m_p / 2`).
//!
//! **Width.** The default is `W16`: the paper counts memory in counters,
//! not bytes, and its counters never overflow; `W16` does not saturate here
//! (the run prints the largest counter it saw: 60 920 of 65 535, at skew 2)
//! and its 32 counters per block are nearer the paper's model than `W32`'s
//! 16.
//!
//! Minimal Increase cannot delete in the library (a compile-time absence),
//! so the deletion and window experiments run the paper's "MI with
//! deletions" on the library's blocked layout through the public kernels.
//! The window is kept by the driver for every filter (evict the oldest item,
//! then insert), as the library's `SlidingWindow` does.
//!
//! **What explains the differences** (default run, `W16`; `--width 32`
//! after "W32:"). Blocked hashing explains the Minimum Selection error and
//! Table 1, but not Minimal Increase's 5x nor Recurring Minimum beating
//! Minimum Selection at equal memory: the unblocked reference does not
//! reproduce those either.
//!
//! - MS error ratio at γ = 0.7 (the paper: `E_b` = 0.032): unblocked 0.031,
//!   blocked 0.057 (W32: 0.084). With 32 (W32: 16) counters per block, the
//!   load per block varies and an item's `k` counters are drawn from few,
//!   so all `k` are covered more often.
//! - Table 1 at γ = 0.7: `P(E_x|R_x)` unblocked 0.0010, blocked 0.0168
//!   (W32: 0.0356), paper 0.002; so `E_b/E_RM` unblocked 34.1, blocked 2.4
//!   (W32: 1.2), paper 18.5. In a block the items covering `x`'s counters
//!   are few and each covers several, raising them by the same amount: a
//!   Bloom error then leaves a *recurring* minimum, which Recurring Minimum
//!   trusts. (Measured, Recurring Minimum gains far less than the formula on
//!   either layout: error ratio MS/RM 1.9 unblocked, 1.6 (W32: 1.3) blocked;
//!   the formula leaves out late detection.)
//! - Sliding window, MI/RM `E_add`: unblocked 11.9, blocked 8.5 (W32: 5.9);
//!   paper 10 to 100. With deletions MI's errors are false negatives on both
//!   layouts (98 %; blocked 95 %, W32: 88 %).
//! - Not explained: the MS/MI error ratio over skews is 1.9 unblocked, 1.6
//!   (W32: 1.4) blocked, paper ~5 (MI's gain shows in `E_add`: at skew 0 it
//!   is 14 times below MS's unblocked, 12 (W32: 7) blocked). Recurring
//!   Minimum at equal memory is worse than Minimum Selection at every skew on
//!   both layouts, and stays so with the secondary at 1/5, 1/10 or 1/20 of
//!   the budget instead of 1/3.
//!
//! `W16` instead of `W32` halves the blocked layout's excess Minimum
//! Selection error and its `P(E_x|R_x)`, but leaves it far from the
//! unblocked reference.

use std::collections::VecDeque;
use streambloom::hash::{self, mix64, DefaultHasher};
use streambloom::spectral::analysis::{bloom_error, recurring_minimum_error};
use streambloom::spectral::{
    Counter, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Removable, Spectral,
};
use streambloom::{Block, Kernels, Rng, W16, W32};
use streambloom_kernels::cell;

const N: usize = 1000;
const M: usize = 100_000;
const K: usize = 5;
const RUNS: u64 = 5;
/// Salt of the unblocked Recurring Minimum's secondary positions.
const SECONDARY: u64 = 0x5EC0_4DA7_5EC0_4DA7;

/// Zipf(`z`) over `0..N` by inverse CDF.
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(z: f64) -> Zipf {
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
    fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.0.partition_point(|&c| c < u).min(N - 1) as u64
    }
}

/// What the experiments ask of a filter, keyed by the value itself.
trait Counts {
    fn insert(&mut self, v: u64);
    fn estimate(&self, v: u64) -> u32;
    /// The largest counter now (to check that `W16` never saturates).
    fn peak(&self) -> u32;
}

/// A filter that can also take back `r` occurrences of a value.
trait Deletes: Counts {
    fn remove(&mut self, v: u64, r: u32);
}

/// A Recurring Minimum filter, for Table 1.
trait Recurring: Counts {
    /// The smallest primary counter of `v` and how many of its counters hold
    /// it.
    fn primary_minimum(&self, v: u64) -> (u32, u32);
}

fn peak<W: Counter>(blocks: &[Block]) -> u32 {
    blocks
        .iter()
        .flat_map(|b| (0..W::CELLS).map(move |i| cell::<W>(b, i)))
        .max()
        .unwrap_or(0)
}

impl<P: Policy, W: Counter> Counts for Spectral<P, W> {
    fn insert(&mut self, v: u64) {
        Spectral::insert(self, &v);
    }
    fn estimate(&self, v: u64) -> u32 {
        Spectral::estimate(self, &v)
    }
    fn peak(&self) -> u32 {
        peak::<W>(self.blocks())
    }
}

impl<P: Removable, W: Counter> Deletes for Spectral<P, W> {
    fn remove(&mut self, v: u64, r: u32) {
        self.remove_n(&v, r);
    }
}

impl<W: Counter> Recurring for Spectral<RecurringMinimum, W> {
    fn primary_minimum(&self, v: u64) -> (u32, u32) {
        let mc = self.primary_minimum_hash(self.hash(&v));
        (mc.min, mc.count)
    }
}

/// Minimal Increase with the deletions the library refuses: the paper's
/// §6.2 setting, on the library's blocked layout and kernels.
struct MiWithDeletes<W: Counter> {
    blocks: Vec<Block>,
    k: &'static Kernels<W>,
    hasher: DefaultHasher,
}

impl<W: Counter> MiWithDeletes<W> {
    fn new(counters: usize, seed: u64) -> MiWithDeletes<W> {
        MiWithDeletes {
            blocks: vec![Block::ZERO; counters.div_ceil(W::CELLS)],
            k: Kernels::best(),
            hasher: hash::seeded_hasher(seed),
        }
    }
    fn probe(&self, v: u64) -> hash::Probe<W> {
        hash::probe_with::<W>(
            streambloom::spectral::PLACEMENT,
            hash::hash_key(&self.hasher, &v),
            self.blocks.len(),
            K as u32,
        )
    }
}

impl<W: Counter> Counts for MiWithDeletes<W> {
    fn insert(&mut self, v: u64) {
        let p = self.probe(v);
        let min = self.k.min_count(&self.blocks[p.block], p.mask).min;
        self.k
            .max_assign(&mut self.blocks[p.block], p.mask, min.saturating_add(1));
    }
    fn estimate(&self, v: u64) -> u32 {
        let p = self.probe(v);
        self.k.min_count(&self.blocks[p.block], p.mask).min
    }
    fn peak(&self) -> u32 {
        peak::<W>(&self.blocks)
    }
}

impl<W: Counter> Deletes for MiWithDeletes<W> {
    fn remove(&mut self, v: u64, r: u32) {
        let p = self.probe(v);
        self.k.sub_sat(&mut self.blocks[p.block], p.mask, r);
    }
}

/// The unblocked reference's counters: `m` plain `u32`s; an item's `k`
/// positions are `k` independent uniform draws from all `m` (remixes of its
/// 64-bit hash), as in the paper's model.
struct Flat {
    c: Vec<u32>,
    hasher: DefaultHasher,
}

impl Flat {
    fn new(m: usize, seed: u64) -> Flat {
        Flat {
            c: vec![0; m],
            hasher: hash::seeded_hasher(seed),
        }
    }
    fn hash(&self, v: u64) -> u64 {
        hash::hash_key(&self.hasher, &v)
    }
    fn cells(&self, h: u64) -> [usize; K] {
        core::array::from_fn(|j| {
            let x = mix64(h.wrapping_add((j as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            hash::block_of(x, self.c.len()) // multiply-shift onto 0..m
        })
    }
    /// The smallest of `h`'s counters and how many of its `k` hold it.
    fn min_count(&self, h: u64) -> (u32, u32) {
        let cells = self.cells(h);
        let min = cells.iter().map(|&i| self.c[i]).min().unwrap_or(0);
        let count = cells.iter().filter(|&&i| self.c[i] == min).count();
        (min, count as u32)
    }
    fn add(&mut self, h: u64, r: u32) {
        for i in self.cells(h) {
            self.c[i] += r;
        }
    }
    fn sub(&mut self, h: u64, r: u32) {
        for i in self.cells(h) {
            self.c[i] = self.c[i].saturating_sub(r);
        }
    }
    fn peak(&self) -> u32 {
        self.c.iter().copied().max().unwrap_or(0)
    }
}

/// Minimum Selection (§2.2), unblocked.
struct FlatMs(Flat);

impl Counts for FlatMs {
    fn insert(&mut self, v: u64) {
        self.0.add(self.0.hash(v), 1);
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(self.0.hash(v)).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMs {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(self.0.hash(v), r);
    }
}

/// Minimal Increase (§3.2), unblocked; its deletion lowers all `k`
/// counters, the paper's "MI with deletions".
struct FlatMi(Flat);

impl Counts for FlatMi {
    fn insert(&mut self, v: u64) {
        let h = self.0.hash(v);
        let to = self.0.min_count(h).0 + 1;
        for i in self.0.cells(h) {
            self.0.c[i] = self.0.c[i].max(to);
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(self.0.hash(v)).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMi {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(self.0.hash(v), r);
    }
}

/// Recurring Minimum (§3.3, without `B_f`), unblocked, with the library's
/// rules (see the module docs): insert into the primary; if `x` is in the
/// secondary (secondary minimum > 0) add 1 there, else on a single minimum
/// put it there with its primary minimum. Estimate: a recurring minimum, else
/// the smaller of it and the secondary value if that is above 0. Delete:
/// from the primary, then from the secondary if the minimum is single and
/// `x` is there.
struct FlatRm {
    p: Flat,
    s: Flat,
}

impl FlatRm {
    fn new(primary: usize, secondary: usize, seed: u64) -> FlatRm {
        FlatRm {
            p: Flat::new(primary, seed),
            s: Flat::new(secondary, seed),
        }
    }
}

impl Counts for FlatRm {
    fn insert(&mut self, v: u64) {
        let h = self.p.hash(v);
        self.p.add(h, 1);
        if self.s.min_count(h ^ SECONDARY).0 > 0 {
            self.s.add(h ^ SECONDARY, 1);
            return;
        }
        let (min, count) = self.p.min_count(h);
        if count < 2 {
            self.s.add(h ^ SECONDARY, min);
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        let h = self.p.hash(v);
        let (min, count) = self.p.min_count(h);
        if count >= 2 {
            return min;
        }
        match self.s.min_count(h ^ SECONDARY).0 {
            0 => min,
            s => s.min(min),
        }
    }
    fn peak(&self) -> u32 {
        self.p.peak().max(self.s.peak())
    }
}

impl Deletes for FlatRm {
    fn remove(&mut self, v: u64, r: u32) {
        let h = self.p.hash(v);
        self.p.sub(h, r);
        if self.p.min_count(h).1 < 2 && self.s.min_count(h ^ SECONDARY).0 > 0 {
            self.s.sub(h ^ SECONDARY, r);
        }
    }
}

impl Recurring for FlatRm {
    fn primary_minimum(&self, v: u64) -> (u32, u32) {
        self.p.min_count(self.p.hash(v))
    }
}

/// Where the counters are: the library's blocked layout at a width, or the
/// unblocked reference.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Layout {
    Blocked16,
    Blocked32,
    Unblocked,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Blocked16 => "blocked W16",
            Layout::Blocked32 => "blocked W32",
            Layout::Unblocked => "unblocked",
        }
    }
    /// The largest count a counter holds.
    fn max(self) -> u32 {
        match self {
            Layout::Blocked16 => u32::from(u16::MAX),
            Layout::Blocked32 | Layout::Unblocked => u32::MAX,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Score {
    add: f64,
    ratio: f64,
    fneg: f64,
}

fn score(truth: &[u32], f: &dyn Counts) -> Score {
    let mut s = Score::default();
    for (v, &t) in truth.iter().enumerate() {
        let e = f.estimate(v as u64);
        let d = f64::from(e) - f64::from(t);
        s.add += d * d;
        s.ratio += f64::from(u8::from(e != t));
        s.fneg += f64::from(u8::from(e < t));
    }
    let n = truth.len() as f64;
    Score {
        add: (s.add / n).sqrt(),
        ratio: s.ratio / n,
        fneg: s.fneg / n,
    }
}

/// Scores of [MS, MI, RM] on one point, and the largest counter seen.
#[derive(Clone, Copy, Default)]
struct Trial {
    s: [Score; 3],
    peak: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Insert,
    Delete,
    Window,
}

fn counters(gamma: f64) -> usize {
    (N as f64 * K as f64 / gamma).round() as usize
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

/// §6.2: deletion phases (5 phases of M/5 insertions, each followed by
/// deleting 5 % of the present values entirely), or a sliding window of the
/// last M/5 items.
fn with_deletes(mode: Mode, stream: &[u64], rng: &mut Rng, mut f: [&mut dyn Deletes; 3]) -> Trial {
    let mut truth = vec![0u32; N];
    let mut peak = 0;
    if mode == Mode::Delete {
        for phase in stream.chunks(M / 5) {
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
        let w = M / 5;
        let mut ring = VecDeque::with_capacity(w + 1);
        for &v in stream {
            if ring.len() == w {
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

fn blocked<W: Counter>(
    m: usize,
    mode: Mode,
    stream: &[u64],
    rng: &mut Rng,
    seed: u64,
) -> Result<Trial, String> {
    let e = |e: streambloom::Error| e.to_string();
    let k = K as u32;
    let mut ms = Spectral::<MinimumSelection, W>::new(m, k, seed).map_err(e)?;
    let mut rm = Spectral::<RecurringMinimum, W>::new(m, k, seed).map_err(e)?;
    Ok(if mode == Mode::Insert {
        let mut mi = Spectral::<MinimalIncrease, W>::new(m, k, seed).map_err(e)?;
        insert_only(stream, [&mut ms, &mut mi, &mut rm])
    } else {
        let mut mi = MiWithDeletes::<W>::new(m, seed);
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
fn run_once(layout: Layout, gamma: f64, skew: f64, mode: Mode, seed: u64) -> Result<Trial, String> {
    let m = counters(gamma);
    let zipf = Zipf::new(skew);
    let mut rng = Rng::new(seed);
    let stream: Vec<u64> = (0..M).map(|_| zipf.sample(&mut rng)).collect();
    match layout {
        Layout::Blocked16 => blocked::<W16>(m, mode, &stream, &mut rng, seed),
        Layout::Blocked32 => blocked::<W32>(m, mode, &stream, &mut rng, seed),
        Layout::Unblocked => Ok(unblocked(m, mode, &stream, &mut rng, seed)),
    }
}

fn averaged(layout: Layout, gamma: f64, skew: f64, mode: Mode) -> Result<Trial, String> {
    let mut acc = Trial::default();
    for seed in 0..RUNS {
        let r = run_once(layout, gamma, skew, mode, 0x5EC7 + seed)?;
        for (a, s) in acc.s.iter_mut().zip(r.s) {
            a.add += s.add / RUNS as f64;
            a.ratio += s.ratio / RUNS as f64;
            a.fneg += s.fneg / RUNS as f64;
        }
        acc.peak = acc.peak.max(r.peak);
    }
    Ok(acc)
}

fn header(what: &str) {
    println!("\n{what}");
    println!(
        "{:>8} {:>11} | {:>8} {:>8} {:>8} | {:>7} {:>7} {:>7} | {:>6} {:>6} {:>6}",
        "", "", "Eadd MS", "MI", "RM", "Erat MS", "MI", "RM", "FN MS", "MI", "RM"
    );
}

fn row(label: &str, layout: Layout, s: &[Score; 3]) {
    println!(
        "{label:>8} {:>11} | {:>8.3} {:>8.3} {:>8.3} | {:>7.4} {:>7.4} {:>7.4} | {:>6.4} {:>6.4} {:>6.4}",
        layout.name(),
        s[0].add,
        s[1].add,
        s[2].add,
        s[0].ratio,
        s[1].ratio,
        s[2].ratio,
        s[0].fneg,
        s[1].fneg,
        s[2].fneg
    );
}

/// One sweep: for each point, each layout's row; returns per layout the
/// points' trials.
fn sweep(
    layouts: &[Layout],
    points: &[(String, f64, f64)],
    mode: Mode,
) -> Result<Vec<Vec<Trial>>, String> {
    let mut out = vec![Vec::new(); layouts.len()];
    for (label, gamma, skew) in points {
        for (l, &layout) in layouts.iter().enumerate() {
            let t = averaged(layout, *gamma, *skew, mode)?;
            let shown = if l == 0 { label.as_str() } else { "" };
            row(shown, layout, &t.s);
            out[l].push(t);
        }
    }
    Ok(out)
}

/// One row of Table 1: γ, E_b, P(R_x), P(E_x|R_x), γ_s, E_b^s, E_RM, E_b/E_RM.
type Table1Row = (f64, f64, f64, f64, f64, f64, f64, f64);

const TABLE1: [Table1Row; 5] = [
    (1.0, 0.101, 0.657, 0.0045, 0.686, 0.03, 0.0132, 7.59),
    (0.83, 0.057, 0.697, 0.0028, 0.502, 0.0096, 0.0048, 11.7),
    (0.7, 0.032, 0.812, 0.002, 0.263, 0.0006, 0.0017, 18.48),
    (0.625, 0.021, 0.799, 0.0012, 0.251, 0.00054, 0.001, 20.3),
    (
        0.5,
        0.009,
        0.969,
        0.0,
        0.031,
        2.65e-8,
        8.21e-10,
        11_480_352.0,
    ),
];

/// Table 1's Recurring Minimum: primary `m`, secondary `m/2`.
fn table1_filter(layout: Layout, m: usize, seed: u64) -> Result<Box<dyn Recurring>, String> {
    fn lib<W: Counter>(m: usize, seed: u64) -> Result<Box<dyn Recurring>, String> {
        let p = RecurringMinimum::new().with_secondary(m / 2);
        Spectral::<RecurringMinimum, W>::with_policy(p, m + m / 2, K as u32, seed)
            .map(|f| Box::new(f) as Box<dyn Recurring>)
            .map_err(|e| e.to_string())
    }
    match layout {
        Layout::Blocked16 => lib::<W16>(m, seed),
        Layout::Blocked32 => lib::<W32>(m, seed),
        Layout::Unblocked => Ok(Box::new(FlatRm::new(m, m / 2, seed))),
    }
}

/// Table 1's measured columns at `γ` over the runs: P(R_x), P(E_x|R_x),
/// and the error ratios of the primary alone (Minimum Selection) and of
/// Recurring Minimum.
fn table1_point(layout: Layout, g: f64) -> Result<[f64; 4], String> {
    let m = counters(g);
    let mut acc = [0.0; 4];
    for seed in 0..RUNS {
        let zipf = Zipf::new(0.5);
        let mut rng = Rng::new(0x7AB1 + seed);
        let mut rm = table1_filter(layout, m, seed)?;
        let mut truth = vec![0u32; N];
        for _ in 0..M {
            let v = zipf.sample(&mut rng);
            truth[v as usize] += 1;
            rm.insert(v);
        }
        let (mut n, mut rec, mut rec_err, mut e_ms, mut e_rm) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (v, &f) in truth.iter().enumerate().filter(|(_, &f)| f > 0) {
            let (min, count) = rm.primary_minimum(v as u64);
            n += 1.0;
            if count >= 2 {
                rec += 1.0;
                rec_err += f64::from(u8::from(min != f));
            }
            e_ms += f64::from(u8::from(min != f));
            e_rm += f64::from(u8::from(rm.estimate(v as u64) != f));
        }
        let runs = RUNS as f64;
        acc[0] += rec / n / runs;
        acc[1] += rec_err / rec.max(1.0) / runs;
        acc[2] += e_ms / n / runs;
        acc[3] += e_rm / n / runs;
    }
    Ok(acc)
}

/// Table 1: k = 5, n = 1000, skew 0.5, primary m = nk/γ, secondary m/2.
/// Returns per layout `(P(E_x|R_x), E_b/E_RM, measured Erat MS / Erat RM)`
/// at γ = 0.7.
fn table1(layouts: &[Layout]) -> Result<Vec<(f64, f64, f64)>, String> {
    println!("\nTable 1 (skew 0.5, k = 5, n = 1000, m_s = m/2): the paper's row, then ours; E_b is the formula (1 − e^−γ)^k, E_RM = P(R)·P(E|R) + (1 − P(R))·E_b^s");
    println!(
        "{:>6} {:>11} | {:>6} | {:>6} | {:>10} | {:>6} | {:>8} | {:>8} | {:>9} | measured Erat MS, RM, MS/RM",
        "γ", "", "E_b", "P(R_x)", "P(E_x|R_x)", "γ_s", "E_b^s", "E_RM", "E_b/E_RM"
    );
    let mut at_07 = vec![(0.0, 0.0, 0.0); layouts.len()];
    for (g, eb_p, pr_p, per_p, gs_p, ebs_p, erm_p, gain_p) in TABLE1 {
        println!(
            "{g:>6} {:>11} | {eb_p:>6.3} | {pr_p:>6.3} | {per_p:>10.4} | {gs_p:>6.3} | {ebs_p:>8.2e} | {erm_p:>8.2e} | {gain_p:>9.1} |",
            "paper"
        );
        let eb = bloom_error(K as u32, g);
        let ms_cells = (counters(g) / 2) as f64;
        for (l, &layout) in layouts.iter().enumerate() {
            let [pr, per, ms_err, rm_err] = table1_point(layout, g)?;
            let gs = N as f64 * (1.0 - pr) * K as f64 / ms_cells;
            let erm = recurring_minimum_error(pr, per, N as u64, K as u32, ms_cells);
            let measured = ms_err / rm_err;
            println!(
                "{:>6} {:>11} | {eb:>6.3} | {pr:>6.3} | {per:>10.4} | {gs:>6.3} | {:>8.2e} | {erm:>8.2e} | {:>9.1} | {ms_err:.4}, {rm_err:.4}, {measured:.1}",
                "",
                layout.name(),
                bloom_error(K as u32, gs),
                eb / erm
            );
            if g == 0.7 {
                at_07[l] = (per, eb / erm, measured);
            }
        }
    }
    Ok(at_07)
}

/// One layout's results, for the findings.
struct Results {
    layout: Layout,
    gamma: Vec<Trial>,
    ins: Vec<Trial>,
    del: Vec<Trial>,
    win: Vec<Trial>,
    table1: (f64, f64, f64),
}

/// One of the paper's findings measured on one layout, and whether it holds.
struct Check {
    what: &'static str,
    paper: &'static str,
    value: String,
    holds: bool,
}

fn mean(v: &[Trial], p: usize, f: fn(&Score) -> f64) -> f64 {
    v.iter().map(|t| f(&t.s[p])).sum::<f64>() / v.len() as f64
}

/// Prints the paper's findings checked on one layout's results and returns
/// the checks the closing lines compare.
fn findings(r: &Results, gamma_07: usize) -> Vec<Check> {
    let ratio = |s: &Score| s.ratio;
    let add = |s: &Score| s.add;
    let fneg = |s: &Score| s.fneg;
    let (ins, del, win) = (&r.ins, &r.del, &r.win);
    let skews = ins.len();
    println!("\nThe paper's findings, checked ({}):", r.layout.name());
    let at = &r.gamma[gamma_07].s;
    let eb = bloom_error(K as u32, 0.7);
    println!(
        "  MS's error ratio is E_b (§6.1): γ = 0.7, skew 0.5: {:.4} against E_b = {eb:.4}",
        at[0].ratio
    );
    let mi_gain = mean(ins, 0, ratio) / mean(ins, 1, ratio);
    println!(
        "  MI has ~5x fewer errors than MS at optimal γ over skews (§3.4): MS/MI error ratio = {mi_gain:.1} (γ = 0.7, skew 0.5: {:.1})",
        at[0].ratio / at[1].ratio
    );
    let best = ins
        .iter()
        .filter(|t| t.s[1].ratio <= t.s[0].ratio.min(t.s[2].ratio))
        .count();
    println!("  MI best without deletions (§6.1): lowest error ratio at {best} of {skews} skews");
    let rm_better = ins
        .iter()
        .filter(|t| t.s[2].ratio < t.s[0].ratio && t.s[2].add <= t.s[0].add)
        .count();
    println!(
        "  RM better than MS at equal memory, ratio and E_add (§3.4, §6.1): at {rm_better} of {skews} skews"
    );
    println!(
        "  RM and MI almost identical in error ratio over γ (Fig. 6b): RM/MI error ratio, mean over γ = {:.1}",
        mean(&r.gamma, 2, ratio) / mean(&r.gamma, 1, ratio)
    );
    let mi_worst = del
        .iter()
        .filter(|t| t.s[1].add >= t.s[0].add.max(t.s[2].add))
        .count();
    let fn_share = mean(del, 1, fneg) / mean(del, 1, ratio);
    let fn_other = mean(del, 0, fneg).max(mean(del, 2, fneg));
    println!(
        "  with deletions MI worst (E_add) at {mi_worst} of {} skews; share of MI's errors that are false negatives: {:.0} % (paper: almost all); FN rate MS {:.4}, RM {:.4} (paper: none)",
        del.len(),
        100.0 * fn_share,
        mean(del, 0, fneg),
        mean(del, 2, fneg)
    );
    let window = mean(win, 1, add) / mean(win, 2, add);
    println!(
        "  sliding window: MI E_add / RM E_add = {window:.1} (paper: 1 to 2 orders of magnitude); RM better than MS (E_add) at {} of {} skews (paper: advantage to RM)",
        win.iter().filter(|t| t.s[2].add < t.s[0].add).count(),
        win.len()
    );
    let (per, gain, measured) = r.table1;
    println!(
        "  Table 1 at γ = 0.7: P(E_x|R_x) = {per:.4} (paper: 0.002), E_b/E_RM = {gain:.1} (paper: 18.5); measured error ratio MS/RM = {measured:.1}"
    );
    vec![
        Check {
            what: "MS error ratio at γ = 0.7 (within 25 % of E_b)",
            paper: "E_b = 0.032",
            value: format!("{:.3}", at[0].ratio),
            holds: (at[0].ratio / eb - 1.0).abs() <= 0.25,
        },
        Check {
            what: "MS/MI error ratio over skews (at least 2.5)",
            paper: "~5",
            value: format!("{mi_gain:.1}"),
            holds: mi_gain >= 2.5,
        },
        Check {
            what: "RM better than MS, equal memory (most skews)",
            paper: "all skews",
            value: format!("{rm_better} of {skews}"),
            holds: 2 * rm_better > skews,
        },
        Check {
            what: "deletions: MI's errors false negatives (≥ 80 %), MS and RM FN rate ≤ 0.001",
            paper: "almost all; none",
            value: format!("{:.0} %; {fn_other:.4}", 100.0 * fn_share),
            holds: fn_share >= 0.8 && fn_other <= 0.001,
        },
        Check {
            what: "window: MI E_add / RM E_add (at least 10)",
            paper: "10 to 100",
            value: format!("{window:.1}"),
            holds: window >= 10.0,
        },
        Check {
            what: "Table 1, γ = 0.7: P(E_x|R_x) (at most 0.004)",
            paper: "0.002",
            value: format!("{per:.4}"),
            holds: per <= 0.004,
        },
        Check {
            what: "Table 1, γ = 0.7: E_b/E_RM (at least 9.25)",
            paper: "18.5",
            value: format!("{gain:.1}"),
            holds: gain >= 9.25,
        },
    ]
}

/// The closing lines: each check on each layout beside the paper, and which
/// differences blocked hashing explains.
fn verdict(results: &[Results], checks: &[Vec<Check>]) {
    println!("\nBlocked against unblocked, beside the paper (✓ = the paper's finding holds):");
    print!("  {:<76} | {:>16}", "finding (test)", "paper");
    for r in results {
        print!(" | {:>13}", r.layout.name());
    }
    println!();
    for (i, c) in checks[0].iter().enumerate() {
        print!("  {:<76} | {:>16}", c.what, c.paper);
        for layout in checks {
            let c = &layout[i];
            print!(" | {:>11} {}", c.value, if c.holds { "✓" } else { "✗" });
        }
        println!();
    }
    let find = |u: bool| {
        results
            .iter()
            .position(|r| (r.layout == Layout::Unblocked) == u)
    };
    let (Some(u), Some(b)) = (find(true), find(false)) else {
        return;
    };
    let list = |keep: &dyn Fn(&Check, &Check) -> bool| {
        let v: Vec<&str> = checks[u]
            .iter()
            .zip(&checks[b])
            .filter(|(cu, cb)| keep(cu, cb))
            .map(|(cu, _)| cu.what)
            .collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join("; ")
        }
    };
    let name = results[b].layout.name();
    println!(
        "  => explained by blocked hashing (holds unblocked, not {name}): {}",
        list(&|cu, cb| cu.holds && !cb.holds)
    );
    println!(
        "  => not explained by it (holds on neither layout): {}",
        list(&|cu, cb| !cu.holds && !cb.holds)
    );
    println!(
        "  => holds on both: {}",
        list(&|cu, cb| cu.holds && cb.holds)
    );
}

const HELP: &str = "\
streambloom-bench repro spectral [--layout blocked|unblocked|both] [--width 16|32]

Reruns §6.1–6.2 and Table 1 of the Spectral Bloom filter report (Zipf,
n = 1000 values, M = 100 000, k = 5, 5 runs per point) on the library's
blocked filter and on an unblocked reference (plain counters, k independent
positions), and prints both beside the paper.

  --layout   blocked, unblocked or both (default both)
  --width    counter width of the blocked filter: 16 (32 counters per
             block, the default) or 32 (16 counters per block)
";

fn parse(args: &[String]) -> Result<Option<Vec<Layout>>, String> {
    let (mut which, mut width) = ("both", "16");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--layout" => which = value()?.as_str(),
            "--width" => width = value()?.as_str(),
            _ => return Err(format!("unknown argument {a:?}\n\n{HELP}")),
        }
    }
    let blocked = match width {
        "16" => Layout::Blocked16,
        "32" => Layout::Blocked32,
        w => return Err(format!("--width takes 16 or 32, got {w:?}")),
    };
    match which {
        "both" => Ok(Some(vec![blocked, Layout::Unblocked])),
        "blocked" => Ok(Some(vec![blocked])),
        "unblocked" => Ok(Some(vec![Layout::Unblocked])),
        l => Err(format!(
            "--layout takes blocked, unblocked or both, got {l:?}"
        )),
    }
}

/// Entry point of `streambloom-bench repro spectral`.
pub fn run(args: &[String]) -> Result<(), String> {
    let Some(layouts) = parse(args)? else {
        print!("{HELP}");
        return Ok(());
    };
    let names: Vec<&str> = layouts.iter().map(|l| l.name()).collect();
    println!(
        "Spectral Bloom filters, §6.1–6.2: Zipf, n = {N} values, M = {M}, k = {K}, {RUNS} runs per point; layouts: {}",
        names.join(", ")
    );
    let gammas = [0.12, 0.25, 0.5, 0.7, 1.0, 1.25, 1.5, 2.0];
    let points: Vec<(String, f64, f64)> =
        gammas.iter().map(|&g| (format!("γ={g}"), g, 0.5)).collect();
    header("Fig. 6a/b: varying γ (skew 0.5; RM uses m in total, split 2:1); paper: MS's error ratio follows E_b = (1 − e^−γ)^k, MI and RM below it");
    for &g in &gammas {
        print!("  E_b(γ={g}) = {:.4}", bloom_error(K as u32, g));
    }
    println!();
    let gamma = sweep(&layouts, &points, Mode::Insert)?;
    let skews = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0];
    let points: Vec<(String, f64, f64)> =
        skews.iter().map(|&z| (format!("z={z}"), 0.7, z)).collect();
    let eb = bloom_error(K as u32, 0.7);
    header(&format!("Fig. 8a/b solid: varying skew (γ = 0.7, E_b = {eb:.4}); paper: MI best and stable over skew, RM better than MS"));
    let ins = sweep(&layouts, &points, Mode::Insert)?;
    header("Fig. 8 dotted: with deletions (5 phases of M/5; 5 % of present items deleted per phase; γ = 0.7); paper: MI deteriorates, almost all its errors false negatives, none for MS and RM");
    let del = sweep(&layouts, &points, Mode::Delete)?;
    header("Fig. 9: sliding window of M/5 (γ = 0.7 for the window's distinct values); paper: MS and RM much better than MI, advantage RM");
    let win = sweep(&layouts, &points, Mode::Window)?;
    let t1 = table1(&layouts)?;

    println!();
    for (l, &layout) in layouts.iter().enumerate() {
        let peak = gamma[l]
            .iter()
            .chain(&ins[l])
            .chain(&del[l])
            .map(|t| t.peak)
            .max()
            .unwrap_or(0);
        println!(
            "Largest counter seen, {}: {peak} (limit {}: {})",
            layout.name(),
            layout.max(),
            if peak < layout.max() {
                "never saturated"
            } else {
                "SATURATED"
            }
        );
    }
    let results: Vec<Results> = layouts
        .iter()
        .enumerate()
        .map(|(l, &layout)| Results {
            layout,
            gamma: gamma[l].clone(),
            ins: ins[l].clone(),
            del: del[l].clone(),
            win: win[l].clone(),
            table1: t1[l],
        })
        .collect();
    let at_07 = gammas.iter().position(|&g| g == 0.7).unwrap_or(0);
    let checks: Vec<Vec<Check>> = results.iter().map(|r| findings(r, at_07)).collect();
    verdict(&results, &checks);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_arguments() {
        assert!(run(&["x".to_string()]).is_err());
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(parse(&args("--width 8")).is_err());
        assert!(parse(&args("--layout diagonal")).is_err());
        assert!(parse(&args("--width")).is_err());
        assert_eq!(
            parse(&args("--layout blocked --width 32")),
            Ok(Some(vec![Layout::Blocked32]))
        );
    }

    /// Under insertions alone the unblocked MS and MI never under-estimate
    /// and MI is never above MS (Claim 4).
    #[test]
    fn unblocked_reference_bounds() {
        let mut ms = FlatMs(Flat::new(300, 1));
        let mut mi = FlatMi(Flat::new(300, 1));
        let zipf = Zipf::new(1.0);
        let mut rng = Rng::new(2);
        let mut truth = vec![0u32; N];
        for _ in 0..5000 {
            let v = zipf.sample(&mut rng);
            truth[v as usize] += 1;
            ms.insert(v);
            mi.insert(v);
        }
        for (v, &f) in truth.iter().enumerate() {
            let (a, b) = (ms.estimate(v as u64), mi.estimate(v as u64));
            assert!(f <= b && b <= a, "value {v}: true {f}, MI {b}, MS {a}");
        }
    }
}
