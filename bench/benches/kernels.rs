//! Every kernel, per cell width and per kernel implementation available on
//! this CPU, so each SIMD backend can be held against the scalar reference.
//!
//! Benchmark names read `kernel/width/isa` (range kernels add `/P`, the
//! run length in cells):
//!
//! - select kernels (`any_zero`, `min_count`, `max_assign`, `assign`,
//!   `add_sat`, `sub_sat`) on one block with a 5-cell mask, taken in turn
//!   from 256 precomputed masks so the branch predictor cannot learn one;
//! - range kernels (`dec_run`, `zero_count`) over P = 40, 90 and 180 cells
//!   starting at cell 7, off every block and vector boundary. `dec_run`'s
//!   cells are restored every 32 calls, outside the clock, so they never
//!   settle on all zeros; the clock is read once per 32 calls (under 1 ns
//!   a call).
//!
//! Run with `cargo bench -p streambloom-bench --bench kernels`; criterion's
//! usual filter applies (`-- any_zero/w8`). Times are kept short (300 ms
//! warm-up, 1 s measurement, 20 samples) so the whole run takes minutes.
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use streambloom::hash::{cells_of, mix64};
use streambloom_kernels::{set_cell, Block, Isa, Kernels, Width, W1, W16, W2, W32, W4, W8};

/// Precomputed masks each select benchmark cycles through (a power of two).
const MASKS: usize = 256;
/// Cells each mask selects.
const K: u32 = 5;
/// Run lengths of the range benchmarks.
const RUNS: [usize; 3] = [40, 90, 180];
/// First cell of every run: inside block 0, on no vector boundary.
const OFFSET: usize = 7;
/// Blocks the range benchmarks work in: enough for 180 32-bit cells past
/// `OFFSET`.
const RUN_BLOCKS: usize = 16;
/// `dec_run` calls between restorations of the run's cells.
const REFRESH: u64 = 32;

/// `blocks` blocks of pseudo-random cells, one in eight of them zero.
fn filled<W: Width>(blocks: usize) -> Vec<Block> {
    let mut v = vec![Block::ZERO; blocks];
    for (b, block) in v.iter_mut().enumerate() {
        for i in 0..W::CELLS {
            let r = mix64((b * W::CELLS + i) as u64);
            let value = if r.is_multiple_of(8) {
                0
            } else {
                (r >> 32) as u32 & W::MAX
            };
            set_cell::<W>(block, i, value);
        }
    }
    v
}

/// Benchmarks `op` (one select kernel) on every available implementation,
/// as group `kernel/width`.
fn select<W: Width, R>(
    c: &mut Criterion,
    kernel: &str,
    width: &str,
    op: impl Fn(&Kernels<W>, &mut Block, W::Mask) -> R,
) {
    let masks: [W::Mask; MASKS] = std::array::from_fn(|i| cells_of::<W>(mix64(i as u64), K));
    let start = filled::<W>(1)[0];
    let mut group = c.benchmark_group(format!("{kernel}/{width}"));
    for isa in Isa::available() {
        let Some(kernels) = Kernels::<W>::for_isa(isa) else {
            continue;
        };
        group.bench_function(isa.name(), |b| {
            let mut block = start;
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % MASKS;
                op(kernels, black_box(&mut block), masks[i])
            })
        });
    }
    group.finish();
}

/// The select kernels at width `W`.
fn selects<W: Width>(c: &mut Criterion, width: &str) {
    let v = W::MAX / 2;
    select::<W, _>(c, "any_zero", width, |k, b, m| k.any_zero(b, m));
    select::<W, _>(c, "min_count", width, |k, b, m| k.min_count(b, m));
    select::<W, _>(c, "max_assign", width, |k, b, m| k.max_assign(b, m, v));
    select::<W, _>(c, "assign", width, |k, b, m| k.assign(b, m, v));
    select::<W, _>(c, "add_sat", width, |k, b, m| k.add_sat(b, m, 1));
    select::<W, _>(c, "sub_sat", width, |k, b, m| k.sub_sat(b, m, 1));
}

/// The range kernels at width `W`, as groups `dec_run/width` and
/// `zero_count/width` with ids `isa/P`.
fn runs<W: Width>(c: &mut Criterion, width: &str) {
    let start = filled::<W>(RUN_BLOCKS);
    let mut group = c.benchmark_group(format!("dec_run/{width}"));
    for isa in Isa::available() {
        let Some(kernels) = Kernels::<W>::for_isa(isa) else {
            continue;
        };
        for p in RUNS {
            group.bench_function(BenchmarkId::new(isa.name(), p), |b| {
                let mut blocks = start.clone();
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        blocks.copy_from_slice(&start);
                        let n = REFRESH.min(iters - done);
                        let clock = Instant::now();
                        for _ in 0..n {
                            kernels.dec_run(black_box(&mut blocks), OFFSET, p);
                        }
                        timed += clock.elapsed();
                        done += n;
                    }
                    timed
                })
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group(format!("zero_count/{width}"));
    for isa in Isa::available() {
        let Some(kernels) = Kernels::<W>::for_isa(isa) else {
            continue;
        };
        for p in RUNS {
            group.bench_function(BenchmarkId::new(isa.name(), p), |b| {
                b.iter(|| kernels.zero_count(black_box(&start), OFFSET, p))
            });
        }
    }
    group.finish();
}

fn all_kernels(c: &mut Criterion) {
    selects::<W1>(c, "w1");
    selects::<W2>(c, "w2");
    selects::<W4>(c, "w4");
    selects::<W8>(c, "w8");
    selects::<W16>(c, "w16");
    selects::<W32>(c, "w32");
    runs::<W4>(c, "w4");
    runs::<W8>(c, "w8");
    runs::<W16>(c, "w16");
    runs::<W32>(c, "w32");
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = all_kernels
}
criterion_main!(benches);
