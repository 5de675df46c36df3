//! ckpt-counter N [MS [LINGER]] — the checkpointer's test program: a counter that
//! holds a pipe to a child. It counts to N, printing each number and
//! writing it into the pipe, pausing MS milliseconds between numbers
//! (asleep on a wakeup predicate; with MS 0 it yields 20,000 times instead,
//! which does not depend on the clock), then closes the pipe and waits for
//! the child, which prints the sum and the count of the lines it read
//! (after sleeping LINGER milliseconds, default 0, so a checkpoint can
//! catch the counter inside its wait).
//! The output is the same however often the tree is checkpointed and
//! restored in between.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use oxok_libos::exec::{self, SpawnOptions};
use oxok_libos::fd::{self, pipe};
use oxok_libos::{Args, println, sys, time};

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
    for i in 1..=n {
        println!("count {i}");
        let line = format!("{i}\n");
        if w.write(line.as_bytes()) != Ok(line.len()) {
            println!("counter: pipe write failed at {i}");
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
    drop(w);
    match exec::wait(child) {
        Ok(st) => println!("counter done {n} child {}", st.code()),
        Err(e) => println!("counter: wait: {e:?}"),
    }
    0
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
