//! Table 1 of the report: the Recurring Minimum error model at k = 5,
//! n = 1000, skew 0.5, the paper's row beside ours per layout and per
//! reading of RM's memory: Table 1's own (primary `m = nk/γ`, secondary
//! `m/2` on top) and §6.1's equal memory (primary `m − m/3`, secondary
//! `m/3`). Beside the model's gain `E_b/E_RM`, the measured one (Minimum
//! Selection's error ratio at `m` over RM's), and on the unblocked
//! reference why RM's remaining estimates are wrong ([`Causes`]): late
//! detection (§3.3.1) or the others.

use indicatif::ProgressBar;
use serde::Serialize;

use super::experiments::{seed, Filter, Layout, Reading, Spread};
use super::library::{self, bloom_error, recurring_minimum_error, Rng, W16, W32};
use super::reference::{Family, Flat, FlatMs, FlatRm, Hashing, Move};
use super::workload::{counters, Counts, Recurring, Scale, Zipf, K, N};

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

/// Our row for one layout and reading, with the error ratios measured
/// directly.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// The layout's name.
    pub layout: &'static str,
    /// The reading of Recurring Minimum's memory ([`Reading::name`]).
    pub reading: &'static str,
    /// The model's columns from our `P(R_x)` and `P(E_x | R_x)`, with
    /// `m_s` of the reading.
    #[serde(flatten)]
    pub row: Row,
    /// Measured error ratio of Minimum Selection at `m` counters.
    pub e_ratio_ms: Spread,
    /// Measured error ratio of Recurring Minimum.
    pub e_ratio_rm: Spread,
    /// The measured gain: `e_ratio_ms / e_ratio_rm` (means).
    pub measured_gain: f64,
    /// Why Recurring Minimum's estimates are wrong (the unblocked
    /// reference records moves; the library does not).
    pub causes: Option<Causes>,
}

/// The shares of Recurring Minimum's wrong estimates (over the items of the
/// stream) by cause, over all runs; they sum to 1.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Causes {
    /// A recurring minimum that is wrong (`P(E_x | R_x)`'s errors).
    pub recurring: f64,
    /// Late detection (§3.3.1): a single minimum, and the item's secondary
    /// value was already above its true count when it moved.
    pub late: f64,
    /// A single minimum, moved with its true count, wrong since (other
    /// items raised its secondary counters).
    pub after_move: f64,
    /// A single minimum that never moved (it became single through other
    /// items' insertions after its own last one).
    pub not_moved: f64,
}

/// Why one wrong estimate of Recurring Minimum is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// See [`Causes::recurring`].
    Recurring,
    /// See [`Causes::late`].
    Late,
    /// See [`Causes::after_move`].
    AfterMove,
    /// See [`Causes::not_moved`].
    NotMoved,
}

/// The cause of a wrong estimate of an item whose primary minimum is
/// `recurring` or not, and which made `moved` (its first move).
pub fn cause(recurring: bool, moved: Option<Move>) -> Cause {
    match moved {
        _ if recurring => Cause::Recurring,
        Some(m) if m.secondary > m.truth => Cause::Late,
        Some(_) => Cause::AfterMove,
        None => Cause::NotMoved,
    }
}

impl Causes {
    /// The shares of `causes`, or `None` if there are none.
    pub fn of(causes: &[Cause]) -> Option<Causes> {
        if causes.is_empty() {
            return None;
        }
        let n = causes.len() as f64;
        let share = |c: Cause| causes.iter().filter(|&&x| x == c).count() as f64 / n;
        Some(Causes {
            recurring: share(Cause::Recurring),
            late: share(Cause::Late),
            after_move: share(Cause::AfterMove),
            not_moved: share(Cause::NotMoved),
        })
    }
}

/// One load of Table 1: the paper's row and ours.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// Load `γ` of the primary.
    pub gamma: f64,
    /// The paper's row.
    pub paper: Row,
    /// Ours, per layout, per reading.
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

/// Minimum Selection and Recurring Minimum, side by side on one stream.
type Pair = (Box<dyn Counts>, Box<dyn Recurring>);

/// Minimum Selection at `m` and Recurring Minimum under `reading`, on
/// `layout` (the unblocked Recurring Minimum traced).
fn filters(layout: Layout, m: usize, reading: Reading, seed: u64) -> Result<Pair, String> {
    let ms = Filter::Ms;
    Ok(match layout {
        Layout::Blocked16 => (
            library::counts::<W16>(ms, m, seed)?,
            library::recurring::<W16>(m, reading, seed)?,
        ),
        Layout::Blocked32 => (
            library::counts::<W32>(ms, m, seed)?,
            library::recurring::<W32>(m, reading, seed)?,
        ),
        Layout::Unblocked | Layout::UnblockedPaper => {
            let family = layout.family().unwrap_or(Family::Mixed);
            let (p, s) = reading.split(m);
            (
                Box::new(FlatMs(Flat::new(m, Hashing::new(family, seed)))),
                Box::new(FlatRm::new(p, s, 0, family, seed).traced()),
            )
        }
    })
}

/// Table 1's measured columns at `γ` under `reading`, over the runs.
struct Columns {
    p_r: f64,
    p_e_given_r: f64,
    e_ratio_ms: Spread,
    e_ratio_rm: Spread,
    causes: Option<Causes>,
}

fn point(
    layout: Layout,
    load: usize,
    g: f64,
    reading: Reading,
    scale: Scale,
) -> Result<Columns, String> {
    let m = counters(g);
    let (mut pr, mut per, mut ms_runs, mut rm_runs, mut why) = (0.0, 0.0, vec![], vec![], vec![]);
    let runs = scale.runs as f64;
    let zipf = Zipf::new(0.5);
    for run in 0..scale.runs {
        let s = seed(4, load, run);
        let mut rng = Rng::new(s);
        let (mut ms, mut rm) = filters(layout, m, reading, streambloom::hash::mix64(s ^ 0x4A54))?;
        let mut truth = vec![0u32; N];
        for _ in 0..scale.items {
            let v = zipf.sample(&mut rng);
            truth[v as usize] += 1;
            ms.insert(v);
            rm.insert(v);
        }
        let (mut n, mut rec, mut rec_err, mut e_ms, mut e_rm) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let traced = layout.family().is_some();
        for (v, &f) in truth.iter().enumerate().filter(|(_, &f)| f > 0) {
            let v = v as u64;
            let (min, count) = rm.primary_minimum(v);
            n += 1.0;
            if count >= 2 {
                rec += 1.0;
                rec_err += f64::from(u8::from(min != f));
            }
            e_ms += f64::from(u8::from(ms.estimate(v) != f));
            if rm.estimate(v) != f {
                e_rm += 1.0;
                if traced {
                    why.push(cause(count >= 2, rm.first_move(v)));
                }
            }
        }
        pr += rec / n / runs;
        per += rec_err / rec.max(1.0) / runs;
        ms_runs.push(e_ms / n);
        rm_runs.push(e_rm / n);
    }
    Ok(Columns {
        p_r: pr,
        p_e_given_r: per,
        e_ratio_ms: Spread::of(ms_runs),
        e_ratio_rm: Spread::of(rm_runs),
        causes: Causes::of(&why),
    })
}

/// Table 1 on `layouts` under both readings: one [`Line`] per load.
pub fn run(layouts: &[Layout], scale: Scale, bar: &ProgressBar) -> Result<Vec<Line>, String> {
    let mut lines = Vec::with_capacity(PAPER.len());
    for (load, [g, e_b, p_r, p_e_given_r, gamma_s, e_b_s, e_rm, gain]) in
        PAPER.into_iter().enumerate()
    {
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
        let mut measured = Vec::with_capacity(2 * layouts.len());
        for &layout in layouts {
            bar.set_message(format!("Table 1 γ={g} {}", layout.name()));
            for reading in Reading::BOTH {
                let c = point(layout, load, g, reading, scale)?;
                let ms_cells = reading.split(counters(g)).1 as f64;
                let gs = N as f64 * (1.0 - c.p_r) * K as f64 / ms_cells;
                let erm =
                    recurring_minimum_error(c.p_r, c.p_e_given_r, N as u64, K as u32, ms_cells);
                measured.push(Measured {
                    layout: layout.name(),
                    reading: reading.name(),
                    row: Row {
                        e_b: eb,
                        p_r: c.p_r,
                        p_e_given_r: c.p_e_given_r,
                        gamma_s: gs,
                        e_b_s: bloom_error(K as u32, gs),
                        e_rm: erm,
                        gain: eb / erm,
                    },
                    measured_gain: c.e_ratio_ms.mean / c.e_ratio_rm.mean,
                    e_ratio_ms: c.e_ratio_ms,
                    e_ratio_rm: c.e_ratio_rm,
                    causes: c.causes,
                });
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The classifier on hand-built cases: a recurring minimum is its own
    /// cause whatever the move; a single minimum is late detection exactly
    /// when the secondary value was above the true count at the move.
    #[test]
    fn late_detection_classifier() {
        let late = Move {
            truth: 1,
            secondary: 2,
        };
        let on_time = Move {
            truth: 3,
            secondary: 3,
        };
        assert_eq!(cause(true, Some(late)), Cause::Recurring);
        assert_eq!(cause(true, None), Cause::Recurring);
        assert_eq!(cause(false, Some(late)), Cause::Late);
        assert_eq!(cause(false, Some(on_time)), Cause::AfterMove);
        assert_eq!(cause(false, None), Cause::NotMoved);
        let c = Causes::of(&[Cause::Late, Cause::Late, Cause::Late, Cause::Recurring]).unwrap();
        assert_eq!(
            c,
            Causes {
                recurring: 0.25,
                late: 0.75,
                after_move: 0.0,
                not_moved: 0.0
            }
        );
        assert_eq!(Causes::of(&[]), None);
    }

    /// The traced reference finds late detection among RM's causes at
    /// Table 1's γ = 0.7 (one quick run of the real setting); the library,
    /// which records no moves, gives no causes.
    #[test]
    #[cfg_attr(miri, ignore = "a stream of 10 000 items")]
    fn causes_cover_every_wrong_estimate() {
        let scale = Scale {
            items: 10_000,
            runs: 1,
        };
        let c = point(Layout::Unblocked, 2, 0.7, Reading::Extra, scale).unwrap();
        let k = c.causes.unwrap();
        assert!(k.late > 0.0, "{k:?}");
        assert!(point(Layout::Blocked16, 2, 0.7, Reading::Extra, scale)
            .unwrap()
            .causes
            .is_none());
    }
}
