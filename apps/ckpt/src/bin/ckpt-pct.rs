//! ckpt-pct N [MS] — the checkpointer's test of a transfer in progress
//! between two members of a tree: a parent calls its child N times by
//! synchronous protected control transfer (`pct_call`); the child's
//! handler sleeps MS milliseconds (default 100) before it answers twice the
//! number, so a checkpoint almost always finds the parent waiting in
//! `pct_wait(child, ticket)` and the child serving. The parent prints each
//! reply and the sum: the same output however the tree was checkpointed
//! and restored in between.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::{Error, cap_kind};
use oxok_libos::exec;
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, println, sys, time};

oxok_libos::main!(main);

/// The handler's pause, in milliseconds.
static PAUSE: AtomicU64 = AtomicU64::new(100);
/// Word 0 of a request (not a libOS tag).
const ASK: u64 = 0x0061_736b;

fn main(args: Args) -> i32 {
    let ms: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    if args.get(1) == Some("server") {
        return server(ms);
    }
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(8);
    let arg = alloc::format!("{ms}");
    let child = match exec::spawn("ckpt-pct", &["ckpt-pct", "server", arg.as_str()]) {
        Ok(c) => c,
        Err(e) => {
            println!("pct: spawn: {e}");
            return 1;
        }
    };
    let mut sum = 0;
    for i in 1..=n {
        let mut m: Msg = [0; pct::WORDS];
        m[0] = ASK;
        m[1] = i;
        let mut tries = 0u32;
        let reply = loop {
            // The child's id from its capability: a restore changes it.
            let id = match sys::cap_info(child.slot) {
                Ok([kind, id, _]) if kind == cap_kind::ENV => id,
                _ => {
                    println!("pct: no child");
                    return 1;
                }
            };
            match pct::call(id, &m) {
                Ok((_, r)) => break r,
                // Not serving yet (just started), or busy.
                Err(Error::Denied | Error::Busy) if tries < 100_000 => {
                    tries += 1;
                    let _ = sys::yield_cpu(0);
                }
                Err(e) => {
                    println!("pct: call {i}: {e:?}");
                    return 1;
                }
            }
        };
        println!("pct {i} -> {}", reply[1]);
        sum += reply[1];
    }
    println!("pct done {n} sum {sum}");
    let _ = sys::env_destroy(child.slot);
    let _ = exec::wait(child);
    0
}

fn handler(_caller: u64, sync: bool, msg: &mut Msg) {
    if !sync || msg[0] != ASK {
        *msg = [0; pct::WORDS];
        return;
    }
    let _ = time::sleep_ms(PAUSE.load(Ordering::Relaxed));
    let n = msg[1];
    *msg = [0; pct::WORDS];
    msg[1] = n * 2;
}

fn server(ms: u64) -> i32 {
    PAUSE.store(ms, Ordering::Relaxed);
    if pct::serve(handler).is_err() {
        println!("pct server: cannot accept calls");
        return 1;
    }
    // Idle until destroyed; every call runs on the caller's time.
    loop {
        let _ = time::sleep_ms(60_000);
    }
}
