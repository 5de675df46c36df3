//! The only ways safe kernel code reaches physical memory: a [`KernelFrame`]
//! (a kernel-owned frame taken from the allocator, held by whoever allocated
//! it) or a [`FrameRef`] (an environment's frame, handed out only after the
//! frame table says who owns it; a copy of a [`ReadablePage`], a page an
//! address space lets its user read). Mapping a frame into an address
//! space takes a [`Mappable`], made only from one of those or from a frame
//! of the XN buffer cache's pool ([`super::cache::CachePool::mappable`]).
//! Raw access by address is `unsafe` (see [`super::phys`]) and stays inside
//! this crate.

use super::addr::{Pfn, PhysAddr};
use super::{PAGE_SIZE, frame, phys};
use core::num::NonZeroU64;
use oxok_abi::env_id::EnvId;
use oxok_abi::frames::{FrameEntry, OWNER_FIRST_ENV, OWNER_KERNEL, OWNER_ORPHAN};

/// Copies `data` into frame `pa` at `offset`, clamped to the frame.
///
/// # Safety
/// The frame at `pa` must be direct-mapped RAM that no Rust reference
/// aliases, and the caller must be entitled to write it.
unsafe fn write_at(pa: PhysAddr, offset: usize, data: &[u8]) {
    let offset = offset.min(PAGE_SIZE as usize);
    let n = data.len().min(PAGE_SIZE as usize - offset);
    // SAFETY: `[pa+offset, pa+offset+n)` stays inside the one frame at `pa`
    // (clamped above), which the caller vouches for.
    unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), (phys::virt(pa) as *mut u8).add(offset), n) }
}

/// Copies from frame `pa` at `offset` into `out`, clamped to the frame;
/// returns the bytes copied.
///
/// # Safety
/// The frame at `pa` must be direct-mapped RAM the caller may read.
unsafe fn read_at(pa: PhysAddr, offset: usize, out: &mut [u8]) -> usize {
    let offset = offset.min(PAGE_SIZE as usize);
    let n = out.len().min(PAGE_SIZE as usize - offset);
    // SAFETY: `[pa+offset, pa+offset+n)` stays inside one direct-mapped
    // frame (clamped above); reading RAM as bytes is always defined.
    unsafe { core::ptr::copy_nonoverlapping((phys::virt(pa) as *const u8).add(offset), out.as_mut_ptr(), n) }
    n
}

/// A kernel-owned frame, obtained only from the allocator. Not `Clone`: its
/// holder is its one owner, and the frame goes back to the allocator when
/// the holder drops it (or with [`KernelFrame::free_in`] under the
/// allocator's lock); a frame exposed to every environment is never given
/// back ([`super::paging::expose`] keeps it for good).
///
/// Its address is never 0 (frame 0 is never allocated), so
/// `Option<KernelFrame>` takes no more room than one.
#[derive(Debug)]
pub struct KernelFrame {
    at: NonZeroU64,
}

impl KernelFrame {
    /// A fresh zeroed kernel frame, or `None` when memory is out.
    pub fn alloc() -> Option<KernelFrame> {
        let pa = frame::with(|f| f.alloc(OWNER_KERNEL))?;
        match NonZeroU64::new(pa.raw()) {
            Some(at) => Some(KernelFrame { at }),
            // Never: frame 0 is not allocated. Give it back if it were.
            None => {
                frame::with(|f| f.free(pa));
                None
            }
        }
    }

    /// Its physical address.
    #[inline]
    pub fn pa(&self) -> PhysAddr {
        PhysAddr::new(self.at.get())
    }

    /// Copies `data` into the frame at `offset`, clamped to the frame.
    pub fn write(&self, offset: usize, data: &[u8]) {
        // SAFETY: the frame is kernel-owned and held by `self`; the kernel
        // keeps no Rust reference into it, so the copy aliases nothing.
        unsafe { write_at(self.pa(), offset, data) }
    }

    /// Stores `value` little-endian at `offset`, a multiple of 8 inside
    /// the frame (any other offset is ignored): one store, no copy.
    pub fn write_u64(&self, offset: usize, value: u64) {
        if !offset.is_multiple_of(8) || offset + 8 > PAGE_SIZE as usize {
            return;
        }
        // SAFETY: the frame is kernel-owned, held by `self` and
        // direct-mapped; `offset` is 8-aligned with 8 bytes left in it
        // (checked above); the kernel keeps no Rust reference into it.
        unsafe { (phys::virt(self.pa()) as *mut u8).add(offset).cast::<u64>().write(value.to_le()) }
    }

    /// The little-endian `u64` at `offset` (zero past the frame's end).
    pub fn read_u64(&self, offset: usize) -> u64 {
        let mut b = [0u8; 8];
        // SAFETY: the frame is kernel-owned, held by `self`, direct-mapped.
        unsafe { read_at(self.pa(), offset, &mut b) };
        u64::from_le_bytes(b)
    }

    /// Returns the frame to an allocator the caller already locked (where
    /// dropping it would take the lock again).
    pub fn free_in(self, frames: &mut frame::Frames) {
        frames.free(self.pa());
        core::mem::forget(self);
    }
}

impl Drop for KernelFrame {
    /// Ownership ends: the frame goes back to the allocator (constant work).
    fn drop(&mut self) {
        frame::with(|f| f.free(self.pa()));
    }
}

/// Whether a frame of `owner` is user memory: owned by an environment, or
/// orphaned (a dead environment's frame still mapped elsewhere).
fn user_owner(owner: u32) -> bool {
    owner >= OWNER_FIRST_ENV || owner == OWNER_ORPHAN
}

/// An environment's frame, checked in the frame table when made: proof that
/// the kernel may touch it on that environment's behalf. Not `Clone`.
#[derive(Debug)]
pub struct FrameRef {
    pa: PhysAddr,
}

impl FrameRef {
    /// A fresh zeroed frame now owned by environment `owner`, or `None` when
    /// memory is out (or `owner` is not an environment).
    pub fn alloc(owner: EnvId) -> Option<FrameRef> {
        if owner.raw() < OWNER_FIRST_ENV {
            return None;
        }
        frame::with(|f| f.alloc(owner.raw())).map(|pa| FrameRef { pa })
    }

    /// A fresh frame now owned by environment `owner`, holding a copy of
    /// the page `src` names (one an address space maps readable to its
    /// user), or `None` when memory is out or `src` is no frame.
    pub fn alloc_copy(owner: EnvId, src: ReadablePage) -> Option<FrameRef> {
        if owner.raw() < OWNER_FIRST_ENV {
            return None;
        }
        frame::with(|f| f.alloc_copy(owner.raw(), src.pa)).map(|pa| FrameRef { pa })
    }

    /// Frame `pfn` if the frame table says environment `owner` owns it.
    pub fn owned_by(pfn: Pfn, owner: EnvId) -> Option<FrameRef> {
        let owner = owner.raw();
        let ok = owner >= OWNER_FIRST_ENV && frame::with(|f| f.entry(pfn).is_some_and(|e| e.owner == owner));
        ok.then(|| FrameRef { pa: pfn.addr() })
    }

    /// Frame `pfn` if the frame table says it is user memory: owned by some
    /// environment, or orphaned (a dead environment's frame still mapped
    /// elsewhere) — never a kernel, free, reserved, retired or revoking
    /// frame. For frames whose capability the caller checked.
    pub fn of_any_env(pfn: Pfn) -> Option<FrameRef> {
        frame::with(|f| f.entry(pfn).is_some_and(|e| user_owner(e.owner))).then(|| FrameRef { pa: pfn.addr() })
    }

    /// Frame `pfn` if it is user memory (as [`FrameRef::of_any_env`]) and
    /// of generation `generation`: a frame capability's name checked and
    /// the frame taken in one look at the table.
    pub fn of_any_env_at(pfn: Pfn, generation: u64) -> Option<FrameRef> {
        let current = |e: &FrameEntry| user_owner(e.owner) && u64::from(e.generation) == generation;
        frame::with(|f| f.entry(pfn).is_some_and(current)).then(|| FrameRef { pa: pfn.addr() })
    }

    /// Its physical address.
    pub fn pa(&self) -> PhysAddr {
        self.pa
    }

    /// Its frame number.
    pub fn pfn(&self) -> Pfn {
        self.pa.pfn()
    }

    /// Copies `data` into the frame at `offset`, clamped to the frame.
    pub fn write(&self, offset: usize, data: &[u8]) {
        // SAFETY: an environment's frame (checked when `self` was made); the
        // kernel holds no Rust reference to user frames.
        unsafe { write_at(self.pa, offset, data) }
    }

    /// Copies from the frame at `offset` into `out`, clamped to the frame;
    /// returns the bytes copied.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> usize {
        // SAFETY: an environment's frame (checked when `self` was made),
        // direct-mapped RAM.
        unsafe { read_at(self.pa, offset, out) }
    }

    /// The little-endian `u32` at `offset` (zero past the frame's end).
    pub fn read_u32(&self, offset: usize) -> u32 {
        let mut b = [0u8; 4];
        self.read(offset, &mut b);
        u32::from_le_bytes(b)
    }
}

/// A page an address space maps readable to its user, found by
/// [`super::paging::AddressSpace::readable_page`]: what the user could read
/// itself, so the kernel may copy it on the user's behalf
/// ([`FrameRef::alloc_copy`]). Not `Clone`; used in the kernel entry that
/// made it, before anything unmaps.
#[derive(Debug)]
pub struct ReadablePage {
    pa: PhysAddr,
}

impl ReadablePage {
    /// The page at `pa`, found readable by a page-table walk.
    pub(in crate::mem) fn walked(pa: PhysAddr) -> ReadablePage {
        ReadablePage { pa }
    }
}

/// A frame the kernel may map into an address space
/// ([`super::paging::AddressSpace::map`]): made from a [`KernelFrame`] (the
/// application area), a [`FrameRef`] (an environment's or orphaned frame),
/// or by `mem` itself for a frame whose ownership it checked (the XN cache
/// pool). Never from a bare address outside `mem`.
#[derive(Debug, Clone, Copy)]
pub struct Mappable {
    pa: PhysAddr,
}

impl Mappable {
    /// A frame `mem` checked itself (page-aligned, owned as the caller says).
    pub(in crate::mem) fn checked(pa: PhysAddr) -> Mappable {
        Mappable { pa }
    }

    /// Its physical address.
    pub fn pa(&self) -> PhysAddr {
        self.pa
    }
}

impl From<&KernelFrame> for Mappable {
    fn from(f: &KernelFrame) -> Mappable {
        Mappable { pa: f.pa() }
    }
}

/// A page of the boot archive (`exposed::archive_page`,
/// `exposed::archive_frame`): every environment may read it, and it is
/// mapped read-only only (the kernel's share refuses write; nothing here
/// writes it).
#[derive(Clone, Copy, Debug)]
pub struct ArchivePage {
    pa: PhysAddr,
}

impl ArchivePage {
    /// The archive's page at `pa` (`exposed` checked it is one).
    pub(in crate::mem) fn checked(pa: PhysAddr) -> ArchivePage {
        ArchivePage { pa }
    }

    /// Copies from the page at `offset` into `out`, clamped to the page;
    /// returns the bytes copied.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> usize {
        // SAFETY: a page of the boot archive, direct-mapped memory every
        // environment reads at `BOOT_ARCHIVE` already.
        unsafe { read_at(self.pa, offset, out) }
    }
}

impl From<&ArchivePage> for Mappable {
    fn from(p: &ArchivePage) -> Mappable {
        Mappable { pa: p.pa }
    }
}

impl From<&Mappable> for Mappable {
    fn from(f: &Mappable) -> Mappable {
        *f
    }
}

impl From<&FrameRef> for Mappable {
    fn from(f: &FrameRef) -> Mappable {
        Mappable { pa: f.pa }
    }
}
