//! `count --top N`'s candidates: the `N` lines of largest estimate seen so
//! far.
//!
//! After each line is counted, its estimate is offered: a candidate's
//! estimate is updated; another line enters if there is room or if its
//! estimate beats the smallest candidate's, which leaves. Without a
//! window the estimates only grow, so a line's last offer carries its
//! final estimate, and a line left out then had `N` candidates at or above
//! it, which stay there: the candidates end as the `N` largest final
//! estimates (ties aside). With a window, estimates also fall as lines
//! leave it, so a candidate's stored estimate may be stale: before the
//! smallest is compared with a newcomer it is re-estimated (and the next
//! smallest, while they fall), and all are re-estimated at the end. A line
//! can still be missed when candidates above the smallest hold stale
//! estimates.
//!
//! Lines are identified by their 64-bit hash, as the filter identifies
//! them; a candidate keeps its bytes for the report.

use std::collections::{BTreeSet, HashMap};

/// The `N` best estimates so far.
pub struct Top {
    n: usize,
    /// Whether estimates fall (a window): re-estimate the smallest before
    /// comparing.
    falling: bool,
    /// By hash: the estimate and the line.
    lines: HashMap<u64, (u32, Box<[u8]>)>,
    /// `(estimate, hash)`, smallest first.
    order: BTreeSet<(u32, u64)>,
}

impl Top {
    /// Room for `n` candidates, whose estimates may fall if `falling`.
    pub fn new(n: usize, falling: bool) -> Top {
        Top {
            n,
            falling,
            lines: HashMap::new(),
            order: BTreeSet::new(),
        }
    }

    /// Offers `line` (hash `h`) at `estimate`; `now` estimates a
    /// candidate when estimates fall.
    pub fn offer(&mut self, h: u64, estimate: u32, line: &[u8], now: impl Fn(u64) -> u32) {
        if let Some(&(old, _)) = self.lines.get(&h) {
            if old != estimate {
                self.set(h, old, estimate);
            }
            return;
        }
        if self.lines.len() >= self.n {
            while let Some(&(least, out)) = self.order.first().filter(|_| self.falling) {
                let current = now(out);
                if current >= least {
                    break;
                }
                self.set(out, least, current);
            }
            match self.order.first() {
                Some(&(least, out)) if estimate > least => {
                    self.order.remove(&(least, out));
                    self.lines.remove(&out);
                }
                _ => return,
            }
        }
        self.lines.insert(h, (estimate, line.into()));
        self.order.insert((estimate, h));
    }

    /// Candidate `h`'s estimate from `old` to `new`.
    fn set(&mut self, h: u64, old: u32, new: u32) {
        self.order.remove(&(old, h));
        self.order.insert((new, h));
        if let Some((e, _)) = self.lines.get_mut(&h) {
            *e = new;
        }
    }

    /// Every candidate re-estimated by `estimate` (for a window).
    pub fn refresh(&mut self, estimate: impl Fn(u64) -> u32) {
        self.order.clear();
        for (&h, (e, _)) in &mut self.lines {
            *e = estimate(h);
            self.order.insert((*e, h));
        }
    }

    /// The candidates, largest estimate first, ties by line (bytewise):
    /// `(estimate, hash, line)`.
    pub fn ranked(&self) -> Vec<(u32, u64, &[u8])> {
        let mut all: Vec<(u32, u64, &[u8])> = self
            .lines
            .iter()
            .map(|(&h, (e, line))| (*e, h, &line[..]))
            .collect();
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(b.2)));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing counts: the candidates end as the largest.
    #[test]
    fn keeps_the_largest() {
        let mut top = Top::new(2, false);
        let mut counts = [0u32; 5];
        for &i in &[0usize, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 0, 0, 0, 0, 0] {
            counts[i] += 1;
            top.offer(i as u64, counts[i], format!("l{i}").as_bytes(), |_| 0);
        }
        let ranked: Vec<(u32, &[u8])> = top.ranked().iter().map(|r| (r.0, r.2)).collect();
        assert_eq!(ranked, [(6, &b"l0"[..]), (4, &b"l4"[..])]);
        top.refresh(|h| if h == 0 { 1 } else { 9 });
        assert_eq!(top.ranked()[0], (9, 4, &b"l4"[..]));
    }

    /// Falling estimates: a stale smallest candidate is re-estimated and
    /// gives way.
    #[test]
    fn stale_candidates_give_way() {
        let mut top = Top::new(1, true);
        top.offer(1, 10, b"old", |_| 0);
        top.offer(2, 3, b"new", |h| if h == 1 { 2 } else { 3 });
        assert_eq!(top.ranked(), [(3, 2, &b"new"[..])]);
        let mut kept = Top::new(1, true);
        kept.offer(1, 10, b"old", |_| 0);
        kept.offer(2, 3, b"new", |_| 5);
        assert_eq!(kept.ranked(), [(5, 1, &b"old"[..])]);
    }
}
