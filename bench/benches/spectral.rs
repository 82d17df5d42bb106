//! Insert and estimate cost per policy of `Spectral` (W32, k = 5) at
//! 16 KiB, 1 MiB and 64 MiB, scalar kernels against the best available,
//! on pre-hashed keys.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use streambloom::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Spectral, SpectralParams,
};
use streambloom::{hash::mix64, Isa, W32};

const KEYS: usize = 1 << 16;

fn policy<P: Policy + Default>(c: &mut Criterion, keys: &[u64]) {
    let mut g = c.benchmark_group(P::NAME);
    g.measurement_time(Duration::from_secs(1))
        .warm_up_time(Duration::from_millis(300))
        .sample_size(20)
        .throughput(Throughput::Elements(KEYS as u64));
    for (label, bytes) in [
        ("16KiB", 16usize << 10),
        ("1MiB", 1 << 20),
        ("64MiB", 64 << 20),
    ] {
        for isa in [Isa::Scalar, Isa::detect()] {
            let Ok(mut f) = Spectral::<P, Blocked<W32>>::new(SpectralParams::new(bytes / 4, 5), 1)
            else {
                continue;
            };
            if f.set_isa(isa).is_err() {
                continue;
            }
            g.bench_function(format!("insert/{label}/{}", isa.name()), |b| {
                b.iter(|| {
                    for &h in keys {
                        f.insert_hash(black_box(h));
                    }
                })
            });
            g.bench_function(format!("estimate/{label}/{}", isa.name()), |b| {
                b.iter(|| {
                    keys.iter()
                        .map(|&h| u64::from(f.estimate_hash(black_box(h))))
                        .sum::<u64>()
                })
            });
        }
    }
    g.finish();
}

fn spectral(c: &mut Criterion) {
    let keys: Vec<u64> = (0..KEYS as u64).map(mix64).collect();
    policy::<MinimumSelection>(c, &keys);
    policy::<MinimalIncrease>(c, &keys);
    policy::<RecurringMinimum>(c, &keys);
}

criterion_group!(benches, spectral);
criterion_main!(benches);
