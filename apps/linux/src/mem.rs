//! The Linux program's memory: a table of areas (image, break, `mmap`
//! mappings, stack), each with a Linux protection, backed on first touch by
//! zeroed frames (the page-fault upcall), and the checks every pointer a
//! program passes goes through: a range is usable only if it lies in the
//! program's areas with the access it needs — never the personality's own
//! memory — so a bad pointer is `-EFAULT`, never a fault in the
//! personality.

use crate::errno::{EFAULT, ENOMEM};
use crate::layout::guest_range;
use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, MapEntry, SHARE_RUN_MAX};
use oxok_libos::{exposed, sys};
use spin::Mutex;

/// `PROT_READ`.
pub const PROT_READ: u64 = 1;
/// `PROT_WRITE`.
pub const PROT_WRITE: u64 = 2;
/// `PROT_EXEC`.
pub const PROT_EXEC: u64 = 4;

/// Most areas a program may have (Linux's default is 65530).
pub const MAX_AREAS: usize = 4096;

/// One area: `[start, end)`, page-aligned, with a Linux protection;
/// `shared`: a `MAP_SHARED` anonymous mapping, whose frames are given at
/// map time and marked `LIBOS_SHARED`, so a fork child maps the same
/// frames writable (the libOS's fork) instead of copy-on-write ones.
#[derive(Clone, Copy, Debug)]
struct Area {
    start: u64,
    end: u64,
    prot: u64,
    shared: bool,
}

/// The areas, sorted by address and never overlapping.
static AREAS: Mutex<Vec<Area>> = Mutex::new(Vec::new());

/// Page-table flags for a Linux protection. `PROT_NONE` pages are never
/// mapped; pages already present when an area becomes `PROT_NONE` stay
/// mapped read-only (their contents must survive).
pub fn flags(prot: u64) -> u64 {
    (if prot & PROT_WRITE != 0 { pte::WRITABLE } else { 0 }) | if prot & PROT_EXEC != 0 { 0 } else { pte::NO_EXECUTE }
}

fn page_down(a: u64) -> u64 {
    a & !(PAGE_SIZE - 1)
}

/// `a` rounded up to a page; `None` on overflow.
pub fn page_up(a: u64) -> Option<u64> {
    a.checked_add(PAGE_SIZE - 1).map(page_down)
}

/// Cuts `[start, end)` out of the table (splitting areas at the edges).
fn cut(areas: &mut Vec<Area>, start: u64, end: u64) {
    let mut out = Vec::with_capacity(areas.len() + 1);
    for a in areas.iter() {
        if a.end <= start || end <= a.start {
            out.push(*a);
            continue;
        }
        if a.start < start {
            out.push(Area { end: start, ..*a });
        }
        if end < a.end {
            out.push(Area { start: end, ..*a });
        }
    }
    *areas = out;
}

/// Adds `[start, end)` with `prot`, replacing whatever areas were there
/// (their present pages are unmapped first). `ENOMEM` when the range is
/// not the program's to have or the table is full.
pub fn add(start: u64, end: u64, prot: u64) -> Result<(), i64> {
    if !guest_range(start, end) || !start.is_multiple_of(PAGE_SIZE) || !end.is_multiple_of(PAGE_SIZE) {
        return Err(ENOMEM);
    }
    unmap_pages(start, end);
    let mut areas = AREAS.lock();
    cut(&mut areas, start, end);
    if areas.len() >= MAX_AREAS {
        return Err(ENOMEM);
    }
    let at = areas.partition_point(|a| a.start < start);
    areas.insert(at, Area { start, end, prot, shared: false });
    Ok(())
}

/// As [`add`], for a `MAP_SHARED` anonymous mapping: every page gets its
/// zeroed frame now, marked shared (a page first touched after a fork
/// would otherwise be each side's own). `ENOMEM`, and nothing added, if
/// the frames cannot all be had — at once if the mapping would take more
/// than half the machine's free frames.
pub fn add_shared(start: u64, end: u64, prot: u64) -> Result<(), i64> {
    let pages = (end - start) / PAGE_SIZE;
    if pages > exposed::free_frames().unwrap_or(0) / 2 {
        return Err(ENOMEM);
    }
    add(start, end, prot)?;
    {
        let mut areas = AREAS.lock();
        if let Some(a) = areas.iter_mut().find(|a| a.start == start) {
            a.shared = true;
        }
    }
    let mut va = start;
    while va < end {
        if map_zero(va, flags(prot) | pte::LIBOS_SHARED).is_err() {
            remove(start, end);
            return Err(ENOMEM);
        }
        va += PAGE_SIZE;
    }
    Ok(())
}

/// True if any area overlaps `[start, end)`.
pub fn overlaps(start: u64, end: u64) -> bool {
    AREAS.lock().iter().any(|a| a.start < end && start < a.end)
}

/// Removes `[start, end)` from the areas and unmaps its pages (frames go
/// back to the kernel).
pub fn remove(start: u64, end: u64) {
    cut(&mut AREAS.lock(), start, end);
    unmap_pages(start, end);
}

/// Removes every area and gives back every page of the program (at
/// `execve`), and forgets the break.
pub fn clear() {
    let areas = core::mem::take(&mut *AREAS.lock());
    for a in areas {
        unmap_pages(a.start, a.end);
    }
    *BRK.lock() = Brk { start: 0, now: 0 };
}

/// Gives back the frames of `[start, end)` but keeps its areas: the pages
/// read as zero at their next touch. Shared areas keep their frames (the
/// contents are the partners' too, as a shared mapping's are on Linux).
pub fn discard(start: u64, end: u64) {
    let private: Vec<(u64, u64)> = AREAS
        .lock()
        .iter()
        .filter(|a| !a.shared && a.end > start && a.start < end)
        .map(|a| (a.start.max(start), a.end.min(end)))
        .collect();
    for (s, e) in private {
        unmap_pages(s, e);
    }
}

/// Sets the protection of `[start, end)`, which areas must cover wholly
/// (`ENOMEM` otherwise, as Linux), and of its present pages.
pub fn protect(start: u64, end: u64, prot: u64) -> Result<(), i64> {
    {
        let mut areas = AREAS.lock();
        let mut at = start;
        for a in areas.iter().filter(|a| a.end > start && a.start < end) {
            if a.start > at {
                return Err(ENOMEM);
            }
            at = a.end;
        }
        if at < end {
            return Err(ENOMEM);
        }
        let pieces: Vec<Area> = areas
            .iter()
            .filter(|a| a.end > start && a.start < end)
            .map(|a| Area { start: a.start.max(start), end: a.end.min(end), prot, shared: a.shared })
            .collect();
        cut(&mut areas, start, end);
        let i = areas.partition_point(|a| a.start < start);
        for (k, p) in pieces.into_iter().enumerate() {
            areas.insert(i + k, p);
        }
    }
    let want = flags(prot) & !if prot == 0 { pte::WRITABLE } else { 0 };
    let mut batch = Vec::new();
    exposed::walk(start, end, |va, entry| {
        // A copy-on-write page (after fork) keeps its mark and stays
        // read-only: its next write fault gives it a frame of its own.
        // A shared page stays shared.
        let want = if entry & pte::LIBOS_COW != 0 { (want & !pte::WRITABLE) | pte::LIBOS_COW } else { want };
        let want = want | (entry & pte::LIBOS_SHARED);
        if entry & (pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_COW | pte::LIBOS_SHARED) == want {
            return;
        }
        if want & !entry & pte::WRITABLE != 0 && kernel_frame(entry) {
            // A page of the boot archive (the loader mapped the program's
            // text there) stays read-only: the process gets its own copy,
            // as a private file mapping made writable does.
            batch.push(MapEntry::copy(va, va, want));
        } else {
            batch.push(MapEntry::protect_with(va, want, 0));
        }
    });
    apply(&batch).map_err(|_| ENOMEM)
}

/// Whether the page-table entry `entry` maps a kernel frame (in a
/// program's memory, only ever a page of the boot archive).
fn kernel_frame(entry: u64) -> bool {
    let pfn = (entry & pte::ADDRESS_MASK) / PAGE_SIZE;
    exposed::frame_entry(pfn).is_some_and(|f| f.owner == oxok_libos::abi::frames::OWNER_KERNEL)
}

/// The protection and sharing of the one area that holds all of
/// `[start, end)`, if one does.
pub fn area_of(start: u64, end: u64) -> Option<(u64, bool)> {
    let areas = AREAS.lock();
    let i = areas.partition_point(|a| a.end <= start);
    areas.get(i).filter(|a| a.start <= start && end <= a.end).map(|a| (a.prot, a.shared))
}

/// Grows the private area that ends at `end` to `new_end`, if nothing lies
/// in between and the range is the program's to have; false otherwise.
/// The new pages come zeroed on first touch, as the area's others.
pub fn grow(end: u64, new_end: u64) -> bool {
    if !guest_range(end, new_end) || !new_end.is_multiple_of(PAGE_SIZE) {
        return false;
    }
    let mut areas = AREAS.lock();
    let i = areas.partition_point(|a| a.end < end);
    let free_after = areas.get(i + 1).is_none_or(|next| new_end <= next.start);
    match areas.get_mut(i) {
        Some(a) if a.end == end && !a.shared && free_after => {
            a.end = new_end;
            true
        }
        _ => false,
    }
}

/// The protection of the area holding `va`.
pub fn prot_at(va: u64) -> Option<u64> {
    let areas = AREAS.lock();
    let i = areas.partition_point(|a| a.end <= va);
    areas.get(i).filter(|a| a.start <= va).map(|a| a.prot)
}

/// Unmaps every present page in `[start, end)`.
fn unmap_pages(start: u64, end: u64) {
    let mut batch = Vec::new();
    exposed::walk(start, end, |va, _| batch.push(MapEntry::unmap(va)));
    let _ = apply(&batch);
}

fn apply(records: &[MapEntry]) -> Result<(), oxok_libos::Error> {
    for chunk in records.chunks(64) {
        sys::page_batch(0, chunk.as_ptr() as u64, chunk.len() as u64)?;
    }
    Ok(())
}

/// Gives every page of `[start, end)` (page-aligned, in an area just
/// added, so none is mapped) a fresh zeroed frame with the flags of `prot`,
/// 64 pages a call (`page_batch`'s `FRESH` records: the kernel makes and
/// maps each frame), where faulting them in one by one costs three calls
/// a page. For the loader: a segment's file contents are written at once.
pub fn fill_fresh(start: u64, end: u64, prot: u64) -> Result<(), i64> {
    let records: Vec<MapEntry> =
        (start..end).step_by(PAGE_SIZE as usize).map(|va| MapEntry::fresh(va, flags(prot))).collect();
    apply(&records).map_err(|_| ENOMEM)
}

/// Maps `[start, end)` (page-aligned, in an area just added, so none is
/// mapped) read-only with the flags of `prot` (which must not allow
/// writing) to the boot archive's own pages from `src` on (a page-aligned
/// address in the exposed archive): `page_batch` `SHARE` records from the
/// archive, a run of up to `SHARE_RUN_MAX` pages each. The loader's way
/// with a read-only segment: no frame is made, zeroed or filled, and every
/// process running the program maps the same pages, as Linux maps its page
/// cache.
pub fn map_archive(start: u64, end: u64, src: u64, prot: u64) -> Result<(), i64> {
    if prot & PROT_WRITE != 0 {
        return Err(EFAULT);
    }
    // One record per aligned block of `SHARE_RUN_MAX` pages (a run).
    const BLOCK: u64 = SHARE_RUN_MAX * PAGE_SIZE;
    let mut records = Vec::new();
    let mut va = start;
    while va < end {
        let next = ((va / BLOCK) + 1).saturating_mul(BLOCK).min(end);
        records.push(MapEntry::share_run(va, src + (va - start), flags(prot), (next - va) / PAGE_SIZE));
        va = next;
    }
    apply(&records).map_err(|_| ENOMEM)
}

/// Gives the page at `va` a fresh zeroed frame with the flags of `prot`.
fn fill_zero(va: u64, prot: u64) -> Result<(), i64> {
    map_zero(va, flags(prot))
}

/// Gives the page at `va` a fresh zeroed frame with page-table `flags`.
fn map_zero(va: u64, flags: u64) -> Result<(), i64> {
    let [slot, _] = sys::frame_alloc(ANY_FRAME).map_err(|_| ENOMEM)?;
    match sys::page_map(0, slot, va, flags) {
        Ok(_) => {
            let _ = sys::cap_drop(slot);
            Ok(())
        }
        Err(_) => {
            let _ = sys::frame_free(slot);
            Err(ENOMEM)
        }
    }
}

/// The pages `[addr, addr + len)` touches (none for an empty range);
/// `EFAULT` if the range wraps.
fn pages_of(addr: u64, len: u64) -> Result<impl Iterator<Item = u64>, i64> {
    let end = if len == 0 { addr } else { addr.checked_add(len - 1).ok_or(EFAULT)? };
    let n = if len == 0 { 0 } else { (page_down(end) - page_down(addr)) / PAGE_SIZE + 1 };
    Ok((0..n).map(move |i| page_down(addr) + i * PAGE_SIZE))
}

/// Whether every page of `[addr, addr + len)` lies in an area whose
/// protection allows the access (`write`: `PROT_WRITE`; otherwise any
/// protection but `PROT_NONE`): `EFAULT` if not. The pages themselves are
/// not looked at ([`ensure`] makes them usable). The areas (page-aligned)
/// are walked from the one holding `addr`, once each.
pub fn allowed(addr: u64, len: u64, write: bool) -> Result<(), i64> {
    if len == 0 {
        return Ok(());
    }
    let last = addr.checked_add(len - 1).ok_or(EFAULT)?;
    let areas = AREAS.lock();
    let mut at = page_down(addr);
    let mut i = areas.partition_point(|a| a.end <= at);
    loop {
        let a = areas.get(i).filter(|a| a.start <= at).ok_or(EFAULT)?;
        if !(if write { a.prot & PROT_WRITE != 0 } else { a.prot != 0 }) {
            return Err(EFAULT);
        }
        if last < a.end {
            return Ok(());
        }
        (at, i) = (a.end, i + 1);
    }
}

/// Makes `[addr, addr + len)` usable for a copy by the personality: every
/// page must lie in an area whose protection allows the access
/// ([`allowed`]), and is given a frame if it has none yet (copied, for a
/// write, if shared copy-on-write). `EFAULT` otherwise.
pub fn ensure(addr: u64, len: u64, write: bool) -> Result<(), i64> {
    allowed(addr, len, write)?;
    for page in pages_of(addr, len)? {
        match exposed::pte(page) {
            None => fill_zero(page, prot_at(page).ok_or(EFAULT)?).map_err(|_| EFAULT)?,
            // Shared copy-on-write with a fork relative: copy it now, as
            // the program's own write would.
            Some(e) if write && e & pte::WRITABLE == 0 => {
                if !oxok_libos::vm::break_cow(page).unwrap_or(false) {
                    return Err(EFAULT);
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Resolves a page fault of the program at `addr`: a page with no frame
/// in an area whose protection allows the access gets one. False if the
/// fault is the program's error (Linux would send `SIGSEGV`).
pub fn fault(addr: u64, write: bool, fetch: bool) -> bool {
    let page = page_down(addr);
    let Some(prot) = prot_at(page) else { return false };
    let allowed = prot != 0 && (!write || prot & PROT_WRITE != 0) && (!fetch || prot & PROT_EXEC != 0);
    allowed && exposed::pte(page).is_none() && fill_zero(page, prot).is_ok()
}

/// The program break: where it started (end of the image) and where it is.
struct Brk {
    start: u64,
    now: u64,
}

static BRK: Mutex<Brk> = Mutex::new(Brk { start: 0, now: 0 });

/// Sets the initial break (page-aligned end of the image).
pub fn set_brk_start(start: u64) {
    *BRK.lock() = Brk { start, now: start };
}

/// `brk(addr)`: moves the break to `addr` if it can and returns where the
/// break is (Linux's raw `brk` never fails, it returns the old break).
pub fn brk(addr: u64) -> u64 {
    let mut b = BRK.lock();
    if addr < b.start || addr > b.start + crate::layout::BRK_MAX {
        return b.now;
    }
    let (Some(old_end), Some(new_end)) = (page_up(b.now), page_up(addr)) else { return b.now };
    if new_end > old_end {
        if overlaps(old_end, new_end) || add(old_end, new_end, PROT_READ | PROT_WRITE).is_err() {
            return b.now;
        }
    } else if new_end < old_end {
        remove(new_end, old_end);
    }
    b.now = addr;
    addr
}
