//! slots-hostile MODE: CPU slots against hostile environments.
//!
//! * `owner` + `lazy` (started together): the owner takes every slot and
//!   stops asking for spare time; the lazy one is a spinner with no slots.
//!   While the owner spins for 1 s the lazy one gets no tick at all
//!   (exposed run statistics); it runs only once the owner has exited. The
//!   owner also tries the slot calls' refusals.
//! * `ignore` + `fair+ignore`: `ignore` registers a slot-end handler that
//!   never yields. It is preempted and charged at each slot end (debt,
//!   strikes, visible to `fair` in the run statistics) and destroyed after
//!   `max_strikes` overruns, while `fair` keeps its own turns whole.
//! * `critical` + `fair+critical`: `critical` keeps the robust-critical-
//!   section flag set. Its slot ends are deferred by at most the critical
//!   grace, charged as debt, and it is still preempted every turn: it
//!   cannot hold the CPU; `fair` keeps its turns.
//! * `quota`: limits its own account to 3 slots (`env_limit_slots`) and
//!   cannot take a 4th, neither by `slot_alloc` nor through a child in a
//!   nested account with a bigger limit; a slot given to the child counts
//!   against the same budget until the child dies; `cap_info` of a slot
//!   capability reports the slot's index.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::SLOT_VECTOR_SLOTS;
use oxok_libos::abi::slot_placement::{ANY, AT, NEAR, SPREAD};
use oxok_libos::abi::{ACCOUNT_SLOTS, Error, cap_kind, rights};
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu};

oxok_libos::main!(main);

const NAME: &str = "slots-hostile";

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("owner") => owner(),
        Some("lazy") => lazy(),
        Some("ignore") => ignore(),
        Some("critical") => critical(),
        Some("fair") => fair(args.get(2).unwrap_or("ignore")),
        Some("quota") => quota(),
        _ => {
            println!("{NAME}: FAIL unknown mode");
            1
        }
    }
}

/// Stops asking for spare time and allocates `n` adjacent slots.
fn own(t: &mut Checks, n: u64) -> Option<u64> {
    // Slots first: once it stops asking for spare time, an environment
    // without slots never runs again.
    let mut first = None;
    for _ in 0..n {
        let r = match first {
            None => sys::slot_alloc(SPREAD, 0),
            Some(i) => sys::slot_alloc(NEAR, i),
        };
        t.check(r.is_ok(), "allocate a slot");
        if let Ok([_, i]) = r {
            first.get_or_insert(i);
        }
    }
    t.check(sys::slot_spare(0, 0).is_ok(), "stop asking for spare time");
    first
}

fn owner() -> i32 {
    let mut t = Checks::new("slots-hostile owner");
    let me = exposed::self_id();
    let mut caps = [0u64; SLOT_VECTOR_SLOTS];
    for c in caps.iter_mut() {
        match sys::slot_alloc(ANY, 0) {
            Ok([cap, _]) => *c = cap,
            Err(_) => t.check(false, "allocate every slot"),
        }
    }
    t.check(sys::slot_spare(0, 0).is_ok(), "stop asking for spare time");
    t.check(sys::slot_alloc(ANY, 0) == Err(Error::NoMemory), "no slot left");
    t.check(sys::slot_alloc(AT, 3) == Err(Error::Busy), "AT an owned slot: Busy");
    t.check(sys::slot_alloc(AT, 99) == Err(Error::Invalid), "AT out of range: Invalid");
    t.check(sys::slot_alloc(NEAR, u64::MAX) == Err(Error::Invalid), "NEAR out of range: Invalid");
    t.check(sys::slot_alloc(9, 0) == Err(Error::Invalid), "unknown placement: Invalid");
    t.check(sys::slot_free(0) == Err(Error::BadCap), "an environment capability is not a slot capability");
    t.check(sys::slot_free(999) == Err(Error::BadCap), "no such capability slot");
    t.check(sys::slot_give(caps[0], 999) == Err(Error::BadCap), "give to no environment");
    // Giving (even to oneself) moves the slot: every older capability for it
    // goes stale, a copy made beforehand included.
    let copy = sys::cap_grant(caps[0], 0, rights::READ | rights::WRITE | rights::GRANT).map(|[c]| c);
    t.check(copy.is_ok(), "copy a slot capability");
    match sys::slot_give(caps[0], 0) {
        Ok([new]) => {
            let copy = copy.unwrap_or(999);
            t.check(sys::slot_free(copy) == Err(Error::BadCap), "the old capability went stale");
            t.check(sys::cap_drop(copy).is_ok(), "drop the stale copy");
            t.check(sys::slot_free(new).is_ok(), "the fresh capability works");
            t.check(sys::slot_alloc(AT, 0).is_ok(), "take it back");
        }
        Err(_) => t.check(false, "give a slot to oneself"),
    }
    // Give a slot to another environment: the vector shows the new owner,
    // and the slot is freed when that environment is destroyed.
    match sys::env_create() {
        Ok([child, child_id]) => {
            let given = sys::slot_give(caps[1], child);
            let owner_now = exposed::slot_row(1).map(|r| u64::from(r.owner));
            t.check(given.is_ok() && owner_now == Some(child_id), "a slot given to another environment is its");
            t.check(sys::env_destroy(child).is_ok(), "destroy the receiver");
            let freed = exposed::slot_row(1).map(|r| r.owner);
            t.check(freed == Some(0), "the receiver's slot is free once it is destroyed");
            t.check(sys::slot_alloc(AT, 1).is_ok(), "take slot 1 back");
        }
        Err(_) => t.check(false, "create a receiver"),
    }
    let all_mine = (0..SLOT_VECTOR_SLOTS).filter_map(exposed::slot_row).all(|r| u64::from(r.owner) == me);
    t.check(all_mine, "exposed vector: every slot is mine");
    let Some(lazy) = cpu::wait_peer(NAME, 1000) else {
        t.check(false, "lazy spinner exists");
        return t.finish();
    };
    let l0 = cpu::ticks(lazy).unwrap_or(u64::MAX);
    let m0 = cpu::ticks(me).unwrap_or(0);
    cpu::spin_ms(1000);
    let l1 = cpu::ticks(lazy).unwrap_or(u64::MAX);
    let m1 = cpu::ticks(me).unwrap_or(0);
    println!("slots-hostile owner: ran {} ticks in 1 s; the lazy spinner ran {}", m1 - m0, l1.wrapping_sub(l0));
    t.check(l0 != u64::MAX && l1 == l0, "the spinner without slots got no tick");
    // Ticks follow the host's time, and a loaded host drops some (220 of
    // 250 a second idle, 120 beside four busy loops): a tenth of the
    // nominal rate shows the clock ran while the spinner got nothing.
    let hz = exposed::clock().map_or(250, |c| c.tick_hz);
    t.check(m1 - m0 >= hz / 10, "the owner ran");
    t.finish()
}

fn lazy() -> i32 {
    // Spins until the owner is gone (it asks for spare time: the default).
    let end = exposed::rdtsc() + 20_000 * cpu::cycles_per_ms();
    while cpu::peer(NAME).is_some() && exposed::rdtsc() < end {}
    let gone = cpu::peer(NAME).is_none();
    println!("slots-hostile lazy: {}", if gone { "ran after the owner exited" } else { "FAIL owner still there" });
    0
}

/// A slot-end handler that never yields.
fn never_yield(_: &mut oxok_libos::abi::ExceptionFrame) -> Outcome {
    loop {
        core::hint::spin_loop();
    }
}

fn ignore() -> i32 {
    let mut t = Checks::new("slots-hostile ignore");
    own(&mut t, 2);
    // Report first: once the handler is registered, the next slot end
    // traps this environment in it for good.
    t.finish();
    println!("slots-hostile ignore: ignoring slot ends");
    upcall::set_handler(Kind::SlotEnd, never_yield);
    if upcall::install_slot_handlers().is_err() {
        println!("slots-hostile ignore: FAIL register slot handlers");
        return 1;
    }
    loop {
        core::hint::spin_loop();
    }
}

fn critical() -> i32 {
    let mut t = Checks::new("slots-hostile critical");
    own(&mut t, 2);
    let me = exposed::self_id();
    t.check(exposed::set_critical(true).is_ok(), "set the critical-section flag");
    let per_ms = cpu::cycles_per_ms();
    let (start, mut last, mut gaps) = (exposed::rdtsc(), exposed::rdtsc(), 0u64);
    while last < start + 1500 * per_ms {
        let now = exposed::rdtsc();
        if now - last > 2 * per_ms {
            gaps += 1;
        }
        last = now;
    }
    let _ = exposed::set_critical(false);
    let s = exposed::run_stats(me).unwrap_or_default();
    let turns = s.slots + s.spare_slots + s.donated;
    let longest =
        exposed::slot_header().map_or(7, |h| u64::from(h.ticks_per_slot + h.critical_grace_ticks + h.grace_ticks));
    println!(
        "slots-hostile critical: preempted {gaps} times in 1.5 s; {} ticks in {turns} turns, {} deferrals, {} forfeits",
        s.ticks, s.deferrals, s.forfeits
    );
    t.check(gaps >= 3, "preempted despite the flag");
    t.check(s.deferrals >= 1, "slot ends were deferred");
    t.check(s.ticks <= (turns + 1) * longest, "no turn longer than slot + critical grace + grace");
    t.finish()
}

fn fair(peer_mode: &str) -> i32 {
    let mut t = Checks::new("slots-hostile fair");
    own(&mut t, 2);
    let me = exposed::self_id();
    let Some(peer) = cpu::wait_peer(NAME, 2000) else {
        t.check(false, "peer exists");
        return t.finish();
    };
    let s0 = exposed::run_stats(me).unwrap_or_default();
    let (mut debt, mut strikes, mut overruns, mut deferrals) = (0, 0, 0, 0);
    let per_ms = cpu::cycles_per_ms();
    let end = exposed::rdtsc() + 1500 * per_ms;
    let mut gone = false;
    while exposed::rdtsc() < end {
        match exposed::run_stats(peer) {
            Some(r) => {
                debt = debt.max(r.debt);
                strikes = strikes.max(r.strikes);
                overruns = overruns.max(r.overruns);
                deferrals = deferrals.max(r.deferrals);
            }
            None => gone = true,
        }
    }
    let s1 = exposed::run_stats(me).unwrap_or_default();
    let (ticks, slots) = (s1.ticks - s0.ticks, s1.slots - s0.slots);
    println!(
        "slots-hostile fair: {ticks} ticks in {slots} owned slots; peer ({peer_mode}): max debt {debt}, \
         max strikes {strikes}, overruns {overruns}, deferrals {deferrals}, gone {gone}"
    );
    t.check(slots >= 4, "own slots kept running");
    // A slot's ticks as the kernel was booted with (4 at 1000 Hz, 1 at 250).
    let per = exposed::slot_header().map_or(4, |h| u64::from(h.ticks_per_slot));
    t.check(ticks + 2 >= per * slots.saturating_sub(1) && ticks <= per * slots + 8, "own turns whole: a slot's ticks");
    t.check(debt > 0, "the peer was charged");
    if peer_mode == "ignore" {
        t.check(overruns >= 1 && strikes >= 1, "the peer's overruns counted");
        t.check(gone, "the peer was destroyed");
    } else {
        t.check(deferrals >= 1, "the peer's slot ends were deferred");
    }
    t.finish()
}

/// A program limited to 3 slots cannot own more, alone or with a child.
fn quota() -> i32 {
    let mut t = Checks::new("slots-hostile quota");
    let me = exposed::self_id();
    let used = || sys::account_info(0, ACCOUNT_SLOTS).map(|[u, l, _]| (u, l));
    let mine = || (0..SLOT_VECTOR_SLOTS).filter_map(exposed::slot_row).filter(|r| u64::from(r.owner) == me).count();
    t.expect(sys::env_limit_slots(0, 3), Ok([]), "limit itself to 3 slots");
    t.expect(used(), Ok((0, 3)), "account_info: 0 of 3 slots");
    let mut caps = [0u64; 3];
    for c in caps.iter_mut() {
        match sys::slot_alloc(ANY, 0) {
            Ok([cap, index]) => {
                *c = cap;
                t.expect(
                    sys::cap_info(cap),
                    Ok([cap_kind::SLOT, index, rights::READ | rights::WRITE | rights::GRANT]),
                    "cap_info reports the slot index",
                );
            }
            Err(_) => t.check(false, "allocate a slot within the quota"),
        }
    }
    t.expect(sys::slot_alloc(ANY, 0).map(|_| ()), Err(Error::NoMemory), "a 4th slot is refused");
    t.expect(sys::slot_alloc(AT, 31).map(|_| ()), Err(Error::NoMemory), "a 4th slot AT a free index is refused");
    t.expect(used(), Ok((3, 3)), "account_info: 3 of 3 slots");
    t.expect(mine(), 3, "exposed vector: it owns 3 slots");
    t.expect(sys::env_limit_slots(0, 1), Err(Error::NoMemory), "a limit below what it owns is refused");
    // A child in a nested account that asks for 10 is still bound by 3.
    match sys::env_create() {
        Ok([child, child_id]) => {
            t.expect(sys::env_limit_slots(child, 10), Ok([]), "the child's own account asks for 10");
            t.check(sys::slot_give(caps[0], child).is_ok(), "give the child a slot");
            t.check(exposed::slot_row(0).is_some() && mine() == 2, "the child owns it now");
            t.expect(
                sys::account_info(child, ACCOUNT_SLOTS).map(|[u, _, _]| u),
                Ok(1),
                "charged to the child's account",
            );
            t.expect(used(), Ok((3, 3)), "and still to the parent's: 3 of 3");
            t.expect(sys::slot_alloc(ANY, 0).map(|_| ()), Err(Error::NoMemory), "the tree cannot take a 4th");
            t.expect(
                sys::slot_give(caps[1], child).map(|_| ()).is_ok(),
                true,
                "moving a slot inside the budget is fine",
            );
            t.expect(used(), Ok((3, 3)), "a move changes nothing in total");
            let owned_by_child =
                (0..SLOT_VECTOR_SLOTS).filter_map(exposed::slot_row).filter(|r| u64::from(r.owner) == child_id).count();
            t.expect(owned_by_child, 2, "the child owns 2");
            // A give the receiver's account cannot take: refused, nothing moved.
            match sys::env_create() {
                Ok([none, _]) => {
                    t.expect(sys::env_limit_slots(none, 0), Ok([]), "a second child limited to no slot");
                    let refused = sys::slot_give(caps[2], none).map(|_| ());
                    t.expect(refused, Err(Error::NoMemory), "a give its account cannot take is refused");
                    t.expect(used(), Ok((3, 3)), "and moves no charge");
                    t.expect(mine(), 1, "the slot stays the giver's");
                    t.expect(sys::env_destroy(none), Ok([]), "destroy the second child");
                }
                Err(_) => t.check(false, "create a second child"),
            }
            t.expect(sys::env_destroy(child), Ok([]), "destroy the child");
            t.expect(used(), Ok((1, 3)), "its slots are given back to the budget");
        }
        Err(_) => t.check(false, "create a child"),
    }
    match sys::slot_alloc(ANY, 0) {
        Ok([cap, _]) => t.expect(sys::slot_free(cap), Ok([]), "room again after the child died"),
        Err(_) => t.check(false, "room again after the child died"),
    }
    t.expect(sys::slot_free(caps[2]), Ok([]), "free the last slot");
    t.expect(used(), Ok((0, 3)), "account_info: 0 of 3 slots");
    t.expect(mine(), 0, "it owns no slot");
    t.finish()
}
