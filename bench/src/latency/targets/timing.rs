//! `TimingBloom` targets: the paper's per-item step (§5.1.5), a query then
//! an insert of the same item, with the standard query and with the
//! inferential one (evidence, posterior, decision), so the two beside each
//! other are the price of inference.

use streambloom::analysis::timing::Distinct;
use streambloom::hash::{self, DefaultHasher};
use streambloom::store::Storage;
use streambloom::timing::{TimingBloom, TimingLayout, TimingParams};
use streambloom::{Isa, W8};

use super::super::sampler::{Measured, Plan, SEED};
use super::{on_pages, Memory, Target, K};

/// The Timing filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "timing-standard",
            about: "TimingBloom::<W8> contains_hash then insert_hash of the same item: \
                    k = 5, 8-bit timers, w = cells/4, B and padding planned; items from \
                    a universe of 2w",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    standard(timing(&mut mem, bytes, isa, TimingLayout::OneBlock)?, bytes, plan)
                })
            },
        },
        Target {
            name: "timing-inferential",
            about: "timing-standard with decide_hash (evidence, posterior under a \
                    uniform stream of 2w items, least-penalty answer) as the query",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    inferential(timing(&mut mem, bytes, isa, TimingLayout::OneBlock)?, bytes, plan)
                })
            },
        },
        Target {
            name: "timing-unblocked-standard",
            about: "timing-standard with the paper's layout: k independent cells \
                    (up to k lines an item)",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    standard(timing(&mut mem, bytes, isa, TimingLayout::Unblocked)?, bytes, plan)
                })
            },
        },
        Target {
            name: "timing-unblocked-inferential",
            about: "timing-inferential with the paper's layout: k independent cells",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    inferential(timing(&mut mem, bytes, isa, TimingLayout::Unblocked)?, bytes, plan)
                })
            },
        },
    ]
}

/// The filter measured, its timers in `S`.
type Filter<S> = TimingBloom<W8, S, DefaultHasher>;

/// The standard step: `contains_hash`, then `insert_hash` of the item.
fn standard<S: Storage>(
    (mut f, universe): (Filter<S>, u64),
    bytes: usize,
    plan: &Plan,
) -> Result<Measured, String> {
    plan.measure(bytes, |h| {
        let x = h % universe;
        let found = f.contains_hash(x);
        f.insert_hash(x);
        found
    })
}

/// The inferential step: `decide_hash` under the uniform prior, then
/// `insert_hash` of the item.
fn inferential<S: Storage>(
    (mut f, universe): (Filter<S>, u64),
    bytes: usize,
    plan: &Plan,
) -> Result<Measured, String> {
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
/// [`TimingParams::plan`], from `mem`; the universe of `2w` items the targets
/// draw.
fn timing<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    layout: TimingLayout,
) -> Result<(Filter<M::Storage<'_>>, u64), String> {
    let window = (bytes / 4).max(1) as u64;
    let params =
        TimingParams::plan::<W8>(bytes, K, window, 8, layout).map_err(|e| e.to_string())?;
    let storage = mem.zeroed(params.blocks::<W8>().map_err(|e| e.to_string())?)?;
    let mut f = Filter::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    let universe = 2 * window;
    f.set_stream(Distinct::uniform(universe as f64).map_err(|e| e.to_string())?);
    Ok((f, universe))
}
