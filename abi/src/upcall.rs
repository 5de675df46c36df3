//! Upcall kinds, for `upcall_register`. Each is a user entry point the
//! kernel transfers to when the event happens.
//!
//! Exceptions, page faults and foreign system calls are delivered on the
//! environment's exception stack ([`EXCEPTION_STACK`]): the kernel writes an
//! [`ExceptionFrame`](crate::ExceptionFrame) below the stack top (or below
//! the interrupted `rsp` when the handler itself faulted), then starts the
//! handler with `rdi` pointing at it, `rsi` holding the upcall kind it was
//! delivered as (one of the constants below: what the handler need not
//! derive again from the vector) and `rsp` just below it (as if called).
//! The handler resumes the interrupted code itself, without the kernel.
//!
//! The handler runs with the interrupted code's x87/SSE state (and FS/GS
//! bases) still live in the registers: the kernel neither saves nor resets
//! them for an upcall, so a handler that uses x87/SSE must save and restore
//! what it changes (FXSAVE/FXRSTOR on its exception stack) before resuming
//! the interrupted code. The same holds for a protected control transfer's
//! entry: the callee runs with its own unit state as it last left it.

/// Any exception without a more specific entry.
pub const EXCEPTION: u64 = 0;
/// Page faults (`ExceptionFrame::addr` is the faulting address).
pub const PAGE_FAULT: u64 = 1;
/// A `syscall` whose number is not an Oxok call (Linux personality):
/// `ExceptionFrame::vector` is [`VECTOR_SYSCALL`], `regs.rip` is after the
/// instruction, `rax` the number. The kernel stores only what entering the
/// handler changes or what `syscall` overwrote: `vector`, `error` and
/// `addr` (0), and of `regs` only `rip`, `rflags`, `rsp`, `rdi`, `rsi`,
/// `rcx` and `r11` (which `syscall` left equal to `rip` and `rflags`).
/// Every other register (`rax rbx rdx rbp r8`–`r15`) is
/// still the program's when the entry starts; the entry stores them into
/// `regs` itself before it needs them (the libOS runtime's foreign entry
/// does; an entry that does not sees in those fields whatever its own
/// stack held).
pub const FOREIGN_SYSCALL: u64 = 2;
/// Start of an owned time slot: delivered on the exception stack when a
/// slot the environment owns starts and it runs in it (not for spare time,
/// donated time, or the second of two adjacent owned slots, which run as one
/// stretch). `ExceptionFrame::vector` is [`VECTOR_SLOT_START`], `error` the
/// slot, `addr` the ticks it may run. With no entry it simply resumes.
pub const SLOT_START: u64 = 3;
/// End of the running environment's time slot (owned, spare or donated):
/// delivered on the exception stack when its budget is used up (or after a
/// critical section deferred it). The handler saves what it needs and calls
/// `yield_cpu` within the grace period; if it does not, the kernel preempts
/// it anyway and charges the overrun against its next slots, and after
/// `max_strikes` overruns in a row destroys it. `vector` is
/// [`VECTOR_SLOT_END`], `error` the slot. With no entry registered (or one
/// that cannot be delivered: no usable exception stack, or interrupted code
/// that has no stack of its own — `rsp` below 4096, as at the PCT entry's
/// first instruction, where a handler's resume could not put it back) the
/// kernel preempts the environment at its slot end itself, as if it had
/// yielded: nothing is charged but ticks its critical section deferred.
/// Slot-start and revocation upcalls are likewise not delivered to code
/// without a stack (the slot simply resumes it; the revocation's deadline
/// still holds).
pub const SLOT_END: u64 = 4;
/// Protected control transfer entry (the CPU issue).
pub const PCT: u64 = 5;
/// Revocation request: `rdi` = frames asked for, `rsi` = deadline (TSC).
pub const REVOCATION: u64 = 6;
/// Not an entry: the top of the exception stack.
pub const EXCEPTION_STACK: u64 = 7;
/// Number of upcall kinds (including the stack).
pub const KINDS: usize = 8;

/// CPU vector of a breakpoint (`int3`; `regs.rip` is already after it).
pub const VECTOR_BREAKPOINT: u64 = 3;
/// CPU vector of an invalid opcode (`ud2`).
pub const VECTOR_INVALID_OPCODE: u64 = 6;
/// CPU vector of a page fault (`ExceptionFrame::addr` is the faulting
/// address, `error` the CPU's error code); delivered to [`PAGE_FAULT`].
pub const VECTOR_PAGE_FAULT: u64 = 14;

/// `ExceptionFrame::vector` for a reflected foreign system call.
pub const VECTOR_SYSCALL: u64 = 0x100;
/// Bytes below the interrupted `rsp` the kernel skips before writing a
/// nested frame (the System V red zone).
pub const RED_ZONE: u64 = 128;

/// `ExceptionFrame::vector` for a revocation request: `error` holds the
/// frames owed, `addr` the deadline (TSC).
pub const VECTOR_REVOCATION: u64 = 0x101;

/// `ExceptionFrame::vector` for a slot-start upcall: `error` is the slot,
/// `addr` the ticks the environment may run in it.
pub const VECTOR_SLOT_START: u64 = 0x102;
/// `ExceptionFrame::vector` for a slot-end upcall: `error` is the slot.
pub const VECTOR_SLOT_END: u64 = 0x103;
