//! fs-prefetch: a small file's bytes come with its open (`flags::PREFETCH`,
//! `fs::buffer::read_prefetched`), and stay right. Starts its own `fsd`,
//! makes this process's buffer with one big write, then: a small file
//! read whole and to its end with no round trip (this process's count of
//! requests, `fs::requests`, does not move); a read of part of it,
//! then the position (the server is told it before a seek, and a forked
//! child that inherits the descriptor reads on from it, the parent after
//! the child); another process's write between the open and the read, and
//! this process's own write and truncate through a second descriptor, each
//! seen by the read (the generation page moved); a file larger than the
//! buffer read through the server as before. Refused: mapping the
//! generation page writable. At the end the server stops and no frame is
//! leaked.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::layout::pte;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::{File, SeekFrom};
use oxok_libos::fs::buffer::GENERATION_CLIENT_VA;
use oxok_libos::fs::proto::{BUFFER_SIZE, Status, op};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, sys};
use oxok_tests::Checks;
use oxok_tests::fsraw::{raw, request};

oxok_libos::main!(main);

const SMALL: &str = "/pf-small";
const BIG: &str = "/pf-big";
/// Larger than the whole buffer.
const BIG_LEN: usize = BUFFER_SIZE + 36 * 1024;

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7) ^ salt).collect()
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("fs-prefetch");
    let Some(server) = oxok_tests::fsraw::own_server("fs-prefetch") else { return 1 };
    let id = server.live_id();
    // This process's requests to a file server (the server's own count
    // of runs also moves when a time slot ends while it serves).
    let runs = fs::requests;
    // One big write makes this process's buffer (32 pages).
    t.check(fs::write_file(BIG, &pattern(BIG_LEN, 1)).is_ok(), "the big file written");
    let a = pattern(1000, 0xa5);
    t.check(fs::write_file(SMALL, &a).is_ok(), "the small file written");

    whole(&mut t, &a, &runs);
    position(&mut t, &a);
    forked_position(&mut t, &a);
    another_writer(&mut t);
    own_writes(&mut t);
    too_big(&mut t, &runs);
    generation_read_only(&mut t, id);

    let _ = fs::unlink(SMALL);
    let _ = fs::unlink(BIG);
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops");
    t.finish()
}

fn open_small(t: &mut Checks) -> Option<fs::OpenFile> {
    let f = fs::open_file(SMALL, OpenFlags::READ).ok();
    t.check(f.is_some(), "open the small file");
    f
}

/// The whole file and then its end, read with no request to the server.
fn whole(t: &mut Checks, a: &[u8], runs: &dyn Fn() -> u64) {
    let before_open = runs();
    let Some(f) = open_small(t) else { return };
    let opened = runs();
    t.check(opened > before_open, "the open went to the server");
    let mut buf = vec![0u8; 4096];
    let n = f.read(&mut buf).unwrap_or(0);
    t.check(n == a.len() && buf[..n] == *a, "the whole small file read");
    t.expect(f.read(&mut buf).ok(), Some(0), "then its end");
    t.expect(runs(), opened, "neither read went to the server (the bytes came with the open)");
}

/// Part of the file, then the position as the server knows it.
fn position(t: &mut Checks, a: &[u8]) {
    let Some(f) = open_small(t) else { return };
    let mut buf = [0u8; 10];
    t.check(f.read(&mut buf).is_ok_and(|n| n == 10) && buf[..] == a[..10], "ten bytes read");
    t.expect(f.seek(SeekFrom::Current(0)).ok(), Some(10), "the server's position after them is 10");
    t.check(f.read(&mut buf).is_ok_and(|n| n == 10) && buf[..] == a[10..20], "the next ten read on from there");
    t.expect(f.seek(SeekFrom::Current(5)).ok(), Some(25), "a seek from there");
}

/// A child that inherits the descriptor after a read of prefetched bytes
/// reads on from where that read ended; the parent after it.
fn forked_position(t: &mut Checks, a: &[u8]) {
    let Ok(fd) = fs::open(SMALL, OpenFlags::READ) else { return t.check(false, "open the small file") };
    let mut buf = [0u8; 10];
    let ok = oxok_libos::fd::read(fd, &mut buf).is_ok_and(|n| n == 10) && buf[..] == a[..10];
    t.check(ok, "ten bytes read before a fork");
    match vm::fork() {
        Ok(Fork::Child) => {
            let mut buf = [0u8; 10];
            let ok = oxok_libos::fd::read(fd, &mut buf).is_ok_and(|n| n == 10) && buf[..] == a[10..20];
            oxok_libos::process::exit(if ok { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the child read bytes 10..20");
            let ok = oxok_libos::fd::read(fd, &mut buf).is_ok_and(|n| n == 10) && buf[..] == a[20..30];
            t.check(ok, "the parent then read bytes 20..30");
            let _ = oxok_libos::fd::close(fd);
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}

/// Another process writes the file between this one's open and its read.
fn another_writer(t: &mut Checks) {
    let rewrite = |data: Vec<u8>| match vm::fork() {
        Ok(Fork::Child) => oxok_libos::process::exit(if fs::write_file(SMALL, &data).is_ok() { 0 } else { 1 }),
        Ok(Fork::Parent(child)) => exec::wait(child) == Ok(ExitStatus::Exited(0)),
        Err(_) => false,
    };
    let Some(f) = open_small(t) else { return };
    let b = pattern(800, 0x3c);
    t.check(rewrite(b.clone()), "a child rewrote the file after the open");
    let mut buf = vec![0u8; 4096];
    let n = f.read(&mut buf).unwrap_or(0);
    t.check(n == b.len() && buf[..n] == *b, "the read sees the child's bytes, not the ones the open fetched");

    let Some(f) = open_small(t) else { return };
    let mut ten = [0u8; 10];
    t.check(f.read(&mut ten).is_ok_and(|n| n == 10) && ten[..] == b[..10], "ten bytes read");
    let c = pattern(800, 0x77);
    t.check(rewrite(c.clone()), "a child rewrote the file after that read");
    let n = f.read(&mut buf).unwrap_or(0);
    t.check(n == 790 && buf[..n] == c[10..], "the rest read from byte 10 of the child's bytes");
}

/// This process's own write and truncate through a second descriptor.
fn own_writes(t: &mut Checks) {
    let Some(r) = open_small(t) else { return };
    let Ok(w) = fs::open_file(SMALL, OpenFlags::WRITE) else { return t.check(false, "open for writing") };
    t.expect(w.write(b"xyz").ok(), Some(3), "three bytes written at the start");
    let mut buf = vec![0u8; 4096];
    let n = r.read(&mut buf).unwrap_or(0);
    t.check(n == 800 && buf[..3] == *b"xyz", "the reader sees them");

    let Some(r) = open_small(t) else { return };
    t.check(w.set_len(5).is_ok(), "the file cut to 5 bytes");
    t.check(r.read(&mut buf).is_ok_and(|n| n == 5) && buf[..3] == *b"xyz", "the reader sees 5 bytes");
}

/// A file larger than the buffer comes through the server as before.
fn too_big(t: &mut Checks, runs: &dyn Fn() -> u64) {
    let Ok(f) = fs::open_file(BIG, OpenFlags::READ) else { return t.check(false, "open the big file") };
    let before = runs();
    let mut back = Vec::new();
    let mut buf = vec![0u8; 3000];
    while let Ok(n @ 1..) = f.read(&mut buf) {
        back.extend_from_slice(&buf[..n]);
    }
    t.check(back == pattern(BIG_LEN, 1), "the big file read back");
    t.check(runs() > before, "through the server");
}

/// The generation page cannot be mapped writable.
fn generation_read_only(t: &mut Checks, server: u64) {
    let Ok(r) = raw(server, &request(op::GENERATION, 0, 0, &[])) else {
        return t.check(false, "GENERATION answered");
    };
    t.expect(Status::of(r[0]), Status::Ok, "GENERATION grants a capability");
    let at = GENERATION_CLIENT_VA + 0x10_0000;
    t.check(sys::page_map(0, r[1], at, pte::WRITABLE | pte::NO_EXECUTE).is_err(), "mapping it writable is refused");
    t.check(sys::page_map(0, r[1], at, pte::NO_EXECUTE).is_ok(), "mapping it read-only is not");
    let _ = sys::page_unmap(0, at);
    let _ = sys::cap_drop(r[1]);
}
