//! The library's filters as the experiments use them: every call into
//! `streambloom` of `repro spectral` except the unblocked reference's
//! hashing.

use streambloom::hash::{self, DefaultHasher, Layout};
use streambloom::spectral::{
    Blocked, MinimalIncrease, MinimumSelection, Policy, RecurringMinimum, Removable, Spectral,
    SpectralParams,
};
use streambloom::Block;
use streambloom_kernels::{cell, Kernels};

pub use streambloom::analysis::spectral::{bloom_error, recurring_minimum_error};
pub use streambloom::rng::Rng;
pub use streambloom::spectral::Counter;
pub use streambloom::{W16, W32};

use super::experiments::{Filter, Reading};
use super::reference::Move;
use super::workload::{Counts, Deletes, Recurring, K};

fn err(e: streambloom::Error) -> String {
    e.to_string()
}

/// Recurring Minimum's parameters for `m` counters under `reading`, with
/// `B_f` of `m` bits (the paper's size) when `marker`.
fn recurring_params(m: usize, reading: Reading, marker: bool) -> SpectralParams<RecurringMinimum> {
    let (primary, secondary) = reading.split(m);
    let mut policy = RecurringMinimum::new().with_secondary(secondary);
    if marker {
        policy = policy.with_marker(m);
    }
    one_block(primary + secondary).with_policy(policy)
}

/// `m` counters, k = [`K`], one block an item: the layout these
/// experiments report as "blocked" (the library's default is two blocks;
/// the `accuracy` command compares the layouts).
fn one_block<P: Policy + Default>(m: usize) -> SpectralParams<P> {
    SpectralParams::new(m, K as u32).with_layout(Layout::OneBlock)
}

/// `filter` on the blocked layout: `m` counters (Recurring Minimum: see
/// [`Reading`]), k = [`K`], for the insertion-only experiments.
pub fn counts<W: Counter>(filter: Filter, m: usize, seed: u64) -> Result<Box<dyn Counts>, String> {
    Ok(match filter {
        Filter::Ms => Box::new(
            Spectral::<MinimumSelection, Blocked<W>>::new(one_block(m), seed).map_err(err)?,
        ),
        Filter::Mi => {
            Box::new(Spectral::<MinimalIncrease, Blocked<W>>::new(one_block(m), seed).map_err(err)?)
        }
        Filter::Rm { reading, marker } => Box::new(
            Spectral::<RecurringMinimum, Blocked<W>>::new(
                recurring_params(m, reading, marker),
                seed,
            )
            .map_err(err)?,
        ),
    })
}

/// The same for the experiments with deletions: Minimal Increase cannot
/// delete in the library, so the paper's "MI with deletions" runs on the
/// library's blocked layout through the public kernels ([`MiWithDeletes`]).
pub fn deletes<W: Counter>(
    filter: Filter,
    m: usize,
    seed: u64,
) -> Result<Box<dyn Deletes>, String> {
    Ok(match filter {
        Filter::Ms => Box::new(
            Spectral::<MinimumSelection, Blocked<W>>::new(one_block(m), seed).map_err(err)?,
        ),
        Filter::Mi => Box::new(MiWithDeletes::<W>::new(m, seed)),
        Filter::Rm { reading, marker } => Box::new(
            Spectral::<RecurringMinimum, Blocked<W>>::new(
                recurring_params(m, reading, marker),
                seed,
            )
            .map_err(err)?,
        ),
    })
}

/// Table 1's Recurring Minimum at `m` counters under `reading`, without
/// `B_f`.
pub fn recurring<W: Counter>(
    m: usize,
    reading: Reading,
    seed: u64,
) -> Result<Box<dyn Recurring>, String> {
    Spectral::<RecurringMinimum, Blocked<W>>::new(recurring_params(m, reading, false), seed)
        .map(|f| Box::new(f) as Box<dyn Recurring>)
        .map_err(err)
}

fn peak<W: Counter>(blocks: &[Block]) -> u32 {
    blocks
        .iter()
        .flat_map(|b| (0..W::CELLS).map(move |i| cell::<W>(b, i)))
        .max()
        .unwrap_or(0)
}

impl<P: Policy, W: Counter> Counts for Spectral<P, Blocked<W>> {
    fn insert(&mut self, v: u64) {
        Spectral::insert(self, &v);
    }
    fn estimate(&self, v: u64) -> u32 {
        Spectral::estimate(self, &v)
    }
    fn peak(&self) -> u32 {
        peak::<W>(self.blocks())
    }
}

impl<P: Removable, W: Counter> Deletes for Spectral<P, Blocked<W>> {
    fn remove(&mut self, v: u64, r: u32) {
        self.remove_n(&v, r);
    }
}

impl<W: Counter> Recurring for Spectral<RecurringMinimum, Blocked<W>> {
    fn primary_minimum(&self, v: u64) -> (u32, u32) {
        let mc = self.primary_minimum_hash(self.hash(&v));
        (mc.min, mc.count)
    }
    fn first_move(&self, _: u64) -> Option<Move> {
        None
    }
}

/// Minimal Increase with the deletions the library refuses: the paper's
/// §6.2 setting, on the library's blocked layout and kernels.
pub struct MiWithDeletes<W: Counter> {
    blocks: Vec<Block>,
    k: &'static Kernels<W>,
    hasher: DefaultHasher,
}

impl<W: Counter> MiWithDeletes<W> {
    fn new(counters: usize, seed: u64) -> MiWithDeletes<W> {
        MiWithDeletes {
            blocks: vec![Block::ZERO; counters.div_ceil(W::CELLS)],
            k: Kernels::best(),
            hasher: hash::seeded_hasher(seed),
        }
    }
    fn probe(&self, v: u64) -> hash::Probe<W> {
        hash::probe_with::<W>(
            streambloom::spectral::PLACEMENT,
            hash::hash_key(&self.hasher, &v),
            self.blocks.len(),
            K as u32,
        )
    }
}

impl<W: Counter> Counts for MiWithDeletes<W> {
    fn insert(&mut self, v: u64) {
        let p = self.probe(v);
        let min = self.k.min_count(&self.blocks[p.block], p.mask).min;
        self.k
            .max_assign(&mut self.blocks[p.block], p.mask, min.saturating_add(1));
    }
    fn estimate(&self, v: u64) -> u32 {
        let p = self.probe(v);
        self.k.min_count(&self.blocks[p.block], p.mask).min
    }
    fn peak(&self) -> u32 {
        peak::<W>(&self.blocks)
    }
}

impl<W: Counter> Deletes for MiWithDeletes<W> {
    fn remove(&mut self, v: u64, r: u32) {
        let p = self.probe(v);
        self.k.sub_sat(&mut self.blocks[p.block], p.mask, r);
    }
}
