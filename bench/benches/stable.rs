//! `StableBloom::observe` per kernel implementation at 16 KiB, 1 MiB and
//! 64 MiB, on pre-hashed keys: the planned filter (8-bit cells, d = 3,
//! K = 5, P for a 1 % false-positive bound) with both eviction policies,
//! and the 4-bit, P = 180 setting the README compares with another crate.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{hash::mix64, Isa, Width, W4, W8};

const KEYS: usize = 1 << 16;

const SIZES: [(&str, usize); 3] = [("16KiB", 16 << 10), ("1MiB", 1 << 20), ("64MiB", 64 << 20)];

/// Benchmarks `observe_hash` over `keys` for every size and available
/// implementation; `params` maps a size in bytes to the parameters.
fn observe<W: Width>(
    c: &mut Criterion,
    name: &str,
    keys: &[u64],
    params: impl Fn(usize) -> Option<StableParams>,
) {
    let mut g = c.benchmark_group(name);
    g.measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
        .sample_size(20)
        .throughput(Throughput::Elements(KEYS as u64));
    for (label, bytes) in SIZES {
        let Some(params) = params(bytes) else {
            continue;
        };
        for isa in Isa::available() {
            let Ok(mut f) = StableBloom::<W>::new(params, 1) else {
                continue;
            };
            if f.set_isa(isa).is_err() {
                continue;
            }
            g.bench_function(format!("{label}/{}", isa.name()), |b| {
                b.iter(|| {
                    keys.iter()
                        .filter(|&&h| f.observe_hash(black_box(h)))
                        .count()
                })
            });
        }
    }
    g.finish();
}

fn stable(c: &mut Criterion) {
    let keys: Vec<u64> = (0..KEYS as u64).map(mix64).collect();
    for (name, eviction) in [
        ("stable-w8/random", Eviction::Random),
        ("stable-w8/sweep", Eviction::Sweep),
    ] {
        observe::<W8>(c, name, &keys, |bytes| {
            StableParams {
                cells: bytes,
                bits_per_cell: 3,
                k: 5,
                p: 1,
                eviction,
                layout: Layout::OneBlock,
            }
            .with_smallest_p::<W8>(0.01)
            .ok()
        });
    }
    observe::<W4>(c, "stable-w4-p180/random", &keys, |bytes| {
        Some(StableParams {
            cells: 2 * bytes,
            bits_per_cell: 4,
            k: 3,
            p: 180,
            eviction: Eviction::Random,
            layout: Layout::OneBlock,
        })
    });
}

criterion_group!(benches, stable);
criterion_main!(benches);
