//! The yardsticks beside the filters: a kernel-level proxy of a one-line
//! filter (`probe-set`) and the memory limits (`line-rmw` for updates,
//! `line-read` for queries).

use streambloom::hash;
use streambloom::{Block, Isa, Width, W8};
use streambloom_kernels::Kernels;

use super::{Target, K};

/// The baseline targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "probe-set",
            about: "kernel-level proxy of a one-line filter: pick a block and 5 8-bit cells \
                    from the hash, any_zero on them, then assign them 255",
            per_isa: true,
            run: |bytes, isa, plan| {
                let mut t = ProbeSet::new(bytes, isa)?;
                plan.measure(bytes, |h| t.op(h))
            },
        },
        Target {
            name: "line-rmw",
            about: "the memory limit: one random cache-line read-modify-write per item in a \
                    buffer of the same size (runs no kernel: once per size)",
            per_isa: false,
            run: |bytes, _, plan| {
                let mut t = LineRmw::new(bytes)?;
                plan.measure(bytes, |h| t.op(h))
            },
        },
        Target {
            name: "line-read",
            about: "the query limit: one random cache-line read per item in a buffer of the \
                    same size (runs no kernel: once per size)",
            per_isa: false,
            run: |bytes, _, plan| {
                let mut t = LineRmw::new(bytes)?;
                // Written once, so the reads reach memory: untouched
                // zeroed pages all map to one shared page.
                t.lines.iter_mut().for_each(|line| line.0[0] = 1);
                plan.measure(bytes, |h| t.read(h))
            },
        },
    ]
}

/// Kernel-level proxy of a one-line filter: probe `K` 8-bit cells of one
/// block, then set them to the maximum, through the kernel table of one
/// [`Isa`] (what a Stable Bloom filter's observe does, less the eviction).
struct ProbeSet {
    blocks: Vec<Block>,
    kernels: &'static Kernels<W8>,
}

impl ProbeSet {
    fn new(bytes: usize, isa: Isa) -> Result<ProbeSet, String> {
        let blocks = bytes / Block::BYTES;
        if blocks == 0 {
            return Err(format!("{bytes} bytes hold no block"));
        }
        let kernels =
            Kernels::for_isa(isa).ok_or_else(|| format!("{} is not available", isa.name()))?;
        Ok(ProbeSet {
            blocks: vec![Block::ZERO; blocks],
            kernels,
        })
    }

    /// Whether every cell of `h` was set before (then sets them all).
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let probe = hash::probe::<W8>(h, self.blocks.len(), K);
        let kernels = self.kernels;
        let block = &mut self.blocks[probe.block];
        let seen = !kernels.any_zero(block, probe.mask);
        kernels.assign(block, probe.mask, W8::MAX);
        seen
    }
}

/// The memory limit: one random cache-line read-modify-write per item, the
/// least any filter that touches one line per item can cost.
struct LineRmw {
    lines: Vec<Block>,
}

impl LineRmw {
    fn new(bytes: usize) -> Result<LineRmw, String> {
        let lines = bytes / Block::BYTES;
        if lines == 0 {
            return Err(format!("{bytes} bytes hold no cache line"));
        }
        Ok(LineRmw {
            lines: vec![Block::ZERO; lines],
        })
    }

    /// Increments the first byte of the line of `h`; whether it wrapped.
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let i = hash::block_of(h, self.lines.len());
        let byte = &mut self.lines[i].0[0];
        *byte = byte.wrapping_add(1);
        *byte == 0
    }

    /// The first byte of the line of `h`: what a query that reads one line
    /// per item costs at least.
    #[inline(always)]
    fn read(&self, h: u64) -> u8 {
        self.lines[hash::block_of(h, self.lines.len())].0[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_set_sees_what_it_set() {
        let mut t = ProbeSet::new(4096, Isa::Scalar).unwrap();
        assert!(!t.op(42));
        assert!(t.op(42));
    }
}
