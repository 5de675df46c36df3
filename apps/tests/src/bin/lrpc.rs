//! lrpc: lightweight RPC over protected control transfer
//! (`libos/src/lrpc.rs`). The parent (client) starts `lrpc server`, which
//! registers procedures and also serves a plain `pct::serve` protocol and
//! a `SIGUSR1` handler — one PCT entry, three services. The client checks
//! results, the caller id the server sees, typed errors (bad procedure
//! numbers, too many arguments, a procedure's own failure), times round
//! trips, and finally calls a procedure that ends the server in the middle
//! of the call: the client gets `ServerDied`, never a hang, and then
//! `NoServer`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::lrpc::{self, Args as LArgs, LrpcError, MAX_ARGS, Results};
use oxok_libos::pct::{self, Msg};
use oxok_libos::signal::{self, SIGUSR1};
use oxok_libos::time::rdtsc;
use oxok_libos::{Args, println, proc, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const ADD: u64 = 0;
const REVERSE: u64 = 1;
const FAIL: u64 = 2;
const WHO: u64 = 3;
const DIE: u64 = 4;

static USR1: AtomicU64 = AtomicU64::new(0);

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("server") => server(),
        _ => client(),
    }
}

// ---- server ----

fn add(_caller: u64, a: &LArgs) -> Result<Results, u64> {
    let mut r = [0; lrpc::RESULTS];
    r[0] = a[0].wrapping_add(a[1]);
    Ok(r)
}

/// Reverses the arguments (through the heap: procedures may allocate).
fn reverse(_caller: u64, a: &LArgs) -> Result<Results, u64> {
    let v: Vec<u64> = a.iter().rev().copied().collect();
    let mut r = [0; lrpc::RESULTS];
    r[..MAX_ARGS].copy_from_slice(&v);
    r[MAX_ARGS] = v.iter().fold(0u64, |s, x| s.wrapping_add(*x));
    Ok(r)
}

fn fail(_caller: u64, a: &LArgs) -> Result<Results, u64> {
    Err(a[0])
}

fn who(caller: u64, _a: &LArgs) -> Result<Results, u64> {
    let mut r = [0; lrpc::RESULTS];
    r[0] = caller;
    r[1] = proc::pid();
    r[2] = USR1.load(Ordering::Relaxed);
    Ok(r)
}

/// Ends the server in the middle of the call.
fn die(_caller: u64, a: &LArgs) -> Result<Results, u64> {
    oxok_libos::process::exit(a[0] as i32)
}

fn echo(_caller: u64, _sync: bool, msg: &mut Msg) {
    msg[0] = msg[0].wrapping_mul(3);
}

fn server() -> i32 {
    let procs: [(u64, lrpc::Procedure); 5] = [(ADD, add), (REVERSE, reverse), (FAIL, fail), (WHO, who), (DIE, die)];
    let ok = procs.iter().all(|&(n, p)| lrpc::register(n, p).is_ok())
        && lrpc::register(lrpc::PROCEDURES as u64, add) == Err(LrpcError::NoProcedure)
        && pct::serve(echo).is_ok()
        && signal::set_handler(SIGUSR1, |_| {
            USR1.fetch_add(1, Ordering::Relaxed);
        })
        .is_ok();
    if !ok {
        println!("lrpc server: FAIL registering");
        return 1;
    }
    println!("lrpc server: serving");
    loop {
        let _ = sys::yield_cpu(0);
    }
}

// ---- client ----

fn client() -> i32 {
    let mut t = Checks::new("lrpc");
    let me = proc::pid();
    let server = match exec::spawn("lrpc", &["lrpc", "server"]) {
        Ok(c) => c,
        Err(e) => {
            println!("lrpc: FAIL spawn server: {e}");
            return 1;
        }
    };
    let sid = server.id;
    // Until the server has registered, calls say so (typed); then they work.
    let mut first = Err(LrpcError::NotServing);
    for _ in 0..100_000 {
        first = lrpc::call(sid, ADD, &[40, 2]);
        match first {
            Err(LrpcError::NoProcedure | LrpcError::NotServing) => {
                let _ = sys::yield_cpu(0);
            }
            _ => break,
        }
    }
    t.expect(first.map(|r| r[0]), Ok(42), "add(40, 2)");

    let r = lrpc::call(sid, REVERSE, &[1, 2, 3, 4, 5, 6, 7]);
    t.expect(r, Ok([7, 6, 5, 4, 3, 2, 1, 28]), "seven arguments and eight results in registers");
    let r = lrpc::call(sid, WHO, &[]);
    t.expect(r.map(|r| (r[0], r[1])), Ok((me, sid)), "the server sees the kernel's caller id");

    // Typed errors.
    t.expect(lrpc::call(sid, FAIL, &[77]), Err(LrpcError::Failed(77)), "a procedure's failure and its code");
    t.expect(lrpc::call(sid, 63, &[]), Err(LrpcError::NoProcedure), "an unregistered procedure");
    t.expect(lrpc::call(sid, 64, &[]), Err(LrpcError::NoProcedure), "a procedure number past the table");
    t.expect(lrpc::call(sid, u64::MAX, &[]), Err(LrpcError::NoProcedure), "an absurd procedure number");
    t.expect(lrpc::call(sid, ADD, &[0; 8]), Err(LrpcError::TooManyArgs), "eight arguments do not fit");
    t.expect(lrpc::call(me, ADD, &[1, 2]), Err(LrpcError::Kernel(oxok_libos::Error::Invalid)), "a call to oneself");
    t.expect(lrpc::call(0xffff_ffff, ADD, &[]), Err(LrpcError::NoServer), "no such server");

    // The same entry serves the program's own protocol and signals.
    let m: Msg = [5, 0, 0, 0, 0, 0, 0, 0, 0];
    t.expect(pct::call(sid, &m).map(|(_, r)| r[0]), Ok(15), "pct::serve still answers untagged messages");
    t.expect(signal::kill(sid, SIGUSR1), Ok(()), "a signal to the server");
    t.expect(lrpc::call(sid, WHO, &[]).map(|r| r[2]), Ok(1), "its handler ran");

    // Round trips.
    let rounds = 1000u64;
    let start = rdtsc();
    let good = (0..rounds).filter(|&i| lrpc::call(sid, ADD, &[i, i]) == Ok(res(2 * i))).count() as u64;
    let per = (rdtsc() - start) / rounds;
    t.expect(good, rounds, "1000 calls answered correctly");
    println!("lrpc: round trip {per} cycles");

    // The server dies in the middle of a call: an error, not a hang.
    t.expect(lrpc::call(sid, DIE, &[7]), Err(LrpcError::ServerDied), "the server died during the call");
    t.expect(exec::wait(server), Ok(ExitStatus::Exited(7)), "it ended with the procedure's exit code");
    t.expect(lrpc::call(sid, ADD, &[1, 1]), Err(LrpcError::NoServer), "afterwards: no such server");
    t.finish()
}

fn res(x: u64) -> Results {
    let mut r = [0; lrpc::RESULTS];
    r[0] = x;
    r
}
