//! xnfs-attack: a program of another principal attacks the disk file
//! system `dfsd` serves (C-FFS over XN) through XN's calls directly — it
//! cannot go around the file server's templates: binding its data,
//! rewriting its superblock and directories, allocating into and freeing
//! from them, and forging a file system of its own whose metadata claims
//! the victim's blocks. Every move must be refused; the scenario then
//! reads the victim's files back and checks the image with `fsck`.
//!
//! It acts as the principal it was given, or as none (started from the
//! shell, which gives none). Started as a boot program, which holds `/8`
//! (every principal), it starts itself again as a child given a principal
//! of its own (`ATTACKER`), which attacks: the disk file server's
//! principal is not among what it holds. Before attacking it tries to mint
//! principals without the authority to (`oxok_tests::principal::forge`)
//! and keeps what that made while it attacks.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::format;
use oxok_cffs::layout::{SUPER_BLOCK, T_DIR, T_ITAB, T_SUPER, set_itab, superblock};
use oxok_libos::abi::Error;
use oxok_libos::abi::xn::{DATA, DISK_PRINCIPAL, refuse, rights};
use oxok_libos::xn::{self, XnDisk, XnError};
use oxok_libos::{Args, exec, exposed, println, sys};
use oxok_tests::{Checks, principal};

oxok_libos::main!(main);

/// Where the attacker tries to map the victim's blocks.
const VA: u64 = 0x5f00_0000_0000;

fn refused(code: u64) -> impl Fn(Result<(), XnError>) -> bool {
    move |r| matches!(r, Err(XnError::Refused { code: c, .. }) if c == code)
}

/// Reads `block` and every metadata block above it up to its root into
/// the cache (a chain of at most 64: C-FFS trees are shallower).
fn cache_up(block: u64) -> bool {
    let mut b = block;
    for _ in 0..64 {
        if xn::read(b).is_err() {
            return false;
        }
        match xn::row_of(b) {
            Some(r) if r.parent != u64::MAX => b = r.parent,
            _ => return true,
        }
    }
    true
}

fn main(args: Args) -> i32 {
    if args.get(1) != Some("child") && principal::holds_all() {
        let mut opts = exec::SpawnOptions::new();
        opts.principal(principal::ATTACKER);
        return match exec::spawn_with("xnfs-attack", &["xnfs-attack", "child"], &opts).map(exec::wait) {
            Ok(Ok(status)) => status.code(),
            other => {
                println!("xnfs-attack: FAIL starting the attacker: {other:?}");
                1
            }
        };
    }
    attack()
}

fn attack() -> i32 {
    let mut c = Checks::new("xnfs-attack");
    let (Some(h), Some(vfs)) = (xn::header(), XnDisk::existing()) else {
        println!("xnfs-attack: no disk file system");
        return 1;
    };
    // The victim's blocks, from the exposed registry.
    let rows: alloc::vec::Vec<_> = xn::rows().filter(|r| u32::from(r.fs) == vfs && r.will_free == 0).collect();
    let data = rows.iter().find(|r| u32::from(r.ty) == DATA);
    let dir = rows.iter().find(|r| u32::from(r.ty) == T_DIR);
    let itab = rows.iter().find(|r| u32::from(r.ty) == T_ITAB);
    let (Some(data), Some(dir), Some(itab)) = (data, dir, itab) else {
        println!("xnfs-attack: the victim has no data block, directory or inode table yet");
        return 1;
    };
    let free = (0..h.nblocks).rev().find(|&b| xn::is_free(b) == Some(true)).unwrap_or(0);
    let me = principal::own();
    println!(
        "xnfs-attack: victim file system {vfs}: data {} (of {}), directory {}, inode table {}; I am principal {me}, \
         environment {}",
        data.block,
        data.parent,
        dir.block,
        itab.block,
        exposed::self_id()
    );
    c.check(me != DISK_PRINCIPAL, "not the disk file server's principal");
    // The victim's blocks and the metadata above them cached (reading into
    // the cache needs no rights), so that each move reaches the rights
    // check even right after a boot.
    let cached = [data.block, dir.block, itab.block, SUPER_BLOCK];
    c.check(cached.iter().all(|&b| cache_up(b)), "victim blocks cached");
    let forged_caps = principal::forge(&mut c, DISK_PRINCIPAL);
    // The victim's blocks through XN: every change is the victim's acl's.
    c.check(refused(refuse::DENIED)(xn::bind(data.block, VA, rights::WRITE)), "bind victim data writable refused");
    c.check(refused(refuse::DENIED)(xn::bind(data.block, VA, rights::READ)), "bind victim data readable refused");
    let mut forged = superblock(me, h.nblocks);
    c.check(refused(refuse::DENIED)(xn::modify(SUPER_BLOCK, &forged)), "rewrite victim superblock refused");
    let blank = [0u8; 4096];
    c.check(refused(refuse::DENIED)(xn::modify(dir.block, &blank)), "rewrite victim directory refused");
    c.check(refused(refuse::DENIED)(xn::free(data.parent, &blank, data.block, 1)), "free victim data refused");
    c.check(
        refused(refuse::DENIED)(xn::alloc(dir.block, &blank, free, 1, DATA)),
        "allocate into victim directory refused",
    );
    // New content at an address that holds no block of the caller's: each
    // call refuses it as a bad address (its copy into the kernel fails).
    for (ptr, what) in [(0u64, "null"), (0xffff_8000_0000_0000, "the kernel's"), (0x3f00_0000_0000, "an unmapped")] {
        let bad = Some(Error::BadAddress);
        c.expect(sys::xn_modify(dir.block, ptr).err(), bad, &format!("modify from {what} address refused"));
        c.expect(
            sys::xn_alloc(dir.block, ptr, free, 1, 0).err(),
            bad,
            &format!("allocate from {what} address refused"),
        );
        c.expect(
            sys::xn_free(data.parent, ptr, data.block, 1).err(),
            bad,
            &format!("free from {what} address refused"),
        );
        c.expect(sys::xn_root(0, free, 1, ptr).err(), bad, &format!("root from {what} address refused"));
    }
    // A file system of its own (the same templates) whose superblock
    // claims the victim's inode table.
    let fs = match XnDisk::register() {
        Ok(fs) => fs,
        Err(e) => {
            println!("xnfs-attack: register failed: {e}");
            return 1;
        }
    };
    c.check(fs != vfs, "own file system");
    let mut claim = forged;
    set_itab(&mut claim, 0, itab.block);
    c.check(
        refused(refuse::OWNS_MISMATCH)(xn::root(fs, free, T_SUPER, &claim)),
        "root born owning victim blocks refused",
    );
    c.expect(xn::root(fs, free, T_SUPER, &forged), Ok(()), "own root");
    c.check(refused(refuse::OWNS_MISMATCH)(xn::modify(free, &claim)), "claim victim inode table by rewrite refused");
    c.check(
        refused(refuse::NOT_FREE)(xn::alloc(free, &claim, itab.block, 1, T_ITAB)),
        "allocate victim inode table refused",
    );
    c.check(refused(refuse::NOT_FREE)(xn::root(fs, SUPER_BLOCK, T_SUPER, &forged)), "take victim superblock refused");
    set_itab(&mut forged, 0, 0);
    c.check(xn::modify(free, &forged).is_ok(), "own root still usable");
    principal::drop_all(&forged_caps);
    c.finish()
}
