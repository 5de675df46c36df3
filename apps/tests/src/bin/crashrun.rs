//! crashrun: the guest side of `cargo xtask crashtest --qemu`. Runs C-FFS
//! (`crates/cffs`, the library file system `dfsd` serves) over the
//! kernel's XN calls (`oxok_libos::xn::XnDisk`), the disk's `/` in its own
//! environment, with nothing else using the disk.
//!
//! * `crashrun mkfs`: registers C-FFS's templates and makes a fresh file
//!   system, syncs it and waits until the kernel has catalogued its root.
//! * `crashrun`: mounts it, reads a script (`oxok_cffs::script`, one
//!   operation a line, ending with `end`) from the console, runs it, and
//!   prints for every operation `crashrun: op I ok L` or
//!   `crashrun: op I no ERROR L`, where `L` is XN's count of write
//!   requests submitted (`XnHeader::writes`) when it returned; after an
//!   fsync of a file, `crashrun: fsynced I PATH SIZE HASH` as read back;
//!   at the end a sync and `crashrun: done L`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use oxok_cffs::script::{Cmd, hash};
use oxok_cffs::{Fs, Kind};
use oxok_libos::xn::{self, XnDisk};
use oxok_libos::{Args, console, println};

oxok_libos::main!(main);

/// Longest script read.
const SCRIPT_MAX: usize = 1 << 20;

/// Stack added below the program's own (C-FFS keeps whole blocks on the
/// stack; `dfsd` serves on a stack of this size too).
const MORE_STACK: u64 = 512 * 1024;

fn written() -> u64 {
    xn::header().map_or(0, |h| h.writes)
}

fn main(args: Args) -> i32 {
    // A boot program: it holds `/8`, every principal, and makes and mounts
    // the file system as the disk file server's.
    let me = oxok_libos::abi::xn::DISK_PRINCIPAL;
    let below = oxok_libos::abi::layout::STACK_TOP - oxok_libos::abi::layout::STACK_SIZE - MORE_STACK;
    if let Err(e) = oxok_libos::vm::map_anon_at(below, MORE_STACK, oxok_libos::vm::Prot::READ_WRITE) {
        println!("crashrun: FAIL growing the stack: {e:?}");
        return 1;
    }
    if args.get(1) == Some("mkfs") {
        let made = XnDisk::register()
            .map_err(|e| alloc::format!("register: {e}"))
            .and_then(|id| XnDisk::new(id).ok_or_else(|| "no such file system".into()))
            .and_then(|d| Fs::mkfs(d, me).map_err(|e| alloc::format!("mkfs: {e:?}")))
            .and_then(|mut fs| fs.sync().map_err(|e| alloc::format!("sync: {e:?}")))
            .and_then(|()| xn::wait_catalog().map_err(|e| alloc::format!("catalogue: {e}")));
        return match made {
            Ok(()) => {
                println!("crashrun: made a file system for principal {me}");
                0
            }
            Err(e) => {
                println!("crashrun: FAIL {e}");
                1
            }
        };
    }
    let mounted = XnDisk::existing()
        .and_then(XnDisk::new)
        .ok_or_else(|| String::from("no file system on the disk"))
        .and_then(|d| Fs::mount(d, me).map_err(|e| alloc::format!("mount: {e:?}")));
    let mut fs = match mounted {
        Ok((fs, _)) => fs,
        Err(e) => {
            println!("crashrun: FAIL {e}");
            return 1;
        }
    };
    let script = match read_script() {
        Ok(s) => s,
        Err(e) => {
            println!("crashrun: FAIL reading the script: {e}");
            return 1;
        }
    };
    println!("crashrun: mounted as principal {me}; {} operations; written {}", script.len(), written());
    for (i, line) in script.iter().enumerate() {
        let Some(cmd) = Cmd::parse(line) else {
            println!("crashrun: FAIL line {i}: {line:?}");
            return 1;
        };
        match cmd.run(&mut fs) {
            Ok(()) => println!("crashrun: op {i} ok {}", written()),
            Err(e) => {
                let e: String = alloc::format!("{e:?}").chars().filter(|c| !c.is_whitespace()).collect();
                println!("crashrun: op {i} no {e} {}", written());
                continue;
            }
        }
        if let Cmd::Fsync(p) = &cmd
            && let Some((size, h)) = content(&mut fs, p)
        {
            println!("crashrun: fsynced {i} {p} {size} {h:x}");
        }
    }
    if let Err(e) = fs.sync() {
        println!("crashrun: FAIL final sync: {e:?}");
        return 1;
    }
    println!("crashrun: done {}", written());
    0
}

/// A file's size and the hash of its content (`None` for a directory).
fn content(fs: &mut Fs<XnDisk>, path: &str) -> Option<(u64, u64)> {
    let st = fs.stat(path).ok().filter(|s| s.kind == Kind::File)?;
    let mut buf = alloc::vec![0u8; usize::try_from(st.size).ok()?];
    let n = fs.read(path, 0, &mut buf).ok()?;
    Some((n as u64, hash(&buf[..n])))
}

/// Lines from the console up to one reading `end`.
fn read_script() -> Result<Vec<String>, String> {
    let (mut lines, mut cur, mut total) = (Vec::new(), Vec::new(), 0usize);
    let mut buf = [0u8; 256];
    loop {
        let n = console::read(&mut buf).map_err(|e| alloc::format!("{e}"))?;
        total += n;
        if total > SCRIPT_MAX {
            return Err("script too long".into());
        }
        for &b in &buf[..n] {
            if b != b'\n' && b != b'\r' {
                cur.push(b);
                continue;
            }
            let line = String::from_utf8(core::mem::take(&mut cur)).map_err(|_| String::from("not UTF-8"))?;
            match line.trim() {
                "" => {}
                "end" => return Ok(lines),
                l => lines.push(String::from(l)),
            }
        }
    }
}
