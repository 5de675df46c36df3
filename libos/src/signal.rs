//! Signals over protected control transfer (Aegis §5.1; the ExOS process
//! model of Xok §5.2, without its writable shared process table).
//!
//! **Sending.** [`kill`] makes a synchronous transfer to the target with
//! word 0 [`TAG_SIGNAL`](crate::pct::TAG_SIGNAL), word 1 the signal, word 2
//! flags, word 3 a forwarding target; the reply's word 0 is 0 (delivered)
//! or an [`Error`] code. `Busy` — from the kernel (the target is serving
//! another transfer or waiting for a reply) or from the target's libOS (the
//! code it interrupted holds the heap or descriptor-table lock) — is
//! retried [`TRIES`] times with a directed yield to the target in between.
//!
//! **Receiving.** Every program's PCT entry is registered at start
//! (`pct::init`), and its dispatch hands tagged messages to
//! [`on_message`]. The receiver's policy is the protection: a signal is
//! accepted only from the process itself or from one of its ancestors, as
//! the kernel's exposed environment table records them
//! ([`proc::is_ancestor`]), with the caller's id that the kernel adds to
//! every transfer (unforgeable). Anything else is refused with `Denied`,
//! counted, and changes nothing.
//!
//! **Delivery** runs in the PCT entry's context, like a real asynchronous
//! signal: on the entry's private stack, on the sender's time, while the
//! interrupted code (even a sleep in `env_sleep`) is frozen; afterwards it
//! continues as if nothing happened. A handler may print and allocate (the
//! libOS delivers only when the interrupted code holds neither the heap nor
//! the descriptor table, else it answers `Busy` and the sender retries),
//! but must not wait for the interrupted code. The default action of every
//! signal but [`SIGCHLD`] ends the process with status 128 + signal through
//! the normal exit path ([`crate::process::exit`]: descriptors close, pipe
//! partners see the end). [`SIGKILL`] cannot be caught or ignored. The
//! sender of a signal that ends the process sees its transfer fail with
//! `BadEnv` (the kernel's answer when a callee dies first); [`kill`]
//! reports that as delivered.
//!
//! **Destroying.** A process's libOS is its own, so a corrupted or hostile
//! one can ignore even `SIGKILL`. The creator keeps the last word: it holds
//! a capability for its child, and [`destroy`] (`env_destroy`) ends it
//! whatever its libOS does — without closing its descriptors and without a
//! zombie. So `kill(pid, SIGKILL)` goes by PCT (the child exits 137 through
//! its exit path and its parent can `wait` for it), and `destroy` is the
//! parent's last resort when that fails.
//!
//! **Forwarding** (job control from a tool). A `kill` tool run by a shell is
//! the shell's child, a sibling of its target, so its own signals are
//! refused. A process may [`accept_forwarding`]: then a child of it can ask
//! it ([`kill_via_parent`]) to send a signal in its own name — which the
//! target accepts only if the forwarding process is its ancestor. Off by
//! default; a child can never have its parent signal the parent itself.

use crate::exec::{Child, ExitStatus};
use crate::pct::{self, Msg, TAG_SIGNAL, WORDS};
use crate::proc::{self, Pid};
use crate::sys;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_abi::Error;
use spin::Mutex;

/// Hang-up.
pub const SIGHUP: i32 = 1;
/// Interrupt (^C).
pub const SIGINT: i32 = 2;
/// Quit.
pub const SIGQUIT: i32 = 3;
/// Illegal instruction.
pub const SIGILL: i32 = 4;
/// Trace/breakpoint trap.
pub const SIGTRAP: i32 = 5;
/// Abort.
pub const SIGABRT: i32 = 6;
/// Floating-point (arithmetic) exception.
pub const SIGFPE: i32 = 8;
/// Kill: cannot be caught or ignored.
pub const SIGKILL: i32 = 9;
/// User signal 1.
pub const SIGUSR1: i32 = 10;
/// Invalid memory reference.
pub const SIGSEGV: i32 = 11;
/// User signal 2.
pub const SIGUSR2: i32 = 12;
/// Broken pipe.
pub const SIGPIPE: i32 = 13;
/// Alarm.
pub const SIGALRM: i32 = 14;
/// Termination request.
pub const SIGTERM: i32 = 15;
/// A child ended (ignored by default; the libOS does not send it itself).
pub const SIGCHLD: i32 = 17;
/// Bad system call.
pub const SIGSYS: i32 = 31;
/// Signals are `1..NSIG`; 0 checks only that the target exists and would
/// accept a signal from the caller.
pub const NSIG: i32 = 32;

/// The signal Unix sends for a fault with CPU vector `vector` nobody
/// handled: divide and floating-point errors `SIGFPE`, a breakpoint
/// `SIGTRAP`, an invalid opcode `SIGILL`, any other `SIGSEGV`.
pub fn for_vector(vector: u8) -> i32 {
    match vector {
        0 | 16 | 19 => SIGFPE,
        3 => SIGTRAP,
        6 => SIGILL,
        _ => SIGSEGV,
    }
}

/// Transfers tried before [`kill`] gives up on a busy target.
pub const TRIES: u32 = 1000;
/// Of those, how many may fail with `Denied` from the kernel (a program so
/// young that its runtime has not registered its PCT entry yet).
const ENTRY_TRIES: u32 = 200;

/// Flag (word 2): forward to the process in word 3 ([`kill_via_parent`]).
const FORWARD: u64 = 1;

const NAMES: [(i32, &str); 10] = [
    (SIGHUP, "HUP"),
    (SIGINT, "INT"),
    (SIGQUIT, "QUIT"),
    (SIGKILL, "KILL"),
    (SIGUSR1, "USR1"),
    (SIGUSR2, "USR2"),
    (SIGPIPE, "PIPE"),
    (SIGALRM, "ALRM"),
    (SIGTERM, "TERM"),
    (SIGCHLD, "CHLD"),
];

/// A signal handler: runs in the PCT entry's context with the signal.
pub type Handler = fn(i32);

/// What a process does with a signal.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// The default: end the process with 128 + signal (`SIGCHLD`: nothing).
    Default,
    /// Nothing.
    Ignore,
    /// Run this handler.
    Handle(Handler),
}

/// What this process does with each signal: private memory. Delivery
/// only tries the lock (the code it interrupted may hold it, in
/// [`set_handler`]) and answers `Busy` if it is taken.
static ACTIONS: Mutex<[Action; NSIG as usize]> = Mutex::new([Action::Default; NSIG as usize]);
static FORWARDING: AtomicBool = AtomicBool::new(false);
static DELIVERED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

fn check(sig: i32) -> Result<usize, Error> {
    usize::try_from(sig).ok().filter(|&s| s < NSIG as usize).ok_or(Error::Invalid)
}

fn set(sig: i32, action: Action) -> Result<(), Error> {
    let s = check(sig)?;
    if s == 0 || sig == SIGKILL {
        return Err(Error::Invalid);
    }
    ACTIONS.lock()[s] = action;
    Ok(())
}

/// Runs `handler` when `sig` arrives. `Invalid` for `SIGKILL`, 0 and
/// numbers outside `1..NSIG`.
pub fn set_handler(sig: i32, handler: Handler) -> Result<(), Error> {
    set(sig, Action::Handle(handler))
}

/// Ignores `sig` (`Invalid` as for [`set_handler`]).
pub fn ignore(sig: i32) -> Result<(), Error> {
    set(sig, Action::Ignore)
}

/// Restores the default action of `sig`.
pub fn set_default(sig: i32) -> Result<(), Error> {
    set(sig, Action::Default)
}

/// What this process does with `sig` now.
pub fn action(sig: i32) -> Result<Action, Error> {
    let s = check(sig)?;
    Ok(ACTIONS.lock()[s])
}

/// The signal's short name (`TERM`), if it has one.
pub fn name(sig: i32) -> Option<&'static str> {
    NAMES.iter().find(|(n, _)| *n == sig).map(|(_, s)| *s)
}

/// A signal from `TERM`, `SIGTERM` or `15` (case as written).
pub fn from_name(text: &str) -> Option<i32> {
    if let Ok(n) = text.parse::<i32>() {
        return (0..NSIG).contains(&n).then_some(n);
    }
    let bare = text.strip_prefix("SIG").unwrap_or(text);
    NAMES.iter().find(|(_, s)| *s == bare).map(|(n, _)| *n)
}

/// Signals delivered to this process and refused by it so far.
pub fn stats() -> (u64, u64) {
    (DELIVERED.load(Ordering::Relaxed), REFUSED.load(Ordering::Relaxed))
}

/// Lets this process's children ask it to send signals in its name (see
/// the module documentation); off by default.
pub fn accept_forwarding(on: bool) {
    FORWARDING.store(on, Ordering::Release);
}

/// Sends `sig` to process `pid`. Errors: `Invalid` (no such signal),
/// `BadEnv` (no live process `pid`), `Denied` (no call capability for it —
/// see [`crate::callcap`] — or the target refused: the caller is not its
/// ancestor; or it accepts no transfers), `Busy` (still
/// busy after [`TRIES`] transfers). A signal to the caller itself is
/// delivered at once, without a transfer.
pub fn kill(pid: Pid, sig: i32) -> Result<(), Error> {
    check(sig)?;
    if pid == proc::pid() {
        return deliver(sig, false);
    }
    transfer(pid, [TAG_SIGNAL, sig as u64, 0, 0, 0, 0, 0, 0, 0])
}

/// Signals the caller itself (as `kill(pid(), sig)`).
pub fn raise(sig: i32) -> Result<(), Error> {
    check(sig)?;
    deliver(sig, false)
}

/// Asks the parent to send `sig` to `pid` in its own name (it must
/// [`accept_forwarding`]; `pid` must be a descendant of it other than
/// itself and the caller). Errors as [`kill`].
pub fn kill_via_parent(pid: Pid, sig: i32) -> Result<(), Error> {
    check(sig)?;
    let parent = proc::parent(proc::pid()).ok_or(Error::Denied)?;
    transfer(parent, [TAG_SIGNAL, sig as u64, FORWARD, pid, 0, 0, 0, 0, 0])
}

/// Ends `child` with the creator's capability (`env_destroy`), whatever
/// its libOS does: the last resort when [`kill`] fails. Its descriptors are
/// not closed by it (the kernel releases its memory), and it leaves no
/// zombie: the result is what [`crate::exec::wait`] would have said.
pub fn destroy(child: Child) -> Result<ExitStatus, Error> {
    sys::env_destroy(child.slot)?;
    Ok(ExitStatus::Killed(None))
}

/// One signal transfer with the retry policy of [`kill`].
fn transfer(target: Pid, msg: Msg) -> Result<(), Error> {
    for attempt in 0..TRIES {
        if !proc::alive(target) {
            return Err(Error::BadEnv);
        }
        match pct::call_reporting(target, &msg) {
            Ok((_, reply)) => match reply[0] {
                0 => return Ok(()),
                c if c == Error::Busy.code() => {}
                c => return Err(Error::from_code(c).unwrap_or(Error::Invalid)),
            },
            Err(f) => match f.error {
                Error::Busy => {}
                // No call capability for the target: nobody handed this
                // process the right to reach it, so it may not signal it.
                Error::BadCap => return Err(Error::Denied),
                Error::Denied if attempt < ENTRY_TRIES => {}
                // It had the message and ended before replying: it ended
                // while handling the signal (the default action). Gone
                // before the message reached it (after the liveness check
                // above), it never saw the signal: `BadEnv`, as if the
                // check had caught it.
                Error::BadEnv if f.reached && !proc::alive(target) => return Ok(()),
                e => return Err(e),
            },
        }
        // Let the target finish what it holds, then try again.
        if crate::callcap::yield_to(target).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
    Err(Error::Busy)
}

/// Called by the PCT dispatch for a message tagged [`TAG_SIGNAL`]; turns
/// it into the reply (word 0 the status, the rest zero).
pub(crate) fn on_message(caller: u64, _sync: bool, msg: &mut Msg) {
    let (sig, flags, target) = (msg[1], msg[2], msg[3]);
    let status = match i32::try_from(sig).ok().filter(|s| check(*s).is_ok()) {
        None => Err(Error::Invalid),
        Some(sig) if flags == FORWARD => forward(caller, target, sig),
        Some(_) if flags != 0 => Err(Error::Invalid),
        Some(sig) if caller == proc::pid() || proc::is_ancestor(caller, proc::pid()) => deliver(sig, true),
        Some(_) => {
            REFUSED.fetch_add(1, Ordering::Relaxed);
            Err(Error::Denied)
        }
    };
    *msg = [0; WORDS];
    msg[0] = status.err().map_or(0, Error::code);
}

/// A child's request to send `sig` to `target` in this process's name.
fn forward(caller: u64, target: u64, sig: i32) -> Result<(), Error> {
    let me = proc::pid();
    if !FORWARDING.load(Ordering::Acquire) || proc::parent(caller) != Some(me) || target == me {
        REFUSED.fetch_add(1, Ordering::Relaxed);
        return Err(Error::Denied);
    }
    if target == caller {
        // It waits for this reply, so it could never take the signal.
        return Err(Error::Invalid);
    }
    kill(target, sig)
}

/// Acts on an accepted signal. `interrupted`: running in the PCT entry,
/// over code that may hold the libOS's locks.
fn deliver(sig: i32, interrupted: bool) -> Result<(), Error> {
    if sig == 0 {
        return Ok(());
    }
    let busy = || interrupted && pct::interrupted_busy();
    let s = check(sig)?;
    let action = match ACTIONS.try_lock() {
        _ if sig == SIGKILL => Action::Default,
        Some(actions) => actions[s],
        None => return Err(Error::Busy),
    };
    match action {
        Action::Ignore => {}
        Action::Handle(h) => {
            if busy() {
                return Err(Error::Busy);
            }
            DELIVERED.fetch_add(1, Ordering::Relaxed);
            h(sig);
        }
        Action::Default if sig == SIGCHLD => {}
        Action::Default => {
            if busy() {
                return Err(Error::Busy);
            }
            DELIVERED.fetch_add(1, Ordering::Relaxed);
            crate::process::exit_signalled(sig);
        }
    }
    Ok(())
}
