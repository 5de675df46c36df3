//! Resolving page faults: demand-zero fills and copy-on-write breaks, one
//! `page_batch` record each (`FRESH`: a zeroed frame; `COPY`: a new frame
//! holding a copy of the page, replacing the shared mapping). The kernel
//! does the copy, so no scratch mapping is needed and nested faults cannot
//! collide on one.

use super::{OWN_ENV_SLOT, Prot};
use crate::{exposed, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{Error, MapEntry};

// The fault path's own state is fork-private (`.libos_private`): it is
// written before a copy-on-write fault is resolved.
oxok_rt::fork_private! {
    /// Copy-on-write faults resolved by copying.
    static COPIED: AtomicU64 = AtomicU64::new(0);
    /// Copy-on-write faults resolved by re-enabling write.
    static REUSED: AtomicU64 = AtomicU64::new(0);
}

/// (pages copied, pages whose write was simply re-enabled) so far.
pub fn stats() -> (u64, u64) {
    (COPIED.load(Ordering::Relaxed), REUSED.load(Ordering::Relaxed))
}

/// Maps a fresh zeroed frame at `va` with `prot` (one `FRESH` record: the
/// frame is the process's, its own capability covers it).
pub(super) fn fill_zero(va: u64, prot: Prot) -> Result<(), Error> {
    let record = [MapEntry::fresh(va, prot.flags())];
    match sys::page_batch(0, record.as_ptr() as u64, 1) {
        Ok(_) => Ok(()),
        // Someone mapped it meanwhile (a nested fault): resolved.
        Err(Error::Exists) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Breaks copy-on-write at `va`: `Ok(false)` if the page is not a
/// copy-on-write page (the fault is someone else's business).
pub fn resolve(va: u64) -> Result<bool, Error> {
    let Some(entry) = exposed::pte(va) else { return Ok(false) };
    if entry & pte::LIBOS_COW == 0 {
        return Ok(entry & pte::WRITABLE != 0);
    }
    let flags = (entry & pte::NO_EXECUTE) | pte::WRITABLE;
    let pfn = (entry & pte::ADDRESS_MASK) / PAGE_SIZE;
    let me = exposed::self_id();
    let sole = exposed::frame_entry(pfn).is_some_and(|f| u64::from(f.owner) == me && f.maps == 1);
    if sole && sys::page_protect(0, va, flags, OWN_ENV_SLOT).is_ok() {
        REUSED.fetch_add(1, Ordering::Relaxed);
        return Ok(true);
    }
    copy(va, flags)?;
    COPIED.fetch_add(1, Ordering::Relaxed);
    Ok(true)
}

/// Replaces the mapping at `va` by a private copy with `flags` (one
/// `COPY` record).
fn copy(va: u64, flags: u64) -> Result<(), Error> {
    let record = [MapEntry::copy(va, va, flags)];
    sys::page_batch(0, record.as_ptr() as u64, 1).map(|_| ())
}
