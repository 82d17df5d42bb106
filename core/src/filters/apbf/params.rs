//! Parameters of an [`Apbf`](super::Apbf): validation and the planner.

use crate::analysis::apbf::{self, MAX_K};
use crate::{Error, Result, W1, Width, store};

/// Bits per block: slices are whole blocks.
const B: usize = W1::CELLS;

/// The longest ring [`ApbfParams::plan`] considers, in older slices `l`.
pub const PLAN_MAX_L: u32 = 4096;

/// The parameters of an [`Apbf`](super::Apbf): `k` newest slices, `l`
/// older ones, generations of `g` insertions, slices of `slice_bits` bits
/// (rounded up to whole 512-bit blocks by the filter).
///
/// The last `l·g` insertions (at least; up to `(l+1)·g`) are always found.
///
/// ```
/// use streambloom::apbf::ApbfParams;
/// let p = ApbfParams::new(10, 7, 1000);
/// assert_eq!(p.slice_bits, 14427); // ⌈k·g / ln 2⌉, the paper's slice
/// assert_eq!(p.window(), 7000);
/// assert_eq!(p.blocks(), Ok(17 * 29));
/// assert!(ApbfParams { k: 0, ..p }.blocks().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ApbfParams {
    /// Slices an insertion sets (and a query needs in a row): `1..=64`.
    pub k: u32,
    /// Older slices: how many generations past the `k` newest an item is
    /// still found; at least 1.
    pub l: u32,
    /// Insertions per generation; at least 1.
    pub g: u64,
    /// Bits per slice, rounded up to whole 512-bit blocks; at least 1.
    pub slice_bits: usize,
}

impl ApbfParams {
    /// `k`, `l`, `g` with the paper's slice size `⌈k·g / ln 2⌉` bits, at
    /// which the oldest slices are half full (saturating at `usize::MAX`,
    /// which [`blocks`](Self::blocks) refuses).
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// assert_eq!(ApbfParams::new(4, 3, 100).slice_bits, 578);
    /// ```
    pub fn new(k: u32, l: u32, g: u64) -> ApbfParams {
        ApbfParams {
            k,
            l,
            g,
            slice_bits: paper_slice_bits(k, g),
        }
    }

    /// The parameters of least memory that always find the last `window`
    /// insertions (`l·g >= window`) with a steady-state false-positive
    /// rate ([`steady_fpr`](Self::steady_fpr)) of at most `target_fpr`.
    ///
    /// The rule, after the paper: slices of `⌈k·g / ln 2⌉` bits (half full
    /// when they retire), and for each `k` in `1..=64` every `l` up to
    /// the largest whose rate at those fills meets the target (and up to
    /// [`PLAN_MAX_L`] and `window`), with `g = ⌈window / l⌉`; the least
    /// total bits, whole blocks, wins (ties to the smaller `k`, then `l`).
    /// Rounding slices up to blocks only lowers the fills, so the rate
    /// holds.
    ///
    /// Errors: `window == 0`, `target_fpr` outside `(0, 1)`, or a filter
    /// too large to address.
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// let p = ApbfParams::plan(100_000, 0.001).unwrap();
    /// assert!(p.window() >= 100_000);
    /// assert!(p.steady_fpr() <= 0.001);
    /// assert!(ApbfParams::plan(0, 0.01).is_err());
    /// assert!(ApbfParams::plan(10, 1.0).is_err());
    /// ```
    pub fn plan(window: u64, target_fpr: f64) -> Result<ApbfParams> {
        if window == 0 {
            return Err(Error::param("window", window, "at least 1"));
        }
        // NaN fails this test too.
        if !(target_fpr > 0.0 && target_fpr < 1.0) {
            return Err(Error::param("target_fpr", target_fpr, "in (0, 1)"));
        }
        let max_l = u64::from(PLAN_MAX_L).min(window) as usize;
        let mut rates = [0.0f64; PLAN_MAX_L as usize];
        let mut best: Option<(usize, ApbfParams)> = None;
        for k in 1..=MAX_K {
            let rates = &mut rates[..max_l];
            apbf::ideal_fprs_by_l(k, rates);
            for (l, _) in (1u32..)
                .zip(rates.iter())
                .take_while(|(_, r)| **r <= target_fpr)
            {
                let p = ApbfParams::new(k, l, window.div_ceil(u64::from(l)));
                let Ok(blocks) = p.blocks() else { continue };
                if best.is_none_or(|(b, _)| blocks < b) {
                    best = Some((blocks, p));
                }
            }
        }
        best.map(|(_, p)| p).ok_or(Error::param(
            "target_fpr",
            target_fpr,
            "reachable with k <= 64 in addressable memory",
        ))
    }

    /// Validates the parameters; returns the blocks they need:
    /// `(k + l) × ⌈slice_bits / 512⌉`.
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// assert_eq!(ApbfParams::new(2, 1, 100).blocks(), Ok(3));
    /// assert!(ApbfParams::new(65, 1, 100).blocks().is_err());
    /// assert!(ApbfParams::new(2, 0, 100).blocks().is_err());
    /// assert!(ApbfParams::new(2, 1, 0).blocks().is_err());
    /// assert!(ApbfParams::new(2, u32::MAX, 100).blocks().is_err());
    /// ```
    pub fn blocks(&self) -> Result<usize> {
        if self.k == 0 || self.k > MAX_K {
            return Err(Error::param("k", self.k, "in 1..=64"));
        }
        if self.l == 0 {
            return Err(Error::param("l", self.l, "at least 1"));
        }
        if self.g == 0 {
            return Err(Error::param("g", self.g, "at least 1"));
        }
        let slices = self.slices().ok_or(Error::param(
            "l",
            self.l,
            "at most u32::MAX - k (k + l slices, counted in u32)",
        ))?;
        let per_slice = store::blocks_named::<W1>(self.slice_bits, "slice_bits")?;
        let blocks = per_slice.checked_mul(slices as usize).ok_or(Error::param(
            "slice_bits",
            self.slice_bits,
            store::TOO_LARGE,
        ))?;
        store::bytes_for(blocks, "slice_bits", self.slice_bits)?;
        Ok(blocks)
    }

    /// The slices `k + l`, or `None` past `u32::MAX`.
    pub(crate) fn slices(&self) -> Option<u32> {
        self.k.checked_add(self.l)
    }

    /// The effective bits per slice: `slice_bits` rounded up to whole
    /// blocks.
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// assert_eq!(ApbfParams::new(4, 3, 100).effective_slice_bits(), 1024);
    /// ```
    pub fn effective_slice_bits(&self) -> usize {
        self.slice_bits.div_ceil(B).saturating_mul(B)
    }

    /// The insertions always found: `l·g` (saturating).
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// assert_eq!(ApbfParams::new(4, 3, 100).window(), 300);
    /// ```
    pub fn window(&self) -> u64 {
        u64::from(self.l).saturating_mul(self.g)
    }

    /// The expected false-positive rate after `n` insertions from empty
    /// ([`apbf::predicted_fpr`] at the effective slice size).
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// let p = ApbfParams::new(10, 7, 1000);
    /// assert_eq!(p.predicted_fpr(0), 0.0);
    /// assert!(p.predicted_fpr(100_000) < 0.002);
    /// ```
    pub fn predicted_fpr(&self, n: u64) -> f64 {
        apbf::predicted_fpr(self.k, self.l, self.g, self.effective_slice_bits(), n)
    }

    /// The steady-state rate just before a shift, the largest the filter
    /// settles at ([`apbf::steady_fpr`] at the effective slice size).
    ///
    /// ```
    /// use streambloom::apbf::ApbfParams;
    /// let p = ApbfParams::new(10, 7, 1000);
    /// assert!(p.steady_fpr() >= p.predicted_fpr(1_000_000));
    /// ```
    pub fn steady_fpr(&self) -> f64 {
        apbf::steady_fpr(self.k, self.l, self.g, self.effective_slice_bits())
    }
}

/// `⌈k·g / ln 2⌉`, saturating.
fn paper_slice_bits(k: u32, g: u64) -> usize {
    let bits = libm::ceil(f64::from(k) * g as f64 / core::f64::consts::LN_2);
    if bits >= usize::MAX as f64 {
        usize::MAX
    } else {
        bits as usize
    }
}
