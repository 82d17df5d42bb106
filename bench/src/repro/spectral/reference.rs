//! The unblocked reference, the paper's model written plainly: `m` `u32`
//! counters, an item's `k` positions drawn independently from all `m` (so
//! two may coincide), and Minimum Selection (§2.2), Minimal Increase (§3.2)
//! and Recurring Minimum (§3.3, with or without `B_f`) as the paper states
//! them, with the library's two documented refinements to Recurring Minimum
//! (see [`FlatRm`]), so that only the layout differs from the library.
//!
//! Two hash families place the positions ([`Family`]): our seeded hash
//! remixed per position, and the paper's own `⌈m(α_j v mod 1)⌉` with one
//! `α_j` drawn uniformly from [0, 1] per hash function (§6.1).

use streambloom::hash::{self, mix64, DefaultHasher};

use super::library::Rng;
use super::workload::{Counts, Deletes, Recurring, K, N};

/// Salt of the seeds of Recurring Minimum's secondary and of `B_f`.
const SECONDARY: u64 = 0x5EC0_4DA7_5EC0_4DA7;
const MARKER: u64 = 0xB0F1_17E2_B0F1_17E2;

/// Which hash family places an item's positions in the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The library's seeded hash of the value, remixed once per position.
    Mixed,
    /// The paper's `⌈m(α_j v mod 1)⌉` (§6.1), over the values 1–1000 (our
    /// value `v` is the paper's `v + 1`: value 0 would put every position
    /// of it on one counter).
    Paper,
}

/// How one table places an item's `k` positions.
#[derive(Clone, Debug)]
pub enum Hashing {
    /// [`Family::Mixed`] with this hasher.
    Mixed(DefaultHasher),
    /// [`Family::Paper`] with these `α_j`.
    Paper([f64; K]),
}

impl Hashing {
    /// The hashing of `family` drawn from `seed`.
    pub fn new(family: Family, seed: u64) -> Hashing {
        match family {
            Family::Mixed => Hashing::Mixed(hash::seeded_hasher(seed)),
            Family::Paper => {
                let mut rng = Rng::new(seed);
                Hashing::Paper(core::array::from_fn(|_| rng.unit()))
            }
        }
    }
}

/// `m` plain `u32` counters; an item's `k` positions are `k` independent
/// uniform draws from all `m` ([`Hashing`]), as in the paper's model.
pub struct Flat {
    c: Vec<u32>,
    hashing: Hashing,
}

impl Flat {
    /// `m` counters at zero, placed by `hashing`.
    pub fn new(m: usize, hashing: Hashing) -> Flat {
        Flat {
            c: vec![0; m],
            hashing,
        }
    }
    fn cells(&self, v: u64) -> [usize; K] {
        let m = self.c.len();
        match &self.hashing {
            Hashing::Mixed(hasher) => {
                let h = hash::hash_key(hasher, &v);
                core::array::from_fn(|j| {
                    let x =
                        mix64(h.wrapping_add((j as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
                    hash::block_of(x, m) // multiply-shift onto 0..m
                })
            }
            Hashing::Paper(alpha) => core::array::from_fn(|j| {
                let x = (alpha[j] * (v + 1) as f64).fract();
                ((x * m as f64) as usize).min(m - 1)
            }),
        }
    }
    /// The smallest of `v`'s counters and how many of its `k` hold it.
    fn min_count(&self, v: u64) -> (u32, u32) {
        let cells = self.cells(v);
        let min = cells.iter().map(|&i| self.c[i]).min().unwrap_or(0);
        let count = cells.iter().filter(|&&i| self.c[i] == min).count();
        (min, count as u32)
    }
    fn add(&mut self, v: u64, r: u32) {
        for i in self.cells(v) {
            self.c[i] += r;
        }
    }
    fn sub(&mut self, v: u64, r: u32) {
        for i in self.cells(v) {
            self.c[i] = self.c[i].saturating_sub(r);
        }
    }
    /// Sets `v`'s counters to 1 (a Bloom filter's insertion, for `B_f`).
    fn mark(&mut self, v: u64) {
        for i in self.cells(v) {
            self.c[i] = 1;
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
        self.0.add(v, 1);
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(v).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMs {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(v, r);
    }
}

/// Minimal Increase (§3.2), unblocked; its deletion lowers all `k`
/// counters, the paper's "MI with deletions".
pub struct FlatMi(pub Flat);

impl Counts for FlatMi {
    fn insert(&mut self, v: u64) {
        let to = self.0.min_count(v).0 + 1;
        for i in self.0.cells(v) {
            self.0.c[i] = self.0.c[i].max(to);
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        self.0.min_count(v).0
    }
    fn peak(&self) -> u32 {
        self.0.peak()
    }
}

impl Deletes for FlatMi {
    fn remove(&mut self, v: u64, r: u32) {
        self.0.sub(v, r);
    }
}

/// A value's move to Recurring Minimum's secondary, as [`FlatRm`] records
/// it (insertions only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The value's true count when it moved (its insertions so far).
    pub truth: u32,
    /// Its secondary minimum right after the move: the primary minimum it
    /// carried over plus what other values had put on its secondary
    /// counters.
    pub secondary: u32,
}

/// Recurring Minimum (§3.3), unblocked, with the library's two refinements,
/// so that only the layout differs: an item already in the secondary is
/// counted there on every insertion (read literally, the paper counts it
/// only while its minimum is single, which under-estimates; the paper
/// reports no false negatives for RM), and a single minimum is answered by
/// the smaller of the primary and secondary minima.
///
/// Without `B_f`: insert into the primary; if `x` is in the secondary
/// (secondary minimum > 0) add 1 there, else on a single minimum put it
/// there with its primary minimum. Estimate: a recurring minimum, else the
/// smaller of it and the secondary value if that is above 0. Delete: from
/// the primary, then from the secondary if the minimum is single and `x` is
/// there.
///
/// With `B_f` (as the library's `with_marker`): a move also marks `x` in
/// `B_f`; a marked `x` is counted in the secondary on every insertion and
/// removal and estimated by the smaller of its primary and secondary minima;
/// an unmarked one by its primary minimum.
///
/// [`FlatRm::traced`] records each value's first move ([`Move`]), to tell
/// late detection (§3.3.1) from the other causes of error.
pub struct FlatRm {
    p: Flat,
    s: Flat,
    marker: Option<Flat>,
    trace: Option<Trace>,
}

/// Per value: insertions so far, and its first move.
struct Trace {
    seen: Vec<u32>,
    moved: Vec<Option<Move>>,
}

impl FlatRm {
    /// `primary` and `secondary` counters and a `B_f` of `marker_bits` bits
    /// (none for 0), hashed by `family` from `seed`.
    pub fn new(
        primary: usize,
        secondary: usize,
        marker_bits: usize,
        family: Family,
        seed: u64,
    ) -> FlatRm {
        FlatRm::from_tables(
            Flat::new(primary, Hashing::new(family, seed)),
            Flat::new(secondary, Hashing::new(family, seed ^ SECONDARY)),
            (marker_bits > 0).then(|| Flat::new(marker_bits, Hashing::new(family, seed ^ MARKER))),
        )
    }

    /// The filter over the tables given: primary, secondary and `B_f`.
    pub fn from_tables(p: Flat, s: Flat, marker: Option<Flat>) -> FlatRm {
        FlatRm {
            p,
            s,
            marker,
            trace: None,
        }
    }

    /// The same filter, recording each value's first move to the secondary
    /// (for insertions only: removals are not traced).
    pub fn traced(mut self) -> FlatRm {
        self.trace = Some(Trace {
            seen: vec![0; N],
            moved: vec![None; N],
        });
        self
    }

    fn marked(&self, v: u64) -> Option<bool> {
        self.marker.as_ref().map(|b| b.min_count(v).0 > 0)
    }

    /// Whether an insertion or removal of `v` goes to the secondary too.
    fn counted_in_secondary(&self, v: u64) -> bool {
        self.marked(v).unwrap_or_else(|| self.s.min_count(v).0 > 0)
    }
}

impl Counts for FlatRm {
    fn insert(&mut self, v: u64) {
        self.p.add(v, 1);
        if let Some(t) = &mut self.trace {
            t.seen[v as usize] += 1;
        }
        if self.counted_in_secondary(v) {
            self.s.add(v, 1);
            return;
        }
        let (min, count) = self.p.min_count(v);
        if count < 2 {
            self.s.add(v, min);
            if let Some(b) = &mut self.marker {
                b.mark(v);
            }
            let secondary = self.s.min_count(v).0;
            if let Some(t) = &mut self.trace {
                let i = v as usize;
                let truth = t.seen[i];
                t.moved[i].get_or_insert(Move { truth, secondary });
            }
        }
    }
    fn estimate(&self, v: u64) -> u32 {
        let (min, count) = self.p.min_count(v);
        match self.marked(v) {
            Some(true) => min.min(self.s.min_count(v).0),
            Some(false) => min,
            None if count >= 2 => min,
            None => match self.s.min_count(v).0 {
                0 => min,
                s => s.min(min),
            },
        }
    }
    fn peak(&self) -> u32 {
        self.p.peak().max(self.s.peak())
    }
}

impl Deletes for FlatRm {
    fn remove(&mut self, v: u64, r: u32) {
        self.p.sub(v, r);
        let to_secondary = self
            .marked(v)
            .unwrap_or_else(|| self.p.min_count(v).1 < 2 && self.s.min_count(v).0 > 0);
        if to_secondary {
            self.s.sub(v, r);
        }
    }
}

impl Recurring for FlatRm {
    fn primary_minimum(&self, v: u64) -> (u32, u32) {
        self.p.min_count(v)
    }
    fn first_move(&self, v: u64) -> Option<Move> {
        self.trace.as_ref().and_then(|t| t.moved[v as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::super::workload::Zipf;
    use super::*;

    /// Under insertions alone the unblocked MS and MI never under-estimate
    /// and MI is never above MS (Claim 4), with either hash family.
    #[test]
    fn unblocked_reference_bounds() {
        for family in [Family::Mixed, Family::Paper] {
            let mut ms = FlatMs(Flat::new(300, Hashing::new(family, 1)));
            let mut mi = FlatMi(Flat::new(300, Hashing::new(family, 1)));
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
                assert!(
                    f <= b && b <= a,
                    "{family:?} value {v}: true {f}, MI {b}, MS {a}"
                );
            }
        }
    }

    /// The paper's hash on 10 counters with `α_j = (j + 0.5)/10 + 0.001`
    /// puts value `v` (the paper's `w = v + 1`) on
    /// `⌊10 · frac(w α_j)⌋`; the scenario below needs these positions.
    fn ten_counters() -> Flat {
        Flat::new(
            10,
            Hashing::Paper(core::array::from_fn(|j| (j as f64 + 0.5) / 10.0 + 0.001)),
        )
    }

    #[test]
    fn paper_hash_positions() {
        let f = ten_counters();
        assert_eq!(f.cells(0), [0, 1, 2, 3, 4]);
        assert_eq!(f.cells(1), [1, 3, 5, 7, 9]);
        assert_eq!(f.cells(2), [1, 4, 7, 0, 3]);
        assert_eq!(f.cells(5), [3, 9, 5, 1, 7]);
        assert_eq!(f.cells(9), [5; 5]);
    }

    /// A hand-built late detection: value 1's counters all carry others'
    /// counts before its first insertion, whose single minimum then moves a
    /// count of 2 for a true count of 1; the trace records it, and values
    /// with a recurring minimum never move.
    #[test]
    fn trace_records_a_late_detection() {
        let mut rm = FlatRm::from_tables(ten_counters(), ten_counters(), None).traced();
        // Value 5 covers value 1's counters {1,3,5,7,9} once; value 9 puts
        // 5 on counter 5; value 2 adds 1 on counters 1, 3, 7.
        for v in [5, 9, 2] {
            rm.insert(v);
        }
        assert_eq!(rm.first_move(1), None);
        // Value 1 now sees 3, 3, 7, 3, 2: a single minimum of 2 on counter 9.
        rm.insert(1);
        assert_eq!(rm.primary_minimum(1), (2, 1));
        assert_eq!(
            rm.first_move(1),
            Some(Move {
                truth: 1,
                secondary: 2
            })
        );
        assert_eq!(rm.estimate(1), 2);
        // Value 5's own first insertion left all five of its counters at 1:
        // a recurring minimum, no move.
        assert_eq!(rm.first_move(5), None);
    }

    /// With `B_f`, a removal follows the mark: value 1, moved and marked,
    /// then given a recurring minimum (value 2 removed), has its removal
    /// taken from the secondary too; without `B_f` only from the primary
    /// (its minimum is no longer single).
    #[test]
    fn marker_decides_where_removals_go() {
        let run = |marker: Option<Flat>| {
            let mut rm = FlatRm::from_tables(ten_counters(), ten_counters(), marker);
            for v in [5, 9, 2, 1] {
                rm.insert(v);
            }
            rm.remove(2, 1);
            // Value 1's primary counters: 2, 2, 7, 2, 2.
            assert_eq!(rm.primary_minimum(1), (2, 4));
            rm.remove(1, 1);
            (rm.marked(1), rm.s.min_count(1).0, rm.marked(0))
        };
        assert_eq!(run(Some(ten_counters())), (Some(true), 1, Some(false)));
        assert_eq!(run(None), (None, 2, None));
    }
}
