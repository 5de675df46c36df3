//! ls: lists each directory operand's entries (the current directory for
//! none), sorted by name, one per line; a file operand lists itself. `-l`
//! shows the kind and size before each name (`d` directory, `-` file; a
//! directory's size is its entry count); `-a` adds `.` and `..`. With more
//! than one operand each directory's listing is headed `name:`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::fs::{self, FileKind};
use oxok_libos::{Args, println};
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "ls", "la", "[-la] [path...]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let operands = if cmd.operands.is_empty() { alloc::vec!["."] } else { cmd.operands.clone() };
    let mut status = 0;
    for (i, &path) in operands.iter().enumerate() {
        let meta = match fs::stat(path) {
            Ok(m) => m,
            Err(e) => {
                cmd.error(path, e);
                status = 1;
                continue;
            }
        };
        if !meta.is_dir() {
            line(&cmd, meta.kind, meta.size, path);
            continue;
        }
        let entries = match fs::read_dir(path) {
            Ok(e) => e,
            Err(e) => {
                cmd.error(path, e);
                status = 1;
                continue;
            }
        };
        if operands.len() > 1 {
            if i > 0 {
                println!();
            }
            println!("{path}:");
        }
        if cmd.has('a') {
            line(&cmd, FileKind::Dir, meta.size, ".");
            line(&cmd, FileKind::Dir, 0, "..");
        }
        for e in &entries {
            line(&cmd, e.kind, e.size, &e.name);
        }
    }
    status
}

fn line(cmd: &Command, kind: FileKind, size: u64, name: &str) {
    if cmd.has('l') {
        let k = match kind {
            FileKind::Dir => 'd',
            FileKind::Symlink => 'l',
            FileKind::File => '-',
        };
        println!("{k} {size:>8} {name}");
    } else {
        println!("{name}");
    }
}
