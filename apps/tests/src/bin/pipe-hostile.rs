//! pipe-hostile: pipes whose partner scribbles over the shared frame
//! (`pipe-scribbler`), with a bystander alive the whole time whose id the
//! scribbler writes into every holder entry — so only the kernel's frame
//! table can tell the pipe is closed once the scribbler is gone.
//!
//! 1. A well-behaved child writes 20 lines into a second pipe first.
//! 2. The scribbler holds the write end of pipe A: reading A may give
//!    garbage or `Invalid`, but must neither crash nor hang, and must end
//!    with end of file once the scribbler has exited.
//! 3. The scribbler holds the read end of pipe C: writing C may succeed or
//!    fail with `Invalid`, and must end with `BrokenPipe`.
//! 4. The second pipe's 20 lines arrive intact (the scribbler could reach
//!    only its own pipe), and a fresh pipe works.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::exec::{self, ExitStatus, SpawnOptions};
use oxok_libos::fd::pipe::pipe;
use oxok_libos::fd::{Handle, IoError};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu};

oxok_libos::main!(main);

/// Rounds of scribbling.
const ROUNDS: &str = "3000";
/// Wall-clock limit for each hostile pipe, in milliseconds.
const LIMIT_MS: u64 = 20_000;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("pipe-hostile");
    let bystander = exec::spawn("pipe-writer", &["pipe-writer", "hang"]);
    t.check(bystander.is_ok(), "a bystander runs");
    let good = spawn_piped(&mut t, &["pipe-writer", "lines", "20"], false);
    if let Some((pipe_a, child)) = spawn_piped(&mut t, &["pipe-scribbler", ROUNDS], false) {
        hostile_writer(&mut t, &pipe_a);
        t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the scribbler (writer side) ends");
    }
    if let Some((pipe_c, child)) = spawn_piped(&mut t, &["pipe-scribbler", ROUNDS], true) {
        hostile_reader(&mut t, &pipe_c);
        t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the scribbler (reader side) ends");
    }
    if let Some((r, child)) = good {
        let mut want = alloc::string::String::new();
        for i in 1..=20 {
            want.push_str(&alloc::format!("pipe-writer: line {i} of 20\n"));
        }
        let got = read_to_end(&r, 4096);
        t.expect(got.as_deref(), Ok(want.as_bytes()), "the other pipe's data is intact");
        t.expect(exec::wait(child), Ok(ExitStatus::Exited(20)), "the well-behaved writer ends");
    }
    match pipe() {
        Ok((r, w)) => {
            t.expect(w.write(b"fine"), Ok(4), "a fresh pipe takes bytes");
            let mut buf = [0u8; 8];
            t.expect(r.read(&mut buf), Ok(4), "and gives them back");
        }
        Err(e) => t.expect(Err(e), Ok(()), "a fresh pipe"),
    }
    if let Ok(b) = bystander {
        // Destroyed by its creator: no zombie, the capability slot empties.
        t.check(sys::env_destroy(b.slot).is_ok(), "the bystander is stopped");
    }
    println!("pipe-hostile: the parent goes on");
    t.finish()
}

/// Spawns `argv` with a new pipe: the child's stdout is the write end
/// (returned: the read end), or with `child_reads` its stdin is the read
/// end (returned: the write end).
fn spawn_piped(t: &mut Checks, argv: &[&str], child_reads: bool) -> Option<(Handle, exec::Child)> {
    let (r, w) = pipe().ok()?;
    let mut opts = SpawnOptions::new();
    let mine = if child_reads {
        opts.stdin(r);
        w
    } else {
        opts.stdout(w);
        r
    };
    let child = exec::spawn_with(argv[0], argv, &opts);
    t.check(child.is_ok(), "spawn_with");
    Some((mine, child.ok()?))
}

/// True until `LIMIT_MS` have passed since `t0`.
fn in_time(t0: u64) -> bool {
    exposed::rdtsc() - t0 < LIMIT_MS * cpu::cycles_per_ms()
}

/// Reads the scribbled pipe to its end.
fn hostile_writer(t: &mut Checks, r: &Handle) {
    let t0 = exposed::rdtsc();
    let (mut bytes, mut invalid, mut other) = (0u64, 0u64, 0u64);
    let mut buf = [0u8; 512];
    let eof = loop {
        if !in_time(t0) {
            break false;
        }
        match r.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => bytes += n as u64,
            Err(IoError::Invalid) => invalid += 1,
            Err(_) => other += 1,
        }
    };
    t.check(eof, "reading from a scribbler ends with end of file, in time");
    t.expect(other, 0, "no error but Invalid");
    println!("pipe-hostile: reader survived: {bytes} bytes of garbage, {invalid} corrupt headers, end of file");
}

/// Writes into the scribbled pipe until it breaks.
fn hostile_reader(t: &mut Checks, w: &Handle) {
    let t0 = exposed::rdtsc();
    let (mut bytes, mut invalid) = (0u64, 0u64);
    let buf = [0x5au8; 700];
    let last = loop {
        if !in_time(t0) {
            break None;
        }
        match w.write(&buf) {
            Ok(n) => bytes += n as u64,
            Err(IoError::Invalid) => invalid += 1,
            Err(e) => break Some(e),
        }
    };
    t.expect(last, Some(IoError::BrokenPipe), "writing to a scribbler ends with a broken pipe, in time");
    println!("pipe-hostile: writer survived: {bytes} bytes taken, {invalid} corrupt headers, broken pipe");
}

fn read_to_end(h: &Handle, max: usize) -> Result<alloc::vec::Vec<u8>, IoError> {
    let mut out = alloc::vec::Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let n = h.read(&mut buf)?;
        if n == 0 || out.len() > max {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}
