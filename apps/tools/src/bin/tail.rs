//! tail: the last lines of each file or of standard input (`-n N`, default 10).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_tools::{for_each_input, out, parse_counted};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let (cmd, n) = match parse_counted(&args, "tail", 10) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    for_each_input(&cmd, |_, data| {
        let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
        for line in &lines[lines.len().saturating_sub(n)..] {
            out(line);
        }
    })
}
