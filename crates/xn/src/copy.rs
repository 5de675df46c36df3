//! Copying on the disk without the CPU (XCP, Xok SOSP '97 §7): a data
//! block is written straight from the frame caching another block. XN makes
//! every check a write and a bind make — the caller may write the
//! destination and read the source (`acl`, checked once, here) — and keeps
//! the source's frame pinned until the device has read it: neither evicted
//! nor freed while the write is in flight.

use oxok_abi::xn::rights;

use crate::order::WriteReceipt;
use crate::xn::Frames;
use crate::{AclMemo, Creds, Frame, Refusal, Xn};

/// A copy XN let the wrapper submit; hand it back on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyReceipt {
    /// The destination's write.
    pub write: WriteReceipt,
    /// The source block, pinned until [`Xn::copy_done`].
    pub src: u64,
    src_generation: u64,
}

/// A copy [`Xn::copy_check`] allowed: what the wrapper submits, and what
/// [`Xn::copy_record`] records once the device has taken the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPlan {
    /// The destination block.
    pub dst: u64,
    /// The source block.
    pub src: u64,
    /// The frame the device reads: the source's cache.
    pub from: Frame,
    dst_generation: u64,
    src_generation: u64,
}

/// What the wrapper does for a recorded copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    /// Hand back on completion.
    pub receipt: CopyReceipt,
    /// The frame the device reads: the source's (pinned).
    pub from: Frame,
    /// The destination's old cached frame, no longer its cache (the
    /// wrapper releases it; the destination is read from the disk again).
    pub dropped: Option<Frame>,
}

impl Xn {
    /// Whether the caller may write the data block `dst` from the frame
    /// caching `src` now (changes nothing); the plan names that frame.
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
    ) -> Result<CopyPlan, Refusal> {
        self.copy_check_memo(mem, creds, dst, src, &mut AclMemo::new())
    }

    /// [`copy_check`](Xn::copy_check) for one of a batch's pairs, the
    /// `acl` of each parent run once while `memo` lives (no metadata
    /// changes between a batch's checks).
    pub fn copy_check_memo(
        &self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        dst: u64,
        src: u64,
        memo: &mut AclMemo,
    ) -> Result<CopyPlan, Refusal> {
        let d = self.live(dst)?;
        if d.is_meta() {
            return Err(Refusal::MetadataWritable(dst));
        }
        self.check_rights_live(mem, creds, dst, d, rights::WRITE, Some(&mut *memo))?;
        if d.in_flight {
            return Err(Refusal::InFlight(dst));
        }
        if d.pins > 0 || dst == src {
            return Err(Refusal::Busy(dst));
        }
        let dst_generation = d.generation;
        let s = self.live(src)?;
        self.check_rights_live(mem, creds, src, s, rights::READ, Some(memo))?;
        let from = s.frame.ok_or(Refusal::NotBound(src))?;
        if s.durable_seq(self.durable) == 0 {
            return Err(Refusal::Tainted(src));
        }
        if s.pins == u32::MAX {
            return Err(Refusal::Busy(src));
        }
        Ok(CopyPlan { dst, src, from, dst_generation, src_generation: s.generation })
    }

    /// Records the copy `plan` allowed as submitted: the write is in flight
    /// like [`write_record`](Xn::write_record)'s (taint and durability
    /// follow the same rules), `dst` is no longer cached, and `src` is
    /// pinned. Cannot fail; call it right after the device took the
    /// request, with nothing changed in XN since the check.
    pub fn copy_record(&mut self, plan: CopyPlan) -> Copy {
        let (write, dropped) = match self.reg.get_mut(plan.dst).filter(|m| m.generation == plan.dst_generation) {
            Some(mut m) => {
                m.issued += 1;
                m.in_flight = true;
                m.dirty = false;
                (WriteReceipt::new(plan.dst, m.generation, m.issued), m.frame.take())
            }
            // Not reached under the rule above; a receipt no completion matches.
            None => (WriteReceipt::new(plan.dst, plan.dst_generation, 0), None),
        };
        if let Some(mut p) = self.reg.get_mut(plan.src).filter(|p| p.generation == plan.src_generation) {
            p.pins += 1;
        }
        let receipt = CopyReceipt { write, src: plan.src, src_generation: plan.src_generation };
        Copy { receipt, from: plan.from, dropped }
    }

    /// [`copy_check`](Xn::copy_check) and [`copy_record`](Xn::copy_record)
    /// at once, for a wrapper whose submission cannot fail.
    pub fn copy_begin(
        &mut self,
        mem: &impl Frames,
        creds: &(impl Creds + ?Sized),
        dst: u64,
        src: u64,
    ) -> Result<Copy, Refusal> {
        let plan = self.copy_check(mem, creds, dst, src)?;
        Ok(self.copy_record(plan))
    }

    /// The copy finished (`ok`: the write completed, not yet durable; else
    /// it failed and `dst`, uncached, counts as issued and dirty, as after a
    /// failed [`write_begin`](Xn::write_begin)). The source is unpinned.
    ///
    /// A failed copy onto a block no write of which ever completed leaves it
    /// [`unwritten`](Xn::unwritten) again: the disk there may still hold a
    /// former owner's bytes, so the block's content is zeros, never a read
    /// of the disk. It stays tainted until a write of it is durable.
    pub fn copy_done(&mut self, t: CopyReceipt, ok: bool) {
        if ok {
            self.write_done(t.write);
        } else {
            self.write_failed(t.write);
            let durable = self.durable;
            let never_written = |e: &crate::registry::Entry| {
                e.frame.is_none() && e.generation == t.write.generation && !e.ever_completed(durable)
            };
            if let Some(mut e) = self.reg.get_mut(t.write.block).filter(|e| never_written(e)) {
                e.issued = 0;
                e.dirty = false;
            }
        }
        if let Some(mut p) = self.reg.get_mut(t.src).filter(|p| p.generation == t.src_generation) {
            p.pins = p.pins.saturating_sub(1);
        }
    }

    /// Whether `block` is the source of a copy in flight.
    pub fn is_pinned(&self, block: u64) -> bool {
        self.reg.get(block).is_some_and(|e| e.pins > 0)
    }
}
