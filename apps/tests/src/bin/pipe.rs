//! pipe: the libOS's pipes and descriptor passing across spawn.
//!
//! 1. Within one process: bytes through, a write end held by several
//!    descriptors (the pipe stays open until the last is closed), end of
//!    file, a broken pipe, the wrong end refused.
//! 2. A child's standard output given as a pipe's write end
//!    (`SpawnOptions::stdout`), the parent's own table untouched; every
//!    line, the end of file and the exit code arrive.
//! 3. Descriptor inheritance: a child sees exactly the table passed (with
//!    and without the caller's other descriptors), no `OXOK_FD` variable
//!    left in its environment, and a grandchild inherits the pipe again.
//! 4. A writer killed mid-stream: the reader gets the end of file.
//! 5. A reader that leaves: the writer gets `BrokenPipe`.
//! 6. 1 MiB each way, through a ring of under 4 KiB (full and empty waits
//!    with directed yields), checked byte by byte.
//! 7. 200 one-byte round trips over two pipes (the bench's ping-pong).
//! 8. A child of fork writes into a pipe it inherited with its memory.
//! 9. A writer that ends while its reader sleeps on the empty pipe: the
//!    reader wakes at its end (the sleep watches the partner, not only the
//!    pipe's words), not at the sleep's timeout.
//! 10. Afterwards the caller owns the frames and capability slots it had.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::abi::CAP_SLOTS;
use oxok_libos::exec::{self, ExitStatus, SpawnOptions};
use oxok_libos::fd::pipe::{self, pipe};
use oxok_libos::fd::{self, Handle, IoError};
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu, stream};

oxok_libos::main!(main);

const MIB: u64 = 1 << 20;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("pipe");
    let Ok(()) = local(&mut t) else {
        t.check(false, "pipe() works");
        return t.finish();
    };
    lines(&mut t); // also warms up the heap and the page tables
    let before = (caps(), exposed::owned_frames());
    inherit(&mut t, true, "fds 0:console 1:pipe 2:console 5:pipe\nenv clean\nvia fd 5\n");
    inherit(&mut t, false, "fds 1:pipe\nenv clean\n");
    killed(&mut t);
    broken(&mut t);
    to_parent(&mut t);
    to_child(&mut t);
    ping_pong(&mut t);
    forked(&mut t);
    lingered(&mut t);
    lines(&mut t);
    t.expect(fd::list(), alloc_list(), "the parent's own table is untouched");
    // The children's page tables go in bounded steps; then the frames the
    // parent created and parked can be freed.
    let mut after = (caps(), exposed::owned_frames());
    for _ in 0..10_000 {
        pipe::reclaim();
        after = (caps(), exposed::owned_frames());
        if after == before {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.expect(after, before, "capability slots and own frames back where they started");
    t.finish()
}

fn alloc_list() -> alloc::vec::Vec<(usize, &'static str)> {
    alloc::vec![(0, "console"), (1, "console"), (2, "console")]
}

fn caps() -> usize {
    (0..CAP_SLOTS as u64).filter(|&slot| sys::cap_info(slot).is_ok()).count()
}

/// Reads `h` to the end of file (at most `max` bytes, and fails past
/// that).
fn read_all(h: &Handle, max: usize) -> Result<alloc::vec::Vec<u8>, IoError> {
    let mut out = alloc::vec::Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let n = h.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() > max {
            return Err(IoError::NoSpace);
        }
    }
}

/// Spawns `pipe-writer argv…` with `opts`; `None` (and a failed check) if
/// it cannot.
fn start(t: &mut Checks, argv: &[&str], opts: &SpawnOptions<'_>) -> Option<exec::Child> {
    let child = exec::spawn_with("pipe-writer", argv, opts);
    if let Err(e) = &child {
        println!("pipe: FAIL spawn {argv:?}: {e}");
    }
    t.check(child.is_ok(), "spawn_with");
    child.ok()
}

/// `pipe-writer ARGS…` started with a new pipe's write end as its
/// standard output: the pipe's read end (the parent keeps no write end)
/// and the child.
fn writer(t: &mut Checks, argv: &[&str]) -> Option<(Handle, exec::Child)> {
    let Ok((r, w)) = pipe() else {
        t.check(false, "pipe");
        return None;
    };
    let mut opts = SpawnOptions::new();
    opts.stdout(w);
    let child = start(t, argv, &opts)?;
    Some((r, child))
}

fn finish(t: &mut Checks, child: exec::Child, want: ExitStatus, what: &str) {
    t.expect(exec::wait(child), Ok(want), what);
}

fn local(t: &mut Checks) -> Result<(), IoError> {
    let (r, w) = pipe()?;
    t.expect(w.write(b"hello"), Ok(5), "write");
    let mut buf = [0u8; 16];
    t.expect(r.read(&mut buf), Ok(5), "read");
    t.check(&buf[..5] == b"hello", "the bytes come out as they went in");
    t.expect(r.write(b"x"), Err(IoError::Unsupported), "writing a read end");
    t.expect(w.read(&mut buf), Err(IoError::Unsupported), "reading a write end");
    let big = [7u8; 8000];
    let n = w.write(&big).unwrap_or(0);
    t.check(n > 3000 && n < 4096, "a write into an empty pipe takes what the ring holds");
    let drained = read_all_some(&r, n);
    t.expect(drained, n, "and all of it comes out");

    // Two descriptors for the write end, and the local handle: the pipe
    // is open until the last of them is gone.
    let a = fd::install(w.clone())?;
    fd::install_at(9, w.clone())?;
    drop(w);
    fd::close(a)?;
    fd::write_all(9, b"still open")?;
    t.expect(r.read(&mut buf), Ok(10), "a dup'd write end still writes");
    fd::close(9)?;
    t.expect(r.read(&mut buf), Ok(0), "end of file once every write end is closed");

    let (r, w) = pipe()?;
    drop(r);
    t.expect(w.write(b"x"), Err(IoError::BrokenPipe), "no reader: broken pipe");
    Ok(())
}

/// Reads exactly `n` bytes that are already in the pipe.
fn read_all_some(r: &Handle, n: usize) -> usize {
    let mut buf = [0u8; 1024];
    let mut got = 0;
    while got < n {
        match r.read(&mut buf[..(n - got).min(1024)]) {
            Ok(k) if k > 0 => got += k,
            _ => break,
        }
    }
    got
}

fn lines(t: &mut Checks) {
    let Some((r, child)) = writer(t, &["pipe-writer", "lines", "5"]) else { return };
    let mut want = alloc::string::String::new();
    for i in 1..=5 {
        want.push_str(&alloc::format!("pipe-writer: line {i} of 5\n"));
    }
    let got = read_all(&r, 4096);
    t.expect(got.as_deref(), Ok(want.as_bytes()), "a child's println! through a pipe, then end of file");
    finish(t, child, ExitStatus::Exited(5), "the writer's exit code");
    println!("pipe: child stdout through a pipe: 5 lines and end of file");
}

fn inherit(t: &mut Checks, all: bool, head: &str) {
    let Ok((r, w)) = pipe() else { return t.check(false, "pipe") };
    let _ = fd::install_at(5, w.clone());
    let mut opts = SpawnOptions::new();
    opts.stdout(w).inherit(all);
    let child = start(t, &["pipe-writer", "fds"], &opts);
    drop(opts);
    let _ = fd::close(5);
    let Some(child) = child else { return };
    let want = alloc::format!("{head}pipe-writer: line 1 of 2\npipe-writer: line 2 of 2\n");
    let got = read_all(&r, 4096);
    let text = got.as_deref().map(|b| core::str::from_utf8(b).unwrap_or("(not UTF-8)"));
    t.expect(text, Ok(want.as_str()), "the child's table as passed, its grandchild's too");
    finish(t, child, ExitStatus::Exited(0), "the fds child ends well");
    println!("pipe: descriptors inherited (all: {all}), grandchild included");
}

fn killed(t: &mut Checks) {
    let Some((r, child)) = writer(t, &["pipe-writer", "hang"]) else { return };
    let line = b"pipe-writer: before the kill\n";
    let mut got = alloc::vec::Vec::new();
    let mut buf = [0u8; 64];
    while got.len() < line.len() {
        match r.read(&mut buf) {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    t.check(got == line, "the line written before the kill");
    // Destroyed by its creator, it leaves no zombie to wait for (and the
    // capability slot empties).
    t.check(sys::env_destroy(child.slot).is_ok(), "the parent kills the writer");
    t.expect(r.read(&mut buf), Ok(0), "end of file when the writer is killed");
    t.check(exposed::env_entry(child.id).is_none(), "the writer is gone");
    println!("pipe: killed writer: end of file");
}

fn lingered(t: &mut Checks) {
    let Some((r, child)) = writer(t, &["pipe-writer", "linger", "2"]) else { return };
    let ticks = || exposed::clock().map_or(0, |c| c.ticks);
    let t0 = ticks();
    let mut buf = [0u8; 16];
    t.expect(r.read(&mut buf), Ok(0), "end of file when the writer ends without writing");
    let waited = ticks() - t0;
    // The sleep's own timeout is 10 ticks after it began (after the
    // writer's 2 ms had started): an end noticed only by the timeout
    // comes at 10 or later.
    t.check(waited < 8, &alloc::format!("the reader woke at the writer's end ({waited} ticks, not 10)"));
    finish(t, child, ExitStatus::Exited(0), "the lingering writer");
    println!("pipe: a sleeping reader wakes at its writer's end ({waited} ticks)");
}

fn broken(t: &mut Checks) {
    let Ok((r, w)) = pipe() else { return t.check(false, "pipe") };
    let mut opts = SpawnOptions::new();
    opts.stdin(r);
    let child = start(t, &["pipe-writer", "take", "1000"], &opts);
    drop(opts);
    let Some(child) = child else { return };
    let mut buf = [0u8; 1500];
    let mut at = 0;
    let result = loop {
        stream::fill(at, &mut buf);
        match w.write(&buf) {
            Ok(n) => at += n as u64,
            Err(e) => break e,
        }
        if at > 4 * MIB {
            break IoError::Invalid;
        }
    };
    t.expect(result, IoError::BrokenPipe, "the reader left: broken pipe");
    finish(t, child, ExitStatus::Exited(0), "the reader read its 1000 bytes");
    println!("pipe: reader gone: broken pipe after {at} bytes");
}

fn to_parent(t: &mut Checks) {
    let n = alloc::format!("{MIB}");
    let t0 = exposed::rdtsc();
    let Some((r, child)) = writer(t, &["pipe-writer", "bytes", &n]) else { return };
    let mut buf = [0u8; 4096];
    let mut at = 0;
    let mut good = true;
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                good &= stream::matches(at, &buf[..k]);
                at += k as u64;
            }
            Err(e) => {
                println!("pipe: FAIL read after {at}: {e}");
                good = false;
                break;
            }
        }
    }
    t.check(good, "1 MiB from the child, byte for byte");
    t.expect(at, MIB, "all of it, then end of file");
    finish(t, child, ExitStatus::Exited(0), "the 1 MiB writer");
    println!("pipe: 1 MiB child to parent in {} ms", (exposed::rdtsc() - t0) / cpu::cycles_per_ms());
}

fn to_child(t: &mut Checks) {
    let Ok((r, w)) = pipe() else { return t.check(false, "pipe") };
    let mut opts = SpawnOptions::new();
    opts.stdin(r);
    let n = alloc::format!("{MIB}");
    let t0 = exposed::rdtsc();
    let child = start(t, &["pipe-writer", "sink", &n], &opts);
    drop(opts);
    let Some(child) = child else { return };
    let mut buf = [0u8; 1500];
    let mut at = 0;
    while at < MIB {
        let len = (MIB - at).min(buf.len() as u64) as usize;
        stream::fill(at, &mut buf[..len]);
        if let Err(e) = fd_write_all(&w, &buf[..len]) {
            println!("pipe: FAIL write after {at}: {e}");
            break;
        }
        at += len as u64;
    }
    drop(w);
    finish(t, child, ExitStatus::Exited(0), "the child read 1 MiB exactly, then end of file");
    println!("pipe: 1 MiB parent to child in {} ms", (exposed::rdtsc() - t0) / cpu::cycles_per_ms());
}

fn fd_write_all(h: &Handle, mut buf: &[u8]) -> Result<(), IoError> {
    while !buf.is_empty() {
        let n = h.write(buf)?;
        buf = &buf[n..];
    }
    Ok(())
}

fn ping_pong(t: &mut Checks) {
    let (Ok((req_r, req_w)), Ok((rep_r, rep_w))) = (pipe(), pipe()) else { return t.check(false, "pipe") };
    let mut opts = SpawnOptions::new();
    opts.stdin(req_r).stdout(rep_w);
    let child = start(t, &["pipe-writer", "echo"], &opts);
    drop(opts);
    let Some(child) = child else { return };
    let mut good = 0;
    for i in 0..200u8 {
        let msg = i & 0x7f;
        let mut reply = [0u8; 1];
        if req_w.write(&[msg]) == Ok(1) && rep_r.read(&mut reply) == Ok(1) && reply[0] == msg + 1 {
            good += 1;
        }
    }
    t.expect(good, 200, "200 one-byte round trips");
    drop(req_w);
    let mut buf = [0u8; 4];
    t.expect(rep_r.read(&mut buf), Ok(0), "the echo ends at the end of its input");
    finish(t, child, ExitStatus::Exited(0), "the echo child");
    println!("pipe: 200 round trips over two pipes");
}

fn forked(t: &mut Checks) {
    let Ok((r, w)) = pipe() else { return t.check(false, "pipe") };
    match vm::fork() {
        Ok(Fork::Child) => {
            drop(r);
            let ok = w.write(b"from the fork child\n") == Ok(20);
            drop(w);
            oxok_libos::process::exit(if ok { 0 } else { 1 });
        }
        Ok(Fork::Parent(child)) => {
            // Registered as a holder from here too, before the parent's own
            // write end goes (the child may not have run yet).
            pipe::share_with(child.id);
            drop(w);
            let got = read_all(&r, 4096);
            t.expect(got.as_deref(), Ok(&b"from the fork child\n"[..]), "a fork child writes into an inherited pipe");
            finish(t, child, ExitStatus::Exited(0), "the fork child");
            println!("pipe: a child of fork wrote into the pipe");
        }
        Err(e) => {
            println!("pipe: FAIL fork: {e}");
            t.check(false, "fork");
        }
    }
}
