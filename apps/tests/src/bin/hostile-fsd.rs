//! hostile-fsd: attacks the file server while a victim client keeps using
//! it. The coordinator starts `fsd` and the victim (`fsd-victim`, which
//! writes, rereads and checks its own file in rounds through one open
//! handle until the attacks are over), then lets children attack, each as
//! a separate client:
//!
//! * `forge`: every handle number 0..=200 and absurd ones (the victim's
//!   numbers among them — every client counts from 1) with every handle op;
//!   all must fail `BadHandle`, and DUP to a stranger and STOP from a
//!   non-creator `Denied`;
//! * `garbage`: 3000 random messages, synchronous and asynchronous, half of
//!   them with valid op numbers and random lengths, flags and handles; huge
//!   lengths; a staged path past the limit;
//! * `links`: symbolic-link loops and chains past the limit (`Loop`, the
//!   server answering), a `SYMLINK` payload without its separator, a
//!   `READLINK` offset past the target, `READLINK` of a file, a hard link
//!   to a directory, mode bits past `0o7777`, and leaves no name behind;
//! * `hoard`: opens files until its quota refuses (`NoSpace`), unlinks one
//!   it holds, leaves a path half staged, and exits without closing
//!   anything (its objects are forgotten, so nothing is closed for it);
//! * `doomed` (×12): hammers the server with requests and is destroyed by
//!   the coordinator, preferably when the exposed table shows it waiting
//!   for the server's reply (the server was preempted while serving it: it
//!   must then end the call with nobody to answer and go on).
//!
//! After each, the server must still answer, and once the attackers are
//! gone its counters must be back where they were (dead clients' handles
//! reclaimed, the unlinked file freed). The victim must finish intact.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use oxok_libos::abi::{ENV_WAITING, Error};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::{File, IoError, SeekFrom};
use oxok_libos::fs::proto::{self, Status, op};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, println, sys};
use oxok_testrng::Rng;
use oxok_tests::fsraw::{path_request, raw, request, status};
use oxok_tests::{Checks, cpu};

oxok_libos::main!(main);

/// The most rounds the victim runs; it stops earlier when [`STOP_FILE`]
/// appears.
const VICTIM_ROUNDS: u32 = 1_000_000;
/// Made by the coordinator once the attacks are over.
const STOP_FILE: &str = "/victim-stop";
/// Doomed children destroyed mid-flight.
const DOOMED: u64 = 12;

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("victim") => victim(),
        Some("forge") => forge(),
        Some("garbage") => garbage(),
        Some("links") => links(),
        Some("hoard") => hoard(),
        Some("doomed") => doomed(),
        _ => coordinator(),
    }
}

fn coordinator() -> i32 {
    let mut t = Checks::new("hostile-fsd");
    let Some(server) = oxok_tests::fsraw::own_server("hostile-fsd") else { return 1 };
    let base = fs::server_stats();
    let victim = exec::spawn("hostile-fsd", &["fsd-victim", "victim"]);
    t.check(victim.is_ok(), "victim started");
    for part in ["forge", "garbage", "links", "hoard"] {
        let status = exec::spawn("hostile-fsd", &["hostile-fsd", part]).map(exec::wait);
        t.expect(status, Ok(Ok(ExitStatus::Exited(0))), part);
        t.check(fs::server_stats().is_ok(), "the server answers after an attack");
    }
    let mut rng = Rng::new(0x05ee_df5d);
    let mut mid_call = 0;
    for _ in 0..DOOMED {
        match exec::spawn("hostile-fsd", &["hostile-fsd-doomed", "doomed"]) {
            Ok(child) => {
                // Let it run a while, then strike when it is seen waiting
                // for the server's reply (the server was preempted while
                // serving it), or after at most 200 ms.
                cpu::spin_ms(1 + rng.below(8));
                let end = oxok_libos::time::rdtsc() + 200 * cpu::cycles_per_ms();
                while !waiting(child.id) && oxok_libos::time::rdtsc() < end {
                    core::hint::spin_loop();
                }
                mid_call += u32::from(waiting(child.id));
                t.check(sys::env_destroy(child.slot).is_ok(), "doomed child destroyed");
            }
            Err(_) => t.check(false, "doomed child started"),
        }
    }
    println!("hostile-fsd: {DOOMED} clients destroyed while calling ({mid_call} in the middle of a request)");
    t.check(mid_call > 0, "at least one client died while the server served it");
    t.expect(fs::write_file(STOP_FILE, b""), Ok(()), "tell the victim to finish");
    let victim_ok = victim.map(exec::wait);
    let _ = fs::unlink(STOP_FILE);
    t.expect(victim_ok, Ok(Ok(ExitStatus::Exited(0))), "the victim finished intact");
    // Every attacker and the victim are gone: nothing of theirs is left.
    let end = fs::server_stats();
    t.expect(end.map(|s| (s.clients, s.handles, s.open_files)), Ok((0, 0, 0)), "dead clients' handles reclaimed");
    // With no handle left, every live inode is reachable by a name: the
    // root and what a walk of the tree finds (the unlinked files the
    // attackers held open are gone).
    let reachable = 1 + walk("/");
    t.expect(end.map(|s| s.inodes), Ok(reachable), "no orphan inode left");
    t.check(base.is_ok(), "stats at the start");
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server survived and stops cleanly");
    t.finish()
}

/// True while environment `id` waits for the reply to a transfer.
fn waiting(id: u64) -> bool {
    oxok_libos::exposed::env_entry(id).is_some_and(|r| r.status == ENV_WAITING)
}

/// Entries under `dir`, recursively.
fn walk(dir: &str) -> u64 {
    let entries = fs::read_dir(dir).unwrap_or_default();
    let below: u64 =
        entries.iter().filter(|e| e.kind == fs::FileKind::Dir).map(|e| walk(&fs::join(dir, &e.name))).sum();
    entries.len() as u64 + below
}

/// One raw request; retries while the server is busy with another call.
fn victim() -> i32 {
    let mut t = Checks::new("fsd-victim");
    let _ = fs::mkdir("/victim");
    let Ok(f) = fs::open_file("/victim/data", OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE) else {
        println!("fsd-victim: FAIL open");
        return 1;
    };
    let mut ok = true;
    for round in 0..VICTIM_ROUNDS {
        let text = format!("round {round} of the victim's own data, long enough for two messages");
        ok &= f.seek(SeekFrom::Start(0)) == Ok(0);
        ok &= f.write(text.as_bytes()) == Ok(text.len());
        ok &= f.seek(SeekFrom::Start(0)) == Ok(0);
        let mut buf = [0u8; 128];
        ok &= f.read(&mut buf[..text.len()]) == Ok(text.len()) && &buf[..text.len()] == text.as_bytes();
        ok &= fs::stat("/victim/data").is_ok();
        if !ok {
            println!("fsd-victim: FAIL round {round}");
            break;
        }
        if fs::stat(STOP_FILE).is_ok() {
            println!("fsd-victim: {} rounds through the attacks", round + 1);
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.check(ok, "every round read back what it wrote");
    drop(f);
    t.expect(fs::unlink("/victim/data"), Ok(()), "cleanup");
    t.expect(fs::rmdir("/victim"), Ok(()), "cleanup");
    t.finish()
}

fn forge() -> i32 {
    let mut t = Checks::new("hostile-fsd forge");
    let Ok(server) = fs::server() else { return 1 };
    let ops = [
        op::CLOSE,
        op::READ,
        op::WRITE,
        op::SEEK,
        op::FSTAT,
        op::READDIR,
        op::TRUNCATE,
        op::DUP,
        op::SET_TIMES,
        op::SET_MODE,
    ];
    let mut all = true;
    let handles = (0..=200u64).chain([u64::from(u32::MAX), u64::MAX, 1 << 32, 1 << 63]);
    for h in handles {
        for &o in &ops {
            let len = if o == op::WRITE { 8 } else { 4 };
            let s = status(server, &request(o, len, 0, &[h, 0, 0]));
            all &= s == Some(Status::BadHandle) || (o == op::DUP && s == Some(Status::Denied));
        }
    }
    t.check(all, "no forged or foreign handle works");
    // Duplicating one's own handle to a stranger, and stopping the server.
    if let Ok(f) = fs::open_file("/forge", OpenFlags::WRITE | OpenFlags::CREATE) {
        let parent = oxok_libos::exposed::env_entry(oxok_libos::exposed::self_id()).map_or(0, |r| u64::from(r.parent));
        t.expect(f.dup_for(parent), Err(IoError::Kernel(Error::Denied)), "DUP to a non-child refused");
        t.expect(f.dup_for(server), Err(IoError::Kernel(Error::Denied)), "DUP to the server refused");
        t.expect(f.dup_for(0), Err(IoError::Kernel(Error::Denied)), "DUP to nobody refused");
    }
    t.expect(status(server, &request(op::STOP, 0, 0, &[])), Some(Status::Denied), "STOP from a stranger refused");
    let _ = fs::unlink("/forge");
    t.finish()
}

fn garbage() -> i32 {
    let mut t = Checks::new("hostile-fsd garbage");
    let Ok(server) = fs::server() else { return 1 };
    let mut rng = Rng::new(0xbad_5eed);
    let mut answered = 0;
    for i in 0..3000 {
        let mut m: Msg = [0; proto::WORDS];
        for w in &mut m {
            *w = rng.next();
        }
        if i % 2 == 0 {
            // A real op (never STOP, which is refused anyway) with wild
            // fields; path bytes from `a-z/` so that whatever it creates
            // has a name the coordinator can walk.
            let o = 1 + rng.below(u64::from(op::INFO)) as u8;
            m[0] = (m[0] & !0xff) | u64::from(o);
            for w in &mut m[1..] {
                let bytes = w.to_le_bytes().map(|b| if b % 27 == 26 { b'/' } else { b'a' + b % 27 });
                *w = u64::from_le_bytes(bytes);
            }
            m[1] = if rng.chance(2) { rng.below(70) } else { m[1] }; // often the victim's numbers
        } else {
            // Any bits at all, but an op number no server knows.
            m[0] = (m[0] & !0xff) | (18 + rng.below(238));
        }
        if i % 5 == 0 {
            let _ = pct::send(server, &m);
            continue;
        }
        match raw(server, &m) {
            Ok(_) => answered += 1,
            Err(e) => {
                println!("hostile-fsd garbage: FAIL message {i}: {e}");
                break;
            }
        }
    }
    t.check(answered == 2400, "every synchronous message answered");
    for o in [op::PATH, op::OPEN, op::WRITE] {
        t.expect(status(server, &request(o, 255, 0, &[1])), Some(Status::Invalid), "a length past the message");
    }
    // A staged path longer than any payload is refused, and dropped.
    let chunk = request(op::PATH, 64, 0, &[u64::from_le_bytes(*b"aaaaaaaa"); 8]);
    let mut refused = false;
    for _ in 0..200 {
        if status(server, &chunk) != Some(Status::Ok) {
            refused = true;
            break;
        }
    }
    t.check(refused, "an endless staged path is refused");
    t.finish()
}

fn links() -> i32 {
    let mut t = Checks::new("hostile-fsd links");
    let Ok(server) = fs::server() else { return 1 };
    t.expect(fs::mkdir("/ln"), Ok(()), "a directory to work in");
    t.expect(fs::symlink("/ln/b", "/ln/a").and(fs::symlink("/ln/a", "/ln/b")), Ok(()), "two links in a loop");
    t.expect(fs::open_file("/ln/a", OpenFlags::READ).map(|_| ()), Err(IoError::Loop), "open of a loop");
    t.expect(fs::stat("/ln/a/x/y").map(|_| ()), Err(IoError::Loop), "a loop in the middle of a path");
    t.expect(fs::symlink_metadata("/ln/a").map(|m| m.kind), Ok(fs::FileKind::Symlink), "lstat of a loop");
    // A chain of 41 links: one past what one path may follow.
    let mut made = alloc::vec::Vec::new();
    for i in 0..41 {
        let name = format!("/ln/c{i}");
        t.check(fs::symlink(&format!("c{}", i + 1), &name).is_ok(), "a link of the chain");
        made.push(name);
    }
    t.expect(fs::write_file("/ln/c41", b"end"), Ok(()), "the chain's end");
    t.expect(fs::read_file("/ln/c1"), Ok(b"end".to_vec()), "40 links are followed");
    t.expect(fs::read_file("/ln/c0").map(|_| ()), Err(IoError::Loop), "41 are one too many");
    let bad = [
        (path_request(op::SYMLINK, 0, b"/ln/nosep"), Status::Invalid, "SYMLINK without its separator"),
        (path_request(op::SYMLINK, 0, b"\0/ln/e"), Status::NotFound, "SYMLINK with an empty target"),
        (path_request(op::READLINK, 7, b"/ln/a"), Status::Invalid, "READLINK past the target's end"),
        (path_request(op::READLINK, u64::MAX >> 24, b"/ln/a"), Status::Invalid, "READLINK at an absurd offset"),
        (path_request(op::READLINK, 0, b"/ln/c41"), Status::Invalid, "READLINK of a file"),
        (path_request(op::READLINK, 0, b"/ln/none"), Status::NotFound, "READLINK of nothing"),
        (path_request(op::LINK, 0, b"/ln\0/ln2"), Status::NotPermitted, "a hard link to a directory"),
        (path_request(op::STAT, proto::flags::NOFOLLOW, b"/ln/a/"), Status::Loop, "a trailing slash follows"),
    ];
    for (m, want, what) in bad {
        t.expect(status(server, &m), Some(want), what);
    }
    if let Ok(f) = fs::open_file("/ln/c41", OpenFlags::READ) {
        for mode in [0o10000, 0o177777, u64::MAX] {
            let m = request(op::SET_MODE, 0, 0, &[f.handle(), mode]);
            t.expect(status(server, &m), Some(Status::Invalid), "mode bits past 0o7777 refused");
        }
        t.expect(f.metadata().map(|m| m.mode), Ok(Some(0o644)), "the mode unchanged");
    }
    for name in made.iter().map(|s| s.as_str()).chain(["/ln/a", "/ln/b", "/ln/c41"]) {
        t.expect(fs::unlink(name), Ok(()), "cleanup");
    }
    t.expect(fs::rmdir("/ln"), Ok(()), "cleanup");
    t.finish()
}

fn hoard() -> i32 {
    let mut t = Checks::new("hostile-fsd hoard");
    let mut held = 0;
    let mut refused = None;
    for i in 0..100 {
        match fs::open_file(&format!("/hoard{}", i % 4), OpenFlags::WRITE | OpenFlags::CREATE) {
            Ok(f) => {
                core::mem::forget(f); // never closed by this process
                held += 1;
            }
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    t.expect(refused, Some(IoError::NoSpace), "the quota stops a hoarder");
    t.check(held >= 32, "a client may hold many handles");
    for i in 0..4 {
        t.expect(fs::unlink(&format!("/hoard{i}")), Ok(()), "unlink a held file");
    }
    let _ = raw(fs::server().unwrap_or(0), &request(op::PATH, 64, 1, &[0x2f; 8]));
    t.finish()
}

fn doomed() -> i32 {
    let mut rng = Rng::new(oxok_libos::exposed::self_id());
    loop {
        let name = format!("/doomed{}", rng.below(4));
        if let Ok(f) = fs::open_file(&name, OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE) {
            let _ = f.write(b"doomed data that spans more than one message, to stay inside the server longer");
            core::mem::forget(f);
        }
        let _ = fs::read_dir("/");
        let _ = fs::unlink(&name);
    }
}
