//! cp: copies a file to a file, or files into a directory (`cp a b`, `cp a b dir`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;
use oxok_libos::fd;
use oxok_libos::fs::{self, OpenFlags};
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "cp", "", "from to | from... dir") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some((&to, sources)) = cmd.operands.split_last().filter(|(_, s)| !s.is_empty()) else {
        oxok_libos::eprintln!("usage: cp from to | from... dir");
        return 2;
    };
    let into_dir = fs::stat(to).is_ok_and(|s| s.is_dir());
    if sources.len() > 1 && !into_dir {
        oxok_libos::eprintln!("cp: {to}: not a directory");
        return 1;
    }
    let mut status = 0;
    for &from in sources {
        let target = if into_dir {
            let base = from.rsplit('/').next().unwrap_or(from);
            alloc::format!("{}/{base}", to.trim_end_matches('/'))
        } else {
            alloc::string::String::from(to)
        };
        if let Err((what, e)) = copy_file(from, &target) {
            cmd.error(what, e);
            status = 1;
        }
    }
    status
}

/// Copies `from` to `to` (created or truncated).
fn copy_file<'a>(from: &'a str, to: &'a str) -> Result<(), (&'a str, oxok_libos::fd::IoError)> {
    let src = fs::open(from, OpenFlags::READ).map_err(|e| (from, e))?;
    let dst = match fs::open(to, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE) {
        Ok(d) => d,
        Err(e) => {
            let _ = fd::close(src);
            return Err((to, e));
        }
    };
    let r = oxok_tools::copy(src, Some(dst), |_| {}).map_err(|e| (from, e));
    let _ = fd::close(src);
    let _ = fd::close(dst);
    r
}
