//! The paper's findings, checked on each layout's results, and the verdict:
//! which differences from the paper blocked hashing explains.

use serde::Serialize;

use super::experiments::{Layout, Trial};
use super::library::bloom_error;
use super::workload::{Score, K};

/// One layout's results, for the findings.
pub struct Results<'a> {
    /// The layout.
    pub layout: Layout,
    /// Fig. 6: over γ at skew 0.5.
    pub gamma: &'a [Trial],
    /// The index in `gamma` of γ = 0.7.
    pub gamma_07: usize,
    /// Fig. 8 solid: over skews, insertions only.
    pub ins: &'a [Trial],
    /// Fig. 8 dotted: over skews, with deletions.
    pub del: &'a [Trial],
    /// Fig. 9: over skews, sliding window.
    pub win: &'a [Trial],
    /// Table 1 at γ = 0.7: P(E_x|R_x), E_b/E_RM, measured MS/RM error ratio.
    pub table1: (f64, f64, f64),
}

/// The paper's findings measured on one layout.
#[derive(Clone, Debug, Serialize)]
pub struct Findings {
    /// The layout's name.
    pub layout: &'static str,
    /// MS's error ratio at γ = 0.7, skew 0.5 (§6.1: it is `E_b`).
    pub ms_e_ratio_07: f64,
    /// `E_b` at γ = 0.7.
    pub e_b_07: f64,
    /// MS/MI error ratio, means over skews (§3.4: ~5).
    pub ms_mi_over_skews: f64,
    /// MS/MI error ratio at γ = 0.7, skew 0.5.
    pub ms_mi_07: f64,
    /// Skews at which MI has the lowest error ratio (§6.1: all).
    pub mi_best_skews: usize,
    /// Skews at which RM beats MS in error ratio and `E_add` (§3.4, §6.1).
    pub rm_better_skews: usize,
    /// Skews in each experiment.
    pub skews: usize,
    /// RM/MI error ratio, means over γ (Fig. 6b: about 1).
    pub rm_mi_over_gamma: f64,
    /// Skews at which MI has the largest `E_add` with deletions.
    pub mi_worst_deletes: usize,
    /// With deletions, the share of MI's errors that are false negatives
    /// (paper: almost all).
    pub mi_fn_share: f64,
    /// With deletions, MS's false-negative rate (paper: none).
    pub ms_fn_rate: f64,
    /// With deletions, RM's false-negative rate (paper: none).
    pub rm_fn_rate: f64,
    /// Sliding window: MI `E_add` / RM `E_add` (paper: 10 to 100).
    pub window_mi_rm: f64,
    /// Sliding window: skews at which RM beats MS in `E_add`.
    pub window_rm_better_skews: usize,
    /// Table 1 at γ = 0.7: P(E_x|R_x) (paper: 0.002).
    pub table1_p_e_given_r: f64,
    /// Table 1 at γ = 0.7: E_b/E_RM (paper: 18.5).
    pub table1_gain: f64,
    /// Table 1 at γ = 0.7: measured MS/RM error ratio.
    pub table1_measured_gain: f64,
    /// The findings as pass/fail checks, for the verdict.
    pub checks: Vec<Check>,
}

/// One of the paper's findings measured on one layout, and whether it holds.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The finding, and the test applied.
    pub what: &'static str,
    /// The paper's figure.
    pub paper: &'static str,
    /// Ours.
    pub value: String,
    /// Whether the paper's finding holds here.
    pub holds: bool,
}

fn mean(v: &[Trial], p: usize, f: fn(&Score) -> f64) -> f64 {
    v.iter().map(|t| f(&t.s[p])).sum::<f64>() / v.len() as f64
}

/// The findings checked on one layout's results.
pub fn findings(r: &Results<'_>) -> Findings {
    let ratio = |s: &Score| s.e_ratio;
    let add = |s: &Score| s.e_add;
    let fneg = |s: &Score| s.fn_rate;
    let (ins, del, win) = (r.ins, r.del, r.win);
    let skews = ins.len();
    let at = &r.gamma[r.gamma_07].s;
    let eb = bloom_error(K as u32, 0.7);
    let mi_gain = mean(ins, 0, ratio) / mean(ins, 1, ratio);
    let rm_better = ins
        .iter()
        .filter(|t| t.s[2].e_ratio < t.s[0].e_ratio && t.s[2].e_add <= t.s[0].e_add)
        .count();
    let fn_share = mean(del, 1, fneg) / mean(del, 1, ratio);
    let fn_other = mean(del, 0, fneg).max(mean(del, 2, fneg));
    let window = mean(win, 1, add) / mean(win, 2, add);
    let (per, gain, measured) = r.table1;
    let checks = vec![
        Check {
            what: "MS error ratio at γ = 0.7 (within 25 % of E_b)",
            paper: "E_b = 0.032",
            value: format!("{:.3}", at[0].e_ratio),
            holds: (at[0].e_ratio / eb - 1.0).abs() <= 0.25,
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
    ];
    Findings {
        layout: r.layout.name(),
        ms_e_ratio_07: at[0].e_ratio,
        e_b_07: eb,
        ms_mi_over_skews: mi_gain,
        ms_mi_07: at[0].e_ratio / at[1].e_ratio,
        mi_best_skews: ins
            .iter()
            .filter(|t| t.s[1].e_ratio <= t.s[0].e_ratio.min(t.s[2].e_ratio))
            .count(),
        rm_better_skews: rm_better,
        skews,
        rm_mi_over_gamma: mean(r.gamma, 2, ratio) / mean(r.gamma, 1, ratio),
        mi_worst_deletes: del
            .iter()
            .filter(|t| t.s[1].e_add >= t.s[0].e_add.max(t.s[2].e_add))
            .count(),
        mi_fn_share: fn_share,
        ms_fn_rate: mean(del, 0, fneg),
        rm_fn_rate: mean(del, 2, fneg),
        window_mi_rm: window,
        window_rm_better_skews: win.iter().filter(|t| t.s[2].e_add < t.s[0].e_add).count(),
        table1_p_e_given_r: per,
        table1_gain: gain,
        table1_measured_gain: measured,
        checks,
    }
}

/// Which of the paper's findings blocked hashing explains: the checks
/// compared between the unblocked reference and the blocked layout.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The blocked layout compared.
    pub blocked: &'static str,
    /// Findings that hold unblocked but not blocked.
    pub explained_by_blocking: Vec<&'static str>,
    /// Findings that hold on neither layout.
    pub not_explained: Vec<&'static str>,
    /// Findings that hold on both.
    pub hold_on_both: Vec<&'static str>,
}

/// The verdict, when both an unblocked and a blocked layout ran.
pub fn verdict(findings: &[Findings]) -> Option<Verdict> {
    let unblocked = Layout::Unblocked.name();
    let u = findings.iter().find(|f| f.layout == unblocked)?;
    let b = findings.iter().find(|f| f.layout != unblocked)?;
    let list = |keep: fn(bool, bool) -> bool| {
        u.checks
            .iter()
            .zip(&b.checks)
            .filter(|(cu, cb)| keep(cu.holds, cb.holds))
            .map(|(cu, _)| cu.what)
            .collect()
    };
    Some(Verdict {
        blocked: b.layout,
        explained_by_blocking: list(|u, b| u && !b),
        not_explained: list(|u, b| !u && !b),
        hold_on_both: list(|u, b| u && b),
    })
}
