//! `Spectral` targets: insert and estimate, item by item and in batches,
//! with one block an item and with two (`spectral-two-*`).

use std::hint::black_box;

use streambloom::hash::{self, DefaultHasher, Layout};
use streambloom::spectral::{Blocked, MinimumSelection, Spectral, SpectralParams};
use streambloom::{Isa, W32};

use super::super::sampler::{Measured, Plan, BATCH, SEED};
use super::{on_pages, Memory, Pages, Target, K};

/// The Spectral Bloom filter targets, in both layouts.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "spectral-insert",
            about: "Spectral<MinimumSelection, Blocked<W32>>::insert_hash, k = 5",
            per_isa: true,
            run: |bytes, isa, pages, plan| insert(bytes, isa, pages, plan, Layout::OneBlock),
        },
        Target {
            name: "spectral-estimate",
            about: "Spectral<MinimumSelection, Blocked<W32>>::estimate_hash, k = 5, on a filter loaded \
                    to γ = nk/m = 0.7",
            per_isa: true,
            run: |bytes, isa, pages, plan| estimate(bytes, isa, pages, plan, Layout::OneBlock),
        },
        Target {
            name: "spectral-insert-batch",
            about: "spectral-insert through insert_batch_hash, 64 items a call, prefetching \
                    16 items ahead",
            per_isa: true,
            run: |bytes, isa, pages, plan| insert_batch(bytes, isa, pages, plan, Layout::OneBlock),
        },
        Target {
            name: "spectral-estimate-batch",
            about: "spectral-estimate through estimate_batch_hash, 64 items a call, \
                    prefetching 16 items ahead",
            per_isa: true,
            run: |bytes, isa, pages, plan| estimate_batch(bytes, isa, pages, plan, Layout::OneBlock),
        },
        Target {
            name: "spectral-two-insert",
            about: "spectral-insert with two blocks an item (Layout::TwoBlocks: 3 + 2 counters)",
            per_isa: true,
            run: |bytes, isa, pages, plan| insert(bytes, isa, pages, plan, Layout::TwoBlocks),
        },
        Target {
            name: "spectral-two-estimate",
            about: "spectral-estimate with two blocks an item",
            per_isa: true,
            run: |bytes, isa, pages, plan| estimate(bytes, isa, pages, plan, Layout::TwoBlocks),
        },
        Target {
            name: "spectral-two-insert-batch",
            about: "spectral-insert-batch with two blocks an item (both lines prefetched)",
            per_isa: true,
            run: |bytes, isa, pages, plan| insert_batch(bytes, isa, pages, plan, Layout::TwoBlocks),
        },
        Target {
            name: "spectral-two-estimate-batch",
            about: "spectral-estimate-batch with two blocks an item (both lines prefetched)",
            per_isa: true,
            run: |bytes, isa, pages, plan| estimate_batch(bytes, isa, pages, plan, Layout::TwoBlocks),
        },
    ]
}

/// The filter measured, its counters in `S`.
type Filter<S> = Spectral<MinimumSelection, Blocked<W32, S>, DefaultHasher>;

/// `insert_hash` item by item on an empty filter in `layout`.
fn insert(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
    layout: Layout,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let mut f = spectral(&mut mem, bytes, isa, layout)?;
        plan.measure(bytes, |h| f.insert_hash(h))
    })
}

/// `estimate_hash` item by item on a loaded filter in `layout`.
fn estimate(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
    layout: Layout,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let f = loaded(&mut mem, bytes, isa, layout)?;
        plan.measure(bytes, |h| f.estimate_hash(h))
    })
}

/// `insert_batch_hash` on an empty filter in `layout`.
fn insert_batch(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
    layout: Layout,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let mut f = spectral(&mut mem, bytes, isa, layout)?;
        plan.measure_batches(bytes, |batch| f.insert_batch_hash(batch))
    })
}

/// `estimate_batch_hash` on a loaded filter in `layout`.
fn estimate_batch(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
    layout: Layout,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let f = loaded(&mut mem, bytes, isa, layout)?;
        let mut counts = [0u32; BATCH];
        plan.measure_batches(bytes, |batch| {
            // Equal lengths: the call cannot fail.
            let _ = f.estimate_batch_hash(batch, &mut counts);
            black_box(&counts);
        })
    })
}

/// The Spectral filter measured: `bytes` of 32-bit counters, k = 5, from
/// `mem`.
fn spectral<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    layout: Layout,
) -> Result<Filter<M::Storage<'_>>, String> {
    let params = SpectralParams::new(bytes / 4, K).with_layout(layout);
    let storage = mem.zeroed(params.blocks::<W32>().map_err(|e| e.to_string())?)?;
    let mut f = Filter::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// [`spectral`] loaded to γ = nk/m = 0.7, the paper's operating point.
fn loaded<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    layout: Layout,
) -> Result<Filter<M::Storage<'_>>, String> {
    let mut f = spectral(mem, bytes, isa, layout)?;
    let items = (bytes / 4) as u64 * 7 / (10 * u64::from(K));
    (0..items).for_each(|i| f.insert_hash(hash::mix64(i)));
    Ok(f)
}
