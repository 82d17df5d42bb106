//! Classic rows: the false-positive rate of filters planned for 1 % and
//! 0.1 % at n items, at equal memory in every layout, beside each layout's
//! formula; and the unblocked reference [`FlatClassic`].

use streambloom::classic::{Classic, ClassicParams};
use streambloom::hash::mix64;

use super::report::Row;
use super::{Scale, LAYOUTS};

/// The textbook Bloom filter (Bloom 1970): `m` bits, an item's `k` bits
/// drawn independently and uniformly from all `m` (two may coincide), so
/// its false-positive rate is `(1 - (1 - 1/m)^(kn))^k ≈ (1 - e^(-kn/m))^k`.
pub struct FlatClassic {
    bits: Vec<u64>,
    m: usize,
    k: u32,
}

impl FlatClassic {
    /// `m` clear bits (at least 1), `k` an item.
    pub fn new(m: usize, k: u32) -> FlatClassic {
        let m = m.max(1);
        FlatClassic {
            bits: vec![0; m.div_ceil(64)],
            m,
            k,
        }
    }

    /// The `j`-th bit of pre-hashed key `h`: `h` remixed with `j`, reduced
    /// onto `0..m` by multiply-shift.
    fn bit(&self, h: u64, j: u32) -> usize {
        let x = mix64(h.wrapping_add(u64::from(j + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        ((u128::from(x) * self.m as u128) >> 64) as usize
    }

    /// Sets the `k` bits of `h`.
    pub fn insert(&mut self, h: u64) {
        for j in 0..self.k {
            let b = self.bit(h, j);
            self.bits[b / 64] |= 1 << (b % 64);
        }
    }

    /// Whether all `k` bits of `h` are set.
    pub fn contains(&self, h: u64) -> bool {
        (0..self.k).all(|j| {
            let b = self.bit(h, j);
            self.bits[b / 64] & (1 << (b % 64)) != 0
        })
    }
}

/// The false-positive targets of the rows.
const TARGETS: [f64; 2] = [0.01, 0.001];

/// The rows: per target, measured FPR per layout and each layout's formula.
pub fn rows(scale: &Scale, seed: u64) -> Result<Vec<Row>, String> {
    let n = scale.classic_items;
    let mut rows = Vec::new();
    for target in TARGETS {
        // Planned for one block; the other layouts get the same bits and k.
        let plan = ClassicParams::plan(n, target).map_err(|e| e.to_string())?;
        let setting = format!(
            "target {}, n = {n}, m = {} bits, k = {}",
            pct(target),
            plan.cells,
            plan.k
        );
        let key = |i: u64| mix64(seed ^ i);
        let queries = n..n + scale.classic_queries;
        let mut measured = [None; 3];
        let mut predicted = [None; 3];
        for (i, layout) in LAYOUTS.into_iter().enumerate() {
            let params = plan.with_layout(layout);
            let mut f = Classic::new(params, seed).map_err(|e| e.to_string())?;
            (0..n).for_each(|i| {
                f.insert_hash(key(i));
            });
            measured[i] = Some(rate(queries.clone(), |i| f.contains_hash(key(i))));
            predicted[i] = Some(params.predicted_fpr(n));
        }
        let mut flat = FlatClassic::new(plan.cells, plan.k);
        (0..n).for_each(|i| flat.insert(key(i)));
        measured[2] = Some(rate(queries, |i| flat.contains(key(i))));
        predicted[2] = Some(plan.unblocked_fpr(n));
        rows.push(Row::new(
            "Classic",
            setting.clone(),
            "FPR measured",
            measured,
            5,
        ));
        rows.push(Row::new(
            "Classic",
            setting,
            "FPR predicted (layout's formula)",
            predicted,
            5,
        ));
    }
    Ok(rows)
}

/// The share of `keys` for which `hit` holds.
pub fn rate(keys: std::ops::Range<u64>, mut hit: impl FnMut(u64) -> bool) -> f64 {
    let total = keys.end - keys.start;
    keys.filter(|&i| hit(i)).count() as f64 / total.max(1) as f64
}

/// `0.01` as `1 %`, `0.001` as `0.1 %`.
pub fn pct(x: f64) -> String {
    format!("{} %", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference delivers the textbook rate `(1 - (1 - 1/m)^(kn))^k`:
    /// m = 2^16 bits, k = 5, n = 6 000 (rate ≈ 0.0105) over 200 000
    /// never-inserted keys. Two spreads: the count of false positives is
    /// binomial, standard error `sqrt(p(1-p)/q)`; and the filter is one
    /// draw, whose set-bit count has a standard deviation below
    /// `sqrt(m)/2`, so its fill `f` varies by at most `sqrt(m)/(2mf)`
    /// relative and the rate `f^k` by `k` times that. The tolerance is 5
    /// standard deviations of the two together (about 0.0018 here).
    #[test]
    #[cfg_attr(miri, ignore)]
    fn reference_meets_the_textbook_rate() {
        let (m, k, n, q) = (1usize << 16, 5u32, 6_000u64, 200_000u64);
        let mut f = FlatClassic::new(m, k);
        (0..n).for_each(|i| f.insert(mix64(i)));
        let measured = rate(n..n + q, |i| f.contains(mix64(i)));
        let (mf, kf) = (m as f64, f64::from(k));
        let fill = 1.0 - (1.0 - 1.0 / mf).powf(kf * n as f64);
        let formula = fill.powf(kf);
        let se_queries = (formula * (1.0 - formula) / q as f64).sqrt();
        let se_filter = formula * kf * mf.sqrt() / (2.0 * mf * fill);
        let tolerance = 5.0 * se_queries.hypot(se_filter);
        assert!(
            (measured - formula).abs() < tolerance,
            "measured {measured}, formula {formula} ± {tolerance}"
        );
        // An inserted key is always found.
        assert!((0..n).all(|i| f.contains(mix64(i))));
    }
}
