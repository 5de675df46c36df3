//! The kernel's handlers, as the entry stubs reach them: the kernel proper
//! registers them once with [`register`] before it enables interrupts or
//! `syscall`; the `syscall` stubs (`arch::syscall`, `arch::kstack`) call
//! the registered `syscall` handler through [`SYSCALL`] directly, the
//! exception and interrupt stubs (`arch::idt`) call the trampoline
//! [`trap`]. This is the one way control passes
//! from the machine into the kernel after boot (boot itself enters through
//! [`crate::entry!`]).

use super::trapframe::TrapFrame;
use core::sync::atomic::{AtomicPtr, Ordering};
use spin::Once;

/// What the entry stubs call.
pub struct Handlers {
    /// A `syscall` from user mode; true for the fast return (`sysret` with
    /// the frame changed only in the result registers), false for the full
    /// exit through `exit_to_user`.
    pub syscall: extern "C" fn(&mut TrapFrame) -> bool,
    /// An exception or interrupt, from user or kernel mode.
    pub trap: fn(&mut TrapFrame),
    /// The process model: run after [`Handlers::trap`] before the stub
    /// returns (switches to the stack of the environment to resume).
    #[cfg(feature = "model-process")]
    pub leave: fn(&mut TrapFrame),
}

static HANDLERS: Once<Handlers> = Once::new();

/// The type of [`Handlers::syscall`].
type SyscallHandler = extern "C" fn(&mut TrapFrame) -> bool;

/// The registered [`Handlers::syscall`], which the `syscall` entry stubs
/// call through directly (`call *SYSCALL(%rip)`: one instruction, as a
/// direct call; no trampoline, no check on the way). Always a
/// [`SyscallHandler`]: [`unregistered`] until [`register`].
pub(crate) static SYSCALL: AtomicPtr<()> = AtomicPtr::new(unregistered as SyscallHandler as *mut ());

/// Before registration (which precedes `arch::init`, so no `syscall` can
/// come here): the full exit, the harmless answer.
extern "C" fn unregistered(_: &mut TrapFrame) -> bool {
    false
}

/// Records the kernel's handlers. The first registration stands; later
/// ones are ignored.
pub fn register(handlers: Handlers) {
    HANDLERS.call_once(|| {
        SYSCALL.store(handlers.syscall as *mut (), Ordering::Release);
        handlers
    });
}

/// Called by the exception and interrupt stubs with the frame they pushed.
pub(crate) fn trap(frame: &mut TrapFrame) {
    if let Some(h) = HANDLERS.get() {
        (h.trap)(frame);
        #[cfg(feature = "model-process")]
        (h.leave)(frame);
    }
}
