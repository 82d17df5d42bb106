//! The exact answers `--exact` sets beside a filter: every distinct line
//! with its last position, and optionally a sliding window of the last
//! `W` lines with each line's count in it.
//!
//! Each distinct line gets an id (its rank of first appearance), so the
//! window's ring holds ids and the per-line facts are vectors indexed by
//! them; the map from line to id holds each distinct line once.

use std::collections::{HashMap, VecDeque};

use streambloom::hash::{seeded_hasher, DefaultHasher};

/// What [`Exact::observe`] learned about a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The line's id.
    pub id: usize,
    /// Lines since its previous occurrence (1: the line before), or `None`
    /// on its first.
    pub gap: Option<u64>,
}

/// Every distinct line of the stream so far, with its last position, and
/// the window's counts.
pub struct Exact {
    ids: HashMap<Box<[u8]>, usize, DefaultHasher>,
    /// The position (0-based line number) of each id's last occurrence.
    last: Vec<u64>,
    /// Lines observed.
    position: u64,
    window: Option<Window>,
}

/// The last `len` lines' ids, and each id's count among them.
struct Window {
    len: usize,
    ring: VecDeque<usize>,
    inside: Vec<u64>,
    /// Ids with a count above 0 in the window.
    distinct: usize,
}

impl Exact {
    /// An empty record; with `window`, also of the last `window` lines.
    pub fn new(window: Option<usize>) -> Exact {
        Exact {
            // A seed of its own: the record's hashing is no filter's.
            ids: HashMap::with_hasher(seeded_hasher(0x00EC_AC70)),
            last: Vec::new(),
            position: 0,
            window: window.map(|len| Window {
                len,
                ring: VecDeque::with_capacity(len.min(1 << 20)),
                inside: Vec::new(),
                distinct: 0,
            }),
        }
    }

    /// Records one occurrence of `key` and says what was known of it
    /// before.
    pub fn observe(&mut self, key: &[u8]) -> Seen {
        let position = self.position;
        self.position += 1;
        let (id, gap) = match self.ids.get(key) {
            Some(&id) => {
                let gap = position - self.last[id];
                (id, Some(gap))
            }
            None => {
                let id = self.last.len();
                self.ids.insert(key.into(), id);
                self.last.push(0);
                (id, None)
            }
        };
        self.last[id] = position;
        if let Some(w) = &mut self.window {
            w.push(id);
        }
        Seen { id, gap }
    }

    /// Distinct lines so far.
    pub fn distinct(&self) -> usize {
        self.last.len()
    }

    /// Distinct lines in the window (all of them without a window).
    pub fn window_distinct(&self) -> usize {
        self.window.as_ref().map_or(self.last.len(), |w| w.distinct)
    }
}

impl Window {
    /// `id` enters; the oldest leaves once the window is full.
    fn push(&mut self, id: usize) {
        if self.ring.len() == self.len {
            if let Some(old) = self.ring.pop_front() {
                self.inside[old] -= 1;
                if self.inside[old] == 0 {
                    self.distinct -= 1;
                }
            }
        }
        if self.inside.len() <= id {
            self.inside.resize(id + 1, 0);
        }
        if self.inside[id] == 0 {
            self.distinct += 1;
        }
        self.inside[id] += 1;
        self.ring.push_back(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps() {
        let mut e = Exact::new(None);
        let seen: Vec<Seen> = ["a", "b", "a", "c", "a", "b"]
            .iter()
            .map(|k| e.observe(k.as_bytes()))
            .collect();
        let gaps: Vec<Option<u64>> = seen.iter().map(|s| s.gap).collect();
        assert_eq!(gaps, [None, None, Some(2), None, Some(2), Some(4)]);
        assert_eq!(seen[4].id, 0);
        assert_eq!((e.distinct(), e.window_distinct()), (3, 3));
    }

    /// The window holds the last `len` lines only.
    #[test]
    fn window_counts_the_last_lines() {
        let mut e = Exact::new(Some(3));
        for k in ["a", "a", "b", "c", "c"] {
            e.observe(k.as_bytes());
        }
        // Window: b, c, c.
        assert_eq!(e.window_distinct(), 2);
    }
}
