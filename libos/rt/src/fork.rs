//! Fork's switch and the fork-private section: what of `fork` must be
//! assembly or a linker section (the policy is the libOS's `vm::fork`).
//!
//! [`switch`] takes the register snapshot and, without writing memory
//! again, applies the child's SHARE batch and the caller's PROTECT batch,
//! sets the child's state and runs it. Its four calls are the table's
//! fragments (`oxok_abi::syscall_asm!`), so no number or register is
//! written here by hand.

use core::arch::naked_asm;
use core::mem::offset_of;
use oxok_abi::{Call, EnvState, Error, MapEntry, Regs};

/// Declares statics that a fork child gets private copies of from its
/// first instruction (the `.libos_private` section): the state the
/// page-fault path writes before it can resolve a copy-on-write fault.
#[macro_export]
macro_rules! fork_private {
    ($($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr;)*) => {
        $(
            $(#[$attr])*
            // SAFETY: `.libos_private` is an ordinary writable data
            // section of every program's linker script (between `.rodata`
            // and `.data`), so any static may live there.
            #[unsafe(link_section = ".libos_private")]
            $vis static $name: $t = $init;
        )*
    };
}

unsafe extern "C" {
    /// Bounds of the `.libos_private` section (`libos/user.ld`).
    static __libos_private_start: u8;
    static __libos_private_end: u8;
}

/// The pages of the fork-private section, `[start, end)`.
pub fn private_range() -> (u64, u64) {
    ((&raw const __libos_private_start) as u64, (&raw const __libos_private_end) as u64)
}

/// The register value the child finds in `rax` when it resumes.
const CHILD_MARK: u64 = 0x00_6368_696c_6400; // "child"

/// Which side [`switch`] returned on.
#[derive(Debug, PartialEq, Eq)]
pub enum Side {
    /// In the caller: the child runs (or the first failing call's error).
    Parent(Result<(), Error>),
    /// In the child, resumed from the snapshot.
    Child,
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

/// Snapshots the caller's registers into `state` (`rsp`, and `rip` at the
/// resume point; `rax` the child's mark, `rflags` interrupts on, the
/// rest 0: callee-saved registers are on the stack), then applies
/// `page_batch(child, shares)`, `page_batch(self, protects)`,
/// `env_set_state(child, state)` and `env_run(child)` with no memory write
/// after the snapshot. The child resumes here and gets [`Side::Child`].
pub fn switch(child: u64, shares: &[MapEntry], protects: &[MapEntry], state: &mut EnvState) -> Side {
    state.regs = Regs { rax: CHILD_MARK, rflags: 0x202, ..Regs::default() };
    let mut switch = Switch {
        child,
        shares: shares.as_ptr() as u64,
        share_count: shares.len() as u64,
        protects: protects.as_ptr() as u64,
        protect_count: protects.len() as u64,
        state: state as *mut EnvState as u64,
    };
    // `fork_switch` follows the C ABI and resumes the child on this very
    // stack frame, whose memory the child shares copy-on-write as it was at
    // the snapshot.
    // SAFETY: `switch` points at live record arrays and a state buffer.
    let status = unsafe { fork_switch(&raw mut switch) };
    if status == CHILD_MARK {
        return Side::Child;
    }
    Side::Parent(crate::sys::check(status))
}

/// Saves the callee-saved registers on the stack, records `rsp` and the
/// resume address in the state, then issues the four calls. Returns 0 or
/// the first failing call's status in the parent, [`CHILD_MARK`] in the
/// child.
///
/// # Safety
/// `switch` points at a [`Switch`] whose record arrays and state buffer
/// are valid for the call.
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
        // The child's SHARE batch (restarts itself in place).
        oxok_abi::syscall_asm!(page_batch(
            env_slot = "[rbx + {child}]",
            entries = "[rbx + {shares}]",
            count = "[rbx + {share_count}]"
        )),
        "test rax, rax",
        "jnz 1f",
        // The caller's PROTECT batch.
        oxok_abi::syscall_asm!(page_batch(
            env_slot = "0",
            entries = "[rbx + {protects}]",
            count = "[rbx + {protect_count}]"
        )),
        "test rax, rax",
        "jnz 1f",
        oxok_abi::syscall_asm!(env_set_state(env_slot = "[rbx + {child}]", buf = "[rbx + {state}]")),
        "test rax, rax",
        "jnz 1f",
        oxok_abi::syscall_asm!(env_run(env_slot = "[rbx + {child}]")),
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
    )
}

const _: () = assert!(Call::page_batch.args() == 3 && Call::env_set_state.args() == 2);
