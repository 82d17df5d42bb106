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

/// The smallest `x` in `from..=most` with `meets(x)` (false, then true, as
/// `x` grows), found by doubling from `from` (so a small answer costs few
/// evaluations, and `most` is never evaluated unless the answer is near
/// it); `None` when no `x` in the range meets it.
pub(crate) fn first_doubling(
    from: usize,
    most: usize,
    mut meets: impl FnMut(usize) -> bool,
) -> Option<usize> {
    if from > most {
        return None;
    }
    let (mut lo, mut hi) = (from, from);
    while !meets(hi) {
        if hi == most {
            return None;
        }
        lo = hi + 1;
        hi = hi.saturating_mul(2).clamp(lo, most);
    }
    Some(bisect(lo, hi, &mut meets))
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
    fn both_searches_agree_with_a_scan() {
        for lo in 0..20 {
            for hi in 0..40 {
                for threshold in 0..45 {
                    let want = scan(lo, hi, threshold);
                    assert_eq!(first(lo, hi, |x| x >= threshold), want);
                    assert_eq!(first_doubling(lo, hi, |x| x >= threshold), want);
                }
            }
        }
    }

    #[test]
    fn doubling_reaches_the_top_of_the_range_without_overflow() {
        let top = usize::MAX;
        assert_eq!(first_doubling(1, top, |x| x == top), Some(top));
        assert_eq!(first_doubling(1, top, |_| false), None);
        assert_eq!(first_doubling(0, top, |x| x > top / 3), Some(top / 3 + 1));
        assert_eq!(first(0, top, |x| x > top - 5), Some(top - 4));
    }

    #[test]
    fn doubling_evaluates_logarithmically_many_points() {
        let mut calls = 0;
        let found = first_doubling(1, usize::MAX, |x| {
            calls += 1;
            x >= 1000
        });
        assert_eq!(found, Some(1000));
        assert!(calls <= 2 * 11 + 2, "{calls} evaluations");
    }
}
