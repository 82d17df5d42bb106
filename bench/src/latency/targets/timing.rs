//! `TimingBloom` targets: the paper's per-item step (§5.1.5), a query then
//! an insert of the same item, with the standard query and with the
//! inferential one (evidence, posterior, decision), so the two beside each
//! other are the price of inference.

use streambloom::analysis::timing::Distinct;
use streambloom::hash::{self, DefaultHasher};
use streambloom::timing::{Layout, TimingBloom, TimingParams};
use streambloom::{Isa, W8};

use super::super::sampler::SEED;
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
                    let (mut f, universe) = timing(&mut mem, bytes, isa)?;
                    plan.measure(bytes, |h| {
                        let x = h % universe;
                        let found = f.contains_hash(x);
                        f.insert_hash(x);
                        found
                    })
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
                    let (mut f, universe) = timing(&mut mem, bytes, isa)?;
                    let prior = 1.0 / universe as f64;
                    plan.measure(bytes, |h| {
                        let x = h % universe;
                        // A prior in [0, 1] and positive penalties: never an error.
                        let answer = f.decide_hash(x, prior, 1.0, 1.0).unwrap_or(false);
                        f.insert_hash(x);
                        answer
                    })
                })
            },
        },
    ]
}

/// The filter measured, its timers in `S`.
type Filter<S> = TimingBloom<W8, S, DefaultHasher>;

/// `bytes` of 8-bit timers, k = [`K`], window `w = bytes/4` (32 bits of
/// timers an item in the window), block size and padding by
/// [`TimingParams::plan`], from `mem`; the universe of `2w` items the targets
/// draw.
fn timing<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
) -> Result<(Filter<M::Storage<'_>>, u64), String> {
    let window = (bytes / 4).max(1) as u64;
    let params = TimingParams::plan::<W8>(bytes, K, window, 8, Layout::OneBlock)
        .map_err(|e| e.to_string())?;
    let storage = mem.zeroed(params.blocks::<W8>().map_err(|e| e.to_string())?)?;
    let mut f = Filter::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    let universe = 2 * window;
    f.set_stream(Distinct::uniform(universe as f64).map_err(|e| e.to_string())?);
    Ok((f, universe))
}
