//! fork (Xok §5.2): a child that starts as a copy of the caller, built
//! from the exposed page tables with batched copy-on-write remapping.
//!
//! 1. `env_create`; one walk over the caller's page tables through the
//!    self-map finds the pages that must be private from the first
//!    instruction (the exception stack the kernel writes upcall frames on,
//!    the PCT stack): the child gets fresh frames there (`FRESH` records),
//!    and the caller's complete state (`env_get_state`, Fluke: upcall
//!    entries included).
//! 2. The same walk builds
//!    two record lists: SHARE records for the child (every page: writable
//!    ones read-only with `pte::LIBOS_COW`, read-only ones as they are,
//!    `pte::LIBOS_SHARED` ones shared writable), and PROTECT records that
//!    make the caller's writable pages read-only and copy-on-write.
//! 3. A short assembly routine (the runtime's `oxok_rt::fork::switch`,
//!    its calls generated from the table) takes the register snapshot and,
//!    without writing memory again, applies both batches, sets the child's
//!    state and runs it. Memory and registers are therefore one consistent
//!    picture: everything the caller wrote before the batches is in the
//!    shared frames, and everything it writes after is copied away from the
//!    child by its own copy-on-write faults. The slot end is deferred
//!    meanwhile (the critical-section flag), so no upcall handler writes a
//!    shared page between the two batches.
//!
//! The child returns from [`fork`] with [`Fork::Child`] after the hooks
//! registered with [`at_fork_child`] ran; the parent gets the child's
//! capability and id. Not reentrant: do not fork from an upcall handler.

use super::{Batch, VmError};
use crate::exec::Child;
use crate::{exposed, sys};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use oxok_abi::layout::{APP_AREA, PAGE_SIZE, pte};
use oxok_abi::{EnvState, MapEntry, SHARE_RUN_MAX};
use oxok_rt::fncell::FnCell;
use oxok_rt::fork::Side;

/// What [`fork`] returns on each side.
#[derive(Debug, PartialEq, Eq)]
pub enum Fork {
    /// In the caller: the new child (wait for it with `exec::wait`).
    Parent(Child),
    /// In the child.
    Child,
}

const HOOKS: usize = 8;
static CHILD_HOOKS: [FnCell<fn()>; HOOKS] = [const { FnCell::new() }; HOOKS];

/// Registers `hook` to run in every child of [`fork`] before `fork`
/// returns there (to refresh per-process state the memory copy carried
/// over: cached ids, descriptor bookkeeping). At most 8 hooks; registering
/// the same hook twice keeps one.
pub fn at_fork_child(hook: fn()) -> bool {
    CHILD_HOOKS.iter().any(|slot| slot.fill(hook))
}

fn run_child_hooks() {
    for hook in CHILD_HOOKS.iter().filter_map(FnCell::get) {
        hook();
    }
}

/// Pages the child gets private copies of at once (the statics the
/// page-fault path writes: `oxok_rt::fork_private!`), `[start, end)`.
fn copied_range() -> (u64, u64) {
    oxok_rt::fork::private_range()
}

/// Page ranges the child gets fresh frames for instead of shared ones:
/// stacks the kernel or the fault path write on, and the copied range.
fn private_ranges() -> [(u64, u64); 3] {
    [oxok_rt::upcall::stack_range(), crate::pct::stack_range(), copied_range()]
}

/// Makes a copy of the calling process (see the module documentation).
pub fn fork() -> Result<Fork, VmError> {
    super::init()?;
    let [slot, id] = sys::env_create()?;
    crate::callcap::pass_on(slot);
    // Descriptors: pipes register the child as a holder before it runs;
    // files get handles of the child's own.
    crate::fd::pipe::share_with(id);
    let specs = crate::fd::fork_specs(id, slot);
    match build(slot) {
        Ok(true) => {
            exposed::forget_self_id();
            run_child_hooks();
            crate::fd::adopt_fork_specs(&specs);
            Ok(Fork::Child)
        }
        Ok(false) => Ok(Fork::Parent(Child { slot, id })),
        Err(e) => {
            let _ = sys::env_destroy(slot);
            Err(e)
        }
    }
}

/// Builds and starts the child; `Ok(true)` when running as the child.
fn build(child: u64) -> Result<bool, VmError> {
    if let Some(me) = exposed::env_entry(exposed::self_id()) {
        let len = me.name.iter().position(|&b| b == 0).unwrap_or(me.name.len());
        let _ = sys::env_rename(child, me.name.as_ptr() as u64, len as u64);
    }
    let private = private_ranges();
    // One walk builds the three lists. They live on the heap, and a heap
    // that grows maps new pages: if a list had to grow during the walk (a
    // page the child would then lack), the walk runs again with room for
    // what it found. The room comes from the last fork's count, so the walk
    // normally runs once.
    let (mut fresh_pages, mut shares, mut protects) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..4 {
        let hint = PAGES_HINT.load(Ordering::Relaxed) + 64;
        fresh_pages = Vec::with_capacity(hint);
        shares = Vec::with_capacity(hint);
        protects = Vec::with_capacity(hint);
        let capacity = (fresh_pages.capacity(), shares.capacity(), protects.capacity());
        let pages = records(&private, &mut fresh_pages, &mut shares, &mut protects);
        PAGES_HINT.store(pages, Ordering::Relaxed);
        if (fresh_pages.capacity(), shares.capacity(), protects.capacity()) == capacity {
            break;
        }
    }
    // Fresh frames for the private pages that are mapped here.
    let mut fresh = Batch::new(child);
    for &(va, entry) in &fresh_pages {
        fresh_page(&mut fresh, va, entry)?;
    }
    fresh.flush()?;

    let mut state = EnvState::default();
    sys::env_get_state(0, &raw mut state as u64)?;
    let _ = exposed::set_critical(true);
    let side = oxok_rt::fork::switch(child, &shares, &protects, &mut state);
    let _ = exposed::set_critical(false);
    match side {
        Side::Child => Ok(true),
        Side::Parent(r) => r.map(|()| false).map_err(VmError::from),
    }
}

/// Pages the last fork's walk found (room for the lists of the next).
static PAGES_HINT: AtomicUsize = AtomicUsize::new(0);

/// From one walk over the caller's page tables: the private pages (in
/// `private`'s ranges) the child gets fresh frames for, the child's SHARE
/// records and the caller's PROTECT records. Returns how many pages the
/// walk found.
fn records(
    private: &[(u64, u64); 3],
    fresh: &mut Vec<(u64, u64)>,
    shares: &mut Vec<MapEntry>,
    protects: &mut Vec<MapEntry>,
) -> usize {
    let mut pages = 0;
    let keep = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
    exposed::walk(0, APP_AREA, |va, entry| {
        pages += 1;
        if private.iter().any(|&(lo, hi)| lo <= va && va < hi) {
            fresh.push((va, entry));
            return;
        }
        if (crate::exec::SCRATCH..crate::exec::SCRATCH + (1 << 30)).contains(&va) {
            return;
        }
        let flags = entry & keep;
        if flags & pte::LIBOS_SHARED != 0 {
            push_share(shares, va, flags);
        } else if flags & (pte::WRITABLE | pte::LIBOS_COW) != 0 {
            let cow = (flags & !pte::WRITABLE) | pte::LIBOS_COW;
            push_share(shares, va, cow);
            if flags & pte::WRITABLE != 0 {
                protects.push(MapEntry::protect(va, cow));
            }
        } else {
            push_share(shares, va, flags);
        }
    });
    pages
}

/// Adds a share of the page at `va` (to the same address in the child) with
/// `flags`: by lengthening the last record when it shares the pages just
/// before with the same flags and the run stays inside one aligned block of
/// `SHARE_RUN_MAX` pages (one record, checked and mapped by the kernel in
/// one step), else as a record of its own.
fn push_share(shares: &mut Vec<MapEntry>, va: u64, flags: u64) {
    const BLOCK: u64 = SHARE_RUN_MAX * PAGE_SIZE;
    if let Some(last) = shares.last_mut()
        && last.flags == flags
        && let Some((src, pages)) = last.share_source()
        && src == last.va
        && last.va + pages * PAGE_SIZE == va
        && last.va / BLOCK == va / BLOCK
    {
        *last = MapEntry::share_run(src, src, flags, pages + 1);
        return;
    }
    shares.push(MapEntry::share(va, va, flags));
}

/// Gives the child a fresh frame at `va` (a private page): a zeroed one
/// (a `FRESH` record), or a copy of this page's contents if it is in the
/// copied range (a `COPY` record).
fn fresh_page(batch: &mut Batch, va: u64, entry: u64) -> Result<(), VmError> {
    let flags = entry & (pte::WRITABLE | pte::NO_EXECUTE);
    let (lo, hi) = copied_range();
    if (lo..hi).contains(&va) {
        batch.push(MapEntry::copy(va, va, flags))
    } else {
        batch.push(MapEntry::fresh(va, flags))
    }
}
