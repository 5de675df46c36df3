//! xcp-attack: a program of another principal turns XCP's call,
//! `xn_write_from` (write a data block from another block's cache frame),
//! against the disk file system `dfsd` serves: copying its own data over
//! the victim's block, the victim's block into its own, a source never
//! durably written, metadata as a destination, blocks past the disk or
//! free, a block onto itself, a destination still mapped. Every move must
//! be refused, and its own copy (`Fs::copy_tree`, XCP on its own file
//! system) must work; the scenario then reads the victim's files back after
//! a reboot and checks the image with `fsck`.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_cffs::Fs;
use oxok_cffs::layout::T_DIR;
use oxok_libos::abi::Error;
use oxok_libos::abi::xn::{DATA, XnRow, refuse, state};
use oxok_libos::xn::{self, XnDisk, XnError};
use oxok_libos::{Args, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

fn rows(fs: u32) -> Vec<XnRow> {
    xn::rows().filter(|r| u32::from(r.fs) == fs && r.will_free == 0).collect()
}

fn refusal(r: Result<u64, XnError>) -> u64 {
    match r {
        Err(XnError::Refused { code, .. }) => code,
        _ => 0,
    }
}

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("xcp-attack");
    let (Some(h), Some(vfs)) = (xn::header(), XnDisk::existing()) else {
        println!("xcp-attack: no disk file system");
        return 1;
    };
    let victim = rows(vfs);
    let (Some(vdata), Some(vdir)) = (
        victim.iter().find(|r| u32::from(r.ty) == DATA).map(|r| r.block),
        victim.iter().find(|r| u32::from(r.ty) == T_DIR).map(|r| r.block),
    ) else {
        println!("xcp-attack: the victim has no data block or directory yet");
        return 1;
    };
    // A C-FFS file system of its own, its superblock at the last free block.
    // Its own principal, or none (anyone's file system) from the shell.
    let me = oxok_tests::principal::own();
    let sb = (0..h.nblocks).rev().find(|&b| xn::is_free(b) == Some(true)).unwrap_or(0);
    let made = XnDisk::register()
        .map_err(|e| alloc::format!("register: {e}"))
        .and_then(|id| XnDisk::new(id).map(|d| (id, d)).ok_or_else(|| alloc::string::String::from("no disk")))
        .and_then(|(id, d)| Fs::mkfs_at(d, me, sb).map(|fs| (id, fs)).map_err(|e| alloc::format!("mkfs: {e:?}")));
    let (fs_id, mut fs) = match made {
        Ok(x) => x,
        Err(e) => {
            println!("xcp-attack: {e}");
            return 1;
        }
    };
    let a: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i * 7 + 3) as u8).collect();
    let ok = fs.create("/a").and_then(|()| fs.write("/a", 0, &a)).and_then(|_| fs.sync());
    c.check(ok.is_ok(), "own durable file");
    // A source never durably written: a new file, not synced.
    let ok = fs.create("/t").and_then(|()| fs.write("/t", 0, b"tainted"));
    c.check(ok.is_ok(), "own tainted file");
    let mine = rows(fs_id);
    let durable: Vec<u64> =
        mine.iter().filter(|r| u32::from(r.ty) == DATA && r.state == state::CLEAN).map(|r| r.block).collect();
    let tainted = mine.iter().find(|r| u32::from(r.ty) == DATA && r.state == state::TAINTED).map(|r| r.block);
    let mydir = mine.iter().find(|r| u32::from(r.ty) == T_DIR).map(|r| r.block);
    let (Some(&d1), Some(&d2), Some(tainted), Some(mydir)) = (durable.first(), durable.get(1), tainted, mydir) else {
        println!("xcp-attack: own blocks missing");
        return 1;
    };
    println!(
        "xcp-attack: victim file system {vfs}: data {vdata}, directory {vdir}; mine {fs_id}: data {d1} {d2}, tainted {tainted}; I am {me}"
    );
    // The victim's block must be cached for the source attack to reach
    // the rights check (reading into the cache needs no rights).
    c.check(xn::read(vdata).is_ok(), "victim data cached");
    c.expect(refusal(xn::write_from(vdata, d1)), refuse::DENIED, "overwrite victim data from own frame refused");
    c.expect(refusal(xn::write_from(d1, vdata)), refuse::DENIED, "copy victim data into own block refused");
    c.expect(refusal(xn::write_from(d1, tainted)), refuse::TAINTED, "copy from a tainted source refused");
    c.expect(refusal(xn::write_from(mydir, d1)), refuse::METADATA_WRITABLE, "own directory as destination refused");
    c.expect(refusal(xn::write_from(vdir, d1)), refuse::METADATA_WRITABLE, "victim directory as destination refused");
    c.expect(refusal(xn::write_from(u64::MAX, d1)), refuse::OUT_OF_RANGE, "destination past the disk refused");
    c.expect(refusal(xn::write_from(d1, h.nblocks + 5)), refuse::OUT_OF_RANGE, "source past the disk refused");
    let free = (1..h.nblocks).find(|&b| xn::is_free(b) == Some(true)).unwrap_or(0);
    c.expect(refusal(xn::write_from(free, d1)), refuse::NOT_ALLOCATED, "free destination refused");
    c.expect(xn::write_from(d1, d1), Err(XnError::Sys(Error::Invalid)), "a block onto itself refused");
    // d1 is bound in this program's window (the file system wrote it).
    c.expect(xn::write_from(d1, d2), Err(XnError::Sys(Error::Busy)), "a mapped destination refused");
    // Its own copy works, and reads back the same bytes.
    let copied = fs.copy_tree("/a", "/c");
    c.check(copied.is_ok_and(|k| k.files == 1 && k.blocks == 4), "own copy");
    let mut back = alloc::vec![0u8; a.len()];
    c.check(fs.read("/c", 0, &mut back).is_ok_and(|n| n == a.len()) && back == a, "own copy reads back");
    c.check(fs.sync().is_ok(), "own file system syncs");
    c.finish()
}
