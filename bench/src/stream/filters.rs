//! The filters `dedup` runs, each planned by the library for `--memory`
//! and `--fpr`, behind one interface: observe a line, say what the
//! planner picked, and give the library's predictions of the false
//! positives.
//!
//! Two predictions each, where the library has them:
//!
//! - [`Dedup::predicted_fpr`], the planned rate: the steady-state rate on
//!   distinct keys that the planner planned by (stable, importance), the
//!   settled rate of the reservoir analysis, the blocked rate at the
//!   stream's distinct count (classic), or the timers' collision rate at a
//!   window of distinct lines (timing). Streams with repeats meet less.
//! - [`Dedup::state_fpr`], the chance that a key not seen looks seen *in
//!   the filter's state now*: `current_fpr` of the stable and importance
//!   filters (exact for their probe), `q^k` at the reservoir's fill `q`
//!   (the analysis's form), the blocked rate at the distinct keys inserted
//!   so far (classic), and the collision rate at the window's distinct
//!   lines (timing; it needs the exact window). Summed over the stream's
//!   new lines, it is the number of false positives to expect from *this*
//!   stream, warm-up and repeats included.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use streambloom::analysis::timing::{touched, Placed};
use streambloom::classic::{Classic, ClassicParams};
use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::reservoir::{ReservoirBloom, ReservoirParams};
use streambloom::stable::{Eviction, StableBloom, StableParams};
use streambloom::timing::{TimingBloom, TimingParams};
use streambloom::{Layout, Width, W8};

/// The filters of `--filter`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// StableBloom (Deng & Rafiei): random, sweep or interleaved eviction
    Stable,
    /// ReservoirBloom (Dutta et al.): reservoir-sampled insertions
    Reservoir,
    /// ImportanceBloom (IBF-MC): cells raised to the line's importance
    Importance,
    /// TimingBloom: "among the last --window lines?"
    Timing,
    /// Classic Bloom filter: no eviction, fills up
    Classic,
}

impl Kind {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Stable => "stable",
            Kind::Reservoir => "reservoir",
            Kind::Importance => "importance",
            Kind::Timing => "timing",
            Kind::Classic => "classic",
        }
    }
}

/// The eviction of `--eviction` (stable and importance).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictionArg {
    /// P consecutive cells from a random start (the paper's)
    Random,
    /// P consecutive cells from a sweeping pointer: no false negative
    /// within a guaranteed gap
    Sweep,
    /// The random run in an order dealt over groups of 8 blocks: nearer
    /// the paper's rates with two blocks, about twice random's time
    Interleaved,
}

/// What a filter is asked for.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Bytes of memory.
    pub memory: usize,
    /// The target false-positive rate.
    pub fpr: f64,
    /// The seed.
    pub seed: u64,
    /// Stable and importance eviction.
    pub eviction: EvictionArg,
    /// The largest importance (importance filter).
    pub importance_max: u32,
    /// The window in lines (timing filter).
    pub window: u64,
}

/// What the planner picked: named values for the report, and a line for
/// the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Plan {
    /// The planner's choices and the quantities they imply, by name.
    pub params: BTreeMap<&'static str, Value>,
    /// The same in one line.
    pub summary: String,
    /// What [`Dedup::predicted_fpr`] is, in words.
    pub predicted: &'static str,
}

/// A filter judging lines new or seen.
pub trait Dedup {
    /// Whether `key` looks seen before (by the filter's semantics), then
    /// records it (with `importance`, which only the importance filter
    /// reads).
    fn observe(&mut self, key: &[u8], importance: u32) -> Result<bool, String>;
    /// What the planner picked.
    fn plan(&self) -> &Plan;
    /// The planned rate (module docs), from what the filter has seen.
    fn predicted_fpr(&self) -> Result<f64, String>;
    /// The chance that a key not seen looks seen now (module docs), given
    /// the exact window's distinct lines; `None` where the library has no
    /// model of the state (or, for timing, without the exact window).
    fn state_fpr(&self, window_distinct: Option<usize>) -> Option<f64>;
    /// For the timing filter: the lines a key now looks present for since
    /// its last occurrence, the window plus the clock's granularity
    /// (`w <= span < w + B`): a key last seen within that span but outside
    /// the window is a *stale* positive, certain, not a collision.
    fn live_span(&self) -> Option<u64> {
        None
    }
    /// For sweep eviction (stable): the largest gap between two
    /// occurrences of a key at which the second is never a false negative.
    fn guaranteed_gap(&self) -> Option<u64> {
        None
    }
}

/// The filter `kind` planned for `req`; an error when the planner cannot
/// meet it (a memory too small for the target, say).
pub fn build(kind: Kind, req: &Request) -> Result<Box<dyn Dedup>, String> {
    let err = |e: streambloom::Error| format!("{} filter: {e}", kind.name());
    Ok(match kind {
        Kind::Stable => Box::new(Stable::new(req).map_err(err)?),
        Kind::Reservoir => Box::new(Reservoir::new(req).map_err(err)?),
        Kind::Importance => Box::new(Importance::new(req).map_err(err)?),
        Kind::Timing => Box::new(Timing::new(req)?),
        Kind::Classic => Box::new(Plain::new(req)?),
    })
}

/// The layout as the plan line prints it.
fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::OneBlock => "one block",
        Layout::TwoBlocks => "two blocks",
    }
}

/// The Stable filter of 8-bit cells, planned by [`StableParams::plan`].
struct Stable {
    filter: StableBloom<W8>,
    plan: Plan,
}

impl Stable {
    fn new(req: &Request) -> Result<Stable, streambloom::Error> {
        let eviction = match req.eviction {
            EvictionArg::Random => Eviction::Random,
            EvictionArg::Sweep => Eviction::Sweep,
            EvictionArg::Interleaved => Eviction::Interleaved,
        };
        let params = StableParams::plan::<W8>(req.memory, req.fpr, eviction)?;
        let filter = StableBloom::<W8>::new(params, req.seed)?;
        let m = filter.cells() as u64;
        let max = u64::from(params.max());
        let lifetime = match eviction {
            Eviction::Random | Eviction::Interleaved => max as f64 * m as f64 / params.p as f64,
            Eviction::Sweep => (max as f64 - 0.5) * m as f64 / params.p as f64,
        };
        let mut p = BTreeMap::from([
            ("cells", json!(m)),
            ("bits_per_cell", json!(params.bits_per_cell)),
            ("k", json!(params.k)),
            ("p", json!(params.p)),
            ("eviction", json!(format!("{eviction:?}").to_lowercase())),
            ("layout", json!(layout_name(params.layout))),
            ("predicted_fpr", json!(filter.predicted_fpr())),
            ("paper_bound", json!(filter.paper_false_positive_bound())),
            ("cell_lifetime_lines", json!(lifetime.round())),
        ]);
        let mut summary = format!(
            "{m} cells of {} bits (W8), K = {}, P = {}, {eviction:?} eviction, {}; \
             predicted FPR {:.5} (paper's bound {:.5}); a set cell lives {:.0} lines",
            params.bits_per_cell,
            params.k,
            params.p,
            layout_name(params.layout),
            filter.predicted_fpr(),
            filter.paper_false_positive_bound(),
            lifetime
        );
        if let Some(g) = sweep_gap(&params, m) {
            p.insert("guaranteed_gap", json!(g));
            summary += &format!("; no false negative at gaps up to {g} lines");
        }
        let plan = Plan {
            params: p,
            summary,
            predicted: "steady-state FPR on distinct keys the planner planned by \
                        (StableBloom::predicted_fpr)",
        };
        Ok(Stable { filter, plan })
    }
}

/// For sweep eviction, the largest gap between two occurrences of a key
/// at which the second is never a false negative: `(g - 1)·P <= (Max -
/// 1)·m` (the stable module's docs).
fn sweep_gap(params: &StableParams, m: u64) -> Option<u64> {
    (params.eviction == Eviction::Sweep)
        .then(|| (u64::from(params.max()) - 1) * m / params.p as u64 + 1)
}

impl Dedup for Stable {
    fn observe(&mut self, key: &[u8], _: u32) -> Result<bool, String> {
        Ok(self.filter.observe(key))
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn predicted_fpr(&self) -> Result<f64, String> {
        Ok(self.filter.predicted_fpr())
    }
    fn state_fpr(&self, _: Option<usize>) -> Option<f64> {
        Some(self.filter.current_fpr())
    }
    fn guaranteed_gap(&self) -> Option<u64> {
        sweep_gap(self.filter.params(), self.filter.cells() as u64)
    }
}

/// The reservoir filter planned by [`ReservoirParams::plan_fpr`] (the
/// fewest sub-filters whose settled rate meets the target).
struct Reservoir {
    filter: ReservoirBloom,
    plan: Plan,
}

impl Reservoir {
    fn new(req: &Request) -> Result<Reservoir, streambloom::Error> {
        let bits = req.memory.saturating_mul(8);
        let params = ReservoirParams::plan_fpr(bits, req.fpr)?;
        let filter = ReservoirBloom::new(params, req.seed)?;
        let settled = params.long_run_fpr()?;
        let (s, forced) = (params.sub_filter_bits()?, params.forced_from()?);
        let summary = format!(
            "{} bits, k = {} sub-filters of {s} bits, p* = {}, {}; forced insertions from line {forced}; \
             settled FPR {settled:.5}",
            params.bits,
            params.k,
            params.p_star,
            layout_name(params.layout)
        );
        let plan = Plan {
            params: BTreeMap::from([
                ("bits", json!(params.bits)),
                ("k", json!(params.k)),
                ("sub_filter_bits", json!(s)),
                ("p_star", json!(params.p_star)),
                ("forced_from_line", json!(forced)),
                ("layout", json!(layout_name(params.layout))),
                ("settled_fpr", json!(settled)),
            ]),
            summary,
            predicted: "the analysis's mean FPR over the stream's positions, every line taken \
                        as new (ReservoirBloom::model().mean_fpr)",
        };
        Ok(Reservoir { filter, plan })
    }
}

impl Dedup for Reservoir {
    fn observe(&mut self, key: &[u8], _: u32) -> Result<bool, String> {
        Ok(self.filter.observe(key))
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn predicted_fpr(&self) -> Result<f64, String> {
        Ok(self.filter.model().mean_fpr(0, self.filter.position()))
    }
    fn state_fpr(&self, _: Option<usize>) -> Option<f64> {
        Some(self.filter.ones_fraction().powi(self.filter.k() as i32))
    }
}

/// The importance filter (IBF-MC: cells raised to the importance's level,
/// `⌈i·Max/Z⌉`), planned by [`ImportanceParams::plan`] for importances
/// uniform on `1..=Z`; its prediction is recomputed for the importances
/// the stream had.
struct Importance {
    filter: ImportanceBloom<W8>,
    plan: Plan,
    /// Lines seen by importance (index = importance).
    seen: Vec<u64>,
}

impl Importance {
    fn new(req: &Request) -> Result<Importance, streambloom::Error> {
        let eviction = match req.eviction {
            EvictionArg::Random => streambloom::importance::Eviction::Random,
            EvictionArg::Sweep => streambloom::importance::Eviction::Sweep,
            EvictionArg::Interleaved => streambloom::importance::Eviction::Interleaved,
        };
        let top = req.importance_max;
        let mut uniform = vec![1.0; top as usize + 1];
        uniform[0] = 0.0;
        let map = ImportanceMap::Linear { top };
        let params = ImportanceParams::plan::<W8>(
            req.memory,
            req.fpr,
            eviction,
            Insert::ByImportance,
            map,
            &uniform,
        )?;
        let planned = params.predicted_fpr::<W8>(&uniform)?;
        let filter = ImportanceBloom::<W8>::new(params, req.seed)?;
        let summary = format!(
            "{} cells of {} bits (W8), K = {}, P = {}, {eviction:?} eviction, {}, \
             level ⌈i·{}/{top}⌉ for importance i in 1..={top}; predicted FPR {planned:.5} \
             for importances uniform on 1..={top}",
            filter.cells(),
            params.bits_per_cell,
            params.k,
            params.p,
            layout_name(params.layout),
            params.stable().max(),
        );
        let plan = Plan {
            params: BTreeMap::from([
                ("cells", json!(filter.cells())),
                ("bits_per_cell", json!(params.bits_per_cell)),
                ("k", json!(params.k)),
                ("p", json!(params.p)),
                ("eviction", json!(format!("{eviction:?}").to_lowercase())),
                ("layout", json!(layout_name(params.layout))),
                ("importance_max", json!(top)),
                ("planned_fpr_uniform", json!(planned)),
            ]),
            summary,
            predicted: "steady-state FPR on distinct keys for the importances the stream had \
                        (ImportanceParams::predicted_fpr)",
        };
        Ok(Importance {
            filter,
            plan,
            seen: vec![0; top as usize + 1],
        })
    }
}

impl Dedup for Importance {
    fn observe(&mut self, key: &[u8], importance: u32) -> Result<bool, String> {
        let seen = self
            .filter
            .observe(key, importance)
            .map_err(|e| e.to_string())?;
        // `observe` accepted it: 1..=top, an index of `seen`.
        self.seen[importance as usize] += 1;
        Ok(seen)
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn predicted_fpr(&self) -> Result<f64, String> {
        let weights: Vec<f64> = self.seen.iter().map(|&n| n as f64).collect();
        if weights.iter().all(|&w| w == 0.0) {
            return Ok(0.0);
        }
        self.filter
            .params()
            .predicted_fpr::<W8>(&weights)
            .map_err(|e| e.to_string())
    }
    fn state_fpr(&self, _: Option<usize>) -> Option<f64> {
        Some(self.filter.current_fpr())
    }
}

/// The timing filter: 8-bit timers in two blocks, the block size `B` by
/// [`TimingParams::plan`], and the `k` whose collision rate at a window of
/// distinct lines is least (the timing planner takes `k` as given).
struct Timing {
    filter: TimingBloom<W8>,
    plan: Plan,
    /// Lines inserted.
    inserted: u64,
}

/// The timing filter's collision rate: the chance that the `k` timers of
/// a key not in the window were all set by `distinct` other keys
/// ([`touched`], the posterior's model of the layout).
fn timing_collisions(params: &TimingParams, blocks: usize, distinct: f64) -> f64 {
    let layout = match params.layout {
        streambloom::timing::TimingLayout::TwoBlocks => Layout::TwoBlocks,
        _ => Layout::OneBlock,
    };
    let (s1, s2) = layout.halves(params.k);
    let placed = Placed::Blocked {
        layout,
        blocks,
        block_cells: W8::CELLS,
    };
    touched(placed, params.k, s1, s2, distinct)
}

/// The mean live span over the clock's offsets: `w + (B - 1)/2`.
fn mean_span(params: &TimingParams) -> f64 {
    params.window as f64 + (params.block as f64 - 1.0) / 2.0
}

impl Timing {
    fn new(req: &Request) -> Result<Timing, String> {
        let err = |e: streambloom::Error| format!("timing filter: {e}");
        let mut best: Option<(f64, TimingParams)> = None;
        for k in 1..=32 {
            let params = TimingParams::plan::<W8>(req.memory, k, req.window, 8, Layout::TwoBlocks)
                .map_err(err)?;
            let blocks = params.blocks::<W8>().map_err(err)?;
            let rate = timing_collisions(&params, blocks, mean_span(&params));
            if best.is_none_or(|(b, _)| rate < b) {
                best = Some((rate, params));
            }
        }
        let Some((rate, params)) = best.filter(|&(rate, _)| rate <= req.fpr) else {
            let least = best.map_or(1.0, |b| b.0);
            return Err(format!(
                "timing filter: {} of 8-bit timers cannot hold a window of {} lines at a false-positive \
                 rate of {}: the best k gives {least:.5} (more --memory, a shorter --window or a higher --fpr)",
                crate::size::size_name(req.memory),
                req.window,
                req.fpr
            ));
        };
        let filter = TimingBloom::<W8>::new(params, req.seed).map_err(err)?;
        let summary = format!(
            "{} timers of 8 bits, k = {}, two blocks, window {} lines, clock tick every B = {} lines, \
             padding {}, T_Ω = {}; collision FPR {rate:.5} at a window of distinct lines",
            filter.cells(),
            params.k,
            params.window,
            params.block,
            params.padding,
            params.t_omega
        );
        let plan = Plan {
            params: BTreeMap::from([
                ("timers", json!(filter.cells())),
                ("k", json!(params.k)),
                ("window", json!(params.window)),
                ("block", json!(params.block)),
                ("padding", json!(params.padding)),
                ("t_omega", json!(params.t_omega)),
                ("layout", json!("two blocks")),
                ("collision_fpr_distinct", json!(rate)),
            ]),
            summary,
            predicted: "the chance that a key's timers were all set by the w + (B-1)/2 lines \
                        of the mean live span, every line distinct (analysis::timing::touched)",
        };
        Ok(Timing {
            filter,
            plan,
            inserted: 0,
        })
    }

    fn blocks(&self) -> usize {
        self.filter.blocks().len()
    }
}

impl Dedup for Timing {
    fn observe(&mut self, key: &[u8], _: u32) -> Result<bool, String> {
        let h = self.filter.hash(key);
        let seen = self.filter.contains_hash(h);
        self.filter.insert_hash(h);
        self.inserted += 1;
        Ok(seen)
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn predicted_fpr(&self) -> Result<f64, String> {
        let p = self.filter.params();
        Ok(timing_collisions(p, self.blocks(), mean_span(p)))
    }
    fn state_fpr(&self, window_distinct: Option<usize>) -> Option<f64> {
        // The keys whose timers are live: the window's distinct ones, and
        // the lines past the window the clock still counts (taken as
        // distinct), as many as were inserted.
        let p = self.filter.params();
        let extra = self.live_span()?.saturating_sub(p.window);
        let distinct = (window_distinct? as u64 + extra).min(self.inserted);
        Some(timing_collisions(p, self.blocks(), distinct as f64))
    }
    fn live_span(&self) -> Option<u64> {
        // Ages below ⌈(w - b)/B⌉ + 1 are live (TimingBloom's threshold):
        // the b lines of the current tick and ⌈(w - b)/B⌉ whole ticks.
        let p = self.filter.params();
        let b = self.filter.clock().offset;
        Some(b + p.block * p.window.saturating_sub(b).div_ceil(p.block))
    }
}

/// The classic filter: the `k` that holds the most distinct lines at the
/// target rate in the memory ([`ClassicParams::predicted_fpr`], one block
/// an item as [`ClassicParams::plan`] lays it out); it never forgets, so
/// its rate grows with the distinct lines past that capacity.
struct Plain {
    filter: Classic,
    plan: Plan,
    /// Lines judged new, each a distinct key inserted.
    inserted: u64,
}

/// The most distinct keys `params` holds at `target`, by bisection (the
/// rate grows with the keys); 0 when even one key misses it.
fn capacity(params: &ClassicParams, target: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, params.cells as u64);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if params.predicted_fpr(mid) <= target {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

impl Plain {
    fn new(req: &Request) -> Result<Plain, String> {
        if !(req.fpr > 0.0 && req.fpr < 1.0) {
            return Err(format!(
                "classic filter: parameter `target_fpr` is {}: must be in (0, 1)",
                req.fpr
            ));
        }
        let bits = req.memory.saturating_mul(8);
        let (n, params) = (1..=32)
            .map(|k| {
                let p = ClassicParams::new(bits, k);
                (capacity(&p, req.fpr), p)
            })
            .fold((0, ClassicParams::new(bits, 1)), |best, c| {
                if c.0 > best.0 {
                    c
                } else {
                    best
                }
            });
        if n == 0 {
            return Err(format!(
                "classic filter: {} holds no key at a false-positive rate of {}",
                crate::size::size_name(req.memory),
                req.fpr
            ));
        }
        let filter = Classic::new(params, req.seed).map_err(|e| format!("classic filter: {e}"))?;
        let summary = format!(
            "{bits} bits, k = {}, {}; holds {n} distinct lines at FPR {} (never forgets: more \
             lines, more false positives)",
            params.k,
            layout_name(params.layout),
            req.fpr
        );
        let plan = Plan {
            params: BTreeMap::from([
                ("bits", json!(bits)),
                ("k", json!(params.k)),
                ("layout", json!(layout_name(params.layout))),
                ("capacity", json!(n)),
            ]),
            summary,
            predicted: "the blocked FPR after the distinct lines inserted \
                        (ClassicParams::predicted_fpr)",
        };
        Ok(Plain {
            filter,
            plan,
            inserted: 0,
        })
    }
}

impl Dedup for Plain {
    fn observe(&mut self, key: &[u8], _: u32) -> Result<bool, String> {
        let seen = self.filter.insert(key);
        self.inserted += u64::from(!seen);
        Ok(seen)
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn predicted_fpr(&self) -> Result<f64, String> {
        Ok(self.filter.predicted_fpr(self.inserted))
    }
    fn state_fpr(&self, _: Option<usize>) -> Option<f64> {
        Some(self.filter.predicted_fpr(self.inserted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(memory: usize, fpr: f64) -> Request {
        Request {
            memory,
            fpr,
            seed: 1,
            eviction: EvictionArg::Sweep,
            importance_max: 10,
            window: 1000,
        }
    }

    /// Every filter plans at a modest size and says what it picked.
    #[test]
    fn every_filter_plans() {
        for kind in [
            Kind::Stable,
            Kind::Reservoir,
            Kind::Importance,
            Kind::Timing,
            Kind::Classic,
        ] {
            let f = build(kind, &req(64 << 10, 0.01)).unwrap();
            assert!(!f.plan().summary.is_empty() && !f.plan().params.is_empty());
            let p = f.predicted_fpr().unwrap();
            assert!((0.0..=0.01).contains(&p), "{kind:?} {p}");
        }
        let stable = build(Kind::Stable, &req(64 << 10, 0.01)).unwrap();
        assert!(stable.guaranteed_gap().unwrap() > 1000);
        assert!(stable.plan().summary.contains("no false negative"));
    }

    /// Too little memory for the target is an error naming the filter, not
    /// a panic.
    #[test]
    fn too_small_is_an_error() {
        for kind in [Kind::Reservoir, Kind::Timing, Kind::Classic] {
            let e = build(kind, &req(64, 1e-300)).err().unwrap();
            assert!(e.contains(kind.name()), "{kind:?}: {e}");
        }
        let e = build(Kind::Timing, &req(64, 0.01)).err().unwrap();
        assert!(e.contains("window of 1000 lines"), "{e}");
    }

    /// The classic capacity is the last count meeting the target.
    #[test]
    fn classic_capacity_is_tight() {
        let p = ClassicParams::new(1 << 16, 7);
        let n = capacity(&p, 0.01);
        assert!(p.predicted_fpr(n) <= 0.01 && p.predicted_fpr(n + 1) > 0.01);
    }

    /// The timing filter's live span lies in `w..w + B`.
    #[test]
    fn timing_span() {
        let mut f = Timing::new(&req(16 << 10, 0.05)).unwrap();
        let (w, b) = (f.filter.params().window, f.filter.params().block);
        for i in 0..3 * w {
            let span = f.live_span().unwrap();
            assert!(span >= w && span < w + b, "{span} {w} {b}");
            f.observe(&i.to_le_bytes(), 0).unwrap();
        }
    }
}
