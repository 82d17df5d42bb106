//! The Timing Bloom filter (TBF) and Block Timing Bloom filter (BTBF),
//! with inferential queries: "was this item among the last `w`
//! insertions?", answered with no false negatives ([`TimingBloom::contains`])
//! or as a posterior probability ([`TimingBloom::posterior`]) and the
//! answer of least expected penalty ([`TimingBloom::decide`]).
//!
//! Dautrich & Ravishankar, *Inferential Time-Decaying Bloom Filters*
//! (EDBT/ICDT 2013), §3 (the TBF and BTBF) and §4 (inference); the
//! digest `NOTES-timing.md` beside the paper lists its typos and the
//! choices made here.
//!
//! # What it does
//!
//! `m` timers of `bpt` bits (in cells of `W`), a clock `T_+` in
//! `0..=T_Ω` that advances once every `B` insertions (`b`, in `0..B`,
//! counts the insertions since it last did) and wraps, and an expired code
//! `T_ε = 2^bpt - 1`. [`insert`](TimingBloom::insert) (§3.2.1):
//!
//! 1. sets the item's `k` timers (its cells, placed as in the Stable
//!    filter: `k` distinct cells of one block, or `⌈k/2⌉` and `⌊k/2⌋` of
//!    two, with the `assign` kernel; or, [`TimingLayout::Unblocked`], `k`
//!    independent positions over all `m`, the paper's model) to `T_+`;
//! 2. advances `b`, and `T_+` when `b` reaches `B`;
//! 3. sweeps the next `⌈m/(B(𝒫+1))⌉` timers (NOTES T3: rounded up),
//!    marking `T_ε` those expired under the new clock.
//!
//! A timer of age `λ = (T_+ - T) mod (T_Ω + 1) >= 1` is *expired* when
//! `(λ - 1)B + b >= w`, a lower bound on the insertions since any item
//! that set it (Definition 9). Marking lags, so queries test the age
//! itself; the sweep only has to mark a timer before its age wraps, which
//! the `(𝒫 + 1)B` insertions between its expiry (at age `⌈w/B⌉ + 1` at
//! the latest) and its wrap (at age `T_Ω + 1 >= ⌈w/B⌉ + 2 + 𝒫`) guarantee,
//! since that many sweeps cover all `m` timers.
//!
//! The sweep and the queries run the timer kernels of the backend
//! ([`streambloom_kernels::arch::timers`]): `expire_run` marks the stale
//! timers of the sweep's run of cells (in AVX2 a half-block at a time),
//! and `oldest_count` reads an item's oldest age and how many of its timers
//! hold it from its block's selected cells (an age is a cyclic difference,
//! which the store's min-and-count kernel cannot order). The unblocked
//! layout's queries read its timers one by one, with the kernels' age.
//!
//! # Guarantees
//!
//! - **No false negatives** ([`contains`](TimingBloom::contains), §3.1.2):
//!   an item among the last `w` insertions is always reported present.
//! - **False positives** from overwritten timers and from the clock's
//!   granularity (an item inserted in the same block as the oldest
//!   in-window item looks in window for up to `B` more insertions).
//! - The **posterior** ([`posterior`](TimingBloom::posterior), Theorems
//!   2–5) is computed for the layout in use: `F(c, 0, B)`, the chance that
//!   the item's oldest timers were all overwritten in one block of
//!   insertions, counts a block's cells ([`analysis::timing::touched`]),
//!   and is cached per `c` (§4.4) for the stream's `D(B)`
//!   ([`TimingBloom::set_stream`]).
//!
//! # Measured
//!
//! **The paper's §5** runs with `streambloom-bench repro timing` (2^20
//! warm-up insertions, then 2^22 query-then-insert steps a trial, each
//! filter at its own best `k` in `1..=30`, the four synthetic streams,
//! 1 to 64 bits an item; the unblocked layout, then what each blocked
//! layout changes); its figures, beside the paper's, are in the README's
//! "Measured" section. The Posterior Error is under 0.05 at every point,
//! the standard query made no false negative in any trial, and inference
//! costs less than the standard query at every [Pos≈Neg] point.
//!
//! **Latency** (`streambloom-bench latency --target
//! timing-standard,timing-inferential,stable-observe --sizes 16K,1M,64M
//! --isa avx2`, Zen 3, shared machine at load 3, p50 per item of a query
//! then an insert of the same item, `k = 5`, 8-bit timers, one block,
//! `w = cells/4`): standard 41.5 / 43.5 / 182 ns and inferential
//! (evidence, posterior, decision) 73.4 / 76.7 / 179 ns at 16 KiB / 1 MiB /
//! 64 MiB (out of cache the miss dominates both, and the two differ by
//! the noise); the Stable filter's observe 9.1 / 9.9 / 100 ns in the same
//! run. The paper's Java implementation took 0.5–1.5 µs per query and
//! insert (§5.1.5): 7–36× this in cache, 2.7–8× at 64 MiB. The posterior's
//! `libm` exponentials are most of the inferential query's extra 32 ns
//! in cache.
//!
//! ```
//! use streambloom::timing::{TimingBloom, TimingParams};
//! use streambloom::analysis::timing::Distinct;
//! use streambloom::W8;
//! // The last 1000 insertions, clock ticks every 10, 3 timers an item.
//! let mut f = TimingBloom::<W8>::new(TimingParams::new(1 << 16, 3, 1000, 10, 2, 8), 42)?;
//! f.set_stream(Distinct::uniform(5000.0)?);
//! f.insert("a");
//! assert!(f.contains("a"));
//! let p = f.posterior("a", 1.0 / 5000.0)?;
//! assert!(p > 0.9);
//! for i in 0..2000u32 {
//!     f.insert(&i);
//! }
//! assert!(!f.contains("a"));
//! assert_eq!(f.posterior("a", 1.0 / 5000.0)?, 0.0);
//! # Ok::<(), streambloom::Error>(())
//! ```
//!
//! [`analysis::timing::touched`]: crate::analysis::timing::touched

mod bytes;
mod infer;
mod params;
#[cfg(test)]
mod tests;

pub use crate::hash::Layout;
pub use infer::Evidence;
pub use params::{TimingLayout, TimingParams};

use crate::analysis::timing::{self, Age, Distinct};
use crate::filter::keyed;
use crate::hash::{self, DefaultHasher, Placement};
use crate::store::{Cells, DefaultStorage, Storage};
use crate::{Block, Error, Isa, Result, Width};
use core::hash::{BuildHasher, Hash};
use infer::Inference;
use streambloom_kernels::arch::timers::{self, NEVER};
use streambloom_kernels::{Backend, Body, Mask, Ops, TimerClock, cell, prefetch, set_cell};

/// How [`TimingBloom`] places an item's timers in a block: `k` distinct
/// cells, each `k`-subset equally likely (the Stable filter's), which the
/// posterior's model assumes.
pub const PLACEMENT: Placement = Placement::Floyd;

/// Salt of the remixes that place [`TimingLayout::Unblocked`] timers:
/// timer `i` reads `mix64(h ^ (i + 1)·UNBLOCKED_SALT)`.
const UNBLOCKED_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

/// The clock and the sweep: with the blocks, all of a filter's state.
///
/// ```
/// use streambloom::timing::{Clock, TimingBloom, TimingParams};
/// use streambloom::W8;
/// let mut f = TimingBloom::<W8>::new(TimingParams::new(256, 2, 10, 4, 0, 8), 1)?;
/// for i in 0..5u32 {
///     f.insert(&i);
/// }
/// assert_eq!(f.clock(), Clock { now: 1, offset: 1, cursor: 5 * 256 / 4 % 256 });
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Clock {
    /// `T_+`, the current time, in `0..=T_Ω`.
    pub now: u32,
    /// `b`: insertions since `T_+` last advanced, in `0..B`.
    pub offset: u64,
    /// The next timer the sweep checks, in `0..m`.
    pub cursor: usize,
}

/// A Timing Bloom filter of `W`-bit cells in storage `S`, hashing with `H`
/// (see the [module docs](self)).
#[derive(Clone)]
pub struct TimingBloom<W: Width, S = DefaultStorage, H = DefaultHasher> {
    cells: Cells<W, S>,
    hasher: H,
    params: TimingParams,
    clock: Clock,
    /// Timers the sweep checks an insertion.
    sweep: usize,
    /// `T_ε`.
    expired: u32,
    /// `⌊w/B⌋` and `w mod B`, for [`threshold`](Self::threshold).
    window_blocks: u64,
    window_rest: u64,
    /// The posterior's model and cache.
    inference: Inference,
}

impl<W: Width, S: Storage, H> core::fmt::Debug for TimingBloom<W, S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TimingBloom")
            .field("params", &self.params)
            .field("cells", &self.cells)
            .field("clock", &self.clock)
            .field("stream", &self.inference.distinct())
            .finish_non_exhaustive()
    }
}

/// Two filters are equal when their parameters, clocks and timers are
/// (hashers and stream models are not compared).
impl<W: Width, S: Storage, H> PartialEq for TimingBloom<W, S, H> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.clock == other.clock
            && self.cells.blocks() == other.cells.blocks()
    }
}

#[cfg(feature = "alloc")]
impl<W: Width> TimingBloom<W> {
    /// An empty filter in owned memory (every timer expired), hashing with
    /// the default hasher seeded from `seed` ([`hash::seeded_hasher`]).
    ///
    #[doc = crate::filter::seed_doc!()]
    ///
    /// ```
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::W16;
    /// let f = TimingBloom::<W16>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 7)?;
    /// assert_eq!(f.cells(), 4096);
    /// assert!(TimingBloom::<W16>::new(TimingParams::new(4096, 3, 0, 1, 0, 8), 7).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(params: TimingParams, seed: u64) -> Result<Self> {
        Self::with_hasher(params, hash::seeded_hasher(seed))
    }
}

#[cfg(feature = "std")]
impl<W: Width> TimingBloom<W> {
    /// An empty filter in owned memory with random hash seeds from the
    /// operating system: the choice for untrusted keys.
    ///
    /// ```
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new_random(TimingParams::new(4096, 3, 100, 1, 0, 8))?;
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new_random(params: TimingParams) -> Result<Self> {
        Self::with_hasher(params, hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<W: Width, H: BuildHasher> TimingBloom<W, DefaultStorage, H> {
    /// An empty filter in owned memory hashing with `hasher`, any
    /// [`BuildHasher`].
    ///
    /// ```
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::W8;
    /// let hasher = std::collections::hash_map::RandomState::new();
    /// let mut f = TimingBloom::<W8, _, _>::with_hasher(TimingParams::new(4096, 3, 100, 1, 0, 8), hasher)?;
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_hasher(params: TimingParams, hasher: H) -> Result<Self> {
        let blocks = params.blocks::<W>()?;
        Self::with_storage(params, crate::store::zeroed(blocks)?, hasher)
    }
}

impl<W: Width, S: Storage, H: BuildHasher> TimingBloom<W, S, H> {
    /// An empty filter over caller-provided storage of exactly
    /// [`TimingParams::blocks`] blocks, whose timers it sets to expired; no
    /// allocator needed.
    ///
    /// ```
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::{hash, Block, Error, W8};
    /// let params = TimingParams::new(256, 3, 50, 1, 0, 8);
    /// let mut buf = [Block::ZERO; 4];
    /// let mut f = TimingBloom::<W8, _, _>::with_storage(params, &mut buf[..], hash::seeded_hasher(1))?;
    /// assert!(!f.contains_hash(9));
    /// f.insert_hash(9);
    /// assert!(f.contains_hash(9));
    /// let mut small = [Block::ZERO; 3];
    /// let e = TimingBloom::<W8, _, _>::with_storage(params, &mut small[..], hash::seeded_hasher(1)).unwrap_err();
    /// assert_eq!(e, Error::Length { name: "storage", expected: 4, found: 3 });
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_storage(params: TimingParams, storage: S, hasher: H) -> Result<Self> {
        let mut f = Self::restore(params, storage, hasher, Clock::default())?;
        f.clear();
        Ok(f)
    }

    /// A filter over caller-provided storage whose timers it adopts as they
    /// are, with the clock and sweep at `clock` ([`clock`](Self::clock) of
    /// the filter saved): saved and loaded again with the same parameters
    /// and hasher, it answers as the saved one did. Timers above `T_Ω`
    /// count as expired, and so do timers at `T_+` when `b = 0` (a full
    /// cycle old: no insertion was made in the current block). Errors: invalid parameters, storage of the wrong
    /// length, a clock outside its ranges. The stream model is
    /// [`Distinct::all_distinct`] until [`set_stream`](Self::set_stream).
    ///
    /// ```
    /// use streambloom::timing::{TimingBloom, TimingParams};
    /// use streambloom::{hash, W8};
    /// let params = TimingParams::new(4096, 3, 100, 4, 1, 8);
    /// let mut f = TimingBloom::<W8, _, _>::with_hasher(params, hash::seeded_hasher(5))?;
    /// f.insert("kept");
    /// let (saved, clock) = (f.blocks().to_vec(), f.clock());
    /// let mut g = TimingBloom::<W8, _, _>::restore(params, saved, hash::seeded_hasher(5), clock)?;
    /// assert!(g.contains("kept"));
    /// f.insert("next");
    /// g.insert("next");
    /// assert_eq!(f, g);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn restore(params: TimingParams, storage: S, hasher: H, clock: Clock) -> Result<Self> {
        let blocks = params.blocks::<W>()?;
        let cells = Cells::new(storage, blocks)?;
        let m = cells.cells();
        if clock.now > params.t_omega {
            return Err(Error::param("now", clock.now, "at most t_omega"));
        }
        if clock.offset >= params.block {
            return Err(Error::param(
                "offset",
                clock.offset,
                "less than the block size B",
            ));
        }
        if clock.cursor >= m {
            return Err(Error::param(
                "cursor",
                clock.cursor,
                "less than the timer count m",
            ));
        }
        Ok(TimingBloom {
            inference: Inference::new(&params, blocks, W::CELLS, Distinct::all_distinct()),
            sweep: params.sweep_len(m),
            expired: params.expired_code(),
            window_blocks: params.window / params.block,
            window_rest: params.window % params.block,
            cells,
            hasher,
            params,
            clock,
        })
    }

    /// The hash of `key` that the `*_hash` methods take.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_hash(f.hash("a"));
    /// assert!(f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    keyed! {
        /// Inserts `key`: its timers become `T_+`, the clock advances, the
        /// sweep marks what expired.
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert(&17u32);
        /// assert!(f.contains(&17u32));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn insert(&mut self, key) = insert_hash;

        /// The standard query (Definition 9): `false` only if `key` is
        /// certainly not among the last `w` insertions (one of its timers
        /// is expired by its age); no false negatives.
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// assert!(!f.contains("never"));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn contains(&self, key) -> bool = contains_hash;

        /// What `key`'s timers say: `r_x`, `c_x` and `λ_x` (paper §4).
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::analysis::timing::Age;
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert("a");
        /// let e = f.evidence("a");
        /// assert_eq!((e.age, e.distinct(), e.oldest_count()), (Age::Oldest(1), 3, 3));
        /// assert_eq!(f.evidence("b").age, Age::Expired);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn evidence(&self, key) -> Evidence = evidence_hash;

        /// The inferential query: `P(I_x < w | R_x)`, the posterior that
        /// `key` is among the last `w` insertions given its timers and its
        /// prior `prior = p_x` (the chance that an insertion is `key`),
        /// under the stream model of [`set_stream`](Self::set_stream)
        /// (Theorems 2–5 by [`timing::posterior`]). An error for a prior
        /// outside `[0, 1]`.
        ///
        /// It is the model's posterior: exact as far as the stream model
        /// and the placement's assumptions hold (other items' timers
        /// independent of this one's, `F` of §4.4), an estimate on a real
        /// stream, which [`decide`](Self::decide) answers at least
        /// expected penalty under. `F(c, 0, B)` for an item whose oldest
        /// timer is older than the current block is cached; for one whose
        /// timers were all set in the current block, `F(r, 0, b)` is
        /// computed on the query by [`timing::touched`], whose cost grows
        /// with `k` and `D(b)`.
        ///
        /// **Calibration.** The model assumes every other insertion lands
        /// on fresh timers. On a stream of keys that recur (a finite
        /// universe), the keys sharing a timer with `x` are a fixed set:
        /// its oldest timers set in block `λ` by them and untouched since
        /// are negatively correlated, where the model multiplies their
        /// probabilities. It then weighs "older than block `λ`" too high
        /// and is under-confident in its middle: on the paper's uniform
        /// stream (`U = w = 1024`, 8 bits an item, `k = 3`), queries whose
        /// posterior lies between 0.2 and 0.8 held items in the window
        /// more often than it said (by more than 0.03 on average), in every
        /// layout, the paper's unblocked one included (NOTES-timing §3
        /// found 0.05–0.10 with the paper's formulas); with 95 % of the
        /// insertions fresh keys it is calibrated (the test
        /// `posteriors_are_calibrated_on_fresh_keys_and_under_confident_on_recurring_ones`).
        /// Higher posteriors still mean items more often in the window,
        /// and [`decide`](Self::decide) costs less than the standard query
        /// on the paper's streams. `repro timing` prints the gap (its
        /// calibration column); a caller needing calibrated probabilities
        /// can map them on its own stream with
        /// [`PosteriorError::calibration`](timing::PosteriorError::calibration).
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert("a");
        /// assert!(f.posterior("a", 0.01)? > 0.99);
        /// assert_eq!(f.posterior("b", 0.01)?, 0.0);
        /// assert!(f.posterior("a", 1.01).is_err());
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn posterior(&self, key, prior: f64) -> Result<f64> = posterior_hash;

        /// The answer of least expected penalty (§2.6): present iff
        /// `cost_fp·(1 - P) <= cost_fn·P`, `P` the
        /// [`posterior`](Self::posterior). Errors: a prior outside
        /// `[0, 1]`, a negative penalty.
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert("a");
        /// assert!(f.decide("a", 0.01, 1.0, 1.0)?);
        /// assert!(!f.decide("b", 0.01, 1.0, 1.0)?);
        /// assert!(f.decide("a", 0.01, -1.0, 1.0).is_err());
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        fn decide(&self, key, prior: f64, cost_fp: f64, cost_fn: f64) -> Result<bool> = decide_hash;

        /// [`insert`](Self::insert) for each key, in order.
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert_batch(&["a", "b"]);
        /// assert!(f.contains("a") && f.contains("b"));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn insert_batch(&mut self, keys) = insert_batch_hash;

        /// [`contains`](Self::contains) for each key: `found[i]` answers
        /// for `keys[i]`; an error if the slices differ in length.
        ///
        /// ```
        /// # use streambloom::timing::{TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert("a");
        /// let mut found = [false; 2];
        /// f.contains_batch(&["a", "b"], &mut found)?;
        /// assert_eq!(found, [true, false]);
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn contains_batch(&self, keys, found: &mut [bool]) = contains_batch_hash;

        /// [`evidence`](Self::evidence) for each key; an error if the
        /// slices differ in length.
        ///
        /// ```
        /// # use streambloom::timing::{Evidence, TimingBloom, TimingParams};
        /// # use streambloom::W8;
        /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
        /// f.insert("a");
        /// let mut out = [Evidence::default(); 2];
        /// f.evidence_batch(&["a", "b"], &mut out)?;
        /// assert_eq!(out[0], f.evidence("a"));
        /// # Ok::<(), streambloom::Error>(())
        /// ```
        batch fn evidence_batch(&self, keys, out: &mut [Evidence]) = evidence_batch_hash;
    }

    /// [`insert`](Self::insert) for a key already hashed to `h` (any `u64`).
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_hash(8);
    /// assert!(f.contains_hash(8));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        let engine = self.cells.engine();
        if self.params.layout == TimingLayout::Unblocked {
            let (at, n) = self.positions(h);
            let now = self.clock.now;
            let blocks = self.cells.blocks_mut();
            for &p in &at[..n] {
                set_cell::<W>(&mut blocks[p / W::CELLS], p % W::CELLS, now);
            }
        } else if self.params.layout == TimingLayout::TwoBlocks {
            engine.run(SetTimers::<_, _, _, true> { filter: self, h });
        } else {
            engine.run(SetTimers::<_, _, _, false> { filter: self, h });
        }
        self.tick();
        self.sweep();
    }

    /// [`insert_batch`](Self::insert_batch) for keys already hashed: the
    /// blocks of the item [`LOOKAHEAD`](crate::store::LOOKAHEAD) places
    /// ahead are prefetched in filters of at least
    /// [`PREFETCH_MIN_BYTES`](crate::store::PREFETCH_MIN_BYTES); the state
    /// is item by item's.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_batch_hash(&[1, 2]);
    /// assert!(f.contains_hash(1));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn insert_batch_hash(&mut self, hashes: &[u64]) {
        let two = self.params.layout == TimingLayout::TwoBlocks;
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(two, hashes[i]),
            |i| self.insert_hash(hashes[i])
        );
    }

    /// [`contains`](Self::contains) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// assert!(!f.contains_hash(3));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, h: u64) -> bool {
        if self.params.layout == TimingLayout::Unblocked {
            let (at, n) = self.positions(h);
            let threshold = self.threshold();
            let blocks = self.cells.blocks();
            at[..n]
                .iter()
                .all(|&p| self.age(cell::<W>(&blocks[p / W::CELLS], p % W::CELLS)) < threshold)
        } else if self.params.layout == TimingLayout::TwoBlocks {
            self.fresh::<true>(h)
        } else {
            self.fresh::<false>(h)
        }
    }

    /// [`contains_batch`](Self::contains_batch) for keys already hashed,
    /// prefetching as [`insert_batch_hash`](Self::insert_batch_hash).
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_hash(1);
    /// let mut found = [false; 2];
    /// f.contains_batch_hash(&[1, 2], &mut found)?;
    /// assert_eq!(found, [true, false]);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn contains_batch_hash(&self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        Error::check_len("found", hashes.len(), found.len())?;
        let two = self.params.layout == TimingLayout::TwoBlocks;
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(two, hashes[i]),
            |i| found[i] = self.contains_hash(hashes[i])
        );
        Ok(())
    }

    /// [`evidence`](Self::evidence) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::analysis::timing::Age;
    /// # use streambloom::W8;
    /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// assert_eq!(f.evidence_hash(3).age, Age::Expired);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn evidence_hash(&self, h: u64) -> Evidence {
        let threshold = self.threshold();
        let mut e = Evidence::default();
        let mut oldest: Option<u64> = None;
        if self.params.layout == TimingLayout::Unblocked {
            let (at, n) = self.positions(h);
            let blocks = self.cells.blocks();
            for &p in &at[..n] {
                e.distinct[0] += 1;
                let age = self.age(cell::<W>(&blocks[p / W::CELLS], p % W::CELLS));
                if oldest.is_none_or(|o| age > o) {
                    oldest = Some(age);
                    e.oldest[0] = 0;
                }
                if oldest == Some(age) {
                    e.oldest[0] += 1;
                }
            }
        } else {
            let (probes, clock) = (self.probes(h), self.timer_clock());
            let kernels = self.cells.kernels();
            for (half, probe) in [Some(probes.first), probes.second].iter().enumerate() {
                let Some(probe) = probe else { continue };
                let found = kernels.oldest_count(self.cells.block(probe.block), probe.mask, clock);
                if found.count == 0 {
                    continue;
                }
                let age = wide_age(found.oldest);
                e.distinct[half] = probe.mask.count();
                if oldest.is_none_or(|o| age > o) {
                    oldest = Some(age);
                    e.oldest = [0, 0];
                }
                if oldest == Some(age) {
                    e.oldest[half] += found.count;
                }
            }
        }
        match oldest {
            Some(age) if age < threshold => e.age = Age::Oldest(age),
            _ => e.oldest = [0, 0],
        }
        e
    }

    /// [`evidence_batch`](Self::evidence_batch) for keys already hashed.
    ///
    /// ```
    /// # use streambloom::timing::{Evidence, TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// let mut out = [Evidence::default(); 1];
    /// f.evidence_batch_hash(&[5], &mut out)?;
    /// assert_eq!(out[0], f.evidence_hash(5));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn evidence_batch_hash(&self, hashes: &[u64], out: &mut [Evidence]) -> Result<()> {
        Error::check_len("out", hashes.len(), out.len())?;
        let two = self.params.layout == TimingLayout::TwoBlocks;
        crate::filter::batch!(
            hashes.len(),
            self.cells.prefetching(),
            |i| self.prefetch_hash(two, hashes[i]),
            |i| out[i] = self.evidence_hash(hashes[i])
        );
        Ok(())
    }

    /// [`posterior`](Self::posterior) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_hash(4);
    /// assert!(f.posterior_hash(4, 0.5)? > 0.99);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn posterior_hash(&self, h: u64, prior: f64) -> Result<f64> {
        self.posterior_of(&self.evidence_hash(h), prior)
    }

    /// The posterior of an item whose timers said `evidence` (now, under
    /// this clock), for prior `prior`: what
    /// [`posterior_hash`](Self::posterior_hash) computes after reading
    /// them, for a caller that read them once for several priors or
    /// penalties. Errors: a prior outside `[0, 1]`, and evidence this
    /// filter's timers cannot give ([`check_evidence`](Self::check_evidence)).
    ///
    /// ```
    /// # use streambloom::timing::{Evidence, TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert_hash(4);
    /// let e = f.evidence_hash(4);
    /// assert_eq!(f.posterior_of(&e, 0.1)?, f.posterior_hash(4, 0.1)?);
    /// // Four oldest timers of an item that has three: refused.
    /// assert!(f.posterior_of(&Evidence { oldest: [4, 0], ..e }, 0.1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn posterior_of(&self, evidence: &Evidence, prior: f64) -> Result<f64> {
        self.check_evidence(evidence)?;
        let (touched_oldest, touched_all) = match evidence.age {
            Age::Expired => (1.0, 1.0),
            Age::Oldest(0) => (
                1.0,
                self.inference
                    .touched_recently(evidence.distinct, self.clock.offset),
            ),
            Age::Oldest(_) => (self.inference.touched_in_block(evidence.oldest), 1.0),
        };
        timing::posterior(
            prior,
            self.params.window,
            self.params.block,
            self.clock.offset,
            evidence.age,
            touched_oldest,
            touched_all,
        )
    }

    /// Whether `evidence` is what this filter's timers can say of an item
    /// ([`evidence`](Self::evidence) gives only such): at most `k` distinct
    /// timers, and when some are in a second block at most the halves of
    /// `k` ([`Layout::halves`](crate::hash::Layout::halves)) in each, with
    /// the second only in [`TimingLayout::TwoBlocks`]; in each block at
    /// most as many oldest timers as distinct ones. An
    /// [`Error::Parameter`] naming `evidence` otherwise: the public fields
    /// make any value constructible, and the posterior reads the oldest
    /// counts as an index.
    ///
    /// ```
    /// # use streambloom::timing::{Evidence, TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// assert!(f.check_evidence(&f.evidence("a")).is_ok());
    /// let bad = Evidence { distinct: [u32::MAX, 0], ..Evidence::default() };
    /// assert!(f.check_evidence(&bad).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn check_evidence(&self, evidence: &Evidence) -> Result<()> {
        let k = self.params.k;
        let [d1, d2] = evidence.distinct;
        let [o1, o2] = evidence.oldest;
        let blocks_fit = if d2 == 0 {
            d1 <= k
        } else {
            let (k1, k2) = hash::Layout::TwoBlocks.halves(k);
            self.params.layout == TimingLayout::TwoBlocks && d1 <= k1 && d2 <= k2
        };
        if blocks_fit && o1 <= d1 && o2 <= d2 {
            Ok(())
        } else {
            Err(Error::param(
                "evidence",
                u64::from(evidence.distinct()),
                "at most k distinct timers (the halves of k in two blocks, the second only in \
                 TwoBlocks), and at most as many oldest as distinct in each block",
            ))
        }
    }

    /// [`decide`](Self::decide) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// assert!(!f.decide_hash(4, 0.5, 1.0, 1.0)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn decide_hash(&self, h: u64, prior: f64, cost_fp: f64, cost_fn: f64) -> Result<bool> {
        // Penalties checked before the timers are read.
        timing::decide(0.5, cost_fp, cost_fn)?;
        timing::decide(self.posterior_hash(h, prior)?, cost_fp, cost_fn)
    }

    /// Sets the stream model the posteriors assume: `D(j)`, the expected
    /// distinct items among `j` insertions ([`Distinct`]), and recomputes
    /// the cache of `F(c, 0, B)` (§4.4). The default is
    /// [`Distinct::all_distinct`].
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::analysis::timing::Distinct;
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 10, 0, 8), 1)?;
    /// f.set_stream(Distinct::uniform(50.0)?);
    /// assert_eq!(f.stream(), Distinct::uniform(50.0)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set_stream(&mut self, distinct: Distinct) {
        self.inference = Inference::new(&self.params, self.cells.block_count(), W::CELLS, distinct);
    }

    /// The stream model of the posteriors ([`set_stream`](Self::set_stream)).
    pub fn stream(&self) -> Distinct {
        self.inference.distinct()
    }

    /// Empties the filter: every timer expired, the clock and sweep at 0.
    ///
    /// ```
    /// # use streambloom::timing::{Clock, TimingBloom, TimingParams};
    /// # use streambloom::W8;
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.insert("a");
    /// f.clear();
    /// assert!(!f.contains("a"));
    /// assert_eq!(f.clock(), Clock::default());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        let expired = self.expired;
        for block in self.cells.blocks_mut() {
            for i in 0..W::CELLS {
                set_cell::<W>(block, i, expired);
            }
        }
        self.clock = Clock::default();
    }

    /// Forces the kernel implementation; [`Error::Unsupported`] if this CPU
    /// lacks it.
    ///
    /// ```
    /// # use streambloom::timing::{TimingBloom, TimingParams};
    /// # use streambloom::{Isa, W8};
    /// let mut f = TimingBloom::<W8>::new(TimingParams::new(4096, 3, 100, 1, 0, 8), 1)?;
    /// f.set_isa(Isa::Scalar)?;
    /// assert_eq!(f.isa(), Isa::Scalar);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.cells.set_isa(isa)
    }

    /// The kernel implementation in use.
    pub fn isa(&self) -> Isa {
        self.cells.isa()
    }

    /// The parameters the filter was built with.
    pub fn params(&self) -> &TimingParams {
        &self.params
    }

    /// The effective timer count `m = blocks × W::CELLS`.
    pub fn cells(&self) -> usize {
        self.cells.cells()
    }

    /// Timers `k` an item.
    pub fn k(&self) -> u32 {
        self.params.k
    }

    /// The clock and sweep: with [`blocks`](Self::blocks), what
    /// [`restore`](Self::restore) needs.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The blocks, e.g. to write them out (and [`restore`](Self::restore)).
    pub fn blocks(&self) -> &[Block] {
        self.cells.blocks()
    }

    /// Item `h`'s distinct timers under [`TimingLayout::Unblocked`]: `k`
    /// positions over all `m`, each by multiply-shift from its own remix
    /// of `h`, repeats collapsed (`R_x`); the first `n` of the array.
    #[inline(always)]
    fn positions(&self, h: u64) -> ([usize; 64], usize) {
        let m = self.cells.cells() as u128;
        let mut at = [0usize; 64];
        let mut n = 0;
        for i in 0..u64::from(self.params.k) {
            let x = hash::mix64(h ^ UNBLOCKED_SALT.wrapping_mul(i + 1));
            let p = ((u128::from(x) * m) >> 64) as usize;
            if !at[..n].contains(&p) {
                at[n] = p;
                n += 1;
            }
        }
        (at, n)
    }

    /// Where item `h` lives (the halves merged when they share a block, so
    /// that no timer is counted twice).
    #[inline(always)]
    fn probes(&self, h: u64) -> hash::Probes<W> {
        let placed = hash::Placed {
            own: PLACEMENT,
            placement: PLACEMENT,
        };
        hash::probes_fixed::<W, _>(
            self.params.layout == TimingLayout::TwoBlocks,
            h,
            self.cells.block_count(),
            self.params.k,
            &placed,
        )
    }

    /// The age `λ` of timer value `v`: `(T_+ - v) mod (T_Ω + 1)` (in
    /// `u32`: `T_+ + T_Ω + 1 < 2^32` as `T_Ω <= 2^31 - 2`), or
    /// `u64::MAX` (never fresh) for `T_ε`, any value above `T_Ω`, and
    /// `T_+` itself when `b = 0`.
    ///
    /// Age 0 needs an insertion in the current block (b >= 1); at `b = 0`
    /// the timer is `T_Ω + 1` blocks old, a state only restored storage can
    /// hold (the sweep marks timers before they wrap). The timer kernels'
    /// definition ([`timers::age`]).
    #[inline(always)]
    fn age(&self, v: u32) -> u64 {
        wide_age(timers::age(self.timer_clock(), v))
    }

    /// The clock as the timer kernels read it.
    #[inline(always)]
    fn timer_clock(&self) -> TimerClock {
        TimerClock {
            now: self.clock.now,
            top: self.params.t_omega,
            fresh_block: self.clock.offset == 0,
        }
    }

    /// The least expired age under the current clock: `λ >= th` iff
    /// `(λ - 1)B + b >= w`, `th = ⌈(w - b)/B⌉ + 1` (1 once `b >= w`).
    /// With `w = qB + r` and `b < B`, `⌈(w - b)/B⌉` is `q + 1` when
    /// `b < r` and `q` otherwise (0 when `b >= w`, where `q = 0`): no
    /// division per item.
    #[inline(always)]
    fn threshold(&self) -> u64 {
        1 + self.window_blocks + u64::from(self.clock.offset < self.window_rest)
    }

    /// Whether none of item `h`'s timers is expired by its age.
    #[inline(always)]
    fn fresh<const TWO: bool>(&self, h: u64) -> bool {
        let (probes, clock) = (self.probes(h), self.timer_clock());
        let threshold = self.threshold();
        let kernels = self.cells.kernels();
        let young = |block: usize, mask: W::Mask| {
            let found = kernels.oldest_count(self.cells.block(block), mask, clock);
            wide_age(found.oldest) < threshold
        };
        young(probes.first.block, probes.first.mask)
            && (!TWO || probes.second.is_none_or(|s| young(s.block, s.mask)))
    }

    /// Prefetches the blocks of item `h`.
    #[inline(always)]
    fn prefetch_hash(&self, two: bool, h: u64) {
        let blocks = self.cells.block_count();
        if self.params.layout == TimingLayout::Unblocked {
            let (at, n) = self.positions(h);
            for &p in &at[..n] {
                prefetch(self.cells.block(p / W::CELLS));
            }
            return;
        }
        prefetch(self.cells.block(hash::block_of(h, blocks)));
        if two {
            prefetch(self.cells.block(hash::second_block_of(h, blocks)));
        }
    }

    /// Sets item `h`'s timers to `T_+` with `ops`'s kernels.
    #[inline(always)]
    fn set_timers<B: Backend, const TWO: bool>(&mut self, ops: Ops<W, B>, h: u64) {
        let probes = self.probes(h);
        let now = self.clock.now;
        ops.assign(
            self.cells.block_mut(probes.first.block),
            probes.first.mask,
            now,
        );
        if TWO && let Some(s) = probes.second {
            ops.assign(self.cells.block_mut(s.block), s.mask, now);
        }
    }

    /// Counts an insertion: `b` advances, and `T_+` (wrapping) when `b`
    /// reaches `B`.
    #[inline(always)]
    fn tick(&mut self) {
        self.clock.offset += 1;
        if self.clock.offset == self.params.block {
            self.clock.offset = 0;
            self.clock.now = if self.clock.now == self.params.t_omega {
                0
            } else {
                self.clock.now + 1
            };
        }
    }

    /// Marks `T_ε` every expired timer among the next
    /// [`sweep_len`](TimingParams::sweep_len) from the cursor (wrapping),
    /// with the `expire_run` kernel, and advances the cursor past them.
    /// Ages never reach `T_Ω + 1`, so a threshold above it expires by age
    /// no timer: the kernel's limit is the threshold capped there.
    #[inline(always)]
    fn sweep(&mut self) {
        let top = self.params.t_omega;
        let limit = self.threshold().min(u64::from(top) + 1) as u32;
        let (clock, m, at) = (self.timer_clock(), self.cells.cells(), self.clock.cursor);
        let kernels = self.cells.kernels();
        kernels.expire_run(
            self.cells.blocks_mut(),
            at,
            self.sweep,
            clock,
            limit,
            self.expired,
        );
        let next = at + self.sweep;
        self.clock.cursor = if next >= m { next - m } else { next };
    }
}

/// Setting an item's timers ([`TimingBloom::insert_hash`]) as one
/// [`Body`].
struct SetTimers<'a, W: Width, S, H, const TWO: bool> {
    filter: &'a mut TimingBloom<W, S, H>,
    h: u64,
}

impl<W: Width, S: Storage, H: BuildHasher, const TWO: bool> Body for SetTimers<'_, W, S, H, TWO> {
    type Output = ();
    #[inline(always)]
    fn run<B: Backend>(self, backend: B) {
        self.filter
            .set_timers::<B, TWO>(Ops::<W, B>::new(backend), self.h);
    }
}

/// A kernel's age as the filter compares it: [`NEVER`] above every
/// threshold.
#[inline(always)]
fn wide_age(age: u32) -> u64 {
    if age == NEVER {
        u64::MAX
    } else {
        u64::from(age)
    }
}
