//! The size classes of the program heap (`oxok_rt::heap`).
//!
//! A small allocation (at most [`MAX_SIZE`] bytes, aligned to at most
//! [`ALIGN`]) is served from a free list of equal blocks, one list per
//! class: a pop to allocate and a push to free, instead of a search of the
//! linked-list heap's holes each time. Classes step by a quarter or a
//! third of a power of two, so a block wastes less than [`ALIGN`] bytes
//! or at most a quarter of itself.
//! Freed blocks stay in their class (like a slab allocator's), which is
//! what makes them cheap to take again; a larger or more aligned request
//! goes to the linked-list heap.
//!
//! A pure `no_std` crate, host-tested; the heap keeps the lists.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod tests;

/// Block sizes, smallest first; every one a multiple of [`ALIGN`].
pub const SIZES: [usize; CLASSES] = [16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024];
/// How many classes there are.
pub const CLASSES: usize = 16;
/// The largest size served from a class.
pub const MAX_SIZE: usize = SIZES[CLASSES - 1];
/// Every block's alignment (and the most a class request may ask).
pub const ALIGN: usize = 16;
/// Bytes a refill takes from the linked-list heap at least (carved into
/// as many blocks of the class as fit).
pub const REFILL_BYTES: usize = 2048;

/// Class of each size in steps of [`ALIGN`]: `BY_UNITS[(size + 15) / 16]`.
const BY_UNITS: [u8; MAX_SIZE / ALIGN + 1] = by_units();

const fn by_units() -> [u8; MAX_SIZE / ALIGN + 1] {
    let mut table = [0u8; MAX_SIZE / ALIGN + 1];
    let mut units = 0;
    let mut class = 0;
    while units < table.len() {
        while SIZES[class] < units * ALIGN {
            class += 1;
        }
        table[units] = class as u8;
        units += 1;
    }
    table
}

/// The class serving `size` bytes aligned to `align`, if a class does.
#[inline]
pub fn class_of(size: usize, align: usize) -> Option<usize> {
    if size > MAX_SIZE || align > ALIGN {
        return None;
    }
    Some(usize::from(BY_UNITS[size.div_ceil(ALIGN)]))
}

/// Bytes of a block of `class`.
#[inline]
pub fn block_size(class: usize) -> usize {
    SIZES[class]
}

/// Blocks one refill of `class` carves (their bytes: `blocks × size`).
pub fn refill_blocks(class: usize) -> usize {
    (REFILL_BYTES / SIZES[class]).max(1)
}
