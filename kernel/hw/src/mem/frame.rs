//! Physical frames: the allocator and the frame table.
//!
//! A bitmap says which frames are free; the frame table (one
//! [`FrameEntry`] per frame, layout in `abi`) records each frame's owner,
//! generation, mapping and reference counts. Beside them, kernel-private,
//! every environment's owned frames form a list (`oxok_ownlist`, one list
//! per environment-table row): a frame allocated for an environment joins
//! its list, and leaves it when it is freed or given another owner
//! ([`Frames::set_owner`]) — so "the frames row `r` owns" is always exactly
//! the frames whose owner word is an environment of row `r`. All of it lives
//! in frames carved out of RAM at boot, before the heap exists.

use super::addr::{Pfn, PhysAddr};
use super::{PAGE_SIZE, align_down, align_up, phys};
use crate::boot::{BootInfo, RegionKind};
use core::sync::atomic::{AtomicU32, Ordering};
use oxok_abi::env_id;
use oxok_abi::frames::{FrameEntry, OWNER_FIRST_ENV, OWNER_FREE, OWNER_KERNEL, OWNER_RESERVED, OWNER_RETIRED};
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_bitmap::Bitmap;
use oxok_ownlist::{Head, Link, Lists};
use spin::Mutex;

/// Highest physical memory we manage (64 GiB): bounds the table's size.
const MAX_PHYS: u64 = 64 << 30;
/// Frames below 1 MiB hold firmware structures; never hand them out.
const LOW_RESERVED: u64 = 1 << 20;

/// The allocator and table, behind one lock.
pub struct Frames {
    bitmap: Bitmap<'static>,
    table: &'static mut [FrameEntry],
    /// Each environment row's owned frames.
    owned: Lists<'static>,
    usable: usize,
    table_pa: u64,
    table_bytes: u64,
    retired: usize,
}

static FRAMES: Mutex<Option<Frames>> = Mutex::new(None);

/// A frame whose generation would reach this when freed is retired
/// instead (`OWNER_RETIRED`): generations never wrap.
static GEN_LIMIT: AtomicU32 = AtomicU32::new(u32::MAX);

/// Narrows the frame generation limit (the `frame_gen_limit=` test aid).
pub fn set_gen_limit(limit: u32) {
    GEN_LIMIT.store(limit.max(2), Ordering::Relaxed);
}

unsafe extern "C" {
    static __kernel_phys_start: u8;
    static __kernel_phys_end: u8;
}

/// Physical `[start, end)` of the kernel image.
pub fn kernel_image() -> (u64, u64) {
    // Linker-script symbols: only their addresses mean anything.
    ((&raw const __kernel_phys_start) as u64, (&raw const __kernel_phys_end) as u64)
}

/// Why the allocator could not be built.
#[derive(Debug)]
pub enum InitError {
    /// No RAM region can hold the bitmap and table.
    NoRoomForTables,
}

/// Builds the bitmap and the frame table from the boot memory map. Frames of
/// the kernel image, the boot modules and the tables themselves are marked
/// kernel-owned.
pub fn init(boot: &BootInfo) -> Result<(), InitError> {
    let ram_end =
        boot.regions().iter().filter(|r| r.kind == RegionKind::Ram).map(|r| r.end).max().unwrap_or(0).min(MAX_PHYS);
    let nframes = (ram_end / PAGE_SIZE) as usize;
    let words = Bitmap::words_needed(nframes);
    // The table comes first and page-aligned: it is mapped read-only into
    // every environment at `layout::FRAME_TABLE`.
    let table_bytes = align_up((nframes * size_of::<FrameEntry>()) as u64, PAGE_SIZE);
    let bitmap_bytes = align_up(words as u64 * 8, PAGE_SIZE);
    let links_bytes = align_up((nframes * size_of::<Link>()) as u64, PAGE_SIZE);
    let heads_bytes = align_up((ENV_TABLE_ROWS * size_of::<Head>()) as u64, PAGE_SIZE);
    let meta_bytes = table_bytes + bitmap_bytes + links_bytes + heads_bytes;
    let (kstart, kend) = kernel_image();

    // Things the metadata must not overlap.
    let mut busy: [(u64, u64); 1 + crate::boot::MAX_MODULES] = [(0, 0); 1 + crate::boot::MAX_MODULES];
    busy[0] = (kstart, align_up(kend, PAGE_SIZE));
    for (i, m) in boot.modules().iter().enumerate() {
        busy[i + 1] = (align_down(m.start, PAGE_SIZE), align_up(m.end, PAGE_SIZE));
    }
    let meta = find_room(boot, meta_bytes, &busy).ok_or(InitError::NoRoomForTables)?;

    // The range is RAM below 4 GiB (direct-mapped by the boot tables), clear of
    // the kernel and the modules, and reserved below before any allocation.
    // SAFETY: so nothing else uses or aliases it while we build the tables.
    // The four parts are disjoint, each page-aligned (so aligned for its
    // type), and zeroed bytes are valid values of each type.
    let (words_slice, table, links, heads) = unsafe {
        let base = phys::virt(PhysAddr::new(meta)) as *mut u8;
        core::ptr::write_bytes(base, 0, meta_bytes as usize);
        let table_ptr = base as *mut FrameEntry;
        let words_ptr = base.add(table_bytes as usize) as *mut u64;
        let links_ptr = base.add((table_bytes + bitmap_bytes) as usize) as *mut Link;
        let heads_ptr = base.add((table_bytes + bitmap_bytes + links_bytes) as usize) as *mut Head;
        (
            core::slice::from_raw_parts_mut(words_ptr, words),
            core::slice::from_raw_parts_mut(table_ptr, nframes),
            core::slice::from_raw_parts_mut(links_ptr, nframes),
            core::slice::from_raw_parts_mut(heads_ptr, ENV_TABLE_ROWS),
        )
    };
    let owned = Lists::new(links, heads);
    let Ok(mut bitmap) = Bitmap::new(words_slice, nframes) else {
        return Err(InitError::NoRoomForTables);
    };
    for e in table.iter_mut() {
        e.owner = OWNER_RESERVED;
    }
    let mut usable = 0;
    for r in boot.regions().iter().filter(|r| r.kind == RegionKind::Ram) {
        let start = (align_up(r.start.max(LOW_RESERVED), PAGE_SIZE) / PAGE_SIZE) as usize;
        let end = ((align_down(r.end.min(ram_end), PAGE_SIZE)) / PAGE_SIZE) as usize;
        if start < end {
            bitmap.release_range(start, end);
            for e in &mut table[start..end] {
                e.owner = OWNER_FREE;
            }
        }
    }
    // Reserved regions that overlap RAM entries win.
    for r in boot.regions().iter().filter(|r| r.kind == RegionKind::Reserved) {
        reserve(&mut bitmap, table, align_down(r.start, PAGE_SIZE), align_up(r.end, PAGE_SIZE), OWNER_RESERVED);
    }
    for &(s, e) in busy.iter().chain([(meta, meta + meta_bytes)].iter()) {
        reserve(&mut bitmap, table, s, e, OWNER_KERNEL);
    }
    usable += bitmap.free_count();
    *FRAMES.lock() = Some(Frames { bitmap, table, owned, usable, table_pa: meta, table_bytes, retired: 0 });
    Ok(())
}

fn reserve(bitmap: &mut Bitmap<'static>, table: &mut [FrameEntry], start: u64, end: u64, owner: u32) {
    let s = (start / PAGE_SIZE) as usize;
    let e = ((end / PAGE_SIZE) as usize).min(table.len());
    if s < e {
        bitmap.reserve_range(s, e);
        for entry in &mut table[s..e] {
            if entry.owner == OWNER_FREE || owner == OWNER_KERNEL {
                entry.owner = owner;
            }
        }
    }
}

/// A page-aligned RAM range of `bytes` below 4 GiB, above 1 MiB, clear of
/// every `busy` range.
fn find_room(boot: &BootInfo, bytes: u64, busy: &[(u64, u64)]) -> Option<u64> {
    const LIMIT: u64 = 4 << 30;
    for r in boot.regions().iter().filter(|r| r.kind == RegionKind::Ram) {
        let mut start = align_up(r.start.max(LOW_RESERVED), PAGE_SIZE);
        let end = r.end.min(LIMIT);
        'retry: while start + bytes <= end {
            for &(bs, be) in busy {
                if be > bs && start < be && bs < start + bytes {
                    start = align_up(be, PAGE_SIZE);
                    continue 'retry;
                }
            }
            return Some(start);
        }
    }
    None
}

/// Runs `f` with the frame allocator locked.
pub fn with<R>(f: impl FnOnce(&mut Frames) -> R) -> R {
    let mut guard = FRAMES.lock();
    match guard.as_mut() {
        Some(frames) => f(frames),
        None => panic!("frame allocator used before init"),
    }
}

impl Frames {
    /// Any free frame, zeroed, now owned by `owner`; its physical address.
    pub fn alloc(&mut self, owner: u32) -> Option<PhysAddr> {
        let n = self.bitmap.alloc_any()?;
        Some(self.take(n, owner))
    }

    /// Any free frame, now owned by `owner`, holding a copy of the RAM frame
    /// `src` (a frame of this table): it is filled whole before anyone sees
    /// it, so no previous owner's data shows and no zeroing is needed. Its
    /// physical address; `None` if no frame is free or `src` is not RAM
    /// this table manages.
    pub(crate) fn alloc_copy(&mut self, owner: u32, src: PhysAddr) -> Option<PhysAddr> {
        if self.entry(src.pfn()).is_none() || !src.is_frame_aligned() {
            return None;
        }
        let n = self.bitmap.alloc_any()?;
        let pa = Pfn::from_index(n).addr();
        // SAFETY: frame `n` just left the free pool (nothing else uses it,
        // and it differs from `src`, which is not free); `src` is a whole,
        // direct-mapped RAM frame of this table, only read.
        unsafe {
            core::ptr::copy_nonoverlapping(phys::virt(src) as *const u8, phys::virt(pa) as *mut u8, PAGE_SIZE as usize)
        };
        self.claim(n, owner);
        Some(pa)
    }

    /// The specific frame `pfn`, zeroed, now owned by `owner`.
    pub fn alloc_at(&mut self, pfn: Pfn, owner: u32) -> Result<PhysAddr, oxok_abi::Error> {
        let n = pfn.index().ok_or(oxok_abi::Error::Invalid)?;
        if n >= self.table.len() || self.table[n].owner == OWNER_RESERVED {
            return Err(oxok_abi::Error::Invalid);
        }
        self.bitmap.alloc(n).map_err(|_| oxok_abi::Error::Busy)?;
        Ok(self.take(n, owner))
    }

    /// `count` contiguous frames aligned to `align` frames, owned by `owner`.
    pub fn alloc_contiguous(&mut self, count: usize, align: usize, owner: u32) -> Option<PhysAddr> {
        let first = self.bitmap.alloc_contiguous(count, align)?;
        for n in first..first + count {
            self.claim(n, owner);
        }
        Some(Pfn::from_index(first).addr())
    }

    fn take(&mut self, n: usize, owner: u32) -> PhysAddr {
        let pa = Pfn::from_index(n).addr();
        // SAFETY: frame `n` just left the free pool: nothing else uses it.
        unsafe { zero(pa) };
        self.claim(n, owner);
        pa
    }

    /// Records frame `n`, just taken from the free pool, as `owner`'s: no
    /// mappings or references yet, and on its row's list if `owner` is an
    /// environment.
    fn claim(&mut self, n: usize, owner: u32) {
        let e = &mut self.table[n];
        e.owner = owner;
        e.maps = 0;
        e.refs = 0;
        self.list(n, owner);
    }

    /// Puts frame `n` on the list of `owner`'s row if `owner` is an
    /// environment (it is on no list: a free frame never is).
    fn list(&mut self, n: usize, owner: u32) {
        if owner >= OWNER_FIRST_ENV && self.owned.add(env_id::row(u64::from(owner)), n).is_err() {
            log::error!("frame {n:#x} was listed already");
        }
    }

    /// Gives frame `pfn` the owner word `owner` (an environment's id, or one
    /// of the `OWNER_*` words), moving it to that environment's list or off
    /// every list. For frames that stay allocated: the abort protocol's
    /// `OWNER_REVOKING`, an orphan's `OWNER_ORPHAN`. Ignored for a frame
    /// out of range or free, reserved or retired.
    pub fn set_owner(&mut self, pfn: Pfn, owner: u32) {
        let Some(n) = pfn.index().filter(|&n| n < self.table.len()) else { return };
        if matches!(self.table[n].owner, OWNER_FREE | OWNER_RESERVED | OWNER_RETIRED) {
            return;
        }
        self.owned.remove(n);
        self.table[n].owner = owner;
        self.list(n, owner);
    }

    /// How many frames the environment in table row `row` owns.
    pub fn owned_count(&self, row: usize) -> usize {
        self.owned.len(row)
    }

    /// The frames the environment in table row `row` owns, oldest first.
    pub fn owned(&self, row: usize) -> impl Iterator<Item = Pfn> + '_ {
        self.owned.iter(row).map(Pfn::from_index)
    }

    /// The frames the environment in table row `row` owns, newest first.
    pub fn owned_newest(&self, row: usize) -> impl Iterator<Item = Pfn> + '_ {
        self.owned.iter_rev(row).map(Pfn::from_index)
    }

    /// The frame the environment in table row `row` has owned longest.
    pub fn first_owned(&self, row: usize) -> Option<Pfn> {
        self.owned.first(row).map(Pfn::from_index)
    }

    /// Returns the frame at `pa` to the free pool; its generation advances.
    /// A frame whose generation would reach the limit is retired instead
    /// (owner `OWNER_RETIRED`, never allocated again): generations never
    /// wrap, so a capability naming the frame's past can never match a
    /// new owner. Freeing a free, reserved or retired frame is ignored (and
    /// logged): a kernel bug, never a user's doing.
    pub fn free(&mut self, pa: PhysAddr) {
        let n = pa.pfn().raw();
        match pa.pfn().index().and_then(|i| self.table.get_mut(i)) {
            Some(e) if !matches!(e.owner, OWNER_FREE | OWNER_RESERVED | OWNER_RETIRED) => {
                if let Some(i) = pa.pfn().index() {
                    self.owned.remove(i);
                }
                e.generation = e.generation.saturating_add(1);
                e.maps = 0;
                e.refs = 0;
                if e.generation >= GEN_LIMIT.load(Ordering::Relaxed) {
                    e.owner = OWNER_RETIRED;
                    self.retired += 1;
                    log::info!("frame {n:#x} reached generation {}: retired", e.generation);
                    return;
                }
                e.owner = OWNER_FREE;
                if pa.pfn().index().is_none_or(|i| self.bitmap.free(i).is_err()) {
                    log::error!("frame {n:#x}: table and bitmap disagree");
                }
            }
            _ => log::error!("free of frame {n:#x} that is not allocated"),
        }
    }

    /// The table entry of frame `pfn`, if it exists.
    pub fn entry(&self, pfn: Pfn) -> Option<&FrameEntry> {
        self.table.get(pfn.index()?)
    }

    /// Mutable table entry of frame `pfn`: for its counts and generation;
    /// its owner changes only through [`Frames::set_owner`] (which keeps
    /// the owned lists right).
    pub fn entry_mut(&mut self, pfn: Pfn) -> Option<&mut FrameEntry> {
        self.table.get_mut(pfn.index()?)
    }

    /// Usable RAM frames found at boot (after the kernel's own share).
    pub fn usable(&self) -> usize {
        self.usable
    }

    /// Frames retired for good (their generation reached the limit).
    pub fn retired(&self) -> usize {
        self.retired
    }

    /// Frames free now.
    pub fn free_count(&self) -> usize {
        self.bitmap.free_count()
    }

    /// Entries in the frame table.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True if the frame table has no entries (a machine with no RAM).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Physical address and size (whole pages) of the frame table.
    pub fn table_phys(&self) -> (PhysAddr, u64) {
        (PhysAddr::new(self.table_pa), self.table_bytes)
    }
}

/// Fills the frame at `pa` with zeroes.
///
/// # Safety
/// The frame at `pa` must be RAM the allocator manages (direct-mapped) and
/// owned by the caller, with no Rust reference into it.
pub(crate) unsafe fn zero(pa: PhysAddr) {
    // SAFETY: the caller owns the frame (see above); the direct map covers
    // all RAM the allocator manages.
    unsafe { core::ptr::write_bytes(phys::virt(pa) as *mut u8, 0, PAGE_SIZE as usize) }
}
