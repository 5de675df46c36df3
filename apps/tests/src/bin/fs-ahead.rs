//! fs-ahead: files opened along with the one before them (`flags::AHEAD`,
//! `fs::ahead`). With no argument it starts its own `fsd` (the RAM file
//! system, name order); with `routed` it uses the server its paths go to
//! (`dfsd` on C-FFS when booted with a disk: the directory's own order).
//! In a directory of 24 files of 1,000 bytes each: reading them all in
//! turn takes a request for every three files or more, each read whole
//! and right; after this process renames a file and makes another under
//! its name, or unlinks one, its path opens what it names now; after
//! another process renames one and replaces another (the server's name
//! generation moved; this process's list of files opened along is not
//! told), the first no longer opens and the second reads with the new
//! bytes; a file written after it was opened along reads with the new
//! bytes; and no handle is left open at the server once the files are
//! closed and the waiting closes sent.
//!
//! Then it asks as a hostile client would, past its own client: an open
//! ahead without `PREFETCH` or for writing takes nothing along; one that
//! does takes only regular files (not a directory or a symbolic link that
//! follow the opened file), at most `AHEAD_MAX`, no more than the buffer
//! holds, under handles that refuse writes; and it never takes the last
//! 16 handles of the client's quota (opened 17 short of it, one goes
//! along; 16 short, none).
//!
//! Last, the widening window (`flags::AHEAD_WIDE`), in a directory of
//! 120 files of 100 bytes: reading them in turn takes three requests (the
//! first file alone, 8 along, then the other 110 in one wide batch, asked
//! because every file of the batch before was taken); past the client,
//! `AHEAD_WIDE` without `AHEAD` takes nothing along, `AHEAD` alone takes
//! exactly `AHEAD_MAX`, and both exactly `AHEAD_WIDE_MAX`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::Args;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::fd::File;
use oxok_libos::fs::proto::ahead::Head;
use oxok_libos::fs::proto::{self, AHEAD_MAX, AHEAD_WIDE_MAX, BUFFER_SIZE, Status, WireStat, flags, op};
use oxok_libos::fs::{self, OpenFlags, ftable};
use oxok_libos::pct::Msg;
use oxok_libos::vm::{self, Fork};
use oxok_tests::Checks;
use oxok_tests::fsraw::{open_handles, path_request, raw, request};

oxok_libos::main!(main);

const DIR: &str = "/ahead";
const FILES: usize = 24;
const LEN: usize = 1000;

fn path(i: usize) -> String {
    format!("{DIR}/f{i:02}")
}

fn pattern(i: usize, salt: u8) -> Vec<u8> {
    (0..LEN).map(|k| (k as u8).wrapping_mul(13) ^ (i as u8) ^ salt).collect()
}

fn main(args: Args) -> i32 {
    let mut t = Checks::new("fs-ahead");
    let routed = args.iter().any(|a| a == "routed");
    let server = if routed {
        None
    } else {
        let Some(s) = oxok_tests::fsraw::own_server("fs-ahead") else { return 1 };
        Some(s)
    };
    // One big write makes this process's buffer.
    t.check(fs::write_file("/ahead-big", &vec![7u8; 64 * 1024]).is_ok(), "64 KiB written");
    t.check(fs::mkdir(DIR).is_ok(), "the directory made");
    for i in 0..FILES {
        t.check(fs::write_file(&path(i), &pattern(i, 0)).is_ok(), &format!("file {i} written"));
    }
    let Ok(probe) = fs::open_file(&path(0), OpenFlags::READ) else {
        t.check(false, "open a file");
        return t.finish();
    };
    let srv = probe.server();
    drop(probe);
    fs::closes::flush(); // sends the waiting closes
    let base = open_handles(srv).unwrap_or(u64::MAX);

    read_all(&mut t);
    numbered(&mut t);
    renamed_and_replaced(&mut t);
    unlinked(&mut t);
    renamed_by_another(&mut t);
    written(&mut t);
    fs::closes::flush();
    asked_past_the_client(&mut t, srv);
    fs::closes::flush();
    widening(&mut t, srv);

    fs::closes::flush();
    t.expect(open_handles(srv), Some(base), "no handle left open at the server");
    for i in 0..FILES {
        let _ = fs::unlink(&path(i));
    }
    for name in ["g03", "f07-moved"] {
        let _ = fs::unlink(&format!("{DIR}/{name}"));
    }
    t.expect(fs::rmdir(DIR).ok(), Some(()), "the directory empty at the end");
    let _ = fs::unlink("/ahead-big");
    if let Some(s) = server {
        t.expect(fs::stop_server(s), Ok(ExitStatus::Exited(0)), "the server stops");
    }
    t.finish()
}

/// The server's `INFO` word 4: the files it holds open (`dfsd`), or its
/// inodes (the RAM file system's `fsd`).
fn files_open(server: u64) -> Option<u64> {
    raw(server, &request(op::INFO, 0, 0, &[])).ok().filter(|r| Status::of(r[0]) == Status::Ok).map(|r| r[4])
}

/// Reads file `i` whole; its bytes, or `None` if it could not be opened.
fn read(i: usize) -> Option<Vec<u8>> {
    read_path(&path(i))
}

fn read_path(p: &str) -> Option<Vec<u8>> {
    let f = fs::open_file(p, OpenFlags::READ).ok()?;
    let mut buf = vec![0u8; 4096];
    let n = f.read(&mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// Every file in turn, read whole, with a request for several files.
fn read_all(t: &mut Checks) {
    let before = fs::requests();
    let right = (0..FILES).filter(|&i| read(i) == Some(pattern(i, 0))).count();
    let asked = fs::requests() - before;
    t.expect(right, FILES, "every file read whole and right");
    oxok_libos::println!("fs-ahead: {FILES} files read with {asked} requests");
    t.check(asked <= (FILES / 3) as u64, "a request for every three files or more");
}

/// Starts reading the directory from the first file: the second open
/// brings the files after it.
fn start() {
    let _ = read(0);
    let _ = read(1);
}

/// Files opened along carry the inode numbers `stat` of their paths
/// gives: the number this process's open-file table keeps for each (what
/// a checkpoint saves), read back from the table's first page.
fn numbered(t: &mut Checks) {
    start();
    let held: Vec<_> = (2..6).filter_map(|i| fs::open_file(&path(i), OpenFlags::READ).ok()).collect();
    t.expect(held.len(), 4, "four files opened along held open");
    let mut page = vec![0u8; 4096];
    let copied = oxok_libos::guest::copy_in(ftable::FILES_BASE, &mut page).is_ok();
    t.check(copied, "the open-file table's first page read");
    let entries = ftable::entries_in(ftable::FILES_BASE, &page);
    for i in 2..6 {
        let p = path(i);
        let kept = entries.iter().find(|e| e.path == p.as_bytes()).map(|e| e.ino);
        let stat = fs::stat(&p).ok().map(|m| m.ino);
        t.check(kept.is_some() && kept == stat, &format!("f{i:02} opened along carries stat's number"));
    }
    drop(held);
}

/// File 3 renamed away and another made under its name after it was
/// opened along: its path opens the new file.
fn renamed_and_replaced(t: &mut Checks) {
    start();
    t.check(fs::rename(&path(3), &format!("{DIR}/g03")).is_ok(), "f03 renamed to g03");
    t.check(fs::write_file(&path(3), &pattern(3, 0x5a)).is_ok(), "a new f03 made");
    t.expect(read(3), Some(pattern(3, 0x5a)), "f03 reads as the new file");
    t.expect(read_path(&format!("{DIR}/g03")), Some(pattern(3, 0)), "g03 as the old");
}

/// File 5 unlinked after it was opened along: its path names nothing.
fn unlinked(t: &mut Checks) {
    start();
    t.check(fs::unlink(&path(5)).is_ok(), "f05 unlinked");
    t.check(fs::open_file(&path(5), OpenFlags::READ).is_err(), "f05 no longer opens");
    t.check(fs::write_file(&path(5), &pattern(5, 0)).is_ok(), "f05 made again");
}

/// Another process renames file 7 and replaces file 6 after they were
/// opened along here.
fn renamed_by_another(t: &mut Checks) {
    start();
    let done = match vm::fork() {
        Ok(Fork::Child) => {
            let ok = fs::rename(&path(7), &format!("{DIR}/f07-moved")).is_ok()
                && fs::unlink(&path(6)).is_ok()
                && fs::write_file(&path(6), &pattern(6, 0x33)).is_ok();
            oxok_libos::process::exit(if ok { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => exec::wait(child) == Ok(ExitStatus::Exited(0)),
        Err(_) => false,
    };
    t.check(done, "a child renamed f07 and made f06 anew");
    t.check(fs::open_file(&path(7), OpenFlags::READ).is_err(), "f07 no longer opens here");
    t.expect(read(6), Some(pattern(6, 0x33)), "f06 reads as the child's new file");
    t.expect(read_path(&format!("{DIR}/f07-moved")), Some(pattern(7, 0)), "f07-moved reads as f07 did");
}

/// File 10 written after it was opened along: read with the new bytes.
fn written(t: &mut Checks) {
    let _ = read(8);
    let _ = read(9); // brings f10 and the ones after it
    let Ok(w) = fs::open_file(&path(10), OpenFlags::WRITE) else { return t.check(false, "open f10 to write") };
    t.expect(w.write(b"new").ok(), Some(3), "three bytes written at f10's start");
    drop(w);
    let got = read(10).unwrap_or_default();
    t.check(got.len() == LEN && got[..3] == *b"new" && got[3..] == pattern(10, 0)[3..], "f10 reads with them");
}

/// The directory the hostile asks look at.
const HDIR: &str = "/hostile-ahead";
/// Bytes of each larger file there: three fill most of a buffer.
const BIG: usize = 20_000;

/// `OPEN` of `path` with `bits`, past the client.
fn open_raw(srv: u64, path: &str, bits: u64) -> Option<Msg> {
    raw(srv, &path_request(op::OPEN, bits, path.as_bytes())).ok().filter(|r| Status::of(r[0]) == Status::Ok)
}

/// Closes `handle`, past the client.
fn close_raw(srv: u64, handle: u64) -> bool {
    raw(srv, &request(op::CLOSE, 1, 0, &[handle])).is_ok_and(|r| Status::of(r[0]) == Status::Ok)
}

/// The size of the file behind `handle`, past the client.
fn size_raw(srv: u64, handle: u64) -> Option<u64> {
    let r = raw(srv, &request(op::FSTAT, 0, 0, &[handle])).ok()?;
    (Status::of(r[0]) == Status::Ok).then(|| WireStat::of(&r[1..]).size)
}

/// The asks of a client that does not play by its library's rules (see
/// the module documentation). Leaves nothing open.
fn asked_past_the_client(t: &mut Checks, srv: u64) {
    let name = |i: usize| format!("{HDIR}/a{i:02}");
    t.check(fs::mkdir(HDIR).is_ok(), "the hostile directory made");
    t.check(fs::write_file(&name(0), &[1; 100]).is_ok(), "a00 written");
    t.check(fs::mkdir(&name(1)).is_ok(), "a01, a directory, made");
    // The disk's C-FFS keeps no symbolic links: a regular file stands in.
    let link = fs::symlink("a00", &name(2)).is_ok();
    if !link {
        t.check(fs::write_file(&name(2), &[2; 100]).is_ok(), "a02 written");
    }
    t.check(fs::write_file(&name(3), &[3; 100]).is_ok(), "a03 written");
    for i in 4..12 {
        t.check(fs::write_file(&name(i), &vec![i as u8; BIG]).is_ok(), &format!("a{i:02} written"));
    }
    fs::closes::flush();
    let Some(base) = open_handles(srv) else { return t.check(false, "the server's handles counted") };
    let files = files_open(srv);
    let a00 = name(0);

    // Along only with a prefetching open for reading.
    for (bits, what) in [
        (flags::READ | flags::AHEAD, "without PREFETCH"),
        (flags::WRITE | flags::PREFETCH | flags::AHEAD, "for writing"),
    ] {
        let r = open_raw(srv, &a00, bits);
        t.check(r.is_some_and(|r| r[6] == 0), &format!("an open ahead {what} takes nothing along"));
        t.expect(open_handles(srv), Some(base + 1), &format!("one handle for an open ahead {what}"));
        t.check(r.is_some_and(|r| close_raw(srv, r[1])), "closed");
    }

    // Only regular files, at most AHEAD_MAX, within the buffer.
    let Some(r) = open_raw(srv, &a00, flags::READ | flags::PREFETCH | flags::AHEAD) else {
        return t.check(false, "a prefetching open ahead");
    };
    let went = r[6];
    t.check(r[4] == 100, "a00 came with its open");
    t.check((1..=AHEAD_MAX as u64).contains(&went), "files went along, at most AHEAD_MAX");
    t.expect(open_handles(srv), Some(base + 1 + went), "a handle for each file along");
    // Handles count on per client: the files along hold the next ones.
    let sizes: Vec<Option<u64>> = (1..=went).map(|k| size_raw(srv, r[1] + k)).collect();
    let expected: Vec<Option<u64>> =
        (0..went).map(|k| Some(if k <= u64::from(!link) { 100 } else { BIG as u64 })).collect();
    t.expect(
        &sizes,
        &expected,
        "the files along are a03 on (a02 too when it is a file), not the directory or the link",
    );
    let records: usize =
        (0..went as usize).map(|k| Head::record_len(3, sizes.get(k).copied().flatten().unwrap_or(0) as usize)).sum();
    t.check(proto::ahead::start(100) + records <= BUFFER_SIZE, "the records fit the largest buffer");
    t.check(went < 8, "a buffer's worth stops the files along before AHEAD_MAX here");
    let w = raw(srv, &request(op::WRITE, 3, 0, &[r[1] + 1, u64::from_le_bytes(*b"bad\0\0\0\0\0")]));
    t.expect(w.ok().map(|w| Status::of(w[0])), Some(Status::BadHandle), "a handle along refuses a write");
    t.check((0..=went).all(|k| close_raw(srv, r[1] + k)), "every handle along closed");
    t.expect(open_handles(srv), Some(base), "nothing left open");

    // The quota's last 16 handles are never taken along. Held until the
    // quota refuses (this client then holds all of it, whatever else it
    // had open there), then down to 18 short of it.
    let mut held = Vec::new();
    while held.len() < 256
        && let Some(r) = open_raw(srv, &a00, flags::READ)
    {
        held.push(r[1]);
    }
    t.check((18..256).contains(&held.len()), "the quota refuses a hoarder");
    for h in held.split_off(held.len().saturating_sub(18)) {
        t.check(close_raw(srv, h), "closed down to 18 short of the quota");
    }
    let r = open_raw(srv, &a00, flags::READ | flags::PREFETCH | flags::AHEAD);
    t.check(r.is_some_and(|r| r[6] == 1), "17 short of the quota, one file goes along");
    if let Some(r) = r {
        t.check(close_raw(srv, r[1]) && close_raw(srv, r[1] + 1), "closed");
    }
    if let Some(r) = open_raw(srv, &a00, flags::READ) {
        held.push(r[1]);
    }
    let r = open_raw(srv, &a00, flags::READ | flags::PREFETCH | flags::AHEAD);
    t.check(r.is_some_and(|r| r[6] == 0), "16 short of it, none goes along");
    if let Some(r) = r {
        held.push(r[1]);
    }
    t.check(held.iter().all(|&h| close_raw(srv, h)), "every held handle closed");
    t.expect(open_handles(srv), Some(base), "nothing left open at the end");
    carried_closes(t, srv, base, &a00);
    // The file a batch could not take (the buffer full) was opened by the
    // file system first: the server lets such a file go again.
    t.expect(files_open(srv), files, "no file the server opened is left behind");
    for i in (0..12).filter(|&i| i != 1) {
        let _ = fs::unlink(&name(i));
    }
    let _ = fs::rmdir(&name(1));
    t.expect(fs::rmdir(HDIR).ok(), Some(()), "the hostile directory empty at the end");
}

/// An `OPEN` with `flags::CLOSES` closes what its buffer lists as a
/// `CLOSE` would: only the sender's own handles. The list is whatever the
/// buffer holds, here a file's bytes a prefetching open put there: a count
/// far past `CLOSES_MAX` and every handle number below it, which are
/// also the numbers a forked child's handles have (per client, from 1).
fn carried_closes(t: &mut Checks, srv: u64, base: u64, a00: &str) {
    const LIST: &str = "/hostile-ahead/list";
    const GO: &str = "/hostile-ahead/go";
    let mut list = u64::MAX.to_le_bytes().to_vec();
    for h in 0..proto::CLOSES_MAX as u64 {
        list.extend_from_slice(&h.to_le_bytes());
    }
    t.check(fs::write_file(LIST, &list).is_ok(), "a list of closes written as a file");
    fs::closes::flush();
    match vm::fork() {
        Ok(Fork::Child) => {
            let kept = fs::open_file(a00, OpenFlags::READ);
            for _ in 0..3_000 {
                if fs::stat(GO).is_ok() {
                    break;
                }
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            let mut buf = [0u8; 200];
            let read = kept.as_ref().ok().and_then(|f| f.read(&mut buf).ok());
            oxok_libos::process::exit(if read == Some(100) { 0 } else { 1 })
        }
        Ok(Fork::Parent(child)) => {
            let mut seen = false;
            for _ in 0..300 {
                seen = open_handles(srv) == Some(base + 1);
                if seen {
                    break;
                }
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            t.check(seen, "the child holds one handle");
            let listed = open_raw(srv, LIST, flags::READ | flags::PREFETCH);
            t.check(listed.is_some_and(|r| r[4] == list.len() as u64), "the list came into the buffer with its open");
            let own = listed.map_or(0, |r| r[1]);
            let r = open_raw(srv, a00, flags::READ | flags::CLOSES);
            t.check(r.is_some(), "an open carrying the list succeeds");
            // The list's own handle went if its number is listed.
            let left = base + 2 + u64::from(own >= proto::CLOSES_MAX as u64);
            t.expect(open_handles(srv), Some(left), "only this client's own handles were closed");
            t.check(fs::write_file(GO, b"go").is_ok(), "/go made");
            t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the child's file still reads");
            for h in [own, r.map_or(0, |r| r[1])] {
                let _ = close_raw(srv, h);
            }
            fs::closes::flush();
            t.expect(open_handles(srv), Some(base), "nothing left open after the carried closes");
            let _ = fs::unlink(GO);
            let _ = fs::unlink(LIST);
        }
        Err(e) => t.check(false, &format!("fork failed: {e}")),
    }
}

/// The directory of [`widening`].
const WDIR: &str = "/wide-ahead";
/// Its files: the first, eight along, then a whole wide batch.
const WIDE_FILES: usize = 1 + AHEAD_MAX + 1 + AHEAD_WIDE_MAX;

/// The window that widens for a reader going through a directory, and
/// its bounds asked past the client (see the module documentation).
fn widening(t: &mut Checks, srv: u64) {
    let name = |i: usize| format!("{WDIR}/w{i:02}");
    t.check(fs::mkdir(WDIR).is_ok(), "the wide directory made");
    for i in 0..WIDE_FILES {
        t.check(fs::write_file(&name(i), &[i as u8; 100]).is_ok(), &format!("w{i:02} written"));
    }
    fs::closes::flush();
    let Some(base) = open_handles(srv) else { return t.check(false, "the server's handles counted") };
    // Another directory's file first, so the first open here asks for
    // nothing along; then nothing waits. Each file is closed once read
    // (more than this process's open-file table holds are read): its close
    // waits and goes with the next request, which it does not add to.
    let _ = read_path(&path(0));
    fs::closes::flush();
    let before = fs::requests();
    let mut right = 0;
    for i in 0..WIDE_FILES {
        let Ok(f) = fs::open_file(&name(i), OpenFlags::READ) else { continue };
        let mut buf = [0u8; 200];
        right += usize::from(f.read(&mut buf).ok() == Some(100) && buf[..100] == [i as u8; 100]);
    }
    let asked = fs::requests() - before;
    t.expect(right, WIDE_FILES, "every wide file read whole and right");
    t.expect(asked, 3, "the files in turn: the first alone, 8 along, then the other 110 in one wide batch");
    fs::closes::flush();
    t.expect(open_handles(srv), Some(base), "nothing left open after the reads");

    let w00 = name(0);
    for (bits, want, what) in [
        (flags::AHEAD_WIDE, 0, "AHEAD_WIDE without AHEAD takes nothing along"),
        (flags::AHEAD, AHEAD_MAX as u64, "AHEAD alone takes AHEAD_MAX along"),
        (flags::AHEAD | flags::AHEAD_WIDE, AHEAD_WIDE_MAX as u64, "AHEAD_WIDE takes AHEAD_WIDE_MAX along"),
    ] {
        let r = open_raw(srv, &w00, flags::READ | flags::PREFETCH | bits);
        t.expect(r.map(|r| r[6]), Some(want), what);
        if let Some(r) = r {
            t.check((0..=r[6]).all(|k| close_raw(srv, r[1] + k)), "every handle closed");
        }
    }
    t.expect(open_handles(srv), Some(base), "nothing left open at the end");
    for i in 0..WIDE_FILES {
        let _ = fs::unlink(&name(i));
    }
    t.expect(fs::rmdir(WDIR).ok(), Some(()), "the wide directory empty at the end");
}
