//! `ReservoirBloom` targets: observe item by item, the paper's planning
//! (k = 3 at a threshold rate of 0.1, p* = 0.03), clears in the item's own
//! block and drawn uniformly (up to k more lines an insertion).
//!
//! The filter is measured where a long stream spends its life: past the
//! threshold (the forced phase: every item reported new is inserted, the
//! costliest case: probe, `k` PRNG draws, clear, set) and settled. Feeding
//! it `⌈s/p*⌉` items would take 6·10^9 at 64 MiB, so it is restored at
//! that position over bits drawn one with the settled probability
//! ([`forced_ones`]), and the sampler's warm-up does the rest.
//!
//! `reservoir-batch` is `reservoir-observe` through the batch form.
//!
//! Single-bit operations run no kernel (the filter's docs say why), so the
//! targets are measured once per size.

use std::hint::black_box;

use streambloom::analysis::reservoir::forced_ones;
use streambloom::hash::{self, DefaultHasher};
use streambloom::reservoir::{ReservoirBloom, ReservoirParams, Reset};
use streambloom::rng::Rng;
use streambloom::Storage;

use super::super::sampler::{Measured, Plan, BATCH, SEED};
use super::{on_pages, Memory, Target};

/// The Reservoir-sampling filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "reservoir-observe",
            about: "ReservoirBloom::observe_hash, k = 3 (the paper's plan at FPR_t = 0.1), \
                    p* = 0.03, in the forced phase; clears in the item's own block",
            per_isa: false,
            run: |bytes, _, pages, plan| on_pages!(pages, mem => observe(reservoir(&mut mem, bytes, Reset::OwnBlock)?, bytes, plan)),
        },
        Target {
            name: "reservoir-batch",
            about: "reservoir-observe through observe_batch_hash, 64 items a call, \
                    prefetching the items' blocks ahead",
            per_isa: false,
            run: |bytes, _, pages, plan| on_pages!(pages, mem => observe_batches(reservoir(&mut mem, bytes, Reset::OwnBlock)?, bytes, plan)),
        },
        Target {
            name: "reservoir-uniform",
            about: "reservoir-observe with the paper's uniform clears: a random block \
                    per sub-filter",
            per_isa: false,
            run: |bytes, _, pages, plan| on_pages!(pages, mem => observe(reservoir(&mut mem, bytes, Reset::Uniform)?, bytes, plan)),
        },
    ]
}

/// The filter measured, its bits in `S`.
type Filter<S> = ReservoirBloom<S, DefaultHasher>;

/// Measures `f.observe_hash` item by item.
fn observe<S: Storage>(mut f: Filter<S>, bytes: usize, plan: &Plan) -> Result<Measured, String> {
    plan.measure(bytes, |h| f.observe_hash(h))
}

/// Measures `f.observe_batch_hash` over batches of [`BATCH`] items.
fn observe_batches<S: Storage>(
    mut f: Filter<S>,
    bytes: usize,
    plan: &Plan,
) -> Result<Measured, String> {
    let mut out = [false; BATCH];
    plan.measure_batches(bytes, |batch| {
        // Equal lengths: never an error.
        let _ = f.observe_batch_hash(batch, &mut out[..batch.len()]);
        black_box(&out);
    })
}

/// `bytes` of memory planned the paper's way, in the forced phase, from
/// `mem`.
fn reservoir<M: Memory>(
    mem: &mut M,
    bytes: usize,
    reset: Reset,
) -> Result<Filter<M::Storage<'_>>, String> {
    let params = ReservoirParams::plan(bytes * 8, 0.1)
        .map_err(|e| e.to_string())?
        .with_reset(reset);
    let model = params.model().map_err(|e| e.to_string())?;
    let ones = forced_ones(model.clear_from as f64, model.k);
    let mut rng = Rng::new(SEED);
    let blocks = params.blocks().map_err(|e| e.to_string())?;
    let mut storage = mem.zeroed(blocks)?;
    for block in storage.as_mut() {
        for byte in &mut block.0 {
            for bit in 0..8 {
                *byte |= u8::from(rng.unit() < ones) << bit;
            }
        }
    }
    let hasher = hash::seeded_hasher(SEED);
    ReservoirBloom::restore(params, storage, hasher, model.forced_from).map_err(|e| e.to_string())
}
