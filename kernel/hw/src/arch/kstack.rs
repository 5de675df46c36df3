//! The process model's machine part (`--features model-process`): a kernel
//! stack per environment, the `syscall` entry that lands on it, and the
//! three stack moves the model needs — block (save this kernel context and
//! continue on another stack), resume (return into a saved context) and
//! enter (return to user mode from an environment's own stack). The policy
//! (when to block, whom to resume) is the kernel's `model`.
//!
//! Every stack is a zeroed heap allocation of [`KSTACK_SIZE`] bytes. Its
//! lowest [`CANARY`] bytes must stay zero: they are checked when a call
//! blocks on it and when it is freed, so an overflow that writes them stops
//! the machine (a kernel bug). A frame larger than the canary can still
//! step over it: the stack is sized for the deepest path measured (see
//! [`KSTACK_SIZE`]).

use super::gdt::{USER_CS, USER_DS};
use super::trapframe::{TrapFrame, VECTOR_SYSCALL};
use alloc::alloc::{Layout, alloc_zeroed, dealloc};
use core::arch::{asm, global_asm};
use core::ptr::NonNull;

/// Bytes of each environment's kernel stack. The deepest use measured in
/// the whole test suite is about 18 KiB (`EnvTable::create` alone has a
/// 16 KiB frame: the environment record and its capability list are built
/// on the stack before they move to the heap); 16 KiB overflowed.
pub const KSTACK_SIZE: usize = 32 * 1024;
/// Bytes at the bottom of a stack that must never be written.
pub const CANARY: usize = 256;
const ALIGN: usize = 64;

/// One environment's kernel stack (freed on drop).
pub struct KStack {
    base: NonNull<u8>,
}

// SAFETY: a `KStack` is only an owned allocation; the kernel runs on one CPU
// with interrupts off while it touches the table that holds them.
unsafe impl Send for KStack {}

impl KStack {
    /// A zeroed stack, or `None` if the heap has no room for it.
    pub fn alloc() -> Option<KStack> {
        let layout = Layout::from_size_align(KSTACK_SIZE, ALIGN).ok()?;
        // SAFETY: the layout has a nonzero size; a null result is handled.
        let p = unsafe { alloc_zeroed(layout) };
        NonNull::new(p).map(|base| KStack { base })
    }

    /// The top (highest address, exclusive, 16-byte aligned).
    pub fn top(&self) -> u64 {
        self.base.as_ptr() as u64 + KSTACK_SIZE as u64
    }

    /// True if the canary at the bottom is still all zero.
    pub fn intact(&self) -> bool {
        // SAFETY: the first `CANARY` bytes are part of the allocation (which
        // is 64-byte aligned) and nothing holds a reference to them.
        let low = unsafe { core::slice::from_raw_parts(self.base.as_ptr().cast::<u64>(), CANARY / 8) };
        low.iter().all(|&w| w == 0)
    }

    /// Deepest use so far in bytes (from the top down to the lowest byte
    /// that is no longer zero; a high-water mark, since stacks start zeroed).
    pub fn used(&self) -> usize {
        // SAFETY: the whole allocation is readable; the part in use is only
        // read (as bytes) while the stack is not running (one CPU, no
        // interrupts) or above the reader's own frame.
        let all = unsafe { core::slice::from_raw_parts(self.base.as_ptr().cast::<u64>(), KSTACK_SIZE / 8) };
        KSTACK_SIZE - 8 * all.iter().position(|&w| w != 0).unwrap_or(KSTACK_SIZE / 8)
    }
}

impl Drop for KStack {
    fn drop(&mut self) {
        if !self.intact() {
            panic!("kernel stack at {:#x} overflowed", self.base.as_ptr() as u64);
        }
        if let Ok(layout) = Layout::from_size_align(KSTACK_SIZE, ALIGN) {
            // SAFETY: allocated by `alloc` with this layout; the owner
            // (the kernel's `model`) drops it only when no CPU runs on it.
            unsafe { dealloc(self.base.as_ptr(), layout) }
        }
    }
}

/// Kernel stack top for the next `syscall` (the running environment's).
#[unsafe(no_mangle)]
static mut KSTACK_SYSCALL_TOP: u64 = 0;
/// Where the entry stub parks the user `rsp` while it switches stacks.
#[unsafe(no_mangle)]
static mut KSTACK_USER_RSP: u64 = 0;

/// Where the next entry from user mode lands: `syscall` and the TSS's
/// `rsp0` (interrupts and exceptions) both get `top`.
pub fn set_entry_stack(top: u64) {
    // SAFETY: one CPU, interrupts off in the kernel: nothing reads the
    // variable until the next entry from user mode, which wants this value.
    unsafe { KSTACK_SYSCALL_TOP = top };
    super::gdt::set_rsp0(top);
}

/// The per-CPU (boot) stack, on which the process model's scheduler runs
/// after a call blocks.
pub fn cpu_stack_top() -> u64 {
    super::stack::kernel_stack_top()
}

global_asm!(
    r#"
    .section .text.kstack, "ax"
    .global kstack_syscall_entry
kstack_syscall_entry:
    mov %rsp, KSTACK_USER_RSP(%rip)
    mov KSTACK_SYSCALL_TOP(%rip), %rsp
    push ${user_ds}
    push KSTACK_USER_RSP(%rip)
    push %r11
    push ${user_cs}
    push %rcx
    push $0
    push ${vector}
    push %rax
    push %rbx
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %rbp
    push %r8
    push %r9
    push %r10
    push %r11
    push %r12
    push %r13
    push %r14
    push %r15
    /* model::syscall(&mut TrapFrame) -> bool, registered, called through
       handlers::SYSCALL: the frame is at the top of this environment's own
       kernel stack (valid, aligned, ours until the return). True: the fast
       return. */
    mov %rsp, %rdi
    call *{entry}(%rip)
    test %al, %al
    jz exit_to_user
    mov 136(%rsp), %rax
    shr $47, %rax
    jnz exit_to_user
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
    mov 40(%rsp), %rsp
    sysretq

    /* kstack_block(save: *mut u64, top: u64, then: extern fn() -> !):
       pushes the callee-saved registers, stores rsp in *save, and calls
       `then` at the top of another stack. kstack_resume(saved) returns from
       this call in the saved context. */
    .global kstack_block
kstack_block:
    push %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    mov %rsp, (%rdi)
    mov %rsi, %rsp
    call *%rdx
    ud2

    .global kstack_resume
kstack_resume:
    mov %rdi, %rsp
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

    /* kstack_enter(frame: u64, then: extern fn()): rsp := frame (a user
       TrapFrame already written there), calls `then`, returns to user mode
       through exit_to_user. */
    .global kstack_enter
kstack_enter:
    mov %rdi, %rsp
    call *%rsi
    jmp exit_to_user
    "#,
    user_ds = const USER_DS as u64,
    user_cs = const USER_CS as u64,
    vector = const VECTOR_SYSCALL,
    entry = sym super::handlers::SYSCALL,
    options(att_syntax)
);

unsafe extern "C" {
    fn kstack_syscall_entry();
    fn kstack_block(save: *mut u64, top: u64, then: extern "C" fn() -> !);
    fn kstack_resume(saved: u64) -> !;
    fn kstack_enter(frame: u64, then: extern "C" fn()) -> !;
}

/// Points `syscall` at the process model's entry stub.
pub fn init() {
    const MSR_LSTAR: u32 = 0xC000_0082;
    // SAFETY: the stub above is a complete `syscall` entry (same frame and
    // exits as `arch::syscall`'s), differing only in the stack it uses.
    unsafe { super::cpu::wrmsr(MSR_LSTAR, kstack_syscall_entry as *const () as u64) };
}

/// Saves the running kernel context (callee-saved registers and the return
/// into this call) on the current stack, stores where in `*save`, and runs
/// `then` on the stack whose top is `top`. Returns when someone passes the
/// saved value to [`resume`]. `save` is written before `then` runs.
pub fn block(save: &core::sync::atomic::AtomicU64, top: u64, then: extern "C" fn() -> !) {
    // The context saved here stays valid: its stack is not freed while its
    // environment lives, and is never resumed once it does not.
    // SAFETY: `top` is the top of a stack nothing runs on (the per-CPU
    // stack, idle once the process model blocks a call).
    unsafe { kstack_block(save.as_ptr(), top, then) }
}

/// Returns into a context saved by [`block`]; the current stack is
/// abandoned.
pub fn resume(saved: u64) -> ! {
    // SAFETY: `saved` was stored by `block` on a stack that is still
    // allocated, and nothing ran on that stack since (its environment was
    // blocked in the kernel).
    unsafe { kstack_resume(saved) }
}

/// Returns to user mode with `frame` from the top of the stack `top`
/// (the frame is copied there), calling `then` once on that stack first;
/// the current stack is abandoned.
pub fn enter(top: u64, frame: &TrapFrame, then: extern "C" fn()) -> ! {
    let at = top - size_of::<TrapFrame>() as u64;
    // SAFETY: `top` is the top of an allocated kernel stack that nothing
    // runs on (its environment is not blocked in the kernel), large enough
    // for a frame; the frame is copied before the stack is switched to.
    unsafe {
        core::ptr::write(at as *mut TrapFrame, *frame);
        kstack_enter(at, then)
    }
}

/// Lets pending interrupts in for one instruction (the timer's tick is
/// counted; handlers taken in kernel mode touch only atomics).
pub fn interrupt_window() {
    // SAFETY: as in `cpu::wait_for_interrupt`: interrupts taken here find
    // the kernel in kernel mode and only count.
    unsafe { asm!("sti", "nop", "cli", options(nomem, nostack)) }
}
