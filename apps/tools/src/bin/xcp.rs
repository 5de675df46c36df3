//! xcp: copies a file or a directory tree on the disk so that the CPU never
//! touches the data (Xok's XCP, SOSP '97 §7): `xcp SRC DST`. The disk file
//! server lists the source's blocks, reads them in large sorted batches,
//! gives the destination files their blocks next to their directories, and
//! has XN write every destination block straight from the cache frame of
//! its source block (`xn_write_from`). As `cp -r`: DST names the copy, or,
//! when it is an existing directory, the directory the copy goes into.
//! Prints `xcp: N files, B bytes, K blocks`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::fs;
use oxok_libos::{Args, println};
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "xcp", "", "from to") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let [from, to] = cmd.operands[..] else {
        oxok_libos::eprintln!("usage: xcp from to");
        return 2;
    };
    let target = if fs::stat(to).is_ok_and(|s| s.is_dir()) {
        let base = from.trim_end_matches('/').rsplit('/').next().unwrap_or(from);
        alloc::format!("{}/{base}", to.trim_end_matches('/'))
    } else {
        alloc::string::String::from(to)
    };
    match fs::copy_tree(from, &target) {
        Ok(c) => {
            println!("xcp: {} files, {} bytes, {} blocks", c.files, c.bytes, c.blocks);
            0
        }
        Err(e) => {
            cmd.error(from, e);
            1
        }
    }
}
