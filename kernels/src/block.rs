//! The cache line every filter is built from.

use core::fmt;

/// One 64-byte cache line of cells.
///
/// Cells of `w` bits are packed little-endian: cell `i` occupies bits
/// `i * w .. (i + 1) * w` of the block read as a 512-bit little-endian
/// integer. For `w >= 8` that is the little-endian `u8`/`u16`/`u32` at byte
/// offset `i * w / 8`, on every target, so a block's bytes mean the same on x86
/// and on a big-endian microcontroller.
///
/// `Block` is [`bytemuck::Pod`], so a filter's memory can be viewed as bytes
/// (and bytes, suitably aligned, as blocks) without copying.
///
/// ```
/// use streambloom_kernels::Block;
/// let b = Block::ZERO;
/// assert_eq!(core::mem::align_of::<Block>(), 64);
/// assert_eq!(bytemuck::bytes_of(&b).len(), 64);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub struct Block(pub [u8; 64]);

impl Block {
    /// A block of zero cells.
    pub const ZERO: Block = Block([0; 64]);
    /// Size of a block in bytes (one cache line).
    pub const BYTES: usize = 64;
    /// Size of a block in bits.
    pub const BITS: usize = 512;
}

impl Default for Block {
    fn default() -> Self {
        Block::ZERO
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Block(")?;
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        f.write_str(")")
    }
}
