//! A bitmap index allocator over caller-supplied storage.
//!
//! The kernel's frame allocator is built on [`Bitmap`]: frames are allocated
//! as "any free frame" ([`Bitmap::alloc_any`]), "any frame of this colour"
//! ([`Bitmap::alloc_matching`]), "this frame" ([`Bitmap::alloc`]) or "a run
//! of frames" ([`Bitmap::alloc_contiguous`]). The storage is a `&mut [u64]`
//! the caller carves out before any heap exists. A set bit means free; bits
//! at or beyond `len` are always clear, so they are never handed out.
//!
//! Every operation is total: out-of-range indices and ranges are reported or
//! clamped, never a panic, and the free count is always exact.

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod range;
mod search;
mod word;

pub use error::BitmapError;

use core::fmt;

/// A set of indices `0..len`, each free or used, over borrowed storage.
pub struct Bitmap<'a> {
    /// One bit per index, set when free; exactly `words_needed(len)` words.
    words: &'a mut [u64],
    /// Number of indices.
    len: usize,
    /// Number of set bits in `words`.
    free: usize,
    /// The word where [`Bitmap::alloc_any`] starts looking.
    hint: usize,
}

impl<'a> Bitmap<'a> {
    /// A bitmap over `len` indices, all initially USED. Err if
    /// `words.len() * 64 < len`. Only the first [`Bitmap::words_needed`]
    /// words are used (and zeroed); the rest of `words` is left alone.
    pub fn new(words: &'a mut [u64], len: usize) -> Result<Bitmap<'a>, BitmapError> {
        let words = words.get_mut(..Self::words_needed(len)).ok_or(BitmapError::StorageTooSmall)?;
        words.fill(0);
        Ok(Bitmap { words, len, free: 0, hint: 0 })
    }

    /// The number of `u64` words needed for `len` indices.
    pub fn words_needed(len: usize) -> usize {
        len.div_ceil(word::BITS)
    }

    /// The number of indices.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no indices at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of free indices.
    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Whether index `i` is free; `false` when out of range.
    pub fn is_free(&self, i: usize) -> bool {
        let (w, bit) = word::split(i);
        i < self.len && self.words.get(w).is_some_and(|&x| x & (1 << bit) != 0)
    }

    /// Allocates the specific index `i`.
    pub fn alloc(&mut self, i: usize) -> Result<(), BitmapError> {
        let slot = self.slot(i)?;
        let (_, bit) = word::split(i);
        if *slot & (1 << bit) == 0 {
            return Err(BitmapError::AlreadyUsed);
        }
        *slot &= !(1 << bit);
        self.free = self.free.saturating_sub(1);
        Ok(())
    }

    /// Frees the index `i`.
    pub fn free(&mut self, i: usize) -> Result<(), BitmapError> {
        let slot = self.slot(i)?;
        let (_, bit) = word::split(i);
        if *slot & (1 << bit) != 0 {
            return Err(BitmapError::AlreadyFree);
        }
        *slot |= 1 << bit;
        self.free = self.free.saturating_add(1);
        Ok(())
    }

    /// The word holding index `i`, if `i` is in range.
    fn slot(&mut self, i: usize) -> Result<&mut u64, BitmapError> {
        if i >= self.len {
            return Err(BitmapError::OutOfRange);
        }
        self.words.get_mut(i / word::BITS).ok_or(BitmapError::OutOfRange)
    }
}

impl fmt::Debug for Bitmap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bitmap").field("len", &self.len).field("free", &self.free).finish_non_exhaustive()
    }
}
