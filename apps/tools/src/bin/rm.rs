//! rm: removes each file; `-r` removes directories and everything in
//! them; `-f` ignores names that do not exist. A directory without `-r` is
//! refused ("is a directory"), as POSIX's rm does.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::Args;
use oxok_libos::fd::IoError;
use oxok_libos::fs::{self, FileKind};
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "rm", "rRf", "[-rf] path...") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() && !cmd.has('f') {
        oxok_libos::eprintln!("usage: rm [-rf] path...");
        return 2;
    }
    let recursive = cmd.has('r') || cmd.has('R');
    let mut status = 0;
    for &path in &cmd.operands {
        let result = if recursive { remove_tree(path) } else { fs::unlink(path) };
        match result {
            Ok(()) => {}
            Err(IoError::NotFound) if cmd.has('f') => {}
            Err(e) => {
                cmd.error(path, e);
                status = 1;
            }
        }
    }
    status
}

/// Removes `path`, a file or a directory with everything in it (depth
/// first; the depth is bounded by the path length limit). A symbolic link
/// is removed itself, never what it points to.
fn remove_tree(path: &str) -> Result<(), IoError> {
    if !fs::symlink_metadata(path)?.is_dir() {
        return fs::unlink(path);
    }
    for e in fs::read_dir(path)? {
        let child = fs::join(path, &e.name);
        match e.kind {
            FileKind::Dir => remove_tree(&child)?,
            FileKind::File | FileKind::Symlink => fs::unlink(&child)?,
        }
    }
    fs::rmdir(path)
}
