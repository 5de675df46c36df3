//! hostile-priv MODE: executes one privileged instruction from ring 3. The
//! kernel must destroy the environment (general protection fault) and go on.
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
            _ => {
                println!("hostile-priv: FAIL unknown mode {mode}");
                return 2;
            }
        }
    }
    println!("hostile-priv: FAIL {mode} did not fault");
    1
}
