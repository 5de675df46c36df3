//! The fuzzer's `syscall`: like `oxok_libos::sys::raw`, but it also keeps
//! `rbx` and `rbp` and hands every message register of a protected control
//! transfer to the kernel, because a fuzzed `pct_call` resumes with the
//! callee's registers as the reply (`rbx`, `rbp`, `r12`–`r15` included).
#![allow(unsafe_code)]

use oxok_libos::sys::Raw;

/// Executes `syscall` with number `nr`, six argument registers and
/// `extra` in `r12`–`r15`, `rbx` and `rbp`; returns status and `rdi rsi rdx`.
pub fn syscall(nr: u64, a: [u64; 6], extra: [u64; 6]) -> Raw {
    let (status, r0, r1, r2);
    // Every register the kernel or a transfer's reply may change is an
    // output here, except rbx and rbp (reserved by the compiler): those are
    // saved on the stack and restored; the kernel never changes rsp on return.
    // SAFETY: `syscall` enters the kernel, which reads only registers and
    // memory it checks itself; no Rust-visible state changes behind our back.
    unsafe {
        core::arch::asm!(
            "push rbx",
            "push rbp",
            "mov rbx, {b}",
            "mov rbp, {p}",
            "syscall",
            "pop rbp",
            "pop rbx",
            b = in(reg) extra[4],
            p = in(reg) extra[5],
            inlateout("rax") nr => status,
            inlateout("rdi") a[0] => r0,
            inlateout("rsi") a[1] => r1,
            inlateout("rdx") a[2] => r2,
            inlateout("r10") a[3] => _,
            inlateout("r8") a[4] => _,
            inlateout("r9") a[5] => _,
            inlateout("r12") extra[0] => _,
            inlateout("r13") extra[1] => _,
            inlateout("r14") extra[2] => _,
            inlateout("r15") extra[3] => _,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    Raw { status, values: [r0, r1, r2] }
}
