//! hostile-priv MODE: executes one privileged instruction from ring 3. The
//! kernel must destroy the environment (general protection fault) and go on.
//!
//! Two modes try a way into ring 0 instead: `compat` far-returns to
//! selector 0x1b (where a 32-bit user code segment would be) and runs
//! `syscall` in compatibility mode, which AMD CPUs and QEMU's TCG send to
//! `CSTAR` (ring 0, at address 0 while it was never set: a kernel panic
//! with page 0 unmapped, the program's own code in ring 0 with it mapped);
//! `sysenter`, which goes to `SYSENTER_EIP` unless `SYSENTER_CS` is 0.
//! And `sgdt` and `smsw`, which without UMIP show the kernel's GDT and CR0.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::arch::asm;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let mode = args.get(1).unwrap_or("cli");
    println!("hostile-priv: trying {mode}");
    // SAFETY: none of these can succeed in ring 3; each must fault. That is
    // the point of the test.
    #[allow(unsafe_code)]
    unsafe {
        match mode {
            "cli" => asm!("cli"),
            "hlt" => asm!("hlt"),
            "cr3" => asm!("mov cr3, {}", in(reg) 0u64),
            "wrmsr" => asm!("wrmsr", in("ecx") 0xC000_0082u32, in("eax") 0u32, in("edx") 0u32),
            "rdmsr" => asm!("rdmsr", in("ecx") 0xC000_0080u32, out("eax") _, out("edx") _),
            "outb" => asm!("out dx, al", in("dx") 0xf4u16, in("al") 0u8),
            "inb" => asm!("in al, dx", in("dx") 0x3f8u16, out("al") _),
            "lgdt" => asm!("lgdt [{}]", in(reg) 0x40_0000u64),
            "invlpg" => asm!("invlpg [{}]", in(reg) 0x40_0000u64),
            "int80" => asm!("int 0x80"),
            // The bytes after the far return run in 32-bit mode: `syscall`,
            // then `ud2` (the same bytes in both modes) should it return.
            "compat" => asm!(
                "push 0x1b",
                "lea rax, [rip + 2f]",
                "push rax",
                "retfq",
                "2:",
                ".byte 0x0f, 0x05, 0x0f, 0x0b",
                out("rax") _,
            ),
            "sysenter" => asm!("sysenter", ".byte 0x0f, 0x0b"),
            // Not privileged without UMIP: the GDT's address, and CR0 (its
            // TS bit, under lazy x87 switching, says whether another
            // environment used the unit).
            "sgdt" => asm!("sub rsp, 16", "sgdt [rsp]", "add rsp, 16"),
            "smsw" => asm!("smsw {:e}", out(reg) _),
            _ => {
                println!("hostile-priv: FAIL unknown mode {mode}");
                return 2;
            }
        }
    }
    println!("hostile-priv: FAIL {mode} did not fault");
    1
}
