//! sort: the lines of the files or of standard input in byte order (`-r` reversed, `-u` without
//! repeats).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_tools::{Command, for_each_input, out};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "sort", "ru", "[-ru] [file...]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let status = for_each_input(&cmd, |_, data| {
        for line in data.split(|&b| b == b'\n') {
            lines.push(line.to_vec());
        }
        // A final newline leaves an empty piece that is not a line.
        if data.ends_with(b"\n") || data.is_empty() {
            lines.pop();
        }
    });
    lines.sort();
    if cmd.has('u') {
        lines.dedup();
    }
    if cmd.has('r') {
        lines.reverse();
    }
    for line in &lines {
        out(line);
        out(b"\n");
    }
    status
}
