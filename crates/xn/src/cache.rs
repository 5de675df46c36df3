//! Binding blocks to frames: the registry maps each cached block to exactly
//! one frame (so every libFS sees the same copy), rights are checked once
//! when a frame is bound into an address space, and metadata frames are
//! never bound writable.

use oxok_abi::xn::rights;

use crate::registry::Entry;
use crate::xn::Frames;
use crate::{Creds, Frame, Refusal, Xn};

impl Xn {
    /// Registers `frame` as the cache of the live `block`. The wrapper calls
    /// it only after filling the frame itself — from disk (read-and-insert)
    /// or with zeros for a block allocated and not written since
    /// ([`unwritten`](Xn::unwritten)) — so no one can plant a fake cached
    /// copy.
    pub fn insert(&mut self, block: u64, frame: Frame) -> Result<(), Refusal> {
        if self.live(block)?.frame.is_some() {
            return Err(Refusal::AlreadyBound(block));
        }
        if let Some(mut e) = self.reg.get_mut(block) {
            e.frame = Some(frame);
        }
        Ok(())
    }

    /// [`insert`](Xn::insert) for a frame the wrapper read from the disk:
    /// refused too for an [`unwritten`](Xn::unwritten) block, whose disk
    /// bytes are a former owner's (a read submitted before the block was
    /// freed and allocated again must not become the new block's cache).
    pub fn insert_read(&mut self, block: u64, frame: Frame) -> Result<(), Refusal> {
        if self.unwritten(block) {
            return Err(Refusal::Tainted(block));
        }
        self.insert(block, frame)
    }

    /// The frame to map for a caller asking for `want` ([`rights`]) over
    /// `block`: refused for a metadata block asked writable, unless the
    /// `acl` over it (its parent's; a root's own) grants the caller `want`,
    /// or when the block is not cached. This is the one check: afterwards
    /// the caller reads and writes the frame directly.
    pub fn bind(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        block: u64,
        want: u32,
    ) -> Result<Frame, Refusal> {
        let e = self.bindable(block, want)?;
        let frame = e.frame.ok_or(Refusal::NotBound(block))?;
        self.check_rights_live(mem, creds, block, e, want, None)?;
        Ok(frame)
    }

    /// The checks of [`bind`](Xn::bind) but the frame's: for a block the
    /// wrapper would cache first ([`unwritten`](Xn::unwritten)), so that a
    /// caller [`bind`](Xn::bind) would refuse causes no frame.
    pub fn may_bind(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        block: u64,
        want: u32,
    ) -> Result<(), Refusal> {
        let e = self.bindable(block, want)?;
        self.check_rights_live(mem, creds, block, e, want, None)
    }

    /// The live entry of `block` if it may be bound with `want` at all: a
    /// metadata block never writable.
    fn bindable(&self, block: u64, want: u32) -> Result<&Entry, Refusal> {
        let e = self.live(block)?;
        if e.is_meta() && want & rights::WRITE != 0 {
            return Err(Refusal::MetadataWritable(block));
        }
        Ok(e)
    }

    /// Takes back the zeroed frame the wrapper just cached for an
    /// [`unwritten`](Xn::unwritten) data block whose binding then failed:
    /// only while the block is as that left it (cached, nothing issued,
    /// not dirty, no copy reading it), so it is unwritten again.
    pub fn unfill(&mut self, block: u64) -> Option<Frame> {
        let mut e = self.reg.get_mut(block)?;
        if e.is_meta() || e.issued != 0 || e.dirty || e.in_flight || e.pins > 0 || e.freed.is_some() {
            return None;
        }
        e.frame.take()
    }

    /// Takes `block` out of the cache and returns its frame: only when it
    /// is clean (every write durable, not dirty, nothing in flight) and no
    /// copy in flight reads its frame.
    pub fn evict(&mut self, block: u64) -> Result<Frame, Refusal> {
        let durable = self.durable;
        let mut e = self.reg.get_mut(block).ok_or(Refusal::NotAllocated(block))?;
        let frame = e.frame.ok_or(Refusal::NotBound(block))?;
        if e.in_flight {
            return Err(Refusal::InFlight(block));
        }
        if e.dirty || e.durable_seq(durable) == 0 || e.undurable(durable) || e.pins > 0 {
            return Err(Refusal::Busy(block));
        }
        e.frame = None;
        Ok(frame)
    }
}
