//! touch: creates each file that does not exist (empty); existing files
//! are left as they are.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::Args;
use oxok_libos::fs::{self, OpenFlags};
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "touch", "", "file...") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() {
        oxok_libos::eprintln!("touch: missing file operand");
        oxok_libos::eprintln!("usage: touch file...");
        return 2;
    }
    let mut status = 0;
    for &path in &cmd.operands {
        if let Err(e) = fs::open_file(path, OpenFlags::WRITE | OpenFlags::CREATE) {
            cmd.error(path, e);
            status = 1;
        }
    }
    status
}
