//! The kernel's handlers, as the entry stubs reach them: the kernel proper
//! registers them once with [`register`] before it enables interrupts or
//! `syscall`, and the stubs (`arch::syscall`, `arch::idt`, `arch::kstack`)
//! call through the trampolines below. This is the one way control passes
//! from the machine into the kernel after boot (boot itself enters through
//! [`crate::entry!`]).

use super::trapframe::TrapFrame;
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

/// Records the kernel's handlers. The first registration stands; later
/// ones are ignored.
pub fn register(handlers: Handlers) {
    HANDLERS.call_once(|| handlers);
}

/// Called by the `syscall` entry stubs with the frame they pushed.
pub(crate) extern "C" fn syscall(frame: *mut TrapFrame) -> bool {
    // SAFETY: the stub passes a pointer to the frame it just built on the
    // kernel stack; it is valid, aligned and exclusively ours until we return.
    let frame = unsafe { &mut *frame };
    // Nothing is registered only before `arch::init` points `syscall` here,
    // so `None` cannot happen; the full exit is the harmless answer.
    HANDLERS.get().is_some_and(|h| (h.syscall)(frame))
}

/// Called by the exception and interrupt stubs with the frame they pushed.
pub(crate) fn trap(frame: &mut TrapFrame) {
    if let Some(h) = HANDLERS.get() {
        (h.trap)(frame);
        #[cfg(feature = "model-process")]
        (h.leave)(frame);
    }
}
