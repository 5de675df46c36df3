//! spin NAME MCYCLES: burns about MCYCLES million TSC cycles without ever
//! entering the kernel, then reports how many times it saw the TSC jump
//! (a jump of more than 1 ms of cycles means another environment ran).
//! Two spinners started together interleave only if the kernel preempts.
//! NAME `-` prints nothing (a job whose output cannot race the shell's).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::time::rdtsc as _rdtsc;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let name = args.get(1).unwrap_or("spin");
    let mcycles: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let quiet = name == "-";
    if !quiet {
        println!("spin {name}: start");
    }
    let start = _rdtsc();
    let end = start + mcycles * 1_000_000;
    let (mut last, mut gaps) = (start, 0u64);
    loop {
        let now = _rdtsc();
        if now.wrapping_sub(last) > 2_000_000 {
            gaps += 1;
        }
        last = now;
        if now >= end {
            break;
        }
    }
    if !quiet {
        println!("spin {name}: done, preempted {gaps} times");
    }
    0
}
