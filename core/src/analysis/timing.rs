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
/// negative (or NaN) penalty. A penalty weighed by a probability of 0
/// counts 0, even an infinite one: `decide(1.0, ∞, 0.0)` and
/// `decide(0.0, 0.0, ∞)` are both ties, so present.
///
/// ```
/// use streambloom::analysis::timing::decide;
/// assert!(decide(0.5, 1.0, 1.0)?);
/// assert!(!decide(0.2, 9.0, 1.0)?);
/// assert!(decide(0.2, 1.0, 9.0)?);
/// assert!(decide(1.0, f64::INFINITY, 0.0)?);
/// assert!(decide(0.0, 0.0, f64::INFINITY)?);
/// assert!(!decide(0.0, 1.0, f64::INFINITY)?);
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
    // A term whose probability is 0 is no penalty, even an infinite one
    // (`∞ · 0` would be NaN, and every comparison with NaN false).
    let penalty = |cost: f64, p: f64| if p == 0.0 { 0.0 } else { cost * p };
    Ok(penalty(cost_fp, 1.0 - posterior) <= penalty(cost_fn, posterior))
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
/// independent hash positions each (Theorem 1's `P_FP`). With no bits
/// (`m = 0`) none can be clear: 1; with no item (`k = 0`, or `d <= 0` or
/// NaN) none is set: 0 unless `r = 0` (then 1, the empty set being all
/// set).
///
/// ```
/// use streambloom::analysis::timing::bloom_fp;
/// assert_eq!(bloom_fp(100, 2, 0.0, 1), 0.0);
/// assert!((bloom_fp(2, 1, 1.0, 1) - 0.5).abs() < 1e-12);
/// assert_eq!(bloom_fp(0, 3, 5.0, 2), 1.0);
/// assert_eq!(bloom_fp(1, 0, 5.0, 1), 0.0);
/// ```
pub fn bloom_fp(m: usize, k: u32, d: f64, r: u32) -> f64 {
    if m == 0 || r == 0 {
        return 1.0;
    }
    if k == 0 || d.is_nan() || d <= 0.0 {
        return 0.0;
    }
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
fn misses(n: usize, s: usize, k: usize) -> f64 {
    if s + k > n {
        return 0.0;
    }
    (0..k)
        .map(|i| (n - s - i) as f64 / (n - i) as f64)
        .product()
}

/// The chance that given timers of an item (`s1` in its first block,
/// `s2` in its second; `s2 = 0` unblocked or in one block) were **all**
/// touched by `d` distinct other items of `k` timers each, placed as
/// `placed`: `F(s, 0, j)` with `d = D(j)` (NOTES-timing §6). Unblocked,
/// each other item sets `k` independent uniform positions over the `m`
/// timers, so that a set of `t` timers is missed by an item with
/// probability `(1 - t/m)^k` (eq. 21 approximates this by
/// `u^t = (1 - 1/m)^{kt}`); blocked, each half of an item lands in a
/// uniform block, independently, and sets its timers there, distinct
/// ([`Layout`]'s exact placement).
///
/// The value is the inclusion–exclusion sum over the subsets left
/// untouched, `Σ_T (-1)^{|T|} P(one item misses T)^d`, but that sum is
/// not how it is computed: its terms reach `C(64, 32) ≈ 1.8·10^18`, so
/// past about 40 timers it cancels to noise. It is summed the other way
/// round, over the units that reach the item's blocks, every term
/// positive: unblocked the unit is one of the `k·d` positions, which hits
/// the `s` given timers with probability `s/m`; blocked it is a half of
/// another item, which lands in one of the item's blocks with probability
/// `1/blocks` each. With `n` units landing (a binomial law of `n`), the
/// law of how many of the given timers they cover follows unit by unit
/// (each unit's new timers are hypergeometric), and the result is
/// `Σ_n P(n landed) P(n units cover all)`, to about `10^-12` relative
/// however small. A fractional `d` takes the binomial law with real
/// counts (generalised binomial coefficients, the same analytic
/// continuation as the inclusion–exclusion sum): its terms past `d`
/// alternate, but they are small while a unit lands with probability
/// well under 1/2; otherwise (a fractional `d` in a filter of four
/// blocks or fewer, or unblocked with `s >= m/2`) the inclusion–exclusion
/// sum is used when its rounding bound is the smaller.
///
/// Where the alternating sum's own rounding bound (its terms' magnitudes
/// times `(4 + max|ln term|)·ε`) is below `10^-12` of its value, it is
/// the answer: `(s1 + 1)·(s2 + 1)` exponentials, where the law costs a
/// pass over its states per landed unit. That holds where the timers are
/// likely touched (the filter's cache of `F(c, 0, B)`), not for the query
/// of an item inserted in the current block, whose few other items touch
/// all its timers with a tiny probability: there the law answers, in
/// 1–3 µs for `k <= 8` in one block and 3–5 µs in two (Zen 3, `d = 10`;
/// `touched_cost_report` in this module's tests prints the figures).
///
/// An item has at most 64 timers in all
/// ([`TimingParams::k`](crate::timing::TimingParams::k)), so `s1` counts
/// as at most 64 and `s2` as at most `64 - s1`; nor can it have more than exist, so `s1 + s2`
/// counts as at most `m` unblocked, and each as at most `block_cells`
/// blocked (and as `s1 + s2` in one block when there are fewer than two
/// blocks). No given timer (in particular with `m = 0`, `blocks = 0` or
/// `block_cells = 0`) gives 1, the empty set being all touched; no other
/// item (`d <= 0` or NaN, or `k = 0`) gives 0 otherwise, and `d = ∞`
/// gives 1. The result is a probability, in `[0, 1]`.
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
/// // k = 64 in blocks of 64: every item that lands owns the whole block.
/// let full = Placed::Blocked { layout: Layout::OneBlock, blocks: 256, block_cells: 64 };
/// let exact = 1.0 - (255.0f64 / 256.0).powi(50);
/// assert!((touched(full, 64, 64, 0, 50.0) / exact - 1.0).abs() < 1e-12);
/// assert_eq!(touched(Placed::Unblocked { m: 0 }, 3, 2, 0, 5.0), 1.0);
/// ```
pub fn touched(placed: Placed, k: u32, s1: u32, s2: u32, d: f64) -> f64 {
    // The alternating sum, when its rounding bound is far below its
    // value, costs `(s1 + 1)·(s2 + 1)` exponentials where the law costs a
    // pass over its states for each unit landing; the law's small tables
    // where they hold the states.
    let reach = Reach::new(placed, k, s1, s2);
    if let Some(sum) = by_alternating(&reach, k, d) {
        return sum;
    }
    if (reach.s[0] + 1) * (reach.s[1] + 1) <= FEW_STATES {
        Touched::<FEW_STATES, FEW_ROWS>::new(placed, k, s1, s2, d).get(s1, s2)
    } else {
        Touched::<STATES>::new(placed, k, s1, s2, d).get(s1, s2)
    }
}

/// [`touched`] by the alternating sum, where it is tried (a finite `d > 0`,
/// `k > 0`, [`alternating_may_hold`]) and its rounding bound holds:
/// within `10^-12` of its value.
fn by_alternating(reach: &Reach, k: u32, d: f64) -> Option<f64> {
    if !(d.is_finite() && d > 0.0 && k > 0 && alternating_may_hold(reach, d)) {
        return None;
    }
    let (sum, error) = inclusion_exclusion(reach, d, reach.s);
    (sum > 0.0 && error <= 1e-12 * sum).then(|| sum.min(1.0))
}

/// Whether the alternating sum may be within its `10^-12` for `reach`'s
/// given timers: its terms' magnitudes sum to about `(1 + u)^s` (`u` the
/// chance that one timer is missed by all `d` items) and round to
/// `2^-46` of that, while the sum is about `(1 - u)^s`, so it is tried
/// only where `((1 - u)/(1 + u))^s >= 10^-2`. A guess, which only saves
/// the sum's exponentials where it cannot answer (the query of an item
/// inserted in the current block, whose few other items touch all its
/// timers with a tiny probability); the sum's own bound decides.
fn alternating_may_hold(reach: &Reach, d: f64) -> bool {
    let s = reach.s[0] + reach.s[1];
    let one = if reach.s[0] > 0 { (1, 0) } else { (0, 1) };
    let u = libm::exp(d * reach.ln_missed(one.0, one.1));
    let q = (1.0 - u) / (1.0 + u);
    (0..s).fold(1.0, |p, _| p * q) >= 1e-2
}

/// The most timers an item has, in all (`k <= 64`).
const MAX_TIMERS: u32 = 64;
/// One side of a hypergeometric row: 0 to 64 new timers.
const SIDE: usize = MAX_TIMERS as usize + 1;
/// Covered-count states: `(u1, u2)` with `s1 + s2 <= 64` given timers
/// (at most `33 · 33`, at `s1 = s2 = 32`), or `u <= 64` in one block or
/// unblocked: 8.5 KiB a table, so that [`touched`] runs on a firmware
/// stack (no allocator).
const STATES: usize = (SIDE / 2 + 1) * (SIDE / 2 + 1);
/// Covered-count states of the small tables [`touched`] uses where they
/// suffice (9 · 9: up to 8 given timers in each of two blocks, or all 64
/// in one), so that the common query does not clear 8.5 KiB tables.
const FEW_STATES: usize = 81;
/// Hypergeometric rows kept ([`Hits`]) with the small tables: up to 8
/// uncovered timers.
const FEW_ROWS: usize = 9;
/// Hypergeometric rows kept with the large tables: up to 16 uncovered
/// timers, 2.3 KiB.
const ROWS: usize = 17;
/// The most units `Touched::new` follows (a bound never reached: 64
/// timers are all covered, to `10^-18`, within a few thousand units).
const MAX_UNITS: usize = 1 << 20;

/// Where the given timers are, after the caps of [`touched`], and how
/// other items reach them.
#[derive(Clone, Copy, Debug)]
struct Reach {
    /// Given timers in the first and the second block (all in the first
    /// unblocked, or in one block).
    s: [usize; 2],
    /// The cells a landed unit draws from: a block's, or unblocked the
    /// `s[0]` given timers (a landed position is uniform among them).
    cells: usize,
    /// The kinds of unit: cells a unit draws (distinct) and units an other
    /// item has (blocked the two halves, one each, or one kind of two when
    /// they are equal; unblocked one kind, `k` single positions).
    kinds: [(usize, f64); 2],
    /// The chance that a unit lands on the given timers (blocked: in one
    /// of their blocks, each equally likely).
    land: f64,
    /// `m` unblocked, `None` blocked (for the inclusion–exclusion terms).
    m: Option<usize>,
    /// Blocks (blocked).
    blocks: usize,
}

impl Reach {
    fn new(placed: Placed, k: u32, s1: u32, s2: u32) -> Reach {
        let s1 = s1.min(MAX_TIMERS);
        let (s1, s2) = (s1 as usize, s2.min(MAX_TIMERS - s1) as usize);
        match placed {
            Placed::Unblocked { m } => {
                let s = (s1 + s2).min(m);
                Reach {
                    s: [s, 0],
                    cells: s,
                    kinds: [(1, f64::from(k)), (0, 0.0)],
                    land: if m == 0 { 0.0 } else { s as f64 / m as f64 },
                    m: Some(m),
                    blocks: 0,
                }
            }
            Placed::Blocked {
                layout,
                blocks,
                block_cells,
            } => {
                let s = if blocks == 0 {
                    [0, 0]
                } else if blocks < 2 {
                    [(s1 + s2).min(block_cells), 0]
                } else {
                    [s1.min(block_cells), s2.min(block_cells)]
                };
                let (k1, k2) = layout.halves(k);
                let (k1, k2) = (
                    (k1 as usize).min(block_cells),
                    (k2 as usize).min(block_cells),
                );
                let lands = if s[1] > 0 { 2.0 } else { 1.0 };
                Reach {
                    s,
                    cells: block_cells,
                    // Equal halves are one kind, two units an item: one
                    // binomial law of `2d` units, which ends when the
                    // result is reached rather than when the first half's
                    // law is.
                    kinds: if k1 == k2 {
                        [(k1, 2.0), (0, 0.0)]
                    } else {
                        [(k1, 1.0), (k2, 1.0)]
                    },
                    land: if blocks == 0 {
                        0.0
                    } else {
                        lands / blocks as f64
                    },
                    m: None,
                    blocks,
                }
            }
        }
    }

    /// `ln P(one other item touches none of t1 + t2 given timers)`.
    fn ln_missed(&self, t1: usize, t2: usize) -> f64 {
        match self.m {
            Some(m) => self.kinds[0].1 * libm::log1p(-((t1 + t2) as f64) / m as f64),
            None => {
                let nb = self.blocks as f64;
                let mut sum = 0.0;
                for &(draw, per) in &self.kinds {
                    if draw > 0 {
                        let hit = (1.0 - misses(self.cells, t1, draw))
                            + (1.0 - misses(self.cells, t2, draw));
                        sum += per * libm::log1p(-hit / nb);
                    }
                }
                sum
            }
        }
    }
}

/// The new given timers a landed unit covers, `P(x | r)` for `r` given
/// timers still uncovered, the unit drawing `draw` distinct cells of
/// `cells` (hypergeometric), into `row`; returns the range of `x` it
/// filled.
fn new_hits(cells: usize, r: usize, draw: usize, row: &mut [f64; SIDE]) -> (usize, usize) {
    let (lo, hi) = (draw.saturating_sub(cells - r), draw.min(r));
    // Unnormalised from 1 at `lo` by the ratio of neighbours, then
    // normalised (at most 64 ratios of at most 64·64: no overflow).
    let mut v = 1.0;
    row[lo] = 1.0;
    for x in lo..hi {
        v *= ((r - x) * (draw - x)) as f64 / ((x + 1) * (cells - r + x + 1 - draw)) as f64;
        row[x + 1] = v;
    }
    let sum: f64 = row[lo..=hi].iter().sum();
    for q in &mut row[lo..=hi] {
        *q /= sum;
    }
    (lo, hi)
}

/// The weights `C(c, n) a^n (1 - a)^{c - n}` of `n = 0, 1, …` units landing
/// out of `c` (real: then the generalised binomial coefficient, negative
/// for some `n > c`), each landing with probability `a`.
struct Landed {
    count: f64,
    ln_land: f64,
    ln_stay: f64,
    odds: f64,
    integer: bool,
    n: f64,
    /// `ln |C(c, n)|`.
    ln_choose: f64,
    sign: f64,
    done: bool,
}

impl Landed {
    fn new(count: f64, land: f64) -> Landed {
        Landed {
            count,
            ln_land: libm::log(land),
            ln_stay: libm::log1p(-land),
            odds: land / (1.0 - land),
            integer: count == libm::floor(count),
            n: 0.0,
            ln_choose: 0.0,
            sign: 1.0,
            done: false,
        }
    }

    /// `ln |w_n|`.
    fn ln_abs(&self) -> f64 {
        let landed = if self.n == 0.0 {
            0.0
        } else {
            self.n * self.ln_land
        };
        let rest = self.count - self.n;
        let stayed = if rest == 0.0 {
            0.0
        } else {
            rest * self.ln_stay
        };
        self.ln_choose + landed + stayed
    }

    /// A bound on `|w_{i+1} / w_i|` for every `i >= n`.
    fn ratio(&self) -> f64 {
        let rest = self.count - self.n;
        if rest == 0.0 {
            return 0.0;
        }
        let r = libm::fabs(rest) / (self.n + 1.0) * self.odds;
        if self.integer { r } else { r.max(self.odds) }
    }

    fn advance(&mut self) {
        let rest = self.count - self.n;
        if rest == 0.0 {
            self.done = true;
            return;
        }
        self.ln_choose += libm::log(libm::fabs(rest) / (self.n + 1.0));
        if rest < 0.0 {
            self.sign = -self.sign;
        }
        self.n += 1.0;
    }
}

/// The hypergeometric rows of one kind of unit ([`new_hits`]), kept for
/// `r < R` uncovered timers ([`FEW_ROWS`] with the small tables, [`ROWS`]
/// with the large) and computed again for each unit above: a unit
/// landing then costs its additions alone.
struct Hits<const R: usize> {
    cells: usize,
    draw: usize,
    rows: [[f64; R]; R],
    ranges: [(usize, usize); R],
    kept: usize,
}

impl<const R: usize> Hits<R> {
    /// The rows of a unit drawing `draw` distinct cells of `cells`, for up
    /// to `most` uncovered timers.
    fn new(cells: usize, draw: usize, most: usize) -> Hits<R> {
        let mut hits = Hits {
            cells,
            draw,
            rows: [[0.0; R]; R],
            ranges: [(0, 0); R],
            kept: most.min(R - 1),
        };
        let mut row = [0.0; SIDE];
        for r in 0..=hits.kept {
            let (lo, hi) = new_hits(cells, r, draw, &mut row);
            hits.rows[r][lo..=hi].copy_from_slice(&row[lo..=hi]);
            hits.ranges[r] = (lo, hi);
        }
        hits
    }

    /// `P(x | r)` for `x` in the returned range, in the returned row
    /// (`buf` when `r` is above the kept rows).
    fn row<'a>(&'a self, r: usize, buf: &'a mut [f64; SIDE]) -> (usize, usize, &'a [f64]) {
        if r <= self.kept {
            let (lo, hi) = self.ranges[r];
            (lo, hi, &self.rows[r][..])
        } else {
            let (lo, hi) = new_hits(self.cells, r, self.draw, buf);
            (lo, hi, &buf[..])
        }
    }
}

/// One unit landing on the given timers: `rho` over the covered counts
/// `(u1, u2)` (row `u1`, `s[1] + 1` a row) advanced, into `scratch`
/// (`buf` holds a row not kept).
/// The unit draws its cells (`hits`) in one of the given blocks, each
/// equally likely (unblocked, in the one set of given timers).
fn land_one<const R: usize>(
    rho: &[f64],
    scratch: &mut [f64],
    s: [usize; 2],
    hits: &Hits<R>,
    buf: &mut [f64; SIDE],
) {
    let row = s[1] + 1;
    let states = (s[0] + 1) * row;
    let share = if s[1] > 0 { 0.5 } else { 1.0 };
    scratch[..states].fill(0.0);
    // Contiguous runs, so that each inner loop is one `a·x + y` over a
    // slice: a row of `u2` moved down by `x` in the first block, a run of
    // `x` from `u2` in the second.
    for u1 in 0..=s[0] {
        let (lo, hi, p) = hits.row(s[0] - u1, buf);
        let from = &rho[u1 * row..(u1 + 1) * row];
        for (x, &px) in p.iter().enumerate().take(hi + 1).skip(lo) {
            let to = &mut scratch[(u1 + x) * row..(u1 + x + 1) * row];
            let a = share * px;
            for (t, f) in to.iter_mut().zip(from) {
                *t += a * f;
            }
        }
    }
    if s[1] > 0 {
        for u2 in 0..=s[1] {
            let (lo, hi, p) = hits.row(s[1] - u2, buf);
            let p = &p[lo..=hi];
            for u1 in 0..=s[0] {
                let v = rho[u1 * row + u2] * share;
                let start = u1 * row + u2 + lo;
                for (t, &px) in scratch[start..start + p.len()].iter_mut().zip(p) {
                    *t += v * px;
                }
            }
        }
    }
}

/// `F(c1, c2, 0, d)` for every `c1 <= s1`, `c2 <= s2` at once: the law of
/// how many of `s1` and `s2` given timers the other items cover (from
/// which any `c1` of the `s1` are all covered with probability
/// `E[C(u1, c1)] / C(s1, c1)`, the covered ones being a uniform subset),
/// kept to answer [`touched`] and the filter's cache of `F(c, 0, B)`.
/// `N` bounds the states (`(s1 + 1)·(s2 + 1)`), and the hypergeometric
/// rows of up to `R - 1` uncovered timers are computed once ([`Hits`]).
pub(crate) struct Touched<const N: usize = STATES, const R: usize = ROWS> {
    reach: Reach,
    d: f64,
    /// The law of the covered counts, `(s[1] + 1)` a row (`N` states at
    /// most: [`STATES`] holds every case, [`FEW_STATES`] few timers).
    law: [f64; N],
    /// Whether `law` holds (else the inclusion–exclusion sum answers).
    series: bool,
    /// Whether every weight was at least 0 (integer counts).
    positive: bool,
    /// The mass of the negative weights, which bounds their rounding.
    negative: f64,
}

impl<const N: usize, const R: usize> Touched<N, R> {
    /// The law for up to `s1` and `s2` given timers ([`touched`]'s caps),
    /// whose covered counts must fit in `N` states.
    pub(crate) fn new(placed: Placed, k: u32, s1: u32, s2: u32, d: f64) -> Touched<N, R> {
        let reach = Reach::new(placed, k, s1, s2);
        let s = reach.s;
        let states = (s[0] + 1) * (s[1] + 1);
        debug_assert!(states <= N);
        let mut t = Touched {
            reach,
            d,
            law: [0.0; N],
            series: true,
            positive: true,
            negative: 0.0,
        };
        t.law[0] = 1.0;
        let kinds = reach
            .kinds
            .iter()
            .filter(|&&(draw, per)| draw > 0 && per > 0.0);
        let no_item = d.is_nan() || d <= 0.0 || kinds.clone().next().is_none();
        if no_item || states == 1 || reach.land == 0.0 {
            return t;
        }
        if d == f64::INFINITY {
            t.law[0] = 0.0;
            t.law[states - 1] = 1.0;
            return t;
        }
        let integer = kinds.clone().all(|&(_, per)| {
            let c = per * d;
            c == libm::floor(c)
        });
        if !integer && reach.land >= 0.5 {
            // The binomial series in real counts diverges.
            t.series = false;
            t.positive = false;
            return t;
        }
        t.positive = integer;
        let (mut a, mut b) = ([0.0; N], [0.0; N]);
        let mut buf = [0.0; SIDE];
        for &(draw, per) in kinds {
            // The law given the units landed so far, and the next one's.
            let (mut rho, mut next) = (&mut a, &mut b);
            let hits = Hits::<R>::new(reach.cells, draw, s[0].max(s[1]));
            rho[..states].copy_from_slice(&t.law[..states]);
            t.law[..states].fill(0.0);
            let mut w = Landed::new(per * d, reach.land);
            // Σ of the weights so far.
            let mut cum = 0.0;
            for _ in 0..MAX_UNITS {
                if w.done {
                    break;
                }
                let unsat: f64 = rho[..states - 1].iter().map(|v| libm::fabs(*v)).sum();
                let total = unsat + libm::fabs(rho[states - 1]);
                if unsat <= 1e-18 * total {
                    // All covered: the rest of the weights, as one.
                    let rest = if cum <= 0.5 {
                        1.0 - cum
                    } else {
                        let mut rest = 0.0;
                        for _ in 0..MAX_UNITS {
                            if w.done {
                                break;
                            }
                            let ln = w.ln_abs();
                            let wn = w.sign * libm::exp(ln);
                            rest += wn;
                            if wn < 0.0 {
                                t.negative -= wn;
                            }
                            let r = w.ratio();
                            if r < 1.0
                                && (ln < -745.0
                                    || libm::fabs(wn) * r / (1.0 - r) <= 1e-18 * libm::fabs(rest))
                            {
                                break;
                            }
                            w.advance();
                        }
                        rest
                    };
                    for (l, r) in t.law[..states].iter_mut().zip(&rho[..states]) {
                        *l += rest * r;
                    }
                    break;
                }
                let ln = w.ln_abs();
                let wn = w.sign * libm::exp(ln);
                for (l, r) in t.law[..states].iter_mut().zip(&rho[..states]) {
                    *l += wn * r;
                }
                cum += wn;
                if wn < 0.0 {
                    t.negative -= wn;
                }
                let r = w.ratio();
                // The weights still to come, bounded geometrically; each
                // multiplies a law of total mass about 1.
                if r < 1.0
                    && libm::fabs(wn) * r / (1.0 - r) <= 1e-17 * libm::fabs(t.law[states - 1])
                {
                    break;
                }
                w.advance();
                land_one(rho, next, s, &hits, &mut buf);
                core::mem::swap(&mut rho, &mut next);
            }
        }
        t
    }

    /// `F(c1, c2, 0, d)`: all of `c1` given timers in the first block and
    /// `c2` in the second touched (at most the `s1` and `s2` given to
    /// `new`, capped as [`touched`] caps them).
    pub(crate) fn get(&self, c1: u32, c2: u32) -> f64 {
        let placed = match self.reach.m {
            Some(m) => Placed::Unblocked { m },
            None => Placed::Blocked {
                layout: Layout::OneBlock,
                blocks: self.reach.blocks,
                block_cells: self.reach.cells,
            },
        };
        let s = self.reach.s;
        let c = Reach::new(placed, 0, c1, c2).s;
        let c = [c[0].min(s[0]), c[1].min(s[1])];
        let series = self.series.then(|| {
            let row = s[1] + 1;
            let mut sum = 0.0;
            for u1 in c[0]..=s[0] {
                let g1 = within(c[0], s[0], u1);
                for u2 in c[1]..=s[1] {
                    sum += self.law[u1 * row + u2] * g1 * within(c[1], s[1], u2);
                }
            }
            sum
        });
        self.finish(c, series)
    }

    /// [`get`](Self::get) for every `c1 <= s1` and `c2 <= s2` at once (the
    /// capped counts of `new`), each given to `each(c1, c2, value)`: the
    /// series as two products of `(s + 1)²` matrices with the law, where
    /// `get` for each costs `s1·s2·(c1 + c2)`: the filter's cache of two
    /// blocks at `k = 64` has 33 · 33 slots (`inference_cost_report` in
    /// `filters/timing/infer.rs` prints its build time). One table of the
    /// law's size on the stack, no more than `new` used. Returns the
    /// capped `(s1, s2)`.
    pub(crate) fn get_all(&self, mut each: impl FnMut(usize, usize, f64)) -> [usize; 2] {
        let s = self.reach.s;
        let row = s[1] + 1;
        // `sums[c1·row + u2] = Σ_u1 w(c1, s1, u1) law[u1, u2]`, `w(c, s, u)
        // = C(u, c)/C(s, c)`, one row of `w` at a time; then in place
        // `sums[c1·row + c2] = Σ_u2 w(c2, s2, u2) sums[c1·row + u2]`
        // (a slot is read for its own `c2` and by no larger one).
        let mut sums = [0.0; N];
        if self.series {
            let mut w = [1.0; SIDE];
            for c1 in 0..=s[0] {
                let to = &mut sums[c1 * row..(c1 + 1) * row];
                for (u1, &g1) in w.iter().enumerate().take(s[0] + 1).skip(c1) {
                    for (t, l) in to.iter_mut().zip(&self.law[u1 * row..(u1 + 1) * row]) {
                        *t += l * g1;
                    }
                }
                next_within(&mut w[..=s[0]], c1, s[0]);
            }
            let mut w = [1.0; SIDE];
            for c2 in 0..=s[1] {
                for c1 in 0..=s[0] {
                    let r = &mut sums[c1 * row..(c1 + 1) * row];
                    r[c2] = (c2..=s[1]).map(|u2| r[u2] * w[u2]).sum();
                }
                next_within(&mut w[..=s[1]], c2, s[1]);
            }
        }
        for c1 in 0..=s[0] {
            for c2 in 0..=s[1] {
                let series = self.series.then_some(sums[c1 * row + c2]);
                each(c1, c2, self.finish([c1, c2], series));
            }
        }
        s
    }

    /// The answer for `c` timers from the law's series (if it holds), or
    /// the inclusion–exclusion sum where that rounds less.
    fn finish(&self, c: [usize; 2], series: Option<f64>) -> f64 {
        let eps = f64::EPSILON;
        let series_error = series.map(|v| 16.0 * eps * (libm::fabs(v) + 2.0 * self.negative));
        if let (Some(v), Some(e)) = (series, series_error)
            && (self.positive || e <= 1e-12 * libm::fabs(v))
        {
            return v.clamp(0.0, 1.0);
        }
        let (alt, alt_error) = inclusion_exclusion(&self.reach, self.d, c);
        match (series, series_error) {
            (Some(v), Some(e)) if e <= alt_error => v.clamp(0.0, 1.0),
            _ => alt.clamp(0.0, 1.0),
        }
    }
}

/// `P(a given c of s timers are covered | u covered) = C(u, c) / C(s, c)`.
fn within(c: usize, s: usize, u: usize) -> f64 {
    (0..c)
        .map(|i| (u as f64 - i as f64) / (s - i) as f64)
        .product::<f64>()
        .max(0.0)
}

/// `w[u] = within(c, s, u)` for every `u` into `within(c + 1, s, u)`, by
/// the product's next factor (nothing past `c = s`).
fn next_within(w: &mut [f64], c: usize, s: usize) {
    if c < s {
        for (u, x) in w.iter_mut().enumerate() {
            *x = (*x * (u as f64 - c as f64) / (s - c) as f64).max(0.0);
        }
    }
}

/// The inclusion–exclusion sum over the subsets of `c` given timers, and
/// a bound on its rounding error: the terms' magnitudes summed, times the
/// summation's `4ε` and each `exp`'s error, `ε` times its argument.
fn inclusion_exclusion(reach: &Reach, d: f64, c: [usize; 2]) -> (f64, f64) {
    let (mut sum, mut abs, mut arg) = (0.0, 0.0, 0.0f64);
    let mut c1 = 1.0;
    for t1 in 0..=c[0] {
        let mut c2 = 1.0;
        for t2 in 0..=c[1] {
            let term = if t1 + t2 == 0 {
                1.0
            } else {
                let ln = d * reach.ln_missed(t1, t2);
                arg = arg.max(libm::fabs(ln));
                libm::exp(ln)
            };
            let sign = if (t1 + t2) % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * c1 * c2 * term;
            abs += c1 * c2 * term;
            c2 = c2 * (c[1] - t2) as f64 / (t2 + 1) as f64;
        }
        c1 = c1 * (c[0] - t1) as f64 / (t1 + 1) as f64;
    }
    (sum, (4.0 + arg) * f64::EPSILON * abs)
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
///
/// Beside eq. 28, [`calibration`](Self::calibration): each bin's mean
/// posterior against its observed frequency, which eq. 28 does not show
/// (it measures against the bins' midpoints, and its floor is 0.025).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PosteriorError {
    queries: [u64; 20],
    positives: [u64; 20],
    /// The posteriors recorded in each bin, summed.
    posteriors: [f64; 20],
}

/// One bin of [`PosteriorError::calibration`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Calibration {
    /// The queries whose posterior fell in the bin.
    pub queries: u64,
    /// Their mean posterior: the model's probability that the item was in
    /// the window.
    pub mean_posterior: f64,
    /// The fraction of them whose item was in the window.
    pub observed: f64,
}

impl PosteriorError {
    /// Records a query whose posterior was `posterior` and whose item was
    /// (`in_window`) or was not in the window. Posteriors outside
    /// `[0, 1]` fall in the end bins (NaN in the first), counted there as
    /// the bin's edge, 0 or 1.
    pub fn add(&mut self, posterior: f64, in_window: bool) {
        let bin = ((posterior * 20.0) as usize).min(19);
        self.queries[bin] += 1;
        self.positives[bin] += u64::from(in_window);
        // Counted where binned: outside `[0, 1]` (and NaN, binned first)
        // at the end bin's edge, so that a mean stays a probability.
        self.posteriors[bin] += if posterior.is_nan() {
            0.0
        } else {
            posterior.clamp(0.0, 1.0)
        };
    }

    /// The 20 bins of eq. 28, `[0, .05)` first: how many queries each
    /// holds, their mean posterior and the fraction in the window (both 0
    /// for an empty bin). A calibrated model has the two equal, up to the
    /// sampling error `√(f(1 − f)/n)`; an observed frequency above the
    /// mean posterior means the model was under-confident there.
    ///
    /// ```
    /// use streambloom::analysis::timing::PosteriorError;
    /// let mut pe = PosteriorError::default();
    /// for (p, hit) in [(0.31, true), (0.33, false), (0.32, true), (0.9, true)] {
    ///     pe.add(p, hit);
    /// }
    /// let bins = pe.calibration();
    /// assert_eq!(bins[6].queries, 3); // [0.30, 0.35)
    /// assert!((bins[6].mean_posterior - 0.32).abs() < 1e-12);
    /// assert!((bins[6].observed - 2.0 / 3.0).abs() < 1e-12); // under-confident
    /// assert_eq!((bins[18].queries, bins[18].observed), (1, 1.0));
    /// // Outside [0, 1], and NaN, count at the end bins' edges.
    /// pe.add(f64::NAN, false);
    /// pe.add(7.0, true);
    /// let bins = pe.calibration();
    /// assert_eq!((bins[0].queries, bins[0].mean_posterior), (1, 0.0));
    /// assert_eq!((bins[19].queries, bins[19].mean_posterior), (1, 1.0));
    /// ```
    pub fn calibration(&self) -> [Calibration; 20] {
        let mut out = [Calibration::default(); 20];
        for (l, bin) in out.iter_mut().enumerate() {
            let q = self.queries[l];
            if q > 0 {
                *bin = Calibration {
                    queries: q,
                    mean_posterior: self.posteriors[l] / q as f64,
                    observed: self.positives[l] as f64 / q as f64,
                };
            }
        }
        out
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// `|got - want| <= tol·|want|`, with a floor far below any value
    /// tested.
    fn close(got: f64, want: f64, tol: f64) -> bool {
        (got - want).abs() <= tol * want.abs() + 1e-300
    }

    /// Independent reference, unblocked, for an integer number `n` of
    /// positions: the `n` positions one at a time, over the count `u` of
    /// the `s` given timers hit (a new one with probability `(s - u)/m`).
    /// Every term is positive, so it holds to about `n·2^-53` relative.
    fn by_positions(m: usize, s: usize, n: u64) -> f64 {
        let mut p = vec![0.0f64; s + 1];
        p[0] = 1.0;
        for _ in 0..n {
            for u in (0..=s).rev() {
                let stay = p[u] * (1.0 - (s - u) as f64 / m as f64);
                let came = if u > 0 {
                    p[u - 1] * (s - u + 1) as f64 / m as f64
                } else {
                    0.0
                };
                p[u] = stay + came;
            }
        }
        p[s]
    }

    /// `C(n, k)` as a float, by the product (`n <= 64`: exact to a few
    /// ulps).
    fn choose(n: usize, k: usize) -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
    }

    /// Independent reference, blocked, for an integer number `d` of
    /// items: the items one at a time, over the counts `(u1, u2)` of the
    /// given timers covered, each half landing in either given block with
    /// probability `1/blocks` and drawing its cells there (hypergeometric
    /// by binomial coefficients).
    fn by_items(layout: Layout, blocks: usize, cells: usize, k: u32, s: [usize; 2], d: u64) -> f64 {
        let row = s[1] + 1;
        let mut p = vec![0.0f64; (s[0] + 1) * row];
        p[0] = 1.0;
        let (k1, k2) = layout.halves(k);
        let nb = blocks as f64;
        // `P(x new | r uncovered)` for a half of `draw` cells.
        let table = |draw: usize| -> Vec<Vec<f64>> {
            (0..=s[0].max(s[1]))
                .map(|r| {
                    (0..=draw.min(r))
                        .map(|x| choose(r, x) * choose(cells - r, draw - x) / choose(cells, draw))
                        .collect()
                })
                .collect()
        };
        // One half: new law over (u1, u2).
        let half = |p: &[f64], hyp: &[Vec<f64>]| -> Vec<f64> {
            let mut q = vec![0.0f64; p.len()];
            for u1 in 0..=s[0] {
                for u2 in 0..=s[1] {
                    let v = p[u1 * row + u2];
                    let mut elsewhere = 1.0;
                    for (b, (u, sb)) in [(u1, s[0]), (u2, s[1])].into_iter().enumerate() {
                        if sb == 0 {
                            continue;
                        }
                        elsewhere -= 1.0 / nb;
                        let r = sb - u;
                        for (x, &h) in hyp[r].iter().enumerate() {
                            let to = if b == 0 {
                                (u1 + x) * row + u2
                            } else {
                                u1 * row + u2 + x
                            };
                            q[to] += v * h / nb;
                        }
                    }
                    q[u1 * row + u2] += v * elsewhere;
                }
            }
            q
        };
        let tables: Vec<Vec<Vec<f64>>> = [k1, k2]
            .into_iter()
            .filter(|&h| h > 0)
            .map(|h| table(h as usize))
            .collect();
        for _ in 0..d {
            for hyp in &tables {
                p = half(&p, hyp);
            }
        }
        p[p.len() - 1]
    }

    /// What one [`touched`] call costs, and which sum answered, for the
    /// query of an item whose timers were all set in the current block
    /// (`λ_x = 0`: `d` the distinct items of a part of a block) and for
    /// the filter's cache: a report, not a test of speed.
    /// `cargo test --release -p streambloom --lib touched_cost_report -- --ignored --nocapture`
    #[test]
    #[ignore = "a report: prints the cost of touched()"]
    fn touched_cost_report() {
        let one = Placed::Blocked {
            layout: Layout::OneBlock,
            blocks: 1 << 12,
            block_cells: 64,
        };
        let two = Placed::Blocked {
            layout: Layout::TwoBlocks,
            blocks: 1 << 12,
            block_cells: 64,
        };
        let un = Placed::Unblocked { m: 1 << 18 };
        for (name, placed) in [("one block", one), ("two blocks", two), ("unblocked", un)] {
            for k in [3, 5, 8, 16, 32, 64] {
                let (s1, s2) = match placed {
                    Placed::Blocked {
                        layout: Layout::TwoBlocks,
                        ..
                    } => Layout::TwoBlocks.halves(k),
                    _ => (k, 0),
                };
                for d in [2.5, 10.0, 40.0, 1000.0] {
                    let fast = by_alternating(&Reach::new(placed, k, s1, s2), k, d).is_some();
                    let calls = 20;
                    let start = std::time::Instant::now();
                    let mut v = 0.0;
                    for _ in 0..calls {
                        v += core::hint::black_box(touched(placed, k, s1, s2, d));
                    }
                    let each = start.elapsed().as_secs_f64() / f64::from(calls);
                    std::println!(
                        "{name:10} k {k:2} d {d:6}: {:9.2} us  F {:.3e}  {}",
                        each * 1e6,
                        v / f64::from(calls),
                        if fast { "alternating" } else { "law" }
                    );
                }
            }
        }
    }

    /// The old inclusion–exclusion sum, accurate for few timers.
    fn alternating(placed: Placed, k: u32, s1: usize, s2: usize, d: f64) -> f64 {
        let reach = Reach::new(placed, k, s1 as u32, s2 as u32);
        inclusion_exclusion(&reach, d, reach.s).0
    }

    /// The audit's cases: 64 and 60 timers unblocked, where the
    /// alternating sum answered 1 for about `10^-63` and `10^-170`, and
    /// `k = 64` in blocks of 64, where every item that lands in the block
    /// owns it all: `1 - (255/256)^50`.
    #[test]
    fn touched_matches_the_audit_cases() {
        let un = |m| Placed::Unblocked { m };
        // The alternating sum to 320 digits (mpmath): 2.6323809410554857e-79
        // (the audit's 1e-63 was rough) and 1.5222600773010113e-171.
        for (m, k, d, digits) in [
            (1 << 20, 64, 1000.0, 2.632_380_941_055_485_7e-79),
            (1 << 22, 60, 100.0, 1.522_260_077_301_011_3e-171),
        ] {
            let got = touched(un(m), k, k, 0, d);
            let want = by_positions(m, k as usize, d as u64 * u64::from(k));
            assert!(close(want, digits, 1e-12), "reference {want} vs {digits}");
            assert!(close(got, digits, 1e-10), "{got} vs {digits}");
        }
        for k in 40..=64u32 {
            let got = touched(un(1 << 22), k, k, 0, 100.0);
            let want = by_positions(1 << 22, k as usize, 100 * u64::from(k));
            assert!(close(got, want, 1e-9), "k {k}: {got} vs {want}");
        }
        let full = Placed::Blocked {
            layout: Layout::OneBlock,
            blocks: 256,
            block_cells: 64,
        };
        for (s, d) in [
            (1, 50.0),
            (48, 50.0),
            (64, 50.0),
            (64, 50.5),
            (33, 0.25),
            (64, 1e6),
        ] {
            let want = -libm::expm1(d * libm::log1p(-1.0 / 256.0));
            let got = touched(full, 64, s, 0, d);
            assert!(close(got, want, 1e-12), "s {s} d {d}: {got} vs {want}");
        }
    }

    /// Up to the cap of 64 timers in all, unblocked, against the positions
    /// one at a time, from nearly none touched to nearly all; given counts
    /// past the cap count as the cap.
    #[test]
    fn touched_matches_positions_up_to_the_cap() {
        for (m, k, d) in [
            (1usize << 16, 64u32, 10u64),
            (1 << 16, 64, 300),
            (1 << 16, 64, 3000),
            (4096, 32, 200),
            (300, 8, 40),
        ] {
            for (s1, s2) in [
                (64u32, 64u32),
                (31, 33),
                (40, 33),
                (50, 0),
                (17, 5),
                (1, 0),
                (0, 0),
            ] {
                let s = (s1.min(64) + s2.min(64 - s1.min(64))) as usize;
                let s = s.min(m);
                let want = by_positions(m, s, d * u64::from(k));
                let got = touched(Placed::Unblocked { m }, k, s1, s2, d as f64);
                assert!(
                    close(got, want, 1e-9),
                    "m {m} k {k} d {d} ({s1}, {s2}): {got} vs {want}"
                );
            }
        }
    }

    /// Blocked, one and two blocks, against the items one at a time.
    #[test]
    fn touched_matches_items_in_blocks() {
        for (layout, blocks, cells, k, s, d) in [
            (Layout::OneBlock, 64, 64, 64u32, [64, 0], 40u64),
            (Layout::OneBlock, 64, 64, 48, [48, 0], 200),
            (Layout::OneBlock, 1 << 12, 64, 60, [60, 0], 3000),
            (Layout::OneBlock, 3, 64, 20, [20, 0], 2),
            (Layout::OneBlock, 1, 16, 4, [4, 0], 3),
            (Layout::TwoBlocks, 64, 64, 64, [32, 32], 300),
            (Layout::TwoBlocks, 1 << 10, 64, 64, [32, 32], 2000),
            (Layout::TwoBlocks, 64, 64, 63, [32, 0], 100),
            (Layout::TwoBlocks, 16, 32, 9, [5, 4], 30),
            (Layout::TwoBlocks, 2, 16, 6, [3, 3], 20),
        ] {
            let placed = Placed::Blocked {
                layout,
                blocks,
                block_cells: cells,
            };
            let want = by_items(layout, blocks, cells, k, s, d);
            let got = touched(placed, k, s[0] as u32, s[1] as u32, d as f64);
            assert!(
                close(got, want, 1e-9),
                "{layout:?} blocks {blocks} k {k} {s:?} d {d}: {got} vs {want}"
            );
        }
    }

    /// For few timers the alternating sum is accurate: the two agree,
    /// fractional `d` included, in every placement (a few blocks, where a
    /// fractional `d` falls back to it, too).
    #[test]
    fn touched_matches_the_alternating_sum_for_few_timers() {
        let mut placements = vec![
            Placed::Unblocked { m: 1 << 10 },
            Placed::Unblocked { m: 40 },
        ];
        for layout in [Layout::OneBlock, Layout::TwoBlocks] {
            for blocks in [1, 2, 3, 5, 64] {
                placements.push(Placed::Blocked {
                    layout,
                    blocks,
                    block_cells: 32,
                });
            }
        }
        for placed in placements {
            for k in [1u32, 3, 8] {
                for (s1, s2) in [(1usize, 0usize), (3, 0), (8, 0), (2, 2), (4, 3)] {
                    for d in [0.5, 1.0, 2.75, 7.0, 31.3, 250.0] {
                        let want = alternating(placed, k, s1, s2, d).clamp(0.0, 1.0);
                        let got = touched(placed, k, s1 as u32, s2 as u32, d);
                        assert!(
                            (got - want).abs() <= 1e-9 * want + 1e-12,
                            "{placed:?} k {k} ({s1}, {s2}) d {d}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    /// Between integers `d` the value moves monotonically (a fractional
    /// `d` continues the integer ones), and it never leaves [0, 1].
    #[test]
    fn touched_is_monotone_in_d() {
        let placed = Placed::Unblocked { m: 1 << 16 };
        let mut last = 0.0;
        for i in 0..=400 {
            // Fractional every other step: 0, 25.5, 50, 75.5, …, 10000.
            let d = f64::from(i) * 25.0 + f64::from(i % 2) * 0.5;
            let f = touched(placed, 64, 64, 0, d);
            assert!((0.0..=1.0).contains(&f) && f >= last, "d {d}: {f} < {last}");
            last = f;
        }
        assert!(last > 0.99);
    }

    /// The inputs that gave NaN: no timers, no blocks, more given timers
    /// than exist, and the classical filter of no bits.
    #[test]
    fn degenerate_inputs_are_documented_probabilities() {
        let un0 = Placed::Unblocked { m: 0 };
        assert_eq!(touched(un0, 3, 2, 0, 5.0), 1.0);
        for (blocks, block_cells) in [(0, 64), (5, 0)] {
            for layout in [Layout::OneBlock, Layout::TwoBlocks] {
                let placed = Placed::Blocked {
                    layout,
                    blocks,
                    block_cells,
                };
                assert_eq!(touched(placed, 3, 2, 1, 5.0), 1.0);
            }
        }
        let un = Placed::Unblocked { m: 100 };
        let f = touched(un, 3, u32::MAX, u32::MAX, 5.0);
        // Counts as all 100 timers, touched by 15 positions: impossible.
        assert_eq!(f, 0.0);
        assert!(touched(un, 3, u32::MAX, u32::MAX, 1e4) > 0.99);
        assert_eq!(touched(un, 3, 2, 0, f64::NAN), 0.0);
        assert_eq!(touched(un, 3, 0, 0, f64::NAN), 1.0);
        assert_eq!(touched(un, 0, 2, 0, 5.0), 0.0);
        assert_eq!(touched(un, 3, 2, 0, f64::INFINITY), 1.0);
        assert_eq!(bloom_fp(0, 3, 5.0, 2), 1.0);
        assert_eq!(bloom_fp(1, 0, 5.0, 1), 0.0);
        assert_eq!(bloom_fp(10, 2, f64::NAN, 1), 0.0);
        assert!(bloom_fp(1, 3, 5.0, 1) == 1.0);
    }

    /// A zero-probability penalty is no penalty, even an infinite one.
    #[test]
    fn decide_zero_probability_costs_nothing() {
        assert!(decide(1.0, f64::INFINITY, 0.0).unwrap());
        assert!(decide(0.0, 0.0, f64::INFINITY).unwrap());
        assert!(!decide(0.0, 1.0, f64::INFINITY).unwrap());
        assert!(decide(1.0, f64::INFINITY, 1.0).unwrap());
        assert!(!decide(0.5, f64::INFINITY, 1.0).unwrap());
        assert!(decide(0.5, 1.0, f64::INFINITY).unwrap());
    }
}
