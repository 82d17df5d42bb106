//! The small seeded PRNG each filter owns for its random choices (eviction
//! start, reservoir draws): xoshiro256++ from `rand_xoshiro`, a few cycles a
//! draw and deterministic under a seed, so experiments and tests repeat.

use rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded pseudo-random generator. Not cryptographic.
///
/// ```
/// use streambloom::rng::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// let u = a.unit();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator whose whole stream is fixed by `seed`.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// assert_eq!(Rng::new(1), Rng::new(1));
    /// ```
    pub fn new(seed: u64) -> Rng {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// The generator's whole state, little-endian: what the byte format
    /// ([`crate::format`]) records so a restored filter draws what the
    /// saved one would have.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// let mut r = Rng::new(3);
    /// r.next_u64();
    /// let mut s = Rng::from_state(r.state());
    /// assert_eq!(r.next_u64(), s.next_u64());
    /// ```
    pub fn state(&self) -> [u8; 32] {
        self.0.state()
    }

    /// The generator in `state` ([`state`](Self::state)). The all-zero
    /// state, which xoshiro cannot leave and no seeded generator reaches,
    /// is replaced by the state of `Rng::new(0)`.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// assert_eq!(Rng::from_state([0; 32]), Rng::new(0));
    /// ```
    pub fn from_state(state: [u8; 32]) -> Rng {
        Rng(Xoshiro256PlusPlus::from_seed(state))
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// let mut r = Rng::new(1);
    /// assert_ne!(r.next_u64(), r.next_u64());
    /// ```
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (0 when `n == 0`), by Lemire's
    /// multiply-shift: no division, a bias below `n / 2^64`.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// let mut r = Rng::new(1);
    /// assert!((0..100).all(|_| r.below(6) < 6));
    /// assert_eq!(r.below(0), 0);
    /// ```
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    ///
    /// ```
    /// # use streambloom::rng::Rng;
    /// let mut r = Rng::new(1);
    /// assert!((0..100).all(|_| (0.0..1.0).contains(&r.unit())));
    /// ```
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            assert!(a.below(10) < 10);
            let u = a.unit();
            assert!((0.0..1.0).contains(&u));
            b.below(10);
            b.unit();
        }
        assert_eq!(a.below(0), 0);
    }

    #[test]
    #[cfg_attr(miri, ignore = "statistics, not memory safety: too slow under Miri")]
    fn below_is_uniform() {
        let mut r = Rng::new(1);
        let mut hist = [0u32; 10];
        let n = 100_000;
        for _ in 0..n {
            hist[r.below(10) as usize] += 1;
        }
        // Each bucket ~ Binomial(n, 0.1): sd = sqrt(n * 0.09) ~ 95; allow 5 sd.
        for h in hist {
            assert!((f64::from(h) - 10_000.0).abs() < 5.0 * 95.0, "{hist:?}");
        }
    }
}
