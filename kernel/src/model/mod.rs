//! The process execution model (Fluke §3, §5), built with the cargo
//! feature `model-process` (`cargo xtask build --model process`); without
//! it the kernel is the interrupt model: one kernel stack per CPU, every
//! call runs to completion or returns to user mode at a restart point.
//!
//! Here every environment has its own kernel stack, allocated when it is
//! created, charged to its account as [`KSTACK_HEAP`] bytes of kernel heap
//! (it is allocated there, so a heap limit bounds it), and freed
//! when its teardown finishes. Every entry from user mode lands on the
//! running environment's stack (`syscall` and the TSS's `rsp0` are switched
//! whenever a different environment is loaded). At a call's restart point
//! (`page_batch` after each `restart_records` records) the kernel lets the
//! pending timer tick in and asks the scheduler; if nothing changed, the
//! call simply goes on in the kernel (no return to user mode); if the slot
//! ended and another environment runs, the call's kernel context is saved
//! on its own stack ([`arch::kstack::block`]), the scheduler runs on the
//! per-CPU stack, and the call resumes where it stopped when its
//! environment is loaded again. Meanwhile its exported state is the
//! restart form of the call (`rip` on the `syscall`, arguments advanced),
//! exactly what the interrupt model would show: anyone who reads it sees a
//! complete state, and anyone who changes it (a state import, an upcall)
//! makes the kernel drop the saved context and resume from the new state.
//!
//! The cmdline word `restart_every` makes every restart point return to
//! user mode and re-issue the call, as the interrupt model does (the
//! bench's restart-cost table compares the two).

use crate::arch::kstack::{self, KSTACK_SIZE, KStack};
use crate::arch::trapframe::TrapFrame;
use crate::env::{EnvId, MAX_ENVS};
use crate::state::{self, Kernel};
use crate::{account, revoke, sched};
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};
use oxok_abi::{Error, Regs};
use spin::Mutex;

/// Kernel heap bytes charged to an environment's account for its kernel
/// stack (the stack is a heap allocation).
pub const KSTACK_HEAP: u64 = KSTACK_SIZE as u64;

/// Length of the `syscall` instruction.
const SYSCALL_LEN: u64 = 2;

/// One table row's kernel stack and, while its call is blocked in the
/// kernel, the saved context and the registers it was blocked with.
struct Row {
    stack: Option<KStack>,
    /// `kstack::block`'s saved stack pointer; 0: nothing blocked.
    saved: u64,
    /// The restart form of the blocked call (what its state must still be
    /// when it is resumed in the kernel).
    expect: Regs,
}

const EMPTY: Row = Row { stack: None, saved: 0, expect: Regs::ZERO };

static ROWS: Mutex<[Row; MAX_ENVS]> = Mutex::new([EMPTY; MAX_ENVS]);
/// A freed stack the CPU was still running on: dropped at the next switch.
static DEFERRED: Mutex<[Option<KStack>; 2]> = Mutex::new([None, None]);

/// No row: the per-CPU stack.
const CPU: usize = usize::MAX;
/// No row: a stack freed while the CPU still runs on it (in `DEFERRED`).
const RETIRED: usize = usize::MAX - 1;
/// The row whose stack the CPU runs on (entries from user mode land there).
static ON_STACK: AtomicUsize = AtomicUsize::new(CPU);
/// The row of the environment `sched::load` loaded last (`k.current`).
static LOADED: AtomicUsize = AtomicUsize::new(CPU);
/// Deepest use of any kernel stack seen when one was freed.
static DEEPEST: AtomicUsize = AtomicUsize::new(0);
/// `restart_every`: every restart point returns to user mode.
static RESTART_EVERY: AtomicBool = AtomicBool::new(false);

/// What [`restart_point`] decided, for [`syscall`].
static ACTION: AtomicU8 = AtomicU8::new(NONE);
const NONE: u8 = 0;
/// Re-dispatch the call from its advanced registers, in the kernel.
const AGAIN: u8 = 1;
/// The slot ended and someone else runs: block here, resume later.
const BLOCK: u8 = 2;
/// Return to user mode with the frame as it is (an upcall was delivered).
const EXIT: u8 = 3;

/// Takes the model's cmdline word; true if it was one.
pub fn config_word(word: &str) -> bool {
    if word == "restart_every" {
        RESTART_EVERY.store(true, Relaxed);
        return true;
    }
    false
}

/// Logs the model at boot.
pub fn announce() {
    log::info!(
        "execution model: process (a {} KiB kernel stack per environment{})",
        KSTACK_SIZE / 1024,
        if RESTART_EVERY.load(Relaxed) { "; restart_every" } else { "" }
    );
}

/// A kernel stack allocated and charged for an environment being created;
/// given back on drop unless [`attach`]ed.
pub struct Pending {
    stack: Option<KStack>,
    charge: Option<account::Charge>,
}

/// Allocates a kernel stack for a new environment and charges it to
/// `account` (refused with `NoMemory` if the account or the heap is full).
pub fn stack_for(account: account::AccountId) -> Result<Pending, Error> {
    let charge = account::Charge::amount(account, oxok_account::Amount::heap(KSTACK_HEAP))?;
    crate::mem::heap::reserve(KSTACK_SIZE)?;
    let stack = KStack::alloc().ok_or(Error::NoMemory)?;
    Ok(Pending { stack: Some(stack), charge: Some(charge) })
}

/// Gives the new environment `id` its stack.
pub fn attach(id: EnvId, mut p: Pending) {
    if let Some(c) = p.charge.take() {
        c.commit();
    }
    let mut rows = ROWS.lock();
    let row = &mut rows[id.row()];
    row.saved = 0;
    let old = core::mem::replace(&mut row.stack, p.stack.take());
    drop(rows);
    retire(id.row(), old);
}

/// The environment in table row `row` is torn down: its stack is freed
/// (later, if the CPU is still on it). Its charge went back with the
/// environment's (its `heap_charged` counts the stack).
pub fn release(row: usize) {
    let old = {
        let mut rows = ROWS.lock();
        let Some(r) = rows.get_mut(row) else { return };
        r.saved = 0;
        r.stack.take()
    };
    retire(row, old);
}

fn retire(row: usize, stack: Option<KStack>) {
    let Some(stack) = stack else { return };
    let used = stack.used();
    if used > DEEPEST.fetch_max(used, Relaxed) {
        log::info!("model: deepest kernel stack use so far {used} of {KSTACK_SIZE} bytes");
    }
    if ON_STACK.load(Relaxed) == row {
        // The row may be reused before the CPU leaves this stack: from here
        // on it runs on a stack of no row, and the next return to user mode
        // switches.
        ON_STACK.store(RETIRED, Relaxed);
        let mut d = DEFERRED.lock();
        if let Some(free) = d.iter_mut().find(|s| s.is_none()) {
            *free = Some(stack);
        } else {
            // Never expected (only the stack the CPU is on waits here):
            // keep it rather than free memory in use.
            core::mem::forget(stack);
            log::error!("model: no room to defer a kernel stack; leaked");
        }
    }
}

/// `sched::load` made environment `id` current.
#[inline]
pub fn loaded(id: EnvId) {
    LOADED.store(id.row(), Relaxed);
}

/// The process model's `syscall` handler (called by the entry stub in
/// `arch::kstack` with the frame at the top of the caller's own stack):
/// the interrupt model's handler, re-run in the kernel while a long call
/// has more to do, blocked and resumed when the slot ends meanwhile.
pub extern "C" fn syscall(frame: &mut TrapFrame) -> bool {
    loop {
        let fast = crate::syscall::handle(frame);
        // One CPU: a plain read, and a write only when there was something.
        let action = ACTION.load(Relaxed);
        if action != NONE {
            ACTION.store(NONE, Relaxed);
        }
        match action {
            AGAIN => continue,
            BLOCK => {
                block();
                // Resumed with its state unchanged, i.e. in the restart
                // form `restart_point` made (`rip` on the `syscall`): the
                // call goes on as from its entry, `rip` after the `syscall`
                // (else its next restart point would step back twice).
                frame.rip += SYSCALL_LEN;
            }
            EXIT => {
                state::with(|k| {
                    if revoke::pending(k) {
                        if let Some(c) = k.current {
                            revoke::enforce(k, c, frame);
                        }
                        revoke::step(k, revoke::STEP_BUDGET);
                    }
                    sched::resume(k, frame)
                });
                leave(frame);
                return false;
            }
            _ => {
                if !fast {
                    leave(frame);
                }
                return fast;
            }
        }
    }
}

/// A call of `caller` reached a restart point with work left (its frame
/// advanced, `rip` still after the `syscall`). True if the process model
/// takes it from here (see [`syscall`]); false to restart it through user
/// mode as the interrupt model does (`restart_every`, or a revocation to
/// enforce).
pub fn restart_point(k: &mut Kernel, caller: EnvId, frame: &mut TrapFrame) -> bool {
    if RESTART_EVERY.load(Relaxed) || revoke::pending(k) {
        return false;
    }
    // The kernel's preemption point: a tick that came meanwhile is counted.
    kstack::interrupt_window();
    if k.envs.reaping() {
        k.envs.reap(crate::env::REAP_BUDGET);
    }
    if k.ticked == crate::timer::ticks() {
        ACTION.store(AGAIN, Relaxed);
        return true;
    }
    // Ticks to give the scheduler: with the call in its restart form, which
    // is what anyone reading its state sees from here on.
    frame.rip -= SYSCALL_LEN;
    let form = frame.regs();
    if let Some(env) = k.envs.get(caller) {
        env.save_regs(frame);
    }
    sched::catch_up(k, frame);
    let action = if k.current == Some(caller) {
        if sched::still_running(k, caller) && frame.regs() == form {
            frame.rip += SYSCALL_LEN;
            AGAIN
        } else {
            // Its slot-end upcall was delivered (the call's restart form is
            // what the handler saved), or there is bookkeeping to do.
            EXIT
        }
    } else {
        let mut rows = ROWS.lock();
        let row = &mut rows[caller.row()];
        row.expect = form;
        BLOCK
    };
    ACTION.store(action, Relaxed);
    true
}

/// Blocks the running call: saves its kernel context on its own stack and
/// lets the scheduler pick the next environment on the per-CPU stack.
/// Returns when the call's environment is loaded again with its state
/// unchanged (resumed by [`leave`] on some other stack).
fn block() {
    kstack::block(&JUST_BLOCKED, kstack::cpu_stack_top(), blocked);
    free_deferred();
    if !RESUMED.swap(true, Relaxed) {
        log::info!("model: a blocked call resumed in the kernel on its own stack");
    }
}

/// Whether a call was blocked, and one resumed, yet (each logged once).
static BLOCKED: AtomicBool = AtomicBool::new(false);
static RESUMED: AtomicBool = AtomicBool::new(false);

/// The context `kstack::block` saved, handed from the blocked call to
/// [`blocked`] (which runs right after it on the per-CPU stack).
static JUST_BLOCKED: AtomicU64 = AtomicU64::new(0);

/// Runs on the per-CPU stack after a call blocked: records its context,
/// then loads whoever the scheduler chose.
extern "C" fn blocked() -> ! {
    let row = ON_STACK.swap(CPU, Relaxed);
    let saved = JUST_BLOCKED.swap(0, Relaxed);
    if !BLOCKED.swap(true, Relaxed) {
        log::info!("model: a call blocked at a restart point (its slot ended)");
    }
    if let Some(r) = ROWS.lock().get_mut(row)
        && let Some(stack) = &r.stack
    {
        if !stack.intact() {
            panic!("kernel stack of row {row} overflowed");
        }
        r.saved = saved;
    }
    let mut frame = TrapFrame::new_user(0, 0);
    state::with(|k| sched::resume(k, &mut frame));
    leave(&mut frame);
    crate::arch::idt::enter_user(&frame)
}

/// On the way back to user mode with `frame` (the registers of the
/// environment `sched` loaded last): if that environment is not the one
/// whose stack the CPU is on, switch — into its blocked call if it has one
/// and its state is unchanged, else to the top of its own stack with
/// `frame`. Entries from kernel mode (the idle loop) pass through.
pub fn leave(frame: &mut TrapFrame) {
    if !frame.is_user() {
        return;
    }
    let row = LOADED.load(Relaxed);
    if row == ON_STACK.load(Relaxed) {
        return;
    }
    let (top, saved) = {
        let mut rows = ROWS.lock();
        let Some(r) = rows.get_mut(row) else { return };
        let Some(stack) = &r.stack else { return };
        let saved = core::mem::take(&mut r.saved);
        let resume = saved != 0 && frame.regs() == r.expect;
        (stack.top(), if resume { saved } else { 0 })
    };
    ON_STACK.store(row, Relaxed);
    kstack::set_entry_stack(top);
    if saved != 0 {
        kstack::resume(saved);
    }
    kstack::enter(top, frame, switched_in);
}

/// First thing on an environment's own stack after a switch.
extern "C" fn switched_in() {
    free_deferred();
}

fn free_deferred() {
    let mut d = DEFERRED.lock();
    for s in d.iter_mut() {
        drop(s.take());
    }
}

/// Heap bytes held by stacks freed while the CPU still ran on them (freed
/// at the next switch): at halt, the stack of the last environment to end.
/// The leak check counts them as the CPU's, not as leaked.
pub fn deferred_bytes() -> usize {
    DEFERRED.lock().iter().flatten().count() * KSTACK_SIZE
}
