//! `Apbf` targets: insert and contains item by item, and the per-item
//! step of `timing-standard` (a query then an insert of the same item) at
//! equal memory, so the two sliding-window filters sit side by side.

use streambloom::apbf::{Apbf, ApbfParams};
use streambloom::hash::{self, DefaultHasher};

use super::super::sampler::SEED;
use super::{on_pages, Memory, Target, K};

/// Older slices of the targets' filters (`l`).
const L: u32 = 5;

/// The Age-Partitioned Bloom Filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "apbf-insert",
            about: "Apbf::insert_hash: k = 5 of k + l = 10 slices, slices of bytes·8/10 \
                    bits (whole blocks), g at the paper's ⌊slice·ln 2 / k⌋",
            per_isa: false,
            run: |bytes, _, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = apbf(&mut mem, bytes)?;
                    plan.measure(bytes, |h| f.insert_hash(h))
                })
            },
        },
        Target {
            name: "apbf-contains",
            about: "Apbf::contains_hash on apbf-insert's filter in its steady state \
                    ((k + l)·g items inserted): mostly absent keys",
            per_isa: false,
            run: |bytes, _, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = apbf(&mut mem, bytes)?;
                    let p = f.params();
                    for i in 0..u64::from(p.k + p.l) * p.g {
                        f.insert_hash(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    }
                    plan.measure(bytes, |h| f.contains_hash(h))
                })
            },
        },
        Target {
            name: "apbf-standard",
            about: "Apbf contains_hash then insert_hash of the same item (timing-standard's \
                    step): apbf-insert's filter, items from a universe of 2·l·g",
            per_isa: false,
            run: |bytes, _, pages, plan| {
                on_pages!(pages, mem => {
                    let mut f = apbf(&mut mem, bytes)?;
                    let universe = 2 * f.params().window();
                    plan.measure(bytes, |h| {
                        let x = h % universe;
                        let found = f.contains_hash(x);
                        f.insert_hash(x);
                        found
                    })
                })
            },
        },
    ]
}

/// An empty filter in about `bytes`: `k = K`, `l = L`, slices of
/// `bytes·8 / (k + l)` bits rounded down to whole blocks (at least one),
/// and the paper's generation for that slice, `⌊slice·ln 2 / k⌋`; its
/// slices in `mem`.
fn apbf<M: Memory>(
    mem: &mut M,
    bytes: usize,
) -> Result<Apbf<M::Storage<'_>, DefaultHasher>, String> {
    let slices = (K + L) as usize;
    let slice_bits = (bytes * 8 / slices / 512).max(1) * 512;
    let g = ((slice_bits as f64 * std::f64::consts::LN_2 / f64::from(K)) as u64).max(1);
    let params = ApbfParams {
        k: K,
        l: L,
        g,
        slice_bits,
    };
    let storage = mem.zeroed(params.blocks().map_err(|e| e.to_string())?)?;
    Apbf::with_storage(params, storage, hash::seeded_hasher(SEED)).map_err(|e| e.to_string())
}
