//! ckpt-counter N [MS [LINGER [FILE]]] — the checkpointer's test program: a
//! counter that holds a pipe to a child and, with FILE, an open file of
//! the file server. It counts to N, printing each number and writing it
//! into the pipe (and a line into FILE, after a header line longer than a
//! message, which goes through the shared buffer page), pausing MS
//! milliseconds between numbers (asleep on a wakeup predicate; with MS 0
//! it yields 20,000 times instead, which does not depend on the clock),
//! then reads FILE back from its start (`file lines L sum S bytes B`),
//! closes the pipe and waits for the child, which prints the sum and the
//! count of the lines it read (after sleeping LINGER milliseconds, default
//! 0, so a checkpoint can catch the counter inside its wait).
//! The output is the same however often the tree is checkpointed and
//! restored in between. A restored counter that lost capabilities in the
//! restore says which slots (`counter: revoked capability slots`), and one
//! restored in the middle of a sleep whether the rest of the sleep, in the
//! new machine's clock, was within the sleep's length (the deadline
//! rebased: `counter: restored mid-sleep`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use oxok_libos::exec::{self, SpawnOptions};
use oxok_libos::fd::{self, File, IoError, SeekFrom, pipe};
use oxok_libos::fs::{self, OpenFile, OpenFlags};
use oxok_libos::{Args, println, restore, sys, time};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    if args.get(1) == Some("child") {
        return child(args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0));
    }
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let ms: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20);
    let Ok((r, w)) = pipe::pipe() else {
        println!("counter: no pipe");
        return 1;
    };
    let linger = args.get(3).unwrap_or("0");
    let mut opts = SpawnOptions::new();
    opts.stdin(r);
    let child = match exec::spawn_with("ckpt-counter", &["ckpt-counter", "child", linger], &opts) {
        Ok(c) => c,
        Err(e) => {
            println!("counter: spawn: {e}");
            return 1;
        }
    };
    drop(opts);
    let file = match args.get(4) {
        Some(path) => match open_file(path, n) {
            Ok(f) => Some(f),
            Err(e) => {
                println!("counter: {path}: {e:?}");
                return 1;
            }
        },
        None => None,
    };
    for i in 1..=n {
        println!("count {i}");
        let line = format!("{i}\n");
        if w.write(line.as_bytes()) != Ok(line.len()) {
            println!("counter: pipe write failed at {i}");
            return 1;
        }
        if let Some(f) = &file
            && f.write(line.as_bytes()) != Ok(line.len())
        {
            println!("counter: file write failed at {i}");
            return 1;
        }
        if ms == 0 {
            for _ in 0..20_000 {
                let _ = sys::yield_cpu(0);
            }
        } else {
            let _ = time::sleep_ms(ms);
        }
    }
    if let Some(f) = &file {
        read_back(f);
    }
    drop(w);
    match exec::wait(child) {
        Ok(st) => println!("counter done {n} child {}", st.code()),
        Err(e) => println!("counter: wait: {e:?}"),
    }
    if let Some((left, len)) = time::restored_sleep() {
        if left <= len {
            println!("counter: restored mid-sleep, the rest of the sleep within its length");
        } else {
            println!("counter: restored mid-sleep, {left} ticks left of a {len}-tick sleep");
        }
    }
    if restore::revoked() != 0 {
        println!("counter: revoked capability slots {:#x}", restore::revoked());
    }
    0
}

/// Opens `path` afresh and writes its header line (longer than one
/// message, so it goes through the shared buffer page).
fn open_file(path: &str, n: u64) -> Result<OpenFile, IoError> {
    let f = fs::open_file(path, OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE)?;
    let mut header = format!("# ckpt-counter: the numbers 1 to {n}, one a line");
    while header.len() < 99 {
        header.push('.');
    }
    header.push('\n');
    if f.write(header.as_bytes())? != header.len() {
        return Err(IoError::NoSpace);
    }
    Ok(f)
}

/// Reads the file from its start and prints its lines' count and sum.
fn read_back(f: &OpenFile) {
    if f.seek(SeekFrom::Start(0)).is_err() {
        println!("counter: file seek failed");
        return;
    }
    let (mut bytes, mut lines, mut sum, mut cur, mut comment) = (0u64, 0u64, 0u64, 0u64, false);
    let mut buf = [0u8; 512];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                bytes += k as u64;
                for &b in &buf[..k] {
                    match b {
                        b'#' => comment = true,
                        b'\n' if comment => comment = false,
                        b'\n' => {
                            sum += cur;
                            lines += 1;
                            cur = 0;
                        }
                        b'0'..=b'9' if !comment => cur = cur * 10 + u64::from(b - b'0'),
                        _ => {}
                    }
                }
            }
            Err(e) => {
                println!("counter: file read: {e:?}");
                return;
            }
        }
    }
    println!("file lines {lines} sum {sum} bytes {bytes}");
}

/// Reads numbers, one a line, to the end of file; after `linger` ms
/// prints their sum.
fn child(linger: u64) -> i32 {
    let (mut sum, mut lines, mut cur) = (0u64, 0u64, 0u64);
    let mut buf = [0u8; 64];
    loop {
        match fd::read(0, &mut buf) {
            Ok(0) => break,
            Ok(k) => {
                for &b in &buf[..k] {
                    match b {
                        b'0'..=b'9' => cur = cur * 10 + u64::from(b - b'0'),
                        b'\n' => {
                            sum += cur;
                            lines += 1;
                            cur = 0;
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => {
                println!("child: read: {e:?}");
                return 1;
            }
        }
    }
    if linger > 0 {
        let _ = time::sleep_ms(linger);
    }
    println!("child sum {sum} lines {lines}");
    0
}
