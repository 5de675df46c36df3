//! The exception runtime: user-level handlers for exceptions, page faults
//! and foreign (Linux) system calls, resumed without the kernel.
//!
//! [`install`] registers one exception stack and an assembly entry for the
//! upcall kinds the kernel delivers on it (`abi::upcall::EXCEPTION`,
//! `PAGE_FAULT`, `REVOCATION`: the runtime's entry; `FOREIGN_SYSCALL`: its
//! foreign entry, the same with a shorter way back when the handler says
//! only the call's result changed, [`Outcome::Returned`]). The kernel
//! writes an [`ExceptionFrame`] below the stack top — or, while a handler
//! still runs on the stack (it faulted itself, or a protected control
//! transfer interrupted it and will resume it), below the lowest such `rsp`
//! minus the red zone — and enters the stub with `rdi` pointing at the
//! frame. The stub calls the handler the
//! program installed with [`set_handler`] for the event's [`Kind`]; the
//! handler may change `frame.regs` (skip an instruction, set a system call's
//! result). Then the stub **resumes from `frame.regs` in user mode**: every
//! general register, `rflags`, `rsp` and `rip` — the Aegis fast exception
//! path, no system call.
//!
//! # The resume sequence
//!
//! Let `T` be `regs.rsp`, the interrupted stack pointer. The stub first
//! reads `regs.rip`, `regs.rflags`, `regs.rax`, `T` and `regs.r15` into
//! registers, then stores the first three at `T-136`, `T-144` and `T-152`
//! (below the interrupted code's 128-byte red zone, which stays untouched),
//! loads the remaining registers from the frame, and switches with one
//! instruction to `rsp = T-152`; `pop rax`, `popfq` and `ret 128` (`ret`
//! pops `rip`, then adds 128) leave `rsp == T`.
//!
//! Why nothing still needed is ever overwritten:
//! * A fault in ordinary code: the frame is near the top of the exception
//!   stack, `T` is on the program's stack; the two never overlap.
//! * A fault in a handler (nested): the kernel put the nested frame wholly
//!   below `T - RED_ZONE` (16-aligned down), so at most its last 24 bytes —
//!   `regs.r15`, `regs.rip`, `regs.rflags` — lie in `[T-152, T-128)`, and
//!   the stub reads exactly those before its stores. Every other field lies
//!   below `T-152`.
//! * A fault in the resume sequence itself (say the store at `T-136` hits an
//!   unmapped stack page and the page-fault handler maps it): until the
//!   switch the stub runs on the exception stack below its frame, so the
//!   nested frame lands below the stub's `rsp` and the outer frame stays
//!   intact; the stub resumes where it stopped.
//! * A fault in a protected control transfer's handler (it runs on its own
//!   stack) that interrupted a handler here, e.g. one blocked in a call:
//!   the kernel puts the new frame below the interrupted handler's `rsp`
//!   minus the red zone, as for nesting, so the handler the transfer will
//!   resume finds its frames intact.
//! * An upcall that arrives after the switch (a later kernel may deliver
//!   asynchronous upcalls): the frame is no longer needed, and the three
//!   values still to be popped lie at or above `rsp`, where neither a
//!   nested frame (below `rsp - RED_ZONE`) nor a resume (below its own
//!   `rsp`) writes.
//!
//! Events without a handler end the program with a message, as the Unix
//! signal would (`process::exit_signalled`): page faults `SIGSEGV` (status
//! 139), invalid opcodes `SIGILL` (132), breakpoints `SIGTRAP` (133),
//! foreign system calls `SIGSYS` (159), anything else `SIGABRT` (134).
//! Revocation requests (`abi::upcall::REVOCATION`, delivered the same way)
//! without a handler are ignored; a revocation handler that declines ends
//! the program as `SIGKILL` (137).

use crate::{Error, println, sys};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_abi::ExceptionFrame;
use oxok_abi::upcall::{self as kinds, VECTOR_REVOCATION, VECTOR_SLOT_END, VECTOR_SLOT_START, VECTOR_SYSCALL};
use oxok_rt::fncell::FnCell;

/// What a handler decided.
pub use oxok_rt::upcall::Outcome;
/// The top (exclusive, 16-aligned) of the exception stack (in the runtime,
/// `oxok_rt::upcall`).
pub use oxok_rt::upcall::stack_top;
/// Bytes in the built-in exception stack; a program may give a larger
/// one of its own ([`use_stack`], before [`install`]).
pub use oxok_rt::upcall::{ExceptionStack, GUARD, STACK_SIZE, use_stack};

/// The address of the assembly entry every kind is registered with (the
/// runtime's, `oxok_rt::upcall`), which calls this module's dispatch.
pub fn entry_address() -> u64 {
    oxok_rt::upcall::set_dispatch(dispatch);
    oxok_rt::upcall::entry_address()
}

/// The address of the runtime's foreign-system-call entry, which calls
/// [`foreign_dispatch`] (or the program's [`ForeignHandler`]) and takes the
/// short way back when it can.
pub fn foreign_entry_address() -> u64 {
    oxok_rt::upcall::set_dispatch(dispatch);
    if !FOREIGN_DIRECT.load(Ordering::Acquire) {
        oxok_rt::upcall::set_foreign_dispatch(foreign_dispatch);
    }
    oxok_rt::upcall::foreign_entry_address()
}

/// A foreign-system-call handler that the runtime's foreign entry calls
/// directly, with no handler lookup, no [`Outcome`] to map and no count in
/// [`delivered`]: for a personality that takes every foreign call itself
/// (the Linux one). It returns [`foreign_returns`]`(frame, outcome)`: true
/// for the short way back.
pub type ForeignHandler = oxok_rt::upcall::ForeignDispatch;

/// Whether a [`ForeignHandler`] takes foreign calls (instead of the
/// [`Kind::ForeignSyscall`] handler through [`foreign_dispatch`]).
static FOREIGN_DIRECT: AtomicBool = AtomicBool::new(false);

/// Makes the foreign entry call `handler` for every foreign system call,
/// in place of a [`Kind::ForeignSyscall`] handler (until [`set_handler`]
/// sets one again).
pub fn set_foreign_handler(handler: ForeignHandler) {
    FOREIGN_DIRECT.store(true, Ordering::Release);
    oxok_rt::upcall::set_foreign_dispatch(handler);
}

/// The entry registered for `kind`: the foreign-call entry for foreign
/// system calls, the general one for everything else.
fn entry_for(kind: u64) -> u64 {
    if kind == kinds::FOREIGN_SYSCALL { foreign_entry_address() } else { entry_address() }
}

/// The CPU vectors programs match on, defined once in the contract.
pub use oxok_abi::upcall::{VECTOR_BREAKPOINT, VECTOR_INVALID_OPCODE, VECTOR_PAGE_FAULT};

/// A handler: inspects (and may change) the frame, then decides.
pub type Handler = fn(&mut ExceptionFrame) -> Outcome;

/// Which handler an event goes to. Each kind's number is the contract's
/// upcall kind (`oxok_abi::upcall`), so a kind means the same event on both
/// sides of the boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// CPU exceptions other than page faults (and page faults while no
    /// page-fault handler is set).
    Exception = kinds::EXCEPTION as isize,
    /// Page faults (`frame.addr` is the faulting address, `frame.error` the
    /// CPU's error code).
    PageFault = kinds::PAGE_FAULT as isize,
    /// `syscall` with a number outside the Oxok range: `regs.rax` is the
    /// number, `regs.rip` is after the instruction; the handler sets
    /// `regs.rax` to the result.
    ForeignSyscall = kinds::FOREIGN_SYSCALL as isize,
    /// A revocation request: `frame.error` is the number of frames asked
    /// for, `frame.addr` the TSC deadline. The handler gives frames back
    /// (`frame_free`) or not; either way the interrupted code resumes.
    /// Without a handler the request is ignored and the kernel's abort
    /// protocol takes what is still owed at the deadline.
    Revocation = kinds::REVOCATION as isize,
    /// The start of an owned time slot (`frame.error` the slot,
    /// `frame.addr` the ticks it may run). Without a handler the program
    /// simply resumes.
    SlotStart = kinds::SLOT_START as isize,
    /// The end of its time slot (`frame.error` the slot): the handler saves
    /// what it needs and calls `sys::yield_cpu` (the program resumes from
    /// `frame.regs` at its next turn). Without a handler the program yields
    /// at once.
    SlotEnd = kinds::SLOT_END as isize,
}

impl Kind {
    /// The handler kind for an upcall the kernel delivered as `upcall`
    /// (`abi::upcall`; the entry gets it in `rsi`), if it is one.
    pub fn of_upcall(upcall: u64) -> Option<Kind> {
        match upcall {
            kinds::EXCEPTION => Some(Kind::Exception),
            kinds::PAGE_FAULT => Some(Kind::PageFault),
            kinds::FOREIGN_SYSCALL => Some(Kind::ForeignSyscall),
            kinds::REVOCATION => Some(Kind::Revocation),
            kinds::SLOT_START => Some(Kind::SlotStart),
            kinds::SLOT_END => Some(Kind::SlotEnd),
            _ => None,
        }
    }

    /// The kind of the event a frame describes.
    pub fn of(frame: &ExceptionFrame) -> Kind {
        match frame.vector {
            VECTOR_PAGE_FAULT => Kind::PageFault,
            VECTOR_SYSCALL => Kind::ForeignSyscall,
            VECTOR_REVOCATION => Kind::Revocation,
            VECTOR_SLOT_START => Kind::SlotStart,
            VECTOR_SLOT_END => Kind::SlotEnd,
            _ => Kind::Exception,
        }
    }
}

static HANDLERS: [FnCell<Handler>; kinds::KINDS] = [const { FnCell::new() }; kinds::KINDS];

/// The upcall kinds [`install`] registers the entry for.
const REGISTERED: [u64; 4] = [kinds::EXCEPTION, kinds::PAGE_FAULT, kinds::FOREIGN_SYSCALL, kinds::REVOCATION];

oxok_rt::fork_private! {
    /// Events delivered to this program so far (all kinds, nested ones too).
    /// Written first thing on every upcall, so it lives in the fork-private
    /// section (a copy-on-write page here would fault forever).
    static DELIVERED: AtomicU64 = AtomicU64::new(0);
}

/// Installs `handler` for `kind` (replacing any earlier one; for foreign
/// system calls, also a [`ForeignHandler`]).
pub fn set_handler(kind: Kind, handler: Handler) {
    HANDLERS[kind as usize].set(handler);
    if kind == Kind::ForeignSyscall && FOREIGN_DIRECT.swap(false, Ordering::AcqRel) {
        oxok_rt::upcall::set_foreign_dispatch(foreign_dispatch);
    }
}

/// Removes the handler for `kind`; such events end the program again.
pub fn clear_handler(kind: Kind) {
    HANDLERS[kind as usize].clear();
}

/// The handler installed for `kind`, if any.
pub fn handler(kind: Kind) -> Option<Handler> {
    HANDLERS[kind as usize].get()
}

/// Number of events delivered so far.
pub fn delivered() -> u64 {
    DELIVERED.load(Ordering::Relaxed)
}

/// Registers the exception stack and the entry for exceptions, page
/// faults, foreign system calls and revocation requests with the kernel.
/// Handlers are set separately ([`set_handler`]); exceptions, faults and
/// foreign calls without one end the program, revocation requests without
/// one are ignored.
pub fn install() -> Result<(), Error> {
    protect_guard();
    sys::upcall_register(0, kinds::EXCEPTION_STACK, stack_top())?;
    for kind in REGISTERED {
        sys::upcall_register(0, kind, entry_for(kind))?;
    }
    Ok(())
}

/// Registers the exception stack and the entry for the slot-start and
/// slot-end upcalls (see [`Kind::SlotStart`], [`Kind::SlotEnd`]): from then
/// on the kernel expects this program to yield at its slot ends, and charges
/// it (and eventually destroys it) if it does not.
pub fn install_slot_handlers() -> Result<(), Error> {
    protect_guard();
    sys::upcall_register(0, kinds::EXCEPTION_STACK, stack_top())?;
    for kind in [kinds::SLOT_START, kinds::SLOT_END] {
        sys::upcall_register(0, kind, entry_address())?;
    }
    Ok(())
}

/// Makes the guard page below the exception stack read-only (removing a
/// right needs no capability). Best effort: without it, a runaway handler
/// overwrites the program's own statics before the kernel stops it.
fn protect_guard() {
    let guard = oxok_rt::upcall::guard_page();
    if crate::exposed::writable(guard) {
        let _ = sys::page_protect(0, guard, oxok_abi::layout::pte::NO_EXECUTE, oxok_abi::PROTECT);
    }
}

/// Removes the entries again (the kernel then destroys the program on
/// exceptions, faults and foreign calls, as before [`install`]).
pub fn uninstall() -> Result<(), Error> {
    for kind in REGISTERED {
        sys::upcall_register(0, kind, 0)?;
    }
    Ok(())
}

/// Called by the runtime's entry (`oxok_rt::upcall`) on the exception stack with the kernel's frame and
/// the upcall kind it was delivered as (the kernel's `rsi`, passed on
/// untouched: the kind is not derived again from the vector).
/// Returns when the interrupted code may resume from `frame.regs`.
extern "C" fn dispatch(frame: &mut ExceptionFrame, upcall: u64) {
    DELIVERED.fetch_add(1, Ordering::Relaxed);
    let kind = Kind::of_upcall(upcall).unwrap_or_else(|| Kind::of(frame));
    let chosen = match (handler(kind), kind) {
        (Some(h), _) => Some(h),
        (None, Kind::PageFault) => handler(Kind::Exception),
        (None, Kind::Revocation | Kind::SlotStart) => return,
        (None, Kind::SlotEnd) => {
            let _ = sys::yield_cpu(0);
            return;
        }
        (None, _) => None,
    };
    if !matches!(chosen.map(|h| h(frame)), Some(Outcome::Resume | Outcome::Returned)) {
        unhandled(kind, frame);
    }
}

/// RFLAGS bits that change how the next instructions run: the trap flag
/// (single-step) and alignment checking.
const FLAG_TF: u64 = 1 << 8;
const FLAG_AC: u64 = 1 << 18;

/// Called by the runtime's foreign entry with the kernel's frame of a
/// foreign system call: runs its handler. True if the handler says
/// [`Outcome::Returned`] (the short way back applies), false for a full
/// resume.
extern "C" fn foreign_dispatch(frame: &mut ExceptionFrame) -> bool {
    DELIVERED.fetch_add(1, Ordering::Relaxed);
    match handler(Kind::ForeignSyscall) {
        Some(h) => {
            let outcome = h(frame);
            foreign_returns(frame, outcome)
        }
        None => unhandled(Kind::ForeignSyscall, frame),
    }
}

/// What the foreign entry does after a foreign system call's handler said
/// `outcome`: true for the short way back ([`Outcome::Returned`]), false
/// for the full resume ([`Outcome::Resume`]); [`Outcome::Unhandled`] ends
/// the program. The short way back restores the flags a few instructions
/// before the program's `rip`: with the trap flag (single-step) or
/// alignment checking on, those would act in the libOS, so then the full
/// resume runs, which restores them with its last instruction.
#[inline(always)]
pub fn foreign_returns(frame: &ExceptionFrame, outcome: Outcome) -> bool {
    match outcome {
        Outcome::Returned => frame.regs.rflags & (FLAG_TF | FLAG_AC) == 0,
        Outcome::Resume => false,
        Outcome::Unhandled => unhandled(Kind::ForeignSyscall, frame),
    }
}

/// Ends the program for an event nobody handled.
fn unhandled(kind: Kind, frame: &ExceptionFrame) -> ! {
    use crate::signal::{SIGABRT, SIGILL, SIGKILL, SIGSEGV, SIGSYS, SIGTRAP};
    let (what, sig) = match (kind, frame.vector) {
        (Kind::PageFault, _) => ("page fault", SIGSEGV),
        (Kind::ForeignSyscall, _) => ("foreign system call", SIGSYS),
        (Kind::Revocation, _) => ("revocation request", SIGKILL),
        (Kind::SlotStart | Kind::SlotEnd, _) => ("slot upcall", SIGABRT),
        (_, VECTOR_INVALID_OPCODE) => ("invalid opcode", SIGILL),
        (_, VECTOR_BREAKPOINT) => ("breakpoint", SIGTRAP),
        _ => ("exception", SIGABRT),
    };
    println!(
        "upcall: unhandled {what} (vector {:#x}, error {:#x}, addr {:#x}, rax {:#x}) at rip {:#x}; exiting with status {}",
        frame.vector,
        frame.error,
        frame.addr,
        frame.regs.rax,
        frame.regs.rip,
        128 + sig
    );
    crate::backtrace::print(frame.regs.rip, frame.regs.rbp);
    crate::process::exit_signalled(sig)
}
