//! wc: counts lines, words and bytes of each file (standard input for
//! none) and prints them as POSIX does — `lines words bytes name`, only the
//! counts asked for with `-l`, `-w`, `-c` — with a `total` line for more
//! than one file.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use core::fmt::Write;
use oxok_libos::fd::{self, STDIN};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::{Args, print};
use oxok_tools::{Command, copy};

oxok_libos::main!(main);

#[derive(Default, Clone, Copy)]
struct Counts {
    lines: u64,
    words: u64,
    bytes: u64,
    in_word: bool,
}

impl Counts {
    fn feed(&mut self, data: &[u8]) {
        for &b in data {
            self.bytes += 1;
            if b == b'\n' {
                self.lines += 1;
            }
            let space = b.is_ascii_whitespace();
            if !space && !self.in_word {
                self.words += 1;
            }
            self.in_word = !space;
        }
    }
}

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "wc", "lwc", "[-lwc] [file...]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let all = !(cmd.has('l') || cmd.has('w') || cmd.has('c'));
    let show = |c: &Counts, name: &str| {
        let mut line = String::new();
        for (on, n) in [(cmd.has('l'), c.lines), (cmd.has('w'), c.words), (cmd.has('c'), c.bytes)] {
            if all || on {
                let _ = write!(line, "{n:>7} ");
            }
        }
        print!(
            "{}{}\n",
            line.trim_end_matches(' '),
            if name.is_empty() { String::new() } else { alloc::format!(" {name}") }
        );
    };
    if cmd.operands.is_empty() {
        let mut c = Counts::default();
        return match copy(STDIN, None, |d| c.feed(d)) {
            Ok(()) => {
                show(&c, "");
                0
            }
            Err(e) => {
                cmd.error("-", e);
                1
            }
        };
    }
    let mut total = Counts::default();
    let mut status = 0;
    for &path in &cmd.operands {
        let mut c = Counts::default();
        let result = fs::open(path, OpenFlags::READ).and_then(|f| {
            let r = copy(f, None, |d| c.feed(d));
            let _ = fd::close(f);
            r
        });
        match result {
            Ok(()) => {
                show(&c, path);
                total.lines += c.lines;
                total.words += c.words;
                total.bytes += c.bytes;
            }
            Err(e) => {
                cmd.error(path, e);
                status = 1;
            }
        }
    }
    if cmd.operands.len() > 1 {
        show(&total, "total");
    }
    status
}
