//! fs-closes: files' closes wait and go together (`fs::closes`). Starts
//! its own `fsd`, then, counting the server's open handles with raw `INFO`
//! requests (which nothing sends ahead of): closes of read-only files
//! wait; the client's `INFO` sends them first; nine read-only closes all
//! wait; a writer's close waits too; `UNLINK` sends the waiting ones
//! first; a list of `WAITING_MAX` goes (eight to a `CLOSE`) when one more
//! comes, which waits; a
//! forked child never sends its parent's; the server closes every good
//! handle of a batched `CLOSE` and reports the bad one; a `CLOSE` of
//! another client's handles closes nothing of theirs; an open that finds
//! the server's room for this client's handles taken by waiting closes
//! sends them and succeeds; closing every descriptor (exit, `execve`)
//! sends them at once. At the end the server stops and no frame is leaked.
//!
//! With `routed` it uses the server its paths go to instead (`dfsd` on
//! C-FFS when booted with a disk, which gathers a file's writes and hands
//! them to its file system at the next request that is not a write): a
//! file written and closed, its close waiting, is read whole by this
//! process and by a forked child, and its status says its length.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::File;
use oxok_libos::fs::proto::{Status, op};
use oxok_libos::fs::{self, OpenFile, OpenFlags, closes};
use oxok_libos::vm::{self, Fork};
use oxok_tests::Checks;
use oxok_tests::fsraw::{open_handles, request, status};

oxok_libos::main!(main);

const FILES: usize = 9;

fn path(i: usize) -> alloc::string::String {
    format!("/c{i}")
}

fn main(args: Args) -> i32 {
    let mut t = Checks::new("fs-closes");
    if args.iter().any(|a| a == "routed") {
        routed(&mut t);
        return t.finish();
    }
    let Some(server) = oxok_tests::fsraw::own_server("fs-closes") else { return 1 };
    for i in 0..FILES {
        t.expect(fs::write_file(&path(i), b"closes").ok(), Some(()), "a file written");
    }
    let Ok(probe) = fs::open_file(&path(0), OpenFlags::READ) else {
        t.check(false, "open a file");
        return t.finish();
    };
    let srv = probe.server();
    drop(probe);
    let _ = fs::server_stats(); // sends the probe's close
    let base = open_handles(srv);
    t.check(base.is_some(), "raw INFO answers");
    let base = base.unwrap_or(0);

    let three: Vec<OpenFile> = (0..3).filter_map(|i| fs::open_file(&path(i), OpenFlags::READ).ok()).collect();
    t.expect(open_handles(srv), Some(base + 3), "three read-only files open");
    drop(three);
    t.expect(open_handles(srv), Some(base + 3), "their closes wait");
    t.expect(fs::server_stats().map(|s| s.handles).ok(), Some(base), "the client's INFO sends them first");

    let mut waiting = 0;
    for i in 0..FILES {
        if let Ok(f) = fs::open_file(&path(i), OpenFlags::READ) {
            waiting = f.handle();
        }
    }
    let nine = base + FILES as u64;
    t.expect(open_handles(srv), Some(nine), "nine closes wait");
    drop(fs::open_file(&path(0), OpenFlags::WRITE));
    t.expect(open_handles(srv), Some(nine + 1), "a writer's close waits too");

    forked(&mut t, srv, nine + 1, waiting);

    t.expect(fs::unlink(&path(1)).ok(), Some(()), "unlink");
    t.expect(open_handles(srv), Some(base), "UNLINK sends the waiting closes first");

    for _ in 0..=closes::WAITING_MAX {
        drop(fs::open_file(&path(0), OpenFlags::READ));
    }
    t.expect(open_handles(srv), Some(base + 1), "a full list of waiting closes goes when one more comes, which waits");
    let _ = fs::server_stats(); // sends it

    batched(&mut t, srv, base);
    full_table(&mut t, srv, base);
    all_closed(&mut t, srv, base);

    for i in 0..FILES {
        let _ = fs::unlink(&path(i));
    }
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops");
    t.finish()
}

/// `routed`: a written file whose close waits, read by this process and
/// by another (the server's other clients hold their handles throughout).
fn routed(t: &mut Checks) {
    const P: &str = "/closes-routed";
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    t.expect(fs::write_file(P, b"").ok(), Some(()), "an empty file made");
    let Ok(probe) = fs::open_file(P, OpenFlags::READ) else {
        t.check(false, "open it");
        return;
    };
    let srv = probe.server();
    drop(probe);
    let before = open_handles(srv).unwrap_or(0);
    t.expect(fs::write_file(P, &data).ok(), Some(()), "3,000 bytes written");
    t.expect(open_handles(srv), Some(before + 1), "the writer's close waits");
    match vm::fork() {
        Ok(Fork::Child) => {
            let same = fs::read_file(P).is_ok_and(|got| got == data);
            oxok_libos::process::exit(if same { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "another process reads every byte");
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
    t.expect(fs::stat(P).map(|m| m.size).ok(), Some(3000), "the status says its length");
    t.expect(fs::read_file(P).ok(), Some(data), "this process reads every byte");
    t.expect(fs::unlink(P).ok(), Some(()), "unlink");
    // Four closes waited: the first writer's, the probe's, the second
    // writer's and the last reader's.
    t.expect(open_handles(srv), before.checked_sub(2), "UNLINK sent the waiting closes first");
}

/// A forked child inherits the waiting close with the parent's memory; it
/// must not send it: the number is the parent's handle, and the child may
/// hold a handle of its own with the same number (handles are per client),
/// which sending it would close. The child makes sure it does, sends its
/// own waiting closes, and checks that file still reads.
fn forked(t: &mut Checks, srv: u64, parents: u64, waiting: u64) {
    match vm::fork() {
        Ok(Fork::Child) => {
            // A client's handles count up from 1 while it holds any: hold
            // writers until the next handle is the parent's waiting number.
            let mut held = Vec::new();
            while held.len() < 60 && held.len() as u64 + 1 < waiting {
                let Ok(f) = fs::open_file(&path(2), OpenFlags::WRITE) else { break };
                held.push(f);
            }
            let kept = fs::open_file(&path(3), OpenFlags::READ).ok();
            drop(held); // their closes wait (sent eight to a CLOSE when the list fills)
            let same = kept.as_ref().is_some_and(|k| k.handle() == waiting);
            drop(fs::open_file(&path(4), OpenFlags::READ));
            let _ = fs::server_stats(); // sends the child's own waiting close
            let mut buf = [0u8; 16];
            let reads = kept.as_ref().is_some_and(|k| k.read(&mut buf).ok() == Some(6));
            oxok_libos::process::exit(if same && reads { 0 } else { 1 + i32::from(same) })
        }
        Ok(Fork::Parent(child)) => {
            t.expect(
                exec::wait(child),
                Ok(ExitStatus::Exited(0)),
                "the child's own handle numbered as the parent's waiting one stays open",
            );
            t.expect(open_handles(srv), Some(parents), "the parent's waiting closes are still the parent's to send");
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
}

/// `CLOSE` with several handles, sent raw.
fn batched(t: &mut Checks, srv: u64, base: u64) {
    let opened: Vec<u64> = (3..5)
        .filter_map(|i| fs::open_file(&path(i), OpenFlags::READ).ok())
        .map(|f| {
            let h = f.handle();
            core::mem::forget(f); // closed below, by hand
            h
        })
        .collect();
    t.expect(opened.len(), 2, "two files opened");
    let (a, b) = (opened.first().copied().unwrap_or(0), opened.get(1).copied().unwrap_or(0));
    t.expect(open_handles(srv), Some(base + 2), "two more handles");
    let mixed = status(srv, &request(op::CLOSE, 3, 0, &[a, 0xdead, b]));
    t.expect(mixed, Some(Status::BadHandle), "a batched CLOSE with a bad handle reports it");
    t.expect(open_handles(srv), Some(base), "and closes the good ones");

    // Another client's handles: a child opens a file and keeps it open
    // while the parent tries to close the child's handle numbers.
    match vm::fork() {
        Ok(Fork::Child) => {
            let kept = fs::open_file(&path(5), OpenFlags::READ);
            let mut spins = 0u32;
            // Wait (bounded) for the parent's attempt, then end.
            while spins < 200 {
                let _ = oxok_libos::sys::yield_cpu(0);
                spins += 1;
            }
            drop(kept);
            oxok_libos::process::exit(0)
        }
        Ok(Fork::Parent(child)) => {
            let mut seen = None;
            for _ in 0..100 {
                if open_handles(srv) == Some(base + 1) {
                    seen = Some(());
                    break;
                }
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            t.expect(seen, Some(()), "the child holds one handle");
            let forged: Vec<u64> = (0..8).collect();
            let r = status(srv, &request(op::CLOSE, 8, 0, &forged));
            t.check(r != Some(Status::Ok), "closing handle numbers this client does not hold is refused");
            t.expect(open_handles(srv), Some(base + 1), "the child's handle stays open");
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the child ended");
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
}

/// An open that finds this client's room for handles on the server taken
/// by closes still waiting here sends them and succeeds.
fn full_table(t: &mut Checks, srv: u64, base: u64) {
    // The server's quota is 128 handles a client (`oxok_slab::HANDLES`):
    // some held (this process's open-file table has room for 64), the
    // rest closed and waiting.
    const HELD: u64 = 57;
    const WAITING: u64 = 128 - HELD;
    let held: Vec<OpenFile> = (0..HELD).filter_map(|_| fs::open_file(&path(6), OpenFlags::READ).ok()).collect();
    for _ in 0..WAITING {
        drop(fs::open_file(&path(6), OpenFlags::READ));
    }
    t.expect(open_handles(srv), Some(base + HELD + WAITING), "128 handles: 57 held, 71 closes waiting");
    let one_more = fs::open_file(&path(7), OpenFlags::READ);
    t.check(one_more.is_ok(), "one more open sends the waiting closes and succeeds");
    t.expect(open_handles(srv), Some(base + HELD + 1), "the waiting closes went");
    drop(one_more);
    drop(held);
    t.expect(fs::server_stats().map(|s| s.handles).ok(), Some(base), "all closed in the end");
}

/// Closing every descriptor (what exit and the personality's `execve`
/// stand-in do) sends the waiting closes at once: a child that closed all
/// and then lives on holds no handle on the server. The child keeps a file
/// open until the parent has seen it (the parent then makes `/go`), closes
/// it and every descriptor, and lives on well past the parent's look.
fn all_closed(t: &mut Checks, srv: u64, base: u64) {
    const GO: &str = "/go";
    match vm::fork() {
        Ok(Fork::Child) => {
            let kept = fs::open_file(&path(8), OpenFlags::READ);
            for _ in 0..3_000 {
                if fs::stat(GO).is_ok() {
                    break;
                }
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            drop(kept);
            oxok_libos::fd::close_all();
            for _ in 0..3_000 {
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            oxok_libos::process::exit(0)
        }
        Ok(Fork::Parent(child)) => {
            let seen = wait_for(srv, base + 1);
            t.check(seen, "the child's file is open");
            t.expect(fs::write_file(GO, b"go").ok(), Some(()), "/go made");
            let _ = fs::server_stats(); // sends the writer's waiting close
            let closed = wait_for(srv, base);
            t.check(closed, "a child that closed every descriptor holds no handle while it lives on");
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "that child ended");
            let _ = fs::unlink(GO);
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
}

/// Whether the server's handles come to `n` within 300 yields.
fn wait_for(srv: u64, n: u64) -> bool {
    for _ in 0..300 {
        if open_handles(srv) == Some(n) {
            return true;
        }
        let _ = oxok_libos::sys::yield_cpu(0);
    }
    false
}
