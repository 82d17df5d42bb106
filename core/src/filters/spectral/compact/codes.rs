//! The counter codes of the report's §4 and §4.5, over bit arrays kept in
//! `u64` words (bit `p` is bit `p % 64` of word `p / 64`, least
//! significant first).
//!
//! - the **⌈log C⌉-bit** code of §4: a counter `c` in [`bit_len`]`(c)`
//!   bits, its plain binary form. It is not prefix-free: the
//!   [`StringArray`](super::StringArray)'s index says where each one ends.
//! - **Elias** (§4.5, \[Eli75\]): the prefix-free code of `n + 1` (Elias
//!   does not encode 0), `⌊log n⌋ + 2⌊log(⌊log n⌋ + 1)⌋ + 1` bits for `n`
//!   (the Elias delta code).
//! - **steps** (§4.5): `0` for 0, `10` for 1, and `11` followed by the
//!   Elias code of `c − 2` above: 1.5 bits a counter on data of mostly 0s
//!   and 1s, where Elias spends 1 and 4.

/// The length of `v`'s binary form without leading zeros: the
/// ⌈log C⌉-bit code's length (0 for 0, 1 for 1, 2 for 2 and 3, …).
///
/// ```
/// use streambloom::spectral::codes::bit_len;
/// assert_eq!((bit_len(0), bit_len(1), bit_len(3), bit_len(4)), (0, 1, 2, 3));
/// assert_eq!(bit_len(u64::MAX), 64);
/// ```
#[inline(always)]
pub const fn bit_len(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// The `len` low bits set.
#[inline(always)]
const fn low(len: u32) -> u64 {
    if len >= 64 { u64::MAX } else { (1 << len) - 1 }
}

/// The `len`-bit field (`len ≤ 64`) at bit `pos` of `words`.
///
/// ```
/// use streambloom::spectral::codes::{get_bits, put_bits};
/// let mut words = [0u64; 2];
/// put_bits(&mut words, 60, 8, 0xAB); // across the word boundary
/// assert_eq!(get_bits(&words, 60, 8), 0xAB);
/// assert_eq!(get_bits(&words, 0, 60), 0);
/// ```
///
/// # Panics
///
/// When the field reaches beyond `words`.
#[inline(always)]
pub fn get_bits(words: &[u64], pos: usize, len: u32) -> u64 {
    if len == 0 {
        return 0;
    }
    let (w, b) = (pos / 64, (pos % 64) as u32);
    let mut v = words[w] >> b;
    if b + len > 64 {
        v |= words[w + 1] << (64 - b);
    }
    v & low(len)
}

/// Writes the low `len` bits (`len ≤ 64`) of `v` to the field at bit `pos`
/// of `words`, leaving every other bit as it was (the example is on
/// [`get_bits`]).
///
/// ```
/// use streambloom::spectral::codes::{get_bits, put_bits};
/// let mut words = [u64::MAX; 1];
/// put_bits(&mut words, 4, 4, 0);
/// assert_eq!(words[0], !0xF0);
/// ```
///
/// # Panics
///
/// When the field reaches beyond `words`.
#[inline(always)]
pub fn put_bits(words: &mut [u64], pos: usize, len: u32, v: u64) {
    if len == 0 {
        return;
    }
    let v = v & low(len);
    let (w, b) = (pos / 64, (pos % 64) as u32);
    words[w] = (words[w] & !(low(len) << b)) | (v << b);
    if b + len > 64 {
        let rest = b + len - 64;
        words[w + 1] = (words[w + 1] & !low(rest)) | (v >> (64 - b));
    }
}

/// A cursor writing codes one after another into a bit array.
///
/// ```
/// use streambloom::spectral::codes::{BitReader, BitWriter};
/// let mut words = [0u64; 4];
/// let mut w = BitWriter::new(&mut words);
/// for c in [0, 1, 2, 1000] {
///     w.steps(c);
/// }
/// let end = w.position();
/// let mut r = BitReader::new(&words);
/// let back: Vec<u64> = (0..4).map(|_| r.steps().unwrap()).collect();
/// assert_eq!(back, [0, 1, 2, 1000]);
/// assert_eq!(r.position(), end);
/// ```
#[derive(Debug)]
pub struct BitWriter<'a> {
    words: &'a mut [u64],
    pos: usize,
}

impl<'a> BitWriter<'a> {
    /// A writer at bit 0 of `words`.
    ///
    /// ```
    /// let mut words = [0u64; 1];
    /// let w = streambloom::spectral::codes::BitWriter::new(&mut words);
    /// assert_eq!(w.position(), 0);
    /// ```
    pub fn new(words: &'a mut [u64]) -> Self {
        BitWriter { words, pos: 0 }
    }

    /// The bit the next code starts at: the bits written so far.
    ///
    /// ```
    /// let mut words = [0u64; 1];
    /// let mut w = streambloom::spectral::codes::BitWriter::new(&mut words);
    /// w.elias(0);
    /// assert_eq!(w.position(), 1);
    /// ```
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Writes the `len` low bits of `v`, most significant first (so that
    /// codes read in stream order).
    fn msb_first(&mut self, v: u64, len: u32) {
        for i in (0..len).rev() {
            put_bits(self.words, self.pos, 1, (v >> i) & 1);
            self.pos += 1;
        }
    }

    /// The ⌈log C⌉-bit code of `c`: its [`bit_len`]`(c)` bits (nothing for
    /// 0; not prefix-free: the reader must be told the length).
    ///
    /// ```
    /// use streambloom::spectral::codes::{BitReader, BitWriter};
    /// let mut words = [0u64; 1];
    /// let mut w = BitWriter::new(&mut words);
    /// w.log_bits(5);
    /// assert_eq!(w.position(), 3);
    /// assert_eq!(BitReader::new(&words).log_bits(3), Some(5));
    /// ```
    pub fn log_bits(&mut self, c: u64) {
        self.msb_first(c, bit_len(c));
    }

    /// The Elias (delta) code of `n + 1`: [`elias_len`]`(n)` bits.
    ///
    /// ```
    /// use streambloom::spectral::codes::{elias_len, BitReader, BitWriter};
    /// let mut words = [0u64; 2];
    /// let mut w = BitWriter::new(&mut words);
    /// w.elias(1); // encodes 2: 4 bits, as §4.5 says
    /// assert_eq!((w.position(), elias_len(1)), (4, 4));
    /// assert_eq!(BitReader::new(&words).elias(), Some(1));
    /// ```
    pub fn elias(&mut self, n: u64) {
        // `n + 1` in 65 bits would not fit: u64::MAX is coded as 2^64 via
        // a length of 65 (the only value that needs it).
        let (v, len) = match n.checked_add(1) {
            Some(v) => (v, bit_len(v)),
            None => (0, 65),
        };
        let len_len = bit_len(u64::from(len));
        self.msb_first(0, len_len - 1);
        self.msb_first(u64::from(len), len_len);
        // `v` without its leading 1 (2^64's 64 zeros after it).
        self.msb_first(v, len - 1);
    }

    /// The steps code of `c`: `0`, `10`, or `11` then the Elias code of
    /// `c − 2`: [`steps_len`]`(c)` bits.
    ///
    /// ```
    /// use streambloom::spectral::codes::{steps_len, BitWriter};
    /// let mut words = [0u64; 1];
    /// let mut w = BitWriter::new(&mut words);
    /// w.steps(0);
    /// w.steps(1);
    /// assert_eq!(w.position() as u32, steps_len(0) + steps_len(1));
    /// assert_eq!(w.position(), 3);
    /// ```
    pub fn steps(&mut self, c: u64) {
        match c {
            0 => self.msb_first(0, 1),
            1 => self.msb_first(0b10, 2),
            _ => {
                self.msb_first(0b11, 2);
                self.elias(c - 2);
            }
        }
    }
}

/// A cursor reading codes one after another from a bit array; each read
/// is `None` when the code runs beyond the array (or is not a code).
///
/// ```
/// use streambloom::spectral::codes::BitReader;
/// let words = [0u64; 1];
/// // 64 zero bits: the start of an Elias code whose length never ends.
/// assert_eq!(BitReader::new(&words).elias(), None);
/// ```
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    words: &'a [u64],
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader at bit 0 of `words`.
    ///
    /// ```
    /// let r = streambloom::spectral::codes::BitReader::new(&[]);
    /// assert_eq!(r.position(), 0);
    /// ```
    pub fn new(words: &'a [u64]) -> Self {
        BitReader { words, pos: 0 }
    }

    /// The bit the next code starts at.
    ///
    /// ```
    /// use streambloom::spectral::codes::BitReader;
    /// let mut r = BitReader::new(&[0]);
    /// assert_eq!(r.steps(), Some(0)); // the one-bit code of 0
    /// assert_eq!(r.position(), 1);
    /// ```
    pub fn position(&self) -> usize {
        self.pos
    }

    fn bit(&mut self) -> Option<u64> {
        if self.pos >= self.words.len() * 64 {
            return None;
        }
        let b = get_bits(self.words, self.pos, 1);
        self.pos += 1;
        Some(b)
    }

    fn msb_first(&mut self, len: u32) -> Option<u64> {
        let mut v = 0u64;
        for _ in 0..len {
            v = (v << 1) | self.bit()?;
        }
        Some(v)
    }

    /// A ⌈log C⌉-bit code of `len` bits (`len ≤ 64`).
    ///
    /// ```
    /// use streambloom::spectral::codes::BitReader;
    /// // Bits are read in stream order: 1, 0, 1.
    /// assert_eq!(BitReader::new(&[0b101]).log_bits(3), Some(5));
    /// ```
    pub fn log_bits(&mut self, len: u32) -> Option<u64> {
        self.msb_first(len)
    }

    /// An Elias code (see [`BitWriter::elias`]).
    ///
    /// ```
    /// use streambloom::spectral::codes::{BitReader, BitWriter};
    /// let mut words = [0u64; 2];
    /// BitWriter::new(&mut words).elias(u64::MAX);
    /// assert_eq!(BitReader::new(&words).elias(), Some(u64::MAX));
    /// ```
    pub fn elias(&mut self) -> Option<u64> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 6 {
                return None;
            }
        }
        let len = ((1u64 << zeros) | self.msb_first(zeros)?) as u32;
        if len == 0 || len > 65 {
            return None;
        }
        let rest = self.msb_first(len - 1)?;
        if len == 65 {
            return (rest == 0).then_some(u64::MAX);
        }
        Some(((1u64 << (len - 1)) | rest) - 1)
    }

    /// A steps code (see [`BitWriter::steps`]).
    ///
    /// ```
    /// use streambloom::spectral::codes::BitReader;
    /// // Bits 1, 0: the code of 1.
    /// assert_eq!(BitReader::new(&[0b01]).steps(), Some(1));
    /// ```
    pub fn steps(&mut self) -> Option<u64> {
        if self.bit()? == 0 {
            return Some(0);
        }
        if self.bit()? == 0 {
            return Some(1);
        }
        self.elias()?.checked_add(2)
    }
}

/// The Elias code's length for `n` (it codes `n + 1`), the §4.5 formula
/// `⌊log₂ n⌋ + 2⌊log₂(⌊log₂ n⌋ + 1)⌋ + 1` applied to `n + 1`.
///
/// ```
/// use streambloom::spectral::codes::elias_len;
/// assert_eq!((elias_len(0), elias_len(1), elias_len(2), elias_len(9)), (1, 4, 4, 8));
/// ```
pub const fn elias_len(n: u64) -> u32 {
    let len = match n.checked_add(1) {
        Some(v) => bit_len(v),
        None => 65,
    };
    (len - 1) + 2 * (bit_len(len as u64) - 1) + 1
}

/// The steps code's length for `c`: 1, 2, or 2 plus [`elias_len`]`(c − 2)`.
///
/// ```
/// use streambloom::spectral::codes::steps_len;
/// assert_eq!((steps_len(0), steps_len(1), steps_len(2)), (1, 2, 3));
/// ```
pub const fn steps_len(c: u64) -> u32 {
    match c {
        0 => 1,
        1 => 2,
        _ => 2 + elias_len(c - 2),
    }
}
