//! hostile-env-destroy: environment A (this program) creates child B, maps
//! a frame it owns into B (shared) and grants B a capability for it, then
//! destroys B. A keeps reading and writing the frame, the frame table shows
//! A as owner with one mapping, and every stale capability for B — also
//! after B's table row is reused by a new environment — is refused. A
//! runnable child destroyed before it ran never runs. Many create/destroy
//! rounds leave nothing behind. At the end A frees everything; the kernel's
//! leak check must report no leaked frame.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{ENV_TABLE_ROWS, PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, EnvState, Error, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const VA_A: u64 = 0x1500_0000_0000;
const VA_B: u64 = 0x2500_0000_0000;
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
const ALL: u64 = rights::READ | rights::WRITE | rights::GRANT;
/// Kernel entries to wait for the kernel to finish tearing an environment
/// down (it does so in bounded steps).
const REAP_WAIT: usize = 10_000;

/// Makes kernel entries until `done` holds (or gives up); returns it.
fn settle(done: impl Fn() -> bool) -> bool {
    for _ in 0..REAP_WAIT {
        if done() {
            return true;
        }
        let _ = sys::null();
    }
    done()
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-env-destroy");
    let me = oxok_libos::process::env_id();
    let owned_at_start = exposed::owned_frames();
    let Ok([frame, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-env-destroy: FAIL frame_alloc");
        return 1;
    };
    t.expect(sys::page_map(0, frame, VA_A, RW), Ok([]), "map in A");
    if !exposed::writable(VA_A) {
        return t.finish();
    }
    mem::write(VA_A, 0xaaaa_5555);

    let Ok([b, bid]) = sys::env_create() else {
        println!("hostile-env-destroy: FAIL env_create");
        return 1;
    };
    t.expect(sys::page_map(b, frame, VA_B, RW), Ok([]), "map A's frame into B");
    t.expect(exposed::frame_entry(pfn).map(|e| e.maps), Some(2), "two mappings");
    t.check(sys::cap_grant(frame, b, ALL).is_ok(), "grant B a capability for the frame");
    let Ok([stale]) = sys::cap_grant(b, 0, ALL) else {
        t.check(false, "copy of B's capability");
        return t.finish();
    };
    t.expect(sys::frame_free(frame), Err(Error::Busy), "free while B maps it");

    t.expect(sys::env_destroy(b), Ok([]), "destroy B");
    t.check(settle(|| exposed::frame_entry(pfn).is_some_and(|e| e.maps == 1)), "frame table: maps back to 1");
    let e = exposed::frame_entry(pfn);
    t.expect(e.map(|e| u64::from(e.owner)), Some(me), "A still owns the frame");
    t.expect(mem::read(VA_A), 0xaaaa_5555, "A reads the frame");
    mem::write(VA_A, 0x5555_aaaa);
    t.expect(mem::read(VA_A), 0x5555_aaaa, "A writes the frame");
    t.expect(exposed::env_entry(bid).map(|r| r.id), None, "B's table row is gone");
    t.expect(sys::env_destroy(b), Err(Error::BadCap), "destroy through the emptied slot");
    stale_refused(&mut t, stale, frame, "");

    // Reuse B's row: the stale capability must not name the newcomer.
    let (made, n) = fill_to_row(bid);
    match occupant(bid) {
        Some(id) => {
            t.check(id != bid, "B's row holds a new id");
            stale_refused(&mut t, stale, frame, " (row reused)");
        }
        None => t.check(false, "B's row occupied again"),
    }
    for &s in &made[..n] {
        t.expect(sys::env_destroy(s), Ok([]), "destroy a filler");
    }
    let _ = sys::cap_drop(stale);

    never_runs(&mut t);
    rounds(&mut t, frame);

    t.expect(sys::page_unmap(0, VA_A), Ok([]), "unmap in A");
    t.expect(sys::frame_free(frame), Ok([]), "free the frame");
    t.expect(exposed::owned_frames(), owned_at_start, "A owns what it owned at the start");
    t.finish()
}

/// Every use of a capability for a destroyed environment fails.
fn stale_refused(t: &mut Checks, stale: u64, frame: u64, tag: &str) {
    let mut st = EnvState::default();
    let buf = &raw mut st as u64;
    let results = [
        ("env_destroy", sys::env_destroy(stale).err()),
        ("env_run", sys::env_run(stale).err()),
        ("page_map", sys::page_map(stale, frame, VA_B, 0).err()),
        ("page_unmap", sys::page_unmap(stale, VA_B).err()),
        ("env_get_state", sys::env_get_state(stale, buf).err()),
        ("env_set_state", sys::env_set_state(stale, buf).err()),
        ("upcall_register", sys::upcall_register(stale, 0, 0).err()),
        ("frame_revoke", sys::frame_revoke(stale, 1, 1).err()),
        ("cap_grant into it", sys::cap_grant(frame, stale, rights::READ).map(|_| ()).err()),
    ];
    for (what, got) in results {
        let ok = matches!(got, Some(Error::BadEnv | Error::BadCap));
        if !ok {
            println!("hostile-env-destroy: FAIL stale env capability{tag}: {what} gave {got:?}");
        }
        t.check(ok, "stale env capability refused");
    }
}

/// The id of the environment now in `id`'s table row, if any.
fn occupant(id: u64) -> Option<u64> {
    let row = exposed::env_row(id as usize & (ENV_TABLE_ROWS - 1))?;
    (row.id != 0).then_some(u64::from(row.id))
}

/// Creates environments (they take the lowest free rows) until `id`'s row
/// is occupied again — by one of them, or by another program's. Returns
/// the slots of those it created (at most 16).
fn fill_to_row(id: u64) -> ([u64; 16], usize) {
    let mut made = [0u64; 16];
    let mut n = 0;
    while occupant(id).is_none() && n < made.len() {
        match sys::env_create() {
            Ok([slot, _]) => {
                made[n] = slot;
                n += 1;
            }
            Err(_) => break,
        }
    }
    (made, n)
}

/// A child made runnable and destroyed before its turn must never run (it
/// has no code: running it would end in a logged page fault).
fn never_runs(t: &mut Checks) {
    let Ok([c, cid]) = sys::env_create() else {
        t.check(false, "create C");
        return;
    };
    t.expect(sys::env_run(c), Ok([]), "C runnable");
    // With preemption C may get the CPU before the destroy: it then faults
    // at address 0 (it has no code), dies alone, and waits as a zombie.
    match sys::env_destroy(c) {
        Ok([]) => {}
        Err(Error::BadEnv) => {
            let reaped = sys::env_reap(c);
            t.check(reaped.is_ok_and(|[s]| s & oxok_libos::abi::EXIT_KILLED != 0), "C ran first, died alone, reaped");
        }
        other => t.check(
            false,
            match other {
                Ok(_) | Err(_) => "destroy runnable C",
            },
        ),
    }
    t.expect(exposed::env_entry(cid).map(|r| r.id), None, "C gone from the table");
}

/// Many create / map / destroy rounds: nothing accumulates.
fn rounds(t: &mut Checks, frame: u64) {
    let slots_before = used_slots();
    for i in 0..100u64 {
        let Ok([e, _]) = sys::env_create() else {
            t.check(false, "create in a round");
            return;
        };
        let va = VA_B + (i % 8) * PAGE_SIZE * 512 * 512;
        let mapped = sys::page_map(e, frame, va, RW).is_ok();
        let destroyed = sys::env_destroy(e).is_ok();
        if !(mapped && destroyed) {
            t.check(false, "map and destroy in a round");
            return;
        }
    }
    t.expect(used_slots(), slots_before, "no capability slots left behind");
    t.check(settle(|| exposed::frame_entry(frame_pfn(frame)).is_some_and(|e| e.maps == 1)), "mappings gone");
    // The kernel memory of the 100 environments (page tables, application
    // areas) is checked by the kernel's own leak check when the run ends.
}

fn frame_pfn(slot: u64) -> u64 {
    sys::cap_info(slot).map_or(u64::MAX, |[_, pfn, _]| pfn)
}

fn used_slots() -> usize {
    (0..64).filter(|&s| sys::cap_info(s).is_ok()).count()
}
