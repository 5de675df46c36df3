//! XN's catalogue: what recovery needs at boot — the registered file
//! systems' templates and the roots — in the first disk blocks.
//!
//! Disk block 0 is the header: the magic, the number of file systems and
//! of roots, then per file system (at 64 + 8·i) its template count and byte
//! length (`u32`s), then the roots (at 256 + 16·j: block `u64`, file system
//! `u32`, template `u32`). File system `i`'s templates, back to back, are
//! in disk blocks `1 + 4i ..= 4 + 4i`.
//!
//! Ordering: a file system's template blocks are written at registration
//! and the header names it only after a flush that followed their
//! completion; a root enters the header only once it is no longer tainted
//! (written and flushed). Each header write is followed by a flush, so the
//! header on disk never names anything not durable.

use super::{Req, XnState};
use crate::dev::virtio_blk::Op;
use alloc::vec::Vec;
use core::cell::Cell;
use oxok_abi::Error;
use oxok_abi::xn::{BLOCK_SIZE, CATALOG_FS_BLOCKS, MAX_FS, MAX_ROOTS};
use oxok_xn::{Frame, FsId, Root};

/// First bytes of a catalogue header.
pub const MAGIC: [u8; 8] = *b"OXKXNCT1";
const FS_ROWS: usize = 64;
const ROOT_ROWS: usize = 256;
const _: () = assert!(ROOT_ROWS + MAX_ROOTS * 16 <= BLOCK_SIZE && FS_ROWS + MAX_FS * 8 <= ROOT_ROWS);

/// Where a file system's templates are on their way to the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FsState {
    /// Template block writes outstanding.
    Writing(u32),
    /// Written; durable once a flush numbered above this completes.
    Written(u64),
    /// Durable.
    Durable,
}

/// One registered file system.
#[derive(Clone, Copy, Debug)]
pub struct FsRow {
    /// Templates.
    pub count: u32,
    /// Bytes of templates.
    pub len: u32,
    state: FsState,
}

/// The catalogue as the kernel keeps it.
pub struct Catalog {
    /// The header's frame (a cache frame, never given to XN).
    pub header: Frame,
    /// File systems by id.
    pub fss: Vec<FsRow>,
    /// The (file systems, roots) the last header write carried.
    last: (usize, usize),
    /// A header write is in flight.
    writing: bool,
    /// The flush after a header write: waiting to submit or in flight.
    flush_wanted: bool,
    flush_in_flight: bool,
    /// The last count of durable roots and what it holds for: the number
    /// of roots, of file systems and the durable epoch then
    /// ([`oxok_xn::Xn::durable_epoch`]); every publish asks.
    durable_roots_seen: Cell<Option<([u64; 3], usize)>>,
}

impl Catalog {
    /// An empty catalogue with its header frame.
    pub fn new(header: Frame) -> Catalog {
        Catalog {
            header,
            fss: Vec::new(),
            last: (0, 0),
            writing: false,
            flush_wanted: false,
            flush_in_flight: false,
            durable_roots_seen: Cell::new(None),
        }
    }

    /// The file systems and roots recovered from the disk (all durable).
    pub fn recovered(&mut self, fss: Vec<(u32, u32)>, roots: usize) {
        self.fss = fss.into_iter().map(|(count, len)| FsRow { count, len, state: FsState::Durable }).collect();
        self.last = (self.fss.len(), roots);
        self.durable_roots_seen.set(None);
    }

    /// A write of file system `fs`'s templates (or of the header, for
    /// `u32::MAX`) completed; `flushes` have been submitted so far.
    pub fn written(&mut self, fs: u32, ok: bool, flushes: u64) {
        if fs == u32::MAX {
            self.writing = false;
            self.flush_wanted = ok;
            if !ok {
                self.last = (usize::MAX, usize::MAX);
            }
            return;
        }
        if let Some(row) = self.fss.get_mut(fs as usize) {
            row.state = match row.state {
                FsState::Writing(left) if !ok => FsState::Writing(left.saturating_sub(1).max(1)),
                FsState::Writing(1) => FsState::Written(flushes),
                FsState::Writing(left) => FsState::Writing(left - 1),
                s => s,
            };
        }
    }

    /// Flush number `k` completed.
    pub fn flushed(&mut self, k: u64) {
        for row in &mut self.fss {
            if let FsState::Written(after) = row.state
                && k > after
            {
                row.state = FsState::Durable;
            }
        }
    }

    /// File systems the header may name: the durable ones, in order.
    fn durable_fss(&self) -> usize {
        self.fss.iter().take_while(|r| r.state == FsState::Durable).count()
    }
}

impl XnState {
    /// Prepares a file system's catalogue blocks: frames holding `bytes`
    /// (verified already), one per block, and room for its row. Nothing is
    /// registered yet; on failure nothing is kept.
    pub fn catalog_frames(&mut self, bytes: &[u8]) -> Result<Vec<Frame>, Error> {
        if self.cat.fss.len() >= MAX_FS {
            return Err(Error::NoMemory);
        }
        self.cat.fss.try_reserve(1).map_err(|_| Error::NoMemory)?;
        let mut frames = Vec::new();
        frames.try_reserve(CATALOG_FS_BLOCKS).map_err(|_| Error::NoMemory)?;
        // A frame refused on the way gives back the ones taken before it.
        let mut taken = self.mem.taking();
        for chunk in bytes.chunks(BLOCK_SIZE).take(CATALOG_FS_BLOCKS) {
            let frame = taken.alloc_kernel()?;
            let mut b = [0u8; BLOCK_SIZE];
            b[..chunk.len()].copy_from_slice(chunk);
            taken.mem().fill(frame, &b);
            frames.push(frame);
        }
        taken.keep();
        Ok(frames)
    }

    /// Records the file system XN just registered (its id is the next
    /// row) and writes its template blocks from `frames`
    /// ([`catalog_frames`](XnState::catalog_frames)); the header follows
    /// after a flush. A block that cannot be submitted counts as a failed
    /// write: the file system works but never enters the catalogue.
    pub fn catalog_add_fs(&mut self, count: u32, len: usize, frames: Vec<Frame>) {
        let fs = self.cat.fss.len();
        self.cat.fss.push(FsRow { count, len: len as u32, state: FsState::Writing(frames.len() as u32) });
        for (i, frame) in frames.into_iter().enumerate() {
            let disk_block = 1 + (fs * CATALOG_FS_BLOCKS + i) as u64;
            if let Err(e) = self.submit(Op::Write, disk_block, Some(frame), Req::Catalog { frame, fs: fs as u32 }) {
                log::warn!("xn: catalogue block {disk_block} not written: {e:?}");
                self.mem.release(frame);
            }
        }
    }

    /// The roots the header may name: those of durable file systems that
    /// are no longer tainted.
    fn durable_roots(&self, fss: usize) -> impl Iterator<Item = &Root> {
        self.xn.roots().iter().filter(move |r| (r.fs.0 as usize) < fss && !self.xn.is_tainted(r.block))
    }

    /// Whether anything registered is not yet durably in the catalogue.
    pub fn catalog_pending(&self) -> bool {
        let c = &self.cat;
        c.writing || c.flush_wanted || c.flush_in_flight || c.durable_fss() < c.fss.len() || {
            // Every file system is durable here, so one count serves
            // both tests.
            let n = self.durable_root_count(c.fss.len());
            n < self.xn.roots().len() || c.last != (c.durable_fss(), n)
        }
    }

    /// How many roots [`durable_roots`](Self::durable_roots) gives for
    /// `fss` file systems. Every publish asks: counted again only when a
    /// root came, a file system came or a flush completed (what taints or
    /// untaints a root), else the last count.
    fn durable_root_count(&self, fss: usize) -> usize {
        let key = [self.xn.roots().len() as u64, fss as u64, self.xn.durable_epoch()];
        match self.cat.durable_roots_seen.get() {
            Some((k, n)) if k == key => n,
            _ => {
                let n = self.durable_roots(fss).count();
                self.cat.durable_roots_seen.set(Some((key, n)));
                n
            }
        }
    }

    /// Moves the catalogue along: writes the header when it would name
    /// more than the last one did, then flushes.
    pub(super) fn catalog_step(&mut self) {
        if self.cat.flush_in_flight && !self.reqs.iter().any(|(_, r)| matches!(r, Req::CatalogFlush(..))) {
            self.cat.flush_in_flight = false;
        }
        if self.cat.flush_wanted && self.disk.has_room() && self.submit_flush(false).is_ok() {
            self.cat.flush_wanted = false;
            self.cat.flush_in_flight = true;
        }
        if self.cat.writing || !self.disk.has_room() {
            return;
        }
        let fss = self.cat.durable_fss();
        // Counted first: the common case (nothing new) allocates nothing.
        if (fss, self.durable_root_count(fss).min(MAX_ROOTS)) == self.cat.last {
            return;
        }
        let roots: Vec<Root> = self.durable_roots(fss).take(MAX_ROOTS).copied().collect();
        let mut h = [0u8; BLOCK_SIZE];
        h[..8].copy_from_slice(&MAGIC);
        h[8..16].copy_from_slice(&(fss as u64).to_le_bytes());
        h[16..24].copy_from_slice(&(roots.len() as u64).to_le_bytes());
        for (i, row) in self.cat.fss.iter().take(fss).enumerate() {
            let at = FS_ROWS + i * 8;
            h[at..at + 4].copy_from_slice(&row.count.to_le_bytes());
            h[at + 4..at + 8].copy_from_slice(&row.len.to_le_bytes());
        }
        for (j, r) in roots.iter().enumerate() {
            let at = ROOT_ROWS + j * 16;
            h[at..at + 8].copy_from_slice(&r.block.to_le_bytes());
            h[at + 8..at + 12].copy_from_slice(&r.fs.0.to_le_bytes());
            h[at + 12..at + 16].copy_from_slice(&r.ty.to_le_bytes());
        }
        let frame = self.cat.header;
        self.mem.fill(frame, &h);
        if self.submit(Op::Write, 0, Some(frame), Req::Catalog { frame, fs: u32::MAX }).is_ok() {
            self.cat.writing = true;
            self.cat.last = (fss, roots.len());
        }
    }
}

/// A decoded header: (count, bytes) per file system, and the roots.
pub struct Header {
    /// File systems.
    pub fss: Vec<(u32, u32)>,
    /// Roots.
    pub roots: Vec<Root>,
}

/// Decodes a header block; `None` for a disk never used by XN (or a
/// header that does not parse: the disk is then treated as fresh).
pub fn decode(h: &[u8; BLOCK_SIZE]) -> Option<Header> {
    if h[..8] != MAGIC {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| u32::from_le_bytes(h[at..at + 4].try_into().unwrap_or([0; 4]));
    let (nfs, nroots) = (word(8) as usize, word(16) as usize);
    if nfs > MAX_FS || nroots > MAX_ROOTS {
        return None;
    }
    let mut fss = Vec::new();
    for i in 0..nfs {
        let at = FS_ROWS + i * 8;
        fss.push((half(at), half(at + 4)));
    }
    let mut roots = Vec::new();
    for j in 0..nroots {
        let at = ROOT_ROWS + j * 16;
        if half(at + 8) as usize >= nfs {
            return None;
        }
        roots.push(Root { block: word(at), fs: FsId(half(at + 8)), ty: half(at + 12) });
    }
    Some(Header { fss, roots })
}
