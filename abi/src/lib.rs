//! # oxok-abi — the one contract between the Oxok kernel and user space
//!
//! Everything both sides must agree on lives here and nowhere else:
//!
//! * [`for_each_call!`] — the call table. The kernel generates its dispatch
//!   from it and the libOS generates its user-side stubs from it; there is no
//!   second hand-kept list.
//! * [`Error`] — the stable numeric error codes every call returns.
//! * [`layout`] — fixed user addresses (program base, stack, exposed tables).
//! * [`boot`] — the kernel command line and the QEMU exit codes the test
//!   harness reads.
//!
//! ## Register convention
//!
//! A call is one `syscall` instruction.
//!
//! | register | in | out |
//! | --- | --- | --- |
//! | `rax` | call number ([`CALL_BASE`] + index) | status: 0, or an [`Error`] code |
//! | `rdi` `rsi` `rdx` | arguments 0–2 | results 0–2 (only as many as the call declares) |
//! | `r10` `r8` `r9` | arguments 3–5 | unchanged, unless the call restarts |
//! | `rcx` `r11` | — | clobbered by the CPU (`syscall` saves `rip`/`rflags` there) |
//!
//! Every other register is preserved. Arguments travel in registers only.
//! A protected control transfer's message (argument class `Msg`) is nine
//! words in `rsi rdx r8 r9 r10 r12 r13 r14 r15` ([`regs::MSG_REGS`]); the
//! register lists and the assembly that issues a call from naked code
//! (`syscall_asm!`) are generated in [`regs`] from the same table.
//!
//! ## Atomicity (Fluke)
//!
//! No thread is ever "inside" a call. A call either completes, or fails with
//! no effect, or — when it has done part of its work — returns to user mode
//! with its argument registers advanced in place and `rip` pointing back at
//! the `syscall` instruction, so that simply continuing executes the rest.
//! A call number outside the Oxok range is not an error: it is reflected to
//! the environment's foreign-system-call upcall (the Linux personality).
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod arg_class;
pub mod boot;
#[macro_use]
mod calls;
pub mod cap_kind;
pub mod contract;
pub mod env_id;
pub mod filter;
pub mod frames;
pub use calls::{
    ACCOUNT_MAX_DEPTH, BASE_FS, BASE_GS, CAP_DERIVE_DEPTH, CAP_NAME_DEPTH, CONSOLE_WRITE_MAX, Call, NO_CAP_SLOT,
    PCT_OWED, call_target,
};
mod error;
pub mod layout;
pub mod net;
pub mod pred;
pub mod slot_placement;
pub mod slot_rows;
#[macro_use]
pub mod regs;
mod state;
pub mod upcall;
pub mod xn;

pub use error::Error;
pub use state::{
    ACCOUNT_ENVS, ACCOUNT_FRAMES, ACCOUNT_HEAP, ACCOUNT_SLOTS, ACCOUNT_UNLIMITED, ENV_CREATED, ENV_FREE, ENV_RUNNABLE,
    ENV_RUNNING, ENV_SLEEPING, ENV_STATE_VERSION, ENV_WAITING, ENV_ZOMBIE, EXIT_KILLED, EXIT_PROGRAM_BITS, EnvEntry,
    EnvState, ExceptionFrame, FCW_DEFAULT, FpuState, MAPPINGS_MAX, MXCSR_DEFAULT, MapEntry, Mapping, PctState,
    PredState, Regs, SHARE_RUN_MAX,
};

/// `frame_alloc` argument asking for any free frame.
pub const ANY_FRAME: u64 = u64::MAX;
/// `MapEntry::frame_slot` value meaning "unmap this page".
pub const UNMAP: u64 = u64::MAX;
/// `MapEntry::frame_slot` value meaning "change this page's flags" (adding
/// write only with a capability in `MapEntry::src`).
pub const PROTECT: u64 = u64::MAX - 1;
/// `MapEntry::frame_slot` value meaning "map the frame the caller maps at
/// `MapEntry::src`" (never with more rights than the caller's own mapping),
/// or, with `src` a page of the exposed boot archive
/// (`layout::BOOT_ARCHIVE`…), that page of the archive, read-only.
pub const SHARE: u64 = u64::MAX - 2;
/// `MapEntry::frame_slot` value meaning "map a fresh zeroed frame owned by
/// the target environment" (no capability is made for it: the target's own
/// environment capability covers it).
pub const FRESH: u64 = u64::MAX - 3;
/// `MapEntry::frame_slot` value meaning "map a new frame owned by the target
/// holding a copy of the page the caller maps at `MapEntry::src`, replacing
/// whatever the target maps at `va`" (copy-on-write in one record).
pub const COPY: u64 = u64::MAX - 4;
/// Records `page_batch` applies before it restarts itself, unless the
/// cmdline word `restart_records=N` says otherwise (the value in force is
/// `SysInfo::restart_records`).
pub const BATCH_STEP: u64 = 64;
/// Wakeup predicates per environment: predicate indices run 0..PREDICATES.
pub const PREDICATES: usize = 4;
/// Slots in each environment's capability list.
pub const CAP_SLOTS: usize = 64;
/// Capability rights bits.
pub mod rights {
    /// Read (map read-only, read state).
    pub const READ: u64 = 1;
    /// Write (map writable, change state, destroy).
    pub const WRITE: u64 = 2;
    /// Grant (pass on to another environment).
    pub const GRANT: u64 = 4;
    /// Call (an environment: protected control transfer to it, directed
    /// yield to it).
    pub const CALL: u64 = 16;
    /// Execute (an environment: map pages into it without `NO_EXECUTE`).
    pub const EXECUTE: u64 = 32;
}

/// The Oxok release, printed by the kernel and by init.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Oxok call numbers are `CALL_BASE + index`. The base ("ox" in ASCII) keeps
/// them clear of every Linux system-call number, so that any other number can
/// be reflected to the libOS's Linux personality.
pub const CALL_BASE: u64 = __call_base!();

/// Number of argument registers a call may use (`rdi rsi rdx r10 r8 r9`).
pub const MAX_ARGS: usize = 6;

/// Number of result registers a call may fill (`rdi rsi rdx`).
pub const MAX_RESULTS: usize = 3;

/// Counts identifiers; used by the generated code to size result arrays.
#[doc(hidden)]
#[macro_export]
macro_rules! __count {
    () => { 0usize };
    ($head:ident $($tail:ident)*) => { 1usize + $crate::__count!($($tail)*) };
}

#[cfg(test)]
mod tests;
