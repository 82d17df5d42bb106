//! The unblocked reference, the paper's model written plainly: `m` `u32`
//! counters, an item's `k` positions drawn independently from all `m` (so
//! two may coincide), and Minimum Selection (§2.2), Minimal Increase (§3.2)
//! and Recurring Minimum (§3.3, without `B_f`) as the paper states them,
//! with the library's two documented refinements to Recurring Minimum (see
//! [`FlatRm`]), so that only the layout differs from the library.

use streambloom::hash::{self, mix64, DefaultHasher};

use super::workload::{Counts, Deletes, Recurring, K};

/// Salt of the unblocked Recurring Minimum's secondary positions.
const SECONDARY: u64 = 0x5EC0_4DA7_5EC0_4DA7;

/// The unblocked reference's counters: `m` plain `u32`s; an item's `k`
/// positions are `k` independent uniform draws from all `m` (remixes of its
/// 64-bit hash), as in the paper's model.
pub struct Flat {
    c: Vec<u32>,
    hasher: DefaultHasher,
}

impl Flat {
    /// `m` counters at zero, hashing with `seed`.
    pub fn new(m: usize, seed: u64) -> Flat {
        Flat {
            c: vec![0; m],
            hasher: hash::seeded_hasher(seed),
        }
    }
    fn hash(&self, v: u64) -> u64 {
        hash::hash_key(&self.hasher, &v)
    }
    fn cells(&self, h: u64) -> [usize; K] {
        core::array::from_fn(|j| {
            let x = mix64(h.wrapping_add((j as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            hash::block_of(x, self.c.len()) // multiply-shift onto 0..m
        })
    }
    /// The smallest of `h`'s counters and how many of its `k` hold it.
    fn min_count(&self, h: u64) -> (u32, u32) {
        let cells = self.cells(h);
        let min = cells.iter().map(|&i| self.c[i]).min().unwrap_or(0);
        let count = cells.iter().filter(|&&i| self.c[i] == min).count();
        (min, count as u32)
    }
    fn add(&mut self, h: u64, r: u32) {
        for i in self.cells(h) {
            self.c[i] += r;
        }
    }
    fn sub(&mut self, h: u64, r: u32) {
        for i in self.cells(h) {
            self.c[i] = self.c[i].saturating_sub(r);
        }
    }
    fn peak(&self) -> u32 {
        self.c.iter().copied().max().unwrap_or(0)
    }
}

/// Minimum Selection (§2.2), unblocked.
pub struct FlatMs(pub Flat);

impl Counts for FlatMs {
    fn insert(&mut self, v: u64) {
        self.0.add(self.0.hash(v), 1);
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(self.0.hash(v)).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMs {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(self.0.hash(v), r);
    }
}

/// Minimal Increase (§3.2), unblocked; its deletion lowers all `k`
/// counters, the paper's "MI with deletions".
pub struct FlatMi(pub Flat);

impl Counts for FlatMi {
    fn insert(&mut self, v: u64) {
        let h = self.0.hash(v);
        let to = self.0.min_count(h).0 + 1;
        for i in self.0.cells(h) {
            self.0.c[i] = self.0.c[i].max(to);
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(self.0.hash(v)).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMi {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(self.0.hash(v), r);
    }
}

/// Recurring Minimum (§3.3, without `B_f`), unblocked, with the library's
/// two refinements, so that only the layout differs: an item already in the
/// secondary is counted there on every insertion (read literally, the paper
/// counts it only while its minimum is single, which under-estimates; the
/// paper reports no false negatives for RM), and a single minimum is
/// answered by the smaller of the primary and secondary minima.
///
/// Insert into the primary; if `x` is in the secondary (secondary minimum >
/// 0) add 1 there, else on a single minimum put it there with its primary
/// minimum. Estimate: a recurring minimum, else the smaller of it and the
/// secondary value if that is above 0. Delete: from the primary, then from
/// the secondary if the minimum is single and `x` is there.
pub struct FlatRm {
    p: Flat,
    s: Flat,
}

impl FlatRm {
    /// `primary` and `secondary` counters.
    pub fn new(primary: usize, secondary: usize, seed: u64) -> FlatRm {
        FlatRm {
            p: Flat::new(primary, seed),
            s: Flat::new(secondary, seed),
        }
    }
}

impl Counts for FlatRm {
    fn insert(&mut self, v: u64) {
        let h = self.p.hash(v);
        self.p.add(h, 1);
        if self.s.min_count(h ^ SECONDARY).0 > 0 {
            self.s.add(h ^ SECONDARY, 1);
            return;
        }
        let (min, count) = self.p.min_count(h);
        if count < 2 {
            self.s.add(h ^ SECONDARY, min);
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        let h = self.p.hash(v);
        let (min, count) = self.p.min_count(h);
        if count >= 2 {
            return min;
        }
        match self.s.min_count(h ^ SECONDARY).0 {
            0 => min,
            s => s.min(min),
        }
    }
    fn peak(&self) -> u32 {
        self.p.peak().max(self.s.peak())
    }
}

impl Deletes for FlatRm {
    fn remove(&mut self, v: u64, r: u32) {
        let h = self.p.hash(v);
        self.p.sub(h, r);
        if self.p.min_count(h).1 < 2 && self.s.min_count(h ^ SECONDARY).0 > 0 {
            self.s.sub(h ^ SECONDARY, r);
        }
    }
}

impl Recurring for FlatRm {
    fn primary_minimum(&self, v: u64) -> (u32, u32) {
        self.p.min_count(self.p.hash(v))
    }
}

#[cfg(test)]
mod tests {
    use super::super::library::Rng;
    use super::super::workload::{Zipf, N};
    use super::*;

    /// Under insertions alone the unblocked MS and MI never under-estimate
    /// and MI is never above MS (Claim 4).
    #[test]
    fn unblocked_reference_bounds() {
        let mut ms = FlatMs(Flat::new(300, 1));
        let mut mi = FlatMi(Flat::new(300, 1));
        let zipf = Zipf::new(1.0);
        let mut rng = Rng::new(2);
        let mut truth = vec![0u32; N];
        for _ in 0..5000 {
            let v = zipf.sample(&mut rng);
            truth[v as usize] += 1;
            ms.insert(v);
            mi.insert(v);
        }
        for (v, &f) in truth.iter().enumerate() {
            let (a, b) = (ms.estimate(v as u64), mi.estimate(v as u64));
            assert!(f <= b && b <= a, "value {v}: true {f}, MI {b}, MS {a}");
        }
    }
}
