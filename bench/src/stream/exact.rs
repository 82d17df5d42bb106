//! The exact answers `--exact` sets beside a filter: every distinct line
//! with its count and last position, and optionally a sliding window of
//! the last `W` lines with each line's count in it.
//!
//! Each distinct line gets an id (its rank of first appearance), so the
//! window's ring holds ids and the per-line facts are vectors indexed by
//! them; the map from line to id and the vector of lines share each
//! line's bytes.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

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

/// Every distinct line of the stream so far, with its count and last
/// position, and the window's counts.
pub struct Exact {
    ids: HashMap<Rc<[u8]>, usize, DefaultHasher>,
    /// The lines by id.
    keys: Vec<Rc<[u8]>>,
    /// Occurrences of each id in the whole stream.
    counts: Vec<u64>,
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
            keys: Vec::new(),
            counts: Vec::new(),
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
                let id = self.keys.len();
                let key: Rc<[u8]> = key.into();
                self.ids.insert(Rc::clone(&key), id);
                self.keys.push(key);
                self.counts.push(0);
                self.last.push(0);
                (id, None)
            }
        };
        self.counts[id] += 1;
        self.last[id] = position;
        if let Some(w) = &mut self.window {
            w.push(id);
        }
        Seen { id, gap }
    }

    /// Distinct lines so far.
    pub fn distinct(&self) -> usize {
        self.keys.len()
    }

    /// The id of `key`, if it occurred.
    pub fn id(&self, key: &[u8]) -> Option<usize> {
        self.ids.get(key).copied()
    }

    /// The line of `id`.
    pub fn key(&self, id: usize) -> &[u8] {
        &self.keys[id]
    }

    /// The count of `id`: in the window when there is one, else in the
    /// whole stream.
    pub fn count(&self, id: usize) -> u64 {
        match &self.window {
            Some(w) => w.inside.get(id).copied().unwrap_or(0),
            None => self.counts[id],
        }
    }

    /// Distinct lines in the window (all of them without a window).
    pub fn window_distinct(&self) -> usize {
        self.window.as_ref().map_or(self.keys.len(), |w| w.distinct)
    }

    /// The ids with a [`count`](Self::count) above 0, by id.
    pub fn counted(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.keys.len()).filter(|&id| self.count(id) > 0)
    }

    /// The `n` ids of the largest [`count`](Self::count), largest first,
    /// ties by line (bytewise ascending).
    pub fn top(&self, n: usize) -> Vec<usize> {
        let mut ids: Vec<usize> = self.counted().collect();
        ids.sort_unstable_by(|&a, &b| {
            self.count(b)
                .cmp(&self.count(a))
                .then_with(|| self.keys[a].cmp(&self.keys[b]))
        });
        ids.truncate(n);
        ids
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
    fn counts_gaps_and_top() {
        let mut e = Exact::new(None);
        let seen: Vec<Seen> = ["a", "b", "a", "c", "a", "b"]
            .iter()
            .map(|k| e.observe(k.as_bytes()))
            .collect();
        let gaps: Vec<Option<u64>> = seen.iter().map(|s| s.gap).collect();
        assert_eq!(gaps, [None, None, Some(2), None, Some(2), Some(4)]);
        assert_eq!(seen[4].id, 0);
        assert_eq!(
            (e.distinct(), e.count(0), e.count(1), e.count(2)),
            (3, 3, 2, 1)
        );
        assert_eq!(e.top(2), [0, 1]);
        assert_eq!(e.top(10), [0, 1, 2]);
        assert_eq!(e.key(2), b"c");
        assert_eq!((e.id(b"b"), e.id(b"z")), (Some(1), None));
        assert_eq!(e.window_distinct(), 3);
    }

    /// The window counts the last `len` lines only.
    #[test]
    fn window_counts_the_last_lines() {
        let mut e = Exact::new(Some(3));
        for k in ["a", "a", "b", "c", "c"] {
            e.observe(k.as_bytes());
        }
        // Window: b, c, c.
        assert_eq!((e.count(0), e.count(1), e.count(2)), (0, 1, 2));
        assert_eq!(e.window_distinct(), 2);
        assert_eq!(e.counted().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(e.top(1), [2]);
    }
}
