//! `ImportanceBloom` targets: observe item by item with Imp-insert (IBF-MC,
//! random eviction) and with eviction by value (IBF-H), and IBF-MC through
//! the batch form, on the Stable targets' cells and `P`, so that
//! `importance-observe` beside `stable-observe` (and `importance-batch`
//! beside `stable-batch`) is the price of the importance map.

use std::hint::black_box;

use streambloom::hash::{self, DefaultHasher};
use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
use streambloom::stable::{Layout, StableParams};
use streambloom::{Isa, Storage, W8};

use super::super::sampler::{Measured, Plan, BATCH, SEED};
use super::{on_pages, Memory, Target, K};

/// The Importance-aware filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "importance-observe",
            about: "ImportanceBloom::<W8>::observe_hash, IBF-MC (Imp-insert, importance \
                    1..=50 cycling, linear map), random eviction: stable-observe's d = 3, \
                    K = 5 and P",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    observe(importance(&mut mem, bytes, isa, Eviction::Random)?, bytes, plan)
                })
            },
        },
        Target {
            name: "importance-batch",
            about: "importance-observe through observe_batch_hash, 64 items a call: the \
                    Stable batch loop on the items' levels, prefetching",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    observe_batches(importance(&mut mem, bytes, isa, Eviction::Random)?, bytes, plan)
                })
            },
        },
        Target {
            name: "importance-by-value",
            about: "importance-observe with IBF-H's eviction: P non-zero cells drawn \
                    with probability 1/value, by rejection",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    observe(importance(&mut mem, bytes, isa, Eviction::ByValue)?, bytes, plan)
                })
            },
        },
    ]
}

/// Measures `f.observe_hash` item by item, importance cycling over `1..=50`
/// (by a compare, not `% 50`: the harness's own cost, which the Stable
/// targets do not pay, kept to a couple of instructions).
fn observe<S: Storage>(mut f: Filter<S>, bytes: usize, plan: &Plan) -> Result<Measured, String> {
    let mut imp = 0;
    plan.measure(bytes, |h| {
        imp = if imp == 50 { 1 } else { imp + 1 };
        // Importance in the map's domain: never an error.
        f.observe_hash(h, imp).unwrap_or(false)
    })
}

/// Measures `f.observe_batch_hash` over batches of [`BATCH`] items,
/// importances cycling over `1..=50`.
fn observe_batches<S: Storage>(
    mut f: Filter<S>,
    bytes: usize,
    plan: &Plan,
) -> Result<Measured, String> {
    let importances: [u32; BATCH] = std::array::from_fn(|i| (i % 50) as u32 + 1);
    let mut out = [false; BATCH];
    plan.measure_batches(bytes, |batch| {
        // Equal lengths, importances in the map's domain: never an error.
        let _ = f.observe_batch_hash(batch, &importances[..batch.len()], &mut out[..batch.len()]);
        black_box(&out);
    })
}

/// The filter measured, its cells in `S`.
type Filter<S> = ImportanceBloom<W8, S, DefaultHasher>;

/// `bytes` of 8-bit cells, d = 3, K = 5, P as the Stable targets plan it
/// (at most 1 % false positives for the Stable filter, one block an item),
/// from `mem`.
fn importance<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    eviction: Eviction,
) -> Result<Filter<M::Storage<'_>>, String> {
    let stable = StableParams {
        cells: bytes,
        bits_per_cell: 3,
        k: K,
        p: 1,
        eviction: streambloom::Eviction::Random,
        layout: Layout::OneBlock,
    }
    .with_smallest_p::<W8>(0.01)
    .map_err(|e| e.to_string())?;
    let params = ImportanceParams {
        cells: stable.cells,
        bits_per_cell: stable.bits_per_cell,
        k: stable.k,
        p: stable.p,
        eviction,
        layout: Layout::OneBlock,
        insert: Insert::ByImportance,
        map: ImportanceMap::Linear { top: 50 },
    };
    let storage = mem.zeroed(params.stable().blocks::<W8>().map_err(|e| e.to_string())?)?;
    let mut f = Filter::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}
