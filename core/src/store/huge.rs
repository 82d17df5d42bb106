//! [`HugePages`]: storage for big filters in memory the kernel is asked to
//! back with transparent huge pages (feature `huge-pages`).

use crate::store::bytes_for;
use crate::{Block, Error, Result};

/// Storage of zeroed blocks in an anonymous memory map that the kernel is
/// asked to back with transparent huge pages (2 MiB on x86_64 instead of
/// 4 KiB): for filters far larger than the TLB's reach.
///
/// **When it pays.** A random access to a filter larger than what the TLB
/// maps (a few thousand 4 KiB pages: 8–16 MiB on current x86 cores) walks
/// the page table on top of the cache miss; with 2 MiB pages the same TLB
/// maps gigabytes. So it pays for filters far larger than that: on a Zen 5
/// the batch forms gained 5–16 % at 64 MiB and 16–51 % at 512 MiB (the
/// README's "Huge pages" table; more on a loaded machine), and nothing for
/// filters that fit in a huge page or in the cache.
///
/// **What the kernel does with the advice** depends on the system's
/// transparent huge page mode, `/sys/kernel/mm/transparent_hugepage/enabled`:
///
/// - `always`: every large enough anonymous region may get huge pages,
///   advised or not (a `Vec` too); the advice changes nothing, except that
///   with the default `defrag` setting (`madvise`) the kernel compacts memory
///   at the first touch of an advised region to find free huge pages.
/// - `madvise`: only advised regions (this storage) get huge pages; other
///   memory stays on 4 KiB pages.
/// - `never`: the advice does nothing: 4 KiB pages.
///
/// Huge pages are given when a page is first touched and the kernel has a
/// free (or, by compaction, freeable) 2 MiB physical page; otherwise that
/// part of the map gets 4 KiB pages (which `khugepaged` may merge later),
/// and so do the ends of a map that are not 2 MiB aligned. Nothing is
/// promised: to see what was obtained, read `AnonHugePages` in
/// `/proc/self/smaps_rollup` or `/proc/meminfo` (the bench's `latency
/// --pages huge` prints it per row).
///
/// **Zeroed by the kernel.** An anonymous map reads as zeros and takes
/// physical memory as its pages are first written. A filter's
/// `with_storage` zeroes its storage again, which touches every page up
/// front; `restore` on fresh storage is the same empty filter, with pages
/// taken as items arrive.
///
/// **Where.** On Linux the map is advised `MADV_HUGEPAGE`; on other Unix
/// systems it is a plain anonymous map (no advice is given); elsewhere the
/// blocks are ordinary heap memory. A refused advice (a kernel built without
/// transparent huge pages) is not an error: the memory is the same, on
/// 4 KiB pages.
///
/// **Lend it to hot filters.** Owned as a filter's storage, the map is
/// viewed as blocks anew at every access (an alignment and a length check:
/// safe code cannot keep the view beside the map), which measured
/// 0.3–3.4 ns more per item than a `Vec` on filters in cache (the README's
/// "Huge pages" table). Lent as `huge.as_mut()`, a `&mut [Block]` checked
/// once, it costs what a `Vec` does; the borrow keeps the map alive as long
/// as the filter.
///
/// Not `Clone`: copy a filter's [`blocks`](crate::Classic::blocks) into new
/// storage instead.
///
/// ```
/// use streambloom::classic::{Classic, ClassicParams};
/// use streambloom::{hash, store::HugePages};
/// let params = ClassicParams::new(1 << 30, 5); // 128 MiB of bits
/// let mut huge = HugePages::zeroed(params.blocks()?)?;
/// // Lent: the filter holds a `&mut [Block]`.
/// let mut f = Classic::with_storage(params, huge.as_mut(), hash::seeded_hasher(7))?;
/// f.insert("x");
/// assert!(f.contains("x"));
/// // Owned: simpler to keep, each access checks the view again.
/// let owned = HugePages::zeroed(params.blocks()?)?;
/// let g = Classic::with_storage(params, owned, hash::seeded_hasher(7))?;
/// assert!(!g.contains("x"));
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Debug)]
pub struct HugePages {
    /// The map; its length is a multiple of [`Block::BYTES`] and its start
    /// page aligned, so it is a slice of blocks ([`HugePages::zeroed`]
    /// checks it).
    #[cfg(unix)]
    map: memmap2::MmapMut,
    /// The blocks on the heap, where there is no memory map to advise.
    #[cfg(not(unix))]
    blocks: alloc::vec::Vec<Block>,
}

impl HugePages {
    /// `blocks` zeroed blocks in a fresh anonymous memory map advised for
    /// huge pages (see the [type's docs](Self) for what that obtains).
    ///
    /// Errors: 0 blocks is an [`Error::Parameter`] (a filter needs at least
    /// one block, so an empty map would only fail later), as is a size past
    /// `isize::MAX` bytes; a map the system refuses (no memory or address
    /// space left) is an [`Error::Allocation`].
    ///
    /// ```
    /// use streambloom::store::HugePages;
    /// use streambloom::Block;
    /// let mut s = HugePages::zeroed(32_768)?; // 2 MiB
    /// assert_eq!(s.as_ref().len(), 32_768);
    /// assert!(s.as_ref().iter().all(|b| *b == Block::ZERO));
    /// s.as_mut()[5].0[0] = 1;
    /// assert!(HugePages::zeroed(0).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn zeroed(blocks: usize) -> Result<HugePages> {
        if blocks == 0 {
            return Err(Error::param("blocks", blocks, "at least 1"));
        }
        let bytes = bytes_for(blocks, "blocks", blocks)?;
        Self::map(bytes)
    }

    /// An anonymous map of `bytes` bytes (a positive multiple of
    /// [`Block::BYTES`]), advised for huge pages on Linux.
    #[cfg(unix)]
    fn map(bytes: usize) -> Result<HugePages> {
        let map = memmap2::MmapOptions::new()
            .len(bytes)
            .map_anon()
            .map_err(|_| Error::Allocation { bytes })?;
        // Best effort: a kernel without transparent huge pages refuses the
        // advice (EINVAL), and the map is still good memory on 4 KiB pages.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        // Page aligned and a whole number of blocks: the view cannot fail,
        // and `as_ref`/`as_mut` rely on it.
        bytemuck::try_cast_slice::<u8, Block>(&map).map_err(|_| Error::Allocation { bytes })?;
        Ok(HugePages { map })
    }

    /// `bytes` bytes of zeroed blocks on the heap: no memory map to advise.
    #[cfg(not(unix))]
    fn map(bytes: usize) -> Result<HugePages> {
        Ok(HugePages {
            blocks: crate::store::zeroed(bytes / Block::BYTES)?,
        })
    }
}

impl AsRef<[Block]> for HugePages {
    /// The blocks.
    #[inline(always)]
    fn as_ref(&self) -> &[Block] {
        #[cfg(unix)]
        {
            // [`HugePages::zeroed`] checked this view: never the empty
            // fallback.
            bytemuck::try_cast_slice(&self.map).unwrap_or(&[])
        }
        #[cfg(not(unix))]
        {
            &self.blocks
        }
    }
}

impl AsMut<[Block]> for HugePages {
    /// The blocks, mutably.
    #[inline(always)]
    fn as_mut(&mut self) -> &mut [Block] {
        #[cfg(unix)]
        {
            // [`HugePages::zeroed`] checked this view: never the empty
            // fallback.
            bytemuck::try_cast_slice_mut(&mut self.map).unwrap_or(&mut [])
        }
        #[cfg(not(unix))]
        {
            &mut self.blocks
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classic::{Classic, ClassicParams};
    use crate::stable::{Eviction, Layout, StableBloom, StableParams};
    use crate::{W8, hash};

    /// Fresh storage has the length asked for, reads as zeros, and keeps
    /// what is written to it.
    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model madvise")]
    fn zeroed_has_the_length_asked_for() {
        for blocks in [1, 3, 32_768, 32_769] {
            let mut s = HugePages::zeroed(blocks).unwrap();
            assert_eq!(s.as_ref().len(), blocks);
            assert!(s.as_ref().iter().all(|b| *b == Block::ZERO));
            s.as_mut()[blocks - 1].0[63] = 7;
            assert_eq!(s.as_ref()[blocks - 1].0[63], 7);
        }
    }

    /// Sizes no map can have are errors, not panics.
    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model madvise")]
    fn impossible_sizes_are_errors() {
        assert_eq!(
            HugePages::zeroed(0).unwrap_err(),
            Error::param("blocks", 0usize, "at least 1")
        );
        let n = isize::MAX as usize / Block::BYTES + 1;
        assert_eq!(
            HugePages::zeroed(n).unwrap_err(),
            Error::param("blocks", n, crate::store::TOO_LARGE)
        );
        // 2^61 bytes: a valid size, past any machine's address space.
        assert_eq!(
            HugePages::zeroed(1 << 55).unwrap_err(),
            Error::Allocation { bytes: 1 << 61 }
        );
    }

    /// Filters built over it answer as the same filters in a `Vec`.
    #[test]
    #[cfg_attr(miri, ignore = "Miri does not model madvise")]
    fn filters_in_huge_pages_match_the_heap() {
        let params = ClassicParams::new(1 << 20, 5);
        let blocks = params.blocks().unwrap();
        let mut huge = Classic::with_storage(
            params,
            HugePages::zeroed(blocks).unwrap(),
            hash::seeded_hasher(3),
        )
        .unwrap();
        let mut heap = Classic::with_hasher(params, hash::seeded_hasher(3)).unwrap();
        for i in 0..10_000u64 {
            assert_eq!(huge.insert(&i), heap.insert(&i), "{i}");
        }
        assert_eq!(huge.blocks(), heap.blocks());

        let params = StableParams {
            cells: 1 << 16,
            bits_per_cell: 3,
            k: 5,
            p: 20,
            eviction: Eviction::Sweep,
            layout: Layout::OneBlock,
        };
        let blocks = params.blocks::<W8>().unwrap();
        let mut huge = StableBloom::<W8, _, _>::with_storage(
            params,
            HugePages::zeroed(blocks).unwrap(),
            hash::seeded_hasher(5),
        )
        .unwrap();
        let mut heap =
            StableBloom::<W8, _, _>::with_hasher(params, hash::seeded_hasher(5)).unwrap();
        for i in 0..10_000u64 {
            assert_eq!(
                huge.observe(&(i % 3_000)),
                heap.observe(&(i % 3_000)),
                "{i}"
            );
        }
        assert_eq!(huge.blocks(), heap.blocks());
        // Storage of the wrong size is refused, as any storage is.
        assert!(
            Classic::with_storage(
                ClassicParams::new(1 << 20, 5),
                HugePages::zeroed(3).unwrap(),
                hash::seeded_hasher(3)
            )
            .is_err()
        );
    }
}
