//! echo: writes its arguments, separated by spaces, and a newline (none
//! with `-n`) to standard output.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use oxok_libos::fd::{self, STDOUT};
use oxok_libos::{Args, eprintln};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let mut words = args.iter().skip(1).peekable();
    let newline = words.next_if_eq(&"-n").is_none();
    let mut out = String::new();
    for (i, w) in words.enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
    if newline {
        out.push('\n');
    }
    match fd::write_all(STDOUT, out.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("echo: {e}");
            1
        }
    }
}
