//! The Linux program's signals: dispositions, the blocked mask, the
//! pending set, and delivery.
//!
//! **Arrival.** A signal becomes pending when the program sends it to
//! itself (`kill`, `tgkill`, `raise`), when a write meets a broken pipe
//! (`SIGPIPE`), when a child's end is first seen (`SIGCHLD`, only while
//! the program handles it), and when another process signals this one
//! through the libOS (the shell's ^C and `kill`, a Linux parent's `kill`):
//! the personality takes over the libOS's handler for every libOS signal
//! ([`init`]); in that protected-control-transfer context it only reads
//! atomics — a signal whose action is the default termination ends the
//! process there and then (as the libOS would), one that is ignored is
//! dropped, anything else is marked pending.
//!
//! **Delivery** happens when a Linux call returns, and for faults at once
//! ([`deliver_pending`], [`deliver_fault`]): the lowest pending signal not
//! blocked is taken; its default action ends the process (status 128 +
//! signal) or is nothing; a handler gets a Linux `rt_sigframe` on the
//! program's stack (or its alternate stack) with the interrupted
//! registers, the old mask and the FXSAVE image, and returns through its
//! `SA_RESTORER` trampoline into `rt_sigreturn` ([`crate::sigframe`]).
//!
//! **Waiting.** The pending word is ordinary memory of this process, so a
//! wakeup predicate can watch it: waits that should end at a signal
//! (`wait4`, `poll`, `nanosleep`) include [`watch`] in their predicate and
//! return `EINTR` ([`interrupted`]).

use crate::errno::EINTR;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ExceptionFrame;
use spin::Mutex;

/// Signals 1..=64.
pub const NSIG: u64 = 64;
pub const SIGKILL: u64 = 9;
pub const SIGSEGV: u64 = 11;
pub const SIGPIPE: u64 = 13;
pub const SIGCHLD: u64 = 17;
pub const SIGSTOP: u64 = 19;

pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_RESTART: u64 = 0x1000_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;
pub const SA_RESTORER: u64 = 0x0400_0000;

/// SIGKILL and SIGSTOP can never be blocked.
pub const UNBLOCKABLE: u64 = bit(SIGKILL) | bit(SIGSTOP);

/// The mask bit of `sig`.
pub const fn bit(sig: u64) -> u64 {
    1 << (sig - 1)
}

/// `struct sigaction` as the kernel sees it: handler, flags, restorer,
/// mask (32 bytes), per signal.
pub static ACTIONS: Mutex<[[u64; 4]; NSIG as usize]> = Mutex::new([[0; 4]; NSIG as usize]);
/// The handler word of each action again, readable without the lock (the
/// libOS's signal context may interrupt code holding it).
static HANDLERS: [AtomicU64; NSIG as usize] = [const { AtomicU64::new(SIG_DFL) }; NSIG as usize];
/// Blocked signals.
pub static MASK: AtomicU64 = AtomicU64::new(0);
/// Pending signals.
static PENDING: AtomicU64 = AtomicU64::new(0);
/// `stack_t`: sp, flags (+pad), size.
pub static ALTSTACK: Mutex<[u64; 3]> = Mutex::new([0, 2 /* SS_DISABLE */, 0]);

/// Signals whose default action is to be ignored (stops are taken as
/// ignored too: job control stops whole environments from the shell).
pub fn ignored_by_default(sig: u64) -> bool {
    matches!(sig, 17 /* CHLD */ | 18 /* CONT */ | 19 | 20 | 21 | 22 /* stops */ | 23 /* URG */ | 28 /* WINCH */)
}

/// Takes over the libOS's action for each signal it carries, so that
/// signals from other processes follow the Linux program's dispositions.
pub fn init() {
    PENDING.store(0, Ordering::Relaxed);
    for sig in 1..oxok_libos::signal::NSIG {
        let _ = oxok_libos::signal::set_handler(sig, from_libos);
    }
}

/// A signal from another process (the libOS's signal context).
fn from_libos(sig: i32) {
    let sig = sig as u64;
    if sig == 0 || sig > NSIG || crate::groups::divert(sig) {
        return;
    }
    let handler = HANDLERS[(sig - 1) as usize].load(Ordering::Acquire);
    let blocked = MASK.load(Ordering::Acquire) & bit(sig) != 0;
    match handler {
        SIG_IGN => {}
        SIG_DFL if ignored_by_default(sig) => {}
        SIG_DFL if !blocked => oxok_libos::process::exit_signalled(sig as i32),
        _ => {
            PENDING.fetch_or(bit(sig), Ordering::AcqRel);
            crate::attention::raise();
        }
    }
}

/// Records a new action for `sig` (from `rt_sigaction`).
pub fn set_action(sig: u64, action: [u64; 4]) {
    ACTIONS.lock()[(sig - 1) as usize] = action;
    HANDLERS[(sig - 1) as usize].store(action[0], Ordering::Release);
    crate::attention::raise();
    // Setting a signal to be ignored discards it if pending (POSIX).
    if action[0] == SIG_IGN || (action[0] == SIG_DFL && ignored_by_default(sig)) {
        PENDING.fetch_and(!bit(sig), Ordering::AcqRel);
    }
}

/// The handler word of `sig`.
pub fn handler(sig: u64) -> u64 {
    HANDLERS[(sig - 1) as usize].load(Ordering::Acquire)
}

/// Makes `sig` pending for the program (to be delivered when the current
/// call returns).
pub fn raise(sig: u64) {
    if (1..=NSIG).contains(&sig) {
        PENDING.fetch_or(bit(sig), Ordering::AcqRel);
        crate::attention::raise();
    }
}

/// The pending set.
pub fn pending() -> u64 {
    PENDING.load(Ordering::Acquire)
}

/// (address of the pending word, the signals that would interrupt a wait
/// now): for a wakeup predicate.
pub fn watch() -> (u64, u64) {
    (PENDING.as_ptr() as u64, !MASK.load(Ordering::Acquire) | UNBLOCKABLE)
}

/// True if a signal the program does not block is pending: a wait should
/// end with `EINTR`.
pub fn interrupted() -> bool {
    crate::timers::poll();
    crate::groups::forward_pending();
    PENDING.load(Ordering::Acquire) & (!MASK.load(Ordering::Acquire) | UNBLOCKABLE) != 0
}

/// `Err(EINTR)` if [`interrupted`].
pub fn check_interrupted() -> Result<(), i64> {
    if interrupted() { Err(EINTR) } else { Ok(()) }
}

/// In a fork child: the parent's pending signals (`at_fork`, what was
/// pending when it forked) are not inherited; signals sent to the child
/// since it exists stay.
pub fn after_fork(at_fork: u64) {
    PENDING.fetch_and(!at_fork, Ordering::AcqRel);
}

/// At `execve`: handled signals go back to their defaults (ignored ones
/// stay ignored), the alternate stack is dropped; mask and pending stay.
pub fn on_exec() {
    let mut actions = ACTIONS.lock();
    for (i, a) in actions.iter_mut().enumerate() {
        if a[0] != SIG_IGN {
            *a = [SIG_DFL, 0, 0, 0];
            HANDLERS[i].store(SIG_DFL, Ordering::Release);
        }
    }
    *ALTSTACK.lock() = [0, 2, 0];
}

/// Takes the lowest pending signal that is not blocked.
fn take() -> Option<u64> {
    loop {
        let pending = PENDING.load(Ordering::Acquire);
        let ready = pending & (!MASK.load(Ordering::Acquire) | UNBLOCKABLE);
        if ready == 0 {
            return None;
        }
        let sig = u64::from(ready.trailing_zeros()) + 1;
        if PENDING.compare_exchange(pending, pending & !bit(sig), Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Some(sig);
        }
    }
}

/// True if the program handles `SIGCHLD` (so child ends are worth
/// noticing).
fn handles_chld() -> bool {
    let h = handler(SIGCHLD);
    h != SIG_DFL && h != SIG_IGN
}

/// Notices children that ended since the last look, for a program that
/// handles `SIGCHLD`.
fn note_children() {
    if handles_chld() && crate::children::newly_ended() {
        raise(SIGCHLD);
    }
}

/// A child is being reaped whose end was not noticed yet: its `SIGCHLD`.
pub fn child_ended() {
    if handles_chld() {
        raise(SIGCHLD);
    }
}

/// True if a call's return has nothing to do here: no signal pending, no
/// mask to bring back after `rt_sigsuspend`, no `SIGCHLD` handler (whose
/// children's ends [`deliver_pending`] looks for). The fast path of
/// `on_syscall`; otherwise [`deliver_pending`] runs.
#[inline(always)]
pub fn quiet() -> bool {
    PENDING.load(Ordering::Relaxed) == 0
        && crate::calls::signal::SUSPEND_MASK.load(Ordering::Relaxed) == 0
        && !handles_chld()
}

/// Delivers pending signals as a Linux call returns (`frame.regs` already
/// hold its result). `restart`: the call may be restarted (its result was
/// `-EINTR` and it is one `SA_RESTART` restarts) — `nr` is its number.
pub fn deliver_pending(frame: &mut ExceptionFrame, nr: u64, restartable: bool) {
    note_children();
    let restart = restartable;
    // After rt_sigsuspend: the mask it replaced, which the handler's
    // return (or, without a handler, this return) brings back.
    let word = &crate::calls::signal::SUSPEND_MASK;
    let suspended = if word.load(Ordering::Acquire) != 0 { word.swap(0, Ordering::AcqRel) } else { 0 };
    let saved = (suspended != 0).then_some(suspended & !crate::calls::signal::SUSPENDED);
    let done = |saved: Option<u64>| {
        if let Some(m) = saved {
            MASK.store(m & !UNBLOCKABLE, Ordering::Release);
        }
    };
    while let Some(sig) = take() {
        let action = ACTIONS.lock()[(sig - 1) as usize];
        match action[0] {
            SIG_IGN => continue,
            SIG_DFL if ignored_by_default(sig) => continue,
            SIG_DFL => oxok_libos::process::exit_signalled(sig as i32),
            _ => {}
        }
        if restart && frame.regs.rax as i64 == -EINTR && action[1] & SA_RESTART != 0 {
            // Back onto the `syscall` instruction with the number in rax:
            // after the handler the call runs again.
            frame.regs.rax = nr;
            frame.regs.rip -= 2;
        }
        if crate::sigframe::push(frame, sig, &action, None, saved).is_err() {
            crate::die_quietly(SIGSEGV);
        }
        // One handler frame per return; others stay pending for the next.
        return;
    }
    done(saved);
}

/// A fault the program may handle (`SIGSEGV`, `SIGILL`, `SIGFPE`,
/// `SIGTRAP`): true if a handler frame was pushed; false if the default
/// action (ending the process) applies.
pub fn deliver_fault(frame: &mut ExceptionFrame, sig: u64) -> bool {
    let action = ACTIONS.lock()[(sig - 1) as usize];
    let blocked = MASK.load(Ordering::Acquire) & bit(sig) != 0;
    if action[0] == SIG_DFL || action[0] == SIG_IGN || blocked {
        return false;
    }
    crate::sigframe::push(frame, sig, &action, Some(frame.addr), None).is_ok()
}
