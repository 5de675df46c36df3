//! fs-behind: a small file's first write waits behind in the client's
//! buffer (`flags::BEHIND`, `proto::behind`) and nobody ever misses it.
//! Starts its own `fsd` (with `routed`: uses the server its paths go to,
//! `dfsd` on C-FFS when booted with a disk), makes this process's buffer
//! with one big write, then:
//!
//! - a small file's create, write and close cost one request (its `OPEN`),
//!   and this process, a forked child and the file's status all see its
//!   bytes at once; the close waits and goes with the next open that
//!   changes a file;
//! - a reader that got the file's bytes with its open before another
//!   process opened it for writing reads the writer's bytes once its write
//!   returned (the granted open moved the generation), and one that opens
//!   the file while the writer's grant stands gets no bytes with its open
//!   and reads the writer's (pipes order the two processes, and carry
//!   nothing to the server);
//! - a record still waiting when this process writes another file through
//!   the buffer, or leaves another file's write behind, is taken first
//!   (by the write's request; by a `SETTLE`);
//! - past the client, forged records change nothing: a handle that is not
//!   this client's, one open for reading, one opened without `BEHIND`, one
//!   appending (never granted), a length past the room, a second record
//!   for a granted handle, and one for a handle whose grant a `SEEK`
//!   ended; a granted handle's own record is written. A second behind
//!   page, and one for a client without a buffer, are refused. The server
//!   serves on, and every other file is as it was.
//!
//! At the end (not `routed`) the server stops.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::{self, File};
use oxok_libos::fs::buffer::BEHIND_CLIENT_VA;
use oxok_libos::fs::proto::{Status, behind, flags, op};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::rt::page::SharedPage;
use oxok_libos::vm::{self, Fork};
use oxok_tests::Checks;
use oxok_tests::fsraw::{open_handles, path_request, raw, request};

oxok_libos::main!(main);

const BIG: &str = "/bh-big";
const BIG_LEN: usize = 64 * 1024;

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(13) ^ salt).collect()
}

fn main(args: Args) -> i32 {
    let mut t = Checks::new("fs-behind");
    let routed = args.iter().any(|a| a == "routed");
    let server = if routed {
        None
    } else {
        let Some(s) = oxok_tests::fsraw::own_server("fs-behind") else { return 1 };
        Some(s)
    };
    // One big write makes this process's buffer (32 pages).
    t.check(fs::write_file(BIG, &pattern(BIG_LEN, 1)).is_ok(), "64 KiB written");

    one_request(&mut t);
    prefetched_before(&mut t);
    opened_while_granted(&mut t);
    taken_first(&mut t);
    forged(&mut t);

    t.expect(fs::read_file(BIG).ok(), Some(pattern(BIG_LEN, 1)), "the big file is as it was");
    let _ = fs::unlink(BIG);
    if let Some(server) = server {
        t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops");
    }
    t.finish()
}

/// A small file made in one request, seen at once by everyone.
fn one_request(t: &mut Checks) {
    const P: &str = "/bh-one";
    let a = pattern(1000, 0x31);
    // The first open that may leave a write behind asks for the page.
    t.check(fs::write_file(P, b"first").is_ok(), "a first small file written");
    let before = fs::requests();
    t.check(fs::write_file(P, &a).is_ok(), "1,000 bytes written to a new file");
    t.expect(fs::requests() - before, 1, "the create, the write and the close cost one request (the open)");
    match vm::fork() {
        Ok(Fork::Child) => {
            let same = fs::read_file(P).is_ok_and(|got| got == a);
            oxok_libos::process::exit(if same { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "a forked child reads every byte");
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
    t.expect(fs::stat(P).map(|m| m.size).ok(), Some(1000), "its status says its length");
    t.expect(fs::read_file(P).ok(), Some(a), "this process reads every byte");
    // The close of a file written waits, and goes with the next open
    // that changes a file: the server's handles stay one over.
    let server = fs::open_file(P, OpenFlags::READ).map(|f| f.server()).unwrap_or(0);
    fs::closes::flush();
    let base = open_handles(server);
    t.check(fs::write_file("/bh-one-a", b"a").is_ok(), "another small file written");
    t.expect(open_handles(server), base.map(|h| h + 1), "its close waits");
    t.check(fs::write_file("/bh-one-b", b"b").is_ok(), "and another");
    t.expect(open_handles(server), base.map(|h| h + 1), "its open carried the close that waited; its own waits");
    let _ = fs::unlink("/bh-one-a");
    let _ = fs::unlink("/bh-one-b");
    // One byte past the room: the write goes through the buffer at once.
    let b = pattern(behind::MAX + 1, 0x32);
    let before = fs::requests();
    t.check(fs::write_file(P, &b).is_ok(), "a file one byte past the room written");
    t.expect(fs::requests() - before, 2, "it cost its open and its write");
    t.expect(fs::read_file(P).ok(), Some(b), "and reads back");
    let _ = fs::unlink(P);
}

/// A pipe's two ends as descriptors: (read, write).
fn pipe() -> Option<(usize, usize)> {
    let (r, w) = fd::pipe::pipe().ok()?;
    Some((fd::install(r).ok()?, fd::install(w).ok()?))
}

/// One byte through a pipe, to order two processes.
fn signal(fd: usize) -> bool {
    fd::write(fd, b"!").is_ok_and(|n| n == 1)
}

fn wait_for(fd: usize) -> bool {
    let mut b = [0u8; 1];
    fd::read(fd, &mut b).is_ok_and(|n| n == 1)
}

/// Runs `child` in a forked child with the write end of a pipe up and the
/// read end of one down, and `parent` here with the other ends; the child
/// ends when the parent is done, and must exit 0.
fn with_child(
    t: &mut Checks,
    child: impl FnOnce(usize, usize) -> bool,
    parent: impl FnOnce(&mut Checks, usize, usize),
) {
    let (Some((up_r, up_w)), Some((down_r, down_w))) = (pipe(), pipe()) else {
        return t.check(false, "pipes made");
    };
    match vm::fork() {
        Ok(Fork::Child) => {
            // A buffer of the child's own first (the parent's is not).
            let own = fs::read_file(BIG).is_ok_and(|b| b.len() == BIG_LEN);
            // The child ends (and sends its closes) only once the parent
            // has looked.
            let ok = own && child(up_w, down_r) && wait_for(down_r);
            oxok_libos::process::exit(if ok { 0 } else { 1 })
        }
        Ok(Fork::Parent(c)) => {
            parent(t, up_r, down_w);
            t.check(signal(down_w), "the writer told to end");
            t.expect(exec::wait(c), Ok(ExitStatus::Exited(0)), "the writer did its part");
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
    for f in [up_r, up_w, down_r, down_w] {
        let _ = fd::close(f);
    }
}

/// A reader holding a file's bytes from its open, then another process's
/// write left behind: the reader reads the new bytes.
fn prefetched_before(t: &mut Checks) {
    const P: &str = "/bh-pre";
    let old = pattern(800, 0x41);
    let new = pattern(800, 0x42);
    t.check(fs::write_file(P, &old).is_ok(), "a file written");
    let Ok(reader) = fs::open_file(P, OpenFlags::READ) else { return t.check(false, "opened to read") };
    let child = |up: usize, _down: usize| {
        let Ok(w) = fs::open_file(P, OpenFlags::WRITE) else { return false };
        let before = fs::requests();
        let wrote = w.write(&new).is_ok_and(|n| n == new.len());
        // The write waits behind: no request, and the parent is told.
        wrote && fs::requests() == before && signal(up)
    };
    let parent = |t: &mut Checks, up: usize, _down: usize| {
        t.check(wait_for(up), "the writer's write returned");
        let mut buf = vec![0u8; 2000];
        let n = reader.read(&mut buf).unwrap_or(0);
        t.check(n == new.len() && buf[..n] == new[..], "a reader with the old bytes from its open reads the writer's");
    };
    with_child(t, child, parent);
    drop(reader);
    let _ = fs::unlink(P);
}

/// A reader that opens a file while another process may still leave its
/// first write behind gets no bytes with its open, and reads the write.
fn opened_while_granted(t: &mut Checks) {
    const P: &str = "/bh-grant";
    let old = pattern(700, 0x51);
    let new = pattern(700, 0x52);
    t.check(fs::write_file(P, &old).is_ok(), "a file written");
    let child = |up: usize, down: usize| {
        let Ok(w) = fs::open_file(P, OpenFlags::WRITE) else { return false };
        if !signal(up) || !wait_for(down) {
            return false;
        }
        let before = fs::requests();
        let wrote = w.write(&new).is_ok_and(|n| n == new.len());
        wrote && fs::requests() == before && signal(up)
    };
    let parent = |t: &mut Checks, up: usize, down: usize| {
        t.check(wait_for(up), "the writer opened the file");
        let reader = fs::open_file(P, OpenFlags::READ);
        t.check(reader.is_ok() && signal(down), "opened to read, the writer told");
        t.check(wait_for(up), "the writer's write returned");
        let mut buf = vec![0u8; 2000];
        let n = reader.map_or(0, |r| r.read(&mut buf).unwrap_or(0));
        t.check(n == new.len() && buf[..n] == new[..], "the reader reads the write left behind");
    };
    with_child(t, child, parent);
    let _ = fs::unlink(P);
}

/// A record still waiting is taken before this process's next write
/// through the buffer, or its next write left behind.
fn taken_first(t: &mut Checks) {
    let (a, b, c) = (pattern(3000, 0x61), pattern(20_000, 0x62), pattern(900, 0x63));
    let opened = ["/bh-a", "/bh-b", "/bh-c"].map(|p| fs::open_file(p, OpenFlags::WRITE | OpenFlags::CREATE).ok());
    let [Some(fa), Some(fb), Some(fc)] = opened else { return t.check(false, "three files made") };
    let before = fs::requests();
    t.check(fa.write(&a).is_ok_and(|n| n == a.len()), "3,000 bytes left behind");
    t.check(fb.write(&b).is_ok_and(|n| n == b.len()), "20,000 bytes through the buffer");
    t.check(fc.write(&c).is_ok_and(|n| n == c.len()), "900 bytes left behind");
    // The big write's request took the first record first; the third was
    // left behind with nothing waiting.
    t.expect(fs::requests() - before, 1, "one request: the big write");
    drop((fa, fb, fc));
    t.expect(fs::read_file("/bh-a").ok(), Some(a), "the first file reads right");
    t.expect(fs::read_file("/bh-b").ok(), Some(b), "the second too");
    t.expect(fs::read_file("/bh-c").ok(), Some(c), "and the third");
    let (d, e) = (pattern(1200, 0x64), pattern(1300, 0x65));
    let opened = ["/bh-d", "/bh-e"].map(|p| fs::open_file(p, OpenFlags::WRITE | OpenFlags::CREATE).ok());
    let [Some(fd_), Some(fe)] = opened else { return t.check(false, "two files made") };
    let before = fs::requests();
    t.check(fd_.write(&d).is_ok() && fe.write(&e).is_ok(), "two writes left behind in turn");
    t.expect(fs::requests() - before, 1, "the first taken before the second was left (one request)");
    drop((fd_, fe));
    t.expect(fs::read_file("/bh-d").ok(), Some(d), "the first reads right");
    t.expect(fs::read_file("/bh-e").ok(), Some(e), "the second too");
    for p in ["/bh-a", "/bh-b", "/bh-c", "/bh-d", "/bh-e"] {
        let _ = fs::unlink(p);
    }
}

/// Records written past the client, in this process's own behind page.
fn forged(t: &mut Checks) {
    const P: &str = "/bh-forged";
    let base = pattern(600, 0x71);
    t.check(fs::write_file(P, &base).is_ok(), "a file written");
    let Ok(probe) = fs::open_file(P, OpenFlags::READ) else { return t.check(false, "opened") };
    let server = probe.server();
    drop(probe);
    fs::closes::flush();
    let Some(page) = SharedPage::readable(BEHIND_CLIENT_VA) else {
        return t.check(false, "this process's behind page");
    };
    let word = &page.words()[behind::WORD_AT / 8];
    t.expect(word.load(core::sync::atomic::Ordering::Acquire), 0, "nothing waits");
    let evil = pattern(500, 0x7f);
    // Leaves `evil` behind for `handle` with `w` (a word of the caller's
    // making), then has the server look.
    let leave_bytes = |w: u64, bytes: &[u8]| {
        page.copy_in(behind::DATA_AT, bytes);
        word.store(w, core::sync::atomic::Ordering::Release);
        let r = raw(server, &request(op::SETTLE, 0, 0, &[]));
        (r.is_ok_and(|r| Status::of(r[0]) == Status::Ok), word.load(core::sync::atomic::Ordering::Acquire))
    };
    let leave = |w: u64| leave_bytes(w, &evil);
    let open = |bits: u64| {
        raw(server, &path_request(op::OPEN, bits, P.as_bytes())).ok().filter(|r| Status::of(r[0]) == Status::Ok)
    };
    let unchanged = |t: &mut Checks, what: &str| {
        t.expect(fs::read_file(P).ok().as_deref(), Some(&base[..]), &format!("{what}: the file is as it was"));
    };

    // A granted handle held throughout, never written: the server looks
    // at records only while some handle holds a grant.
    let keeper = open(flags::WRITE | flags::BEHIND);
    t.check(keeper.is_some_and(|r| r[4] == behind::GRANTED), "an open for writing with BEHIND is granted");
    let granted = open(flags::WRITE | flags::BEHIND);
    t.check(granted.is_some_and(|r| r[4] == behind::GRANTED), "and another");
    let g = granted.map_or(0, |r| r[1]);

    let rec = |h: u64, len: usize| behind::word(h, len).unwrap_or(0);
    t.expect(leave(rec(999, evil.len())), (true, 0), "a handle not this client's: taken and dropped");
    unchanged(t, "a handle not this client's");

    let reads = open(flags::READ | flags::BEHIND);
    t.check(reads.is_some_and(|r| r[4] != behind::GRANTED), "an open for reading is never granted");
    t.expect(leave(rec(reads.map_or(0, |r| r[1]), evil.len())), (true, 0), "a record for a reader's handle dropped");
    unchanged(t, "a reader's handle");

    let plain = open(flags::WRITE);
    t.check(plain.is_some_and(|r| r[4] != behind::GRANTED), "an open without BEHIND is not granted");
    t.expect(leave(rec(plain.map_or(0, |r| r[1]), evil.len())), (true, 0), "a record for it dropped");
    unchanged(t, "a handle opened without BEHIND");

    let appends = open(flags::WRITE | flags::APPEND | flags::BEHIND);
    t.check(appends.is_some_and(|r| r[4] != behind::GRANTED), "an appending open is never granted");
    t.expect(leave(rec(appends.map_or(0, |r| r[1]), evil.len())), (true, 0), "a record for it dropped");
    unchanged(t, "an appending handle");

    let too_long = 1 << 63 | ((behind::MAX as u64 + 1) << 40) | g;
    t.expect(leave(too_long), (true, 0), "a length past the room: dropped");
    unchanged(t, "a length past the room");
    t.expect(leave(rec(g, evil.len())), (true, 0), "the granted handle's own record taken");
    let mut want = base.clone();
    want[..evil.len()].copy_from_slice(&evil);
    t.expect(fs::read_file(P).ok(), Some(want.clone()), "and written at the handle's position");
    let again = pattern(500, 0x11);
    page.copy_in(behind::DATA_AT, &again);
    word.store(rec(g, again.len()), core::sync::atomic::Ordering::Release);
    t.check(raw(server, &request(op::SETTLE, 0, 0, &[])).is_ok(), "a second record for it");
    t.expect(fs::read_file(P).ok(), Some(want.clone()), "a second record for the handle changed nothing");

    let ended = open(flags::WRITE | flags::BEHIND);
    let e = ended.map_or(0, |r| r[1]);
    t.check(ended.is_some_and(|r| r[4] == behind::GRANTED), "another granted open");
    let sought = raw(server, &request(op::SEEK, 0, 0, &[e, 0]));
    t.check(sought.is_ok_and(|r| Status::of(r[0]) == Status::Ok), "a SEEK of it");
    let other = pattern(400, 0x22);
    t.expect(leave_bytes(rec(e, other.len()), &other), (true, 0), "a record after the SEEK dropped");
    t.expect(fs::read_file(P).ok(), Some(want), "the SEEK ended the grant: nothing written");

    for h in [keeper, reads, plain, appends, granted, ended].iter().flatten().map(|r| r[1]) {
        let _ = raw(server, &request(op::CLOSE, 1, 0, &[h]));
    }
    // The page is made once per buffer, and never for a client without one.
    let again = raw(server, &request(op::BEHIND_PAGE, 0, 0, &[])).ok().map(|r| Status::of(r[0]));
    t.expect(again, Some(Status::Invalid), "a second behind page is refused");
    match vm::fork() {
        Ok(Fork::Child) => {
            // The parent's buffer is not the child's: it holds none yet.
            let r = raw(server, &request(op::BEHIND_PAGE, 0, 0, &[])).ok().map(|r| Status::of(r[0]));
            oxok_libos::process::exit(if r == Some(Status::Invalid) { 0 } else { 1 })
        }
        Ok(Fork::Parent(c)) => {
            t.expect(exec::wait(c), Ok(ExitStatus::Exited(0)), "a client without a buffer gets no behind page")
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
    t.expect(fs::stat(BIG).map(|m| m.size).ok(), Some(BIG_LEN as u64), "the server serves on");
    t.expect(fs::stat(P).map(|m| m.size).ok(), Some(600), "the file's length is as it was");
    let _ = fs::unlink(P);
}
