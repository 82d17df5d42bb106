//! Table 1 of the report: the Recurring Minimum error model at k = 5,
//! n = 1000, skew 0.5, primary `m = nk/γ` and secondary `m/2`, the paper's
//! row beside ours per layout.

use indicatif::ProgressBar;
use serde::Serialize;

use super::experiments::Layout;
use super::library::{self, bloom_error, recurring_minimum_error, Rng, W16, W32};
use super::reference::FlatRm;
use super::workload::{counters, Recurring, Scale, Zipf, K, N};

/// One row of Table 1, the paper's or ours.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Row {
    /// The Bloom error of the primary, `(1 − e^−γ)^k`.
    pub e_b: f64,
    /// `P(R_x)`: the share of items whose primary minimum is recurring.
    pub p_r: f64,
    /// `P(E_x | R_x)`: the share of those whose recurring minimum is wrong.
    pub p_e_given_r: f64,
    /// The secondary's load `γ_s`.
    pub gamma_s: f64,
    /// The secondary's Bloom error `E_b^s`.
    pub e_b_s: f64,
    /// `E_RM = P(R)·P(E|R) + (1 − P(R))·E_b^s`.
    pub e_rm: f64,
    /// `E_b / E_RM`: the gain the model predicts.
    pub gain: f64,
}

/// Our row for one layout, with the error ratios measured directly.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Measured {
    /// The layout's name.
    pub layout: &'static str,
    /// The model's columns from our `P(R_x)` and `P(E_x | R_x)`.
    #[serde(flatten)]
    pub row: Row,
    /// Measured error ratio of the primary alone (Minimum Selection).
    pub e_ratio_ms: f64,
    /// Measured error ratio of Recurring Minimum.
    pub e_ratio_rm: f64,
}

/// One load of Table 1: the paper's row and ours.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// Load `γ` of the primary.
    pub gamma: f64,
    /// The paper's row.
    pub paper: Row,
    /// Ours, one per layout.
    pub measured: Vec<Measured>,
}

/// The paper's Table 1: γ, E_b, P(R_x), P(E_x|R_x), γ_s, E_b^s, E_RM, E_b/E_RM.
const PAPER: [[f64; 8]; 5] = [
    [1.0, 0.101, 0.657, 0.0045, 0.686, 0.03, 0.0132, 7.59],
    [0.83, 0.057, 0.697, 0.0028, 0.502, 0.0096, 0.0048, 11.7],
    [0.7, 0.032, 0.812, 0.002, 0.263, 0.0006, 0.0017, 18.48],
    [0.625, 0.021, 0.799, 0.0012, 0.251, 0.00054, 0.001, 20.3],
    [
        0.5,
        0.009,
        0.969,
        0.0,
        0.031,
        2.65e-8,
        8.21e-10,
        11_480_352.0,
    ],
];

/// The loads of Table 1, for the progress bar.
pub const LOADS: usize = PAPER.len();

fn filter(layout: Layout, m: usize, seed: u64) -> Result<Box<dyn Recurring>, String> {
    match layout {
        Layout::Blocked16 => library::recurring::<W16>(m, seed),
        Layout::Blocked32 => library::recurring::<W32>(m, seed),
        Layout::Unblocked => Ok(Box::new(FlatRm::new(m, m / 2, seed))),
    }
}

/// Table 1's measured columns at `γ` over the runs: P(R_x), P(E_x|R_x),
/// and the error ratios of the primary alone (Minimum Selection) and of
/// Recurring Minimum.
fn point(layout: Layout, g: f64, scale: Scale) -> Result<[f64; 4], String> {
    let m = counters(g);
    let mut acc = [0.0; 4];
    let runs = scale.runs as f64;
    for seed in 0..scale.runs {
        let zipf = Zipf::new(0.5);
        let mut rng = Rng::new(0x7AB1 + seed);
        let mut rm = filter(layout, m, seed)?;
        let mut truth = vec![0u32; N];
        for _ in 0..scale.items {
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
        acc[0] += rec / n / runs;
        acc[1] += rec_err / rec.max(1.0) / runs;
        acc[2] += e_ms / n / runs;
        acc[3] += e_rm / n / runs;
    }
    Ok(acc)
}

/// Table 1 on `layouts`: one [`Line`] per load.
pub fn run(layouts: &[Layout], scale: Scale, bar: &ProgressBar) -> Result<Vec<Line>, String> {
    let mut lines = Vec::with_capacity(PAPER.len());
    for [g, e_b, p_r, p_e_given_r, gamma_s, e_b_s, e_rm, gain] in PAPER {
        let paper = Row {
            e_b,
            p_r,
            p_e_given_r,
            gamma_s,
            e_b_s,
            e_rm,
            gain,
        };
        let eb = bloom_error(K as u32, g);
        let ms_cells = (counters(g) / 2) as f64;
        let mut measured = Vec::with_capacity(layouts.len());
        for &layout in layouts {
            bar.set_message(format!("Table 1 γ={g} {}", layout.name()));
            let [pr, per, ms_err, rm_err] = point(layout, g, scale)?;
            let gs = N as f64 * (1.0 - pr) * K as f64 / ms_cells;
            let erm = recurring_minimum_error(pr, per, N as u64, K as u32, ms_cells);
            measured.push(Measured {
                layout: layout.name(),
                row: Row {
                    e_b: eb,
                    p_r: pr,
                    p_e_given_r: per,
                    gamma_s: gs,
                    e_b_s: bloom_error(K as u32, gs),
                    e_rm: erm,
                    gain: eb / erm,
                },
                e_ratio_ms: ms_err,
                e_ratio_rm: rm_err,
            });
            bar.inc(1);
        }
        lines.push(Line {
            gamma: g,
            paper,
            measured,
        });
    }
    Ok(lines)
}
