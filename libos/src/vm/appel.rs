//! The Appel–Li primitives (Appel & Li, ASPLOS 1991; Aegis §6.2, table 10)
//! as a libOS API for user-level VM algorithms — garbage collectors,
//! distributed shared memory, checkpointing — that change page protections
//! often and handle the faults themselves.
//!
//! * [`dirty`]: has the page been written? The dirty bit, read from the
//!   exposed page tables: no system call.
//! * [`prot1`] / [`prot_n`]: make pages read-only (one call; n pages go in
//!   one `page_protect_range`).
//! * [`unprot1`] / [`unprot_n`]: make pages writable again, presenting the
//!   process's own environment capability, which covers the frames it owns
//!   (so no per-frame capability has to be kept).
//! * [`set_trap`]: a handler for write faults on read-only pages in a
//!   range; it typically unprotects the page (trap), and protects another
//!   (appel1), and the faulting write then completes.

use super::OWN_ENV_SLOT;
use crate::{exposed, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::pte;
use oxok_abi::{Error, PROTECT};
use oxok_rt::fncell::FnCell;

/// True if the page holding `va` is mapped and has been written since it
/// was mapped.
pub fn dirty(va: u64) -> bool {
    exposed::pte(va).is_some_and(|e| e & pte::DIRTY != 0)
}

/// Makes the page at `va` read-only (keeps its execute permission).
pub fn prot1(va: u64) -> Result<(), Error> {
    let nx = exposed::pte(va).ok_or(Error::NotFound)? & pte::NO_EXECUTE;
    sys::page_protect(0, va, nx, PROTECT).map(|_| ())
}

/// Makes the page at `va` writable again.
pub fn unprot1(va: u64) -> Result<(), Error> {
    let nx = exposed::pte(va).ok_or(Error::NotFound)? & pte::NO_EXECUTE;
    sys::page_protect(0, va, nx | pte::WRITABLE, OWN_ENV_SLOT).map(|_| ())
}

/// Makes `pages` pages from `va` read-only: one `page_protect_range`
/// (the kernel restarts it every 512 pages).
pub fn prot_n(va: u64, pages: usize) -> Result<(), Error> {
    sys::page_protect_range(0, va, pages as u64, pte::NO_EXECUTE, PROTECT).map(|_| ())
}

/// Makes `pages` pages from `va` writable, in one `page_protect_range`
/// presenting the process's own environment capability.
pub fn unprot_n(va: u64, pages: usize) -> Result<(), Error> {
    sys::page_protect_range(0, va, pages as u64, pte::NO_EXECUTE | pte::WRITABLE, OWN_ENV_SLOT).map(|_| ())
}

/// A trap handler: gets the faulting page's address; returns true when
/// the faulting write may be retried (it made the page writable).
pub type TrapHandler = fn(page: u64) -> bool;

static TRAP: FnCell<TrapHandler> = FnCell::new();
static TRAP_START: AtomicU64 = AtomicU64::new(0);
static TRAP_END: AtomicU64 = AtomicU64::new(0);

/// Sends write faults on read-only pages in `[start, end)` to `handler`
/// (one range per process; a later call replaces it). Installs the VM
/// fault handler if needed.
pub fn set_trap(start: u64, end: u64, handler: TrapHandler) -> Result<(), Error> {
    super::init()?;
    TRAP.clear();
    TRAP_START.store(start, Ordering::Relaxed);
    TRAP_END.store(end, Ordering::Relaxed);
    TRAP.set(handler);
    Ok(())
}

/// Removes the trap handler.
pub fn clear_trap() {
    TRAP.clear();
}

/// Called by the VM fault handler for a write to a present read-only
/// page that is not copy-on-write.
pub(super) fn trap(page: u64) -> bool {
    let Some(handler) = TRAP.get() else { return false };
    if !(TRAP_START.load(Ordering::Relaxed)..TRAP_END.load(Ordering::Relaxed)).contains(&page) {
        return false;
    }
    handler(page)
}
