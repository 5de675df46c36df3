//! Translation hints: the page a write walk last found writable
//! ([`PageHint`], for one address space) and the last-level table a walk
//! last found ([`LeafHint`], for the two spaces used last), each tagged by
//! its space's root.
//!
//! A space's hints are worth having only while the kernel works on it —
//! an upcall's record goes to the same exception-stack page call after
//! call, a batch maps page after page through one table — and a fork
//! walks two spaces' tables in turn. Kept here, they cost every
//! environment nothing (they took 72 bytes of each environment's record
//! when every space held its own). A hint is only a shortcut: one that
//! misses costs a walk, and every hint is checked against the tables
//! before it is used (no table unlinked since it was made, and for a page
//! its entry unchanged). A space's root leaves here when it is freed
//! ([`forget`]), so a root frame used again starts with none.

use super::PageHint;
use super::leaf::LeafHint;
use crate::mem::addr::PhysAddr;
use core::cell::UnsafeCell;

/// The leaf hints of two spaces, way by way, which way was used last, and
/// the page hint of one (an upcall's record is written to one space's
/// exception stack at a time; a fork walks two spaces' tables in turn).
struct Ways {
    /// Each way's root (its physical address); 0 (no root is frame 0) for
    /// none.
    roots: [u64; 2],
    leaves: [LeafHint; 2],
    last: usize,
    /// The root whose page hint `page` is (0: none).
    page_root: u64,
    page: PageHint,
}

/// [`Ways`] shared as a `static`, read in place ([`ways`]) and changed
/// only by [`write`].
struct OneCpu(UnsafeCell<Ways>);

// SAFETY: the kernel runs on one CPU with interrupts off
// (docs/ARCHITECTURE.md, "Kernel"), so the cell is never used from two
// places at once.
unsafe impl Sync for OneCpu {}

static HINTS: OneCpu = OneCpu(UnsafeCell::new(Ways {
    roots: [0, 0],
    leaves: [LeafHint::NONE, LeafHint::NONE],
    last: 0,
    page_root: 0,
    page: PageHint::NONE,
}));

/// The hints, to read in place for one lookup.
///
/// # Safety
///
/// The caller drops the reference before anything can call [`write`]
/// (one CPU, interrupts off: only its own code could).
#[inline(always)]
unsafe fn ways() -> &'static Ways {
    // SAFETY: no `&mut` to the cell is live (`write`'s is dropped before
    // it returns), and the caller drops this one before any `write`.
    unsafe { &*HINTS.0.get() }
}

/// Changes the hints with `f`.
fn write(f: impl FnOnce(&mut Ways)) {
    // SAFETY: one CPU, interrupts off; `f` (an update) calls nothing that reads or writes the cell.
    f(unsafe { &mut *HINTS.0.get() })
}

/// The way holding `root`'s hints, if any.
#[inline(always)]
fn find(w: &Ways, root: PhysAddr) -> Option<usize> {
    if w.roots[0] == root.raw() {
        Some(0)
    } else if w.roots[1] == root.raw() {
        Some(1)
    } else {
        None
    }
}

/// The way for `root`'s leaf hint, taking the one used less recently (its
/// hint emptied) when it has none; it becomes the one used last.
fn take(w: &mut Ways, root: PhysAddr) -> usize {
    let i = find(w, root).unwrap_or_else(|| {
        let i = 1 - w.last.min(1);
        w.roots[i] = root.raw();
        w.leaves[i] = LeafHint::NONE;
        i
    });
    w.last = i;
    i
}

/// Where `va` is, if `root`'s page hint holds for it ([`PageHint::holds`]).
#[inline(always)]
pub(super) fn page(root: PhysAddr, va: u64) -> Option<PhysAddr> {
    // SAFETY: `w` is dropped at the end of this lookup, which calls no setter.
    let w = unsafe { ways() };
    if w.page_root == root.raw() { w.page.holds(va) } else { None }
}

/// Remembers `hint` as `root`'s page hint.
pub(super) fn set_page(root: PhysAddr, hint: PageHint) {
    write(|w| {
        w.page_root = root.raw();
        w.page = hint;
    });
}

/// `va`'s last-level table, if `root`'s leaf hint holds for it
/// ([`LeafHint::holds`]).
#[inline(always)]
pub(super) fn leaf(root: PhysAddr, va: u64, need_mark: bool) -> Option<PhysAddr> {
    // SAFETY: `w` is dropped at the end of this lookup, which calls no setter.
    let w = unsafe { ways() };
    w.leaves[find(w, root)?].holds(va, need_mark)
}

/// Remembers `hint` as `root`'s leaf hint.
pub(super) fn set_leaf(root: PhysAddr, hint: LeafHint) {
    write(|w| {
        let i = take(w, root);
        w.leaves[i] = hint;
    });
}

/// Forgets `root`'s hints (its frame is being freed).
pub(super) fn forget(root: PhysAddr) {
    write(|w| {
        if let Some(i) = find(w, root) {
            w.roots[i] = 0;
            w.leaves[i] = LeafHint::NONE;
        }
        if w.page_root == root.raw() {
            w.page_root = 0;
            w.page = PageHint::NONE;
        }
    });
}
