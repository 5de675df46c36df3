//! nostack-slot: code interrupted while it has no stack is not handed to
//! its slot-end handler (`nostack-slot` scenario).
//!
//! The protected-control-transfer entry starts with `rsp` 0 and loads its
//! own stack with its first instruction; a slot could end right there. A
//! slot-end upcall delivered then would run the handler, whose resume
//! writes below the interrupted `rsp` — at the top of the address space —
//! and the program would die of it (a rare loss of `linux-proc`'s killed
//! child). The kernel preempts such code in place instead.
//!
//! The child (`nostack-slot spin`) registers the slot-end entry and spins
//! forever with `rsp` 0, so that every one of its slots ends there; the
//! parent watches it run through many slots, alive, then destroys it.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::arch::asm;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::{Args, exposed, println, proc, signal, time, upcall};

oxok_libos::main!(main);

/// Slots the spinner must be given back after (each began with a slot end
/// that found it without a stack).
const RUNS: u64 = 20;

fn main(args: Args) -> i32 {
    if args.get(1) == Some("spin") {
        spin();
    }
    let child = match exec::spawn("nostack-slot", &["nostack-slot", "spin"]) {
        Ok(c) => c,
        Err(e) => {
            println!("nostack-slot: FAIL spawn: {e:?}");
            return 1;
        }
    };
    // Its run count while it has not ended.
    let runs = || exposed::env_entry(child.id).filter(|_| proc::alive(child.id)).map(|e| e.runs);
    // Wait for the spinner to start spinning (its line comes first).
    let mut first = None;
    for _ in 0..2000 {
        if let Some(r) = runs().filter(|&r| r >= 2) {
            first = Some(r);
            break;
        }
        let _ = time::sleep_ms(1);
    }
    let Some(first) = first else {
        println!("nostack-slot: FAIL the spinner never ran");
        return 1;
    };
    let mut last = first;
    for _ in 0..5000 {
        match runs() {
            Some(r) => last = r,
            None => break,
        }
        if last >= first + RUNS {
            break;
        }
        let _ = time::sleep_ms(1);
    }
    let alive = runs().is_some();
    println!("nostack-slot: the spinner ran {} more slots, {}", last - first, if alive { "alive" } else { "dead" });
    let ended = signal::destroy(child).map(|s| s == ExitStatus::Killed(None));
    if alive && last >= first + RUNS && ended == Ok(true) {
        println!("nostack-slot: ok");
        0
    } else {
        println!("nostack-slot: FAIL");
        1
    }
}

/// Registers the slot-end entry, then spins with no stack until destroyed.
fn spin() -> ! {
    if upcall::install_slot_handlers().is_err() {
        println!("nostack-slot: FAIL no slot handlers");
        oxok_libos::process::exit(1);
    }
    println!("nostack-slot: spinning with rsp 0");
    // SAFETY: the loop never returns and touches no memory, so nothing
    // needs the stack it destroys; the parent ends this environment.
    #[allow(unsafe_code)]
    unsafe {
        asm!("xor esp, esp", "2:", "jmp 2b", options(noreturn));
    }
}
