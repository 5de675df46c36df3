//! Page tables: the kernel's own (direct map + image) and one address space
//! per environment whose upper half is shared with the kernel's.

use super::addr::PhysAddr;
use super::{PAGE_SIZE, frame, phys};
use crate::arch::cpu;
use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::Error;
use oxok_abi::frames::OWNER_KERNEL;
use oxok_abi::layout::{USER_TOP, pte};

/// Entry bits used by the kernel on top of the user-visible ones in `abi`.
const PAGE_CACHE_DISABLE: u64 = (1 << 3) | (1 << 4);
const GLOBAL: u64 = 1 << 8;
const ENTRIES: usize = 512;
/// PML4 index where the kernel half starts.
const KERNEL_HALF: usize = 256;
/// PML4 index of `layout::UVPT` (the self-reference).
const UVPT_SLOT: usize = (oxok_abi::layout::UVPT >> 39) as usize;
/// PML4 index of `layout::EXPOSED_BASE`.
const EXPOSED_SLOT: usize = (oxok_abi::layout::EXPOSED_BASE >> 39) as usize;
/// User-half PML4 entries the user may populate (below `USER_TOP`).
const USER_SLOTS: usize = UVPT_SLOT;

static KERNEL_ROOT: AtomicU64 = AtomicU64::new(0);

/// Page tables unlinked from their parents so far, in any address space
/// ([`unlink_table`], the only way an entry above the last level loses
/// what it pointed at). A remembered translation ([`PageHint`]) is trusted
/// only while this count is the one it was made at: then every table on
/// its path is still in place, and rereading its last-level entry tells
/// whether the page is still mapped the same.
static UNLINKS: AtomicU64 = AtomicU64::new(0);

fn table(pa: PhysAddr) -> *mut u64 {
    phys::virt(pa) as *mut u64
}

fn read_entry(table_pa: PhysAddr, index: usize) -> u64 {
    // SAFETY: `table_pa` is a page-table frame the kernel owns (directly
    // mapped) and index < 512, so the read is in bounds.
    unsafe { table(table_pa).add(index).read_volatile() }
}

fn write_entry(table_pa: PhysAddr, index: usize, value: u64) {
    // SAFETY: as in `read_entry`; page tables are only changed with the
    // kernel lock held and interrupts off, so no one races this store.
    unsafe { table(table_pa).add(index).write_volatile(value) }
}

/// Clears entry `index` of `table_pa`, an entry above the last level whose
/// table is about to be freed: counted in [`UNLINKS`].
fn unlink_table(table_pa: PhysAddr, index: usize) {
    write_entry(table_pa, index, 0);
    // Plain load and store: only the kernel (lock held, interrupts off)
    // writes tables, so the count needs no atomic read-modify-write.
    UNLINKS.store(UNLINKS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

fn new_table() -> Result<PhysAddr, Error> {
    frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or(Error::NoMemory)
}

/// Builds the kernel's page tables — the direct map of all RAM (and the
/// first 4 GiB, with the 3–4 GiB MMIO hole uncached) in 2 MiB pages, and the
/// kernel image at -2 GiB — and switches to them.
pub fn init(ram_end: u64) -> Result<(), Error> {
    let root = new_table()?;
    let direct_end = ram_end.max(4 << 30);
    let gibs = direct_end.div_ceil(1 << 30);
    let pdpt = new_table()?;
    write_entry(root, KERNEL_HALF, pdpt.raw() | pte::PRESENT | pte::WRITABLE);
    for g in 0..gibs.min(512) {
        let pd = new_table()?;
        let uncached = if g == 3 { PAGE_CACHE_DISABLE } else { 0 };
        for i in 0..ENTRIES as u64 {
            let pa = (g << 30) | (i << 21);
            write_entry(
                pd,
                i as usize,
                pa | pte::PRESENT | pte::WRITABLE | pte::HUGE | GLOBAL | pte::NO_EXECUTE | uncached,
            );
        }
        write_entry(pdpt, g as usize, pd.raw() | pte::PRESENT | pte::WRITABLE);
    }
    // Kernel image: the first GiB at KERNEL_IMAGE.
    let kpdpt = new_table()?;
    let kpd = new_table()?;
    for i in 0..ENTRIES as u64 {
        write_entry(kpd, i as usize, (i << 21) | pte::PRESENT | pte::WRITABLE | pte::HUGE | GLOBAL);
    }
    guard_stacks(kpd)?;
    write_entry(kpdpt, 510, kpd.raw() | pte::PRESENT | pte::WRITABLE);
    write_entry(root, 511, kpdpt.raw() | pte::PRESENT | pte::WRITABLE);
    KERNEL_ROOT.store(root.raw(), Ordering::Relaxed);
    // SAFETY: the new root maps the kernel image at the same virtual
    // addresses as the boot tables and the direct map over a superset, so
    // every address the kernel uses stays valid across the switch.
    unsafe { cpu::set_cr3(root.raw()) };
    cpu::enable_global_pages();
    cpu::enable_smep();
    cpu::enable_umip();
    Ok(())
}

/// Where the kernel image is mapped (its first GiB, in 2 MiB pages).
const KERNEL_IMAGE: u64 = 0xFFFF_FFFF_8000_0000;

/// Leaves the guard page below every kernel stack (the kernel stack and the
/// IST stacks, `arch::stack::guards`) unmapped in the image mapping `kpd`:
/// a 2 MiB page that holds one is mapped in 4 KiB pages instead (one more
/// table each), all but the guards. The direct map still reaches a guard's
/// frame, but the stacks are only ever used through the image's addresses,
/// so an overflow faults there.
fn guard_stacks(kpd: PhysAddr) -> Result<(), Error> {
    for (guard, _) in crate::arch::stack::guards() {
        let guard_pa = guard - KERNEL_IMAGE;
        let big = guard_pa & !((1 << 21) - 1);
        let at = (big >> 21) as usize;
        let mut entry = read_entry(kpd, at);
        if entry & pte::HUGE != 0 {
            let pt = new_table()?;
            for i in 0..ENTRIES as u64 {
                write_entry(pt, i as usize, (big + (i << 12)) | pte::PRESENT | pte::WRITABLE | GLOBAL);
            }
            entry = pt.raw() | pte::PRESENT | pte::WRITABLE;
            write_entry(kpd, at, entry);
        }
        write_entry(PhysAddr::of_entry(entry), ((guard_pa - big) >> 12) as usize, 0);
    }
    Ok(())
}

/// Whether the kernel's own tables map `va` (a kernel address): for the
/// self tests of the stacks' guards.
pub fn kernel_maps(va: u64) -> bool {
    let mut t = kernel_root();
    for (level, &i) in indices(va).iter().enumerate() {
        let e = read_entry(t, i);
        if e & pte::PRESENT == 0 {
            return false;
        }
        if level < 3 && e & pte::HUGE != 0 {
            return true;
        }
        t = PhysAddr::of_entry(e);
    }
    true
}

/// Exposes one kernel frame read-only at `va` (see [`expose_range`]) and
/// keeps it for good: an exposed frame is never freed (every environment
/// may read it), so it is returned as a `'static` reference, not as an
/// owner that could drop it. On a refusal the frame is dropped (freed),
/// unexposed. Boot-time only.
pub fn expose(va: u64, frame: super::access::KernelFrame) -> Result<&'static super::access::KernelFrame, Error> {
    // SAFETY: a kernel-owned frame, held here and kept for good below;
    // exposing it only lets users read it.
    unsafe { expose_range(va, frame.pa(), PAGE_SIZE)? };
    Ok(alloc::boxed::Box::leak(alloc::boxed::Box::new(frame)))
}

/// What the kernel does with each page still mapped when an address space
/// is dropped without having been torn down ([`AddressSpace`]'s `Drop`):
/// release the mapping (registered once at boot by the kernel, which keeps
/// the frames' mapping counts).
static LEAF_RELEASE: spin::Once<fn(u64)> = spin::Once::new();

/// Registers the kernel's release of one mapping (its page-table entry),
/// called for every page still mapped in an address space that is dropped
/// before it was torn down.
pub fn on_leaf_release(release: fn(u64)) {
    LEAF_RELEASE.call_once(|| release);
}

/// Maps the frames `[pa, pa+bytes)` read-only for user mode at `va` in the
/// exposed region (PML4 slot 255) of the kernel's tables; every address
/// space created afterwards shares the subtree. Boot-time only.
///
/// # Safety
/// `[pa, pa+bytes)` must be page-aligned memory every environment may
/// read (kernel tables made for exposure, the boot archive): nothing
/// secret and nothing that is ever handed to an environment as its own.
pub(in crate::mem) unsafe fn expose_range(va: u64, pa: PhysAddr, bytes: u64) -> Result<(), Error> {
    let root = kernel_root();
    let table_flags = pte::PRESENT | pte::USER;
    let mut off = 0;
    while off < bytes {
        let (t, i) = walk_making(root, va + off, table_flags, &mut 0, || Ok(()))?;
        write_entry(t, i, pa.offset(off).raw() | pte::PRESENT | pte::USER | pte::NO_EXECUTE);
        off += PAGE_SIZE;
    }
    Ok(())
}

/// The last-level table and index of `va` below the PML4 at `root`,
/// making the tables missing on the way (entries with `table_flags`,
/// counted in `made`) and marking the way in each upper entry's summary
/// (`pte::summary`), each table after `charge` agreed to pay for it; the
/// first refusal of `charge`, or `NoMemory` when a table frame is out,
/// ends the walk (the tables made before it stay).
#[inline(always)]
fn walk_making(
    root: PhysAddr,
    va: u64,
    table_flags: u64,
    made: &mut u64,
    mut charge: impl FnMut() -> Result<(), Error>,
) -> Result<(PhysAddr, usize), Error> {
    let idx = indices(va);
    let mut t = root;
    for level in 0..3 {
        let i = idx[level];
        // The summary bit that says the entry below may be present
        // (pte::summary): set before that entry is.
        let bit = pte::summary_bit(idx[level + 1] / pte::SUMMARY_SPAN);
        let e = read_entry(t, i);
        t = if e & pte::PRESENT == 0 {
            charge()?;
            let next = new_table()?;
            *made += 1;
            write_entry(t, i, next.raw() | table_flags | bit);
            next
        } else {
            if e & bit == 0 {
                write_entry(t, i, e | bit);
            }
            PhysAddr::of_entry(e)
        };
    }
    Ok((t, idx[3]))
}

/// Physical address of the kernel's own PML4.
pub fn kernel_root() -> PhysAddr {
    PhysAddr::new(KERNEL_ROOT.load(Ordering::Relaxed))
}

/// Switches to the kernel's own page tables (no user half).
pub fn activate_kernel() {
    let root = kernel_root();
    if cpu::cr3() != root.raw() {
        // SAFETY: the kernel root maps the kernel half like every space.
        unsafe { cpu::set_cr3(root.raw()) }
    }
}

/// Page-table indices of `va`, top level first.
fn indices(va: u64) -> [usize; 4] {
    [(va >> 39) as usize & 511, (va >> 30) as usize & 511, (va >> 21) as usize & 511, (va >> 12) as usize & 511]
}

/// One environment's page tables. The upper half is the kernel's (shared
/// PML4 entries); the lower half below `USER_TOP` is the environment's.
pub struct AddressSpace {
    root: PhysAddr,
    /// Page-table frames below the root this space holds (see
    /// [`Self::tables`]).
    tables: u64,
}

/// A user page of an address space (writable, for the space's own hint;
/// readable, for a hint its user keeps: [`PageHint::NONE`] to start): its
/// last-level entry (where it is and what it held) as a full walk found it
/// when [`UNLINKS`] was
/// `unlinks`. While no table has been unlinked since and the entry still
/// holds the same, the walk would find the same (the tables above are the
/// same tables, their entries only ever filled in where empty; the
/// hardware changes only the accessed and dirty bits, which a walk does not
/// look at — a dirty bit set since makes the hint miss once), so it is
/// skipped: an upcall's record goes to the same exception-stack page call
/// after call.
#[derive(Clone, Copy)]
pub struct PageHint {
    unlinks: u64,
    /// Page-aligned user address; `NO_PAGE` (never an aligned address)
    /// when there is none.
    page: u64,
    /// Where the page's last-level entry is (in its table's frame).
    at: PhysAddr,
    /// The entry as the walk found it.
    entry: u64,
    /// The frame it maps.
    frame: PhysAddr,
}

/// [`PageHint::page`] of no page.
const NO_PAGE: u64 = u64::MAX;

impl PageHint {
    /// A hint of no page (it never holds, so its other fields are never
    /// looked at).
    pub const NONE: PageHint =
        PageHint { unlinks: 0, page: NO_PAGE, at: PhysAddr::new(0), entry: 0, frame: PhysAddr::new(0) };

    /// Where `va` is, if this hint still holds for its page: no table
    /// unlinked since it was made and the page's last entry unchanged.
    #[inline(always)]
    fn holds(&self, va: u64) -> Option<PhysAddr> {
        (self.page == va & !(PAGE_SIZE - 1)
            && self.unlinks == UNLINKS.load(Ordering::Relaxed)
            && read_entry(self.at, 0) == self.entry)
            .then(|| self.frame.offset(va & (PAGE_SIZE - 1)))
    }
}

impl AddressSpace {
    /// An empty user half over the shared kernel half.
    pub fn new() -> Result<AddressSpace, Error> {
        let root = new_table()?;
        let kroot = kernel_root();
        for i in KERNEL_HALF..ENTRIES {
            write_entry(root, i, read_entry(kroot, i));
        }
        // The exposed kernel tables (read-only, shared subtree) and the
        // space's own page tables seen through a read-only self-reference.
        write_entry(root, EXPOSED_SLOT, read_entry(kroot, EXPOSED_SLOT));
        write_entry(root, UVPT_SLOT, root.raw() | pte::PRESENT | pte::USER | pte::NO_EXECUTE);
        Ok(AddressSpace { root, tables: 0 })
    }

    /// True if this is the current address space (CR3 names its root).
    fn is_current(&self) -> bool {
        cpu::cr3() == self.root.raw()
    }

    /// Makes this the current address space.
    pub fn activate(&self) {
        if !self.is_current() {
            // SAFETY: `root` is a PML4 built by `new`, whose kernel half
            // equals the kernel's; it stays alive while `self` does.
            unsafe { cpu::set_cr3(self.root.raw()) }
        }
    }

    /// Maps the 4 KiB page at `va` to `frame` with `flags` (`WRITABLE`,
    /// `NO_EXECUTE`, libOS bits); `PRESENT | USER` are implied. Fails with
    /// `BadAddress` outside the user range or when unaligned, `Exists`
    /// when something is mapped there already.
    pub fn map(&mut self, va: u64, frame: super::access::Mappable, flags: u64) -> Result<(), Error> {
        if !frame.pa().is_frame_aligned() {
            return Err(Error::BadAddress);
        }
        let leaf = self.leaf_for(va, || Ok(()))?;
        if leaf.entry().is_some() {
            return Err(Error::Exists);
        }
        leaf.fill(frame, flags);
        Ok(())
    }

    /// Page-table frames below the root this space holds: they only grow
    /// (with [`Self::map`]) until the space is torn down.
    pub fn tables(&self) -> u64 {
        self.tables
    }

    /// Removes the mapping at `va`; returns the old entry.
    pub fn unmap(&mut self, va: u64) -> Option<u64> {
        let (t, i) = self.leaf(va)?;
        let old = read_entry(t, i);
        if old & pte::PRESENT == 0 {
            return None;
        }
        write_entry(t, i, 0);
        if self.is_current() {
            cpu::invlpg(va);
        }
        Some(old)
    }

    /// Replaces the flags of the mapping at `va` (same frame); returns the
    /// old entry. `BadAddress` outside the user range, `NotFound` if nothing
    /// is mapped.
    pub fn protect(&mut self, va: u64, flags: u64) -> Result<u64, Error> {
        super::user_page(va)?;
        let (t, i) = self.leaf(va).ok_or(Error::NotFound)?;
        let old = read_entry(t, i);
        if old & pte::PRESENT == 0 {
            return Err(Error::NotFound);
        }
        let allowed = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
        write_entry(t, i, PhysAddr::of_entry(old).raw() | (flags & allowed) | pte::PRESENT | pte::USER);
        if self.is_current() {
            cpu::invlpg(va);
        }
        Ok(old)
    }

    /// The leaf entry mapping `va`, if present.
    pub fn lookup(&self, va: u64) -> Option<u64> {
        let (t, i) = self.leaf(va)?;
        let e = read_entry(t, i);
        (e & pte::PRESENT != 0).then_some(e)
    }

    /// The level-1 table and index for `va`, if the tables above exist
    /// (remembered for the next page of the same span: [`leaf::LeafHint`]).
    #[inline(always)]
    fn leaf(&self, va: u64) -> Option<(PhysAddr, usize)> {
        if va >= USER_TOP {
            return None;
        }
        let idx = indices(va);
        if let Some(t) = hints::leaf(self.root, va, false) {
            return Some((t, idx[3]));
        }
        let mut t = self.root;
        let mut e = 0;
        for &i in &idx[..3] {
            e = read_entry(t, i);
            if e & pte::PRESENT == 0 || e & pte::HUGE != 0 {
                return None;
            }
            t = PhysAddr::of_entry(e);
        }
        let marked = e & pte::summary_bit(idx[3] / pte::SUMMARY_SPAN) != 0;
        hints::set_leaf(self.root, leaf::LeafHint::found(va, t, marked));
        Some((t, idx[3]))
    }

    /// Walks `va` as the CPU would for a user access, requiring `USER` (and
    /// `WRITABLE` if `write`) at every level; the physical address of `va`.
    /// A page found writable is remembered ([`Self::translate_hinted`]).
    #[inline]
    pub fn translate_user(&self, va: u64, write: bool) -> Option<PhysAddr> {
        match write {
            true => self.walk_user::<true>(va),
            false => self.walk_user::<false>(va),
        }
    }

    /// [`Self::translate_user`] for a write, without the walk when `va`
    /// lies in the last page a write walk found writable, no table has been
    /// unlinked since and its last-level entry is unchanged ([`PageHint`]):
    /// an upcall's record goes to the same exception-stack page call after
    /// call.
    #[inline(always)]
    pub fn translate_hinted(&self, va: u64) -> Option<PhysAddr> {
        hints::page(self.root, va).or_else(|| self.walk_user::<true>(va))
    }

    /// [`Self::translate_user`]'s walk; a write walk's page is remembered.
    #[inline(never)]
    fn walk_user<const WRITE: bool>(&self, va: u64) -> Option<PhysAddr> {
        if va >= USER_TOP {
            return None;
        }
        let need = pte::PRESENT | pte::USER | if WRITE { pte::WRITABLE } else { 0 };
        let idx = indices(va);
        let mut t = self.root;
        for &i in &idx[..3] {
            let e = read_entry(t, i);
            if e & need != need || e & pte::HUGE != 0 {
                return None;
            }
            t = PhysAddr::of_entry(e);
        }
        let entry = read_entry(t, idx[3]);
        if entry & need != need {
            return None;
        }
        if WRITE {
            let unlinks = UNLINKS.load(Ordering::Relaxed);
            let (page, at, frame) = (va & !(PAGE_SIZE - 1), t.offset(idx[3] as u64 * 8), PhysAddr::of_entry(entry));
            hints::set_page(self.root, PageHint { unlinks, page, at, entry, frame });
        }
        Some(PhysAddr::of_entry(entry).offset(va & (PAGE_SIZE - 1)))
    }

    /// Leaves this address space if it is the current one (before it is
    /// torn down).
    pub fn deactivate(&self) {
        if self.is_current() {
            activate_kernel();
        }
    }

    /// Walks `va` for a user *read* anywhere in the lower half — the user's
    /// own pages and the exposed kernel tables and page tables alike —
    /// requiring `PRESENT | USER` at every level, exactly as the CPU would
    /// for the environment itself. The physical address of `va`.
    pub(crate) fn translate_readable(&self, va: u64) -> Option<PhysAddr> {
        self.walk_readable(va).map(|h| h.frame.offset(va & (PAGE_SIZE - 1)))
    }

    /// [`Self::translate_readable`], without the walk while `hint` (kept
    /// by the caller for this address space, e.g. a wakeup predicate's)
    /// still holds for `va`'s page: no table unlinked since it was made and
    /// its last entry unchanged, as for [`Self::translate_hinted`]. A walk
    /// remembers its page in `hint`.
    #[inline(always)]
    pub(crate) fn translate_readable_hinted(&self, hint: &Cell<PageHint>, va: u64) -> Option<PhysAddr> {
        if let Some(pa) = hint.get().holds(va) {
            return Some(pa);
        }
        let found = self.walk_readable(va)?;
        hint.set(found);
        Some(found.frame.offset(va & (PAGE_SIZE - 1)))
    }

    /// [`Self::translate_readable`]'s walk: the page's last entry, as a
    /// hint.
    fn walk_readable(&self, va: u64) -> Option<PageHint> {
        if va >= 0x0000_8000_0000_0000 {
            return None;
        }
        let need = pte::PRESENT | pte::USER;
        let unlinks = UNLINKS.load(Ordering::Relaxed);
        let mut t = self.root;
        let mut at = self.root;
        let mut entry = 0;
        for (level, &i) in indices(va).iter().enumerate() {
            let e = read_entry(t, i);
            if e & need != need || (level < 3 && e & pte::HUGE != 0) {
                return None;
            }
            (at, entry) = (t.offset(i as u64 * 8), e);
            t = PhysAddr::of_entry(e);
        }
        Some(PageHint { unlinks, page: va & !(PAGE_SIZE - 1), at, entry, frame: t })
    }

    /// The page at page-aligned `va` if its user may read it (as
    /// [`Self::translate_readable`]), as a page the kernel may copy.
    pub fn readable_page(&self, va: u64) -> Option<super::access::ReadablePage> {
        if !va.is_multiple_of(PAGE_SIZE) {
            return None;
        }
        self.translate_readable(va).map(super::access::ReadablePage::walked)
    }
}

mod hints;
mod leaf;
mod walk;

pub use leaf::{Leaf, LeafRun};
