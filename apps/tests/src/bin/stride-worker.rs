//! stride-worker: a child of the `stride` scheduler. It spins and nothing
//! else; the scheduler measures the CPU it got from the exposed run
//! statistics (`RunRow::ticks`) and destroys it. It runs only when the
//! scheduler donates time to it (the scheduler turns its spare time off),
//! and gives up by itself after 60 s of wall time in case the scheduler is
//! gone.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, exposed};
use oxok_tests::cpu;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let end = exposed::rdtsc() + 60_000 * cpu::cycles_per_ms();
    while exposed::rdtsc() < end {
        core::hint::spin_loop();
    }
    0
}
