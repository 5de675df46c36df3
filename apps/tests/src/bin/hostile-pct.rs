//! hostile-pct: nobody reaches an environment by protected control transfer
//! or directed yield without a call capability for it.
//!
//! The parent spawns a victim that serves transfers and counts them by
//! caller, then an attacker (the victim's sibling: no capability for it).
//! The attacker tries `pct_call`, `pct_send` and `yield_cpu` at the victim
//! with no capability, with every slot of its own list (its own
//! capability, its call capability for its parent), with absurd slots, and
//! with a read-only capability for the victim the parent grants it: every
//! attempt is refused (`BadCap`, `Denied`), and deriving call from the
//! read-only capability is refused too. The parent, which holds a call
//! capability, then asks the victim: it served none of the attacker's
//! transfers and still answers; it stops when told, and nothing leaked.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_libos::abi::{CAP_SLOTS, Error, NO_CAP_SLOT, call_target, cap_kind, rights};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const STATS: u64 = 0x57a7;
const STOP: u64 = 0x5709;
const PING: u64 = 0x9196;
static SERVED: AtomicU64 = AtomicU64::new(0);
static FROM_WATCHED: AtomicU64 = AtomicU64::new(0);
static WATCHED: AtomicU64 = AtomicU64::new(0);
static STOPPING: AtomicBool = AtomicBool::new(false);
/// Bounded waits (yields).
const WAIT: u32 = 200_000;

fn main(args: Args) -> i32 {
    let num = |i: usize| args.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    match args.get(1) {
        Some("victim") => victim(),
        Some("attacker") => attacker(num(2)),
        _ => parent(),
    }
}

// ---- victim ----

fn serve(caller: u64, _sync: bool, msg: &mut Msg) {
    match msg[0] {
        STATS => {
            WATCHED.store(msg[1], Ordering::Relaxed);
            msg[1] = SERVED.load(Ordering::Relaxed);
            msg[2] = FROM_WATCHED.load(Ordering::Relaxed);
        }
        STOP => STOPPING.store(true, Ordering::Release),
        _ => {
            SERVED.fetch_add(1, Ordering::Relaxed);
            if caller == WATCHED.load(Ordering::Relaxed) {
                FROM_WATCHED.fetch_add(1, Ordering::Relaxed);
            }
            msg[0] = msg[0].wrapping_add(1);
        }
    }
}

fn victim() -> i32 {
    if pct::serve(serve).is_err() {
        println!("hostile-pct victim: FAIL serve");
        return 1;
    }
    while !STOPPING.load(Ordering::Acquire) {
        let _ = sys::yield_cpu(0);
    }
    println!(
        "hostile-pct victim: served {} transfers, {} from the attacker",
        SERVED.load(Ordering::Relaxed),
        FROM_WATCHED.load(Ordering::Relaxed)
    );
    0
}

// ---- attacker ----

fn refused<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::BadCap | Error::Denied))
}

fn attacker(victim: u64) -> i32 {
    let mut t = Checks::new("hostile-pct attacker");
    let msg: Msg = [PING, 1, 2, 3, 4, 5, 6, 7, 8];
    // No capability at all: the libOS has none to name.
    t.expect(oxok_libos::callcap::slot_for(victim), None, "no call capability for the victim");
    t.expect(pct::call(victim, &msg).map(|_| ()), Err(Error::BadCap), "pct_call without a capability refused");
    t.expect(pct::send(victim, &msg), Err(Error::BadCap), "pct_send without a capability refused");
    t.expect(
        sys::yield_cpu(victim).map(|_| ()),
        Err(Error::BadCap),
        "directed yield naming its own capability refused",
    );
    t.expect(oxok_libos::callcap::yield_to(victim), Err(Error::BadCap), "directed yield without a capability refused");
    // Every slot of its own list, and absurd ones.
    let mut all = true;
    for slot in (0..CAP_SLOTS as u64).chain([CAP_SLOTS as u64, NO_CAP_SLOT, 0x8000_0000]) {
        let word = call_target(victim, slot);
        all &= refused(pct::call_word(word, &msg));
        all &= refused(pct::send_word(word, &msg));
        all &= refused(sys::yield_cpu(word));
    }
    t.check(all, "every slot of its list refused for call, send and yield");

    // A read-only capability for the victim, from the parent: still no call.
    let find =
        || (1..CAP_SLOTS as u64).find(|&s| sys::cap_info(s).is_ok_and(|[k, n, _]| k == cap_kind::ENV && n == victim));
    let mut ro = None;
    for _ in 0..WAIT {
        ro = find();
        if ro.is_some() {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    match ro {
        Some(ro) => {
            t.expect(sys::cap_info(ro).map(|[_, _, r]| r), Ok(rights::READ), "the parent's grant is read-only");
            let word = call_target(victim, ro);
            t.expect(
                pct::call_word(word, &msg).map(|_| ()),
                Err(Error::Denied),
                "pct_call with a read-only capability refused",
            );
            t.expect(pct::send_word(word, &msg), Err(Error::Denied), "pct_send with a read-only capability refused");
            t.expect(sys::yield_cpu(word).map(|_| ()), Err(Error::Denied), "yield with a read-only capability refused");
            t.expect(
                sys::cap_derive(ro, rights::READ | rights::CALL).map(|_| ()),
                Err(Error::Denied),
                "deriving call from read refused",
            );
        }
        None => t.check(false, "the read-only capability arrived"),
    }
    t.finish()
}

// ---- parent ----

fn parent() -> i32 {
    let mut t = Checks::new("hostile-pct");
    let victim = match exec::spawn("hostile-pct", &["hostile-pct", "victim"]) {
        Ok(c) => c,
        Err(e) => {
            println!("hostile-pct: FAIL spawn victim: {e}");
            return 1;
        }
    };
    // The victim's creator can call it: wait until it serves.
    let msg: Msg = [PING, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut up = false;
    for _ in 0..WAIT {
        match pct::call(victim.id, &msg) {
            Ok((_, r)) if r[0] == PING + 1 => {
                up = true;
                break;
            }
            _ => {
                let _ = sys::yield_cpu(0);
            }
        }
    }
    t.check(up, "the victim serves its creator");
    let arg = alloc::format!("{}", victim.id);
    let attacker = match exec::spawn("hostile-pct", &["hostile-pct", "attacker", &arg]) {
        Ok(c) => c,
        Err(e) => {
            println!("hostile-pct: FAIL spawn attacker: {e}");
            let _ = sys::env_destroy(victim.slot);
            return 1;
        }
    };
    let watch: Msg = [STATS, attacker.id, 0, 0, 0, 0, 0, 0, 0];
    t.check(pct::call(victim.id, &watch).is_ok(), "the victim watches for the attacker");
    t.check(
        sys::cap_grant(victim.slot, attacker.slot, rights::READ).is_ok(),
        "grant the attacker a read-only capability",
    );
    t.expect(exec::wait(attacker), Ok(ExitStatus::Exited(0)), "the attacker was refused everything");
    match pct::call(victim.id, &watch) {
        Ok((_, r)) => {
            t.expect(r[2], 0, "the victim served none of the attacker's transfers");
            t.check(r[1] >= 1, "the victim served its creator");
        }
        Err(e) => t.check(false, if e == Error::BadEnv { "the victim died" } else { "the victim answers" }),
    }
    t.check(pct::call(victim.id, &msg).is_ok_and(|(_, r)| r[0] == PING + 1), "the victim still answers");
    let stop: Msg = [STOP, 0, 0, 0, 0, 0, 0, 0, 0];
    t.check(pct::send(victim.id, &stop).is_ok(), "stop the victim");
    t.expect(exec::wait(victim), Ok(ExitStatus::Exited(0)), "the victim ended normally");
    t.finish()
}
