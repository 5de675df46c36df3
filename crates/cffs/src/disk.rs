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
    /// XN allocate: the free blocks of `ext` become owned by the metadata
    /// block `meta`, whose content becomes `new`; they are cached zeroed,
    /// dirty and tainted.
    fn alloc(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal>;
    /// XN free: `meta` no longer owns `ext`; its content becomes `new`.
    fn free(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal>;
    /// XN modify: `meta` becomes `new`, owning exactly what it owned.
    fn modify(&mut self, meta: u64, new: &Block) -> Result<(), Refusal>;
    /// Appends the blocks whose cached content has not been written since
    /// it last changed (including new blocks never written).
    fn dirty(&self, out: &mut Vec<u64>);
    /// Writes the cached `block` back (the write completes, not yet
    /// durable). Refused with [`Refusal::TaintedPointer`] while it owns a
    /// block not yet durable.
    fn write(&mut self, block: u64) -> Result<(), Refusal>;
    /// XN copy (XCP): writes the data `block` from the cached frame of
    /// the durable block `src` — the CPU never touches the data. `src` must
    /// be cached ([`prefetch`](Disk::prefetch)); afterwards `block` counts
    /// as written (not dirty) and is durable after the next flush.
    fn copy(&mut self, block: u64, src: u64) -> Result<(), Refusal>;
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
