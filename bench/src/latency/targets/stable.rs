//! `StableBloom` targets: observe item by item and in batches, with random
//! and sweep eviction, and contains; observe with two blocks an item
//! (`stable-two-*`); and observe and contains with 4- and 1-bit cells
//! (`stable-w4-*`, `stable-w1-*`), whose blocks hold 128 and 512 cells.

use std::hint::black_box;

use streambloom::hash::{self, DefaultHasher};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{Isa, Storage, Width, W1, W4, W8};

use super::super::sampler::{Measured, Plan, BATCH, SEED};
use super::{on_pages, Memory, Pages, Target, K};

/// The Stable Bloom filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "stable-observe",
            about: "StableBloom::<W8>::observe_hash: d = 3 (Max = 7), K = 5, P the smallest \
                    whose blocked false-positive rate (predicted_fpr) is at most 1 % \
                    (random-start eviction)",
            per_isa: true,
            run: observe_cells::<W8>,
        },
        Target {
            name: "stable-two-observe",
            about: "stable-observe with two blocks an item (Layout::TwoBlocks: 3 cells in \
                    one block, 2 in another), the same P",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = stable::<W8, _>(&mut mem, bytes, isa, Eviction::Random, Layout::TwoBlocks)?;
                    plan.measure(bytes, |h| f.observe_hash(h))
                })
            },
        },
        Target {
            name: "stable-batch",
            about: "the same filter through observe_batch_hash, 64 items a call, prefetching \
                    16 items ahead",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => observe_batches(
                    stable::<W8, _>(&mut mem, bytes, isa, Eviction::Random, Layout::OneBlock)?,
                    bytes,
                    plan,
                ))
            },
        },
        Target {
            name: "stable-two-batch",
            about: "stable-two-observe through observe_batch_hash, both lines of an item \
                    prefetched",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => observe_batches(
                    stable::<W8, _>(&mut mem, bytes, isa, Eviction::Random, Layout::TwoBlocks)?,
                    bytes,
                    plan,
                ))
            },
        },
        Target {
            name: "stable-interleaved-batch",
            about: "stable-batch with Eviction::Interleaved (the run dealt over groups of 8 \
                    blocks, about P/8 cells of each), the same P",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => observe_batches(
                    stable::<W8, _>(&mut mem, bytes, isa, Eviction::Interleaved, Layout::OneBlock)?,
                    bytes,
                    plan,
                ))
            },
        },
        Target {
            name: "stable-two-interleaved-observe",
            about: "stable-two-observe with Eviction::Interleaved, the same P",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = stable::<W8, _>(&mut mem, bytes, isa, Eviction::Interleaved, Layout::TwoBlocks)?;
                    plan.measure(bytes, |h| f.observe_hash(h))
                })
            },
        },
        Target {
            name: "stable-two-interleaved-batch",
            about: "stable-two-batch with Eviction::Interleaved, the same P",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => observe_batches(
                    stable::<W8, _>(&mut mem, bytes, isa, Eviction::Interleaved, Layout::TwoBlocks)?,
                    bytes,
                    plan,
                ))
            },
        },
        Target {
            name: "stable-sweep",
            about: "the same filter with sweep eviction, item by item",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = stable::<W8, _>(&mut mem, bytes, isa, Eviction::Sweep, Layout::OneBlock)?;
                    plan.measure(bytes, |h| f.observe_hash(h))
                })
            },
        },
        Target {
            name: "stable-sweep-batch",
            about: "stable-sweep through observe_batch_hash, 64 items a call: the sweep's \
                    decrements made in one pass",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => observe_batches(
                    stable::<W8, _>(&mut mem, bytes, isa, Eviction::Sweep, Layout::OneBlock)?,
                    bytes,
                    plan,
                ))
            },
        },
        Target {
            name: "stable-contains",
            about: "StableBloom::contains_hash on the random-eviction filter in its steady \
                    state ((Max + 1)·m/P items observed first)",
            per_isa: true,
            run: contains_cells::<W8>,
        },
        Target {
            name: "stable-w4-observe",
            about: "stable-observe with 4-bit cells (W4, d = 4, 128 cells a block), P the \
                    smallest for 1 %",
            per_isa: true,
            run: observe_cells::<W4>,
        },
        Target {
            name: "stable-w4-contains",
            about: "stable-contains with 4-bit cells, in the steady state",
            per_isa: true,
            run: contains_cells::<W4>,
        },
        Target {
            name: "stable-w1-observe",
            about: "stable-observe with 1-bit cells (W1, d = 1, 512 cells a block), P the \
                    smallest for 1 %",
            per_isa: true,
            run: observe_cells::<W1>,
        },
        Target {
            name: "stable-w1-contains",
            about: "stable-contains with 1-bit cells, in the steady state",
            per_isa: true,
            run: contains_cells::<W1>,
        },
    ]
}

/// The filter measured, its cells of width `W` in `S`.
type Stable<S, W = W8> = StableBloom<W, S, DefaultHasher>;

/// `observe_hash` on the random-eviction filter of [`stable`] with cells
/// of width `W` (`stable-observe` and the `stable-w*-observe` targets).
fn observe_cells<W: Width>(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let mut f = stable::<W, _>(&mut mem, bytes, isa, Eviction::Random, Layout::OneBlock)?;
        plan.measure(bytes, |h| f.observe_hash(h))
    })
}

/// `contains_hash` on the [`steady`] filter with cells of width `W`
/// (`stable-contains` and the `stable-w*-contains` targets).
fn contains_cells<W: Width>(
    bytes: usize,
    isa: Isa,
    pages: Pages,
    plan: &Plan,
) -> Result<Measured, String> {
    on_pages!(pages, mem => {
        let f = steady::<W, _>(&mut mem, bytes, isa)?;
        plan.measure(bytes, |h| f.contains_hash(h))
    })
}

/// Measures `f.observe_batch_hash` over batches of [`BATCH`] items.
fn observe_batches<S: Storage, W: Width>(
    mut f: Stable<S, W>,
    bytes: usize,
    plan: &Plan,
) -> Result<Measured, String> {
    let mut out = [false; BATCH];
    plan.measure_batches(bytes, |batch| {
        // Equal lengths: the call cannot fail.
        let _ = f.observe_batch_hash(batch, &mut out);
        black_box(&out);
    })
}

/// [`stable`] with random eviction after `(Max + 1)·m/P` items, enough for
/// every cell to be decremented `Max + 1` times on average: the zero
/// fraction is at its stable point. The items go in by the best kernels
/// (only the measured queries run `isa`'s).
fn steady<W: Width, M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
) -> Result<Stable<M::Storage<'_>, W>, String> {
    let mut f = stable::<W, M>(
        mem,
        bytes,
        Isa::detect(),
        Eviction::Random,
        Layout::OneBlock,
    )?;
    let items = (1 << f.params().bits_per_cell) * f.cells() / f.params().p;
    let hashes: Vec<u64> = (0..items as u64).map(hash::mix64).collect();
    f.insert_batch_hash(&hashes);
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// The Stable Bloom filter measured: `bytes` of cells of width `W`,
/// d = 3 for 8-bit cells and the whole cell otherwise (4 and 1), K = 5, P
/// the smallest that delivers at most 1 % false positives with one block
/// an item (the blocked model, [`StableParams::with_smallest_p`]), in
/// `layout` (the same P in both layouts, so that they differ only in the
/// cells' lines), its cells from `mem`.
fn stable<W: Width, M: Memory>(
    mem: &mut M,
    bytes: usize,
    isa: Isa,
    eviction: Eviction,
    layout: Layout,
) -> Result<Stable<M::Storage<'_>, W>, String> {
    let params = StableParams {
        cells: bytes * 8 / W::BITS as usize,
        bits_per_cell: W::BITS.min(3),
        k: K,
        p: 1,
        eviction,
        layout: Layout::OneBlock,
    }
    .with_smallest_p::<W>(0.01)
    .map_err(|e| e.to_string())?;
    let params = StableParams { layout, ..params };
    let storage = mem.zeroed(params.blocks::<W>().map_err(|e| e.to_string())?)?;
    let mut f = Stable::with_storage(params, storage, hash::seeded_hasher(SEED))
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}
