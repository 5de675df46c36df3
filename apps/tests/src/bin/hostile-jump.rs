//! hostile-jump MODE: touches memory it must not — kernel text, the direct
//! map, a non-canonical address, null. The environment must be destroyed
//! with a logged fault; nothing else changes.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::arch::asm;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

const KERNEL_TEXT: u64 = 0xffff_ffff_8020_1000;
const DIRECT_MAP: u64 = 0xffff_8000_0010_0000;
const NON_CANONICAL: u64 = 0x0000_8000_0000_0000;

fn main(args: Args) -> i32 {
    let mode = args.get(1).unwrap_or("call-kernel");
    println!("hostile-jump: trying {mode}");
    // SAFETY: every one of these must fault in user mode; that is the test.
    #[allow(unsafe_code)]
    unsafe {
        match mode {
            "call-kernel" => asm!("call {}", in(reg) KERNEL_TEXT),
            "read-kernel" => asm!("mov {}, [{}]", out(reg) _, in(reg) KERNEL_TEXT),
            "write-direct-map" => asm!("mov qword ptr [{}], 0", in(reg) DIRECT_MAP),
            "jump-noncanonical" => asm!("jmp {}", in(reg) NON_CANONICAL),
            "read-null" => asm!("mov {}, [{}]", out(reg) _, in(reg) 0u64),
            "write-text" => asm!("mov qword ptr [{}], 0", in(reg) 0x40_0000u64),
            _ => {
                println!("hostile-jump: FAIL unknown mode {mode}");
                return 2;
            }
        }
    }
    println!("hostile-jump: FAIL {mode} did not fault");
    1
}
