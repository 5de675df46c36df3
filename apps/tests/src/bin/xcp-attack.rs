//! xcp-attack: a program of another principal turns XCP's call,
//! `xn_write_from` (write a data block from another block's cache frame),
//! against the disk file system `dfsd` serves: copying its own data over
//! the victim's block, the victim's block into its own, a source never
//! durably written, metadata as a destination, blocks past the disk or
//! free, a block onto itself, a destination still mapped — singly and in
//! the batched calls (`xn_write_from_batch`, `xn_evict_batch`,
//! `xn_write_batch`, with bad argument arrays too). Every move must be refused, and its own copy
//! (`Fs::copy_tree`, XCP on its own file system) must work; the scenario then reads the victim's files back after
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
    batches(&mut c, &mut fs, fs_id, vdata, d1, h.nblocks);
    c.finish()
}

/// The batched calls (`xn_write_from_batch`, `xn_evict_batch`): each pair
/// or block checked as the single call checks it, the first that cannot go
/// ending the batch, and the arguments themselves refused when bad.
fn batches(c: &mut Checks, fs: &mut Fs<XnDisk>, fs_id: u32, vdata: u64, d1: u64, nblocks: u64) {
    use oxok_libos::sys;
    const KERNEL: u64 = 0xffff_8000_0000_0000;
    c.expect(
        xn::write_from_batch(&[[vdata, d1]]),
        Err(XnError::Refused { code: refuse::DENIED, block: vdata, detail: 0 }),
        "batch: victim's block as the first destination refused",
    );
    c.expect(sys::xn_write_from_batch(0, 1), Err(Error::BadAddress), "batch: null pairs refused");
    c.expect(sys::xn_write_from_batch(KERNEL, 1), Err(Error::BadAddress), "batch: kernel pairs refused");
    let pairs = [[vdata, d1]];
    c.expect(sys::xn_write_from_batch(pairs.as_ptr() as u64, 0), Err(Error::Invalid), "batch: no pairs refused");
    // A fresh copy's blocks are not bound: the first pair goes, the
    // victim's second stops the batch, and alone it is refused.
    let before: Vec<u64> = rows(fs_id).iter().map(|r| r.block).collect();
    c.check(fs.copy_tree("/a", "/e").is_ok(), "batch: a second own copy");
    let e0 =
        rows(fs_id).iter().filter(|r| u32::from(r.ty) == DATA && !before.contains(&r.block)).map(|r| r.block).min();
    let Some(e0) = e0 else {
        c.check(false, "batch: the second copy's blocks");
        return;
    };
    // The copy let its sources leave the cache: reading `/a` brings them
    // back (and binds them: a bound source may be copied from).
    let mut a = alloc::vec![0u8; 3 * 4096 + 100];
    c.check(fs.read("/a", 0, &mut a).is_ok(), "batch: the source read back into the cache");
    let r = xn::write_from_batch(&[[e0, d1], [vdata, d1]]);
    c.check(
        matches!(r, Ok((1, _))),
        &alloc::format!("batch: an own pair goes, the victim's after it ends the batch ({r:?})"),
    );
    c.expect(
        xn::write_from_batch(&[[vdata, d1]]).map(|_| ()),
        Err(XnError::Refused { code: refuse::DENIED, block: vdata, detail: 0 }),
        "batch: the victim's pair alone refused",
    );
    // Eviction: a bound block (`/a`'s, read above) and blocks past the
    // disk or free are skipped; bad arguments refused.
    let free = (1..nblocks).find(|&b| xn::is_free(b) == Some(true)).unwrap_or(0);
    c.expect(xn::evict_batch(&[d1, u64::MAX, free]), Ok((3, 0)), "evict batch: bound, past the disk, free all skipped");
    c.expect(sys::xn_evict_batch(0, 1), Err(Error::BadAddress), "evict batch: null blocks refused");
    c.expect(sys::xn_evict_batch(KERNEL, 1), Err(Error::BadAddress), "evict batch: kernel blocks refused");
    c.expect(sys::xn_evict_batch([d1].as_ptr() as u64, 0), Err(Error::Invalid), "evict batch: no blocks refused");
    // A count far past the array: one kernel entry looks at no more than
    // its step, all of them here blocks past the disk.
    let far = [u64::MAX; 256];
    let step = oxok_libos::exposed::restart_records().min(far.len() as u64);
    c.expect(
        sys::xn_evict_batch(far.as_ptr() as u64, u64::MAX),
        Ok([0, step, 0]),
        "evict batch: a huge count looks at one step's blocks",
    );
    let pairs = [[u64::MAX, d1]; 4];
    c.expect(
        xn::write_from_batch(&pairs).map(|_| ()),
        Err(XnError::Refused { code: refuse::OUT_OF_RANGE, block: u64::MAX, detail: 0 }),
        "batch: a destination past the disk refused",
    );
    // Write-back in batches (`xn_write_batch`): bad arguments refused, a
    // block past the disk refused as `xn_write` refuses it, and ending a
    // batch after an own block that went.
    c.expect(sys::xn_write_batch(0, 1), Err(Error::BadAddress), "write batch: null blocks refused");
    c.expect(sys::xn_write_batch(KERNEL, 1), Err(Error::BadAddress), "write batch: kernel blocks refused");
    c.expect(sys::xn_write_batch([d1].as_ptr() as u64, 0), Err(Error::Invalid), "write batch: no blocks refused");
    c.expect(
        xn::write_batch(&[u64::MAX; 4]).map(|_| ()),
        xn::write(u64::MAX).map(|_| ()),
        "write batch: a block past the disk refused as xn_write refuses it",
    );
    c.check(fs.sync().is_ok(), "write batch: own file system syncs first");
    let r = xn::write_batch(&[d1, u64::MAX, d1]);
    c.check(
        matches!(r, Ok((1, _))),
        &alloc::format!("write batch: an own block goes, one past the disk after it ends the batch ({r:?})"),
    );
    c.check(fs.sync().is_ok(), "batch: own file system syncs after");
}
