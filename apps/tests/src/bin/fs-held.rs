//! fs-held (run on a disk, under `dfsd`): the metadata changes dfsd's disk
//! holds on its side (`oxok_cffs::held`: a created file's record until its
//! first write's allocation, a removed file's free until the next removal
//! in the same directory block) are never lost and never reach the kernel
//! late:
//!
//! - files made and written in one directory, then removed in order: each
//!   name is gone at once, a file made and written in a directory block
//!   whose free is held reads back, and once
//!   synced the disk has exactly the free blocks it had before (the
//!   directory's blocks made by a first round);
//! - a removal reaches XN by the end of the next request, with no sync:
//!   its block is free or on XN's will-free list (exposed header);
//! - a sync writes nothing refused;
//! - files removed with their frees held and then synced stay removed
//!   across a reboot (`fs-held reboot` checks, on the second boot), and
//!   the files kept beside them keep their bytes.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_libos::fd::IoError;
use oxok_libos::fs;
use oxok_libos::xn;
use oxok_tests::Checks;

oxok_libos::main!(main);

const DIR: &str = "/held";
/// Files made and removed: more than one directory block's records.
const FILES: usize = 80;
const LEN: usize = 100;

fn name(i: usize) -> alloc::string::String {
    format!("{DIR}/f{i:03}")
}

fn content(i: usize) -> Vec<u8> {
    (0..LEN).map(|k| (k as u8).wrapping_mul(7) ^ i as u8).collect()
}

/// Free blocks and will-free blocks in XN's exposed header.
fn counts() -> (u64, u64) {
    xn::header().map_or((0, 0), |h| (h.free, h.will_free))
}

/// Syncs until XN's will-free list is empty (each flush lets a bounded
/// number go): the free count, or `None` if a sync failed.
fn settled() -> Option<u64> {
    for _ in 0..64 {
        if let Err(e) = fs::sync() {
            oxok_libos::println!("fs-held: sync: {e:?}");
            return None;
        }
        let (free, will) = counts();
        if will == 0 {
            return Some(free);
        }
        // The kernel lets a freed block's children go a tick later.
        let _ = oxok_libos::time::sleep_ms(5);
    }
    None
}

/// Files left for the second boot: the first half removed, with their
/// frees held, then synced; the second half kept.
const KEPT: usize = 10;

fn kept(i: usize) -> alloc::string::String {
    format!("/held-kept/k{i}")
}

/// The second boot's checks.
fn after_reboot(t: &mut Checks) {
    let gone = (0..KEPT / 2).all(|i| matches!(fs::stat(&kept(i)), Err(IoError::NotFound)));
    t.check(gone, "the files removed before the reboot stay removed");
    let there = (KEPT / 2..KEPT).all(|i| fs::read_file(&kept(i)).is_ok_and(|b| b == content(i)));
    t.check(there, "the files kept beside them read back");
    t.expect(fs::read_dir("/held-kept").map(|d| d.len()).ok(), Some(KEPT / 2), "names in the directory");
}

/// Leaves [`KEPT`] files, the first half removed with their frees held
/// and then synced (no reboot between).
fn leave_for_reboot(t: &mut Checks) {
    t.check(fs::mkdir("/held-kept").is_ok(), "mkdir /held-kept");
    let made = (0..KEPT).all(|i| fs::write_file(&kept(i), &content(i)).is_ok());
    t.check(made && fs::sync().is_ok(), "the files to keep, synced");
    let removed = (0..KEPT / 2).all(|i| fs::unlink(&kept(i)).is_ok());
    t.check(removed && fs::sync().is_ok(), "half removed, synced at once");
}

fn main(args: Args) -> i32 {
    let mut t = Checks::new("fs-held");
    if args.iter().any(|a| a == "reboot") {
        after_reboot(&mut t);
        return t.finish();
    }
    t.check(xn::header().is_some_and(|h| h.present == 1), "a disk");
    t.check(fs::mkdir(DIR).is_ok(), "mkdir");
    // Once first, so the directory has the blocks it needs (a directory
    // keeps its blocks when its names go).
    let once = (0..FILES).all(|i| fs::write_file(&name(i), &content(i)).is_ok())
        && (0..FILES).all(|i| fs::unlink(&name(i)).is_ok());
    t.check(once, "the files made and removed once");
    let before = settled();
    t.check(before.is_some(), "sync before: the will-free list drains");

    let made = (0..FILES).all(|i| fs::write_file(&name(i), &content(i)).is_ok());
    t.check(made, "the files are made and written");
    let full = settled();
    t.check(full.is_some(), "sync after the files: the will-free list drains");
    let all_read = (0..FILES).all(|i| fs::read_file(&name(i)).is_ok_and(|b| b == content(i)));
    t.check(all_read, "each file reads back after the sync");
    if let (Some(b), Some(f)) = (before, full) {
        t.check(b >= f + FILES as u64, "the files took a block each");
    }

    // One removal, then one request of another kind: by its end the
    // removal's free is in XN (its block free or waiting on the will-free
    // list), with no sync between.
    let (free0, will0) = counts();
    t.check(fs::unlink(&name(0)).is_ok(), "unlink the first");
    let gone = matches!(fs::stat(&name(0)), Err(IoError::NotFound));
    t.check(gone, "its name is gone at once");
    let (free1, will1) = counts();
    t.expect(free1 + will1, free0 + will0 + 1, "its free reached XN by the end of the next request");

    // The rest, one after another in the order they were made (their
    // blocks meet: the frees of a directory block go as one).
    let removed = (1..FILES).all(|i| fs::unlink(&name(i)).is_ok());
    t.check(removed, "the other removals");
    let names_gone = (1..FILES).all(|i| matches!(fs::stat(&name(i)), Err(IoError::NotFound)));
    t.check(names_gone, "their names are gone");
    t.check(fs::read_dir(DIR).is_ok_and(|d| d.is_empty()), "the directory lists nothing");
    t.check(fs::read_file(&name(FILES - 1)).is_err(), "the last removed file cannot be read");

    // A free held in a directory's only block, then a file made there and
    // written: the write's allocation in that block goes after the free.
    let (one, two) = (format!("{DIR}/one/a"), format!("{DIR}/one/b"));
    t.check(fs::mkdir(&format!("{DIR}/one")).is_ok(), "mkdir one");
    t.check(fs::write_file(&one, &content(1)).is_ok() && fs::sync().is_ok(), "a file there, synced");
    t.check(fs::unlink(&one).is_ok(), "removed");
    t.check(fs::write_file(&two, b"made after a removal").is_ok(), "another made and written there");
    t.check(fs::read_file(&two).is_ok_and(|b| b == b"made after a removal"), "it reads back");
    t.check(fs::unlink(&two).is_ok() && fs::rmdir(&format!("{DIR}/one")).is_ok(), "and goes, with its directory");

    // Nothing lost, nothing kept: the disk is as before the files.
    let end = settled();
    t.check(end.is_some(), "sync at the end: no refused write, and XN's will-free list drains");
    t.expect(end, before, "free blocks as before the files");
    t.check(fs::rmdir(DIR).is_ok(), "rmdir");
    leave_for_reboot(&mut t);
    t.finish()
}
