//! Resolving page faults: demand-zero fills and copy-on-write breaks.
//!
//! Copies go through a scratch page per nesting depth (a fault can arrive
//! while another is being resolved: a protected-control-transfer handler
//! interrupting this code writes a copy-on-write page), so two copies never
//! share a scratch mapping.

use super::{OWN_ENV_SLOT, Prot};
use crate::{exposed, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error, MapEntry};

/// Scratch pages for copies, one per nesting depth.
pub const COPY_SCRATCH: u64 = 0x5100_0000_0000;
/// Deepest nesting of copies in progress.
const MAX_DEPTH: u64 = 8;

// The fault path's own state is fork-private (`.libos_private`): it is
// written before a copy-on-write fault is resolved.
#[unsafe(link_section = ".libos_private")]
static DEPTH: AtomicU64 = AtomicU64::new(0);
/// Copy-on-write faults resolved by copying / by re-enabling write.
#[unsafe(link_section = ".libos_private")]
static COPIED: AtomicU64 = AtomicU64::new(0);
#[unsafe(link_section = ".libos_private")]
static REUSED: AtomicU64 = AtomicU64::new(0);

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

/// Replaces the mapping at `va` by a private copy with `flags`.
fn copy(va: u64, flags: u64) -> Result<(), Error> {
    let depth = DEPTH.fetch_add(1, Ordering::AcqRel);
    let result =
        if depth < MAX_DEPTH { copy_via(va, flags, COPY_SCRATCH + depth * PAGE_SIZE) } else { Err(Error::Busy) };
    DEPTH.fetch_sub(1, Ordering::AcqRel);
    result
}

fn copy_via(va: u64, flags: u64, scratch: u64) -> Result<(), Error> {
    let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
    if let Err(e) = fill(slot, va, scratch) {
        let _ = sys::frame_free(slot);
        return Err(e);
    }
    let records = [MapEntry::unmap(va), MapEntry::map(va, slot, flags)];
    let done = sys::page_batch(0, records.as_ptr() as u64, records.len() as u64);
    if done.is_err() {
        let _ = sys::frame_free(slot);
    }
    let _ = sys::cap_drop(slot);
    done.map(|_| ())
}

/// Copies the page at `va` into the frame named by capability `slot`
/// through the scratch page `scratch` (mapped only meanwhile).
fn fill(slot: u64, va: u64, scratch: u64) -> Result<(), Error> {
    sys::page_map(0, slot, scratch, pte::WRITABLE | pte::NO_EXECUTE)?;
    // SAFETY: `va` is mapped readable (the caller checked its entry) and
    // `scratch` was just mapped writable to the frame; both are whole
    // pages, distinct, and no Rust reference covers the scratch page.
    unsafe { core::ptr::copy_nonoverlapping(va as *const u8, scratch as *mut u8, PAGE_SIZE as usize) };
    sys::page_unmap(0, scratch).map(|_| ())
}

/// Copies the page at `va` into the frame named by capability `slot` (for
/// fork's private pages).
pub(super) fn copy_into(slot: u64, va: u64) -> Result<(), Error> {
    let depth = DEPTH.fetch_add(1, Ordering::AcqRel);
    let result = if depth < MAX_DEPTH { fill(slot, va, COPY_SCRATCH + depth * PAGE_SIZE) } else { Err(Error::Busy) };
    DEPTH.fetch_sub(1, Ordering::AcqRel);
    result
}
