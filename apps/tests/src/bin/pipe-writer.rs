//! pipe-writer MODE [N]: the child end of the `pipe` scenario (and of the
//! bench's `pipe_pingpong`). It knows nothing of pipes: it uses its
//! descriptors 0, 1, 5 as its parent passed them (`OXOK_FD<n>`).
//!
//! * `lines N` — prints `pipe-writer: line i of N` for i = 1..=N with
//!   `println!`, exits with status N.
//! * `bytes N` — writes N bytes of the test stream to fd 1, exits 0.
//! * `hang` — prints one line, then yields forever (to be killed).
//! * `take N` — reads N bytes of the stream from fd 0, exits 0 without
//!   reading on (its writer then sees a broken pipe).
//! * `sink N` — reads fd 0 to the end; exits 0 if that was exactly the
//!   first N bytes of the stream.
//! * `fds` — prints its descriptor table and whether any `OXOK_FD`
//!   variable is left in its environment, writes a line to fd 5 if open,
//!   then runs `pipe-writer lines 2` (which inherits the same table).
//! * `echo` — reads one byte at a time from fd 0 and writes it back plus
//!   one to fd 1, until the end of its input.
//! * `linger N` — sleeps N milliseconds, writes nothing, exits 0 (its
//!   reader, asleep on the empty pipe, must wake at its end).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::fd::{self, IoError};
use oxok_libos::{Args, environ, eprintln, exec, print, println, sys};
use oxok_tests::stream;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let n = args.get(2).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let result = match args.get(1).unwrap_or("") {
        "lines" => {
            for i in 1..=n {
                println!("pipe-writer: line {i} of {n}");
            }
            return n as i32;
        }
        "bytes" => bytes(n),
        "hang" => hang(),
        "take" => read_stream(n, false),
        "sink" => read_stream(n, true),
        "fds" => fds(),
        "echo" => echo(),
        "linger" => {
            let _ = oxok_libos::time::sleep_ms(n);
            return 0;
        }
        other => {
            eprintln!("pipe-writer: unknown mode {other:?}");
            return 2;
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pipe-writer: {e}");
            1
        }
    }
}

/// Writes the first `n` bytes of the stream to fd 1, in odd-sized pieces.
fn bytes(n: u64) -> Result<(), IoError> {
    let mut buf = [0u8; 1000];
    let mut at = 0;
    while at < n {
        let len = (n - at).min(buf.len() as u64) as usize;
        stream::fill(at, &mut buf[..len]);
        fd::write_all(fd::STDOUT, &buf[..len])?;
        at += len as u64;
    }
    Ok(())
}

fn hang() -> ! {
    println!("pipe-writer: before the kill");
    loop {
        let _ = sys::yield_cpu(0);
    }
}

/// Reads the stream from fd 0: `n` bytes (`to_end`: up to the end of file,
/// which must come after exactly `n`).
fn read_stream(n: u64, to_end: bool) -> Result<(), IoError> {
    let mut buf = [0u8; 777];
    let mut at = 0;
    while to_end || at < n {
        let want = if to_end { buf.len() } else { (n - at).min(buf.len() as u64) as usize };
        let got = fd::read(fd::STDIN, &mut buf[..want])?;
        if got == 0 {
            break;
        }
        if !stream::matches(at, &buf[..got]) {
            eprintln!("pipe-writer: wrong bytes at {at}");
            return Err(IoError::Invalid);
        }
        at += got as u64;
    }
    if at != n {
        eprintln!("pipe-writer: read {at} bytes, expected {n}");
        return Err(IoError::Invalid);
    }
    Ok(())
}

fn fds() -> Result<(), IoError> {
    print!("fds");
    for (n, kind) in fd::list() {
        print!(" {n}:{kind}");
    }
    println!();
    let leaked = environ::vars().iter().any(|v| v.starts_with("OXOK_FD"));
    println!("env {}", if leaked { "has OXOK_FD" } else { "clean" });
    if fd::get(5).is_ok() {
        fd::write_all(5, b"via fd 5\n")?;
    }
    let child = exec::spawn("pipe-writer", &["pipe-writer", "lines", "2"]).map_err(|_| IoError::NoSpace)?;
    match exec::wait(child) {
        Ok(exec::ExitStatus::Exited(2)) => Ok(()),
        _ => Err(IoError::Invalid),
    }
}

fn echo() -> Result<(), IoError> {
    let mut b = [0u8; 1];
    loop {
        if fd::read(fd::STDIN, &mut b)? == 0 {
            return Ok(());
        }
        b[0] = b[0].wrapping_add(1);
        fd::write_all(fd::STDOUT, &b)?;
    }
}
