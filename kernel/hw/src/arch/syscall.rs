//! The `syscall` entry: MSR set-up and the stub that saves a full
//! `TrapFrame` on the per-CPU kernel stack.

use super::cpu::{rdmsr, wrmsr};
use super::gdt::{KERNEL_CS, USER_CS, USER_DS};
use super::trapframe::VECTOR_SYSCALL;
use core::arch::global_asm;

const MSR_EFER: u32 = 0xC000_0080;
const MSR_STAR: u32 = 0xC000_0081;
const MSR_LSTAR: u32 = 0xC000_0082;
const MSR_CSTAR: u32 = 0xC000_0083;
const MSR_SFMASK: u32 = 0xC000_0084;
const EFER_SCE: u64 = 1;
/// Cleared on entry: TF, IF, DF, IOPL, NT, AC.
const SFMASK: u64 = 0x4_7700;

/// Kernel stack top for `syscall` entry (one CPU for now).
#[unsafe(no_mangle)]
static mut SYSCALL_STACK_TOP: u64 = 0;
/// Where the entry stub parks the user `rsp` while it switches stacks.
#[unsafe(no_mangle)]
static mut SYSCALL_USER_RSP: u64 = 0;

global_asm!(
    r#"
    .section .text.syscall, "ax"
    .global syscall_entry
syscall_entry:
    mov %rsp, SYSCALL_USER_RSP(%rip)
    mov SYSCALL_STACK_TOP(%rip), %rsp
    push ${user_ds}
    push SYSCALL_USER_RSP(%rip)
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
    /* The kernel's registered handler, extern "C" fn(&mut TrapFrame) ->
       bool, called through handlers::SYSCALL: rdi is the frame just pushed
       on this CPU's kernel stack, valid, aligned and used by nothing else
       until the return (so a valid &mut). True: the fast return below;
       false: the full exit_to_user. */
    mov %rsp, %rdi
    call *{entry}(%rip)
    test %al, %al
    jz exit_to_user
    /* The fast return: the caller goes on from its own frame, changed
       only in rax and the result registers, so rcx is still its rip, r11
       its rflags and the selectors the user's. Only rip's form is left to
       check: a `syscall` ending at the top of the lower half returns to a
       non-canonical rip, which sysret must never be given. */
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
    "#,
    user_ds = const USER_DS as u64,
    user_cs = const USER_CS as u64,
    vector = const VECTOR_SYSCALL,
    entry = sym super::handlers::SYSCALL,
    options(att_syntax)
);

unsafe extern "C" {
    fn syscall_entry();
}

/// Enables `syscall`/`sysret` and points them at the entry stub.
pub fn init() {
    // SAFETY: boot is single-threaded; these MSR values describe the GDT in
    // gdt.rs (STAR) and the stub above (LSTAR, CSTAR); SFMASK clears IF so the
    // kernel runs with interrupts off.
    unsafe {
        SYSCALL_STACK_TOP = super::stack::kernel_stack_top();
        wrmsr(MSR_STAR, (u64::from(USER_CS - 16) << 48) | (u64::from(KERNEL_CS) << 32));
        wrmsr(MSR_LSTAR, syscall_entry as *const () as u64);
        // A `syscall` from compatibility mode: unreachable (no 32-bit user
        // code segment, see gdt.rs), and were it reached, the same entry
        // (its `sysretq` returns to 64-bit user code), never address 0.
        wrmsr(MSR_CSTAR, syscall_entry as *const () as u64);
        wrmsr(MSR_SFMASK, SFMASK);
        wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
    }
}
