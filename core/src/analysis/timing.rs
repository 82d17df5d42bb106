//! The inferential Timing Bloom filter's formulas: the expected number of
//! distinct items `D(j)` of a stream ([`Distinct`], eqs. 15–18), the
//! probability that given timers were all touched ([`touched`], eq. 21 and
//! its blocked forms), the posterior `P(I_x < w | R_x)` of Theorems 2–5
//! ([`posterior`]), the classical Bloom filter's posterior of Theorem 1
//! ([`bloom_posterior`]), the minimum-penalty decision of §2.6 ([`decide`])
//! and the Posterior Error of eq. 28 ([`PosteriorError`]).
//!
//! Dautrich & Ravishankar, *Inferential Time-Decaying Bloom Filters*
//! (EDBT/ICDT 2013). Powers of `1 - p` go through `log1p`/`expm1`, since
//! `p` may be as small as `2^-32`.

use crate::hash::Layout;
use crate::{Error, Result};

/// The most points a [`Distinct`] table holds.
pub const MAX_POINTS: usize = 96;

/// `D(j)`, the expected number of distinct items among `j` consecutive
/// insertions of a stream (paper §4.3, eqs. 15–18).
///
/// ```
/// use streambloom::analysis::timing::Distinct;
/// let u = Distinct::uniform(1024.0)?;
/// assert!((u.at(1.0) - 1.0).abs() < 1e-12);
/// assert!(u.at(1e9) <= 1024.0);
/// let z = Distinct::zipf(1 << 10)?;
/// assert!(z.at(4096.0) < z.at(8192.0));
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Distinct {
    shape: Shape,
    /// Points `(j, D(j))` with increasing `j` ([`Shape::Table`] only).
    points: [(f64, f64); MAX_POINTS],
    /// Points in use.
    len: usize,
    /// The largest `D` ([`Shape::Table`] only).
    cap: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// Every insertion a new item: `D(j) = j`.
    AllDistinct,
    /// Eq. 16, `U` equally likely items.
    Uniform(f64),
    /// The points, interpolated by eq. 18; `D(j)` capped at `cap`.
    Table,
}

impl Distinct {
    /// A stream of items never repeated: `D(j) = j`, the largest `D`, so
    /// the most cautious posterior (a filter's default).
    ///
    /// ```
    /// use streambloom::analysis::timing::Distinct;
    /// assert_eq!(Distinct::all_distinct().at(77.0), 77.0);
    /// ```
    pub const fn all_distinct() -> Distinct {
        Distinct {
            shape: Shape::AllDistinct,
            points: [(0.0, 0.0); MAX_POINTS],
            len: 0,
            cap: f64::INFINITY,
        }
    }

    /// `U` equally likely items (eq. 16, exact):
    /// `D(j) = U (1 - (1 - 1/U)^j)`. An error unless `U >= 1`.
    ///
    /// ```
    /// use streambloom::analysis::timing::Distinct;
    /// let d = Distinct::uniform(2.0)?;
    /// assert!((d.at(2.0) - 1.5).abs() < 1e-12);
    /// assert!(Distinct::uniform(0.5).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn uniform(u: f64) -> Result<Distinct> {
        // NaN fails this test too.
        if !(u >= 1.0 && u.is_finite()) {
            return Err(Error::param("u", u, "a finite number of items, at least 1"));
        }
        Ok(Distinct {
            shape: Shape::Uniform(u),
            ..Distinct::all_distinct()
        })
    }

    /// The Zipf stream of the paper's §5, `p_x = 1/(x H_U)` for
    /// `x = 1..=U`: the exact sum of eq. 15, `D(j) = Σ_x 1 - (1 - p_x)^j`,
    /// at `j = 2^{t/2}` for `t = 0..=80` (half a doubling apart: log-log
    /// interpolation between doublings was 1.3 % low at `j = 12 U`), and
    /// eq. 18 between them (not eq. 17, which is 10 % off at `2^18` and
    /// negative past about `1.2·10^6` for `U = 2^16`: NOTES-timing §3).
    /// Costs `81·U` exponentials. An error unless `U >= 1`.
    ///
    /// ```
    /// use streambloom::analysis::timing::Distinct;
    /// let d = Distinct::zipf(1 << 16)?;
    /// assert_eq!(d.at(1.0), 1.0);
    /// assert!(d.at(1e15) <= 65536.0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn zipf(u: u32) -> Result<Distinct> {
        if u == 0 {
            return Err(Error::param("u", u, "at least 1"));
        }
        let h: f64 = (1..=u).map(|x| 1.0 / f64::from(x)).sum();
        let mut js = [0.0f64; 81];
        for (t, j) in js.iter_mut().enumerate() {
            *j = libm::exp2(t as f64 / 2.0);
        }
        let mut sums = [0.0f64; 81];
        for x in 1..=u {
            let l = libm::log1p(-1.0 / (f64::from(x) * h));
            for (s, j) in sums.iter_mut().zip(&js) {
                *s += -libm::expm1(l * j);
            }
        }
        let mut points = [(0.0, 0.0); MAX_POINTS];
        for ((slot, s), &j) in points.iter_mut().zip(&sums).zip(&js) {
            *slot = (j, s.min(j));
        }
        Ok(Distinct {
            shape: Shape::Table,
            points,
            len: sums.len(),
            cap: f64::from(u),
        })
    }

    /// A sampled stream (the paper's IP trace, §5.1.1): `D(j)` measured at
    /// the points `(j, D(j))`, in increasing `j`, interpolated by eq. 18
    /// (log-log linear between neighbours), extended along the last
    /// segment past the last point, and linearly through the origin before
    /// the first. Errors: no points, more than [`MAX_POINTS`], `j` not
    /// increasing from above 0, or `D(j)` outside `(0, j]`.
    ///
    /// ```
    /// use streambloom::analysis::timing::Distinct;
    /// let d = Distinct::sampled(&[(1.0, 1.0), (100.0, 80.0), (10_000.0, 2_000.0)])?;
    /// assert_eq!(d.at(100.0), 80.0);
    /// assert!(d.at(1000.0) > 80.0 && d.at(1000.0) < 2000.0);
    /// assert!(Distinct::sampled(&[(10.0, 20.0)]).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn sampled(samples: &[(f64, f64)]) -> Result<Distinct> {
        if samples.is_empty() || samples.len() > MAX_POINTS {
            return Err(Error::param(
                "samples",
                samples.len(),
                "between 1 and MAX_POINTS points",
            ));
        }
        let mut points = [(0.0, 0.0); MAX_POINTS];
        let mut last = 0.0;
        for (slot, &(j, d)) in points.iter_mut().zip(samples) {
            // NaN fails these tests too.
            if !(j > last && j.is_finite()) {
                return Err(Error::param("samples", j, "points of increasing j > 0"));
            }
            if !(d > 0.0 && d <= j) {
                return Err(Error::param("samples", d, "D(j) in (0, j]"));
            }
            *slot = (j, d);
            last = j;
        }
        Ok(Distinct {
            shape: Shape::Table,
            points,
            len: samples.len(),
            cap: f64::INFINITY,
        })
    }

    /// `D(j)` for `j >= 0` insertions (0 for `j <= 0`), at most `j`.
    pub fn at(&self, j: f64) -> f64 {
        if j.is_nan() || j <= 0.0 {
            return 0.0;
        }
        match self.shape {
            Shape::AllDistinct => j,
            Shape::Uniform(u) => (-u * libm::expm1(j * libm::log1p(-1.0 / u))).min(j),
            Shape::Table => {
                let (pts, len) = (&self.points[..self.len], self.len);
                let (j0, d0) = pts[0];
                let d = if j <= j0 || len == 1 {
                    d0 * j / j0
                } else {
                    // The segment holding j, or the last one past the end.
                    let i = pts.iter().position(|p| p.0 >= j).unwrap_or(len - 1).max(1);
                    let ((ja, da), (jb, db)) = (pts[i - 1], pts[i]);
                    if j == jb {
                        return db.min(self.cap);
                    }
                    let slope = libm::log(db / da) / libm::log(jb / ja);
                    da * libm::pow(j / ja, slope)
                };
                d.min(j).min(self.cap)
            }
        }
    }

    /// The model in the byte format (the timing filter's fields): a tag
    /// (0 all distinct, 1 uniform then `U` as f64, 2 a table then its
    /// point count, the points' `j` and `D(j)` and the cap, all f64).
    pub(crate) fn put(&self, out: &mut dyn crate::format::Sink) {
        match self.shape {
            Shape::AllDistinct => out.u8(0),
            Shape::Uniform(u) => {
                out.u8(1);
                out.f64(u);
            }
            Shape::Table => {
                out.u8(2);
                out.usize(self.len);
                for &(j, d) in &self.points[..self.len] {
                    out.f64(j);
                    out.f64(d);
                }
                out.f64(self.cap);
            }
        }
    }

    /// The model [`put`](Self::put) wrote, through the constructors' checks
    /// (a cap must be at least 1, or infinite).
    pub(crate) fn read(f: &mut crate::format::Fields<'_>) -> Result<Distinct> {
        match f.pick("stream", &[0, 1, 2])? {
            0 => Ok(Distinct::all_distinct()),
            1 => Distinct::uniform(f.f64("uniform items")?),
            _ => {
                let len = f.usize("stream points")?;
                if len == 0 || len > MAX_POINTS {
                    return Err(Error::param(
                        "samples",
                        len,
                        "between 1 and MAX_POINTS points",
                    ));
                }
                let mut points = [(0.0, 0.0); MAX_POINTS];
                for p in &mut points[..len] {
                    *p = (f.f64("stream j")?, f.f64("stream D(j)")?);
                }
                let cap = f.f64("stream cap")?;
                if cap.is_nan() || cap < 1.0 {
                    return Err(Error::param("cap", cap, "at least 1"));
                }
                Ok(Distinct {
                    cap,
                    ..Distinct::sampled(&points[..len])?
                })
            }
        }
    }
}

/// `1 - (1 - p)^n` and `(1 - p)^n` for the prior's geometric law (eqs.
/// 3–5), exact for `p` down to `2^-52` and for `p = 1`.
#[derive(Clone, Copy, Debug)]
struct Geometric {
    /// `ln(1 - p)`.
    l: f64,
}

impl Geometric {
    fn new(p: f64) -> Geometric {
        Geometric { l: libm::log1p(-p) }
    }

    /// `(1 - p)^n`.
    fn pow(self, n: f64) -> f64 {
        if n == 0.0 { 1.0 } else { libm::exp(n * self.l) }
    }

    /// `1 - (1 - p)^n`.
    fn one_minus_pow(self, n: f64) -> f64 {
        if n == 0.0 {
            0.0
        } else {
            -libm::expm1(n * self.l)
        }
    }
}

/// What an item's timers say (paper §4, Definition 11): the oldest age
/// `λ_x` among its distinct timers `R_x`, or expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Age {
    /// Some timer of the item is expired (`λ_x = ∞`, Theorem 2).
    Expired,
    /// The oldest age `λ_x`: 0 when every timer was set in the current
    /// block.
    Oldest(u64),
}

/// The posterior `P(I_x < w | R_x)` (Theorems 2–5), by the general
/// piecewise sum of NOTES-timing §3, valid for every `b`, `w` and `B`
/// (Theorem 3 as printed divides by zero at `b = 0` and is wrong when
/// `b > w`; Theorems 4 and 5 are this sum where they apply).
///
/// - `prior`: `p_x`, the chance that an insertion is `x` (in `[0, 1]`);
/// - `window` `w`, `block` `B`, `offset` `b` (insertions since `T_+` last
///   advanced, `b < B`);
/// - `age`: the item's evidence;
/// - `touched_oldest`: `F(c_x, 0, B)`, the chance that the item's `c_x`
///   oldest timers were all touched during one block of `B` insertions
///   (used when `λ_x >= 1`);
/// - `touched_all`: `F(r_x, 0, b)`, the chance that all its `r_x` timers
///   were touched during the last `b` insertions (used when `λ_x = 0`).
///
/// The likelihood is 0 before `J = (λ_x - 1)B + b`, 1 on `[J, J + B)` and
/// `touched_oldest` after, relative to `F(r_x, c_x, J)`, which cancels
/// (for `λ_x = 0`: 1 on `[0, b)` and `touched_all` after), and the prior of
/// `I_x = i` is `p (1 - p)^i` (eqs. 3–4). Errors: `prior` outside
/// `[0, 1]`, `block = 0`, `offset >= block`, `λ_x = 0` with `b = 0` (a
/// state no filter reaches: NOTES T4), or a `touched_*` outside `[0, 1]`.
///
/// ```
/// use streambloom::analysis::timing::{posterior, Age};
/// // Theorem 4: w = 100, B = 10, b = 3, λ = 2, F(c,0,B) = 0.5, p = 0.01.
/// let p = posterior(0.01, 100, 10, 3, Age::Oldest(2), 0.5, 1.0)?;
/// let q: f64 = 0.99;
/// let j = 13.0;
/// let thm4 = 1.0 - q.powf(100.0 - j) / ((1.0 - q.powi(10)) / 0.5 + q.powi(10));
/// assert!((p - thm4).abs() < 1e-12);
/// assert_eq!(posterior(0.01, 100, 10, 3, Age::Expired, 0.5, 1.0)?, 0.0);
/// assert!(posterior(1.5, 100, 10, 3, Age::Expired, 0.5, 1.0).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn posterior(
    prior: f64,
    window: u64,
    block: u64,
    offset: u64,
    age: Age,
    touched_oldest: f64,
    touched_all: f64,
) -> Result<f64> {
    check_prior(prior)?;
    if block == 0 {
        return Err(Error::param("block", block, "at least 1"));
    }
    if offset >= block {
        return Err(Error::param("offset", offset, "less than the block size B"));
    }
    for (name, f) in [
        ("touched_oldest", touched_oldest),
        ("touched_all", touched_all),
    ] {
        // NaN fails this test too.
        if !(0.0..=1.0).contains(&f) {
            return Err(Error::param(name, f, "a probability, in [0, 1]"));
        }
    }
    let Age::Oldest(lambda) = age else {
        return Ok(0.0);
    };
    if lambda == 0 && offset == 0 {
        return Err(Error::param(
            "age",
            0u64,
            "at least 1 when no insertion was made in the current block (b = 0)",
        ));
    }
    if prior == 0.0 || window == 0 {
        return Ok(0.0);
    }
    let g = Geometric::new(prior);
    let (w, bb, b) = (window as f64, block as f64, offset as f64);
    if lambda == 0 {
        // Likelihood 1 on [0, b), F(r, 0, b) on [b, ∞).
        let f = touched_all;
        let den = g.one_minus_pow(b) + g.pow(b) * f;
        let mut num = g.one_minus_pow(b.min(w));
        if w > b {
            num += f * (g.pow(b) - g.pow(w));
        }
        return Ok((num / den).clamp(0.0, 1.0));
    }
    // Everything scaled by (1 - p)^J: the window is w - J from J.
    let j = (lambda - 1) as f64 * bb + b;
    if j >= w {
        return Ok(0.0);
    }
    let rest = w - j;
    let f = touched_oldest;
    let den = g.one_minus_pow(bb) + g.pow(bb) * f;
    let mut num = g.one_minus_pow(rest.min(bb));
    if rest > bb {
        num += f * (g.pow(bb) - g.pow(rest));
    }
    Ok((num / den).clamp(0.0, 1.0))
}

/// An error unless `prior` is a probability.
pub(crate) fn check_prior(prior: f64) -> Result<()> {
    // NaN fails this test too.
    if (0.0..=1.0).contains(&prior) {
        Ok(())
    } else {
        Err(Error::param("prior", prior, "a probability, in [0, 1]"))
    }
}

/// The answer with the smaller expected penalty (paper §2.6): present
/// (`true`) iff `cost_fp·(1 - P) <= cost_fn·P`, `P` the posterior that the
/// item is in the window, `cost_fp` the penalty of a false positive and
/// `cost_fn` of a false negative. Errors: `posterior` outside `[0, 1]`, a
/// negative (or NaN) penalty.
///
/// ```
/// use streambloom::analysis::timing::decide;
/// assert!(decide(0.5, 1.0, 1.0)?);
/// assert!(!decide(0.2, 9.0, 1.0)?);
/// assert!(decide(0.2, 1.0, 9.0)?);
/// assert!(decide(0.2, -1.0, 9.0).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn decide(posterior: f64, cost_fp: f64, cost_fn: f64) -> Result<bool> {
    // NaN fails these tests too.
    if !(0.0..=1.0).contains(&posterior) {
        return Err(Error::param(
            "posterior",
            posterior,
            "a probability, in [0, 1]",
        ));
    }
    if cost_fp.is_nan() || cost_fp < 0.0 {
        return Err(Error::param("cost_fp", cost_fp, "a penalty, at least 0"));
    }
    if cost_fn.is_nan() || cost_fn < 0.0 {
        return Err(Error::param("cost_fn", cost_fn, "a penalty, at least 0"));
    }
    Ok(cost_fp * (1.0 - posterior) <= cost_fn * posterior)
}

/// Theorem 1 (§2.4, eq. 12): the posterior that an item was among the
/// `n` insertions into a classical (1-bit) Bloom filter, given that all
/// of its bits are set (`all_set`; when one is clear the posterior is 0),
/// its prior `prior` and `fp = P(all its bits set | x not inserted)`:
/// `1 / (1 + (1-p)^n fp / (1 - (1-p)^n))`. For `k` independent positions
/// over `m` bits and `r` distinct bits of `x`, `fp = (1 - (1 - 1/m)^{k
/// D(n)})^r` ([`bloom_fp`]; with `D(n)` rather than the paper's `n` when
/// items repeat: NOTES-timing §3). Errors: `prior` or `fp` outside `[0, 1]`.
///
/// ```
/// use streambloom::analysis::timing::{bloom_fp, bloom_posterior};
/// let fp = bloom_fp(1000, 3, 500.0, 3);
/// let p = bloom_posterior(1.0 / 2000.0, 500, true, fp)?;
/// assert!(p > 0.3 && p < 0.5);
/// assert_eq!(bloom_posterior(1.0 / 2000.0, 500, false, fp)?, 0.0);
/// # Ok::<(), streambloom::Error>(())
/// ```
pub fn bloom_posterior(prior: f64, n: u64, all_set: bool, fp: f64) -> Result<f64> {
    check_prior(prior)?;
    // NaN fails this test too.
    if !(0.0..=1.0).contains(&fp) {
        return Err(Error::param("fp", fp, "a probability, in [0, 1]"));
    }
    if !all_set {
        return Ok(0.0);
    }
    let g = Geometric::new(prior);
    let inserted = g.one_minus_pow(n as f64);
    if inserted == 0.0 {
        return Ok(0.0);
    }
    Ok(inserted / (inserted + g.pow(n as f64) * fp))
}

/// `(1 - (1 - 1/m)^{k d})^r`: the chance that `r` given bits of an
/// unblocked `m`-bit filter were all set by `d` distinct items of `k`
/// independent hash positions each (Theorem 1's `P_FP`).
///
/// ```
/// use streambloom::analysis::timing::bloom_fp;
/// assert_eq!(bloom_fp(100, 2, 0.0, 1), 0.0);
/// assert!((bloom_fp(2, 1, 1.0, 1) - 0.5).abs() < 1e-12);
/// ```
pub fn bloom_fp(m: usize, k: u32, d: f64, r: u32) -> f64 {
    let untouched = libm::exp(f64::from(k) * d * libm::log1p(-1.0 / m as f64));
    libm::pow(1.0 - untouched, f64::from(r))
}

/// Where an item's timers are: the paper's `k` independent positions over
/// all `m` timers, or the store's blocks ([`Layout`]: `k` distinct cells of
/// one block of `block_cells`, or `⌈k/2⌉` and `⌊k/2⌋` in two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// `k` independent positions over `m` timers (the paper's model).
    Unblocked {
        /// Timers `m`.
        m: usize,
    },
    /// The store's blocks.
    Blocked {
        /// The layout.
        layout: Layout,
        /// Blocks.
        blocks: usize,
        /// Cells a block.
        block_cells: usize,
    },
}

/// `C(n - s, k) / C(n, k)`: the chance that `k` distinct cells drawn from
/// `n` miss `s` given ones.
fn misses(n: usize, s: u32, k: u32) -> f64 {
    let (s, k) = (s as usize, k as usize);
    if s + k > n {
        return 0.0;
    }
    (0..k)
        .map(|i| (n - s - i) as f64 / (n - i) as f64)
        .product()
}

/// `ln P(one other item touches none of s1 + s2 given timers)`, `s1` of
/// them in one block and `s2` in another (`s2 = 0` when all share a
/// block, or unblocked).
fn log_untouched(placed: Placed, k: u32, s1: u32, s2: u32) -> f64 {
    match placed {
        Placed::Unblocked { m } => f64::from(k) * libm::log1p(-f64::from(s1 + s2) / m as f64),
        Placed::Blocked {
            layout,
            blocks,
            block_cells,
        } => {
            let (k1, k2) = layout.halves(k);
            let nb = blocks as f64;
            // Each half of the other item lands in a uniform block and
            // draws its cells there; the halves are independent.
            let half = |kh: u32| {
                if kh == 0 {
                    return 0.0;
                }
                let hit = (1.0 - misses(block_cells, s1, kh)) + (1.0 - misses(block_cells, s2, kh));
                libm::log1p(-hit / nb)
            };
            half(k1) + half(k2)
        }
    }
}

/// The chance that given timers of an item (`s1` in its first block,
/// `s2` in its second; `s2 = 0` unblocked or in one block) were **all**
/// touched by `d` distinct other items of `k` timers each, placed as
/// `placed`: `F(s, 0, j)` with `d = D(j)`, by inclusion–exclusion over
/// the subsets left untouched (NOTES-timing §6). Unblocked, a set of `t`
/// timers is missed by an item with probability `(1 - t/m)^k`, which
/// eq. 21 approximates by `u^t = (1 - 1/m)^{kt}`; blocked, by the layout's
/// exact placement.
/// Clamped to `[0, 1]` against the alternating sum's rounding. An item has
/// at most 64 timers ([`TimingParams::k`](crate::timing::TimingParams::k)),
/// so `s1` and `s2` above 64 count as 64 (the sum has `(s1 + 1)·(s2 + 1)`
/// terms).
///
/// ```
/// use streambloom::analysis::timing::{touched, Placed};
/// use streambloom::hash::Layout;
/// let un = Placed::Unblocked { m: 1 << 17 };
/// let f = touched(un, 4, 4, 0, 32768.0);
/// let u = (1.0 - 1.0 / f64::from(1 << 17)).powf(4.0 * 32768.0);
/// assert!((f - (1.0 - u).powi(4)).abs() < 1e-3);
/// let blk = Placed::Blocked { layout: Layout::OneBlock, blocks: 1 << 13, block_cells: 16 };
/// // 0.222 in blocks of 16 cells, against 0.160 unblocked.
/// assert!(touched(blk, 4, 4, 0, 32768.0) > f + 0.05);
/// ```
pub fn touched(placed: Placed, k: u32, s1: u32, s2: u32, d: f64) -> f64 {
    let (s1, s2) = (s1.min(MAX_TIMERS), s2.min(MAX_TIMERS));
    touched_by(s1, s2, |t1, t2| untouched_by(placed, k, t1, t2, d))
}

/// The most timers an item has, in a block or in all (`k <= 64`).
const MAX_TIMERS: u32 = 64;

/// The chance that none of `d` other items touches `t1 + t2` given
/// timers: the term of [`touched`]'s alternating sum for a subset of
/// `t1` timers in the first block and `t2` in the second.
pub(crate) fn untouched_by(placed: Placed, k: u32, t1: u32, t2: u32, d: f64) -> f64 {
    if t1 + t2 == 0 {
        1.0
    } else {
        libm::exp(d * log_untouched(placed, k, t1, t2))
    }
}

/// [`touched`]'s inclusion–exclusion sum over the subsets of `s1` and
/// `s2` timers, with `term(t1, t2)` = [`untouched_by`] for `t1` and `t2`
/// of them: a caller filling a table of every `F(c, 0, B)` computes each
/// term once and reads it here (the sum is the same, term for term).
pub(crate) fn touched_by(s1: u32, s2: u32, term: impl Fn(u32, u32) -> f64) -> f64 {
    let mut sum = 0.0;
    let mut c1 = 1.0;
    for t1 in 0..=s1 {
        let mut c2 = 1.0;
        for t2 in 0..=s2 {
            let sign = if (t1 + t2) % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * c1 * c2 * term(t1, t2);
            c2 = c2 * f64::from(s2 - t2) / f64::from(t2 + 1);
        }
        c1 = c1 * f64::from(s1 - t1) / f64::from(t1 + 1);
    }
    sum.clamp(0.0, 1.0)
}

/// The Posterior Error of eq. 28 (§5.1.4) over a run of queries: the
/// posteriors binned into 20 bins `[0, .05), …, [.95, 1]`, and
/// `PE = (1/n) Σ_ℓ |f_ℓ - M_ℓ| η_ℓ`, `f_ℓ` the fraction of bin `ℓ`'s
/// queries whose item was in the window, `M_ℓ` its midpoint and `η_ℓ` its
/// count (NOTES-timing T8: the observed frequency, as eq. 28 writes, not
/// the posteriors themselves).
///
/// ```
/// use streambloom::analysis::timing::PosteriorError;
/// let mut pe = PosteriorError::default();
/// pe.add(1.0, true);
/// pe.add(0.0, false);
/// assert!((pe.value() - 0.025).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PosteriorError {
    queries: [u64; 20],
    positives: [u64; 20],
}

impl PosteriorError {
    /// Records a query whose posterior was `posterior` and whose item was
    /// (`in_window`) or was not in the window. Posteriors outside
    /// `[0, 1]` fall in the end bins.
    pub fn add(&mut self, posterior: f64, in_window: bool) {
        let bin = ((posterior * 20.0) as usize).min(19);
        self.queries[bin] += 1;
        self.positives[bin] += u64::from(in_window);
    }

    /// Eq. 28 over the queries recorded (0 for none).
    pub fn value(&self) -> f64 {
        let n: u64 = self.queries.iter().sum();
        if n == 0 {
            return 0.0;
        }
        let mut sum = 0.0;
        for (l, (&q, &pos)) in self.queries.iter().zip(&self.positives).enumerate() {
            if q > 0 {
                let f = pos as f64 / q as f64;
                let mid = 0.05 * l as f64 + 0.025;
                sum += libm::fabs(f - mid) * q as f64;
            }
        }
        sum / n as f64
    }
}
