//! [`XnDisk`]: the C-FFS library file system's disk (`oxok_cffs::Disk`)
//! over the kernel's XN calls. Every metadata change goes to the kernel as
//! the proposed block image (`xn_alloc`, `xn_free`, `xn_modify`), which
//! runs the file system's own `owns`/`acl` templates before and after;
//! blocks are read into the kernel's buffer cache (`xn_read`, in sorted
//! batches for [`prefetch`](Disk::prefetch)) and then read and written
//! through the pages this program bound ([`Bindings`]): file data never
//! crosses a call. Write-back issues the writes of a round back to back and
//! waits for them only before the next change or the flush.
//!
//! The file system's own bookkeeping: which blocks changed since they were
//! last written (`dirty`) and which were allocated and are not yet durable
//! (`tainted`: until a write of them completed before a flush). The kernel
//! keeps the authoritative copy of both and refuses a write-back that
//! would persist a pointer to a tainted block whatever this side believes.

use alloc::vec::Vec;

use oxok_abi::Error;
use oxok_abi::xn::MAX_EXTENT_CALL;
use oxok_abi::xn::refuse;
use oxok_cffs::Disk;
use oxok_cffs::held::Held;
use oxok_cffs::layout::{Block, RECORDS, Record, SUPER_BLOCK, T_SUPER, record, set_record};
use oxok_xn::{BlockSet, Extent, Fault, Refusal};

use super::{Bindings, XnError};

/// Where the file system's bound cache pages live in its address space.
pub const WINDOW: u64 = 0x5400_0000_0000;
/// Pages of the window at most: blocks bound at once before clean ones are
/// let go (128 MiB).
pub const WINDOW_PAGES: u64 = 32_768;
/// Pages of the window at least (16 MiB, the whole window before 29 Nov
/// 2026), however little memory is free.
pub const WINDOW_MIN_PAGES: u64 = 4096;

/// The window for this machine: a quarter of the frames free when the disk
/// is opened, within [`WINDOW_MIN_PAGES`] and [`WINDOW_PAGES`] — so a file
/// of tens of MiB stays cached on a machine of 512 MiB, and a small machine
/// keeps most of its memory for programs.
fn window_pages() -> u64 {
    crate::sys::mem_info().map_or(WINDOW_MIN_PAGES, |[_, free, _]| (free / 4).clamp(WINDOW_MIN_PAGES, WINDOW_PAGES))
}
/// Levels of metadata above a block (superblock, inode table, directory,
/// file): how many let-go blocks one bind may have to read again.
const MAX_DEPTH: usize = 8;

/// When every request slot is taken, a writer waits until the oldest this
/// many requests have finished, not all it issued: the device keeps
/// working on the rest meanwhile.
const REFILL: u64 = 8;

/// The C-FFS disk over XN.
pub struct XnDisk {
    fs: u32,
    nblocks: u64,
    pages: Bindings,
    dirty: BlockSet,
    tainted: BlockSet,
    /// Blocks the file system wrote file data into ([`Disk::write_data`]):
    /// they hold no pointers, so XN takes their write-back in any order.
    data: BlockSet,
    /// Tainted blocks whose write completed since the last flush.
    written: Vec<u64>,
    /// Blocks a prefetch brought into the cache and this side has not
    /// let go since (bound or not): reading them needs no request.
    fetched: BlockSet,
    /// The last request issued and not yet waited for (0: none).
    pending: u64,
    /// A metadata change held on this side (`oxok_cffs::held`).
    held: Held,
    /// Requests: reads, writes, flushes (for the report).
    pub requests: u64,
}

/// XN's refusal (or the call's failure) as the file system sees it.
fn refusal(e: XnError) -> Refusal {
    match e {
        XnError::Refused { code, block, detail } => match code {
            refuse::OUT_OF_RANGE => Refusal::OutOfRange(block),
            refuse::NOT_FREE => Refusal::NotFree(block),
            refuse::NOT_ALLOCATED => Refusal::NotAllocated(block),
            refuse::NOT_METADATA => Refusal::NotMetadata(block),
            refuse::DENIED => Refusal::Denied(block),
            refuse::OWNS_MISMATCH => Refusal::OwnsMismatch(block),
            refuse::BAD_OWNS => Refusal::BadOwns(block, oxok_xn::SetError::OutOfRange(block)),
            refuse::UDF_FAULT => Refusal::UdfFault(block, Fault::StepLimit),
            refuse::TAINTED_POINTER => Refusal::TaintedPointer { block, child: detail },
            refuse::IN_FLIGHT => Refusal::InFlight(block),
            refuse::NOT_EMPTY => Refusal::NotEmpty(block),
            refuse::ALREADY_BOUND => Refusal::AlreadyBound(block),
            refuse::NOT_BOUND => Refusal::NotBound(block),
            refuse::METADATA_WRITABLE => Refusal::MetadataWritable(block),
            refuse::BUSY => Refusal::Busy(block),
            refuse::BAD_FS => Refusal::BadFs,
            refuse::WILL_FREE => Refusal::WillFree(block),
            refuse::TAINTED => Refusal::Tainted(block),
            _ => Refusal::NoMemory,
        },
        XnError::Rejected { .. } => Refusal::BadFs,
        XnError::Sys(_) => Refusal::NoMemory,
    }
}

/// The record and extent slot of `img` whose extent ends at `end` and
/// covers `start..end` (the blocks one allocation adds or one free takes).
fn tail_slot(img: &Block, start: u64, end: u64) -> Option<(usize, usize, Record)> {
    (0..RECORDS).find_map(|r| {
        let rec = record(img, r);
        let e = rec.ext.iter().position(|x| {
            let (s, l) = (u64::from(x.start), u64::from(x.len));
            l > 0 && s <= start && s + l == end
        })?;
        Some((r, e, rec))
    })
}

impl XnDisk {
    /// The disk of file system `fs` (registered with the C-FFS templates),
    /// or `None` without a disk.
    pub fn new(fs: u32) -> Option<XnDisk> {
        let h = super::header()?;
        Some(XnDisk {
            fs,
            nblocks: h.nblocks,
            pages: Bindings::new(WINDOW, window_pages()),
            dirty: BlockSet::new(),
            tainted: BlockSet::new(),
            data: BlockSet::new(),
            written: Vec::new(),
            fetched: BlockSet::new(),
            pending: 0,
            held: Held::new(),
            requests: 0,
        })
    }

    /// Blocks this disk keeps bound at once at most (its window of cache
    /// pages) before it lets clean ones go.
    pub fn window(&self) -> u64 {
        self.pages.capacity()
    }

    /// The C-FFS file system already on the disk: the one whose
    /// superblock is a catalogued root; `None` if there is none.
    pub fn existing() -> Option<u32> {
        let n = super::header()?.roots as usize;
        (0..n.min(oxok_abi::xn::MAX_ROOTS))
            .filter_map(super::root_row)
            .find(|r| r.block == SUPER_BLOCK && r.ty == T_SUPER)
            .map(|r| r.fs)
    }

    /// Registers the C-FFS templates: a new file system's number.
    pub fn register() -> Result<u32, XnError> {
        let t = oxok_cffs::templates::templates();
        super::register(&[&t[0], &t[1], &t[2]])
    }

    /// The file system's number.
    pub fn fs(&self) -> u32 {
        self.fs
    }

    /// Lets the metadata changes made from now on wait on this side
    /// (`oxok_cffs::held`), or not: for a file made whose first write
    /// follows, so that the write's allocation takes the change along.
    pub fn hold_changes(&mut self, on: bool) {
        self.held.allow(on);
    }

    /// A request of the file system's server ended: a change held since
    /// the request before goes to the kernel now.
    pub fn end_request(&mut self) -> Result<(), Refusal> {
        match self.held.aged() {
            true => self.release(),
            false => Ok(()),
        }
    }

    /// Sends the held change, if any, as the `xn_modify` or `xn_free` it
    /// stands for; one that fails stays held.
    fn release(&mut self) -> Result<(), Refusal> {
        let Some((block, image, freed)) = self.held.take() else { return Ok(()) };
        let sent = match (<&Block>::try_from(image.as_slice()), freed) {
            (Ok(new), None) => self.cached(|| super::modify(block, new)),
            (Ok(new), Some(f)) => self.cached(|| super::free(block, new, f.start, f.len)),
            (Err(_), _) => Err(Refusal::NoMemory),
        };
        self.held.put_back(sent.is_err().then_some(block), image);
        sent
    }

    /// What a `modify`, `edit` or `free` of `meta` does first: the
    /// requests issued so far complete, the bookkeeping has room for
    /// `meta`, and a change held of another block goes (one block held at
    /// a time).
    fn begin_change(&mut self, meta: u64) -> Result<(), Refusal> {
        self.settle()?;
        self.dirty.reserve(meta + 1)?;
        if self.held.block().is_some_and(|b| b != meta) {
            self.release()?;
        }
        Ok(())
    }

    /// A change of `meta` that is not held goes with an image made from
    /// the held one: a held modify goes along with it, a held free (whose
    /// blocks the image no longer owns) must go first.
    fn release_free_of(&mut self, meta: u64) -> Result<(), Refusal> {
        match self.held.block() == Some(meta) && self.held.freed().is_some() {
            true => self.release(),
            false => Ok(()),
        }
    }

    /// XN free of `ext` from `meta` (now `new`), in as many calls as it
    /// takes: a large file's tail or whole extent shrinks from its end in
    /// steps, each image the old one with the extent cut where the step
    /// begins.
    fn free_now(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal> {
        let mut end = ext.start + ext.len;
        if ext.len > MAX_EXTENT_CALL {
            let mut step = [0u8; oxok_abi::xn::BLOCK_SIZE];
            self.read(meta, &mut step)?;
            let (r, e, mut rec) = tail_slot(&step, ext.start, end).ok_or(Refusal::OwnsMismatch(meta))?;
            let first = u64::from(rec.ext[e].start);
            while end - ext.start > MAX_EXTENT_CALL {
                let from = end - MAX_EXTENT_CALL;
                rec.ext[e].len = (from - first) as u16;
                set_record(&mut step, r, &rec);
                self.cached(|| super::free(meta, &step, from, MAX_EXTENT_CALL))?;
                end = from;
            }
        }
        self.cached(|| super::free(meta, new, ext.start, end - ext.start))?;
        self.held.absorbed(meta);
        Ok(())
    }

    /// Copies `bytes` to byte `at` of data `block`, bound writable (the
    /// rights check happens at the bind), and marks the block dirty.
    fn write_at(&mut self, block: u64, at: usize, bytes: &[u8]) -> Result<(), Refusal> {
        self.settle()?;
        // Room first: once the bytes are in, the block must be known dirty.
        self.dirty.reserve(block + 1)?;
        self.data.reserve(block + 1)?;
        self.bind(block, true)?;
        let to = self.pages.held_mut(block).ok_or(Refusal::NotBound(block))?;
        to.get_mut(at..at + bytes.len()).ok_or(Refusal::NotBound(block))?.copy_from_slice(bytes);
        self.dirty.insert(block)?;
        self.data.insert(block)?;
        Ok(())
    }

    /// Waits for the requests issued so far.
    fn settle(&mut self) -> Result<(), Refusal> {
        let p = core::mem::replace(&mut self.pending, 0);
        super::wait(p).map_err(refusal)
    }

    /// Issues a write of data block `block` with `submit` (`xn_write`, or
    /// `xn_write_from` for a copy), waiting while it cannot go now
    /// ([`wait_to_issue`](Self::wait_to_issue)); then records it.
    fn issue_write(&mut self, block: u64, submit: impl Fn() -> Result<u64, XnError>) -> Result<(), Refusal> {
        let seq = loop {
            match submit() {
                Ok(seq) => break seq,
                Err(e) => self.wait_to_issue(e)?,
            }
        };
        self.issued(block, seq);
        Ok(())
    }

    /// Issues the writes of `items` (each writes the block `block_of`
    /// names) with `submit`, a batch call that starts as many as can go
    /// now (at least one) and says how many and the last one's sequence
    /// number, waiting while none can go now
    /// ([`wait_to_issue`](Self::wait_to_issue)): how many were issued, and
    /// the refusal of the first that could not be.
    fn issue_batches<T>(
        &mut self,
        items: &[T],
        block_of: impl Fn(&T) -> u64,
        submit: impl Fn(&[T]) -> Result<(usize, u64), XnError>,
    ) -> (usize, Result<(), Refusal>) {
        let mut done = 0;
        while done < items.len() {
            match submit(&items[done..]) {
                Ok((n, seq)) => {
                    let n = n.clamp(1, items.len() - done);
                    for item in &items[done..done + n] {
                        self.issued(block_of(item), seq);
                    }
                    done += n;
                }
                // Busy now: wait and go on; else this item's refusal.
                Err(e) => {
                    if let Err(r) = self.wait_to_issue(e) {
                        return (done, Err(r));
                    }
                }
            }
        }
        (done, Ok(()))
    }

    /// Waits for what was issued when a write could not go because every
    /// request slot is taken or the block's last write is still going;
    /// any other error is the write's.
    fn wait_to_issue(&mut self, e: XnError) -> Result<(), Refusal> {
        match e {
            // Every request slot taken: wait for the oldest few, so the
            // device keeps the rest while this one goes in. (Never past
            // this writer's last request, which completes.)
            XnError::Sys(Error::WouldBlock) if self.pending != 0 => {
                let oldest = super::header().map_or(self.pending, |h| h.oldest_pending);
                super::wait(oldest.saturating_add(REFILL - 1).min(self.pending)).map_err(refusal)
            }
            XnError::Refused { code: refuse::IN_FLIGHT, .. } if self.pending != 0 => self.settle(),
            e => Err(refusal(e)),
        }
    }

    /// Records the write of `block` issued as request `seq`: the block is
    /// clean, and written if it was tainted.
    fn issued(&mut self, block: u64, seq: u64) {
        self.requests += 1;
        self.pending = self.pending.max(seq);
        self.dirty.remove(block);
        if self.tainted.contains(block) {
            self.written.push(block);
        }
    }

    /// Binds `block` (writable when `write`): its address. Clean blocks
    /// are let go when the window is full, and metadata above it that was
    /// let go (whose `acl` decides about it) is read in again.
    fn bind(&mut self, block: u64, write: bool) -> Result<u64, Refusal> {
        for _ in 0..MAX_DEPTH {
            // Its address only: the caller claims the page as it reads
            // or writes it (one claim per access, not two).
            match self.pages.ensure(block, write) {
                Ok(va) => return Ok(va),
                Err(XnError::Sys(Error::NoMemory)) if !self.pages.is_empty() => self.make_room()?,
                Err(XnError::Refused { code: refuse::NOT_BOUND, block: above, .. }) if above != block => {
                    self.requests += 1;
                    super::read(above).map_err(refusal)?;
                }
                Err(e) => return Err(refusal(e)),
            }
        }
        Err(Refusal::NotBound(block))
    }

    /// Unbinds and evicts the blocks that hold nothing unwritten (their
    /// frames go back; a later read brings them in from the disk): how
    /// many.
    fn shed(&mut self) -> usize {
        let mut shed = 0;
        for b in self.pages.blocks() {
            if !self.dirty.contains(b) && !self.tainted.contains(b) {
                self.pages.forget(b);
                self.fetched.remove(b);
                let _ = super::evict(b);
                shed += 1;
            }
        }
        shed
    }

    /// Runs a metadata change, first reading back into the cache (at most
    /// [`MAX_DEPTH`] times) a block XN needs that was let go ([`shed`]):
    /// the changed block or metadata above it. Only clean blocks are let
    /// go, so what comes back from the disk is what the cache held.
    ///
    /// [`shed`]: XnDisk::shed
    fn cached(&mut self, call: impl Fn() -> Result<(), XnError>) -> Result<(), Refusal> {
        for _ in 0..MAX_DEPTH {
            match call() {
                Err(XnError::Refused { code: refuse::NOT_BOUND, block, .. }) => {
                    self.requests += 1;
                    super::read(block).map_err(refusal)?;
                }
                r => return r.map_err(refusal),
            }
        }
        call().map_err(refusal)
    }

    /// Frees window pages for a bind: lets go of clean blocks; when every
    /// bound block still holds something unwritten (a file larger than the
    /// window, written in one go), writes the file data among them back,
    /// flushes so the newly allocated ones are durable (untainted), and
    /// lets them go. Metadata stays bound until the file system writes it
    /// in its own order.
    fn make_room(&mut self) -> Result<(), Refusal> {
        if self.shed() > 0 {
            return Ok(());
        }
        let unwritten: Vec<u64> =
            self.pages.blocks().into_iter().filter(|&b| self.data.contains(b) && self.dirty.contains(b)).collect();
        for b in unwritten {
            self.write(b)?;
        }
        self.flush()?;
        match self.shed() {
            0 => Err(Refusal::NoMemory),
            _ => Ok(()),
        }
    }
}

impl Disk for XnDisk {
    fn nblocks(&self) -> u64 {
        self.nblocks
    }

    fn is_free(&self, block: u64) -> bool {
        // The exposed map's last word has bits past the disk's end, clear:
        // they are no blocks (a file grown to the end once asked XN for an
        // empty extent after the last block, and a full disk said
        // `Invalid`, not `NoSpace`).
        block < self.nblocks && super::is_free(block).unwrap_or(false)
    }

    fn next_free(&self, from: u64, end: u64) -> u64 {
        // A word of the exposed map at a time (past the disk's end: none).
        let limit = end.min(self.nblocks);
        match oxok_cffs::next_free_by_words(from, limit, super::free_word) {
            b if b < limit => b,
            _ => end,
        }
    }

    fn is_tainted(&self, block: u64) -> bool {
        self.tainted.contains(block)
    }

    fn read(&mut self, block: u64, out: &mut Block) -> Result<(), Refusal> {
        if let Some(held) = self.held.image(block) {
            out.copy_from_slice(held);
            return Ok(());
        }
        self.bind(block, false)?;
        out.copy_from_slice(self.pages.held(block).ok_or(Refusal::NotBound(block))?);
        Ok(())
    }

    fn view<R>(&mut self, block: u64, look: impl FnOnce(&Block) -> R) -> Result<R, Refusal> {
        if let Some(held) = self.held.image(block) {
            return Ok(look(held));
        }
        self.bind(block, false)?;
        Ok(look(self.pages.held(block).ok_or(Refusal::NotBound(block))?))
    }

    fn prefetch(&mut self, blocks: &[u64]) -> Result<(), Refusal> {
        // A bound or fetched block is cached: asking again costs a call.
        let missing: Vec<u64> = blocks.iter().copied().filter(|&b| !self.is_cached(b)).collect();
        self.requests += missing.len() as u64;
        self.fetched.reserve(missing.iter().max().map_or(0, |&b| b + 1))?;
        super::prefetch(&missing).map_err(refusal)?;
        for b in missing {
            self.fetched.insert(b)?;
        }
        Ok(())
    }

    fn is_cached(&self, block: u64) -> bool {
        // Bound or fetched blocks are cached (only this side lets its
        // blocks go); for the rest a look at the exposed registry would
        // cost a scan, so say no: a prefetch then asks.
        self.pages.contains(block) || self.fetched.contains(block)
    }

    fn write_data(&mut self, block: u64, data: &Block) -> Result<(), Refusal> {
        self.write_at(block, 0, data)
    }

    /// The block was allocated and never written: XN caches it, at the
    /// bind, as a zeroed frame, so only the piece is copied.
    fn write_fresh(&mut self, block: u64, at: usize, piece: &[u8]) -> Result<(), Refusal> {
        self.write_at(block, at, piece)
    }

    fn alloc(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal> {
        self.settle()?;
        // More than one call takes: the extent grows to its end in steps,
        // each image `new` with the extent cut where the step ends.
        let (mut at, end) = (ext.start, ext.start + ext.len);
        // The bookkeeping has room for what XN will have done.
        self.dirty.reserve(end.max(meta + 1))?;
        self.tainted.reserve(end)?;
        self.release_free_of(meta)?;
        if ext.len > MAX_EXTENT_CALL {
            let (r, e, mut rec) = tail_slot(new, ext.start, end).ok_or(Refusal::OwnsMismatch(meta))?;
            let first = u64::from(rec.ext[e].start);
            let mut step = *new;
            while end - at > MAX_EXTENT_CALL {
                rec.ext[e].len = (at + MAX_EXTENT_CALL - first) as u16;
                set_record(&mut step, r, &rec);
                self.cached(|| super::alloc(meta, &step, at, MAX_EXTENT_CALL, ext.ty))?;
                at += MAX_EXTENT_CALL;
            }
        }
        self.cached(|| super::alloc(meta, new, at, end - at, ext.ty))?;
        // `new` was built from what this side sees: the held change too.
        self.held.absorbed(meta);
        for b in ext.blocks() {
            self.dirty.insert(b)?;
            self.tainted.insert(b)?;
        }
        self.dirty.insert(meta)?;
        Ok(())
    }

    fn free(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal> {
        // A held free of this block that this one does not meet goes first
        // too (below).
        self.begin_change(meta)?;
        // Only blocks already durable wait: XN keeps those on its
        // will-free list until a durable write of `meta` anyway (which
        // sends the held free first), where a block never made durable
        // would be free at once.
        let durable = ext.blocks().all(|b| !self.tainted.contains(b));
        if !(durable && self.held.hold_free(meta, new, ext)) {
            self.release_free_of(meta)?;
            if !(durable && self.held.hold_free(meta, new, ext)) {
                self.free_now(meta, new, ext)?;
            }
        }
        for b in ext.blocks() {
            self.pages.forget(b);
            self.fetched.remove(b);
            self.dirty.remove(b);
            self.tainted.remove(b);
            self.data.remove(b);
        }
        self.dirty.insert(meta)?;
        Ok(())
    }

    fn modify(&mut self, meta: u64, new: &Block) -> Result<(), Refusal> {
        self.begin_change(meta)?;
        if !self.held.hold(meta, new) {
            self.release_free_of(meta)?;
            self.cached(|| super::modify(meta, new))?;
            self.held.absorbed(meta);
        }
        self.dirty.insert(meta)?;
        Ok(())
    }

    fn edit(&mut self, meta: u64, edit: impl FnOnce(&mut Block)) -> Result<(), Refusal> {
        self.begin_change(meta)?;
        // The held image changed in place; or, nothing held, the cached
        // block copied into it once and changed there.
        let fill = match self.held.block() {
            Some(_) => false,
            None => {
                self.bind(meta, false)?;
                true
            }
        };
        let fill = if fill { Some(self.pages.held(meta).ok_or(Refusal::NotBound(meta))?) } else { None };
        if let Some(image) = self.held.edit(meta, fill) {
            edit(image);
            self.dirty.insert(meta)?;
            return Ok(());
        }
        let mut b = [0; oxok_abi::xn::BLOCK_SIZE];
        self.read(meta, &mut b)?;
        edit(&mut b);
        self.modify(meta, &b)
    }

    fn dirty(&self, out: &mut Vec<u64>) {
        out.extend(self.dirty.iter());
    }

    fn write(&mut self, block: u64) -> Result<(), Refusal> {
        self.write_all(&[block]).1
    }

    fn write_all(&mut self, blocks: &[u64]) -> (usize, Result<(), Refusal>) {
        // What goes to the disk is the kernel's copy: the held change first.
        if self.held.block().is_some_and(|h| blocks.contains(&h))
            && let Err(e) = self.release()
        {
            return (0, Err(e));
        }
        self.issue_batches(blocks, |&b| b, super::write_batch)
    }

    fn copy(&mut self, block: u64, src: u64) -> Result<(), Refusal> {
        // The destination's frame leaves the cache: unbind it first.
        self.pages.forget(block);
        self.fetched.remove(block);
        self.issue_write(block, || super::write_from(block, src))
    }

    fn copy_all(&mut self, pairs: &[[u64; 2]]) -> Result<(), Refusal> {
        for &[block, _] in pairs {
            self.pages.forget(block);
            self.fetched.remove(block);
        }
        self.issue_batches(pairs, |&[block, _]| block, super::write_from_batch).1
    }

    fn uncache(&mut self, blocks: &[u64]) -> Result<(), Refusal> {
        // Copies in flight pin their sources until they complete.
        self.settle()?;
        let mut clean = Vec::new();
        clean.try_reserve(blocks.len()).map_err(|_| Refusal::NoMemory)?;
        for &b in blocks.iter().filter(|&&b| !self.dirty.contains(b) && !self.tainted.contains(b)) {
            self.pages.forget(b);
            self.fetched.remove(b);
            clean.push(b);
        }
        // What cannot go now stays (as one `evict` refused would).
        let mut rest = &clean[..];
        while !rest.is_empty() {
            let (looked, _) = super::evict_batch(rest).map_err(refusal)?;
            rest = &rest[looked.clamp(1, rest.len())..];
        }
        Ok(())
    }

    fn add_root(&mut self, block: u64, ty: u32, content: &Block) -> Result<(), Refusal> {
        self.settle()?;
        self.dirty.reserve(block + 1)?;
        self.tainted.reserve(block + 1)?;
        super::root(self.fs, block, ty, content).map_err(refusal)?;
        self.dirty.insert(block)?;
        self.tainted.insert(block)?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Refusal> {
        self.settle()?;
        let seq = super::flush().map_err(refusal)?;
        self.requests += 1;
        super::wait(seq).map_err(refusal)?;
        for b in self.written.drain(..) {
            self.tainted.remove(b);
        }
        Ok(())
    }
}
