//! fpu-bench server | client: what switching x87/SSE state costs, for the
//! `fpu=eager` / `fpu=lazy` comparison (a measurement, not a test: it
//! asserts nothing about the figures). The client times, as medians of
//! batches in TSC cycles: the null call; a PCT round trip to the server
//! where neither side touches x87/SSE; one where both do (an SSE
//! instruction before each call and in the handler). An exception upcall
//! switches no environment, so it does no FPU work in either mode (see
//! `exception_upcall_ud2` in the main bench). Prints `fpu-bench: <name>
//! <cycles> cycles` lines and `fpu-bench: done`. Run it with
//! `cargo xtask run --append "run=fpu-bench+server&fpu-bench+client fpu=lazy"`
//! (or `fpu=eager`, the default).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};
use oxok_libos::pct::{self, Msg};
use oxok_libos::time::rdtsc;
use oxok_libos::{Args, println, sys};
use oxok_tests::{cpu, fpu};

oxok_libos::main!(main);

const STOP: u64 = u64::MAX;
const TOUCH: u64 = 1;
const BATCHES: usize = 21;
const OPS: u64 = 100;
static STOPPING: AtomicBool = AtomicBool::new(false);

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("server") => server(),
        _ => client(),
    }
}

fn handler(_caller: u64, _sync: bool, msg: &mut Msg) {
    if msg[0] == STOP {
        STOPPING.store(true, Ordering::Release);
    } else if msg[0] == TOUCH {
        fpu::sse_sqrt0();
    }
}

fn server() -> i32 {
    if pct::serve(handler).is_err() {
        println!("fpu-bench: FAIL serve");
        return 1;
    }
    while !STOPPING.load(Ordering::Acquire) {
        let _ = sys::yield_cpu(0);
    }
    0
}

fn median(mut f: impl FnMut() -> u64) -> u64 {
    let _ = f();
    let mut v = [0u64; BATCHES];
    for slot in v.iter_mut() {
        *slot = f() / OPS;
    }
    v.sort_unstable();
    v[BATCHES / 2]
}

fn client() -> i32 {
    let mut server = None;
    for _ in 0..10_000 {
        server = cpu::peer("fpu-bench");
        if server.is_some() {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    let Some(server) = server else {
        println!("fpu-bench: FAIL no server");
        return 1;
    };
    // Let the server register its entry.
    while pct::call(server, &[0; pct::WORDS]).is_err() {
        let _ = sys::yield_cpu(0);
    }
    let null = median(|| {
        let t0 = rdtsc();
        for _ in 0..OPS {
            let _ = sys::null();
        }
        rdtsc() - t0
    });
    println!("fpu-bench: null_call {null} cycles");
    for (name, touch) in [("pct_roundtrip_nofpu", false), ("pct_roundtrip_sse", true)] {
        let msg: Msg = [u64::from(touch); pct::WORDS];
        let m = median(|| {
            let t0 = rdtsc();
            for _ in 0..OPS {
                if touch {
                    fpu::sse_sqrt0();
                }
                let _ = pct::call(server, &msg);
            }
            rdtsc() - t0
        });
        println!("fpu-bench: {name} {m} cycles");
    }
    let _ = pct::send(server, &[STOP; pct::WORDS]);
    println!("fpu-bench: done");
    0
}
