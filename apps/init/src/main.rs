//! init: the first program. Prints the banner; later issues make it start
//! the shell.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, println, sys};

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let id = oxok_libos::process::env_id();
    let (total, free, size) = match sys::mem_info() {
        Ok([t, f, s]) => (t, f, s),
        Err(e) => {
            println!("init: mem_info failed: {e}");
            return 1;
        }
    };
    println!("Oxok {} — an exokernel for x86-64", oxok_libos::abi::VERSION);
    println!(
        "init: environment {id}, memory {} MiB usable ({} MiB free, {} frames of {} bytes)",
        (total * size) >> 20,
        (free * size) >> 20,
        total,
        size
    );
    0
}
