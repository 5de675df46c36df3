//! Errors of bitmap operations on specific indices.

use core::fmt;

/// Why a bitmap operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitmapError {
    /// The index is not below the bitmap's length.
    OutOfRange,
    /// Allocating an index that is already used.
    AlreadyUsed,
    /// Freeing an index that is already free.
    AlreadyFree,
    /// The caller's storage has fewer than `len` bits.
    StorageTooSmall,
}

impl fmt::Display for BitmapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            BitmapError::OutOfRange => "index out of range",
            BitmapError::AlreadyUsed => "index already used",
            BitmapError::AlreadyFree => "index already free",
            BitmapError::StorageTooSmall => "bitmap storage too small",
        };
        f.write_str(text)
    }
}
