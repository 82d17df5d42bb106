//! `Spectral` targets: insert and estimate, item by item and in batches.

use std::hint::black_box;

use streambloom::hash;
use streambloom::spectral::{MinimumSelection, Spectral, SpectralParams};
use streambloom::Isa;

use super::super::sampler::{BATCH, SEED};
use super::{Target, K};

/// The Spectral Bloom filter targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "spectral-insert",
            about: "Spectral<MinimumSelection, Blocked<W32>>::insert_hash, k = 5",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                plan.measure(bytes, |h| f.insert_hash(h))
            },
        },
        Target {
            name: "spectral-estimate",
            about: "Spectral<MinimumSelection, Blocked<W32>>::estimate_hash, k = 5, on a filter loaded \
                    to γ = nk/m = 0.7",
            per_isa: true,
            run: |bytes, isa, plan| {
                let f = loaded(bytes, isa)?;
                plan.measure(bytes, |h| f.estimate_hash(h))
            },
        },
        Target {
            name: "spectral-insert-batch",
            about: "spectral-insert through insert_batch_hash, 64 items a call, prefetching \
                    16 items ahead",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut f = spectral(bytes, isa)?;
                plan.measure_batches(bytes, |batch| f.insert_batch_hash(batch))
            },
        },
        Target {
            name: "spectral-estimate-batch",
            about: "spectral-estimate through estimate_batch_hash, 64 items a call, \
                    prefetching 16 items ahead",
            per_isa: true,
            run: |bytes, isa, plan| {
                let f = loaded(bytes, isa)?;
                let mut counts = [0u32; BATCH];
                plan.measure_batches(bytes, |batch| {
                    // Equal lengths: the call cannot fail.
                    let _ = f.estimate_batch_hash(batch, &mut counts);
                    black_box(&counts);
                })
            },
        },
    ]
}

/// The Spectral filter measured: `bytes` of 32-bit counters, k = 5.
fn spectral(bytes: usize, isa: Isa) -> Result<Spectral<MinimumSelection>, String> {
    let mut f = Spectral::<MinimumSelection>::new(SpectralParams::new(bytes / 4, K), SEED)
        .map_err(|e| e.to_string())?;
    f.set_isa(isa).map_err(|e| e.to_string())?;
    Ok(f)
}

/// [`spectral`] loaded to γ = nk/m = 0.7, the paper's operating point.
fn loaded(bytes: usize, isa: Isa) -> Result<Spectral<MinimumSelection>, String> {
    let mut f = spectral(bytes, isa)?;
    let items = (bytes / 4) as u64 * 7 / (10 * u64::from(K));
    (0..items).for_each(|i| f.insert_hash(hash::mix64(i)));
    Ok(f)
}
