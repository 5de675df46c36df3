//! xntest: XN from a program (`disk-*` scenarios).
//!
//! * `xntest basic` — register, root, allocate, write through a writable
//!   binding, order the writes (a pointer to a tainted block is refused),
//!   flush, evict and read back from disk, free (will-free), `fsck`.
//! * `xntest persist-write` / `persist-read` — the first writes a root and
//!   data blocks durably; after a reboot on the same image the second finds
//!   the root recovered and the data intact.
//! * `xntest hostile` — the victim file system, then a child (`xntest
//!   attack …`, another principal) attacks it; bad templates; disk full;
//!   the victim passes `fsck` after everything.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::ToString;
use oxok_libos::abi::xn::{BLOCK_SIZE, refuse, reject, rights};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::xn::{self, XnError};
use oxok_libos::{Args, exposed, println};
use oxok_tests::unchanged::Snapshot;
use oxok_tests::xn::{Inode, fsck, inode_template, pattern};
use oxok_tests::{Checks, principal};
use oxok_xn::{Asm, template};

oxok_libos::main!(main);

/// Where bound pages go.
const VA: u64 = 0x5f00_0000_0000;
/// The persisted root's block.
const PERSIST_ROOT: u64 = 3;
/// The persisted data blocks.
const PERSIST_DATA: (u64, u64) = (10, 4);
const SEED: u64 = 77;

fn refused(code: u64) -> impl Fn(Result<(), XnError>) -> bool {
    move |r| matches!(r, Err(XnError::Refused { code: c, .. }) if c == code)
}

fn main(args: Args) -> i32 {
    let mode = args.get(1).unwrap_or("basic");
    if xn::header().is_none() {
        println!("xntest: no disk");
        return 1;
    }
    match mode {
        "basic" => basic(),
        "persist-write" => persist_write(),
        "persist-read" => persist_read(),
        "hostile" => hostile(),
        "attack" => attack(&args),
        "dup-write" => dup_write(),
        "dup-read" => dup_read(),
        _ => {
            println!("xntest: unknown mode {mode}");
            2
        }
    }
}

/// Fills cached block `b` with its pattern through a writable binding.
fn put_pattern(c: &mut Checks, b: u64) {
    let va = VA + (b % 256) * BLOCK_SIZE as u64;
    c.expect(xn::bind(b, va, rights::READ | rights::WRITE), Ok(()), "bind data writable");
    if let Ok(mut p) = xn::page_mut(va)
        && let Some(bytes) = p.bytes_mut()
    {
        pattern(b, SEED, bytes);
    }
    let _ = oxok_libos::sys::page_unmap(0, va);
}

/// Allocates `start..start+len` as entry `i` of `inode` at `root`, fills
/// each block with its pattern through a writable binding, writes it and
/// flushes; then writes the root durably.
fn fill(c: &mut Checks, root: u64, inode: &Inode, i: u32, start: u64, len: u64) -> Inode {
    let next = inode.set(i, start, len, 0);
    c.expect(xn::alloc(root, &next.0, start, len, 0), Ok(()), "allocate data blocks");
    c.check(xn::row_of(start).is_some_and(|r| r.state == oxok_libos::abi::xn::state::TAINTED), "new block tainted");
    // The root may not reach the disk while it points to tainted blocks.
    let w = xn::write(root);
    c.check(
        matches!(w, Err(XnError::Refused { code: refuse::TAINTED_POINTER, block, detail }) if block == root && detail == start),
        "pointer to a tainted block refused",
    );
    for b in start..start + len {
        put_pattern(c, b);
        c.check(xn::write(b).and_then(xn::wait).is_ok(), "write data block");
    }
    c.check(xn::flush().and_then(xn::wait).is_ok(), "flush data");
    c.check(xn::row_of(start).is_some_and(|r| r.state == oxok_libos::abi::xn::state::CLEAN), "data clean");
    c.check(xn::write_sync(root).is_ok(), "root written once its blocks are durable");
    next
}

/// As [`fill`], but every block's write is issued before any is waited
/// for: writes of adjacent blocks, one after another, reach the device as
/// runs, fewer requests than blocks (the header's `write_requests`). Each
/// block is then evicted and read back from the disk.
fn fill_burst(c: &mut Checks, root: u64, inode: &Inode, i: u32, start: u64, len: u64) -> Inode {
    let next = inode.set(i, start, len, 0);
    c.expect(xn::alloc(root, &next.0, start, len, 0), Ok(()), "burst: allocate data blocks");
    let counts = || xn::header().map_or((0, 0), |h| (h.writes, h.write_requests));
    let before = counts();
    let mut last = 0;
    for b in start..start + len {
        put_pattern(c, b);
        match xn::write(b) {
            Ok(seq) => last = seq,
            Err(e) => c.check(false, &alloc::format!("burst: write of block {b}: {e}")),
        }
    }
    c.check(xn::wait(last).is_ok(), "burst: every write completed");
    let after = counts();
    let (writes, requests) = (after.0 - before.0, after.1 - before.1);
    c.expect(writes, len, "burst: one write counted per block");
    c.check(
        requests >= 1 && requests < writes,
        &alloc::format!("burst: {writes} adjacent blocks in {requests} requests"),
    );
    c.check(xn::flush().and_then(xn::wait).is_ok(), "burst: flush data");
    c.check(xn::write_sync(root).is_ok(), "burst: root written once its blocks are durable");
    let mut intact = 0;
    for b in start..start + len {
        let va = VA + (b % 256) * BLOCK_SIZE as u64;
        let back = xn::evict(b).is_ok()
            && xn::read(b).is_ok()
            && xn::bind(b, va, rights::READ).is_ok()
            && xn::page(va).is_ok_and(|p| oxok_tests::xn::has_pattern(b, SEED, p.bytes()));
        let _ = oxok_libos::sys::page_unmap(0, va);
        intact += u64::from(back);
    }
    c.expect(intact, len, "burst: every block read back from the disk intact");
    next
}

fn basic() -> i32 {
    let mut c = Checks::new("xntest basic");
    let t = inode_template();
    let fs = match xn::register(&[&t]) {
        Ok(fs) => fs,
        Err(e) => {
            println!("xntest: register: {e}");
            return 1;
        }
    };
    let free0 = xn::header().map_or(0, |h| h.free);
    let root = 1;
    let me = exposed::self_id();
    let inode = Inode::new(me);
    c.expect(xn::root(fs, root, 1, &inode.0), Ok(()), "root");
    // Metadata is never mapped writable.
    c.check(refused(refuse::METADATA_WRITABLE)(xn::bind(root, VA, rights::WRITE)), "metadata bound writable refused");
    let inode = fill(&mut c, root, &inode, 0, 20, 3);
    c.expect(xn::header().map(|h| h.free), Some(free0 - 4), "free map counts the blocks");
    // Evict a clean data block and read it back from the disk.
    c.expect(xn::evict(21), Ok(()), "evict clean block");
    c.check(xn::row_of(21).is_some_and(|r| r.frame == u64::MAX), "evicted");
    c.expect(xn::read(21), Ok(()), "read back from disk");
    // Several reads in flight at once, one wait.
    c.check(xn::evict(20).is_ok() && xn::evict(21).is_ok() && xn::evict(22).is_ok(), "evict three");
    c.expect(xn::prefetch(&[20, 21, 22]), Ok(()), "prefetch");
    c.check([20, 21, 22].iter().all(|&b| xn::row_of(b).is_some_and(|r| r.frame != u64::MAX)), "all cached again");
    c.expect(fsck(fs, root, &inode, SEED, VA + 0x10_0000), Ok(3), "fsck");
    let inode = fill_burst(&mut c, root, &inode, 1, 40, 24);
    // Free one block: the root on disk still points to it, so it waits.
    let less = inode.set(0, 20, 2, 0);
    c.expect(xn::free(root, &less.0, 22, 1), Ok(()), "free a block");
    c.check(xn::row_of(22).is_some_and(|r| r.will_free == 1), "freed block waits on the will-free list");
    c.check(xn::is_free(22) == Some(false), "not reusable yet");
    c.check(xn::write_sync(root).is_ok(), "root without it written");
    c.check(xn::flush().and_then(xn::wait).is_ok(), "flush");
    c.check(xn::is_free(22) == Some(true), "reusable once no pointer remains on disk");
    // Bindings: a window of bound pages; a change made through a writable
    // binding survives eviction (it went to the disk and came back).
    let mut bs = xn::Bindings::new(VA + 0x20_0000, 8);
    c.check(bs.get(20).is_ok_and(|p| oxok_tests::xn::has_pattern(20, SEED, p)), "bindings: data read");
    c.check(bs.get(root).is_ok_and(|p| Inode(*p).entries() == less.entries()), "bindings: metadata read");
    c.check(refused(refuse::METADATA_WRITABLE)(bs.get_mut(root).map(|_| ())), "bindings: metadata never writable");
    if let Ok(bytes) = bs.get_mut(20) {
        bytes[0] ^= 0xff;
    }
    c.check(xn::write_sync(20).is_ok(), "bindings: write through the binding");
    c.expect(xn::evict(20), Err(XnError::Sys(oxok_libos::Error::Busy)), "evict of a bound block refused");
    bs.forget(20);
    c.expect(xn::evict(20), Ok(()), "evict after forgetting");
    let mut want = [0u8; BLOCK_SIZE];
    pattern(20, SEED, &mut want);
    want[0] ^= 0xff;
    c.check(bs.get(20).is_ok_and(|p| *p == want), "bindings: the change came back from disk");
    drop(bs);
    stale_bytes_unseen(&mut c, root, &less);
    freed_while_mapped(&mut c, root, &less.set(0, 20, 3, 0));
    c.finish()
}

/// Block 22 freed while its cache frame is mapped here: the frame lives
/// on until unmapped, charged to this account all the while (it was once
/// given back at the free, so binding, freeing and allocating one block
/// over and over held frame after frame that nobody paid for).
fn freed_while_mapped(c: &mut Checks, root: u64, inode: &Inode) {
    let va = VA + 0x40_0000;
    let frames = || oxok_libos::process::usage(0).map_or(0, |u| u.frames);
    c.expect(xn::bind(22, va, rights::READ), Ok(()), "mapped: block 22 bound");
    let bound = frames();
    c.expect(xn::free(root, &inode.set(0, 20, 2, 0).0, 22, 1), Ok(()), "mapped: block 22 freed");
    c.expect(frames(), bound, "mapped: its frame, still mapped, still charged");
    c.check(oxok_libos::sys::page_unmap(0, va).is_ok(), "mapped: unmapped");
    c.expect(frames(), bound - 1, "mapped: the charge goes with the last mapping");
}

/// Blocks 21 and 22 hold their patterns on the disk; freed and allocated
/// again, they hold nothing yet: a read caches zeros without a disk
/// request, and so does a binding (never the former bytes).
fn stale_bytes_unseen(c: &mut Checks, root: u64, inode: &Inode) {
    let fewer = inode.set(0, 20, 1, 0);
    c.expect(xn::free(root, &fewer.0, 21, 1), Ok(()), "stale: free block 21");
    c.check(xn::write_sync(root).is_ok() && xn::flush().and_then(xn::wait).is_ok(), "stale: free made durable");
    c.check(xn::is_free(21) == Some(true) && xn::is_free(22) == Some(true), "stale: both blocks free");
    let again = fewer.set(0, 20, 3, 0);
    c.expect(xn::alloc(root, &again.0, 21, 2, 0), Ok(()), "stale: allocate them again");
    c.check(xn::row_of(21).is_some_and(|r| r.frame == u64::MAX), "stale: a data block is allocated uncached");
    let submitted = || xn::header().map_or(0, |h| h.submitted);
    let before = submitted();
    c.expect(xn::read(21), Ok(()), "stale: read of a block never written");
    c.check(xn::row_of(21).is_some_and(|r| r.frame != u64::MAX), "stale: cached at once");
    c.expect(submitted(), before, "stale: no disk request");
    // A binding that cannot map (its page is taken) leaves the block as it
    // was: not cached, still holding nothing.
    let taken = VA + 0x30_0000 + 15 * BLOCK_SIZE as u64;
    c.expect(xn::bind(21, taken, rights::READ), Ok(()), "stale: block 21 bound");
    c.expect(
        xn::bind(22, taken, rights::READ),
        Err(XnError::Sys(oxok_libos::Error::Exists)),
        "stale: a binding over a mapped page refused",
    );
    c.check(xn::row_of(22).is_some_and(|r| r.frame == u64::MAX), "stale: the refused binding cached nothing");
    let _ = oxok_libos::sys::page_unmap(0, taken);
    let zeros = |b: u64, want: u32| {
        let va = VA + 0x30_0000 + (b % 16) * BLOCK_SIZE as u64;
        let ok = xn::bind(b, va, want).is_ok() && xn::page(va).is_ok_and(|p| p.bytes().iter().all(|&x| x == 0));
        let _ = oxok_libos::sys::page_unmap(0, va);
        ok
    };
    c.check(zeros(21, rights::READ), "stale: the read block shows zeros");
    c.check(zeros(22, rights::READ | rights::WRITE), "stale: a block bound without a read shows zeros");
}

fn persist_write() -> i32 {
    let mut c = Checks::new("xntest persist-write");
    let t = inode_template();
    let Ok(fs) = xn::register(&[&t]) else {
        println!("xntest: register failed");
        return 1;
    };
    let inode = Inode::new(0);
    c.expect(xn::root(fs, PERSIST_ROOT, 1, &inode.0), Ok(()), "root");
    let inode = fill(&mut c, PERSIST_ROOT, &inode, 0, PERSIST_DATA.0, PERSIST_DATA.1);
    c.expect(fsck(fs, PERSIST_ROOT, &inode, SEED, VA + 0x10_0000), Ok(PERSIST_DATA.1), "fsck before reboot");
    c.check(xn::wait_catalog().is_ok(), "catalogue durable");
    println!("xntest: persisted root {PERSIST_ROOT} of file system {fs}");
    c.finish()
}

fn persist_read() -> i32 {
    let mut c = Checks::new("xntest persist-read");
    let h = xn::header();
    c.check(h.is_some_and(|h| h.fss == 1 && h.roots == 1), "catalogue recovered");
    c.check(h.is_some_and(|h| h.recovered == 1 + PERSIST_DATA.1 && h.duplicates == 0), "blocks recovered");
    let root = xn::root_row(0);
    c.check(root.is_some_and(|r| r.block == PERSIST_ROOT && r.fs == 0 && r.ty == 1), "root row");
    c.expect(xn::read(PERSIST_ROOT), Ok(()), "read root");
    c.expect(xn::bind(PERSIST_ROOT, VA, rights::READ), Ok(()), "bind root read-only");
    let Ok(page) = xn::page(VA) else {
        println!("xntest: root page unreadable");
        return 1;
    };
    let inode = Inode(*page.bytes());
    c.expect(inode.entries().first().copied(), Some((PERSIST_DATA.0, PERSIST_DATA.1, 0)), "root content");
    c.expect(fsck(0, PERSIST_ROOT, &inode, SEED, VA + 0x10_0000), Ok(PERSIST_DATA.1), "data read back after reboot");
    c.finish()
}

/// The victim: a file system with a root and data; bad templates; the
/// attacker child; the victim's own forbidden moves; disk full; fsck.
fn hostile() -> i32 {
    let mut c = Checks::new("xntest hostile");
    // UDFs that loop too long or read outside their block are refused.
    let spin = Asm::new().repeat(0, 4096, 2).repeat(1, 4096, 1).li(2, 0);
    let outside = Asm::new().ld64(0, 7, 4096);
    let ok_acl = Asm::new().li(0, 0).prin(0, rights::ALL);
    let ok_size = Asm::new().li(0, 0).size(0);
    let t_spin = template(&spin, &ok_acl, &ok_size);
    let t_out = template(&Asm::new().li(0, 0).ext(0, 0, 0), &outside.prin(0, 1), &ok_size);
    c.check(
        matches!(xn::register(&[&t_spin]), Err(XnError::Rejected { code: reject::TOO_COSTLY, index: 0 })),
        "looping UDF rejected",
    );
    c.check(
        matches!(
            xn::register(&[&inode_template(), &t_out]),
            Err(XnError::Rejected { code: reject::OUT_OF_BLOCK, index: 1 })
        ),
        "UDF reading past its block rejected",
    );
    // A computed read outside the block stops the run: refused, not a crash.
    let wild = Asm::new().ld64(1, 7, 0).ld64(2, 1, 0).ext(2, 2, 0);
    let t_wild = template(&wild, &Asm::new().li(0, 0).prin(0, rights::ALL), &ok_size);
    let wild_fs = xn::register(&[&t_wild]);
    c.check(wild_fs.is_ok(), "wild template verifies");
    if let Ok(wfs) = wild_fs {
        let mut img = [0u8; BLOCK_SIZE];
        img[..8].copy_from_slice(&1_000_000u64.to_le_bytes());
        // XN's own check is `xn_root`'s last: refused there, the frame
        // taken for the root went back (account and row as they were).
        let before = Snapshot::of_self();
        c.check(
            refused(refuse::UDF_FAULT)(xn::root(wfs, 60, 1, &img)),
            "UDF reading outside its block at run time refused",
        );
        c.expect(Snapshot::of_self(), before, "a root refused at its last check changed nothing");
    }

    let Ok(fs) = xn::register(&[&inode_template()]) else {
        println!("xntest: register failed");
        return 1;
    };
    // The victim's principal: this boot program holds `/8` (every
    // principal); the attacker it starts is given only its own.
    let root = 2;
    let inode = Inode::new(principal::VICTIM);
    c.expect(xn::root(fs, root, 1, &inode.0), Ok(()), "victim root");
    let inode = fill(&mut c, root, &inode, 0, 30, 4);
    // Freeing a block the metadata still points to.
    c.check(
        refused(refuse::OWNS_MISMATCH)(xn::free(root, &inode.0, 31, 1)),
        "free of a still-pointed-to block refused",
    );
    // Allocating a block that is not free (the root itself).
    let again = inode.set(1, root, 1, 0);
    let before = Snapshot::of_self();
    c.check(refused(refuse::NOT_FREE)(xn::alloc(root, &again.0, root, 1, 0)), "allocating an allocated block refused");
    c.expect(Snapshot::of_self(), before, "an allocation refused at its last check changed nothing");

    // The attacker: another environment acting as another principal.
    let a = [fs.to_string(), root.to_string(), "30".into()];
    let argv = ["xntest", "attack", a[0].as_str(), a[1].as_str(), a[2].as_str()];
    let mut opts = exec::SpawnOptions::new();
    opts.principal(principal::ATTACKER);
    match exec::spawn_with("xntest", &argv, &opts).map(exec::wait) {
        Ok(Ok(ExitStatus::Exited(0))) => c.check(true, "attacker refused everywhere"),
        other => {
            println!("xntest: attacker: {other:?}");
            c.check(false, "attacker refused everywhere")
        }
    }

    // Disk full: take every free block, then ask for one more.
    let mut owned = inode.clone();
    let mut entry = 1;
    let mut full = false;
    while let Some(h) = xn::header() {
        if h.free == 0 {
            full = true;
            break;
        }
        let Some(start) = (0..h.nblocks).find(|&b| xn::is_free(b) == Some(true)) else { break };
        let mut len = 1;
        while len < 64 && start + len < h.nblocks && xn::is_free(start + len) == Some(true) {
            len += 1;
        }
        if entry >= oxok_tests::xn::ENTRIES {
            break;
        }
        let next = owned.set(entry, start, len, 0);
        if let Err(e) = xn::alloc(root, &next.0, start, len, 0) {
            println!("xntest: filling the disk at {start}+{len}: {e}");
            break;
        }
        owned = next;
        entry += 1;
    }
    c.check(full, "disk filled");
    // Every block is taken: the only ones the victim does not own are its
    // root and the attacker's root (100).
    let e = entry.min(oxok_tests::xn::ENTRIES - 1);
    let more = owned.set(e, 100, 1, 0);
    c.check(refused(refuse::NOT_FREE)(xn::alloc(root, &more.0, 100, 1, 0)), "disk full: allocation refused");
    let last = xn::header().map_or(0, |h| h.nblocks);
    let past = owned.set(e, last, 1, 0);
    c.check(refused(refuse::BAD_OWNS)(xn::alloc(root, &past.0, last, 1, 0)), "past the disk refused");
    // Nothing lost: the victim's data is intact.
    c.expect(fsck(fs, root, &inode, SEED, VA + 0x10_0000).map(|_| ()), Ok(()), "victim passes fsck");
    c.finish()
}

/// The attacker (another principal): every move on the victim's blocks
/// is refused.
fn attack(args: &Args) -> i32 {
    let mut c = Checks::new("xntest attack");
    let n = |i: usize| args.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let (vfs, vroot, vdata) = (n(2) as u32, n(3), n(4));
    c.expect(oxok_libos::principal::mine(), Some(principal::ATTACKER), "acts as its own principal");
    // Principals it tries to mint: none acts as the victim's, and every
    // move below is made with them in its list.
    let forged_caps = principal::forge(&mut c, principal::VICTIM);
    // Writing a block it does not own: binding writable, changing metadata.
    c.check(refused(refuse::DENIED)(xn::bind(vdata, VA, rights::WRITE)), "bind victim data writable refused");
    c.check(refused(refuse::DENIED)(xn::bind(vdata, VA, rights::READ)), "bind victim data readable refused");
    let mut forged = Inode::new(principal::own());
    c.check(refused(refuse::DENIED)(xn::modify(vroot, &forged.0)), "rewrite victim root refused");
    c.check(refused(refuse::DENIED)(xn::free(vroot, &forged.0, vdata, 1)), "free victim block refused");
    let into = forged.set(5, 200, 1, 0);
    c.check(refused(refuse::DENIED)(xn::alloc(vroot, &into.0, 200, 1, 0)), "allocate into victim root refused");
    // Forged metadata of its own file system claiming the victim's blocks.
    let Ok(fs) = xn::register(&[&inode_template()]) else {
        println!("xntest attack: register failed");
        return 1;
    };
    c.check(fs != vfs, "own file system");
    let claim = forged.set(0, vdata, 1, 0);
    c.check(refused(refuse::OWNS_MISMATCH)(xn::root(fs, 100, 1, &claim.0)), "root born owning victim blocks refused");
    c.expect(xn::root(fs, 100, 1, &forged.0), Ok(()), "own root");
    c.check(refused(refuse::NOT_FREE)(xn::alloc(100, &claim.0, vdata, 1, 0)), "allocate victim block refused");
    c.check(refused(refuse::OWNS_MISMATCH)(xn::modify(100, &claim.0)), "claim victim block by rewrite refused");
    c.check(refused(refuse::NOT_FREE)(xn::root(fs, vroot, 1, &forged.0)), "take victim root refused");
    forged = forged.set(0, 0, 0, 0);
    c.check(xn::modify(100, &forged.0).is_ok(), "own root still usable");
    principal::drop_all(&forged_caps);
    // Cache frames are charged: under a small account a metadata
    // allocation fails whole; a data allocation takes no frame (its blocks
    // are cached as zeros when first read or bound), and binding its blocks
    // past the account is refused.
    use oxok_libos::abi::{ACCOUNT_FRAMES, ACCOUNT_UNLIMITED};
    use oxok_libos::sys;
    // A first split gives this environment an account of its own (it
    // shared its parent's); the second limits it to 16 frames beyond what
    // it uses.
    c.check(sys::env_limit(0, ACCOUNT_UNLIMITED, ACCOUNT_UNLIMITED).is_ok(), "own account");
    let used = sys::account_info(0, ACCOUNT_FRAMES).map_or(0, |[u, _, _]| u);
    c.check(sys::env_limit(0, used + 16, ACCOUNT_UNLIMITED).is_ok(), "limit own account");
    let free_before = xn::header().map_or(0, |h| h.free);
    let big = forged.set(0, 200, 64, 1);
    c.expect(
        xn::alloc(100, &big.0, 200, 64, 1),
        Err(XnError::Sys(oxok_libos::Error::NoMemory)),
        "metadata allocation beyond the account refused",
    );
    c.expect(xn::header().map(|h| h.free), Some(free_before), "nothing allocated");
    let data = forged.set(0, 200, 64, 0);
    c.expect(xn::alloc(100, &data.0, 200, 64, 0), Ok(()), "data allocation takes no frame");
    let mut bound = 0;
    let mut last = Ok(());
    for b in 200..264 {
        last = xn::bind(b, VA + 0x40_0000 + (b - 200) * BLOCK_SIZE as u64, rights::READ);
        if last.is_err() {
            break;
        }
        bound += 1;
    }
    c.expect(last, Err(XnError::Sys(oxok_libos::Error::NoMemory)), "binding past the account refused");
    c.check(bound <= 16, &alloc::format!("{bound} blocks bound within 16 frames"));
    c.finish()
}

/// Two roots of one file system: 3 owns data 10..14, 5 owns nothing.
fn dup_write() -> i32 {
    let mut c = Checks::new("xntest dup-write");
    let Ok(fs) = xn::register(&[&inode_template()]) else {
        println!("xntest: register failed");
        return 1;
    };
    let a = Inode::new(0);
    c.expect(xn::root(fs, 3, 1, &a.0), Ok(()), "root 3");
    fill(&mut c, 3, &a, 0, 10, 4);
    c.expect(xn::root(fs, 5, 1, &Inode::new(0).0), Ok(()), "root 5");
    c.check(xn::write_sync(5).is_ok(), "root 5 written");
    c.check(xn::wait_catalog().is_ok(), "catalogue durable");
    c.finish()
}

/// After the damage: block 12 is reported, belongs to its first claimant
/// (root 5, followed first), and root 3 cannot free it.
fn dup_read() -> i32 {
    let mut c = Checks::new("xntest dup-read");
    c.check(xn::header().is_some_and(|h| h.duplicates == 1 && h.recovered == 6), "duplicate reported");
    c.check(xn::row_of(12).is_some_and(|r| r.parent == 5), "block 12 followed once, for root 5");
    c.check(xn::row_of(13).is_some_and(|r| r.parent == 3), "root 3 keeps the rest");
    c.expect(xn::read(3), Ok(()), "read root 3");
    let rest = Inode::new(0).set(0, 10, 2, 0).set(1, 13, 1, 0);
    c.check(refused(refuse::NOT_ALLOCATED)(xn::free(3, &rest.0, 12, 1)), "second claim cannot free it");
    for b in [10, 11, 13] {
        let va = VA + b * BLOCK_SIZE as u64;
        let ok = xn::read(b).is_ok()
            && xn::bind(b, va, rights::READ).is_ok()
            && xn::page(va).is_ok_and(|p| oxok_tests::xn::has_pattern(b, SEED, p.bytes()));
        c.check(ok, "undamaged data intact");
    }
    c.finish()
}
