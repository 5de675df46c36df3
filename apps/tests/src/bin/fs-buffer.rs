//! fs-buffer: file data by the page (`fs::buffer`, `pct_grant`). Starts its
//! own `fsd`, then: a 300 KiB file written in one call and read back in
//! 64 KiB, 100-byte and 7-byte reads mixed (page and register paths keep
//! one position); the buffer page is mapped here once big I/O ran; a
//! forked child gets a buffer of its own and reads and writes correct data
//! while the parent's keeps working. Refused: `pct_grant` outside a served
//! call; `READ_BUF`/`WRITE_BUF` before the caller has a buffer; a
//! `READ_BUF` asking for more than the buffer; a `READ_BUF` on another
//! client's handle. `BUFFER` as the protocol says, in a fresh child: pages
//! not from where the buffer ends, more than eight at once, none, or past
//! the whole buffer are refused; as many as asked are granted (fewer at
//! the buffer's end), a `READ_BUF` fits the pages granted so far, and
//! asking afresh while still holding the pages is refused (so asking again
//! and again costs the server nothing more). At the end the server stops
//! and no frame is leaked.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::{cap_kind, rights};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::{File, SeekFrom};
use oxok_libos::fs::buffer::BUFFER_BASE;
use oxok_libos::fs::proto::{BUFFER_GRANT, BUFFER_PAGE, BUFFER_PAGES, BUFFER_SIZE, Status, op};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::pct::Msg;
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, Error, exposed, sys};
use oxok_tests::Checks;
use oxok_tests::fsraw::{raw, request, status};

oxok_libos::main!(main);

const BIG: usize = 300 * 1024;
const PATH: &str = "/big";

fn byte(i: usize, salt: u8) -> u8 {
    ((i * 13 + i / 4099) as u8) ^ salt
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("fs-buffer");
    t.expect(sys::pct_grant(0, rights::READ).map(|_| ()), Err(Error::Invalid), "pct_grant outside a served call");
    let Some(server) = oxok_tests::fsraw::own_server("fs-buffer") else { return 1 };
    before_any_buffer(&mut t);
    big_file(&mut t);
    t.check(exposed::writable(BUFFER_BASE), "the buffer page is mapped after big I/O");
    refusals(&mut t);
    forked(&mut t);
    grants(&mut t);
    small_first(&mut t);
    let _ = fs::unlink(PATH);
    let _ = fs::unlink("/small");
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops");
    t.finish()
}

/// Raw `READ_BUF`/`WRITE_BUF` before this process asked for a buffer.
fn before_any_buffer(t: &mut Checks) {
    let Ok(f) = fs::open_file("/small", OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE) else {
        return t.check(false, "open /small");
    };
    let read = status(f.server(), &request(op::READ_BUF, 0, 0, &[f.handle(), 16]));
    t.expect(read, Some(Status::Invalid), "READ_BUF without a buffer");
    let write = status(f.server(), &request(op::WRITE_BUF, 0, 0, &[f.handle(), 16]));
    t.expect(write, Some(Status::Invalid), "WRITE_BUF without a buffer");
}

/// One 300 KiB write, then reads of every size back.
fn big_file(t: &mut Checks) {
    let data: Vec<u8> = (0..BIG).map(|i| byte(i, 0)).collect();
    let Ok(f) = fs::open_file(PATH, OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE) else {
        return t.check(false, "open /big");
    };
    let mut written = 0;
    while written < BIG {
        match f.write(&data[written..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => written += n,
        }
    }
    t.expect(written, BIG, "300 KiB written");
    t.expect(f.seek(SeekFrom::Start(0)).ok(), Some(0), "seek to the start");
    let mut back = vec![0u8; BIG];
    let (mut at, mut turn) = (0, 0usize);
    while at < BIG {
        let size = [65536, 100, 7, 4096, 4097, 64, 65][turn % 7];
        turn += 1;
        let end = (at + size).min(BIG);
        match f.read(&mut back[at..end]) {
            Ok(0) | Err(_) => break,
            Ok(n) => at += n,
        }
    }
    t.expect(at, BIG, "read to the end in mixed sizes");
    t.check(back == data, "every byte read back as written");
    let mut tail = [0u8; 10];
    t.expect(f.read(&mut tail).ok(), Some(0), "nothing after the end");
}

/// Requests the server must refuse once this process has a buffer.
fn refusals(t: &mut Checks) {
    let Ok(f) = fs::open_file(PATH, OpenFlags::READ) else {
        return t.check(false, "open /big again");
    };
    let too_much = status(f.server(), &request(op::READ_BUF, 0, 0, &[f.handle(), BUFFER_SIZE as u64 + 1]));
    t.expect(too_much, Some(Status::Invalid), "READ_BUF of more than the buffer");
    let foreign = status(f.server(), &request(op::READ_BUF, 0, 0, &[f.handle() + 1000, 16]));
    t.expect(foreign, Some(Status::BadHandle), "READ_BUF on a handle that is not ours");
}

/// A forked child uses its own buffer; the parent's still works after.
fn forked(t: &mut Checks) {
    match vm::fork() {
        Ok(Fork::Child) => {
            let ok = fs::read_file(PATH)
                .is_ok_and(|d| d.len() == BIG && d.iter().enumerate().all(|(i, &b)| b == byte(i, 0)))
                && fs::write_file("/child", &(0..BIG).map(|i| byte(i, 0x5a)).collect::<Vec<u8>>()).is_ok();
            oxok_libos::process::exit(if ok { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the forked child read and wrote 300 KiB");
            let got = read_all("/child");
            t.check(
                got.len() == BIG && got.iter().enumerate().all(|(i, &b)| b == byte(i, 0x5a)),
                "the child's file reads back",
            );
            let mine = read_all(PATH);
            t.check(
                mine.len() == BIG && mine.iter().enumerate().all(|(i, &b)| b == byte(i, 0)),
                "the parent's buffer still works",
            );
            let _ = fs::unlink("/child");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}

/// `BUFFER`'s protocol, in a forked child that has no buffer
/// of its own yet; it reports by its own checks and exit status.
fn grants(t: &mut Checks) {
    let Ok(f) = fs::open_file(PATH, OpenFlags::READ) else {
        return t.check(false, "open /big for the grants");
    };
    let server = f.server();
    match vm::fork() {
        Ok(Fork::Child) => oxok_libos::process::exit(grants_child(server)),
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "BUFFER as the protocol says");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}

fn grants_child(server: u64) -> i32 {
    let mut c = Checks::new("fs-buffer grants");
    let ask = |first: u64, want: u64| raw(server, &request(op::BUFFER, 0, first, &[want])).ok();
    let of = |r: &Option<Msg>| r.map(|r| Status::of(r[0]));
    let granted = |r: &Option<Msg>| {
        r.map_or(Vec::new(), |r| r[1..=BUFFER_GRANT].iter().copied().filter(|&s| s != 0).collect::<Vec<u64>>())
    };
    let drop_all = |slots: &[u64]| {
        for &s in slots {
            let _ = sys::cap_drop(s);
        }
    };
    c.expect(of(&ask(8, 8)), Some(Status::Invalid), "pages past where the buffer ends");
    c.expect(of(&ask(0, BUFFER_GRANT as u64 + 1)), Some(Status::Invalid), "more pages than one call grants");
    c.expect(of(&ask(0, 0)), Some(Status::Invalid), "no pages");
    let first = ask(0, BUFFER_GRANT as u64);
    c.expect(of(&first), Some(Status::Ok), "eight pages");
    let slots = granted(&first);
    let rw = rights::READ | rights::WRITE;
    c.check(
        slots.len() == BUFFER_GRANT
            && slots.iter().all(|&s| sys::cap_info(s).is_ok_and(|[k, _, r]| k == cap_kind::FRAME && r == rw)),
        "a read-write frame capability for each page",
    );
    let read_buf = |n: usize| status(server, &request(op::READ_BUF, 0, 0, &[0, n as u64]));
    let eight = BUFFER_GRANT * BUFFER_PAGE;
    c.expect(
        read_buf(eight),
        Some(Status::BadHandle),
        "a READ_BUF as long as the pages granted passes the length check",
    );
    c.expect(read_buf(eight + 1), Some(Status::Invalid), "a READ_BUF longer than the pages granted");
    c.expect(of(&ask(0, 1)), Some(Status::Denied), "afresh while the pages are still held");
    drop_all(&slots);
    let one = ask(0, 1);
    c.expect(granted(&one).len(), 1, "afresh once the pages are let go: one page when one is asked");
    let more = ask(1, BUFFER_GRANT as u64);
    c.expect(granted(&more).len(), BUFFER_GRANT, "eight more after it");
    // Eight at a time until fewer than eight are left.
    let mut middle = Vec::new();
    let mut at = 1 + BUFFER_GRANT;
    while BUFFER_PAGES - at > BUFFER_GRANT {
        middle.push(ask(at as u64, BUFFER_GRANT as u64));
        at += BUFFER_GRANT;
    }
    c.check(middle.iter().all(|r| granted(r).len() == BUFFER_GRANT), "eight at a time in the middle");
    let last = ask(at as u64, BUFFER_GRANT as u64);
    c.expect(granted(&last).len(), BUFFER_PAGES - at, "the rest of the buffer, fewer than asked");
    c.expect(of(&ask(BUFFER_PAGES as u64, 1)), Some(Status::Invalid), "nothing past the whole buffer");
    for r in [&one, &more, &last].into_iter().chain(&middle) {
        drop_all(&granted(r));
    }
    c.expect(read_buf(BUFFER_SIZE), Some(Status::BadHandle), "a READ_BUF of the whole buffer passes the length check");
    c.expect(read_buf(BUFFER_SIZE + 1), Some(Status::Invalid), "a READ_BUF past the whole buffer");
    c.finish()
}

/// A process whose first transfer is small asks for one page, not the
/// whole buffer (a forked child, which replaces the parent's buffer).
fn small_first(t: &mut Checks) {
    match vm::fork() {
        Ok(Fork::Child) => {
            let wrote = fs::write_file("/small", &[7u8; 1024]).is_ok();
            let one = exposed::readable(BUFFER_BASE) && !exposed::readable(BUFFER_BASE + BUFFER_PAGE as u64);
            oxok_libos::process::exit(if wrote && one { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "a first transfer of 1 KiB maps one page of buffer");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}

/// The whole file in 64 KiB reads.
fn read_all(path: &str) -> Vec<u8> {
    let Ok(f) = fs::open_file(path, OpenFlags::READ) else { return Vec::new() };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65536];
    while let Ok(n @ 1..) = f.read(&mut buf) {
        out.extend_from_slice(&buf[..n]);
    }
    out
}
