//! `TimingBloom` targets: the paper's per-item step (§5.1.5), a query then
//! an insert of the same item, with the standard query and with the
//! inferential one (evidence, posterior, decision), so the two beside each
//! other are the price of inference.

use streambloom::analysis::timing::Distinct;
use streambloom::timing::{TimingBloom, TimingLayout, TimingParams};
use streambloom::{Isa, W8};

use super::super::sampler::{Plan, SEED};
use super::{Target, K};
use crate::stats::Summary;

/// The Timing filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "timing-standard",
            about: "TimingBloom::<W8> contains_hash then insert_hash of the same item: \
                    k = 5, 8-bit timers, w = cells/4, B and padding planned; items from \
                    a universe of 2w",
            per_isa: true,
            run: |bytes, isa, plan| {
                standard(timing(bytes, isa, TimingLayout::OneBlock)?, bytes, plan)
            },
        },
        Target {
            name: "timing-inferential",
            about: "timing-standard with decide_hash (evidence, posterior under a \
                    uniform stream of 2w items, least-penalty answer) as the query",
            per_isa: true,
            run: |bytes, isa, plan| {
                inferential(timing(bytes, isa, TimingLayout::OneBlock)?, bytes, plan)
            },
        },
        Target {
            name: "timing-unblocked-standard",
            about: "timing-standard with the paper's layout: k independent cells \
                    (up to k lines an item)",
            per_isa: true,
            run: |bytes, isa, plan| {
                standard(timing(bytes, isa, TimingLayout::Unblocked)?, bytes, plan)
            },
        },
        Target {
            name: "timing-unblocked-inferential",
            about: "timing-inferential with the paper's layout: k independent cells",
            per_isa: true,
            run: |bytes, isa, plan| {
                inferential(timing(bytes, isa, TimingLayout::Unblocked)?, bytes, plan)
            },
        },
    ]
}

/// The standard step: `contains_hash`, then `insert_hash` of the item.
fn standard(
    (mut f, universe): (TimingBloom<W8>, u64),
    bytes: usize,
    plan: &Plan,
) -> Result<Summary, String> {
    plan.measure(bytes, |h| {
        let x = h % universe;
        let found = f.contains_hash(x);
        f.insert_hash(x);
        found
    })
}

/// The inferential step: `decide_hash` under the uniform prior, then
/// `insert_hash` of the item.
fn inferential(
    (mut f, universe): (TimingBloom<W8>, u64),
    bytes: usize,
    plan: &Plan,
) -> Result<Summary, String> {
    let prior = 1.0 / universe as f64;
    plan.measure(bytes, |h| {
        let x = h % universe;
        // A prior in [0, 1] and positive penalties: never an error.
        let answer = f.decide_hash(x, prior, 1.0, 1.0).unwrap_or(false);
        f.insert_hash(x);
        answer
    })
}

/// `bytes` of 8-bit timers in `layout`, k = [`K`], window `w = bytes/4` (32 bits of
/// timers an item in the window), block size and padding by
/// [`TimingParams::plan`]; the universe of `2w` items the targets draw.
fn timing(bytes: usize, isa: Isa, layout: TimingLayout) -> Result<(TimingBloom<W8>, u64), String> {
    let window = (bytes / 4).max(1) as u64;
    let params =
        TimingParams::plan::<W8>(bytes, K, window, 8, layout).map_err(|e| e.to_string())?;
    let mut f = TimingBloom::<W8>::new(params, SEED).map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    let universe = 2 * window;
    f.set_stream(Distinct::uniform(universe as f64).map_err(|e| e.to_string())?);
    Ok((f, universe))
}
