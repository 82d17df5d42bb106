//! [`ReservoirParams`]: the memory, the sub-filters, the threshold `p*`
//! and the reset choices of a [`ReservoirBloom`](super::ReservoirBloom),
//! and the planners.

use crate::analysis::reservoir::{self, Model};
use crate::hash::Layout;
use crate::{Error, Result, W1, Width, store};

/// Bits of a block.
const B: usize = W1::CELLS;

/// The paper's threshold probability, used in all its experiments (§6).
pub const DEFAULT_P_STAR: f64 = 0.03;

/// Where an insertion clears its bit in each sub-filter (step 4a of the
/// digest; the paper's "one bit chosen uniformly at random" per
/// sub-filter, §4).
///
/// ```
/// use streambloom::reservoir::{ReservoirParams, Reset};
/// let p = ReservoirParams::new(1 << 16, 3).with_reset(Reset::Uniform);
/// assert_eq!(p.reset, Reset::Uniform);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reset {
    /// A uniform bit of sub-filter `j`'s sector **in the item's own
    /// block**: every bit is still cleared with probability `1/s` per
    /// insertion, as in the paper's model, and an item costs one cache
    /// line. The default (the project's layout choice, digest R8).
    OwnBlock,
    /// A uniform position of the whole sub-filter, as the paper draws it:
    /// a random block per sub-filter, so up to `k` more cache lines per
    /// insertion. For comparison with [`Reset::OwnBlock`].
    Uniform,
}

/// The parameters of a [`ReservoirBloom`](super::ReservoirBloom)
/// (Dutta, Bhattacharjee and Narang, EDBT 2012, §4).
///
/// The memory is `bits` rounded up to whole 512-bit blocks; each block is
/// cut into `k` sectors of `⌊512/k⌋` bits, sector `j` of every block
/// making sub-filter `j`, so a sub-filter has `s = ⌊512/k⌋ · blocks` bits
/// ([`sub_filter_bits`](Self::sub_filter_bits); the `512 mod k` bits left
/// over in each block are unused).
///
/// ```
/// use streambloom::reservoir::ReservoirParams;
/// let p = ReservoirParams::new(16384, 3);
/// assert_eq!(p.sub_filter_bits()?, 170 * 32);
/// assert_eq!(p.forced_from()?, 181_334); // the first i with s/i ≤ 0.03
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReservoirParams {
    /// Memory in bits `M`, rounded up to whole 512-bit blocks.
    pub bits: usize,
    /// Sub-filters (bits an item) `k`, `1..=512`.
    pub k: u32,
    /// The threshold `p*` in `(0, 1]`: from the first stream position `i`
    /// with `s/i ≤ p*` on, every item reported distinct is inserted.
    pub p_star: f64,
    /// Whether the first `s` insertions clear a position too (the paper's
    /// prose, and what its Table 2 needs; its analysis assumes they do
    /// not: digest R2).
    pub reset_during_fill: bool,
    /// Where the clears fall ([`Reset`]).
    pub reset: Reset,
    /// One block an item, or the `k` sub-filters split between two
    /// ([`Layout`]: sub-filters `0..⌈k/2⌉` in the first block).
    pub layout: Layout,
}

impl ReservoirParams {
    /// `bits` of memory in `k` sub-filters, with the paper's defaults:
    /// `p* = 0.03`, resets during the fill phase, clears in the item's
    /// own block, one block an item.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirParams, Reset};
    /// use streambloom::Layout;
    /// let p = ReservoirParams::new(1 << 16, 3);
    /// assert_eq!((p.p_star, p.reset_during_fill, p.reset, p.layout), (0.03, true, Reset::OwnBlock, Layout::OneBlock));
    /// ```
    pub const fn new(bits: usize, k: u32) -> ReservoirParams {
        ReservoirParams {
            bits,
            k,
            p_star: DEFAULT_P_STAR,
            reset_during_fill: true,
            reset: Reset::OwnBlock,
            layout: Layout::OneBlock,
        }
    }

    /// The paper's planning (§5.4): `k` the mean of eq. 5.27's
    /// `ln(FPR_t)/ln(1 − 1/e)` and 1, rounded
    /// ([`planned_k`](reservoir::planned_k)), over the whole blocks that
    /// fit in `memory_bits` (never more memory than given).
    ///
    /// `FPR_t` only chooses `k`: the rate the filter settles at is
    /// [`long_run_fpr`](Self::long_run_fpr) (16 % for `FPR_t = 0.1`, so
    /// `k = 3`), as the paper's own tables show (11–12 %). For a rate you can
    /// rely on, plan with [`plan_fpr`](Self::plan_fpr).
    ///
    /// Errors: `threshold_fpr` outside `(0, 1)`, or `memory_bits` below one
    /// block (512 bits: too small for `k` sectors).
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// let p = ReservoirParams::plan(16384, 0.1)?;
    /// assert_eq!((p.k, p.bits), (3, 16384));
    /// assert!(ReservoirParams::plan(100, 0.1).is_err());
    /// assert!(ReservoirParams::plan(16384, 1.5).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan(memory_bits: usize, threshold_fpr: f64) -> Result<ReservoirParams> {
        let k = reservoir::planned_k(threshold_fpr)?;
        let blocks = whole_blocks(memory_bits)?;
        Ok(ReservoirParams::new(blocks * B, k.min(B as u32)))
    }

    /// The fewest sub-filters whose settled false-positive rate for fresh
    /// items, [`long_run_fpr`](Self::long_run_fpr), is at most
    /// `target_fpr`, in the whole blocks that fit in `memory_bits`. Fewer
    /// sub-filters mean longer sub-filters, so items are remembered longer.
    ///
    /// Errors: `target_fpr` outside `(0, 1)` or below what `memory_bits`
    /// can reach, or `memory_bits` below one block.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// let p = ReservoirParams::plan_fpr(1 << 20, 0.01)?;
    /// assert!(p.long_run_fpr()? <= 0.01);
    /// assert_eq!(p.k, 7); // settled rates: 0.0170 at k = 6, 0.0084 at k = 7
    /// assert!(ReservoirParams::plan_fpr(1 << 20, 0.0).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan_fpr(memory_bits: usize, target_fpr: f64) -> Result<ReservoirParams> {
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
        }
        let bits = whole_blocks(memory_bits)? * B;
        (1..=B as u32)
            .map(|k| ReservoirParams::new(bits, k))
            .find(|p| p.long_run_fpr().is_ok_and(|f| f <= target_fpr))
            .ok_or(Error::param(
                "target_fpr",
                target_fpr,
                "at least the settled rate of 512 one-bit sectors",
            ))
    }

    /// These parameters with threshold `p_star`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert_eq!(ReservoirParams::new(4096, 3).with_p_star(0.1).p_star, 0.1);
    /// ```
    pub const fn with_p_star(self, p_star: f64) -> ReservoirParams {
        ReservoirParams { p_star, ..self }
    }

    /// These parameters with clears drawn by `reset`.
    ///
    /// ```
    /// use streambloom::reservoir::{ReservoirParams, Reset};
    /// assert_eq!(ReservoirParams::new(4096, 3).with_reset(Reset::Uniform).reset, Reset::Uniform);
    /// ```
    pub const fn with_reset(self, reset: Reset) -> ReservoirParams {
        ReservoirParams { reset, ..self }
    }

    /// These parameters with or without resets during the fill phase.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert!(!ReservoirParams::new(4096, 3).with_reset_during_fill(false).reset_during_fill);
    /// ```
    pub const fn with_reset_during_fill(self, reset_during_fill: bool) -> ReservoirParams {
        ReservoirParams {
            reset_during_fill,
            ..self
        }
    }

    /// These parameters with `layout`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// use streambloom::Layout;
    /// assert_eq!(ReservoirParams::new(4096, 3).with_layout(Layout::TwoBlocks).layout, Layout::TwoBlocks);
    /// ```
    pub const fn with_layout(self, layout: Layout) -> ReservoirParams {
        ReservoirParams { layout, ..self }
    }

    /// Validates the parameters; returns the blocks they need.
    ///
    /// Errors: `bits` of 0 or too many to address, `k` outside `1..=512`
    /// (each of a block's `k` sectors needs a bit), `p_star` outside
    /// `(0, 1]`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert_eq!(ReservoirParams::new(1000, 3).blocks(), Ok(2));
    /// assert!(ReservoirParams::new(1000, 0).blocks().is_err());
    /// assert!(ReservoirParams::new(1000, 513).blocks().is_err());
    /// assert!(ReservoirParams::new(1000, 3).with_p_star(0.0).blocks().is_err());
    /// ```
    pub fn blocks(&self) -> Result<usize> {
        if self.k == 0 || self.k as usize > B {
            return Err(Error::param(
                "k",
                self.k,
                "in 1..=512: each of a block's k sectors needs a bit",
            ));
        }
        // NaN fails this test too.
        if !(self.p_star > 0.0 && self.p_star <= 1.0) {
            return Err(Error::param("p_star", self.p_star, "in (0, 1]"));
        }
        store::blocks_named::<W1>(self.bits, "bits")
    }

    /// Bits of each sub-filter's sector in a block, `⌊512/k⌋`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert_eq!(ReservoirParams::new(512, 3).sector_bits()?, 170);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn sector_bits(&self) -> Result<usize> {
        self.blocks()?;
        Ok(B / self.k as usize)
    }

    /// Bits of each sub-filter, `s = ⌊512/k⌋ · blocks`: the `s` of the
    /// insertion probability `s/i`.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert_eq!(ReservoirParams::new(4096, 4).sub_filter_bits()?, 1024);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn sub_filter_bits(&self) -> Result<u64> {
        Ok((self.sector_bits()? * self.blocks()?) as u64)
    }

    /// The first stream position `i` with `s/i ≤ p*`, from which every item
    /// reported distinct is inserted: `⌈s/p*⌉` (digest R3).
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// assert_eq!(ReservoirParams::new(512, 4).with_p_star(0.5).forced_from()?, 256);
    /// assert_eq!(ReservoirParams::new(512, 4).with_p_star(1.0).forced_from()?, 128);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn forced_from(&self) -> Result<u64> {
        let s = self.sub_filter_bits()?;
        let x = libm::ceil(s as f64 / self.p_star);
        // The float can round past the exact ceiling: step back while the
        // integer before still satisfies s/i <= p*.
        let mut i = if x >= u64::MAX as f64 {
            u64::MAX
        } else {
            x as u64
        };
        while i > 1 && s as f64 / (i - 1) as f64 <= self.p_star {
            i -= 1;
        }
        Ok(i.max(s))
    }

    /// The analysis's model of these parameters
    /// ([`Model`](crate::analysis::reservoir::Model)): a clear draws from a
    /// sector's bits with [`Reset::OwnBlock`], from `s` with
    /// [`Reset::Uniform`].
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// let m = ReservoirParams::new(16384, 3).model()?;
    /// assert_eq!((m.s, m.k, m.clear_from), (5440, 3, 170));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn model(&self) -> Result<Model> {
        let s = self.sub_filter_bits()?;
        Ok(Model {
            s,
            k: self.k,
            clear_from: match self.reset {
                Reset::OwnBlock => self.sector_bits()? as u64,
                Reset::Uniform => s,
            },
            forced_from: self.forced_from()?,
            reset_during_fill: self.reset_during_fill,
        })
    }

    /// The rate a fresh item meets once the filter has settled in the
    /// forced phase, for clears drawn from `c` positions
    /// ([`long_run_fpr`](reservoir::long_run_fpr)).
    ///
    /// With [`Reset::OwnBlock`] (the default) the measured settled rate
    /// follows it. With [`Reset::Uniform`] an item's sets land in its own
    /// block while the clears spread over all blocks, so the `k` sectors
    /// of a block stay positively correlated and fresh items meet a
    /// higher rate than this, by more the larger `k` is: it is not a
    /// bound there.
    ///
    /// ```
    /// use streambloom::reservoir::ReservoirParams;
    /// let f = ReservoirParams::new(1 << 20, 3).long_run_fpr()?;
    /// assert!((f - 0.1622).abs() < 1e-3); // sectors of 170 bits
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn long_run_fpr(&self) -> Result<f64> {
        let m = self.model()?;
        Ok(reservoir::long_run_fpr(m.clear_from as f64, self.k))
    }
}

/// The whole blocks in `memory_bits`; an error below one.
fn whole_blocks(memory_bits: usize) -> Result<usize> {
    match memory_bits / B {
        0 => Err(Error::param(
            "memory_bits",
            memory_bits,
            "at least 512: one block of k sectors",
        )),
        blocks => Ok(blocks),
    }
}
