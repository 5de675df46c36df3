//! mkdir: makes each directory; `-p` makes missing parents too and takes
//! existing directories without complaint.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;
use oxok_libos::fd::IoError;
use oxok_libos::fs;
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "mkdir", "p", "[-p] dir...") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() {
        oxok_libos::eprintln!("usage: mkdir [-p] dir...");
        return 2;
    }
    let mut status = 0;
    for &path in &cmd.operands {
        let result = if cmd.has('p') { mkdir_p(path) } else { fs::mkdir(path) };
        if let Err(e) = result {
            cmd.error(path, e);
            status = 1;
        }
    }
    status
}

/// Makes `path` and its missing parents; an existing directory is fine.
fn mkdir_p(path: &str) -> Result<(), IoError> {
    let full = fs::normalize(&fs::absolute(path)?);
    let mut at = alloc::string::String::new();
    for part in full.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        match fs::mkdir(&at) {
            Ok(()) => {}
            Err(IoError::Exists) if fs::stat(&at)?.is_dir() => {}
            Err(IoError::Exists) => return Err(IoError::NotDir),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
