//! The Importance-aware Bloom filter: duplicate detection over a stream
//! where important items are remembered longer.
//!
//! Kulkarni, Boraskar, Gabale and Kulkarni, *Importance-aware Bloom Filter
//! for Set Membership Queries in Streaming Data*: §III (IBF-2C, Alg. 1;
//! IBF-MC, Alg. 2) and §IV-C (IBF-H).
//!
//! # What it does
//!
//! A [`StableBloom`] whose inserts depend on the item's importance: cells
//! of `d` bits (`Max = 2^d − 1`), and for each item
//! [`ImportanceBloom::observe`]:
//!
//! 1. probes the item's `K` cells: it *looks like a duplicate* iff none is
//!    zero (the algorithm boxes lack the `else` that makes the answer
//!    "no" only then; the prose, line 90, is followed);
//! 2. evicts: `P` consecutive cells from a random start decremented (or
//!    the sweep, or the random run in the interleaved order), as the
//!    Stable filter does ([`Eviction::Random`], [`Eviction::Sweep`],
//!    [`Eviction::Interleaved`]), or `P` non-zero cells each drawn with
//!    probability inversely proportional to its value
//!    ([`Eviction::ByValue`], IBF-H);
//! 3. sets the item's cells by its [`Insert`] policy: to `Max`
//!    (M-insert, the Stable filter), to `Max` or `h = ⌊Max/2⌋` by a
//!    two-class threshold (M/2-insert, IBF-2C; a cell already above `h`
//!    keeps its value, the max semantics of the Markov chain, line 145),
//!    or to `max(cell, f(importance))` (Imp-insert, IBF-MC and IBF-H),
//!    `f` the [`ImportanceMap`].
//!
//! Cells are the Stable filter's (blocked, in one or two blocks an item:
//! [`Layout`]); the hot loops are its own, run per instruction set.
//!
//! # Choices where the paper is silent or wrong
//!
//! - `M/2` with `Max` odd: `h = ⌊Max/2⌋` (integer division).
//! - Which IBF-2C items are important: those with importance at least
//!   [`Insert::TwoClass`]'s `important_from` (the digest's choice for
//!   importance uniform on `1..=Z` is `Z/2 + 1`, two equally likely
//!   classes, as the chain assumes).
//! - The IBF-MC map: [`ImportanceMap::Linear`] is `f(i) = ⌈i·Max/Z⌉` on
//!   `1..=Z`; importance outside a map's domain is an error (the paper's
//!   YouTube data has importance 0: shift it by one).
//! - IBF-H's sampling ("probability inversely proportional to the value,
//!   zeros excluded", §IV-C): by rejection, which keeps the update `O(P)`
//!   on average where exact sampling is `O(m)`. A uniform cell is drawn;
//!   a zero is rejected; a cell of value `v` is accepted (and decremented)
//!   with probability `1/v`. An accepted cell is then exactly a cell drawn
//!   with probability `∝ 1/v` among the non-zero ones. At most
//!   [`BY_VALUE_TRIES`]`·P` draws an item, so an (almost) empty filter
//!   costs bounded time; the tests check the law of the decremented
//!   values with a χ² test.
//!
//! # Models
//!
//! [`crate::analysis::importance`] solves the paper's Markov chain (and
//! the exact one of this order of operations) for the stationary zero
//! fraction `V_0`; the tests hold the measured zero fraction of IBF-2C and
//! IBF-MC under random eviction to it. The chain models random (and
//! interleaved) eviction only: under the sweep the zero fraction is not
//! `V_0`, and the delivered rate can fall below the paper's `(1 − V_0)^K`. Its blocked model ([`layout_fpr`](crate::analysis::importance::layout_fpr))
//! gives the false-positive rate the filter delivers on distinct keys for
//! the stream's importances, which [`ImportanceParams::plan`] plans by
//! (`d`, `K` and `P` for a memory budget, a target rate, the policies and
//! the importances' frequencies; the tests measure the delivered rate).
//!
//! ```
//! use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
//! use streambloom::stable::Layout;
//! use streambloom::W8;
//! let params = ImportanceParams {
//!     cells: 16_384,
//!     bits_per_cell: 3,
//!     k: 5,
//!     p: 10,
//!     eviction: Eviction::Random,
//!     layout: Layout::TwoBlocks,
//!     insert: Insert::ByImportance,
//!     map: ImportanceMap::Linear { top: 50 },
//! };
//! let mut f = ImportanceBloom::<W8>::new(params, 7)?;
//! assert!(!f.observe("payment", 50)?); // new
//! assert!(f.observe("payment", 50)?); // seen
//! assert!(f.observe("click", 0).is_err()); // importance outside 1..=50
//! # Ok::<(), streambloom::Error>(())
//! ```

mod bytes;
#[cfg(feature = "alloc")]
mod plan;
#[cfg(test)]
mod tests;

pub use crate::hash::Layout;

use crate::hash::DefaultHasher;
use crate::stable::{StableBloom, StableParams};
use crate::store::{DefaultStorage, Storage};
use crate::{Block, Error, Isa, Result, Width};
use core::hash::{BuildHasher, Hash};

/// Items a batch maps to levels (and, keyed, hashes) at a time, on the
/// stack: the `no_std` batch forms allocate nothing.
const CHUNK: usize = 64;

/// The most uniform draws [`Eviction::ByValue`] makes per decrement it
/// owes: `BY_VALUE_TRIES·P` an item. At the paper's Table II state a draw
/// is accepted with probability about 0.18 (5.5 draws a decrement), so the
/// cap binds only when almost every cell is zero.
///
/// ```
/// assert_eq!(streambloom::importance::BY_VALUE_TRIES, 64);
/// ```
pub const BY_VALUE_TRIES: usize = 64;

/// How an item's cells are raised (§III).
///
/// ```
/// use streambloom::importance::Insert;
/// let two_class = Insert::TwoClass { important_from: 26 }; // IBF-2C, importance 1..=50
/// assert_ne!(two_class, Insert::ByImportance);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// M-insert: every item sets its cells to `Max` (the Stable filter).
    Max,
    /// M/2-insert (IBF-2C, Alg. 1): an item of importance at least
    /// `important_from` sets its cells to `Max`, any other raises them to
    /// at least `⌊Max/2⌋`. Needs cells of at least 2 bits (with one,
    /// `⌊Max/2⌋ = 0` and an unimportant item would set nothing): the
    /// constructors refuse 1-bit cells, and `important_from` of 0.
    TwoClass {
        /// The least importance of the important class.
        important_from: u32,
    },
    /// Imp-insert (IBF-MC, Alg. 2; IBF-H): each cell becomes
    /// `max(cell, f(importance))`, `f` the [`ImportanceMap`].
    ByImportance,
}

/// Which cells are decremented after each item's probe.
///
/// ```
/// use streambloom::importance::Eviction;
/// let ibf_h = Eviction::ByValue;
/// assert_ne!(ibf_h, Eviction::Random);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eviction {
    /// `P` consecutive cells from a uniformly random start (the Stable
    /// filter's random delete; each cell with probability `P/m`).
    Random,
    /// `P` consecutive cells from a pointer that sweeps the cells.
    Sweep,
    /// IBF-H's probabilistic delete: `P` non-zero cells, each drawn with
    /// probability inversely proportional to its value (see the module
    /// docs for the sampler and its cap).
    ByValue,
    /// `Random`'s run in the Stable filter's interleaved cell order
    /// ([`stable::Eviction::Interleaved`](crate::stable::Eviction::Interleaved)):
    /// the same law for each cell, so the Markov models and the planner
    /// are `Random`'s, but with two blocks an item's cells no longer die
    /// together, so the delivered rates come nearer the models (which are
    /// then upper bounds). About twice `Random`'s time per item.
    Interleaved,
}

/// Importance → level, `1..=Max` (the paper's `f`, §III-B).
///
/// ```
/// use streambloom::importance::ImportanceMap;
/// let double = ImportanceMap::Function(|i| 2 * i);
/// assert_eq!(double.level(3, 7)?, 6);
/// assert!(double.level(4, 7).is_err()); // 8 > Max
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub enum ImportanceMap {
    /// Importance `1..=top` onto the levels linearly: `⌈i·Max/top⌉`.
    Linear {
        /// The largest importance (`Z`).
        top: u32,
    },
    /// Classes by thresholds, ascending: importance `i ≥ 1` has level `1 +`
    /// the number of thresholds at most `i` (so below the first threshold
    /// is level 1). At most `Max − 1` thresholds.
    Classes(&'static [u32]),
    /// A function of the caller's: it must send every importance it is
    /// given into `1..=Max`, or the observe is an error.
    Function(fn(u32) -> u32),
}

/// `level` if it is in `1..=max`, else an error naming the map (the
/// constructors' `check` refuses such maps; a caller of `level` may not
/// have run it).
fn in_levels(level: u32, max: u32) -> Result<u32> {
    if (1..=max).contains(&level) {
        Ok(level)
    } else {
        Err(Error::param("map", level, "levels in 1..=Max"))
    }
}

impl ImportanceMap {
    /// The level of `importance` for cells of largest value `max`.
    ///
    /// Errors: importance outside the map's domain, or a level outside
    /// `1..=max` (a [`Function`](Self::Function)'s result, more
    /// [`Classes`](Self::Classes) than levels, or `max = 0`).
    ///
    /// ```
    /// use streambloom::importance::ImportanceMap;
    /// let f = ImportanceMap::Linear { top: 50 };
    /// assert_eq!(f.level(1, 7)?, 1);
    /// assert_eq!(f.level(8, 7)?, 2); // ⌈8·7/50⌉
    /// assert_eq!(f.level(50, 7)?, 7);
    /// assert!(f.level(51, 7).is_err());
    /// assert!(f.level(5, 0).is_err()); // no level to map to
    /// assert_eq!(ImportanceMap::Classes(&[10, 100]).level(99, 7)?, 2);
    /// assert!(ImportanceMap::Classes(&[1, 2, 3]).level(5, 2).is_err()); // level 4 > Max
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn level(&self, importance: u32, max: u32) -> Result<u32> {
        match *self {
            ImportanceMap::Linear { top } => {
                if importance == 0 || importance > top {
                    return Err(Error::param("importance", importance, "in 1..=top"));
                }
                let scaled = u64::from(importance) * u64::from(max);
                in_levels(scaled.div_ceil(u64::from(top)) as u32, max)
            }
            ImportanceMap::Classes(bounds) => {
                if importance == 0 {
                    return Err(Error::param("importance", importance, "at least 1"));
                }
                in_levels(
                    1 + bounds.iter().filter(|&&b| b <= importance).count() as u32,
                    max,
                )
            }
            ImportanceMap::Function(f) => {
                let level = f(importance);
                if level == 0 || level > max {
                    return Err(Error::param(
                        "importance",
                        importance,
                        "an importance the map sends into 1..=Max",
                    ));
                }
                Ok(level)
            }
        }
    }

    /// Checks the map against cells of largest value `max`.
    fn check(&self, max: u32) -> Result<()> {
        match *self {
            ImportanceMap::Linear { top: 0 } => Err(Error::param("top", 0u32, "at least 1")),
            ImportanceMap::Classes(bounds) => {
                if bounds.len() >= max as usize {
                    return Err(Error::param(
                        "map",
                        bounds.len(),
                        "at most Max - 1 class thresholds",
                    ));
                }
                if bounds.windows(2).any(|w| w[0] >= w[1]) || bounds.first() == Some(&0) {
                    return Err(Error::param(
                        "map",
                        bounds.len(),
                        "thresholds at least 1 and strictly ascending",
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// An Importance-aware filter's parameters: the Stable filter's cells
/// (`cells`, `bits_per_cell` = `d`, `k` = `K`, `p` = `P`, `layout`, as in
/// [`StableParams`]), its [`Eviction`], [`Insert`] policy and
/// [`ImportanceMap`].
///
/// ```
/// use streambloom::importance::{Eviction, ImportanceMap, ImportanceParams, Insert};
/// use streambloom::stable::Layout;
/// // Table II: 16 KB of 3-bit cells, K = 5, P = 10, importance 1..=50.
/// let ibf_mc = ImportanceParams { cells: 16_384, bits_per_cell: 3, k: 5, p: 10, eviction: Eviction::Random,
///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 50 } };
/// assert_eq!(ibf_mc.stable().max(), 7);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ImportanceParams {
    /// Cells `m` (whole blocks of them).
    pub cells: usize,
    /// Bits a cell uses, `d`: `Max = 2^d − 1`.
    pub bits_per_cell: u32,
    /// Cells per item, `K`.
    pub k: u32,
    /// Cells decremented per item, `P`.
    pub p: usize,
    /// Which cells are decremented.
    pub eviction: Eviction,
    /// One block an item or two.
    pub layout: Layout,
    /// How an item's cells are raised.
    pub insert: Insert,
    /// Importance → level.
    pub map: ImportanceMap,
}

impl ImportanceParams {
    /// The Stable filter's parameters for these cells (`ByValue` runs on
    /// `Random`'s, whose run it does not use).
    ///
    /// ```
    /// use streambloom::importance::{ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// let p = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::ByValue,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// assert_eq!(p.stable().max(), 7);
    /// ```
    pub fn stable(&self) -> StableParams {
        StableParams {
            cells: self.cells,
            bits_per_cell: self.bits_per_cell,
            k: self.k,
            p: self.p,
            eviction: match self.eviction {
                Eviction::Sweep => crate::stable::Eviction::Sweep,
                Eviction::Interleaved => crate::stable::Eviction::Interleaved,
                Eviction::Random | Eviction::ByValue => crate::stable::Eviction::Random,
            },
            layout: self.layout,
        }
    }

    /// Everything the constructors check of these parameters but the
    /// storage: the Stable filter's cells, `d`, `K` and `P` for width `W`
    /// ([`StableParams::blocks`]), then the insert policy and the map
    /// ([`check_policy`](Self::check_policy)), in the constructors' order.
    /// The planner's functions refuse what this refuses, so a plan
    /// constructs.
    fn validate<W: Width>(&self) -> Result<()> {
        self.stable().blocks::<W>()?;
        self.check_policy()
    }

    /// The insert policy's and the map's checks, which depend on the cells
    /// only through `Max`: an [`ImportanceMap`] that cannot map into
    /// `1..=Max`, a two-class threshold of 0, or M/2-insert in 1-bit cells
    /// (`⌊Max/2⌋ = 0` would set no cell: the item would be forgotten as it
    /// is inserted, found by the `filters_api` fuzz target).
    fn check_policy(&self) -> Result<()> {
        let max = self.stable().max();
        self.map.check(max)?;
        if let Insert::TwoClass { important_from } = self.insert {
            if important_from == 0 {
                return Err(Error::param("important_from", 0u32, "at least 1"));
            }
            if max < 2 {
                return Err(Error::param(
                    "bits_per_cell",
                    self.bits_per_cell,
                    "at least 2 for M/2-insert (a level ⌊Max/2⌋ of at least 1)",
                ));
            }
        }
        Ok(())
    }

    /// The level an item of `importance` raises its cells to in cells of
    /// largest value `max`, by the [`Insert`] policy and the map
    /// ([`ImportanceBloom::level`]).
    fn insert_level(&self, importance: u32, max: u32) -> Result<u32> {
        let mapped = self.map.level(importance, max)?;
        Ok(match self.insert {
            Insert::Max => max,
            Insert::TwoClass { important_from } if importance >= important_from => max,
            Insert::TwoClass { .. } => max / 2,
            Insert::ByImportance => mapped,
        })
    }
}

/// An Importance-aware Bloom filter of `W`-bit cells in storage `S`,
/// hashing with `H` (see the [module docs](self)).
///
/// ```
/// use streambloom::importance::{Eviction, ImportanceBloom, ImportanceMap, ImportanceParams, Insert};
/// use streambloom::stable::Layout;
/// use streambloom::W8;
/// let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
/// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
/// assert!(!f.observe(&7u64, 9)?);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone)]
pub struct ImportanceBloom<W: Width, S = DefaultStorage, H = DefaultHasher> {
    stable: StableBloom<W, S, H>,
    params: ImportanceParams,
    /// The levels of importances `0..TABLE` by the insert policy and a
    /// [`Linear`](ImportanceMap::Linear) or [`Classes`](ImportanceMap::Classes)
    /// map, 0 where outside the map's domain or for a
    /// [`Function`](ImportanceMap::Function) map (computed then, as are
    /// larger importances): a load instead of the map's division.
    levels: [u32; TABLE],
}

/// Importances below this have their level in a table.
const TABLE: usize = 64;

impl<W: Width, S: Storage, H> core::fmt::Debug for ImportanceBloom<W, S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ImportanceBloom")
            .field("params", &self.params)
            .field("stable", &self.stable)
            .finish()
    }
}

#[cfg(feature = "alloc")]
impl<W: Width> ImportanceBloom<W> {
    /// An empty filter in owned memory, hashing with the default hasher
    /// seeded from `seed` (the eviction PRNG seeded from it too).
    ///
    /// Errors: the Stable filter's (cells, `d`, `K`, `P`, as
    /// [`StableBloom::new`] reports them), an [`ImportanceMap`] that cannot
    /// map into `1..=Max`, or a two-class threshold of 0.
    ///
    #[doc = crate::filter::seed_doc!()]
    ///
    /// ```
    /// use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// use streambloom::W8;
    /// let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::TwoClass { important_from: 6 }, map: ImportanceMap::Linear { top: 10 } };
    /// let f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert_eq!(f.cells(), 4096);
    /// assert!(ImportanceBloom::<W8>::new(ImportanceParams { k: 0, ..params }, 1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(params: ImportanceParams, seed: u64) -> Result<Self> {
        Self::with_hasher(params, crate::hash::seeded_hasher(seed))
    }
}

#[cfg(feature = "std")]
impl<W: Width> ImportanceBloom<W> {
    /// An empty filter with random hash seeds from the operating system.
    ///
    /// ```
    /// use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// use streambloom::W8;
    /// let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::Max, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new_random(params)?;
    /// f.observe("x", 3)?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new_random(params: ImportanceParams) -> Result<Self> {
        Self::with_hasher(params, crate::hash::random_hasher())
    }
}

#[cfg(feature = "alloc")]
impl<W: Width, H: BuildHasher> ImportanceBloom<W, DefaultStorage, H> {
    /// An empty filter in owned memory hashing with `hasher`.
    ///
    /// ```
    /// use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// use streambloom::W8;
    /// let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::ByValue,
    ///     layout: Layout::TwoBlocks, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let f = ImportanceBloom::<W8, _, _>::with_hasher(params, std::hash::RandomState::new())?;
    /// assert_eq!(f.zero_fraction(), 1.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_hasher(params: ImportanceParams, hasher: H) -> Result<Self> {
        Self::from_stable(params, |stable| StableBloom::with_hasher(stable, hasher))
    }
}

impl<W: Width, S: Storage, H: BuildHasher> ImportanceBloom<W, S, H> {
    /// An empty filter over the caller's `storage` (exactly the blocks the
    /// cells need), which it **zeroes**, as [`StableBloom::with_storage`].
    ///
    /// ```
    /// use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// use streambloom::{hash, Block, W8};
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut blocks = [Block::ZERO; 16];
    /// let mut f = ImportanceBloom::<W8, _, _>::with_storage(params, &mut blocks[..], hash::seeded_hasher(1))?;
    /// assert!(!f.observe(&42u32, 10)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn with_storage(params: ImportanceParams, storage: S, hasher: H) -> Result<Self> {
        Self::from_stable(params, |stable| {
            StableBloom::with_storage(stable, storage, hasher)
        })
    }

    /// A filter **adopting** `storage`'s cells and the sweep pointer
    /// `cursor` (as [`StableBloom::restore`]: the eviction PRNG restarts
    /// from the hasher's seed).
    ///
    /// ```
    /// use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// use streambloom::stable::Layout;
    /// use streambloom::{hash, W8};
    /// let params = ImportanceParams { cells: 1024, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.observe("kept", 10)?;
    /// let g = ImportanceBloom::<W8>::restore(params, f.blocks().to_vec(), hash::seeded_hasher(1), 0)?;
    /// assert!(g.contains("kept"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn restore(params: ImportanceParams, storage: S, hasher: H, cursor: usize) -> Result<Self> {
        Self::from_stable(params, |stable| {
            StableBloom::restore(stable, storage, hasher, cursor)
        })
    }

    /// Validates the importance parameters, then builds the cells.
    fn from_stable(
        params: ImportanceParams,
        build: impl FnOnce(StableParams) -> Result<StableBloom<W, S, H>>,
    ) -> Result<Self> {
        // The one validation the planner shares (`validate`), before the
        // cells are allocated; then the storage's own checks.
        params.validate::<W>()?;
        let stable = build(params.stable())?;
        let mut f = ImportanceBloom {
            stable,
            params,
            levels: [0; TABLE],
        };
        // A caller's function is called only with the importances it is
        // given: it may not expect the others.
        if !matches!(params.map, ImportanceMap::Function(_)) {
            let mut levels = [0; TABLE];
            for (i, l) in levels.iter_mut().enumerate() {
                *l = f.computed_level(i as u32).unwrap_or(0);
            }
            f.levels = levels;
        }
        Ok(f)
    }

    /// The hash of `key` that the `*_hash` methods take.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.observe_hash(f.hash("a"), 4)?;
    /// assert!(f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.stable.hash(key)
    }

    /// The level an item of `importance` raises its cells to, by the
    /// [`Insert`] policy (`Max` for M-insert; `Max` or `⌊Max/2⌋` for
    /// IBF-2C; `f(importance)` for Imp-insert).
    ///
    /// Errors: `importance` outside the map's domain (for every policy, so
    /// that what is accepted does not depend on the policy).
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    ///     layout: Layout::OneBlock, insert: Insert::TwoClass { important_from: 26 }, map: ImportanceMap::Linear { top: 50 } };
    /// let f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert_eq!((f.level(25)?, f.level(26)?), (3, 7));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn level(&self, importance: u32) -> Result<u32> {
        match self.levels.get(importance as usize) {
            Some(&level) if level != 0 => Ok(level),
            _ => self.computed_level(importance),
        }
    }

    /// [`level`](Self::level), computed: importances past the table, a
    /// caller's function, and errors (out of line, off the hot path).
    #[cold]
    #[inline(never)]
    fn computed_level(&self, importance: u32) -> Result<u32> {
        self.params
            .insert_level(importance, self.stable.params().max())
    }

    /// Whether `key` looks like a duplicate (none of its cells is zero),
    /// then records it with `importance`: evicts, and raises its cells
    /// (see the [module docs](self)).
    ///
    /// Errors: `importance` outside the map's domain; the filter is then
    /// unchanged.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert!(!f.observe("a", 10)?);
    /// assert!(f.observe("a", 1)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn observe<K: Hash + ?Sized>(&mut self, key: &K, importance: u32) -> Result<bool> {
        self.observe_hash(self.hash(key), importance)
    }

    /// [`observe`](Self::observe) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::ByValue,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert!(!f.observe_hash(77, 5)?);
    /// assert!(f.observe_hash(77, 5)?);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline(always)]
    pub fn observe_hash(&mut self, h: u64, importance: u32) -> Result<bool> {
        // Inlined into the caller's loop (as the Stable filter's
        // `observe_hash` is): a table load, the Stable body; the map's
        // arithmetic and IBF-H's eviction stay out of line.
        let level = self.level(importance)?;
        if self.params.eviction == Eviction::ByValue {
            return Ok(self.observe_by_value(h, level));
        }
        Ok(self.stable.observe_level_hash(h, level))
    }

    /// IBF-H's [`observe_hash`](Self::observe_hash) at `level`: probe,
    /// evict by value, raise.
    #[inline(never)]
    fn observe_by_value(&mut self, h: u64, level: u32) -> bool {
        let duplicate = self.stable.contains_hash(h);
        self.evict_by_value();
        self.stable.raise_hash(h, level);
        duplicate
    }

    /// [`observe`](Self::observe) for a batch: `duplicates[i]` answers
    /// `keys[i]` with `importances[i]`, in order.
    ///
    /// Errors: slices of different lengths, or an importance outside the
    /// map's domain (the items before it are observed, none after).
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// let mut dup = [false; 3];
    /// f.observe_batch(&["a", "b", "a"], &[1, 2, 3], &mut dup)?;
    /// assert_eq!(dup, [false, false, true]);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn observe_batch<K: Hash>(
        &mut self,
        keys: &[K],
        importances: &[u32],
        duplicates: &mut [bool],
    ) -> Result<()> {
        Error::check_len("importances", keys.len(), importances.len())?;
        Error::check_len("duplicates", keys.len(), duplicates.len())?;
        let mut hashes = [0u64; CHUNK];
        for ((keys, importances), duplicates) in keys
            .chunks(CHUNK)
            .zip(importances.chunks(CHUNK))
            .zip(duplicates.chunks_mut(CHUNK))
        {
            let hashes = &mut hashes[..keys.len()];
            for (h, key) in hashes.iter_mut().zip(keys) {
                *h = self.hash(key);
            }
            self.observe_batch_hash(hashes, importances, duplicates)?;
        }
        Ok(())
    }

    /// [`observe_batch`](Self::observe_batch) for keys already hashed.
    ///
    /// With random or sweep eviction it runs the Stable filter's batch
    /// loop on the items' levels: out of cache the blocks of the items
    /// [`LOOKAHEAD`](crate::store::LOOKAHEAD) places ahead are prefetched,
    /// and the sweep's decrements are made in one pass where no item meets
    /// them; the answers and the cells are those of
    /// [`observe_hash`](Self::observe_hash) item by item. IBF-H's eviction
    /// by value runs item by item.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// let mut dup = [false; 2];
    /// f.observe_batch_hash(&[5, 5], &[1, 10], &mut dup)?;
    /// assert_eq!(dup, [false, true]);
    /// assert!(f.observe_batch_hash(&[5], &[11], &mut dup[..1]).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn observe_batch_hash(
        &mut self,
        hashes: &[u64],
        importances: &[u32],
        duplicates: &mut [bool],
    ) -> Result<()> {
        Error::check_len("importances", hashes.len(), importances.len())?;
        Error::check_len("duplicates", hashes.len(), duplicates.len())?;
        if self.params.eviction == Eviction::ByValue {
            for ((&h, &importance), out) in hashes.iter().zip(importances).zip(duplicates) {
                *out = self.observe_hash(h, importance)?;
            }
            return Ok(());
        }
        // Chunks through the Stable filter's batch loop (prefetching, the
        // sweep amortized), each item's level mapped first; an importance
        // outside the domain ends the batch after the items before it.
        let mut levels = [0u32; CHUNK];
        for ((hashes, importances), duplicates) in hashes
            .chunks(CHUNK)
            .zip(importances.chunks(CHUNK))
            .zip(duplicates.chunks_mut(CHUNK))
        {
            let mut valid = importances.len();
            let mut refused = None;
            for (i, (level, &importance)) in levels.iter_mut().zip(importances).enumerate() {
                match self.level(importance) {
                    Ok(v) => *level = v,
                    Err(e) => {
                        (valid, refused) = (i, Some(e));
                        break;
                    }
                }
            }
            self.stable.observe_levels_batch_hash(
                &hashes[..valid],
                &levels[..valid],
                &mut duplicates[..valid],
            );
            if let Some(e) = refused {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Whether `key` looks present (none of its cells is zero), without
    /// changing the filter.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert!(!f.contains("a"));
    /// f.observe("a", 2)?;
    /// assert!(f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.stable.contains(key)
    }

    /// [`contains`](Self::contains) for a key already hashed to `h`.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert!(!f.contains_hash(9));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn contains_hash(&self, h: u64) -> bool {
        self.stable.contains_hash(h)
    }

    /// [`contains`](Self::contains) for a batch of pre-hashed keys, with
    /// the Stable filter's prefetching.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.observe_hash(3, 1)?;
    /// let mut found = [false; 2];
    /// f.contains_batch_hash(&[3, 4], &mut found)?;
    /// assert_eq!(found, [true, false]);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn contains_batch_hash(&self, hashes: &[u64], found: &mut [bool]) -> Result<()> {
        self.stable.contains_batch_hash(hashes, found)
    }

    /// IBF-H's eviction: `P` decrements of non-zero cells drawn with
    /// probability `∝ 1/value`, by rejection (module docs), at most
    /// [`BY_VALUE_TRIES`]`·P` uniform draws.
    fn evict_by_value(&mut self) {
        let p = self.params.p;
        let (cells, rng) = self.stable.cells_and_rng();
        let m = cells.cells() as u64;
        let mut done = 0;
        for _ in 0..BY_VALUE_TRIES.saturating_mul(p) {
            if done == p {
                break;
            }
            let i = rng.below(m) as usize;
            let v = cells.get(i).unwrap_or(0);
            // `i < m` and `v − 1` fits the cell: the `set` succeeds.
            if v != 0 && rng.below(u64::from(v)) == 0 && cells.set(i, v - 1).is_ok() {
                done += 1;
            }
        }
    }

    /// The parameters.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Random,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert_eq!(f.params().k, 4);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn params(&self) -> &ImportanceParams {
        &self.params
    }

    /// The sweep pointer ([`Eviction::Sweep`]): what
    /// [`restore`](Self::restore) takes back.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.observe("a", 3)?;
    /// assert_eq!(f.cursor(), 4); // one item: P = 4 cells swept
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn cursor(&self) -> usize {
        self.stable.cursor()
    }

    /// The number of cells, `m`.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// assert_eq!(ImportanceBloom::<W8>::new(params, 1)?.cells(), 4096);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn cells(&self) -> usize {
        self.stable.cells()
    }

    /// The fraction of cells that are zero now. At steady state on
    /// distinct keys, under [`Eviction::Random`] and
    /// [`Eviction::Interleaved`], the Markov chain's `V_0` predicts it
    /// ([`analysis::importance::zero_fraction`](crate::analysis::importance::zero_fraction),
    /// the exact chain). The chain does not model [`Eviction::Sweep`],
    /// which decrements each cell once every `m/P` items, and whose zero
    /// fraction differs (test `the_chain_models_random_eviction_not_the_sweep`):
    /// its prediction is
    /// [`analysis::importance::steady_zero_fraction`](crate::analysis::importance::steady_zero_fraction)'s
    /// for `Sweep`. Nor does it model [`Eviction::ByValue`].
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert_eq!(f.zero_fraction(), 1.0);
    /// f.observe("a", 10)?;
    /// assert!(f.zero_fraction() < 1.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn zero_fraction(&self) -> f64 {
        self.stable.zero_fraction()
    }

    /// The probability that a key never seen looks like a duplicate *in
    /// the filter's current state*: the Stable filter's
    /// [`current_fpr`](StableBloom::current_fpr), since the probe is its
    /// (none of the key's `K` cells zero, placed as it places them),
    /// whatever the levels the cells hold. One pass over the cells.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 2, p: 1, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// assert_eq!(f.current_fpr(), 0.0);
    /// for i in 0..100u32 {
    ///     f.observe(&i, 1 + i % 10)?;
    /// }
    /// assert!(f.current_fpr() > 0.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn current_fpr(&self) -> f64 {
        self.stable.current_fpr()
    }

    /// All blocks, for comparing and persisting filters.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// assert_eq!(ImportanceBloom::<W8>::new(params, 1)?.blocks().len(), 64);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn blocks(&self) -> &[Block] {
        self.stable.blocks()
    }

    /// The kernel implementation in use.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// assert_eq!(ImportanceBloom::<W8>::new(params, 1)?.isa(), streambloom::Isa::detect());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn isa(&self) -> Isa {
        self.stable.isa()
    }

    /// Forces the kernel implementation; [`Error::Unsupported`] if this
    /// CPU lacks `isa`. Every implementation gives identical cells.
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.set_isa(streambloom::Isa::Scalar)?;
    /// assert_eq!(f.isa(), streambloom::Isa::Scalar);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set_isa(&mut self, isa: Isa) -> Result<()> {
        self.stable.set_isa(isa)
    }

    /// Empties the filter (all cells zero).
    ///
    /// ```
    /// # use streambloom::importance::{ImportanceBloom, ImportanceMap, ImportanceParams, Insert, Eviction};
    /// # use streambloom::stable::Layout;
    /// # use streambloom::W8;
    /// # let params = ImportanceParams { cells: 4096, bits_per_cell: 3, k: 4, p: 4, eviction: Eviction::Sweep,
    /// #     layout: Layout::OneBlock, insert: Insert::ByImportance, map: ImportanceMap::Linear { top: 10 } };
    /// let mut f = ImportanceBloom::<W8>::new(params, 1)?;
    /// f.observe("a", 5)?;
    /// f.clear();
    /// assert!(!f.contains("a"));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.stable.clear();
    }
}

/// Two filters are equal when their cells and sweep pointers are (as for
/// [`StableBloom`]) and their insert and eviction policies are.
impl<W: Width, S: Storage, H> PartialEq for ImportanceBloom<W, S, H> {
    fn eq(&self, other: &Self) -> bool {
        self.stable == other.stable
            && self.params.insert == other.params.insert
            && self.params.eviction == other.params.eviction
    }
}
