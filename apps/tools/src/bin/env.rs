//! env: prints the environment variables this program was given, one `NAME=value` a line.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    for v in oxok_libos::environ::vars() {
        oxok_libos::println!("{v}");
    }
    0
}
