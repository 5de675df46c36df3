//! hostile-segs set | read: DS and ES carry nothing from one environment
//! to another. `set` loads them with selectors of its own choosing (the
//! user code segment 0x2b into DS, the user data segment at RPL 1, 0x21,
//! into ES — both loadable in ring 3) and yields, over and over; `read`,
//! started beside it, yields to it and reads both after every return. The
//! kernel nulls them on every full return to user mode, so `read` sees 0
//! each time; once it saw `set`'s values (a channel no capability grants).
#![no_std]
#![no_main]

use core::arch::asm;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const ROUNDS: u64 = 2000;

fn set_segments() {
    // SAFETY: loading DS and ES in 64-bit mode changes no addressing.
    #[allow(unsafe_code)]
    unsafe {
        asm!("mov ax, 0x2b", "mov ds, ax", "mov ax, 0x21", "mov es, ax", out("rax") _);
    }
}

fn segments() -> (u16, u16) {
    let (ds, es): (u16, u16);
    // SAFETY: reading segment selectors has no effect.
    #[allow(unsafe_code)]
    unsafe {
        asm!("mov {0:x}, ds", "mov {1:x}, es", out(reg) ds, out(reg) es);
    }
    (ds, es)
}

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("set") => {
            let start = exposed::rdtsc();
            let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
            // Until the reader has ended (at most 30 s).
            while oxok_tests::cpu::peer("hostile-segs").is_some() && exposed::rdtsc() < start + 30 * hz {
                set_segments();
                let _ = sys::yield_cpu(0);
            }
            println!("hostile-segs set: done");
            0
        }
        _ => {
            let mut c = Checks::new("hostile-segs read");
            let mut seen = 0u64;
            for _ in 0..ROUNDS {
                let _ = sys::yield_cpu(0);
                let (ds, es) = segments();
                if ds != 0 || es != 0 {
                    seen += 1;
                    if seen == 1 {
                        println!("hostile-segs read: ds {ds:#x}, es {es:#x} after a yield");
                    }
                }
            }
            c.expect(seen, 0, "DS and ES null after every return (never another environment's)");
            c.finish()
        }
    }
}
