//! head: the first lines of each file or of standard input (`-n N`, default 10).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;
use oxok_tools::{Command, for_each_input, out, take_count};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let usage = "[-n lines] [file...]";
    let mut cmd = match Command::parse(&args, "head", "n", usage) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let n = match take_count(&mut cmd, 10, usage) {
        Ok(n) => n,
        Err(code) => return code,
    };
    for_each_input(&cmd, |_, data| {
        for line in data.split_inclusive(|&b| b == b'\n').take(n) {
            out(line);
        }
    })
}
