//! `Classic` targets: insert and contains, item by item and in batches,
//! with one block an item and with two (`classic-two-*`).

use std::hint::black_box;

use streambloom::classic::{Classic, ClassicParams};
use streambloom::{hash, Isa, Layout};

use super::super::sampler::{Measured, Plan, BATCH, SEED};
use super::{on_pages, Memory, Pages, Target, K};

/// The classic (one-bit, blocked) Bloom filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "classic-insert",
            about: "Classic::insert_hash (check-and-set), k = 5 bits of one block",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = classic(&mut mem, bytes, isa, Layout::OneBlock)?;
                    plan.measure(bytes, |h| f.insert_hash(h))
                })
            },
        },
        Target {
            name: "classic-two-insert",
            about: "classic-insert with two blocks an item (Layout::TwoBlocks: 3 bits in one \
                    block, 2 in another)",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = classic(&mut mem, bytes, isa, Layout::TwoBlocks)?;
                    plan.measure(bytes, |h| f.insert_hash(h))
                })
            },
        },
        Target {
            name: "classic-contains",
            about: "Classic::contains_hash, k = 5, on a filter loaded to half its bits set",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let f = loaded(&mut mem, bytes, isa, Layout::OneBlock)?;
                    plan.measure(bytes, |h| f.contains_hash(h))
                })
            },
        },
        Target {
            name: "classic-two-contains",
            about: "classic-contains with two blocks an item",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let f = loaded(&mut mem, bytes, isa, Layout::TwoBlocks)?;
                    plan.measure(bytes, |h| f.contains_hash(h))
                })
            },
        },
        Target {
            name: "classic-insert-batch",
            about: "classic-insert through insert_batch_hash, 64 items a call",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = classic(&mut mem, bytes, isa, Layout::OneBlock)?;
                    plan.measure_batches(bytes, |batch| f.insert_batch_hash(batch))
                })
            },
        },
        Target {
            name: "classic-two-insert-batch",
            about: "classic-two-insert through insert_batch_hash, both lines of an item \
                    prefetched",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = classic(&mut mem, bytes, isa, Layout::TwoBlocks)?;
                    plan.measure_batches(bytes, |batch| f.insert_batch_hash(batch))
                })
            },
        },
        Target {
            name: "classic-contains-batch",
            about: "classic-contains through contains_batch_hash, 64 items a call",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                contains_batches(bytes, isa, Layout::OneBlock, pages, plan)
            },
        },
        Target {
            name: "classic-two-contains-batch",
            about: "classic-two-contains through contains_batch_hash, both lines prefetched",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                contains_batches(bytes, isa, Layout::TwoBlocks, pages, plan)
            },
        },
    ]
}

/// Measures `contains_batch_hash` over batches of [`BATCH`] items on a
/// [`loaded`] filter.
fn contains_batches(
    bytes: usize,
    isa: Isa,
    layout: Layout,
    pages: Pages,
    plan: &Plan,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let f = loaded(&mut mem, bytes, isa, layout)?;
        let mut found = [false; BATCH];
        plan.measure_batches(bytes, |batch| {
            // Equal lengths: the call cannot fail.
            let _ = f.contains_batch_hash(batch, &mut found);
            black_box(&found);
        })
    })
}

/// The filter measured: `bytes` of bits, k = 5, in `layout`, its blocks
/// from `mem`.
fn classic<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    layout: Layout,
) -> Result<Classic<M::Storage<'_>>, String> {
    let params = ClassicParams::new(bytes * 8, K).with_layout(layout);
    let storage = mem.zeroed(params.blocks().map_err(|e| e.to_string())?)?;
    let mut f = Classic::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// [`classic`] with `m·ln 2 / k` items inserted: half the bits set, the
/// optimal load.
fn loaded<M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    layout: Layout,
) -> Result<Classic<M::Storage<'_>>, String> {
    let mut f = classic(mem, bytes, isa, layout)?;
    let items = (bytes as f64 * 8.0 * std::f64::consts::LN_2 / f64::from(K)) as u64;
    (0..items).for_each(|i| {
        f.insert_hash(hash::mix64(i));
    });
    Ok(f)
}
