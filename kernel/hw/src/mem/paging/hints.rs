//! Translation hints for the two address spaces used last: the page a
//! write walk last found writable ([`PageHint`]) and the last-level table a
//! walk last found ([`LeafHint`]), each tagged by its space's root.
//!
//! A space's hints are worth having only while the kernel works on it —
//! an upcall's record goes to the same exception-stack page call after
//! call, a batch maps page after page through one table — and a fork
//! alternates between two spaces. Kept here for two spaces, they cost
//! every environment nothing (they took 72 bytes of each environment's
//! record when every space held its own). A hint is only a shortcut: one
//! that misses costs a walk, and every hint is checked against the tables
//! before it is used (no table unlinked since it was made, and for a page
//! its entry unchanged). A space's root leaves here when it is freed
//! ([`forget`]), so a root frame used again starts with none.

use super::PageHint;
use super::leaf::LeafHint;
use crate::mem::addr::PhysAddr;
use core::cell::Cell;

/// Two spaces' hints, way by way, and which way was used last.
struct Ways {
    /// Each way's root (its physical address); 0 (no root is frame 0) for
    /// none.
    roots: [Cell<u64>; 2],
    pages: [Cell<PageHint>; 2],
    leaves: [Cell<LeafHint>; 2],
    last: Cell<usize>,
}

/// [`Ways`] shared as a `static`.
struct OneCpu(Ways);

// SAFETY: the kernel runs on one CPU with interrupts off
// (docs/ARCHITECTURE.md, "Kernel"), so these cells are never used from two
// places at once; they hold plain values copied in and out, and no
// reference into them is ever handed out.
unsafe impl Sync for OneCpu {}

static HINTS: OneCpu = OneCpu(Ways {
    roots: [Cell::new(0), Cell::new(0)],
    pages: [Cell::new(PageHint::NONE), Cell::new(PageHint::NONE)],
    leaves: [Cell::new(LeafHint::NONE), Cell::new(LeafHint::NONE)],
    last: Cell::new(0),
});

/// The way holding `root`'s hints, if any.
#[inline(always)]
fn find(root: PhysAddr) -> Option<usize> {
    let roots = &HINTS.0.roots;
    if roots[0].get() == root.raw() {
        Some(0)
    } else if roots[1].get() == root.raw() {
        Some(1)
    } else {
        None
    }
}

/// The way for `root`'s hints, taking the one used less recently (its
/// hints emptied) when it has none; it becomes the one used last.
fn take(root: PhysAddr) -> usize {
    let h = &HINTS.0;
    let i = find(root).unwrap_or_else(|| {
        let i = 1 - h.last.get().min(1);
        h.roots[i].set(root.raw());
        h.pages[i].set(PageHint::NONE);
        h.leaves[i].set(LeafHint::NONE);
        i
    });
    h.last.set(i);
    i
}

/// `root`'s page hint ([`PageHint::NONE`] if it has none here).
#[inline(always)]
pub(super) fn page(root: PhysAddr) -> PageHint {
    find(root).map_or(PageHint::NONE, |i| HINTS.0.pages[i].get())
}

/// Remembers `hint` as `root`'s page hint.
pub(super) fn set_page(root: PhysAddr, hint: PageHint) {
    HINTS.0.pages[take(root)].set(hint);
}

/// `root`'s leaf hint ([`LeafHint::NONE`] if it has none here).
#[inline(always)]
pub(super) fn leaf(root: PhysAddr) -> LeafHint {
    find(root).map_or(LeafHint::NONE, |i| HINTS.0.leaves[i].get())
}

/// Remembers `hint` as `root`'s leaf hint.
pub(super) fn set_leaf(root: PhysAddr, hint: LeafHint) {
    HINTS.0.leaves[take(root)].set(hint);
}

/// Forgets `root`'s hints (its frame is being freed).
pub(super) fn forget(root: PhysAddr) {
    if let Some(i) = find(root) {
        HINTS.0.roots[i].set(0);
        HINTS.0.pages[i].set(PageHint::NONE);
        HINTS.0.leaves[i].set(LeafHint::NONE);
    }
}
