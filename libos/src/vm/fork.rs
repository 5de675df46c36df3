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
//! 3. A short assembly routine takes the register snapshot and, without
//!    writing memory again, applies both batches, sets the child's state
//!    and runs it. Memory and registers are therefore one consistent
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
use crate::{exposed, sys, upcall};
use alloc::vec::Vec;
use core::arch::naked_asm;
use core::mem::offset_of;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use oxok_abi::layout::{APP_AREA, pte};
use oxok_abi::{Call, EnvState, MapEntry, Regs};

/// What [`fork`] returns on each side.
#[derive(Debug, PartialEq, Eq)]
pub enum Fork {
    /// In the caller: the new child (wait for it with `exec::wait`).
    Parent(Child),
    /// In the child.
    Child,
}

const HOOKS: usize = 8;
static CHILD_HOOKS: [AtomicPtr<()>; HOOKS] = [const { AtomicPtr::new(core::ptr::null_mut()) }; HOOKS];

/// Registers `hook` to run in every child of [`fork`] before `fork`
/// returns there (to refresh per-process state the memory copy carried
/// over: cached ids, descriptor bookkeeping). At most 8 hooks; registering
/// the same hook twice keeps one.
pub fn at_fork_child(hook: fn()) -> bool {
    let p = hook as *mut ();
    for slot in &CHILD_HOOKS {
        match slot.compare_exchange(core::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(existing) if existing == p => return true,
            Err(_) => {}
        }
    }
    false
}

fn run_child_hooks() {
    for slot in &CHILD_HOOKS {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: only `fn()` pointers are stored (`at_fork_child`).
            let hook = unsafe { core::mem::transmute::<*mut (), fn()>(p) };
            hook();
        }
    }
}

unsafe extern "C" {
    /// Bounds of the `.libos_private` section (`libos/user.ld`).
    static __libos_private_start: u8;
    static __libos_private_end: u8;
}

/// Pages the child gets private copies of at once (the statics the
/// page-fault path writes), `[start, end)`.
fn copied_range() -> (u64, u64) {
    ((&raw const __libos_private_start) as u64, (&raw const __libos_private_end) as u64)
}

/// Page ranges the child gets fresh frames for instead of shared ones:
/// stacks the kernel or the fault path write on, and the copied range.
fn private_ranges() -> [(u64, u64); 3] {
    let exc_top = upcall::stack_top();
    [(exc_top - upcall::STACK_SIZE as u64, exc_top), crate::pct::stack_range(), copied_range()]
}

/// The register value the child finds in `rax` when it resumes.
const CHILD_MARK: u64 = 0x00_6368_696c_6400; // "child"

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
    let is_private = |va: u64| private.iter().any(|&(lo, hi)| lo <= va && va < hi);
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
        let pages = records(&is_private, &mut fresh_pages, &mut shares, &mut protects);
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
    state.regs = Regs { rax: CHILD_MARK, rflags: 0x202, ..Regs::default() };
    let mut switch = Switch {
        child,
        shares: shares.as_ptr() as u64,
        share_count: shares.len() as u64,
        protects: protects.as_ptr() as u64,
        protect_count: protects.len() as u64,
        state: &raw mut state as u64,
    };
    let _ = exposed::set_critical(true);
    // SAFETY: `switch` points at valid record arrays and a state buffer that
    // stay alive across the call; `fork_switch` follows the C ABI and
    // resumes the child on this very stack frame (see the module docs).
    let status = unsafe { fork_switch(&raw mut switch) };
    let _ = exposed::set_critical(false);
    if status == CHILD_MARK {
        return Ok(true);
    }
    sys::check(status)?;
    Ok(false)
}

/// Pages the last fork's walk found (room for the lists of the next).
static PAGES_HINT: AtomicUsize = AtomicUsize::new(0);

/// From one walk over the caller's page tables: the private pages the
/// child gets fresh frames for, the child's SHARE records and the caller's
/// PROTECT records. Returns how many pages the walk found.
fn records(
    is_private: &dyn Fn(u64) -> bool,
    fresh: &mut Vec<(u64, u64)>,
    shares: &mut Vec<MapEntry>,
    protects: &mut Vec<MapEntry>,
) -> usize {
    let mut pages = 0;
    let keep = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
    exposed::walk(0, APP_AREA, |va, entry| {
        pages += 1;
        if is_private(va) {
            fresh.push((va, entry));
            return;
        }
        if (crate::exec::SCRATCH..crate::exec::SCRATCH + (1 << 30)).contains(&va) {
            return;
        }
        let flags = entry & keep;
        if flags & pte::LIBOS_SHARED != 0 {
            shares.push(MapEntry::share(va, va, flags));
        } else if flags & (pte::WRITABLE | pte::LIBOS_COW) != 0 {
            let cow = (flags & !pte::WRITABLE) | pte::LIBOS_COW;
            shares.push(MapEntry::share(va, va, cow));
            if flags & pte::WRITABLE != 0 {
                protects.push(MapEntry::protect(va, cow));
            }
        } else {
            shares.push(MapEntry::share(va, va, flags));
        }
    });
    pages
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

/// What [`fork_switch`] needs, in memory it reads before the batches.
#[repr(C)]
struct Switch {
    child: u64,
    shares: u64,
    share_count: u64,
    protects: u64,
    protect_count: u64,
    state: u64,
}

/// Saves the callee-saved registers on the stack, records `rsp` and the
/// resume address in the state, then applies the child's SHARE batch, the
/// caller's PROTECT batch, sets the child's state and runs it — with no
/// memory write after the snapshot. Returns 0 or the first failing call's
/// status in the parent, [`CHILD_MARK`] in the child.
#[unsafe(naked)]
unsafe extern "C" fn fork_switch(switch: *mut Switch) -> u64 {
    naked_asm!(
        "push rbx",
        "push rbp",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "mov rbx, rdi",
        "mov rax, [rbx + {state}]",
        "mov [rax + {rsp}], rsp",
        "lea rcx, [rip + 2f]",
        "mov [rax + {rip}], rcx",
        // page_batch(child, shares, count): restarts itself in place.
        "mov rax, {batch}",
        "mov rdi, [rbx + {child}]",
        "mov rsi, [rbx + {shares}]",
        "mov rdx, [rbx + {share_count}]",
        "syscall",
        "test rax, rax",
        "jnz 1f",
        // page_batch(self, protects, count)
        "mov rax, {batch}",
        "xor edi, edi",
        "mov rsi, [rbx + {protects}]",
        "mov rdx, [rbx + {protect_count}]",
        "syscall",
        "test rax, rax",
        "jnz 1f",
        // env_set_state(child, state)
        "mov rax, {set_state}",
        "mov rdi, [rbx + {child}]",
        "mov rsi, [rbx + {state}]",
        "syscall",
        "test rax, rax",
        "jnz 1f",
        // env_run(child)
        "mov rax, {run}",
        "mov rdi, [rbx + {child}]",
        "syscall",
        "1:",
        "2:",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbp",
        "pop rbx",
        "ret",
        state = const offset_of!(Switch, state),
        child = const offset_of!(Switch, child),
        shares = const offset_of!(Switch, shares),
        share_count = const offset_of!(Switch, share_count),
        protects = const offset_of!(Switch, protects),
        protect_count = const offset_of!(Switch, protect_count),
        rsp = const offset_of!(EnvState, regs) + offset_of!(Regs, rsp),
        rip = const offset_of!(EnvState, regs) + offset_of!(Regs, rip),
        batch = const Call::page_batch.number(),
        set_state = const Call::env_set_state.number(),
        run = const Call::env_run.number(),
    )
}
