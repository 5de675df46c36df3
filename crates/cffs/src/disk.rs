//! [`Disk`]: the disk as XN exposes it to a library file system. Every
//! change to metadata goes through XN's checks (allocate, free, modify with
//! the proposed new image); data blocks are read and written through the
//! buffer cache; a write-back is refused while it would persist a pointer
//! to a tainted block; `flush` is the only barrier.
//!
//! The host implements it over `oxok_xn::Xn` and an in-memory disk
//! ([`crate::host::MemDisk`]); the libOS over XN's system calls.

use alloc::vec::Vec;

use oxok_xn::{Extent, Refusal};

use crate::layout::Block;

/// The disk through XN.
pub trait Disk {
    /// Blocks on the disk.
    fn nblocks(&self) -> u64;
    /// Whether `block` is free in XN's free map (freed blocks waiting on the
    /// will-free list are not).
    fn is_free(&self, block: u64) -> bool;
    /// The first free block in `from..end`, or `end` if there is none (a
    /// disk that can look at many blocks at once skips allocated ones
    /// wholesale).
    fn next_free(&self, from: u64, end: u64) -> u64 {
        (from..end).find(|&b| self.is_free(b)).unwrap_or(end)
    }
    /// Whether `block` is allocated and not yet durably written.
    fn is_tainted(&self, block: u64) -> bool;
    /// The cached content of `block` (read from the disk if not cached).
    fn read(&mut self, block: u64, out: &mut Block) -> Result<(), Refusal>;
    /// `look` applied to the cached content of `block` (read from the disk
    /// if not cached), where it lies when the disk can lend it: no copy.
    fn view<R>(&mut self, block: u64, look: impl FnOnce(&Block) -> R) -> Result<R, Refusal> {
        let mut b = [0; crate::layout::BSIZE as usize];
        self.read(block, &mut b)?;
        Ok(look(&b))
    }
    /// Brings `blocks` (sorted, allocated) into the cache in one batch of
    /// requests, so a directory's small files come in together (C-FFS
    /// grouping); blocks already cached cost nothing.
    fn prefetch(&mut self, blocks: &[u64]) -> Result<(), Refusal>;
    /// Whether reading `block` would need no disk request now (a hint:
    /// `true` when unknown, as for a disk wholly in memory).
    fn is_cached(&self, _block: u64) -> bool {
        true
    }
    /// Replaces the cached content of the data `block` (bound writable: the
    /// rights check happens there) and marks it dirty.
    fn write_data(&mut self, block: u64, data: &Block) -> Result<(), Refusal>;
    /// Writes `piece` at byte `at` of the data `block` that was allocated
    /// and never written since, so reads as zeros (XN's promise): the rest
    /// of it stays zero, and nothing is read first. A disk whose cache
    /// frame for such a block is zeroed already copies the piece alone.
    fn write_fresh(&mut self, block: u64, at: usize, piece: &[u8]) -> Result<(), Refusal> {
        let mut b = [0; crate::layout::BSIZE as usize];
        b[at..at + piece.len()].copy_from_slice(piece);
        self.write_data(block, &b)
    }
    /// XN allocate: the free blocks of `ext` become owned by the metadata
    /// block `meta`, whose content becomes `new`; they are dirty and
    /// tainted, and read as zeros (metadata cached at once, data blocks
    /// when first read, bound or written).
    fn alloc(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal>;
    /// XN free: `meta` no longer owns `ext`; its content becomes `new`.
    fn free(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal>;
    /// XN modify: `meta` becomes `new`, owning exactly what it owned.
    fn modify(&mut self, meta: u64, new: &Block) -> Result<(), Refusal>;
    /// [`modify`](Disk::modify) of `meta` to its content changed by `edit`
    /// (which must leave what it owns as it was). A disk that keeps a
    /// change in memory before it goes to XN edits it there: no copy of
    /// the block out and back.
    fn edit(&mut self, meta: u64, edit: impl FnOnce(&mut Block)) -> Result<(), Refusal> {
        let mut b = [0; crate::layout::BSIZE as usize];
        self.read(meta, &mut b)?;
        edit(&mut b);
        self.modify(meta, &b)
    }
    /// Appends the blocks whose cached content has not been written since
    /// it last changed (including new blocks never written).
    fn dirty(&self, out: &mut Vec<u64>);
    /// Writes the cached `block` back (the write completes, not yet
    /// durable). Refused with [`Refusal::TaintedPointer`] while it owns a
    /// block not yet durable.
    fn write(&mut self, block: u64) -> Result<(), Refusal>;
    /// [`write`](Disk::write) for each of `blocks`, in order, until one is
    /// refused: how many went before it, and its refusal (a disk that can
    /// hands them over in batches).
    fn write_all(&mut self, blocks: &[u64]) -> (usize, Result<(), Refusal>) {
        for (i, &b) in blocks.iter().enumerate() {
            if let Err(e) = self.write(b) {
                return (i, Err(e));
            }
        }
        (blocks.len(), Ok(()))
    }
    /// XN copy (XCP): writes the data `block` from the cached frame of
    /// the durable block `src` — the CPU never touches the data. `src` must
    /// be cached ([`prefetch`](Disk::prefetch)); afterwards `block` counts
    /// as written (not dirty) and is durable after the next flush.
    fn copy(&mut self, block: u64, src: u64) -> Result<(), Refusal>;
    /// [`copy`](Disk::copy) for each `[block, src]` of `pairs`, in order
    /// (a disk that can hands them over in batches).
    fn copy_all(&mut self, pairs: &[[u64; 2]]) -> Result<(), Refusal> {
        pairs.iter().try_for_each(|&[block, src]| self.copy(block, src))
    }
    /// Lets the clean cached `blocks` leave the cache (their frames go
    /// back; a later read brings them in from the disk). Blocks with
    /// unwritten changes, or that XN cannot evict yet, stay.
    fn uncache(&mut self, blocks: &[u64]) -> Result<(), Refusal>;
    /// XN add-root: the free `block` becomes a root of template `ty` with
    /// `content` (owning nothing yet), tainted until written and flushed.
    fn add_root(&mut self, block: u64, ty: u32, content: &Block) -> Result<(), Refusal>;
    /// The barrier: every completed write is durable afterwards; XN then
    /// releases will-free blocks no durable pointer reaches.
    fn flush(&mut self) -> Result<(), Refusal>;
}

/// The first free block in `from..end` of a free map read a 64-bit word
/// at a time (`word(i)`: blocks `64i..64i + 64`, a set bit allocated;
/// `None` past the map), or `end`: a word of ones passes 64 blocks at once.
pub fn next_free_by_words(from: u64, end: u64, word: impl Fn(u64) -> Option<u64>) -> u64 {
    let mut b = from;
    while b < end {
        let Some(w) = word(b / 64) else { return end };
        let free = !w >> (b % 64);
        if free != 0 {
            return (b + u64::from(free.trailing_zeros())).min(end);
        }
        b = (b / 64 + 1) * 64;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::next_free_by_words;

    #[test]
    fn a_word_at_a_time_finds_what_a_block_at_a_time_finds() {
        let mut rng = oxok_testrng::Rng::new(3);
        for _ in 0..2000 {
            let words: alloc::vec::Vec<u64> = (0..4)
                .map(|_| match rng.below(4) {
                    0 => u64::MAX,
                    1 => 0,
                    _ => rng.next() | rng.next(),
                })
                .collect();
            let word = |i: u64| words.get(i as usize).copied();
            let free = |b: u64| word(b / 64).is_some_and(|w| w & (1 << (b % 64)) == 0);
            let from = rng.below(300);
            let end = rng.below(300);
            let want = (from..end).find(|&b| free(b)).unwrap_or(end);
            assert_eq!(next_free_by_words(from, end, word), want, "from {from} end {end} {words:x?}");
        }
    }
}
