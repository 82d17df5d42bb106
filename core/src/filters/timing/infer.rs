//! The inferential query's evidence and its cache (paper §4, §4.4): what
//! an item's timers say, and `F(c, 0, B)` for the layout in use.

use super::{TimingLayout, TimingParams};
use crate::analysis::timing::{Age, Distinct, Placed, Touched, touched};
use crate::hash::Layout;

/// What an item's timers say (paper §4): `λ_x` ([`age`](Self::age)), and
/// how many of its distinct timers `R_x` (`r_x`) and of those holding the
/// oldest age `C_x` (`c_x`) lie in its first and in its second block (the
/// second only with [`Layout::TwoBlocks`] when the halves are apart).
///
/// ```
/// use streambloom::timing::Evidence;
/// use streambloom::analysis::timing::Age;
/// let e = Evidence::default();
/// assert_eq!((e.age, e.distinct(), e.oldest_count()), (Age::Expired, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// `λ_x`, or [`Age::Expired`] when a timer is expired by its age.
    pub age: Age,
    /// Distinct timers of the item in its first and second block.
    pub distinct: [u32; 2],
    /// Of those, the ones holding the oldest age (both 0 when expired).
    pub oldest: [u32; 2],
}

impl Default for Evidence {
    fn default() -> Evidence {
        Evidence {
            age: Age::Expired,
            distinct: [0, 0],
            oldest: [0, 0],
        }
    }
}

impl Evidence {
    /// `r_x`, the item's distinct timers (saturating at `u32::MAX` for
    /// evidence no filter reads: a filter has at most 64 timers an item).
    ///
    /// ```
    /// use streambloom::timing::Evidence;
    /// let e = Evidence { distinct: [2, 1], ..Evidence::default() };
    /// assert_eq!(e.distinct(), 3);
    /// ```
    pub fn distinct(&self) -> u32 {
        self.distinct[0].saturating_add(self.distinct[1])
    }

    /// `c_x`, the timers holding the oldest age (0 when expired; saturating
    /// as [`distinct`](Self::distinct)).
    pub fn oldest_count(&self) -> u32 {
        self.oldest[0].saturating_add(self.oldest[1])
    }
}

/// Largest half of `k` in two blocks: `⌈64/2⌉`, W8's 64 cells.
const HALF: usize = 32;
/// Cache slots: `c` timers in one block (`0..=64`), then `(c1, c2)` in
/// two (`c1, c2` in `0..=HALF`).
const SLOTS: usize = 65 + (HALF + 1) * (HALF + 1);

/// The posterior's model of one filter: where timers are, the stream's
/// `D(j)`, and `F(c, 0, B)` cached for every split of `c` (§4.4).
#[derive(Clone, Debug)]
pub(crate) struct Inference {
    distinct: Distinct,
    placed: Placed,
    k: u32,
    /// `F(c, 0, B)`: slot `c` for one block, `65 + c1·(HALF+1) + c2` for two.
    cache: [f64; SLOTS],
}

impl Inference {
    /// The model of a filter with `params`, `blocks` blocks of
    /// `block_cells` cells, for a stream of `distinct`.
    pub(crate) fn new(
        params: &TimingParams,
        blocks: usize,
        block_cells: usize,
        distinct: Distinct,
    ) -> Inference {
        let placed = match params.layout {
            TimingLayout::OneBlock => Placed::Blocked {
                layout: Layout::OneBlock,
                blocks,
                block_cells,
            },
            TimingLayout::TwoBlocks => Placed::Blocked {
                layout: Layout::TwoBlocks,
                blocks,
                block_cells,
            },
            TimingLayout::Unblocked => Placed::Unblocked {
                m: blocks * block_cells,
            },
        };
        let k = params.k;
        let d = distinct.at(params.block as f64);
        // One law of the covered counts of `k` given timers answers every
        // `c <= k` (the covered ones are a uniform subset), and one of
        // `(k1, k2)` every split: no sum of alternating signs, which past
        // 40 timers cancels to noise (see `touched`). Counts past the
        // law's (capped at the cells there are) read its last, as
        // `Touched::get` caps them.
        let mut cache = [1.0; SLOTS];
        {
            let one: Touched = Touched::new(placed, k, k, 0, d);
            let [s, _] = one.get_all(|c, _, v| cache[c] = v);
            for c in s + 1..=k as usize {
                cache[c] = cache[s];
            }
        }
        let two = params.layout == TimingLayout::TwoBlocks && blocks > 1;
        if two {
            let (k1, k2) = Layout::TwoBlocks.halves(k);
            let both: Touched = Touched::new(placed, k, k1, k2, d);
            let [s1, s2] = both.get_all(|c1, c2, v| {
                if c2 > 0 {
                    cache[slot(c1 as u32, c2 as u32)] = v;
                }
            });
            for c1 in 0..=k1 {
                for c2 in 1..=k2 {
                    let capped = ((c1 as usize).min(s1), (c2 as usize).min(s2));
                    if capped != (c1 as usize, c2 as usize) {
                        cache[slot(c1, c2)] = cache[slot(capped.0 as u32, capped.1 as u32)];
                    }
                }
            }
        }
        Inference {
            distinct,
            placed,
            k,
            cache,
        }
    }

    /// The stream model.
    pub(crate) fn distinct(&self) -> Distinct {
        self.distinct
    }

    /// `F(c, 0, B)` for `oldest` timers in the item's two blocks, cached.
    #[inline]
    pub(crate) fn touched_in_block(&self, oldest: [u32; 2]) -> f64 {
        self.cache[slot(oldest[0], oldest[1])]
    }

    /// `F(r, 0, b)`: all the item's `distinct` timers touched during the
    /// last `b` insertions (only for `λ_x = 0`, so computed on demand).
    pub(crate) fn touched_recently(&self, distinct: [u32; 2], b: u64) -> f64 {
        touched(
            self.placed,
            self.k,
            distinct[0],
            distinct[1],
            self.distinct.at(b as f64),
        )
    }
}

/// The cache slot of `c1` oldest timers in the first block and `c2` in the
/// second.
#[inline(always)]
fn slot(c1: u32, c2: u32) -> usize {
    if c2 == 0 {
        c1 as usize
    } else {
        65 + c1 as usize * (HALF + 1) + c2 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache, filled from one law of the covered counts, holds what
    /// [`touched`] computes slot by slot (to `10^-10` relative: a
    /// different law, of `c` rather than `k` timers), in every layout,
    /// for the largest `k`, for a `k` whose halves differ, and in blocks
    /// of fewer cells than `k`.
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-10 * a.abs().max(b.abs()) + 1e-300
    }

    #[test]
    fn cache_is_touched_slot_by_slot() {
        for layout in [
            TimingLayout::OneBlock,
            TimingLayout::TwoBlocks,
            TimingLayout::Unblocked,
        ] {
            for (k, block, cells) in [
                (64, 40, 64),
                (7, 3, 64),
                (1, 1, 64),
                (64, 40, 16),
                (9, 5, 4),
            ] {
                let params = TimingParams {
                    layout,
                    ..TimingParams::new(64 * 16, k, 100, block, 0, 8)
                };
                let distinct = Distinct::zipf(1000).unwrap();
                // Blocks of fewer cells than `k` cap the counts.
                let inference = Inference::new(&params, 16, cells, distinct);
                let d = distinct.at(block as f64);
                let (k1, k2) = Layout::TwoBlocks.halves(k);
                for c in 0..=k {
                    let want = touched(inference.placed, k, c, 0, d);
                    let got = inference.touched_in_block([c, 0]);
                    assert!(close(got, want), "{layout:?} k {k} c {c}: {got} vs {want}");
                }
                if layout == TimingLayout::TwoBlocks {
                    for c1 in 0..=k1 {
                        for c2 in 1..=k2 {
                            let want = touched(inference.placed, k, c1, c2, d);
                            let got = inference.touched_in_block([c1, c2]);
                            assert!(
                                close(got, want),
                                "k {k} split ({c1}, {c2}): {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The time to build the model (`new`, and again on `set_stream`) by
    /// layout and `k`, W8 blocks:
    /// `cargo test --release -p streambloom --lib inference_cost_report -- --ignored --nocapture`
    #[test]
    #[ignore = "a report: cargo test --release -p streambloom --lib inference_cost_report -- --ignored --nocapture"]
    fn inference_cost_report() {
        for layout in [
            TimingLayout::OneBlock,
            TimingLayout::TwoBlocks,
            TimingLayout::Unblocked,
        ] {
            for k in [3, 8, 16, 32, 64] {
                let params = TimingParams {
                    layout,
                    ..TimingParams::new(64 * 4096, k, 1 << 14, 1 << 10, 0, 8)
                };
                let distinct = Distinct::uniform(1e5).unwrap();
                let calls = 20;
                let start = std::time::Instant::now();
                for _ in 0..calls {
                    core::hint::black_box(Inference::new(&params, 4096, 64, distinct));
                }
                let each = start.elapsed().as_secs_f64() / f64::from(calls);
                std::println!("{layout:?} k {k:2}: {:9.1} us", each * 1e6);
            }
        }
    }
}
