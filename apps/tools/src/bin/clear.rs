//! clear: clears the terminal screen (ANSI: cursor home, erase display).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    if oxok_tools::out(b"\x1b[H\x1b[2J") { 0 } else { 1 }
}
