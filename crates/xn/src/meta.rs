//! The three metadata changes — allocate, free, modify — each accepted only
//! when `owns` before and after differ by exactly the declared extent and
//! the caller holds write rights over the metadata block.

use oxok_abi::xn::{BLOCK_SIZE, DATA};

use crate::registry::Entry;
use crate::xn::Frames;
use crate::{Creds, Extent, Frame, Refusal, SetError, Xn};

impl Xn {
    /// Allocates the free blocks of `ext` to the metadata block `meta`,
    /// whose cached content becomes `new`.
    ///
    /// Checks: `meta` is a live cached metadata block with no write in
    /// flight; its parent's `acl` (its own for a root) grants the caller
    /// (`creds`) write; every block of `ext` is on the disk and free; and
    /// `owns(new) == owns(old) ∪ ext` exactly, types included. Then: the
    /// frame of `meta` holds `new` (dirty), the blocks are allocated with
    /// type `ext.ty` and tainted until written and flushed.
    pub fn allocate(
        &mut self,
        mem: &mut impl Frames,
        creds: &(impl Creds + ?Sized),
        meta: u64,
        new: &[u8; BLOCK_SIZE],
        ext: Extent,
    ) -> Result<(), Refusal> {
        let (e, before, after) = self.change_check(mem, creds, meta, new)?;
        if ext.len == 0 || ext.ty > self.types(e.fs) {
            return Err(Refusal::BadOwns(meta, SetError::BadType(ext.start)));
        }
        if ext.start.checked_add(ext.len).is_none_or(|end| end > self.map.nblocks()) {
            return Err(Refusal::OutOfRange(ext.start));
        }
        if let Some(b) = ext.blocks().find(|&b| !self.map.is_free(b)) {
            return Err(Refusal::NotFree(b));
        }
        let expected = before.with(ext, self.map.nblocks(), self.types(e.fs)).map_err(|s| match s {
            SetError::NoMemory => Refusal::NoMemory,
            _ => Refusal::OwnsMismatch(meta),
        })?;
        if expected != after {
            return Err(Refusal::OwnsMismatch(meta));
        }
        self.reg.reserve(ext.len)?;
        self.commit(mem, meta, new)?;
        let parent = Some((meta, e.generation));
        let first = self.next_gen;
        self.next_gen += ext.len;
        let mut generation = first;
        self.reg.insert_run(ext.start, ext.len, || {
            generation += 1;
            Entry::new(e.fs, ext.ty, generation, parent, e.issued)
        })?;
        for b in ext.blocks() {
            self.map.set(b, true);
        }
        if let Some(mut m) = self.reg.get_mut(meta) {
            m.children += ext.len;
        }
        Ok(())
    }

    /// Frees the blocks of `ext` from the metadata block `meta`, whose
    /// cached content becomes `new`. `release(block, frame)` is told of
    /// every frame that cached a freed block (the wrapper unmaps and reuses
    /// it).
    ///
    /// Checks as [`allocate`](Xn::allocate), with `owns(new) == owns(old) \
    /// ext` exactly; every block of `ext` is owned by `meta` in core, has no
    /// write in flight (nor a copy reading it), and a metadata block among them owns nothing. Then
    /// a freed block that no write of `meta` has ever carried a pointer to
    /// is free at once; any other waits on the will-free list until a write
    /// of `meta` without it is durable, or `meta` itself is gone
    /// ([`reap`](Xn::reap)).
    pub fn free(
        &mut self,
        mem: &mut impl Frames,
        creds: &(impl Creds + ?Sized),
        meta: u64,
        new: &[u8; BLOCK_SIZE],
        ext: Extent,
        release: &mut impl FnMut(u64, Frame),
    ) -> Result<(), Refusal> {
        let (e, before, after) = self.change_check(mem, creds, meta, new)?;
        if ext.start.checked_add(ext.len).is_none_or(|end| end > self.map.nblocks()) || ext.len == 0 {
            return Err(Refusal::OutOfRange(ext.start));
        }
        for b in ext.blocks() {
            let c = self.reg.get(b).ok_or(Refusal::NotAllocated(b))?;
            if c.parent != Some((meta, e.generation)) {
                return Err(Refusal::NotAllocated(b));
            }
            if c.freed.is_some() {
                return Err(Refusal::WillFree(b));
            }
            if c.in_flight || c.pins > 0 {
                return Err(Refusal::InFlight(b));
            }
            if c.ty != DATA && c.children > 0 {
                return Err(Refusal::NotEmpty(b));
            }
        }
        let expected = after.with(ext, self.map.nblocks(), self.types(e.fs)).map_err(|s| match s {
            SetError::NoMemory => Refusal::NoMemory,
            _ => Refusal::OwnsMismatch(meta),
        })?;
        if expected != before {
            return Err(Refusal::OwnsMismatch(meta));
        }
        let n = usize::try_from(ext.len).map_err(|_| Refusal::NoMemory)?;
        self.will_free.try_reserve(n).map_err(|_| Refusal::NoMemory)?;
        self.commit(mem, meta, new)?;
        for b in ext.blocks() {
            let Some(mut c) = self.reg.get_mut(b) else { continue };
            if let Some(frame) = c.frame.take() {
                release(b, frame);
            }
            if c.parent_issued_at_alloc == e.issued {
                // No write of `meta` since the allocation: no pointer on disk.
                self.map.set(b, false);
            } else {
                c.freed = Some(e.issued);
                self.will_free.push(b);
            }
        }
        self.reg.remove_run(ext.start, ext.end(), |_, c| c.freed.is_none());
        if let Some(mut m) = self.reg.get_mut(meta) {
            m.children = m.children.saturating_sub(ext.len);
        }
        Ok(())
    }

    /// Changes the cached metadata `meta` to `new` without changing what it
    /// owns: accepted only when `owns(new) == owns(old)` exactly and the
    /// caller holds write rights over it.
    pub fn modify(
        &mut self,
        mem: &mut impl Frames,
        creds: &(impl Creds + ?Sized),
        meta: u64,
        new: &[u8; BLOCK_SIZE],
    ) -> Result<(), Refusal> {
        let (_, before, after) = self.change_check(mem, creds, meta, new)?;
        if before != after {
            return Err(Refusal::OwnsMismatch(meta));
        }
        self.commit(mem, meta, new)
    }

    /// Copies `new` into the frame of `meta` and marks it dirty.
    fn commit(&mut self, mem: &mut impl Frames, meta: u64, new: &[u8; BLOCK_SIZE]) -> Result<(), Refusal> {
        let mut m = self.reg.get_mut(meta).ok_or(Refusal::NotAllocated(meta))?;
        let frame = m.frame.ok_or(Refusal::NotBound(meta))?;
        mem.write(frame).ok_or(Refusal::NotBound(meta))?.copy_from_slice(new);
        m.dirty = true;
        Ok(())
    }
}
