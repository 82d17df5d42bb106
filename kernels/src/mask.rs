//! Selection masks: which cells of a block an operation touches.

use core::fmt::Debug;

/// A set of cell positions within one block, one bit per cell.
///
/// Bit `i` selects cell `i`. Setting a bit twice is the same as setting it
/// once: repeated hash indices collapse, which is what counting filters want
/// (a counter is raised once per item, whatever the number of hash functions
/// that hit it).
pub trait Mask: Copy + Eq + Default + Debug + Send + Sync + 'static {
    /// Number of selectable positions (the cells in a block).
    const POSITIONS: usize;

    /// This mask with position `i` selected. `i` is taken modulo
    /// [`Self::POSITIONS`].
    #[must_use]
    fn with(self, i: usize) -> Self;

    /// Selects position `i` (modulo [`Self::POSITIONS`]) and says whether it
    /// was newly selected: a branch-free way to count distinct positions
    /// while building a mask (targets without `popcnt` pay for `count`).
    fn insert(&mut self, i: usize) -> bool;

    /// Whether position `i` is selected (`i` modulo [`Self::POSITIONS`]).
    fn contains(&self, i: usize) -> bool;

    /// Whether no position is selected.
    fn is_empty(&self) -> bool;

    /// Number of selected positions.
    fn count(&self) -> u32;

    /// Removes and returns the lowest selected position.
    fn pop_lowest(&mut self) -> Option<usize>;

    /// The mask as little-endian 64-bit words (position `i` is bit `i % 64`
    /// of word `i / 64`); masks of fewer than 64 positions fill one word.
    fn to_words(&self) -> [u64; 8];

    /// The mask from little-endian words (see [`Mask::to_words`]); bits past
    /// [`Self::POSITIONS`] are ignored.
    fn from_words(words: &[u64; 8]) -> Self;
}

macro_rules! int_mask {
    ($t:ty) => {
        impl Mask for $t {
            const POSITIONS: usize = <$t>::BITS as usize;
            #[inline(always)]
            fn with(self, i: usize) -> Self {
                self | (1 << (i % Self::POSITIONS))
            }
            #[inline(always)]
            fn insert(&mut self, i: usize) -> bool {
                let bit: $t = 1 << (i % Self::POSITIONS);
                let new = *self & bit == 0;
                *self |= bit;
                new
            }
            #[inline(always)]
            fn contains(&self, i: usize) -> bool {
                (*self >> (i % Self::POSITIONS)) & 1 == 1
            }
            #[inline(always)]
            fn is_empty(&self) -> bool {
                *self == 0
            }
            #[inline(always)]
            fn count(&self) -> u32 {
                self.count_ones()
            }
            #[inline(always)]
            fn pop_lowest(&mut self) -> Option<usize> {
                if *self == 0 {
                    None
                } else {
                    let i = self.trailing_zeros() as usize;
                    *self &= *self - 1;
                    Some(i)
                }
            }
            #[inline(always)]
            fn to_words(&self) -> [u64; 8] {
                let mut w = [0; 8];
                w[0] = u64::from(*self);
                w
            }
            #[inline(always)]
            fn from_words(words: &[u64; 8]) -> Self {
                // Truncation keeps exactly the POSITIONS low bits.
                words[0] as $t
            }
        }
    };
}

int_mask!(u16);
int_mask!(u32);
int_mask!(u64);

impl<const N: usize> Mask for [u64; N]
where
    [u64; N]: Default,
{
    const POSITIONS: usize = 64 * N;
    #[inline(always)]
    fn with(mut self, i: usize) -> Self {
        let i = i % Self::POSITIONS;
        self[i / 64] |= 1 << (i % 64);
        self
    }
    #[inline(always)]
    fn insert(&mut self, i: usize) -> bool {
        let i = i % Self::POSITIONS;
        let bit = 1u64 << (i % 64);
        let new = self[i / 64] & bit == 0;
        self[i / 64] |= bit;
        new
    }
    #[inline(always)]
    fn contains(&self, i: usize) -> bool {
        let i = i % Self::POSITIONS;
        (self[i / 64] >> (i % 64)) & 1 == 1
    }
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.iter().all(|&w| w == 0)
    }
    #[inline(always)]
    fn count(&self) -> u32 {
        self.iter().map(|w| w.count_ones()).sum()
    }
    #[inline(always)]
    fn pop_lowest(&mut self) -> Option<usize> {
        for (j, w) in self.iter_mut().enumerate() {
            if *w != 0 {
                let i = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(j * 64 + i);
            }
        }
        None
    }
    #[inline(always)]
    fn to_words(&self) -> [u64; 8] {
        let mut w = [0; 8];
        w[..N].copy_from_slice(self);
        w
    }
    #[inline(always)]
    fn from_words(words: &[u64; 8]) -> Self {
        let mut m = [0; N];
        m.copy_from_slice(&words[..N]);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<M: Mask>() {
        let mut m = M::default();
        assert!(m.is_empty());
        for i in [0, 3, M::POSITIONS - 1, 3] {
            m = m.with(i);
        }
        assert_eq!(m.count(), 3);
        assert!(m.contains(3) && m.contains(M::POSITIONS - 1) && !m.contains(1));
        assert_eq!(M::from_words(&m.to_words()), m);
        let mut n = m;
        assert!(n.insert(1) && !n.insert(1) && !n.insert(3));
        assert_eq!(n, m.with(1));
        let mut seen = [0usize; 3];
        let mut n = 0;
        while let Some(i) = m.pop_lowest() {
            seen[n] = i;
            n += 1;
        }
        assert_eq!(seen, [0, 3, M::POSITIONS - 1]);
        assert!(m.is_empty());
    }

    #[test]
    fn masks_roundtrip() {
        roundtrip::<u16>();
        roundtrip::<u32>();
        roundtrip::<u64>();
        roundtrip::<[u64; 2]>();
        roundtrip::<[u64; 4]>();
        roundtrip::<[u64; 8]>();
    }
}
