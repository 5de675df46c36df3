//! The protected-control-transfer entry: a private stack, the message
//! saved as a [`Msg`], the libOS's dispatch, then `pct_reply` with the
//! reply in the message registers — naked code composed of the table's
//! fragments (`oxok_abi::msg_push!`, `msg_pop!`, `syscall_asm!`), so no
//! call number or register is written here by hand.

use crate::sys::Msg;
use core::arch::naked_asm;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// What the entry calls with each transfer: the caller's id (0 for an
/// asynchronous one is never the case: the kernel always supplies it), the
/// mode (1 synchronous, 0 asynchronous) and the message, which it turns
/// into the reply in place.
pub type Dispatch = extern "C" fn(caller: u64, mode: u64, msg: &mut Msg);

/// Until the libOS sets its dispatch: every message is answered with
/// zeros.
extern "C" fn unset(_: u64, _: u64, msg: &mut Msg) {
    *msg = [0; oxok_abi::regs::MSG_WORDS];
}

/// The dispatch the entry calls through (always a [`Dispatch`]).
static DISPATCH: AtomicPtr<()> = AtomicPtr::new(unset as Dispatch as *mut ());

/// Makes the entry call `dispatch` for every transfer from now on.
pub fn set_dispatch(dispatch: Dispatch) {
    DISPATCH.store(dispatch as *mut (), Ordering::Release);
}

const STACK_SIZE: usize = 16 * 1024;
/// Page-aligned and a whole number of pages, so that fork can give a child
/// fresh frames for exactly these pages.
#[repr(C, align(4096))]
struct Stack([u8; STACK_SIZE]);
static mut PCT_STACK: Stack = Stack([0; STACK_SIZE]);

/// The top of a stack a program gave with [`set_stack`] (0: the built-in
/// one).
static STACK_TOP: AtomicU64 = AtomicU64::new(0);

/// Makes the entry run the dispatch on `stack` instead of the built-in
/// 16 KiB one. The stack is the entry's for good (the `'static mut`
/// borrow is given up).
pub fn set_stack(stack: &'static mut [u8]) {
    let top = (stack.as_mut_ptr() as u64 + stack.len() as u64) & !15;
    STACK_TOP.store(top, Ordering::Release);
}

/// The built-in stack's pages, `[start, end)`.
pub fn stack_range() -> (u64, u64) {
    let start = (&raw const PCT_STACK) as u64;
    (start, start + STACK_SIZE as u64)
}

/// The entry's address, for `upcall_register(…, PCT, …)`.
pub fn entry_address() -> u64 {
    entry as *const () as u64
}

/// The entry. The kernel enters with the caller's id in `rdi`, the mode in
/// `rcx` and the message in the message registers; `rsp` is 0.
#[unsafe(naked)]
extern "C" fn entry() -> ! {
    naked_asm!(
        "mov rsp, qword ptr [rip + {top}]",
        "test rsp, rsp",
        "jnz 2f",
        "lea rsp, [rip + {stack} + {size}]",
        "2:",
        // The message, as a `Msg` on the stack (word 0 lowest).
        oxok_abi::msg_push!(),
        "mov r13, rcx", // 1 = synchronous
        "mov rsi, rcx",
        "mov rdx, rsp",
        "sub rsp, 8", // 9 pushes: realign to 16 for the call
        "call qword ptr [rip + {dispatch}]",
        "add rsp, 8",
        // Reply to whoever is owed it (PCT_OWED, all ones) after a
        // synchronous call — the kernel knows, even after a restore
        // changed the caller's id — to nobody after an asynchronous one.
        "xor edi, edi",
        "mov r12, -1",
        "test r13, r13",
        "cmovnz rdi, r12",
        oxok_abi::msg_pop!(),
        oxok_abi::syscall_asm!(pct_reply(caller = in_place, reply = in_place)),
        // A reply that returns has failed: the caller died while this
        // environment served it. End the call with nobody to answer
        // (caller 0), which resumes this environment's own work.
        oxok_abi::syscall_asm!(pct_reply(caller = "0", reply = in_place)),
        "ud2",
        stack = sym PCT_STACK,
        size = const STACK_SIZE,
        top = sym STACK_TOP,
        dispatch = sym DISPATCH,
    )
}

const _: () = assert!(oxok_abi::PCT_OWED == u64::MAX);
