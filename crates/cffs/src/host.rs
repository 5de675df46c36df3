//! [`MemDisk`]: the host's [`Disk`] — the real XN checker (`oxok_xn::Xn`)
//! over an in-memory disk image, one cache frame per block. It records
//! every block write, flush and allocation when asked ([`Event`]), which is
//! what the crash harness replays.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

use oxok_abi::xn::{BLOCK_SIZE, DATA, rights};
use oxok_xn::{Extent, Frame, Frames, FsId, Refusal, Report, Root, Xn};

use crate::disk::Disk;
use crate::layout::{Block, SUPER_BLOCK, T_SUPER};
use crate::templates::templates;

/// One recorded disk event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A block write reached the disk's volatile cache.
    Write {
        /// Block.
        block: u64,
        /// Content.
        data: Box<Block>,
    },
    /// A flush completed.
    Flush,
    /// XN allocated these blocks (in core).
    Alloc {
        /// First block.
        start: u64,
        /// Blocks.
        len: u64,
    },
}

/// Cache frames: frame number = block number.
#[derive(Clone, Debug, Default)]
struct Cache(BTreeMap<Frame, Box<Block>>);

impl Cache {
    /// The frame caching `block` (its number is the block's).
    fn frame(block: u64) -> Frame {
        Frame::from_word(block)
    }
}

impl Frames for Cache {
    fn read(&self, f: Frame) -> Option<&Block> {
        self.0.get(&f).map(|b| &**b)
    }
    fn write(&mut self, f: Frame) -> Option<&mut Block> {
        self.0.get_mut(&f).map(|b| &mut **b)
    }
}

/// XN plus an in-memory disk.
#[derive(Clone, Debug)]
pub struct MemDisk {
    xn: Xn,
    fs: FsId,
    creds: [u64; 1],
    cache: Cache,
    image: Vec<Block>,
    dirty: BTreeSet<u64>,
    log: Option<Vec<Event>>,
    /// Blocks read or looked at through the cache, ever ([`MemDisk::reads`]).
    reads: u64,
    /// Metadata changes XN took, ever ([`MemDisk::changes`]).
    changes: u64,
}

/// The XN state for a disk of `n` blocks with the file system registered.
fn fresh_xn(n: u64) -> Result<(Xn, FsId), Refusal> {
    let mut xn = Xn::new(n)?;
    let t = templates();
    let fs = xn.register_fs(&[&t[0], &t[1], &t[2]]).map_err(|_| Refusal::BadFs)?;
    Ok((xn, fs))
}

impl MemDisk {
    /// A blank disk of `nblocks` blocks filled with `fill` (so unwritten
    /// blocks are recognisable garbage), nothing allocated; `owner` is the
    /// caller's principal.
    pub fn blank(nblocks: u64, owner: u64, fill: u8) -> Result<MemDisk, Refusal> {
        let (xn, fs) = fresh_xn(nblocks)?;
        let n = usize::try_from(nblocks).map_err(|_| Refusal::NoMemory)?;
        Ok(MemDisk {
            xn,
            fs,
            creds: [owner],
            cache: Cache::default(),
            image: vec![[fill; BLOCK_SIZE]; n],
            dirty: BTreeSet::new(),
            log: None,
            reads: 0,
            changes: 0,
        })
    }

    /// Opens an image as at boot: XN recovery from the superblock root.
    pub fn open(image: Vec<Block>, owner: u64) -> Result<(MemDisk, Report), Refusal> {
        let (mut xn, fs) = fresh_xn(image.len() as u64)?;
        let root = Root { fs, block: SUPER_BLOCK, ty: T_SUPER };
        let mut buf = [0; BLOCK_SIZE];
        let report = xn.recover(&[root], &mut buf, &mut |b, out| match image.get(b as usize) {
            Some(x) => {
                out.copy_from_slice(x);
                true
            }
            None => false,
        })?;
        let d = MemDisk {
            xn,
            fs,
            creds: [owner],
            cache: Cache::default(),
            image,
            dirty: BTreeSet::new(),
            log: None,
            reads: 0,
            changes: 0,
        };
        Ok((d, report))
    }

    /// Starts recording events (clears any earlier record).
    pub fn record(&mut self) {
        self.log = Some(Vec::new());
    }

    /// The recorded events.
    pub fn events(&self) -> &[Event] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// Events recorded so far.
    pub fn event_count(&self) -> usize {
        self.events().len()
    }

    /// How many times a block was read or looked at through the cache.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// How many metadata changes (allocations, frees, modifications) XN
    /// took: the checked calls a kernel would have had.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The disk content (what has been written, durable or not).
    pub fn image(&self) -> &[Block] {
        &self.image
    }

    /// The XN state.
    pub fn xn(&self) -> &Xn {
        &self.xn
    }

    /// The registered file system.
    pub fn fs_id(&self) -> FsId {
        self.fs
    }

    /// Caches `block` and the metadata above it (whose `acl` decides
    /// about it) from the disk, as the kernel's read-and-insert does; a
    /// data block never written as zeros, as the kernel's
    /// `fill_unwritten` (its disk bytes are a former owner's).
    fn fill(&mut self, block: u64) -> Result<(), Refusal> {
        let mut b = Some(block);
        while let Some(x) = b {
            let view = self.xn.block(x).ok_or(Refusal::NotAllocated(x))?;
            if self.xn.unwritten(x) {
                self.xn.insert(x, Cache::frame(x))?;
                self.cache.0.insert(Cache::frame(x), Box::new([0; BLOCK_SIZE]));
            } else if view.frame.is_none() {
                let content = *self.image.get(x as usize).ok_or(Refusal::OutOfRange(x))?;
                self.xn.insert_read(x, Cache::frame(x))?;
                self.cache.0.insert(Cache::frame(x), Box::new(content));
            }
            b = view.parent;
        }
        Ok(())
    }

    fn note(&mut self, e: Event) {
        if let Some(l) = self.log.as_mut() {
            l.push(e);
        }
    }
}

impl Disk for MemDisk {
    fn nblocks(&self) -> u64 {
        self.image.len() as u64
    }

    fn is_free(&self, block: u64) -> bool {
        self.xn.free_map().is_free(block)
    }

    fn is_tainted(&self, block: u64) -> bool {
        self.xn.is_tainted(block)
    }

    fn read(&mut self, block: u64, out: &mut Block) -> Result<(), Refusal> {
        self.reads += 1;
        self.fill(block)?;
        let frame = self.xn.bind(&self.cache, &self.creds, block, rights::READ)?;
        out.copy_from_slice(self.cache.read(frame).ok_or(Refusal::NotBound(block))?);
        Ok(())
    }

    fn prefetch(&mut self, blocks: &[u64]) -> Result<(), Refusal> {
        blocks.iter().try_for_each(|&b| self.fill(b))
    }

    fn is_cached(&self, block: u64) -> bool {
        self.xn.block(block).is_some_and(|v| v.frame.is_some())
    }

    fn write_data(&mut self, block: u64, data: &Block) -> Result<(), Refusal> {
        let mut scratch = [0; BLOCK_SIZE];
        self.read(block, &mut scratch)?;
        let frame = self.xn.bind(&self.cache, &self.creds, block, rights::READ | rights::WRITE)?;
        self.cache.write(frame).ok_or(Refusal::NotBound(block))?.copy_from_slice(data);
        self.xn.mark_dirty(block);
        self.dirty.insert(block);
        Ok(())
    }

    fn alloc(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal> {
        self.fill(meta)?;
        self.xn.allocate(&mut self.cache, &self.creds, meta, new, ext)?;
        self.changes += 1;
        for b in ext.blocks() {
            // As the kernel: metadata cached at once, data when first used.
            if ext.ty != DATA {
                self.cache.0.insert(Cache::frame(b), Box::new([0; BLOCK_SIZE]));
                self.xn.insert(b, Cache::frame(b))?;
            }
            self.dirty.insert(b);
        }
        self.dirty.insert(meta);
        self.note(Event::Alloc { start: ext.start, len: ext.len });
        Ok(())
    }

    fn free(&mut self, meta: u64, new: &Block, ext: Extent) -> Result<(), Refusal> {
        self.fill(meta)?;
        let mut released = Vec::new();
        self.xn.free(&mut self.cache, &self.creds, meta, new, ext, &mut |_, f| released.push(f))?;
        self.changes += 1;
        for b in ext.blocks() {
            self.dirty.remove(&b);
        }
        for f in released {
            self.cache.0.remove(&f);
        }
        self.dirty.insert(meta);
        Ok(())
    }

    fn modify(&mut self, meta: u64, new: &Block) -> Result<(), Refusal> {
        self.fill(meta)?;
        self.xn.modify(&mut self.cache, &self.creds, meta, new)?;
        self.changes += 1;
        self.dirty.insert(meta);
        Ok(())
    }

    fn dirty(&self, out: &mut Vec<u64>) {
        out.extend(self.dirty.iter().copied());
    }

    fn write(&mut self, block: u64) -> Result<(), Refusal> {
        if self.xn.unwritten(block) {
            self.fill(block)?;
        }
        let t = self.xn.write_begin(&self.cache, block)?;
        let data = *self.cache.read(Cache::frame(block)).ok_or(Refusal::NotBound(block))?;
        if let Some(slot) = self.image.get_mut(block as usize) {
            *slot = data;
        }
        self.note(Event::Write { block, data: Box::new(data) });
        self.xn.write_done(t);
        self.dirty.remove(&block);
        Ok(())
    }

    fn copy(&mut self, block: u64, src: u64) -> Result<(), Refusal> {
        let c = self.xn.copy_begin(&self.cache, &self.creds, block, src)?;
        let data = *self.cache.read(c.from).ok_or(Refusal::NotBound(src))?;
        if let Some(f) = c.dropped {
            self.cache.0.remove(&f);
        }
        if let Some(slot) = self.image.get_mut(block as usize) {
            *slot = data;
        }
        self.note(Event::Write { block, data: Box::new(data) });
        self.xn.copy_done(c.receipt, true);
        self.dirty.remove(&block);
        Ok(())
    }

    fn uncache(&mut self, blocks: &[u64]) -> Result<(), Refusal> {
        for &b in blocks.iter().filter(|b| !self.dirty.contains(b)) {
            if let Ok(f) = self.xn.evict(b) {
                self.cache.0.remove(&f);
            }
        }
        Ok(())
    }

    fn add_root(&mut self, block: u64, ty: u32, content: &Block) -> Result<(), Refusal> {
        let frame = Cache::frame(block);
        self.cache.0.insert(frame, Box::new([0; BLOCK_SIZE]));
        if let Err(e) = self.xn.add_root(&mut self.cache, self.fs, block, ty, frame, content) {
            self.cache.0.remove(&frame);
            return Err(e);
        }
        self.dirty.insert(block);
        self.note(Event::Alloc { start: block, len: 1 });
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Refusal> {
        let t = self.xn.flush_begin();
        self.note(Event::Flush);
        self.xn.flush_done(t);
        // A parent released now lets its children go on the next pass.
        while self.xn.reap(usize::MAX) > 0 {}
        Ok(())
    }
}
