//! scribble-victim: the bystander of `hostile-scribble` — a boot program,
//! so nothing relates it to the scribbler (both have parent 0).
//!
//! It accepts signals (a `SIGUSR1` handler) and LRPC (procedure 0 adds),
//! keeps private data with a known checksum, and plays shared-memory
//! ping-pong sessions with children of its own (`shm-pingpong child`, 300
//! rounds each) for as long as the scribbler lives (at least one session).
//! Then it checks: every session went through with an exact counter, its
//! private data and its row in the kernel's table are unchanged, no signal
//! reached it (and it refused some), and it prints its verdict.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::lrpc::{self, Args as LArgs, Results};
use oxok_libos::shm::{self, Region};
use oxok_libos::signal::{self, SIGUSR1};
use oxok_libos::{Args, println, proc};
use oxok_testrng::Rng;
use oxok_tests::Checks;
use oxok_tests::cpu::wait_peer;

oxok_libos::main!(main);

const ROUNDS: u64 = 300;
const MAX_SESSIONS: u32 = 200;

static USR1: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicU64 = AtomicU64::new(0);

fn add(_caller: u64, a: &LArgs) -> Result<Results, u64> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let mut r = [0; lrpc::RESULTS];
    r[0] = a[0].wrapping_add(a[1]);
    Ok(r)
}

fn checksum(data: &[u64]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x).wrapping_mul(0x1000_0000_01b3))
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("scribble-victim");
    let me = proc::pid();
    let counted = signal::set_handler(SIGUSR1, |_| {
        USR1.fetch_add(1, Ordering::Relaxed);
    });
    t.check(counted.is_ok(), "handler installed");
    t.check(lrpc::register(0, add).is_ok(), "procedure registered");
    let mut rng = Rng::new(0x5c41_bb1e);
    let data: Vec<u64> = (0..4096).map(|_| rng.next()).collect();
    let sum = checksum(&data);
    let row = proc::process(me);
    // The kernel's table keeps 15 bytes of a name.
    let scribbler = wait_peer(&"hostile-scribble"[..15], 10_000);
    t.check(scribbler.is_some(), "the scribbler is there");

    let mut sessions = 0;
    while sessions < MAX_SESSIONS {
        if !session(&mut t) {
            break;
        }
        sessions += 1;
        if !scribbler.is_some_and(proc::alive) {
            break;
        }
    }
    // Outlive the scribbler (bounded: 60 s of wall time).
    let end = oxok_libos::exposed::rdtsc() + 60_000 * oxok_tests::cpu::cycles_per_ms();
    while scribbler.is_some_and(proc::alive) && oxok_libos::exposed::rdtsc() < end {
        let _ = oxok_libos::sys::yield_cpu(0);
    }
    t.check(scribbler.is_none_or(|s| !proc::alive(s)), "the scribbler ended first");
    t.check(checksum(&data) == sum, "private data unchanged");
    t.expect(proc::process(me), row, "own row in the kernel's table unchanged");
    t.expect(USR1.load(Ordering::Relaxed), 0, "no signal got through");
    let (delivered, refused) = signal::stats();
    t.expect(delivered, 0, "nothing delivered");
    t.check(refused > 0, "the scribbler's signals were refused");
    println!(
        "scribble-victim: {sessions} ping-pong sessions, {refused} signals refused, {} garbage calls answered",
        CALLS.load(Ordering::Relaxed)
    );
    t.finish()
}

/// One ping-pong session with a new child; false if it could not start.
fn session(t: &mut Checks) -> bool {
    let Ok(game) = Region::create(1) else {
        t.check(false, "region");
        return false;
    };
    let (g, n) = (format!("{:#x}", game.va()), format!("{ROUNDS:x}"));
    let child = match exec::spawn("shm-pingpong", &["shm-pingpong", "child", &g, "0", &n]) {
        Ok(c) => c,
        Err(e) => {
            println!("scribble-victim: FAIL spawn: {e}");
            t.check(false, "spawn");
            return false;
        }
    };
    t.check(game.share(child.slot, true).is_ok(), "shared with its own child");
    let turns = shm::ping_pong(&game.words()[0], 0, child.id, ROUNDS);
    t.expect(turns, Ok(ROUNDS), "its side of the session");
    t.expect(game.words()[0].load(Ordering::Acquire), 2 * ROUNDS, "the counter is exact");
    t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "its child played through");
    true
}
