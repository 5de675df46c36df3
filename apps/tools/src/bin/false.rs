//! false: returns 1 at once (for `&&`, `||` and scripts).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    1
}
