//! The sampler: warms an operation up, then times batches of [`BATCH`]
//! pre-hashed items with one `Instant` pair each (the method is in the
//! parent module's docs).

use std::hint::black_box;
use std::time::Instant;

use streambloom::hash;
use streambloom::Block;

use crate::stats::{self, Summary};

/// Items timed together by one `Instant` pair.
pub const BATCH: usize = 64;
/// Seed of the item stream, fixed so runs repeat.
pub const SEED: u64 = 0x5EED_B100_u64;

/// What one measurement found.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// Per-item percentiles and mean.
    pub summary: Summary,
    /// The process's anonymous memory on transparent huge pages when the
    /// sampling ended, the target's memory still mapped ([`anon_huge_bytes`]).
    pub anon_huge_bytes: Option<u64>,
}

/// How much to measure.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Timed batches per measurement (at least 1).
    pub batches: usize,
    /// Fewest items to warm up with.
    pub min_warmup: usize,
    /// Median cost of an empty `Instant` measurement, in ns.
    pub overhead_ns: f64,
}

impl Plan {
    /// Warms `op` up over a target of `bytes`, then samples it, one
    /// pre-hashed item per call.
    pub fn measure<R>(
        &self,
        bytes: usize,
        mut op: impl FnMut(u64) -> R,
    ) -> Result<Measured, String> {
        self.measure_batches(bytes, |batch| {
            for &h in batch {
                black_box(op(h));
            }
        })
    }

    /// [`Plan::measure`] for an operation that takes a whole batch of
    /// hashes at once (the `*_batch` APIs).
    pub fn measure_batches(
        &self,
        bytes: usize,
        mut op: impl FnMut(&[u64; BATCH]),
    ) -> Result<Measured, String> {
        let mut stream = Stream(SEED);
        let mut batch = [0u64; BATCH];
        let warmup = (2 * bytes / Block::BYTES).max(self.min_warmup);
        for _ in 0..warmup.div_ceil(BATCH) {
            stream.fill(&mut batch);
            op(&batch);
        }
        let mut per_item = Vec::with_capacity(self.batches);
        for _ in 0..self.batches {
            stream.fill(&mut batch);
            // The hashes must exist before the clock starts.
            black_box(&mut batch);
            let start = Instant::now();
            op(&batch);
            let ns = start.elapsed().as_nanos() as f64;
            per_item.push((ns - self.overhead_ns).max(0.0) / BATCH as f64);
        }
        Ok(Measured {
            summary: Summary::of(per_item)
                .ok_or_else(|| "no batch was timed (--batches 0)".to_owned())?,
            anon_huge_bytes: anon_huge_bytes(),
        })
    }
}

/// `AnonHugePages` of `/proc/self/smaps_rollup`: this process's anonymous
/// memory on transparent huge pages, which shows whether a target's
/// memory got the huge pages it was advised for. `None` where that file
/// cannot be read (not Linux).
pub fn anon_huge_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    anon_huge_in(&text)
}

/// The `AnonHugePages:  N kB` figure of an smaps text, in bytes.
fn anon_huge_in(smaps: &str) -> Option<u64> {
    let line = smaps.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kib = line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kib * 1024)
}

/// The item stream: SplitMix64 of a counter, standing for pre-hashed keys.
struct Stream(u64);

impl Stream {
    fn fill(&mut self, batch: &mut [u64; BATCH]) {
        for h in batch {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            *h = hash::mix64(self.0);
        }
    }
}

/// Median cost of an empty `Instant` measurement, in ns.
pub fn timer_overhead_ns() -> f64 {
    let ns = (0..10_000)
        .map(|_| Instant::now().elapsed().as_nanos() as f64)
        .collect();
    stats::median(ns).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anon_huge_pages_parse() {
        let smaps = "Rss:              123 kB\nAnonHugePages:    4096 kB\nShmemPmdMapped:   0 kB\n";
        assert_eq!(anon_huge_in(smaps), Some(4 << 20));
        assert_eq!(anon_huge_in("Rss: 1 kB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(anon_huge_bytes().is_some());
        }
    }
}
