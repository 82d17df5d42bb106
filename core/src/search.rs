//! The one search every planner runs: the first size at which a monotone
//! condition holds (an error rate falls to a target, a buffer stops
//! fitting), by doubling then bisection, in `O(log n)` evaluations of the
//! condition (each of which may be an expensive formula).

/// The smallest `x` in `lo..=hi` with `meets(x)`, where `meets` is false
/// up to some point and true from it on; `None` when `meets(hi)` is false
/// or the range is empty.
pub(crate) fn first(lo: usize, hi: usize, mut meets: impl FnMut(usize) -> bool) -> Option<usize> {
    if lo > hi || !meets(hi) {
        return None;
    }
    Some(bisect(lo, hi, &mut meets))
}

/// The smallest `x` in `lo..=hi` with `meets(x)` (false, then true, as
/// `x` grows), found by galloping from `guess` (clamped into the range):
/// steps of 1, 2, 4, … down from it while `meets` holds, or up from it
/// while it fails, then bisection. An answer within a factor of two of the
/// guess costs `O(log distance)` evaluations, and no point evaluated is
/// farther from the answer than its distance to the guess plus one, so
/// where `meets` is costly far from its answer (a planner's error formula
/// at tiny sizes), a good guess avoids those points altogether. `None`
/// when no `x` in the range meets it.
pub(crate) fn first_from(
    lo: usize,
    hi: usize,
    guess: usize,
    mut meets: impl FnMut(usize) -> bool,
) -> Option<usize> {
    if lo > hi {
        return None;
    }
    let guess = guess.clamp(lo, hi);
    let mut step = 1usize;
    if meets(guess) {
        // `meets(top)` holds: the answer is at most `top`.
        let mut top = guess;
        while top > lo {
            let probe = top.saturating_sub(step).max(lo);
            if !meets(probe) {
                return Some(bisect(probe + 1, top, &mut meets));
            }
            top = probe;
            step = step.saturating_mul(2);
        }
        Some(lo)
    } else {
        // `meets(bottom)` fails: the answer is above `bottom`.
        let mut bottom = guess;
        while bottom < hi {
            let probe = bottom.saturating_add(step).min(hi);
            if meets(probe) {
                return Some(bisect(bottom + 1, probe, &mut meets));
            }
            bottom = probe;
            step = step.saturating_mul(2);
        }
        None
    }
}

/// The smallest `x` in `lo..=hi` with `meets(x)`, given `meets(hi)`.
fn bisect(mut lo: usize, mut hi: usize, meets: &mut impl FnMut(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The linear-scan oracle.
    fn scan(lo: usize, hi: usize, threshold: usize) -> Option<usize> {
        (lo..=hi).find(|&x| x >= threshold)
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "safe integer code, 1.6 million searches: minutes under Miri"
    )]
    fn both_searches_agree_with_a_scan() {
        for lo in 0..20 {
            for hi in 0..40 {
                for threshold in 0..45 {
                    let want = scan(lo, hi, threshold);
                    assert_eq!(first(lo, hi, |x| x >= threshold), want);
                    for guess in 0..45 {
                        assert_eq!(first_from(lo, hi, guess, |x| x >= threshold), want);
                    }
                }
            }
        }
    }

    #[test]
    fn galloping_reaches_both_ends_of_the_range_without_overflow() {
        let top = usize::MAX;
        assert_eq!(first_from(1, top, 1, |x| x == top), Some(top));
        assert_eq!(first_from(1, top, 1, |_| false), None);
        assert_eq!(first_from(0, top, 0, |x| x > top / 3), Some(top / 3 + 1));
        assert_eq!(first_from(0, top, top, |_| true), Some(0));
        assert_eq!(first_from(5, top, top - 1, |x| x > 6), Some(7));
        assert_eq!(first(0, top, |x| x > top - 5), Some(top - 4));
    }

    #[test]
    fn galloping_evaluates_logarithmically_many_points_near_the_answer() {
        for guess in [1, 700, 1000, 1300, 1 << 40] {
            let mut calls = 0;
            let mut farthest = 0;
            let found = first_from(1, usize::MAX, guess, |x| {
                calls += 1;
                farthest = farthest.max(x.abs_diff(1000));
                x >= 1000
            });
            assert_eq!(found, Some(1000));
            let distance = guess.abs_diff(1000);
            let log = (usize::BITS - distance.leading_zeros()) as usize;
            assert!(calls <= 2 * log + 2, "guess {guess}: {calls} evaluations");
            assert!(
                farthest <= distance + 1,
                "guess {guess}: evaluated {farthest} away"
            );
        }
    }
}
