//! The yardsticks beside the filters: a kernel-level proxy of a one-line
//! filter (`probe-set`) and the memory limits (`line-rmw` for updates,
//! `line-read` for queries).

use streambloom::hash;
use streambloom::{Block, Isa, Storage, Width, W8};
use streambloom_kernels::Kernels;

use super::{on_pages, Memory, Target, K};

/// The baseline targets.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "probe-set",
            about: "kernel-level proxy of a one-line filter: pick a block and 5 8-bit cells \
                    from the hash, any_zero on them, then assign them 255",
            per_isa: true,
            run: |bytes, isa, pages, plan| {
                on_pages!(pages, mem => {
                    let mut t = ProbeSet::new(&mut mem, bytes, isa)?;
                    plan.measure(bytes, |h| t.op(h))
                })
            },
        },
        Target {
            name: "line-rmw",
            about: "the memory limit: one random cache-line read-modify-write per item in a \
                    buffer of the same size (runs no kernel: once per size)",
            per_isa: false,
            run: |bytes, _, pages, plan| {
                on_pages!(pages, mem => {
                    let mut t = LineRmw::new(&mut mem, bytes)?;
                    plan.measure(bytes, |h| t.op(h))
                })
            },
        },
        Target {
            name: "line-read",
            about: "the query limit: one random cache-line read per item in a buffer of the \
                    same size (runs no kernel: once per size)",
            per_isa: false,
            run: |bytes, _, pages, plan| {
                on_pages!(pages, mem => {
                    let t = LineRmw::written(&mut mem, bytes)?;
                    plan.measure(bytes, |h| t.read(h))
                })
            },
        },
    ]
}

/// Kernel-level proxy of a one-line filter: probe `K` 8-bit cells of one
/// block, then set them to the maximum, through the kernel table of one
/// [`Isa`] (what a Stable Bloom filter's observe does, less the eviction),
/// in blocks held by `S`.
struct ProbeSet<S> {
    blocks: S,
    kernels: &'static Kernels<W8>,
}

impl<S: Storage> ProbeSet<S> {
    /// Over `bytes` of blocks from `mem`, with `isa`'s kernels.
    fn new<'a, M: Memory<Storage<'a> = S>>(
        mem: &'a mut M,
        bytes: usize,
        isa: Isa,
    ) -> Result<ProbeSet<S>, String> {
        let blocks = bytes / Block::BYTES;
        if blocks == 0 {
            return Err(format!("{bytes} bytes hold no block"));
        }
        let kernels =
            Kernels::for_isa(isa).ok_or_else(|| format!("{} is not available", isa.name()))?;
        Ok(ProbeSet {
            blocks: mem.zeroed(blocks)?,
            kernels,
        })
    }

    /// Whether every cell of `h` was set before (then sets them all).
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let blocks = self.blocks.as_mut();
        let probe = hash::probe::<W8>(h, blocks.len(), K);
        let kernels = self.kernels;
        let block = &mut blocks[probe.block];
        let seen = !kernels.any_zero(block, probe.mask);
        kernels.assign(block, probe.mask, W8::MAX);
        seen
    }
}

/// The memory limit: one random cache-line read-modify-write per item, the
/// least any filter that touches one line per item can cost; the lines
/// held by `S`.
struct LineRmw<S> {
    lines: S,
}

impl<S: Storage> LineRmw<S> {
    /// Over `bytes` of lines from `mem`.
    fn new<'a, M: Memory<Storage<'a> = S>>(
        mem: &'a mut M,
        bytes: usize,
    ) -> Result<LineRmw<S>, String> {
        let lines = bytes / Block::BYTES;
        if lines == 0 {
            return Err(format!("{bytes} bytes hold no cache line"));
        }
        Ok(LineRmw {
            lines: mem.zeroed(lines)?,
        })
    }

    /// [`LineRmw::new`] with every line written once, so that reads reach
    /// memory: untouched zeroed pages all map to one shared page.
    fn written<'a, M: Memory<Storage<'a> = S>>(
        mem: &'a mut M,
        bytes: usize,
    ) -> Result<LineRmw<S>, String> {
        let mut t = LineRmw::new(mem, bytes)?;
        t.lines.as_mut().iter_mut().for_each(|line| line.0[0] = 1);
        Ok(t)
    }

    /// Increments the first byte of the line of `h`; whether it wrapped.
    #[inline(always)]
    fn op(&mut self, h: u64) -> bool {
        let lines = self.lines.as_mut();
        let i = hash::block_of(h, lines.len());
        let byte = &mut lines[i].0[0];
        *byte = byte.wrapping_add(1);
        *byte == 0
    }

    /// The first byte of the line of `h`: what a query that reads one line
    /// per item costs at least.
    #[inline(always)]
    fn read(&self, h: u64) -> u8 {
        let lines = self.lines.as_ref();
        lines[hash::block_of(h, lines.len())].0[0]
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Heap, Huge, HugeOwned};
    use super::*;

    #[test]
    fn probe_set_sees_what_it_set() {
        let mut t = ProbeSet::new(&mut Heap, 4096, Isa::Scalar).unwrap();
        assert!(!t.op(42));
        assert!(t.op(42));
        let mut huge = Huge::default();
        let mut t = ProbeSet::new(&mut huge, 4096, Isa::Scalar).unwrap();
        assert!(!t.op(42));
        assert!(t.op(42));
    }

    #[test]
    fn line_rmw_counts_on_any_pages() {
        let mut t = LineRmw::new(&mut Heap, 4096).unwrap();
        assert!(!t.op(7));
        assert_eq!(t.read(7), 1);
        let mut t = LineRmw::new(&mut HugeOwned, 4096).unwrap();
        assert!(!t.op(7));
        assert_eq!(t.read(7), 1);
        let mut huge = Huge::default();
        let t = LineRmw::written(&mut huge, 4096).unwrap();
        assert_eq!(t.read(7), 1);
        assert!(LineRmw::new(&mut Huge::default(), 32).is_err());
    }
}
