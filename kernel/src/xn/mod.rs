//! XN in the kernel: a thin wrapper over the pure `oxok-xn` crate. The
//! wrapper owns the disk ([`Disk`]), the buffer-cache frames
//! ([`CacheFrames`]) and the catalogue (registered file systems and roots,
//! in the first [`CATALOG_BLOCKS`] disk blocks); XN decides every
//! allocation, free, metadata change, binding and write. Requests are
//! asynchronous: completions are collected at every tick and every XN call,
//! and published in the exposed table ([`oxok_abi::xn::XN_TABLE`]), where
//! a wakeup predicate can wait on `oldest_pending`.
//!
//! All of it sits behind one lock, taken only with the kernel lock held.

mod boot;
mod cache;
mod catalog;
mod principals;
mod table;

use crate::dev::virtio_blk::{Disk, Op};
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use cache::CacheFrames;
use catalog::Catalog;
use oxok_abi::Error;
use oxok_abi::xn::{BLOCK_SIZE, CATALOG_BLOCKS};
use oxok_xn::{CopyPlan, CopyReceipt, FlushReceipt, Frame, WritePlan, WriteReceipt, Xn};
use spin::Mutex;

pub use boot::init;
pub use principals::Principals;

/// Will-free entries examined after each completed flush.
const REAP_BUDGET: usize = 256;

/// Completions collected per batch: two whole write runs.
const COLLECT_BATCH: usize = 2 * crate::dev::virtio_blk::RUN_MAX;

/// What an outstanding request is for.
#[derive(Clone, Copy, Debug)]
enum Req {
    /// Filling cache frame `frame` with XN block `block`.
    Read { block: u64, frame: Frame },
    /// Writing a cached block.
    Write(WriteReceipt),
    /// Writing a block from another block's (pinned) frame.
    Copy(CopyReceipt),
    /// A flush asked for by a program (`n`: flushes submitted before it).
    Flush(FlushReceipt, u64),
    /// Writing a catalogue block from cache frame `frame` (released after
    /// unless it is the header's): file system `fs`'s templates, or the
    /// header when `fs` is `u32::MAX`.
    Catalog { frame: Frame, fs: u32 },
    /// The flush that follows a catalogue header write.
    CatalogFlush(FlushReceipt, u64),
}

/// The kernel's XN state for the one disk.
pub struct XnState {
    /// The device.
    pub disk: Disk,
    /// The checker.
    pub xn: Xn,
    /// The cache frames.
    pub mem: CacheFrames,
    cat: Catalog,
    /// Outstanding requests, oldest first (sequence numbers rise): room
    /// for every request slot of the device is kept, so recording one
    /// takes no allocation and a queue that drains gives nothing back.
    reqs: VecDeque<(u64, Req)>,
    /// How many of them are reads (most calls then need not look).
    reads: usize,
    /// The last sequence number handed out.
    seq: u64,
    /// Flushes submitted so far.
    flushes: u64,
    /// Writes submitted so far (the header's `writes`).
    writes: u64,
    /// Requests that failed.
    errors: u64,
    /// What recovery found at boot.
    duplicates: u64,
    recovered: u64,
    /// The table needs rewriting.
    changed: bool,
    /// The last look at the will-free list freed blocks, so their
    /// children may go now: look again at the next poll (a child whose
    /// parent leaves in one look waits for the next, and no flush may come
    /// to make one).
    reaping: bool,
    /// Cache frames taken at boot (the catalogue header).
    boot_frames: usize,
    /// Completions the disk's interrupt collected (the header's
    /// `interrupted`).
    interrupted: u64,
    /// What the exposed table's header, roots and usage hold.
    shown: table::Shown,
    /// The block a call hands XN (its new content), copied in from the
    /// caller here: no 4 KiB zeroed and moved per call.
    pub scratch: Box<[u8; BLOCK_SIZE]>,
}

static XN: Mutex<Option<XnState>> = Mutex::new(None);

/// Runs `f` with the XN state locked after collecting completions
/// (`NotFound` without a disk); republishes the table afterwards.
pub fn with<R>(f: impl FnOnce(&mut XnState) -> Result<R, Error>) -> Result<R, Error> {
    let mut guard = XN.lock();
    let s = guard.as_mut().ok_or(Error::NotFound)?;
    s.collect();
    let r = f(s);
    s.changed = true;
    s.publish();
    r
}

/// Frames the buffer cache holds beyond those it took at boot (the halt
/// check counts them as in use, not leaked).
pub fn cached_frames() -> usize {
    XN.lock().as_ref().map_or(0, |s| s.mem.len().saturating_sub(s.boot_frames))
}

/// Kernel heap the buffer cache's frames are charged for (the halt check
/// counts it as in use, not leaked, like [`cached_frames`]).
pub fn cached_heap() -> u64 {
    XN.lock().as_ref().map_or(0, |s| s.mem.charged().heap)
}

/// At halt, with every environment gone: the kernel's XN state — the
/// disk's own bookkeeping (the checker's registry of blocks, the buffer
/// cache's map), which outlives programs by design — goes, so that the
/// heap half of the leak check sees only what programs caused.
pub fn shut_down() {
    drop(XN.lock().take());
}

/// Posts the disk's open write run, if any (`Disk::kick`): before a
/// program sleeps — it may be waiting for those very writes — so a burst
/// of adjacent writes goes as one request yet nobody waits a tick for it.
pub fn kick() {
    if let Some(s) = XN.lock().as_mut() {
        s.disk.kick();
    }
}

/// Set by the disk's completion interrupt; taken under the kernel lock.
pub static IRQ: crate::irqflag::IrqFlag = crate::irqflag::IrqFlag::new();

/// Collects finished requests and publishes them; how many finished
/// (counted in the header's `interrupted` when `interrupt` says the
/// disk's interrupt brought us here rather than a tick). Bounded: at most
/// the requests in flight, each of which an XN call submitted.
///
/// A tick posts the open write run first; a completion does not: posting
/// it at every completion cut a writer's runs to 8–14 blocks while the
/// device kept finishing earlier ones (a 64 MiB write went as 16 requests
/// per MiB, 9.4 since; `xcp` 2.2 requests per file, 1.5 since, quick
/// disk bench). The run still goes within a tick, when it is full, before
/// a request it cannot join, and before a program sleeps (`kick`).
pub fn poll(interrupt: bool) -> usize {
    let mut guard = XN.lock();
    let Some(s) = guard.as_mut() else { return 0 };
    if !interrupt {
        s.disk.kick();
    }
    let n = s.collect();
    if interrupt {
        s.interrupted += n as u64;
    }
    s.publish();
    n
}

impl XnState {
    /// Submits `op` on disk block `disk_block` from or into cache frame
    /// `frame` (`None` for a flush); returns its sequence number.
    fn submit(&mut self, op: Op, disk_block: u64, frame: Option<Frame>, req: Req) -> Result<u64, Error> {
        let seq = self.send(op, disk_block, frame)?;
        Ok(self.record(op, seq, req))
    }

    /// Hands the device request `op` on `disk_block` (from or into cache
    /// frame `frame`; `None` for a flush) with the next sequence number, and
    /// the heap room to record it; the last check of a call that then
    /// records it ([`record`](Self::record)).
    fn send(&mut self, op: Op, disk_block: u64, frame: Option<Frame>) -> Result<u64, Error> {
        self.room_to_record()?;
        let seq = self.seq + 1;
        let at = frame.map_or(crate::mem::addr::PhysAddr::new(0), cache::addr);
        self.disk.submit(op, disk_block, at, seq)?;
        Ok(seq)
    }

    /// Room to record one more request without allocating then
    /// ([`record`](Self::record) cannot fail).
    fn room_to_record(&mut self) -> Result<(), Error> {
        if self.reqs.len() < self.reqs.capacity() {
            return Ok(());
        }
        self.reqs.try_reserve(1).map_err(|_| Error::NoMemory)
    }

    /// Records request `seq`, just submitted.
    fn record(&mut self, op: Op, seq: u64, req: Req) -> u64 {
        self.seq = seq;
        if op == Op::Write {
            self.writes += 1;
        }
        if matches!(req, Req::Read { .. }) {
            self.reads += 1;
        }
        self.reqs.push_back((seq, req));
        self.changed = true;
        seq
    }

    /// Reads XN block `block` into a fresh cache frame charged to `acct`:
    /// the frame is taken before the disk's refusal, the last check, and
    /// given back by its guard ([`cache::Taken`]) if the disk refuses.
    pub fn submit_read_fresh(&mut self, block: u64, acct: crate::account::AccountId) -> Result<u64, Error> {
        self.room_to_record()?;
        let seq = self.seq + 1;
        let mut taken = self.mem.taking();
        let frame = taken.alloc(acct)?;
        self.disk.submit(Op::Read, CATALOG_BLOCKS + block, cache::addr(frame), seq)?;
        taken.keep();
        Ok(self.record(Op::Read, seq, Req::Read { block, frame }))
    }

    /// Caches `block` as zeros when it holds nothing yet
    /// ([`Xn::unwritten`]: a data block allocated and never written, whose
    /// disk bytes are a former owner's): a fresh zeroed frame charged to
    /// `acct`, no disk request. Its frame, or `None` (nothing done) for any
    /// other block.
    pub fn fill_unwritten(&mut self, block: u64, acct: crate::account::AccountId) -> Result<Option<Frame>, Error> {
        if !self.xn.unwritten(block) {
            return Ok(None);
        }
        let mut taken = self.mem.taking();
        let frame = taken.alloc(acct)?;
        // Cannot be refused: the block is live and has no frame.
        if self.xn.insert(block, frame).is_err() {
            return Ok(None);
        }
        taken.keep();
        self.changed = true;
        Ok(Some(frame))
    }

    /// Writes a cached block XN has let through.
    pub fn submit_write(&mut self, plan: WritePlan) -> Result<u64, Error> {
        let seq = self.send(Op::Write, CATALOG_BLOCKS + plan.block, Some(plan.frame))?;
        let receipt = self.xn.write_record(plan);
        Ok(self.record(Op::Write, seq, Req::Write(receipt)))
    }

    /// Writes a block XN let through from frame `plan.from` (the source's,
    /// pinned until the completion); XN records the copy once the device
    /// took it. The destination's old frame, if any, is released.
    pub fn submit_copy(&mut self, plan: CopyPlan) -> Result<u64, Error> {
        let seq = self.send(Op::Write, CATALOG_BLOCKS + plan.dst, Some(plan.from))?;
        let copy = self.xn.copy_record(plan);
        if let Some(dropped) = copy.dropped {
            self.mem.release(dropped);
        }
        Ok(self.record(Op::Write, seq, Req::Copy(copy.receipt)))
    }

    /// Submits a flush (a program's when `program`, else the catalogue's).
    pub fn submit_flush(&mut self, program: bool) -> Result<u64, Error> {
        if !self.disk.has_room() {
            return Err(Error::WouldBlock);
        }
        let t = self.xn.flush_begin();
        self.flushes += 1;
        let req = if program { Req::Flush(t, self.flushes) } else { Req::CatalogFlush(t, self.flushes) };
        self.submit(Op::Flush, 0, None, req)
    }

    /// Handles every finished request (a run's blocks one by one); how
    /// many. Bounded: at most the requests in flight, a batch of at most
    /// [`COLLECT_BATCH`] blocks at a time.
    fn collect(&mut self) -> usize {
        let mut total = 0;
        for _ in 0..=crate::dev::virtio_blk::SLOTS {
            // Most calls find nothing finished: no batch buffer to clear.
            if !self.disk.finished() {
                break;
            }
            let n = self.collect_batch();
            if n == 0 {
                break;
            }
            total += n;
        }
        if self.reaping {
            // Bounded per kernel entry, as after a flush.
            let freed = self.xn.reap(REAP_BUDGET);
            self.reaping = freed > 0;
            self.changed |= freed > 0;
        }
        self.catalog_step();
        total
    }

    /// One batch of [`collect`](Self::collect).
    fn collect_batch(&mut self) -> usize {
        let mut finished = [(0u64, false); COLLECT_BATCH];
        let mut n = 0;
        self.disk.poll(COLLECT_BATCH, |tag, _, ok| {
            if let Some(slot) = finished.get_mut(n) {
                *slot = (tag, ok);
                n += 1;
            }
        });
        for &(seq, ok) in &finished[..n] {
            let Ok(at) = self.reqs.binary_search_by_key(&seq, |&(s, _)| s) else { continue };
            let Some((_, req)) = self.reqs.remove(at) else { continue };
            if matches!(req, Req::Read { .. }) {
                self.reads -= 1;
            }
            self.changed = true;
            if !ok {
                self.errors += 1;
                log::warn!("xn: request {seq} ({req:?}) failed");
            }
            match req {
                Req::Read { block, frame } => {
                    if !ok || self.xn.insert_read(block, frame).is_err() {
                        self.mem.release(frame);
                    }
                }
                Req::Write(t) if ok => self.xn.write_done(t),
                Req::Write(t) => self.xn.write_failed(t),
                Req::Copy(t) => self.xn.copy_done(t, ok),
                Req::Flush(t, k) | Req::CatalogFlush(t, k) => {
                    if ok {
                        self.xn.flush_done(t);
                        self.reaping = self.xn.reap(REAP_BUDGET) > 0;
                        self.cat.flushed(k);
                    }
                }
                Req::Catalog { frame, fs } => {
                    if fs != u32::MAX {
                        self.mem.release(frame);
                    }
                    self.cat.written(fs, ok, self.flushes);
                }
            }
        }
        n
    }

    /// Free request slots on the device.
    pub fn free_slots(&self) -> usize {
        self.disk.free_slots()
    }

    /// Registered file systems.
    pub fn fs_count(&self) -> usize {
        self.cat.fss.len()
    }

    /// The sequence number of an outstanding read of `block`.
    pub fn read_pending(&self, block: u64) -> Option<u64> {
        if self.reads == 0 {
            return None;
        }
        self.reqs.iter().find(|(_, r)| matches!(r, Req::Read { block: b, .. } if *b == block)).map(|&(s, _)| s)
    }

    /// The oldest outstanding sequence number (`seq + 1` when none).
    fn oldest_pending(&self) -> u64 {
        self.reqs.front().map_or(self.seq + 1, |&(s, _)| s)
    }
}
