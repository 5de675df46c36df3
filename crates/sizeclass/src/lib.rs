//! The size classes of the program heap (`oxok_rt::heap`) and the kernel
//! heap (`oxok_hw::mem::heap`), and their free lists ([`Lists`]).
//!
//! A small allocation (at most [`MAX_SIZE`] bytes, aligned to at most
//! [`ALIGN`]) is served from a free list of equal blocks, one list per
//! class: a pop to allocate and a push to free, instead of a search of the
//! linked-list heap's holes each time. Classes step by [`ALIGN`] bytes, so
//! a block wastes no more than the linked-list heap's own rounding would
//! (less than [`ALIGN`] bytes): a kernel record of 400 bytes costs 400,
//! not the 512 of a class a quarter of a power of two wide.
//! Freed blocks stay in their class (like a slab allocator's), which is
//! what makes them cheap to take again; a larger or more aligned request
//! goes to the linked-list heap.
//!
//! A pure `no_std` crate, host-tested. A list's links live in its free
//! blocks' first words, which only the heap that owns the memory may read
//! and write: it lends them to [`Lists`] through [`Links`].

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod tests;

/// How many classes there are: one per multiple of [`ALIGN`] up to
/// [`MAX_SIZE`].
pub const CLASSES: usize = MAX_SIZE / ALIGN;
/// The largest size served from a class.
pub const MAX_SIZE: usize = 1024;
/// Every block's alignment (and the most a class request may ask).
pub const ALIGN: usize = 16;
/// Bytes a refill takes from the linked-list heap at least (carved into
/// as many blocks of the class as fit).
pub const REFILL_BYTES: usize = 2048;

/// The class serving `size` bytes aligned to `align`, if a class does.
#[inline]
pub fn class_of(size: usize, align: usize) -> Option<usize> {
    if size > MAX_SIZE || align > ALIGN {
        return None;
    }
    Some(size.div_ceil(ALIGN).max(1) - 1)
}

/// Whether a block allocated for `layout` also serves `new_size` bytes
/// where it is: both sizes fall in the same class.
pub fn resize_in_place(size: usize, align: usize, new_size: usize) -> bool {
    class_of(size, align).is_some_and(|c| class_of(new_size, align) == Some(c))
}

/// Bytes of a block of `class`.
#[inline]
pub fn block_size(class: usize) -> usize {
    (class + 1) * ALIGN
}

/// Blocks one refill of `class` carves (their bytes: `blocks × size`).
pub fn refill_blocks(class: usize) -> usize {
    (REFILL_BYTES / block_size(class)).max(1)
}

/// Reads and writes the first word of a free block: where a class list
/// keeps the address of the next free block. Implemented by a heap over
/// the memory it owns; [`Lists`] names only blocks that heap handed it (a
/// refill or a freed block), each at least [`ALIGN`] bytes and aligned to
/// it, used by nobody else while on a list.
pub trait Links {
    /// The word at the start of the free block at `block`.
    fn next(&self, block: usize) -> usize;
    /// Writes `next` at the start of the free block at `block`.
    fn set_next(&mut self, block: usize, next: usize);
}

/// One free list of equal blocks per class: a pop to allocate, a push to
/// free. A block stays in its class once carved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lists {
    /// Each class's first free block (0: none).
    heads: [usize; CLASSES],
    /// Bytes of the blocks on the lists.
    held: usize,
    /// The most bytes the lists keep: a block freed past it goes back to
    /// the heap below ([`give`](Lists::give) says so).
    held_max: usize,
}

impl Default for Lists {
    fn default() -> Lists {
        Lists::EMPTY
    }
}

impl Lists {
    /// No block on any list, and no bound on what they keep.
    pub const EMPTY: Lists = Lists::bounded(usize::MAX);

    /// No block on any list; they keep at most `held_max` bytes. Without a
    /// bound, blocks freed in one class stay there: a caller that makes
    /// and frees many objects of one size after another (each within its
    /// quota while it lives) would leave the heap below nothing for the
    /// next size — the kernel heap bounds its lists.
    pub const fn bounded(held_max: usize) -> Lists {
        Lists { heads: [0; CLASSES], held: 0, held_max }
    }

    /// A block of `class`: the first on its list, else the first of a
    /// fresh run that `refill(bytes)` carves from the heap below
    /// ([`refill_blocks`] blocks, fewer where the bound leaves no room for
    /// them, aligned to [`ALIGN`]), the rest of the run going on the list. `None` if the list is empty and `refill`
    /// gives nothing, or `class` is not a class.
    pub fn take(
        &mut self,
        class: usize,
        links: &mut impl Links,
        refill: impl FnOnce(usize) -> Option<usize>,
    ) -> Option<usize> {
        if class >= CLASSES {
            return None;
        }
        let size = block_size(class);
        let head = self.heads[class];
        if head != 0 {
            self.heads[class] = links.next(head);
            self.held -= size;
            return Some(head);
        }
        // A whole refill, or as many blocks as the bound leaves room for
        // beside the caller's.
        let room = self.held_max.saturating_sub(self.held) / size;
        let blocks = refill_blocks(class).min(room.saturating_add(1));
        let first = refill(size * blocks).filter(|&a| a != 0)?;
        // The first block is the caller's; the others go on the list, the
        // lowest first out.
        for i in (1..blocks).rev() {
            let block = first + i * size;
            links.set_next(block, self.heads[class]);
            self.heads[class] = block;
        }
        self.held += size * (blocks - 1);
        Some(first)
    }

    /// Puts `block`, taken from `class` and no longer used, back on its
    /// list; false (nothing done) if that would make the lists keep more
    /// than their bound, or `class` is not a class: the caller gives the
    /// block (`block_size(class)` bytes, [`ALIGN`]-aligned) to the heap
    /// below.
    #[must_use]
    pub fn give(&mut self, class: usize, block: usize, links: &mut impl Links) -> bool {
        if class >= CLASSES {
            return false;
        }
        let size = block_size(class);
        if self.held.saturating_add(size) > self.held_max {
            return false;
        }
        links.set_next(block, self.heads[class]);
        self.heads[class] = block;
        self.held += size;
        true
    }

    /// Bytes of the free blocks on the lists (taken from the heap below,
    /// in use by nobody).
    pub fn held(&self) -> usize {
        self.held
    }
}
