//! The string-array index of the report's §4.3, with the updates of §4.4,
//! in one contiguous allocation (§4.7.1): [`StringArray`].
//!
//! # Layout
//!
//! Counter `c` is kept in a *field* of at least [`bit_len`]`(c)` bits (the
//! ⌈log C⌉-bit code; 0 bits for 0) in the **base array**; a field wider
//! than its counter holds **slack**, the spare bits a growing neighbour
//! takes. Items are in *groups* of 64 and *chunks* of 8, and the index
//! over the base array has the paper's three levels:
//!
//! - the **coarse offset array C¹**: each group's start in the base array
//!   (`⌈log₂ N⌉` bits each, one more entry for the end);
//! - the **level-2 coarse arrays C²**: each chunk's start within its group
//!   (12 bits: a group spans under 4096 bits), with a flag per chunk
//!   saying how its items are found;
//! - **level 3**: a chunk whose fields are all at most 3 bits wide keeps
//!   its length code `L(S'')` (2 bits a field) and finds its items through
//!   the **global lookup table** `LT` (prefix sums of four lengths; a
//!   static of 1 KiB, not part of the array, as §4.7.1 allows); a larger
//!   chunk keeps an **offset vector** (its items' 9-bit offsets, one word)
//!   in a pool, the chunk's 24-bit level-3 slot naming its pool entry.
//!
//! A lookup reads C¹, C², the slot and at most one pool word: O(1).
//!
//! # Choices (where the paper leaves freedom)
//!
//! - Groups and chunks have fixed sizes (64 and 8 items) rather than
//!   `log N` and `log log N`: every record of C² then has one size, so the
//!   level-3 slots are found by position, not by a rank directory.
//! - Slack: one bit for every second item at (re)build (the paper's
//!   experiments' slack ratio of 0.5), and 3 bits on each padding item
//!   after the last counter (the last counters' pushes need somewhere to
//!   go).
//! - A field that must grow takes bits from the nearest fields to its right
//!   holding slack, looking at most 128 items ahead; the fields between
//!   move right and their groups' index entries are rewritten (§4.4). With
//!   no slack within reach, or when the pool of offset vectors is full, or
//!   after `ε'·m` pushes (`ε' = ε/2e`, Lemma 8, `ε = ½`), the whole array
//!   is rebuilt with fresh slack. Shrinking never moves anything.
//! - Counters saturate at `2^max_bits − 1` (see [`StringArray::set`]): a
//!   field never holds more than `max_bits` bits of counter, so a value
//!   out of range can never spill into its neighbours.

use super::codes::{bit_len, get_bits, put_bits};
use crate::{Error, Result};
use alloc::vec;
use alloc::vec::Vec;

/// Items per group (one C¹ entry).
const GROUP: usize = 64;
/// Items per chunk (one level-3 slot).
const CHUNK: usize = 8;
/// Chunks per group.
const CHUNKS: usize = GROUP / CHUNK;
/// Bits of a chunk's offset within its group.
const C2_OFFSET: usize = 12;
/// Where a group's chunk flags start in its C² record.
const C2_FLAGS: usize = (CHUNKS - 1) * C2_OFFSET;
/// Bits of a group's C² record: chunks 1 to 7's offsets, then the flags.
const C2_RECORD: usize = C2_FLAGS + CHUNKS;
/// Bits of a level-3 slot: a length code or a pool index.
const SLOT: u32 = 24;
/// Bits of an item's offset in an offset vector.
const OFFSET3: usize = 9;
/// The widest field of a chunk served by the lookup table.
const SMALL: u32 = 3;
/// How far ahead (in items) a growing field looks for slack.
const PUSH_LIMIT: usize = 128;
/// The most groups one push rewrites.
const SPAN: usize = PUSH_LIMIT / GROUP + 1;
/// One slack bit for every `SLACK_EVERY` items at (re)build: `ε = 1/2`.
const SLACK_EVERY: usize = 2;
/// Width of each padding field past the last counter (all slack).
const PAD: u32 = 3;
/// The most counters an array holds: its offset vectors' pool must be
/// indexable by a slot.
pub const MAX_COUNTERS: usize = 1 << 26;

/// The global lookup table: entry `b` (the lengths of four fields, 2 bits
/// each, first in the low bits) holds the fields' offsets `0, w₀, w₀+w₁,
/// …, w₀+…+w₃` in 4 bits each.
static LT: [u32; 256] = lookup_table();

const fn lookup_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let (mut entry, mut sum, mut j) = (0u32, 0u32, 0);
        while j < 4 {
            sum += (b as u32 >> (2 * j)) & 3;
            entry |= sum << (4 * (j + 1));
            j += 1;
        }
        table[b] = entry;
        b += 1;
    }
    table
}

/// The offset of item `j` of a small chunk with length code `code`.
#[inline(always)]
fn lt_offset(code: u64, j: usize) -> usize {
    let lo = LT[(code & 0xFF) as usize];
    let off = if j < 4 {
        (lo >> (4 * j)) & 15
    } else {
        ((lo >> 16) & 15) + ((LT[((code >> 8) & 0xFF) as usize] >> (4 * (j - 4))) & 15)
    };
    off as usize
}

/// Variable-length counters with O(1) access: the base array of
/// ⌈log C⌉-bit counters with slack and its string-array index (§4.3–4.4),
/// all in one `Vec<u64>` ([`words`](Self::words)); the layout and the
/// choices made are told in the docs of the `spectral/compact` module's
/// source.
///
/// ```
/// use streambloom::spectral::StringArray;
/// let mut a = StringArray::new(1000, 32)?;
/// a.set(7, 1_000_000)?;
/// a.add(8, 3)?;
/// assert_eq!((a.get(7), a.get(8), a.get(9)), (Some(1_000_000), Some(3), Some(0)));
/// let bits = a.footprint();
/// assert!(bits.base < 1000 * 2); // mostly empty counters: slack only
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StringArray {
    words: Vec<u64>,
    len: usize,
    max_bits: u32,
    groups: usize,
    /// Bits of a C¹ entry.
    coarse_bits: u32,
    /// First word of each region.
    c1: usize,
    c2: usize,
    l3: usize,
    pool: usize,
    base: usize,
    pool_cap: usize,
    pool_used: usize,
    base_bits: usize,
    /// Pushes since the last rebuild.
    pushes: usize,
    rebuilds: u64,
}

/// The bits a [`StringArray`] spends, part by part (what the report's
/// Figs. 13–14 break down).
///
/// ```
/// use streambloom::spectral::StringArray;
/// let a = StringArray::new(6400, 16)?;
/// let f = a.footprint();
/// assert_eq!(f.index(), f.coarse + f.level2 + f.level3 + f.offset_vectors);
/// // A 24-bit slot per chunk of 8 counters, over 6400 / 64 + 1 groups.
/// assert_eq!(f.level3, (6400 / 64 + 1) * 8 * 24);
/// # Ok::<(), streambloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The coarse offset array C¹.
    pub coarse: usize,
    /// The level-2 coarse arrays C² (with the chunk flags).
    pub level2: usize,
    /// The level-3 slots: length codes and pool indices.
    pub level3: usize,
    /// The pool of offset vectors (allocated, used or spare).
    pub offset_vectors: usize,
    /// The base array: the counters and their slack.
    pub base: usize,
}

impl Footprint {
    /// The index's bits: everything but the base array.
    ///
    /// ```
    /// let a = streambloom::spectral::StringArray::new(64, 8)?;
    /// assert!(a.footprint().index() > 0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn index(&self) -> usize {
        self.coarse + self.level2 + self.level3 + self.offset_vectors
    }
}

/// The items of the groups a push rewrites: widths and values.
struct Span {
    widths: [[u32; GROUP]; SPAN],
    values: [u32; GROUP * SPAN],
}

impl StringArray {
    /// `len` counters, all 0, each saturating at `2^max_bits − 1`.
    ///
    /// Errors: `len` is 0 or above [`MAX_COUNTERS`]; `max_bits` is not in
    /// `1..=32`.
    ///
    /// ```
    /// use streambloom::spectral::StringArray;
    /// assert_eq!(StringArray::new(10, 8)?.max(), 255);
    /// assert!(StringArray::new(0, 8).is_err());
    /// assert!(StringArray::new(10, 33).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn new(len: usize, max_bits: u32) -> Result<Self> {
        Self::from_fn(len, max_bits, |_| 0)
    }

    /// Counters with the given values (saturated at `2^max_bits − 1`),
    /// built in one pass: the static construction of Theorem 6. Errors as
    /// [`new`](Self::new).
    ///
    /// ```
    /// use streambloom::spectral::StringArray;
    /// let a = StringArray::from_values(&[3, 0, 300], 8)?;
    /// assert_eq!((a.get(0), a.get(2), a.get(3)), (Some(3), Some(255), None));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn from_values(values: &[u32], max_bits: u32) -> Result<Self> {
        Self::from_fn(values.len(), max_bits, |i| values[i])
    }

    fn from_fn(len: usize, max_bits: u32, value: impl Fn(usize) -> u32) -> Result<Self> {
        if len == 0 || len > MAX_COUNTERS {
            return Err(Error::param("len", len, "in 1..=MAX_COUNTERS (2^26)"));
        }
        if !(1..=32).contains(&max_bits) {
            return Err(Error::param("max_bits", max_bits, "in 1..=32"));
        }
        let mut a = StringArray {
            words: Vec::new(),
            len,
            max_bits,
            groups: len / GROUP + 1,
            coarse_bits: 0,
            c1: 0,
            c2: 0,
            l3: 0,
            pool: 0,
            base: 0,
            pool_cap: 0,
            pool_used: 0,
            base_bits: 0,
            pushes: 0,
            rebuilds: 0,
        };
        a.build(value);
        Ok(a)
    }

    /// The number of counters.
    ///
    /// ```
    /// assert_eq!(streambloom::spectral::StringArray::new(10, 8)?.len(), 10);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`: an array has at least one counter.
    ///
    /// ```
    /// assert!(!streambloom::spectral::StringArray::new(1, 8)?.is_empty());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The largest value a counter holds, `2^max_bits − 1`.
    ///
    /// ```
    /// assert_eq!(streambloom::spectral::StringArray::new(1, 32)?.max(), u32::MAX);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn max(&self) -> u32 {
        (((1u64) << self.max_bits) - 1) as u32
    }

    /// The whole structure, index and base array, as the words of its one
    /// allocation (§4.7.1): regions C¹, C², level 3, the offset vectors,
    /// then the base array, each starting on a word.
    ///
    /// ```
    /// use streambloom::spectral::StringArray;
    /// let a = StringArray::new(1000, 16)?;
    /// let f = a.footprint();
    /// assert!(a.words().len() * 64 >= f.index() + f.base);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The bits spent, part by part.
    ///
    /// ```
    /// use streambloom::spectral::StringArray;
    /// let mut a = StringArray::new(640, 32)?;
    /// let empty = a.footprint().base;
    /// for i in 0..640 {
    ///     a.set(i, 1000)?;
    /// }
    /// assert!(a.footprint().base >= 640 * 10 && a.footprint().base > empty);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn footprint(&self) -> Footprint {
        Footprint {
            coarse: (self.groups + 1) * self.coarse_bits as usize,
            level2: self.groups * C2_RECORD,
            level3: self.groups * CHUNKS * SLOT as usize,
            offset_vectors: self.pool_cap * 64,
            base: self.base_bits,
        }
    }

    /// How many times the array was rebuilt since it was made (slack or
    /// offset vectors ran out, or the periodic refresh of §4.4).
    ///
    /// ```
    /// let mut a = streambloom::spectral::StringArray::new(100, 32)?;
    /// a.rebuild();
    /// assert_eq!(a.rebuilds(), 1);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Counter `i`, `None` for `i ≥ len()`.
    ///
    /// ```
    /// let a = streambloom::spectral::StringArray::new(3, 8)?;
    /// assert_eq!((a.get(2), a.get(3)), (Some(0), None));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        (i < self.len).then(|| self.value(i))
    }

    /// Sets counter `i` to `v`, **saturating** at [`max`](Self::max): a
    /// value beyond the encodable range is stored as the maximum, and no
    /// other counter changes. A field too narrow for the new value takes
    /// the nearest slack to its right (§4.4), or the array is rebuilt.
    ///
    /// Errors: `i ≥ len()` (nothing changes).
    ///
    /// ```
    /// use streambloom::spectral::StringArray;
    /// let mut a = StringArray::new(3, 8)?;
    /// a.set(1, 1000)?;
    /// assert_eq!((a.get(0), a.get(1), a.get(2)), (Some(0), Some(255), Some(0)));
    /// assert!(a.set(3, 1).is_err());
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn set(&mut self, i: usize, v: u32) -> Result<()> {
        if i >= self.len {
            return Err(Error::param("i", i, "below the array's len()"));
        }
        self.put(i, v.min(self.max()));
        Ok(())
    }

    /// Adds `r` to counter `i`, saturating at [`max`](Self::max); returns
    /// the new value. Errors: `i ≥ len()`.
    ///
    /// ```
    /// let mut a = streambloom::spectral::StringArray::new(3, 8)?;
    /// assert_eq!(a.add(0, 200)?, 200);
    /// assert_eq!(a.add(0, 200)?, 255);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn add(&mut self, i: usize, r: u32) -> Result<u32> {
        let v = self.get(i).unwrap_or(0).saturating_add(r).min(self.max());
        self.set(i, v)?;
        Ok(v)
    }

    /// Subtracts `r` from counter `i`, stopping at 0; returns the new
    /// value. Errors: `i ≥ len()`.
    ///
    /// ```
    /// let mut a = streambloom::spectral::StringArray::new(3, 8)?;
    /// a.add(0, 5)?;
    /// assert_eq!(a.sub(0, 7)?, 0);
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn sub(&mut self, i: usize, r: u32) -> Result<u32> {
        let v = self.get(i).unwrap_or(0).saturating_sub(r);
        self.set(i, v)?;
        Ok(v)
    }

    /// Rebuilds the array with its current values: every field at its
    /// counter's length, fresh slack, the index and offset vectors anew
    /// (the refresh of §4.4, done on its own when slack runs out).
    ///
    /// ```
    /// let mut a = streambloom::spectral::StringArray::new(100, 32)?;
    /// a.set(5, 99)?;
    /// a.rebuild();
    /// assert_eq!(a.get(5), Some(99));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn rebuild(&mut self) {
        let values: Vec<u32> = (0..self.len).map(|i| self.value(i)).collect();
        self.build(|i| values[i]);
        self.rebuilds += 1;
    }

    /// Sets every counter to 0 (a rebuild with every field empty).
    ///
    /// ```
    /// let mut a = streambloom::spectral::StringArray::new(100, 32)?;
    /// a.set(5, 99)?;
    /// a.clear();
    /// assert_eq!(a.get(5), Some(0));
    /// # Ok::<(), streambloom::Error>(())
    /// ```
    pub fn clear(&mut self) {
        self.build(|_| 0);
    }

    /// Builds the array from scratch: fields of `value(i)`'s length plus
    /// slack, every region sized for them.
    fn build(&mut self, value: impl Fn(usize) -> u32) {
        let max = self.max();
        let padded = self.groups * GROUP;
        let (len, chunks) = (self.len, padded / CHUNK);
        let width = |i: usize, v: u32| -> u32 {
            if i < len {
                bit_len(u64::from(v)) + u32::from(i % SLACK_EVERY == SLACK_EVERY - 1)
            } else {
                PAD
            }
        };
        let (mut base_bits, mut large, mut chunk_large) = (0usize, 0usize, false);
        for i in 0..padded {
            let v = if i < len { value(i).min(max) } else { 0 };
            let w = width(i, v);
            base_bits += w as usize;
            chunk_large |= w > SMALL;
            if i % CHUNK == CHUNK - 1 {
                large += usize::from(chunk_large);
                chunk_large = false;
            }
        }
        self.coarse_bits = bit_len(base_bits as u64).max(1);
        self.pool_cap = large + large / 4 + chunks / 16 + 4;
        self.pool_used = 0;
        self.base_bits = base_bits;
        self.pushes = 0;
        let words = |bits: usize| bits.div_ceil(64);
        self.c1 = 0;
        self.c2 = self.c1 + words((self.groups + 1) * self.coarse_bits as usize);
        self.l3 = self.c2 + words(self.groups * C2_RECORD);
        self.pool = self.l3 + words(chunks * SLOT as usize);
        self.base = self.pool + self.pool_cap;
        self.words = vec![0; self.base + words(base_bits)];
        let mut span = Span {
            widths: [[0; GROUP]; SPAN],
            values: [0; GROUP * SPAN],
        };
        let mut pos = 0;
        for g in 0..self.groups {
            for t in 0..GROUP {
                let i = g * GROUP + t;
                let v = if i < len { value(i).min(max) } else { 0 };
                span.values[t] = v;
                span.widths[0][t] = width(i, v);
            }
            pos = self.write_group(g, pos, &span.widths[0], &span.values[..GROUP]);
        }
        self.set_c1(self.groups, pos);
    }

    #[inline(always)]
    fn c1_at(&self, g: usize) -> usize {
        let b = self.coarse_bits;
        get_bits(&self.words, self.c1 * 64 + g * b as usize, b) as usize
    }

    fn set_c1(&mut self, g: usize, v: usize) {
        let b = self.coarse_bits;
        put_bits(&mut self.words, self.c1 * 64 + g * b as usize, b, v as u64);
    }

    #[inline(always)]
    fn record(&self, g: usize) -> usize {
        self.c2 * 64 + g * C2_RECORD
    }

    #[inline(always)]
    fn slot_at(&self, chunk: usize) -> usize {
        self.l3 * 64 + chunk * SLOT as usize
    }

    /// Counter `i`'s field: its first bit in the words, and its width.
    #[inline(always)]
    fn field(&self, i: usize) -> (usize, u32) {
        let (g, c, j) = (i / GROUP, (i / CHUNK) % CHUNKS, i % CHUNK);
        let words = &self.words[..];
        let gs = self.c1_at(g);
        let rec = self.record(g);
        let chunk_offset = |c: usize| get_bits(words, rec + (c - 1) * C2_OFFSET, 12) as usize;
        let cs = if c == 0 { gs } else { gs + chunk_offset(c) };
        let slot = get_bits(words, self.slot_at(i / CHUNK), SLOT);
        let base = self.base * 64;
        if (get_bits(words, rec + C2_FLAGS, 8) >> c) & 1 == 0 {
            // A small chunk: the lookup table.
            let w = ((slot >> (2 * j)) & 3) as u32;
            return (base + cs + lt_offset(slot, j), w);
        }
        // A large chunk: its offset vector.
        let ov = words[self.pool + slot as usize];
        let off = |t: usize| {
            if t == 0 {
                0
            } else {
                ((ov >> (OFFSET3 * (t - 1))) & ((1 << OFFSET3) - 1)) as usize
            }
        };
        let end = if j + 1 < CHUNK {
            off(j + 1)
        } else if c + 1 < CHUNKS {
            gs + chunk_offset(c + 1) - cs
        } else {
            self.c1_at(g + 1) - cs
        };
        (base + cs + off(j), (end - off(j)) as u32)
    }

    #[inline(always)]
    fn value(&self, i: usize) -> u32 {
        let (pos, w) = self.field(i);
        get_bits(&self.words, pos, w) as u32
    }

    /// Whether chunk `c` of group `g` has an offset vector.
    fn is_large(&self, g: usize, c: usize) -> bool {
        (get_bits(&self.words, self.record(g) + C2_FLAGS, 8) >> c) & 1 == 1
    }

    /// Writes group `g`'s fields (`widths`, `values`) from bit `start` of
    /// the base array, with its C¹ entry, C² record, level-3 slots and
    /// offset vectors (reusing the chunks' pool entries, taking new ones
    /// for chunks that become large); returns where the group ends.
    fn write_group(
        &mut self,
        g: usize,
        start: usize,
        widths: &[u32; GROUP],
        values: &[u32],
    ) -> usize {
        self.set_c1(g, start);
        let rec = self.record(g);
        let mut flags = 0u64;
        let mut pos = start;
        for c in 0..CHUNKS {
            if c > 0 {
                put_bits(
                    &mut self.words,
                    rec + (c - 1) * C2_OFFSET,
                    12,
                    (pos - start) as u64,
                );
            }
            let ws = &widths[c * CHUNK..][..CHUNK];
            let slot = if ws.iter().all(|&w| w <= SMALL) {
                ws.iter()
                    .enumerate()
                    .fold(0u64, |code, (j, &w)| code | u64::from(w) << (2 * j))
            } else {
                flags |= 1 << c;
                let entry = if self.is_large(g, c) {
                    get_bits(&self.words, self.slot_at(g * CHUNKS + c), SLOT) as usize
                } else {
                    self.pool_used += 1;
                    self.pool_used - 1
                };
                let (mut ov, mut off) = (0u64, 0u64);
                for (j, &w) in ws.iter().enumerate().take(CHUNK - 1) {
                    off += u64::from(w);
                    ov |= off << (OFFSET3 * j);
                }
                self.words[self.pool + entry] = ov;
                entry as u64
            };
            let at = self.slot_at(g * CHUNKS + c);
            put_bits(&mut self.words, at, SLOT, slot);
            for (j, &w) in ws.iter().enumerate() {
                put_bits(
                    &mut self.words,
                    self.base * 64 + pos,
                    w,
                    u64::from(values[c * CHUNK + j]),
                );
                pos += w as usize;
            }
        }
        // The flags last: `is_large` above read the old ones.
        put_bits(&mut self.words, rec + C2_FLAGS, 8, flags);
        pos
    }

    /// Stores `v` (at most `max()`) in counter `i`.
    fn put(&mut self, i: usize, v: u32) {
        let (pos, w) = self.field(i);
        let need = bit_len(u64::from(v));
        if need <= w {
            put_bits(&mut self.words, pos, w, u64::from(v));
        } else {
            self.push(i, v, need - w);
        }
    }

    /// Widens counter `i`'s field by `d` bits to hold `v`, taking slack
    /// from the nearest fields to its right (§4.4), or rebuilds.
    fn push(&mut self, i: usize, v: u32, d: u32) {
        let padded = self.groups * GROUP;
        let limit = padded.min(i + 1 + PUSH_LIMIT);
        let (mut got, mut j) = (0, i + 1);
        while got < d && j < limit {
            let (pos, w) = self.field(j);
            got += w - bit_len(get_bits(&self.words, pos, w));
            j += 1;
        }
        // Lemma 8's refresh: after ε'·m pushes, ε' = ε/2e ≈ 0.092 for ε = ½.
        let refresh = self.pushes > self.len * 92 / 1000;
        if got < d || refresh {
            return self.rebuild_with(i, v);
        }
        let (g0, g1) = (i / GROUP, (j - 1) / GROUP + 1);
        let mut span = Span {
            widths: [[0; GROUP]; SPAN],
            values: [0; GROUP * SPAN],
        };
        for t in 0..(g1 - g0) * GROUP {
            let (pos, w) = self.field(g0 * GROUP + t);
            span.widths[t / GROUP][t % GROUP] = w;
            span.values[t] = get_bits(&self.words, pos, w) as u32;
        }
        let at = |item: usize| ((item - g0 * GROUP) / GROUP, (item - g0 * GROUP) % GROUP);
        let (gi, ti) = at(i);
        span.widths[gi][ti] += d;
        span.values[i - g0 * GROUP] = v;
        let mut owed = d;
        for donor in i + 1..j {
            let (gd, td) = at(donor);
            let w = &mut span.widths[gd][td];
            let take = (*w - bit_len(u64::from(span.values[donor - g0 * GROUP]))).min(owed);
            *w -= take;
            owed -= take;
        }
        // Chunks that become large need new offset vectors.
        let mut needed = 0;
        for (s, widths) in span.widths[..g1 - g0].iter().enumerate() {
            for c in 0..CHUNKS {
                let large = widths[c * CHUNK..][..CHUNK].iter().any(|&w| w > SMALL);
                needed += usize::from(large && !self.is_large(g0 + s, c));
            }
        }
        if self.pool_used + needed > self.pool_cap {
            return self.rebuild_with(i, v);
        }
        let mut pos = self.c1_at(g0);
        for (s, widths) in span.widths[..g1 - g0].iter().enumerate() {
            pos = self.write_group(g0 + s, pos, widths, &span.values[s * GROUP..]);
        }
        debug_assert_eq!(pos, self.c1_at(g1));
        self.pushes += 1;
    }

    /// Rebuilds with counter `i` set to `v`.
    fn rebuild_with(&mut self, i: usize, v: u32) {
        let mut values: Vec<u32> = (0..self.len).map(|t| self.value(t)).collect();
        values[i] = v;
        self.build(|t| values[t]);
        self.rebuilds += 1;
    }

    /// Checks the structure's invariants (tests): the fields tile the base
    /// array, each holds its counter, the pool is within its capacity.
    #[cfg(test)]
    pub(super) fn check(&self) {
        let mut pos = self.base * 64;
        for i in 0..self.groups * GROUP {
            let (p, w) = self.field(i);
            assert_eq!(p, pos, "field {i} starts where {} ends", i.wrapping_sub(1));
            assert!(w <= self.max_bits + 1 || (i >= self.len && w <= PAD));
            if i >= self.len {
                assert_eq!(get_bits(&self.words, p, w), 0, "padding {i} is empty");
            }
            pos += w as usize;
        }
        assert_eq!(pos, self.base * 64 + self.base_bits);
        assert_eq!(self.c1_at(self.groups), self.base_bits);
        assert!(self.pool_used <= self.pool_cap);
    }
}

/// Two arrays are equal when they hold the same counters with the same
/// maximum (however their fields and slack lie).
impl PartialEq for StringArray {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self.max_bits == other.max_bits
            && (0..self.len).all(|i| self.value(i) == other.value(i))
    }
}

impl Eq for StringArray {}
