//! hostile-calls: unknown call numbers. Numbers in the Oxok range that name
//! no call return `BadCall`; then a foreign (Linux) system call with no
//! handler registered destroys the environment — the program must not reach
//! its last line.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::{CALL_BASE, Call, Error};
use oxok_libos::{Args, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-calls");
    // Past the last index (indices reserved for other calls may be unused
    // below it: those are unknown numbers too).
    let first_unused = CALL_BASE + Call::ALL.iter().map(|&c| c as u64 + 1).max().unwrap_or(0);
    let gap = (0..).map(|i| CALL_BASE + i).find(|&nr| Call::from_number(nr).is_none()).unwrap_or(first_unused);
    for nr in [first_unused, first_unused + 1, gap, CALL_BASE + 0xffff] {
        let r = sys::raw(nr, [u64::MAX; 6]);
        t.check(r.status == Error::BadCall.code(), "unknown Oxok call number");
    }
    // Garbage in every argument register of a real call is harmless.
    let r = sys::raw(Call::null.number(), [u64::MAX; 6]);
    t.check(r.status == 0, "null call with garbage arguments");
    t.finish();
    println!("hostile-calls: now a Linux getpid with no foreign-call handler");
    let _ = sys::raw(39, [0; 6]);
    println!("hostile-calls: FAIL survived a foreign call");
    1
}
