//! HashDoS: with a seed the attacker knows, keys can be crafted that all
//! land in one block; a seed they do not know spreads the same keys.
//!
//! The attacker holds `seeded_hasher(KNOWN_SEED)`, the hasher of a filter
//! built with `new(params, KNOWN_SEED)`, and searches the integers by brute
//! force for keys whose block ([`block_of`], the placement every filter
//! uses) is block 0 of a 1024-block filter: about 1024 tries a key. Two
//! sets are crafted: `FLOOD` keys to insert, and `PROBES` further keys,
//! never inserted, that the attacker wants the filter to report as present
//! (any key placed in block 0 will do).
//!
//! - Against the known seed, the flood saturates block 0 and leaves every
//!   other block as it was: each probe is a false positive (a rate of 1,
//!   where the filter's model predicts a rate near 0 for that many keys).
//!   Both a `Classic` filter (its bits) and a `StableBloom` (its cells) are
//!   flooded. Why `FLOOD = 2000` is enough: an item sets a given one of
//!   the block's `B` cells with probability `k/B` (split-block and Floyd
//!   placements), so a cell is still zero after the flood with probability
//!   `(1 - k/B)^FLOOD`: `e^-27.5` for the Classic filter's 512 bits with
//!   `k = 7`, `e^-47.5` for the Stable filter's 128 cells with `K = 3`
//!   (whose sweep passes block 0 once, at the start, in these 2000 items).
//! - Against another seed (fixed here for determinism, standing for one
//!   drawn at random), the same keys are ordinary keys: the most loaded
//!   block holds no more keys than a binomial bound allows (the smallest
//!   `t` with `blocks · P[Bin(FLOOD, 1/blocks) >= t] <= 1e-6`, a union
//!   bound over the blocks), and the probes' false-positive rate is the
//!   model's within 5 standard errors (`sqrt(p/blocks + p/PROBES)`, as in
//!   `pre_hashed`).
//!
//! Not under Miri (like every test of `api_tests`): the search hashes about
//! three million integers.

use core::hash::BuildHasher;
use std::vec::Vec;
use streambloom::classic::{Classic, ClassicParams};
use streambloom::hash::{block_of, seeded_hasher};
use streambloom::stable::{Eviction, Layout, StableBloom, StableParams};
use streambloom::{Block, W4};

/// Blocks of both filters.
const BLOCKS: usize = 1024;
/// The seed the attacker knows (a default, a constant in the source, or
/// read from a filter's bytes).
const KNOWN_SEED: u64 = 42;
/// A seed the attacker does not know: fixed for a deterministic test, it
/// stands for one drawn at random (`new_random`, or a hardware RNG).
const SECRET_SEED: u64 = 0xA5C3_1F70_94D2_6B8E;
/// Crafted keys inserted.
const FLOOD: usize = 2000;
/// Crafted keys never inserted, queried.
const PROBES: usize = 1000;

/// The attacker's search: the first `FLOOD` integers, then the next
/// `PROBES`, whose hash under the known seed places them in block 0 of a
/// `BLOCKS`-block filter.
fn crafted_keys() -> (Vec<u64>, Vec<u64>) {
    let known = seeded_hasher(KNOWN_SEED);
    let mut keys = (0u64..).filter(|i| block_of(known.hash_one(i), BLOCKS) == 0);
    let flood = keys.by_ref().take(FLOOD).collect();
    let probes = keys.take(PROBES).collect();
    (flood, probes)
}

/// `P[X >= t]` for `X ~ Bin(n, p)`, summed from the probability of `t`.
fn binomial_tail(n: usize, p: f64, t: usize) -> f64 {
    let mut pmf = (1.0 - p).powi(n as i32);
    for j in 0..t {
        pmf *= (n - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
    }
    let mut tail = 0.0;
    for j in t..=n {
        tail += pmf;
        pmf *= (n - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
    }
    tail
}

/// The smallest block load that `FLOOD` uniformly placed keys reach in any
/// of `BLOCKS` blocks with probability at most 1e-6 (union bound).
fn max_load_bound() -> usize {
    let p = 1.0 / BLOCKS as f64;
    (1..=FLOOD)
        .find(|&t| BLOCKS as f64 * binomial_tail(FLOOD, p, t) <= 1e-6)
        .unwrap_or(FLOOD)
}

/// The probes' false-positive rate is at most `p` plus 5 standard errors.
fn within_model(rate: f64, p: f64) -> bool {
    rate <= p + 5.0 * (p / BLOCKS as f64 + p / PROBES as f64).sqrt()
}

fn rate(hits: usize) -> f64 {
    hits as f64 / PROBES as f64
}

#[test]
fn binomial_tail_matches_small_cases() {
    // Bin(2, 1/2): P[X >= 0] = 1, P[X >= 1] = 3/4, P[X >= 2] = 1/4.
    assert!((binomial_tail(2, 0.5, 0) - 1.0).abs() < 1e-12);
    assert!((binomial_tail(2, 0.5, 1) - 0.75).abs() < 1e-12);
    assert!((binomial_tail(2, 0.5, 2) - 0.25).abs() < 1e-12);
    // Poisson-like: FLOOD keys in BLOCKS blocks, about 2 a block; the bound
    // is well above the mean and far below the flood.
    let t = max_load_bound();
    assert!((8..=20).contains(&t), "{t}");
}

#[test]
fn known_seed_floods_one_classic_block_and_a_secret_seed_spreads_it() {
    let params = ClassicParams::new(BLOCKS * Block::BITS, 7);
    let (flood, probes) = crafted_keys();

    let mut attacked = Classic::new(params, KNOWN_SEED).unwrap();
    for k in &flood {
        attacked.insert(k);
    }
    let blocks = attacked.blocks();
    let ones: u32 = blocks[0].0.iter().map(|b| b.count_ones()).sum();
    assert_eq!(ones as usize, Block::BITS, "block 0 is saturated");
    assert!(
        blocks[1..].iter().all(|b| *b == Block::ZERO),
        "no other block is touched"
    );
    let hits = probes.iter().filter(|k| attacked.contains(*k)).count();
    assert_eq!(hits, PROBES, "every crafted probe is a false positive");
    let predicted = attacked.predicted_fpr(FLOOD as u64);
    assert!(predicted < 1e-6, "{predicted}");

    // The same keys against a filter whose seed the attacker does not know.
    let mut defended = Classic::new(params, SECRET_SEED).unwrap();
    let secret = seeded_hasher(SECRET_SEED);
    let mut load = [0usize; BLOCKS];
    for k in &flood {
        defended.insert(k);
        load[block_of(secret.hash_one(k), BLOCKS)] += 1;
    }
    let max = load.iter().copied().max().unwrap_or(0);
    let bound = max_load_bound();
    assert!(max < bound, "most loaded block {max} keys, bound {bound}");
    let hits = probes.iter().filter(|k| defended.contains(*k)).count();
    assert!(
        within_model(rate(hits), predicted),
        "{hits} of {PROBES} probes, model {predicted}"
    );
}

#[test]
fn known_seed_floods_one_stable_block_and_a_secret_seed_spreads_it() {
    const CELLS: usize = 128; // W4: 4-bit cells in a 512-bit block
    let params = StableParams {
        cells: BLOCKS * CELLS,
        bits_per_cell: 3,
        k: 3,
        p: 8,
        eviction: Eviction::Sweep,
        layout: Layout::OneBlock,
    };
    let (flood, probes) = crafted_keys();

    let mut attacked = StableBloom::<W4>::new(params, KNOWN_SEED).unwrap();
    for k in &flood {
        attacked.observe(k);
    }
    let nonzero = |b: &Block| {
        b.0.iter()
            .map(|&x| usize::from(x & 0x0f != 0) + usize::from(x >> 4 != 0))
            .sum::<usize>()
    };
    assert_eq!(
        nonzero(&attacked.blocks()[0]),
        CELLS,
        "block 0 has no zero cell"
    );
    assert!(
        attacked.blocks()[1..].iter().all(|b| *b == Block::ZERO),
        "no other block is touched"
    );
    let hits = probes.iter().filter(|k| attacked.contains(*k)).count();
    assert_eq!(hits, PROBES, "every crafted probe looks like a duplicate");
    // Over a uniform key the state's rate is block 0's share, 1/BLOCKS.
    let spread = attacked.current_fpr();
    assert!((spread - 1.0 / BLOCKS as f64).abs() < 1e-12, "{spread}");

    // The same keys against a filter whose seed the attacker does not know:
    // the probes hit at the state's rate for a uniform key.
    let mut defended = StableBloom::<W4>::new(params, SECRET_SEED).unwrap();
    for k in &flood {
        defended.observe(k);
    }
    let fresh = defended.current_fpr();
    let hits = probes.iter().filter(|k| defended.contains(*k)).count();
    assert!(
        within_model(rate(hits), fresh),
        "{hits} of {PROBES} probes, the state's rate {fresh}"
    );
    assert!(fresh < 0.01, "{fresh}");
}
