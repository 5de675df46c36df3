//! revoke MODE: visible revocation and the abort protocol, from the side
//! of the environment asked to give memory back. The program allocates and
//! maps 8 frames (plus one it keeps unmapped), lists some in its
//! repossession vector, and asks itself (slot 0) for 3 frames back within
//! 100 ms, then spins on `null` calls past the deadline.
//!
//! * `ignore`: no revocation upcall registered. The kernel takes 3 frames:
//!   the two listed ones first (a listed frame another environment also
//!   maps is skipped), then the unmapped one; it records them in the
//!   application area, unmaps them and drops their capabilities. The
//!   program keeps running.
//! * `ignore-upcall`: the libOS runtime is installed but has no revocation
//!   handler: the upcall comes and is ignored; same result.
//! * `comply`: the revocation handler frees 3 unlisted frames itself:
//!   nothing is repossessed.
//! * `partial`: the handler frees one frame: the kernel takes the other two
//!   (the listed ones).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error, ExceptionFrame};
use oxok_libos::exposed::{self, rdtsc};
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{Args, println, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const BASE: u64 = 0x1600_0000_0000;
const MAPPED: usize = 8;
const ASKED: u64 = 3;
/// The frames the repossession vector lists (indices into the mapped ones).
const LISTED: [usize; 2] = [5, 6];
/// The frame also mapped into a child (listed first, must be skipped).
const SHARED: usize = 7;
/// The frames the handler gives back in `comply` mode.
const GIVEN: [usize; 3] = [0, 1, 2];
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;

/// Capability slots of the mapped frames, for the handler.
static SLOTS: [AtomicU64; MAPPED] = [const { AtomicU64::new(0) }; MAPPED];
/// How many frames the handler gives back.
static GIVE: AtomicU64 = AtomicU64::new(0);
/// What the handler saw: calls, frames asked, deadline.
static UPCALLS: AtomicU64 = AtomicU64::new(0);
static ASKED_SEEN: AtomicU64 = AtomicU64::new(0);
static DEADLINE_SEEN: AtomicU64 = AtomicU64::new(0);
static GIVEN_OK: AtomicU64 = AtomicU64::new(0);

fn page(i: usize) -> u64 {
    BASE + i as u64 * PAGE_SIZE
}

fn main(args: Args) -> i32 {
    let mode = args.get(1).unwrap_or("ignore");
    let mut t = Checks::new("revoke");
    let give = match mode {
        "ignore" => 0,
        "ignore-upcall" | "comply" | "partial" => {
            t.expect(upcall::install(), Ok(()), "install the runtime");
            match mode {
                "comply" => 3,
                "partial" => 1,
                _ => 0,
            }
        }
        other => {
            println!("revoke: FAIL unknown mode {other}");
            return 2;
        }
    };
    if give > 0 {
        GIVE.store(give, Ordering::SeqCst);
        upcall::set_handler(Kind::Revocation, give_back);
    }
    let me = exposed::self_id();
    let Some(clock) = exposed::clock() else {
        println!("revoke: FAIL no clock page");
        return 1;
    };

    // 8 mapped frames with a marker each, and one unmapped spare.
    let mut pfns = [0u64; MAPPED];
    for (i, p) in pfns.iter_mut().enumerate() {
        let Ok([slot, pfn]) = sys::frame_alloc(ANY_FRAME) else {
            println!("revoke: FAIL frame_alloc");
            return 1;
        };
        SLOTS[i].store(slot, Ordering::SeqCst);
        *p = pfn;
        t.expect(sys::page_map(0, slot, page(i), RW), Ok([]), "map");
        mem::write(page(i), 0x7e57_0000 + i as u64);
    }
    let Ok([_spare_slot, spare]) = sys::frame_alloc(ANY_FRAME) else {
        println!("revoke: FAIL frame_alloc (spare)");
        return 1;
    };
    // The shared frame: also mapped by a child, so never takeable.
    let Ok([child, _]) = sys::env_create() else {
        println!("revoke: FAIL env_create");
        return 1;
    };
    let shared_slot = SLOTS[SHARED].load(Ordering::SeqCst);
    t.expect(sys::page_map(child, shared_slot, BASE, RW), Ok([]), "share a frame with a child");
    let listed = [pfns[SHARED], pfns[LISTED[0]], pfns[LISTED[1]]];
    t.expect(exposed::set_repossess(&listed), Ok(()), "publish the repossession vector");
    let owned_before = exposed::owned_frames().unwrap_or(0);

    // Ask ourselves for 3 frames within 100 ms (long enough that being
    // preempted before the handler finishes does not make a `comply` run
    // miss the deadline when other programs run too).
    let window = (clock.tsc_hz / 10).max(1_000_000);
    let asked_at = rdtsc();
    t.expect(sys::frame_revoke(0, ASKED, window), Ok([]), "frame_revoke on self");
    let returned_at = rdtsc();
    let row = exposed::env_entry(me);
    let pending = row.map(|r| r.revoke_pending);
    let want_pending = ASKED - GIVEN_OK.load(Ordering::SeqCst);
    // If the scheduler kept this program off the CPU past the deadline, the
    // abort protocol may already have run when it gets the CPU back.
    if rdtsc() < asked_at + window {
        t.expect(pending, Some(want_pending as u32), "revocation pending in the table");
    }
    // Spin past the deadline (bounded: 200 windows).
    let limit = asked_at + 200 * window;
    while rdtsc() < asked_at + window
        || (exposed::env_entry(me).is_some_and(|r| r.revoke_pending > 0) && rdtsc() < limit)
    {
        let _ = sys::null();
    }
    for _ in 0..10 {
        let _ = sys::null();
    }
    let given = GIVEN_OK.load(Ordering::SeqCst);
    let taken = ASKED - given;
    let count = exposed::repossessed_count();
    println!("revoke: mode {mode}: gave back {given}, repossessed {count}");

    let row = exposed::env_entry(me);
    t.expect(row.map(|r| r.revoke_pending), Some(0), "nothing pending after the deadline");
    t.expect(row.map(|r| u64::from(r.repossessed)), Some(taken), "table: frames repossessed");
    t.expect(row.map(|r| u64::from(r.frames)), Some(u64::from(owned_before) - ASKED), "table: frames owned");
    t.expect(count, taken, "application area: frames recorded");
    let want_upcalls = u64::from(mode != "ignore");
    t.expect(upcall::delivered(), want_upcalls, "upcalls delivered (none unless registered)");
    if give > 0 {
        t.expect(UPCALLS.load(Ordering::SeqCst), 1, "handler ran once");
        t.expect(ASKED_SEEN.load(Ordering::SeqCst), ASKED, "handler told how many");
        let d = DEADLINE_SEEN.load(Ordering::SeqCst);
        t.check(d >= asked_at + window && d <= returned_at + window, "handler told the deadline");
    }

    // Which frames went, in order: listed ones (minus the shared one) first,
    // then the unmapped spare.
    let all = [(pfns[LISTED[0]], page(LISTED[0])), (pfns[LISTED[1]], page(LISTED[1])), (spare, 0)];
    let want = &all[..taken as usize];
    let got: [Option<(u64, u64)>; 3] = core::array::from_fn(exposed::repossessed);
    for (i, w) in want.iter().enumerate() {
        t.expect(got[i], Some(*w), "repossessed record");
    }
    for &(pfn, va) in want.iter() {
        if va != 0 {
            t.expect(exposed::pte(va), None, "repossessed page unmapped");
        }
        t.check(
            exposed::frame_entry(pfn).is_some_and(|e| u64::from(e.owner) != me),
            "repossessed frame no longer ours",
        );
    }
    for &i in &LISTED {
        if taken > 0 {
            let slot = SLOTS[i].load(Ordering::SeqCst);
            t.expect(sys::cap_info(slot), Err(Error::BadCap), "capability of a repossessed frame gone");
            t.expect(sys::page_map(0, slot, page(i), 0), Err(Error::BadCap), "cannot map a repossessed frame");
        }
    }
    // Everything not given back or taken is intact.
    let gone = |i: usize| (taken > 0 && LISTED.contains(&i)) || GIVEN[..given as usize].contains(&i);
    let intact = (0..MAPPED)
        .filter(|&i| !gone(i))
        .all(|i| exposed::readable(page(i)) && mem::read(page(i)) == 0x7e57_0000 + i as u64);
    t.check(intact, "other pages mapped and intact");
    t.check(exposed::frame_entry(pfns[SHARED]).is_some_and(|e| u64::from(e.owner) == me), "shared frame not taken");

    t.expect(sys::env_destroy(child), Ok([]), "destroy the child");
    t.finish()
}

/// The revocation handler: gives back `GIVE` unlisted frames.
fn give_back(f: &mut ExceptionFrame) -> Outcome {
    UPCALLS.fetch_add(1, Ordering::SeqCst);
    ASKED_SEEN.store(f.error, Ordering::SeqCst);
    DEADLINE_SEEN.store(f.addr, Ordering::SeqCst);
    let n = GIVE.load(Ordering::SeqCst) as usize;
    for &i in GIVEN.iter().take(n) {
        let slot = SLOTS[i].load(Ordering::SeqCst);
        if sys::page_unmap(0, page(i)).is_ok() && sys::frame_free(slot).is_ok() {
            GIVEN_OK.fetch_add(1, Ordering::SeqCst);
        }
    }
    Outcome::Resume
}
