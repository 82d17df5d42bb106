//! What every filter has, written once: the keyed forms of the `*_hash`
//! methods, the keyed batch forms, and the batch loop that prefetches.
//!
//! Every filter follows one template (the README's "Adding a filter"):
//!
//! - a params type, validated into [`Result`](crate::Result) by the
//!   constructors;
//! - `new(params, seed)` (its docs carry `seed_doc!`'s paragraph on
//!   HashDoS), `with_hasher(params, hasher)`, `new_random(params)`
//!   (with `std`), `with_storage(params, storage, hasher)` over a caller's
//!   blocks, which **starts empty** (it zeroes them), and
//!   `restore(params, storage, hasher, ..)`, which **adopts** the blocks'
//!   contents (a filter saved and loaded again);
//! - `hash(&key)`, and every hot operation in four forms: keyed
//!   (`insert(&key)`), pre-hashed (`insert_hash(h)`), and the batch forms
//!   of both (`insert_batch(&keys)`, `insert_batch_hash(&hashes)`);
//! - one return convention for batches: an operation that answers writes
//!   item `i`'s answer to `out[i]` and returns `Result<()>`, an error
//!   ([`Error::Length`](crate::Error::Length), nothing changed) when `out`
//!   and the items differ in length; an operation that only updates
//!   returns nothing. A batch gives the same answers and leaves the same
//!   state as the items one by one, in order;
//! - names that mean one thing: `cells()` (Stable, Classic) and
//!   `counters()` (Spectral) are the effective sizes, `bits_per_cell()` is
//!   `d`, `k()` is the cells per item; `len()` exists only where it counts
//!   items (a window's).

use core::hash::{BuildHasher, Hash};

/// The paragraph on seeds every filter's `new(params, seed)` carries
/// (`#[doc = crate::filter::seed_doc!()]`): a known seed is a HashDoS.
/// (Those constructors own their memory, so exist with `alloc` only.)
#[cfg(feature = "alloc")]
macro_rules! seed_doc {
    () => {
        "**The seed is a secret.** Anyone who knows `seed` (a constant in the \
         source, a default, a saved filter's bytes) can search offline for \
         keys that all land in one block, which then saturates: every key \
         placed there is reported present, or over-counted \
         ([HashDoS](crate::hash#seeds-and-hashdos)). For keys that others \
         choose, use `new_random` (seeds from the operating system, with \
         `std`) or, without `std`, a seed drawn from a hardware random source \
         and kept secret."
    };
}
#[cfg(feature = "alloc")]
pub(crate) use seed_doc;

/// Keys the keyed batch forms hash at a time, into a stack buffer.
pub(crate) const HASH_CHUNK: usize = 256;

/// Hashes `keys` (at most [`HASH_CHUNK`]) into `buf`, returning the hashes.
#[inline]
pub(crate) fn hash_into<'b, H: BuildHasher, K: Hash>(
    hasher: &H,
    keys: &[K],
    buf: &'b mut [u64; HASH_CHUNK],
) -> &'b [u64] {
    for (h, key) in buf.iter_mut().zip(keys) {
        *h = hasher.hash_one(key);
    }
    &buf[..keys.len()]
}

/// The batch loop every filter's `*_batch_hash` runs, as a macro so that
/// its body stays inside the `Body::run` that invokes it and so inside the
/// instruction set's `#[target_feature]` function (a closure handed to a
/// function may be compiled out of line, without those features, where the
/// kernels cannot inline: `.ci/check-inlining` caught exactly that).
///
/// `batch!(n, prefetching, |i| prefetch, |i| op)` runs `op` for each item
/// `i < n` in order, and, when `prefetching` (a filter of at least
/// [`PREFETCH_MIN_BYTES`](crate::store::PREFETCH_MIN_BYTES)), `prefetch`
/// one to two chunks of [`LOOKAHEAD`](crate::store::LOOKAHEAD) items ahead,
/// so the cache misses
/// of a batch overlap. Prefetches change nothing, so the batch equals the
/// items one by one.
macro_rules! batch {
    ($n:expr, $prefetching:expr, |$p:ident| $prefetch:expr, |$i:ident| $op:expr) => {{
        let n: usize = $n;
        // Chunks of LOOKAHEAD items: prefetch the next chunk, then run the
        // current one. Each body is written once (a loop per case doubled
        // the crate's largest functions and their build time) and the item
        // loop has no test in it (a per-item test cost 9-11 % of a batch at
        // 1 MiB, AVX2, in the latency driver).
        // A chunk's items were prefetched between one and two chunks ahead.
        let step = if $prefetching {
            $crate::store::LOOKAHEAD
        } else {
            n
        };
        let mut fetched = if $prefetching { 0 } else { n };
        let mut start = 0;
        while start < n {
            let end = n.min(start + step);
            let ahead = n.min(end + step);
            for $p in fetched..ahead {
                $prefetch;
            }
            fetched = ahead;
            for $i in start..end {
                $op;
            }
            start = end;
        }
    }};
}
pub(crate) use batch;

/// Keyed forms of a filter's `*_hash` methods, as inherent methods: each
/// hashes its key with [`hash`](crate::classic::Classic::hash) (the
/// filter's hasher) and calls the pre-hashed form, so the two can never
/// disagree. Forms:
///
/// - `fn name(&self | &mut self, key [, arg: T]*) [-> R] = name_hash;`
/// - `batch fn name(&self | &mut self, keys, out: &mut [T]) = name_batch_hash;`
///   (answers into `out`, `Result<()>`)
/// - `batch fn name(&mut self, keys) = name_batch_hash;` (updates only)
///
/// Docs (with examples) are written at the invocation.
macro_rules! keyed {
    () => {};
    ($(#[$doc:meta])* fn $name:ident(&self, key $(, $a:ident: $t:ty)*) $(-> $r:ty)? = $hashed:ident; $($rest:tt)*) => {
        $(#[$doc])*
        #[inline]
        pub fn $name<K: core::hash::Hash + ?Sized>(&self, key: &K $(, $a: $t)*) $(-> $r)? {
            self.$hashed(self.hash(key) $(, $a)*)
        }
        keyed!($($rest)*);
    };
    ($(#[$doc:meta])* fn $name:ident(&mut self, key $(, $a:ident: $t:ty)*) $(-> $r:ty)? = $hashed:ident; $($rest:tt)*) => {
        $(#[$doc])*
        #[inline]
        pub fn $name<K: core::hash::Hash + ?Sized>(&mut self, key: &K $(, $a: $t)*) $(-> $r)? {
            let h = self.hash(key);
            self.$hashed(h $(, $a)*)
        }
        keyed!($($rest)*);
    };
    ($(#[$doc:meta])* batch fn $name:ident(&self, keys, $out:ident: &mut [$ot:ty]) = $hashed:ident; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $name<K: core::hash::Hash>(&self, keys: &[K], $out: &mut [$ot]) -> $crate::Result<()> {
            $crate::Error::check_len(stringify!($out), keys.len(), $out.len())?;
            let mut buf = [0u64; $crate::filter::HASH_CHUNK];
            for (keys, out) in keys.chunks($crate::filter::HASH_CHUNK).zip($out.chunks_mut($crate::filter::HASH_CHUNK)) {
                let hashes = $crate::filter::hash_into(&self.hasher, keys, &mut buf);
                self.$hashed(hashes, out)?;
            }
            Ok(())
        }
        keyed!($($rest)*);
    };
    ($(#[$doc:meta])* batch fn $name:ident(&mut self, keys, $out:ident: &mut [$ot:ty]) = $hashed:ident; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $name<K: core::hash::Hash>(&mut self, keys: &[K], $out: &mut [$ot]) -> $crate::Result<()> {
            $crate::Error::check_len(stringify!($out), keys.len(), $out.len())?;
            let mut buf = [0u64; $crate::filter::HASH_CHUNK];
            for (keys, out) in keys.chunks($crate::filter::HASH_CHUNK).zip($out.chunks_mut($crate::filter::HASH_CHUNK)) {
                let hashes = $crate::filter::hash_into(&self.hasher, keys, &mut buf);
                self.$hashed(hashes, out)?;
            }
            Ok(())
        }
        keyed!($($rest)*);
    };
    ($(#[$doc:meta])* batch fn $name:ident(&mut self, keys $(, $a:ident: $t:ty)*) = $hashed:ident; $($rest:tt)*) => {
        $(#[$doc])*
        pub fn $name<K: core::hash::Hash>(&mut self, keys: &[K] $(, $a: $t)*) {
            let mut buf = [0u64; $crate::filter::HASH_CHUNK];
            for keys in keys.chunks($crate::filter::HASH_CHUNK) {
                let hashes = $crate::filter::hash_into(&self.hasher, keys, &mut buf);
                self.$hashed(hashes $(, $a)*);
            }
        }
        keyed!($($rest)*);
    };
}
pub(crate) use keyed;

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    /// What `batch!` did: `(true, i)` for a prefetch of item `i`, `(false, i)`
    /// for its operation.
    fn trace(n: usize, prefetching: bool) -> Vec<(bool, usize)> {
        let mut log = Vec::new();
        batch!(n, prefetching, |p| log.push((true, p)), |i| log
            .push((false, i)));
        log
    }

    /// Every item's operation runs once, in order; with prefetching every
    /// item is prefetched once, before its operation and at most two chunks
    /// ahead of it, and without it never.
    #[test]
    fn batch_runs_in_order_and_prefetches_each_item_once_ahead() {
        let chunk = crate::store::LOOKAHEAD;
        let sizes = if cfg!(miri) { 3 * chunk } else { 5 * chunk };
        for n in (0..sizes).chain([if cfg!(miri) { 100 } else { 1000 }]) {
            for prefetching in [false, true] {
                let log = trace(n, prefetching);
                let ops: Vec<usize> = log.iter().filter(|e| !e.0).map(|e| e.1).collect();
                assert_eq!(ops, (0..n).collect::<Vec<_>>(), "n {n}");
                let fetched: Vec<usize> = log.iter().filter(|e| e.0).map(|e| e.1).collect();
                if !prefetching {
                    assert!(fetched.is_empty());
                    continue;
                }
                assert_eq!(fetched, (0..n).collect::<Vec<_>>(), "n {n}");
                // Operations done before each prefetch, then each item's
                // operations done between its prefetch and its operation.
                let mut done = 0;
                let mut done_at_fetch = std::vec![None; n];
                for &(is_fetch, i) in &log {
                    if is_fetch {
                        done_at_fetch[i] = Some(done);
                    } else {
                        let Some(before) = done_at_fetch[i] else {
                            panic!("n {n}: item {i} used before its prefetch");
                        };
                        let ahead = i - before;
                        assert!(
                            ahead <= 2 * chunk,
                            "n {n}: item {i} prefetched {ahead} ahead"
                        );
                        done += 1;
                    }
                }
            }
        }
    }
}
