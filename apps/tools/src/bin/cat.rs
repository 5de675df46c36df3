//! cat: copies each file (standard input for none, or for `-`) to
//! standard output, in order. A file that cannot be read is reported and
//! skipped; the exit status is then 1.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::Args;
use oxok_libos::fd::{self, STDIN, STDOUT};
use oxok_libos::fs::{self, OpenFlags};
use oxok_tools::{Command, copy};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "cat", "", "[file...]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() {
        return match copy(STDIN, Some(STDOUT), |_| {}) {
            Ok(()) => 0,
            Err(e) => {
                cmd.error("-", e);
                1
            }
        };
    }
    let mut status = 0;
    for &path in &cmd.operands {
        let result = if path == "-" {
            copy(STDIN, Some(STDOUT), |_| {})
        } else {
            fs::open(path, OpenFlags::READ).and_then(|f| {
                let r = copy(f, Some(STDOUT), |_| {});
                let _ = fd::close(f);
                r
            })
        };
        if let Err(e) = result {
            cmd.error(path, e);
            status = 1;
        }
    }
    status
}
