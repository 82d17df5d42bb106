//! **Range counts** through a dyadic range tree hashed into one Spectral
//! filter (§5.5, Theorem 11).

use super::{Blocked, CounterStore, Policy, Removable, Spectral};
use crate::hash::DefaultHasher;
use crate::{Error, Result};
use core::hash::BuildHasher;

/// The answer of [`RangeTree::range_count`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeCount {
    /// The estimated number of inserted values in the range: the sum of the
    /// estimates of the nodes that cover it.
    pub count: u64,
    /// How many tree nodes were asked: at most 2 per level, and at most
    /// `2·⌊log2 L⌋` for a range of `L ≥ 2` values (Theorem 11).
    pub nodes: u32,
}

/// Counts of `bits`-bit values (`0 .. 2^bits`) and of value ranges.
///
/// The tree is the binary dyadic one: the node at level `l` with prefix `p`
/// covers the values whose top bits are `p`, i.e. `p·2^l .. (p+1)·2^l`.
/// Every node is a key `(l, p)` hashed into **one** shared Spectral filter
/// (the paper's extended domain `R ∪ {v_n}`), so one memory budget serves
/// all levels and a level's load follows its number of distinct nodes.
/// Inserting a value inserts its `bits + 1` ancestors (leaf to root);
/// [`RangeTree::count`] asks one node, [`RangeTree::range_count`] asks the
/// at most two nodes per level that cover the range.
///
/// Each node's estimate keeps the policy's guarantee, so with a policy that
/// never under-estimates, a range count never does either. Size the filter
/// for `n·(bits+1)` distinct keys (Claim 12): the tree multiplies the
/// inserted keys by the depth.
///
/// ```
/// use streambloom::spectral::{MinimumSelection, RangeTree, Spectral, SpectralParams};
/// let f = Spectral::<MinimumSelection>::new(SpectralParams::new(1 << 14, 4), 1)?;
/// let mut t = RangeTree::new(f, 16)?;
/// for v in [3u64, 4, 5, 900] {
///     t.insert(v)?;
/// }
/// let r = t.range_count(3, 100)?;
/// assert!(r.count >= 3 && r.nodes <= 2 * 6);
/// assert!(t.range_count(9, 3).is_err());
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone)]
pub struct RangeTree<P, C: CounterStore = Blocked, H = DefaultHasher> {
    filter: Spectral<P, C, H>,
    bits: u32,
}

impl<P: Policy, C: CounterStore + core::fmt::Debug, H> core::fmt::Debug for RangeTree<P, C, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RangeTree")
            .field("bits", &self.bits)
            .field("filter", &self.filter)
            .finish()
    }
}

impl<P: Policy, C: CounterStore, H: BuildHasher> RangeTree<P, C, H> {
    /// A range tree over values of `bits` bits (1 to 64) kept in `filter`.
    pub fn new(filter: Spectral<P, C, H>, bits: u32) -> Result<Self> {
        if bits == 0 || bits > 64 {
            return Err(Error::param("bits", bits, "in 1..=64"));
        }
        Ok(RangeTree { filter, bits })
    }

    fn check(&self, v: u64) -> Result<()> {
        if self.bits < 64 && v >> self.bits != 0 {
            return Err(Error::param("value", v, "below 2^bits, the tree's range"));
        }
        Ok(())
    }

    fn node(&self, level: u32, prefix: u64) -> u64 {
        self.filter.hash(&(level, prefix))
    }

    /// Inserts `value` (and its ancestors); an error if it has more than
    /// `bits` bits.
    pub fn insert(&mut self, value: u64) -> Result<()> {
        self.check(value)?;
        for level in 0..=self.bits {
            let h = self.node(level, value.checked_shr(level).unwrap_or(0));
            self.filter.insert_hash(h);
        }
        Ok(())
    }

    /// The estimated count of one value: a single lookup, no traversal.
    pub fn count(&self, value: u64) -> Result<u32> {
        self.check(value)?;
        Ok(self.filter.estimate_hash(self.node(0, value)))
    }

    /// The estimated number of inserted values in `lo ..= hi`. Errors when
    /// `lo > hi` or either bound has more than `bits` bits.
    pub fn range_count(&self, lo: u64, hi: u64) -> Result<RangeCount> {
        self.check(lo)?;
        self.check(hi)?;
        if lo > hi {
            return Err(Error::param("lo", lo, "at most hi"));
        }
        let mut out = RangeCount { count: 0, nodes: 0 };
        let mut ask = |level: u32, prefix: u128| {
            out.count += u64::from(self.filter.estimate_hash(self.node(level, prefix as u64)));
            out.nodes += 1;
        };
        let (mut l, mut h) = (u128::from(lo), u128::from(hi) + 1);
        let mut level = 0;
        while l < h {
            if l & 1 == 1 {
                ask(level, l);
                l += 1;
            }
            if h & 1 == 1 {
                h -= 1;
                ask(level, h);
            }
            l >>= 1;
            h >>= 1;
            level += 1;
        }
        Ok(out)
    }

    /// The filter holding the tree's nodes.
    pub fn filter(&self) -> &Spectral<P, C, H> {
        &self.filter
    }

    /// The value width in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }
}

impl<P: Removable, C: CounterStore, H: BuildHasher> RangeTree<P, C, H> {
    /// Removes one occurrence of `value` (and of its ancestors); see
    /// [`Spectral::remove`] for removing what was never inserted.
    pub fn remove(&mut self, value: u64) -> Result<()> {
        self.check(value)?;
        for level in 0..=self.bits {
            let h = self.node(level, value.checked_shr(level).unwrap_or(0));
            self.filter.remove_hash(h);
        }
        Ok(())
    }
}
