//! uniq: standard input (or one file) without adjacent repeated lines (`-c` counts them).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_tools::{Command, for_each_input, out};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "uniq", "c", "[-c] [file]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut all = Vec::new();
    let status = for_each_input(&cmd, |_, data| all.extend_from_slice(data));
    let mut lines = all.split(|&b| b == b'\n').peekable();
    let mut last: Option<(&[u8], usize)> = None;
    let show = |line: &[u8], n: usize| {
        if cmd.has('c') {
            out(alloc::format!("{n:>7} ").as_bytes());
        }
        out(line);
        out(b"\n");
    };
    while let Some(line) = lines.next() {
        if line.is_empty() && lines.peek().is_none() {
            break; // after the final newline
        }
        match last {
            Some((l, n)) if l == line => last = Some((l, n + 1)),
            Some((l, n)) => {
                show(l, n);
                last = Some((line, 1));
            }
            None => last = Some((line, 1)),
        }
    }
    if let Some((l, n)) = last {
        show(l, n);
    }
    status
}
