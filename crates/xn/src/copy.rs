//! Copying on the disk without the CPU (XCP, Xok SOSP '97 §7): a data
//! block is written straight from the frame caching another block. XN makes
//! every check a write and a bind make — the caller may write the
//! destination and read the source (`acl`, checked once, here) — and keeps
//! the source's frame pinned until the device has read it: neither evicted
//! nor freed while the write is in flight.

use oxok_abi::xn::rights;

use crate::order::WriteTicket;
use crate::xn::Frames;
use crate::{Creds, Refusal, Xn};

/// A copy XN let the wrapper submit; hand it back on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyTicket {
    /// The destination's write.
    pub write: WriteTicket,
    /// The source block, pinned until [`Xn::copy_done`].
    pub src: u64,
    src_generation: u64,
}

/// What the wrapper does for an accepted copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    /// Hand back on completion.
    pub ticket: CopyTicket,
    /// The frame the device reads: the source's (pinned).
    pub from: u64,
    /// The destination's old cached frame, no longer its cache (the
    /// wrapper releases it; the destination is read from the disk again).
    pub dropped: Option<u64>,
}

impl Xn {
    /// Whether the caller may write the data block `dst` from the frame
    /// caching `src` now (changes nothing).
    ///
    /// Checks: `dst` is a live data block (a metadata block is
    /// [`Refusal::MetadataWritable`]: its content changes only through the
    /// checked calls) over which `acl` grants the caller write, with no
    /// write in flight and not itself pinned as a source (`Busy`); `src` is
    /// another live block over which `acl` grants read, cached, and durably
    /// written (a tainted source is [`Refusal::Tainted`]: its content was
    /// never on the disk).
    pub fn copy_check(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        dst: u64,
        src: u64,
    ) -> Result<(), Refusal> {
        let d = self.live(dst)?;
        if d.is_meta() {
            return Err(Refusal::MetadataWritable(dst));
        }
        self.check_rights(mem, creds, dst, rights::WRITE)?;
        if d.in_flight {
            return Err(Refusal::InFlight(dst));
        }
        if d.pins > 0 || dst == src {
            return Err(Refusal::Busy(dst));
        }
        self.check_rights(mem, creds, src, rights::READ)?;
        let s = self.live(src)?;
        if s.frame.is_none() {
            return Err(Refusal::NotBound(src));
        }
        if s.durable_seq(self.durable) == 0 {
            return Err(Refusal::Tainted(src));
        }
        if s.pins == u32::MAX {
            return Err(Refusal::Busy(src));
        }
        Ok(())
    }

    /// Writes the data block `dst` from the frame caching `src`, after
    /// [`copy_check`](Xn::copy_check): the write is in flight like
    /// [`write_begin`](Xn::write_begin)'s (taint and durability follow the
    /// same rules), `dst` is no longer cached, and `src` is pinned.
    pub fn copy_begin(
        &mut self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        dst: u64,
        src: u64,
    ) -> Result<Copy, Refusal> {
        self.copy_check(mem, creds, dst, src)?;
        let from = self.live(src)?.frame.ok_or(Refusal::NotBound(src))?;
        let m = self.reg.get_mut(dst).ok_or(Refusal::NotAllocated(dst))?;
        m.issued += 1;
        m.in_flight = true;
        m.dirty = false;
        let dropped = m.frame.take();
        let write = WriteTicket::new(dst, m.generation, m.issued);
        let p = self.reg.get_mut(src).ok_or(Refusal::NotAllocated(src))?;
        p.pins += 1;
        Ok(Copy { ticket: CopyTicket { write, src, src_generation: p.generation }, from, dropped })
    }

    /// The copy finished (`ok`: the write completed, not yet durable; else
    /// it failed and `dst`, uncached, counts as issued and dirty, as after a
    /// failed [`write_begin`](Xn::write_begin)). The source is unpinned.
    pub fn copy_done(&mut self, t: CopyTicket, ok: bool) {
        if ok {
            self.write_done(t.write);
        } else {
            self.write_failed(t.write);
        }
        if let Some(p) = self.reg.get_mut(t.src).filter(|p| p.generation == t.src_generation) {
            p.pins = p.pins.saturating_sub(1);
        }
    }

    /// Whether `block` is the source of a copy in flight.
    pub fn is_pinned(&self, block: u64) -> bool {
        self.reg.get(block).is_some_and(|e| e.pins > 0)
    }
}
