//! true: returns 0 at once (a tool; also the tiny program the bench's `spawn_exec` starts;
//! Linux's counterpart is `bench/linux/tiny.c`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::Args;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    0
}
