//! Ordering (Ganger and Patt's rules as Xok enforces them): a write may not
//! persist a pointer to a tainted block; a freed block is not reused while
//! a pointer to it may remain on disk. Durability comes only from a flush
//! (virtio-blk has no FUA): a write counts once a flush that began after it
//! completed has completed.

use crate::xn::Frames;
use crate::{Frame, Refusal, Xn};

/// A write XN let the wrapper submit; hand it back on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteReceipt {
    /// The block.
    pub block: u64,
    pub(crate) generation: u64,
    seq: u64,
}

/// A flush XN knows about; hand it back on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushReceipt(u64);

impl WriteReceipt {
    pub(crate) fn new(block: u64, generation: u64, seq: u64) -> WriteReceipt {
        WriteReceipt { block, generation, seq }
    }
}

/// A write [`Xn::write_check`] allowed: what the wrapper submits, and what
/// [`Xn::write_record`] records once the device has taken the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePlan {
    /// The block.
    pub block: u64,
    /// The frame the device reads: the block's cache.
    pub frame: Frame,
    generation: u64,
}

impl Xn {
    /// Whether the cached `block` may be written to disk now (changes
    /// nothing); the plan names the frame to write from.
    ///
    /// Checks: the block is live, cached, with no write in flight; if it is
    /// metadata, every block its current content owns is durably
    /// initialised — else [`Refusal::TaintedPointer`] names the first that
    /// is not (write and flush it first). Cost: one registry lookup per
    /// owned block.
    ///
    /// Writing needs no rights (as in Xok, any process may flush a dirty
    /// block: writing back what the cache holds harms no one); changing
    /// what the cache holds is what the rights guard.
    pub fn write_check(&self, mem: &impl Frames, block: u64) -> Result<WritePlan, Refusal> {
        let e = *self.live(block)?;
        if e.in_flight {
            return Err(Refusal::InFlight(block));
        }
        let frame = e.frame.ok_or(Refusal::NotBound(block))?;
        if e.is_meta() {
            let content = mem.read(frame).ok_or(Refusal::NotBound(block))?;
            let owned = self.owns_known(&e, block, content)?;
            for child in owned.extents().iter().flat_map(|x| x.blocks()) {
                let c = self.reg.get(child).ok_or(Refusal::NotAllocated(child))?;
                if c.durable_seq(self.durable) == 0 {
                    return Err(Refusal::TaintedPointer { block, child });
                }
            }
        }
        Ok(WritePlan { block, frame, generation: e.generation })
    }

    /// Records the write `plan` allowed as submitted: the block is in flight
    /// and no longer dirty. Cannot fail; call it right after the device
    /// took the request, with nothing changed in XN since the check (the
    /// wrapper holds XN's lock throughout).
    pub fn write_record(&mut self, plan: WritePlan) -> WriteReceipt {
        let issued = match self.reg.get_mut(plan.block).filter(|m| m.generation == plan.generation) {
            Some(mut m) => {
                m.issued += 1;
                m.in_flight = true;
                m.dirty = false;
                m.issued
            }
            // Not reached under the rule above; a receipt no completion matches.
            None => 0,
        };
        WriteReceipt { block: plan.block, generation: plan.generation, seq: issued }
    }

    /// [`write_check`](Xn::write_check) and [`write_record`](Xn::write_record)
    /// at once, for a wrapper whose submission cannot fail.
    pub fn write_begin(&mut self, mem: &impl Frames, block: u64) -> Result<WriteReceipt, Refusal> {
        let plan = self.write_check(mem, block)?;
        Ok(self.write_record(plan))
    }

    /// The write completed (not yet durable: that takes a flush).
    pub fn write_done(&mut self, t: WriteReceipt) {
        let (epoch, durable) = (self.epoch, self.durable);
        if let Some(mut e) = self.reg.get_mut(t.block).filter(|e| e.generation == t.generation && e.in_flight) {
            e.in_flight = false;
            e.completed(t.seq, epoch, durable);
            drop(e);
            if self.undurable.try_reserve(1).is_ok() {
                self.undurable.push(t.block);
            } else {
                self.undurable_lost = true;
            }
        }
    }

    /// The write failed. The block is dirty again; since part of it may
    /// have reached the disk, it still counts as issued.
    pub fn write_failed(&mut self, t: WriteReceipt) {
        if let Some(mut e) = self.reg.get_mut(t.block).filter(|e| e.generation == t.generation && e.in_flight) {
            e.in_flight = false;
            e.dirty = true;
        }
    }

    /// A flush is being submitted: it makes durable every write completed
    /// before now.
    pub fn flush_begin(&mut self) -> FlushReceipt {
        let t = FlushReceipt(self.epoch);
        self.epoch += 1;
        t
    }

    /// The flush completed. O(1): taint and will-free are judged lazily
    /// against the durable epoch.
    pub fn flush_done(&mut self, t: FlushReceipt) {
        self.durable = self.durable.max(t.0);
        // Every entry's state is judged against it, but only one with a
        // completion not yet durable can change: those rows are stale.
        if core::mem::take(&mut self.undurable_lost) {
            self.reg.mark_all();
        }
        let mut list = core::mem::take(&mut self.undurable);
        list.sort_unstable();
        list.dedup();
        let durable = self.durable;
        list.retain(|&b| match self.reg.get_mut(b) {
            Some(e) => e.undurable(durable),
            None => false,
        });
        self.undurable = list;
    }

    /// The wrapper saw the application dirty a data block's frame.
    pub fn mark_dirty(&mut self, block: u64) {
        if let Some(mut e) = self.reg.get_mut(block) {
            e.dirty = true;
        }
    }

    /// Whether the will-free `block` can be reused: no disk version of its
    /// parent that points to it can be reached any more — a write of the
    /// parent issued after the free is durable, or the parent is gone.
    fn reclaimable(&self, block: u64) -> bool {
        let Some(e) = self.reg.get(block) else { return true };
        let (Some(k), Some((p, generation))) = (e.freed, e.parent) else { return false };
        match self.reg.get(p) {
            Some(pe) if pe.generation == generation => pe.durable_seq(self.durable) > k,
            _ => true,
        }
    }

    /// Examines at most `budget` will-free entries (each at most once),
    /// resuming where the last call stopped, and frees those whose
    /// last on-disk pointer is gone; returns how many it freed. The wrapper
    /// calls it after each flush with a bounded budget; a parent freed now
    /// may let its children go on the next call.
    ///
    /// The blocks freed leave the registry together at the end, in one pass
    /// over its entries: one move of each later entry, not one per block
    /// (a registry of many thousand entries made each reaped block cost a
    /// move of all the entries after it). A child whose parent goes in the
    /// same call still sees the parent's entry, so it may wait for the next
    /// call.
    pub fn reap(&mut self, budget: usize) -> usize {
        let mut seen = 0;
        // `will_free[..live]` still waits; `[live..]` is freed by this call.
        let mut live = self.will_free.len();
        let budget = budget.min(live);
        while seen < budget && live > 0 {
            if self.reap_cursor >= live {
                self.reap_cursor = 0;
            }
            let Some(&b) = self.will_free.get(self.reap_cursor) else { break };
            seen += 1;
            if self.reclaimable(b) {
                live -= 1;
                self.will_free.swap(self.reap_cursor, live);
                self.map.set(b, false);
            } else {
                self.reap_cursor += 1;
            }
        }
        let gone = &mut self.will_free[live..];
        let freed = gone.len();
        gone.sort_unstable();
        self.reg.remove_sorted(gone);
        self.will_free.truncate(live);
        freed
    }
}
