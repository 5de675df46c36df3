//! mv: renames `from` to `to`; with several sources (or a directory as
//! the last operand) moves each source into that directory under its own
//! name.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::Args;
use oxok_libos::fs;
use oxok_tools::Command;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "mv", "", "from... to") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some((&to, sources)) = cmd.operands.split_last().filter(|(_, s)| !s.is_empty()) else {
        oxok_libos::eprintln!("usage: mv from... to");
        return 2;
    };
    let into_dir = sources.len() > 1 || fs::stat(to).is_ok_and(|m| m.is_dir());
    let mut status = 0;
    for &from in sources {
        let target = if into_dir { fs::join(to, fs::file_name(from)) } else { to.into() };
        if let Err(e) = fs::rename(from, &target) {
            cmd.error(from, e);
            status = 1;
        }
    }
    status
}
