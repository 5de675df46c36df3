//! The region table: which ranges of the address space are demand-zero
//! and with what protection. Private to the process (a static), read by
//! the page-fault handler.

use super::{MAP_BASE, MAP_END, Prot, VmError};
use spin::Mutex;

/// Regions a process can have.
pub const MAX_REGIONS: usize = 32;

#[derive(Clone, Copy)]
struct Region {
    start: u64,
    end: u64,
    prot: Prot,
}

oxok_rt::fork_private! {
    /// Fork-private (`.libos_private`): the fault path takes its lock.
    static REGIONS: Mutex<[Option<Region>; MAX_REGIONS]> = Mutex::new([None; MAX_REGIONS]);
}

/// The protection of the region holding `va`, if any.
pub(super) fn find(va: u64) -> Option<Prot> {
    REGIONS.lock().iter().flatten().find(|r| r.start <= va && va < r.end).map(|r| r.prot)
}

/// Adds `[start, start + len)`, which must overlap no region.
pub(super) fn insert(start: u64, len: u64, prot: Prot) -> Result<(), VmError> {
    let end = start.checked_add(len).ok_or(VmError::BadRange)?;
    let mut table = REGIONS.lock();
    if table.iter().flatten().any(|r| r.start < end && start < r.end) {
        return Err(VmError::Overlap);
    }
    let free = table.iter_mut().find(|r| r.is_none()).ok_or(VmError::Full)?;
    *free = Some(Region { start, end, prot });
    Ok(())
}

/// Adds a region of `len` bytes in the map area, above every region
/// already there (addresses are never reused while the process runs, so a
/// stale pointer into an unmapped region faults instead of aliasing).
pub(super) fn place(len: u64, prot: Prot) -> Result<u64, VmError> {
    if len == 0 || !len.is_multiple_of(oxok_abi::layout::PAGE_SIZE) {
        return Err(VmError::BadRange);
    }
    let start = {
        let table = REGIONS.lock();
        let top = table.iter().flatten().filter(|r| r.start >= MAP_BASE).map(|r| r.end).max();
        // One unmapped guard page between regions.
        top.map_or(MAP_BASE, |t| t + oxok_abi::layout::PAGE_SIZE).max(NEXT.load(core::sync::atomic::Ordering::Relaxed))
    };
    let end = start.checked_add(len).filter(|&e| e <= MAP_END).ok_or(VmError::Full)?;
    insert(start, len, prot)?;
    NEXT.store(end + oxok_abi::layout::PAGE_SIZE, core::sync::atomic::Ordering::Relaxed);
    Ok(start)
}

oxok_rt::fork_private! {
    /// The lowest address [`place`] may use next.
    static NEXT: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(MAP_BASE);
}

/// Removes the regions inside `[start, end)`; every region it touches must
/// lie wholly inside it.
pub(super) fn remove(start: u64, end: u64) -> Result<(), VmError> {
    let mut table = REGIONS.lock();
    let touched = |r: &Region| r.start < end && start < r.end;
    if table.iter().flatten().any(|r| touched(r) && (r.start < start || r.end > end)) {
        return Err(VmError::BadRange);
    }
    if !table.iter().flatten().any(touched) {
        return Err(VmError::NoRegion);
    }
    for slot in table.iter_mut() {
        if slot.is_some_and(|r| touched(&r)) {
            *slot = None;
        }
    }
    Ok(())
}

/// Sets the protection of the regions inside `[start, end)` (whole
/// regions only).
pub(super) fn set_prot(start: u64, end: u64, prot: Prot) -> Result<(), VmError> {
    let mut table = REGIONS.lock();
    let touched = |r: &Region| r.start < end && start < r.end;
    if table.iter().flatten().any(|r| touched(r) && (r.start < start || r.end > end)) {
        return Err(VmError::BadRange);
    }
    let mut any = false;
    for r in table.iter_mut().flatten().filter(|r| touched(r)) {
        r.prot = prot;
        any = true;
    }
    if any { Ok(()) } else { Err(VmError::NoRegion) }
}
