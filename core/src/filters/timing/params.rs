//! Parameters of a [`TimingBloom`](super::TimingBloom): validation (paper
//! §3.2.3 and NOTES-timing §2) and the block-size rule of the experiments
//! (NOTES-timing §4, step 3).

use crate::hash::Layout;
use crate::{Error, Result, Width, store};

/// Where an item's `k` timers go.
///
/// ```
/// use streambloom::timing::TimingLayout;
/// use streambloom::Layout;
/// assert_eq!(TimingLayout::from(Layout::TwoBlocks), TimingLayout::TwoBlocks);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimingLayout {
    /// `k` distinct cells of one block ([`Layout::OneBlock`]): one cache
    /// line an item.
    OneBlock,
    /// `⌈k/2⌉` and `⌊k/2⌋` distinct cells of two blocks
    /// ([`Layout::TwoBlocks`]).
    TwoBlocks,
    /// `k` independent positions over all `m` timers, repeats collapsed:
    /// the paper's model (§3, Definition 12), up to `k` cache lines an
    /// item; what reproducing its §5 needs (NOTES-timing §6).
    Unblocked,
}

impl From<Layout> for TimingLayout {
    fn from(layout: Layout) -> TimingLayout {
        match layout {
            Layout::OneBlock => TimingLayout::OneBlock,
            Layout::TwoBlocks => TimingLayout::TwoBlocks,
        }
    }
}

/// The parameters of a [`TimingBloom`](super::TimingBloom).
///
/// `cells` is rounded up to whole blocks (`m = blocks × W::CELLS`). The
/// clock `T_+` runs through `0..=t_omega` and advances once every `block`
/// insertions; a timer of `bits_per_timer` bits holds a time or the
/// expired code `T_ε = 2^bpt - 1`, so `t_omega + 2 <= 2^bpt`; and
/// `t_omega >= ⌈window/block⌉ + 1 + padding` (Definition 8: the padding
/// is how far `T_Ω` exceeds its least value, and it sets the sweep: each
/// insertion checks `⌈m / (block·(padding + 1))⌉` timers).
///
/// ```
/// use streambloom::timing::TimingParams;
/// use streambloom::W8;
/// let p = TimingParams::new(1 << 12, 3, 1000, 10, 2, 8);
/// assert_eq!(p.t_omega, 100 + 1 + 2);
/// assert_eq!(p.blocks::<W8>(), Ok(64));
/// assert!(TimingParams { t_omega: 102, ..p }.blocks::<W8>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimingParams {
    /// Requested number of timers (at least 1), rounded up to whole blocks.
    pub cells: usize,
    /// Timers set per item: `1 <= k <= W::CELLS` (and `k <= 64`) in
    /// blocks, `1 <= k <= 64` unblocked.
    pub k: u32,
    /// The window `w`, in insertions: the standard query answers "was the
    /// item among the last `w` insertions?" (`w >= 1`).
    pub window: u64,
    /// Insertions `B` per clock tick (`B >= 1`; 1 is the plain TBF).
    pub block: u64,
    /// The padding `𝒫 >= 0` (paper §3.1.3): a larger padding sweeps fewer
    /// timers per insertion and needs a larger `t_omega`.
    pub padding: u64,
    /// The largest time `T_Ω`: `⌈w/B⌉ + 1 + 𝒫 <= T_Ω <= 2^bpt - 2`.
    pub t_omega: u32,
    /// Bits a timer uses (`2 <= bpt <= W::BITS`); the cell still takes
    /// `W::BITS` bits.
    pub bits_per_timer: u32,
    /// One block, two, or unblocked ([`TimingLayout`]).
    pub layout: TimingLayout,
}

impl TimingParams {
    /// One-block parameters with the least `t_omega` for the window, block
    /// and padding (saturated at `u32::MAX` when it would not fit, which
    /// validation then refuses).
    ///
    /// ```
    /// use streambloom::timing::TimingParams;
    /// let p = TimingParams::new(4096, 4, 100, 1, 0, 8);
    /// assert_eq!(p.t_omega, 101);
    /// ```
    pub fn new(
        cells: usize,
        k: u32,
        window: u64,
        block: u64,
        padding: u64,
        bits_per_timer: u32,
    ) -> TimingParams {
        let t_omega = least_t_omega(window, block, padding)
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or(u32::MAX);
        TimingParams {
            cells,
            k,
            window,
            block,
            padding,
            t_omega,
            bits_per_timer,
            layout: TimingLayout::OneBlock,
        }
    }

    /// The experiments' parameters (NOTES-timing §4): for `m` timers of
    /// `bits_per_timer` bits and `k` an item, the padding that sweeps at
    /// most `k` timers an insertion, `𝒫(B) = max(0, ⌈m/(kB)⌉ - 1)`, and the
    /// smallest block `B` with `⌈w/B⌉ + 1 + 𝒫(B) <= 2^bpt - 2`, then the
    /// least `t_omega`. The paper does not state its `B`; this is the rule
    /// of the digest. Errors: as [`blocks`](Self::blocks) (it validates the
    /// result) and `window = 0`.
    ///
    /// ```
    /// use streambloom::timing::TimingParams;
    /// use streambloom::{Layout, W8};
    /// // NOTES-timing §4: w = 2^16, 8 bits an item, k = 3: m = 174762, B = 21846, 𝒫 = 2.
    /// let p = TimingParams::plan::<W8>(174_762, 3, 1 << 16, 3, Layout::OneBlock)?;
    /// assert_eq!((p.block, p.padding), (21846, 2));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn plan<W: Width>(
        cells: usize,
        k: u32,
        window: u64,
        bits_per_timer: u32,
        layout: impl Into<TimingLayout>,
    ) -> Result<TimingParams> {
        let layout = layout.into();
        if window == 0 {
            return Err(Error::param("window", window, "at least 1"));
        }
        if k == 0 {
            return Err(Error::param(
                "k",
                k,
                "in 1..=W::CELLS, the cells of a block",
            ));
        }
        if !(2..=W::BITS.min(31)).contains(&bits_per_timer) {
            return Err(Error::param(
                "bits_per_timer",
                bits_per_timer,
                "in 2..=W::BITS, the cell width (and at most 31)",
            ));
        }
        let limit = (1u64 << bits_per_timer) - 2;
        // Saturating: 2^56 blocks of 256 two-bit cells, or `k·b` near a
        // window of 2^64, would overflow (found by an audit sweep); past
        // `u64::MAX` cells `blocks` refuses the plan below anyway.
        let m = (store::blocks_for::<W>(cells)? as u64).saturating_mul(W::CELLS as u64);
        let padding = |b: u64| m.div_ceil(u64::from(k).saturating_mul(b)).saturating_sub(1);
        let fits = |b: u64| least_t_omega(window, b, padding(b)).is_some_and(|t| t <= limit);
        let hi = usize::try_from(window.max(m)).unwrap_or(usize::MAX);
        let block = crate::search::first(1, hi, |b| fits(b as u64)).ok_or(Error::param(
            "bits_per_timer",
            bits_per_timer,
            "enough for the window at some block size",
        ))? as u64;
        let params = TimingParams {
            layout,
            ..TimingParams::new(cells, k, window, block, padding(block), bits_per_timer)
        };
        params.blocks::<W>()?;
        Ok(params)
    }

    /// Checks the parameters for cells of width `W` and returns the number
    /// of blocks they need.
    ///
    /// ```
    /// use streambloom::timing::TimingParams;
    /// use streambloom::{Error, Value, W8};
    /// let p = TimingParams::new(100, 3, 10, 1, 0, 8);
    /// assert_eq!(p.blocks::<W8>(), Ok(2));
    /// assert_eq!(
    ///     TimingParams { window: 0, ..p }.blocks::<W8>(),
    ///     Err(Error::Parameter { name: "window", given: Value::Int(0), allowed: "at least 1" }),
    /// );
    /// ```
    pub fn blocks<W: Width>(&self) -> Result<usize> {
        if !(2..=W::BITS.min(31)).contains(&self.bits_per_timer) {
            return Err(Error::param(
                "bits_per_timer",
                self.bits_per_timer,
                "in 2..=W::BITS, the cell width (and at most 31)",
            ));
        }
        let most = if self.layout == TimingLayout::Unblocked {
            64
        } else {
            W::CELLS.min(64)
        };
        if self.k == 0 || self.k as usize > most {
            return Err(Error::param(
                "k",
                self.k,
                "in 1..=W::CELLS, the cells of a block (and at most 64; 1..=64 unblocked)",
            ));
        }
        if self.window == 0 {
            return Err(Error::param("window", self.window, "at least 1"));
        }
        if self.block == 0 {
            return Err(Error::param("block", self.block, "at least 1"));
        }
        let least = least_t_omega(self.window, self.block, self.padding).ok_or(Error::param(
            "padding",
            self.padding,
            "small enough that ⌈window/block⌉ + 1 + padding fits in 64 bits",
        ))?;
        if u64::from(self.t_omega) < least {
            return Err(Error::param(
                "t_omega",
                self.t_omega,
                "at least ⌈window/block⌉ + 1 + padding",
            ));
        }
        if u64::from(self.t_omega) + 2 > 1u64 << self.bits_per_timer {
            return Err(Error::param(
                "t_omega",
                self.t_omega,
                "at most 2^bits_per_timer - 2 (the times and the expired code fit in a timer)",
            ));
        }
        store::blocks_for::<W>(self.cells)
    }

    /// The expired code `T_ε = 2^bpt - 1` (all ones).
    ///
    /// ```
    /// use streambloom::timing::TimingParams;
    /// assert_eq!(TimingParams::new(100, 3, 10, 1, 0, 8).expired_code(), 255);
    /// ```
    pub fn expired_code(&self) -> u32 {
        ((1u64 << self.bits_per_timer.min(32)) - 1) as u32
    }

    /// Timers the sweep checks an insertion, for `m` timers:
    /// `⌈m / (B(𝒫 + 1))⌉` (rounded up, NOTES-timing T3), at most `m`.
    ///
    /// ```
    /// use streambloom::timing::TimingParams;
    /// assert_eq!(TimingParams::new(100, 3, 10, 4, 2, 8).sweep_len(1000), 84);
    /// ```
    pub fn sweep_len(&self, m: usize) -> usize {
        let per = u128::from(self.block.max(1)) * (u128::from(self.padding) + 1);
        let len = (m as u128).div_ceil(per);
        // `len <= m`, a usize.
        len as usize
    }
}

/// `⌈w/B⌉ + 1 + 𝒫`, the least `T_Ω`, if it fits in 64 bits.
fn least_t_omega(window: u64, block: u64, padding: u64) -> Option<u64> {
    if block == 0 {
        return None;
    }
    window.div_ceil(block).checked_add(1)?.checked_add(padding)
}
