//! Upcall kinds, for `upcall_register`. Each is a user entry point the
//! kernel transfers to when the event happens.
//!
//! Exceptions, page faults and foreign system calls are delivered on the
//! environment's exception stack ([`EXCEPTION_STACK`]): the kernel writes an
//! [`ExceptionFrame`](crate::ExceptionFrame) below the stack top (or below
//! the interrupted `rsp` when the handler itself faulted), then starts the
//! handler with `rdi` pointing at it and `rsp` just below it (as if called).
//! The handler resumes the interrupted code itself, without the kernel.

/// Any exception without a more specific entry.
pub const EXCEPTION: u64 = 0;
/// Page faults (`ExceptionFrame::addr` is the faulting address).
pub const PAGE_FAULT: u64 = 1;
/// A `syscall` whose number is not an Oxok call (Linux personality):
/// `ExceptionFrame::vector` is [`VECTOR_SYSCALL`], `regs.rip` is after the
/// instruction, `regs.rax` the number.
pub const FOREIGN_SYSCALL: u64 = 2;
/// Start of an owned time slot (the CPU issue).
pub const SLOT_START: u64 = 3;
/// End of an owned time slot (the CPU issue).
pub const SLOT_END: u64 = 4;
/// Protected control transfer entry (the CPU issue).
pub const PCT: u64 = 5;
/// Revocation request: `rdi` = frames asked for, `rsi` = deadline (TSC).
pub const REVOCATION: u64 = 6;
/// Not an entry: the top of the exception stack.
pub const EXCEPTION_STACK: u64 = 7;
/// Number of upcall kinds (including the stack).
pub const KINDS: usize = 8;

/// `ExceptionFrame::vector` for a reflected foreign system call.
pub const VECTOR_SYSCALL: u64 = 0x100;
/// Bytes below the interrupted `rsp` the kernel skips before writing a
/// nested frame (the System V red zone).
pub const RED_ZONE: u64 = 128;

/// `ExceptionFrame::vector` for a revocation request: `error` holds the
/// frames owed, `addr` the deadline (TSC).
pub const VECTOR_REVOCATION: u64 = 0x101;
