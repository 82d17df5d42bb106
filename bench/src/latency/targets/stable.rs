//! `StableBloom` targets: observe item by item, in batches, and with sweep
//! eviction.

use std::hint::black_box;

use streambloom::stable::{Eviction, StableBloom, StableParams};
use streambloom::{Isa, W8};

use super::super::sampler::{BATCH, SEED};
use super::{Target, K};

/// The Stable Bloom filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "stable-observe",
            about: "StableBloom::<W8>::observe_hash: d = 3 (Max = 7), K = 5, P the smallest \
                    whose blocked false-positive rate (predicted_fpr) is at most 1 % \
                    (random-start eviction)",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Random)?;
                plan.measure(bytes, |h| f.observe_hash(h))
            },
        },
        Target {
            name: "stable-batch",
            about: "the same filter through observe_batch_hash, 64 items a call, prefetching \
                    16 items ahead",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Random)?;
                let mut out = [false; BATCH];
                plan.measure_batches(bytes, |batch| {
                    // Equal lengths: the call cannot fail.
                    let _ = f.observe_batch_hash(batch, &mut out);
                    black_box(&out);
                })
            },
        },
        Target {
            name: "stable-sweep",
            about: "the same filter with sweep eviction, item by item",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = stable(bytes, isa, Eviction::Sweep)?;
                plan.measure(bytes, |h| f.observe_hash(h))
            },
        },
    ]
}

/// The Stable Bloom filter measured: `bytes` of 8-bit cells, d = 3, K = 5,
/// P the smallest that delivers at most 1 % false positives (the blocked
/// model, [`StableParams::with_smallest_p`]).
fn stable(bytes: usize, isa: Isa, eviction: Eviction) -> Result<StableBloom<W8>, String> {
    let params = StableParams {
        cells: bytes,
        bits_per_cell: 3,
        k: K,
        p: 1,
        eviction,
    }
    .with_smallest_p::<W8>(0.01)
    .map_err(|e| e.to_string())?;
    let mut f = StableBloom::<W8>::new(params, SEED).map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}
