//! hostile-guards: execute permission and reaping are rights of their own,
//! and the calls keep to their documented errors at the edges.
//!
//! * Execute: with an environment capability that lacks
//!   [`rights::EXECUTE`], no executable mapping can be made in that
//!   environment — not by `page_map`, not by clearing `NO_EXECUTE` with
//!   `page_protect`, not by a `page_batch` map or share record — while
//!   non-executable ones still can; unknown flag bits are `Invalid`.
//! * Reaping needs write on the environment's capability: a read-only
//!   capability is refused (`Denied`) while the child runs and after it
//!   ended, the full one gets `Busy` while it runs and the status after.
//! * The console: a boot program holds a console capability and passes it
//!   on; a child that drops it can neither write nor read the console.
//! * Edges (issue 10): zero-length console ranges at unmapped, unaligned
//!   pointers are accepted; `env_set_state` refuses `rsp == USER_TOP`; a
//!   transfer to a created, never-run environment is `Busy`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, USER_TOP, pte};
use oxok_libos::abi::{ANY_FRAME, ENV_ZOMBIE, EnvState, Error, MapEntry, SHARE, cap_kind, rights, upcall};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const VA: u64 = 0x1300_0000_0000;
const NX: u64 = pte::NO_EXECUTE;
const RW_NX: u64 = pte::WRITABLE | pte::NO_EXECUTE;
/// Every right but execute.
const NO_EXEC: u64 = rights::READ | rights::WRITE | rights::GRANT | rights::CALL;
const STOP: u64 = 0x5709;
const WAIT: u32 = 200_000;
static STOPPING: AtomicBool = AtomicBool::new(false);

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("child") => child(),
        Some("mute") => mute(),
        _ => parent(),
    }
}

fn child() -> i32 {
    let serve: pct::Handler = |_, _, msg: &mut Msg| {
        if msg[0] == STOP {
            STOPPING.store(true, Ordering::Release);
        }
    };
    if pct::serve(serve).is_err() {
        return 1;
    }
    while !STOPPING.load(Ordering::Acquire) {
        let _ = sys::yield_cpu(0);
    }
    7
}

fn parent() -> i32 {
    let mut t = Checks::new("hostile-guards");
    execute(&mut t);
    reap(&mut t);
    edges(&mut t);
    console(&mut t);
    t.finish()
}

/// A child that gives up its console capability can neither write nor
/// read the console (it reports by its exit status: 0 if every check held).
fn mute() -> i32 {
    let Some(slot) = (0..64).find(|&s| sys::cap_info(s).is_ok_and(|[k, _, _]| k == cap_kind::CONSOLE)) else {
        return 10;
    };
    let mut failures = 0;
    let mut buf = [0u8; 8];
    failures += i32::from(sys::console_write(b"mute?\n".as_ptr() as u64, 6).is_err());
    failures += i32::from(sys::cap_drop(slot).is_err());
    failures += i32::from(sys::console_write(b"leak!\n".as_ptr() as u64, 6) != Err(Error::Denied));
    failures += i32::from(sys::console_read(buf.as_mut_ptr() as u64, 8) != Err(Error::Denied));
    failures += i32::from(sys::console_write(b"".as_ptr() as u64, 0) != Ok([0]));
    failures
}

/// The console capability: passed on to children; without it, no output.
fn console(t: &mut Checks) {
    let held = (0..64)
        .any(|s| sys::cap_info(s).is_ok_and(|[k, n, r]| k == cap_kind::CONSOLE && n == 0 && r & rights::WRITE != 0));
    t.check(held, "a boot program holds a console capability");
    match exec::spawn("hostile-guards", &["hostile-guards", "mute"]) {
        Ok(c) => t.expect(
            exec::wait(c),
            Ok(ExitStatus::Exited(0)),
            "without its console capability a child cannot write or read",
        ),
        Err(_) => t.check(false, "spawn the mute child"),
    }
}

/// Executable mappings need execute on the environment capability.
fn execute(t: &mut Checks) {
    let Ok([frame, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame_alloc");
        return;
    };
    let Ok([env, _]) = sys::env_create() else {
        t.check(false, "env_create");
        return;
    };
    let Ok([no_exec]) = sys::cap_derive(env, NO_EXEC) else {
        t.check(false, "derive an environment capability without execute");
        return;
    };
    t.expect(sys::page_map(no_exec, frame, VA, 0), Err(Error::Denied), "executable map without execute refused");
    t.expect(sys::page_map(no_exec, frame, VA, pte::WRITABLE), Err(Error::Denied), "writable executable map refused");
    t.expect(exposed::pte(VA), None, "(nothing mapped here)");
    t.expect(sys::page_map(no_exec, frame, VA, RW_NX), Ok([]), "non-executable map allowed");
    t.expect(sys::page_protect(no_exec, VA, pte::WRITABLE, frame), Err(Error::Denied), "clearing NO_EXECUTE refused");
    t.expect(sys::page_protect(no_exec, VA, NX, frame), Ok([]), "dropping write keeps NO_EXECUTE: allowed");
    t.expect(sys::page_protect(env, VA, 0, frame), Ok([]), "the full capability clears NO_EXECUTE");
    t.expect(sys::page_unmap(no_exec, VA), Ok([]), "unmapping needs no execute");
    let unknown = 1 << 8;
    t.expect(sys::page_map(env, frame, VA, NX | unknown), Err(Error::Invalid), "unknown flag bits are Invalid");
    t.expect(sys::page_protect(0, VA, NX | unknown, frame), Err(Error::Invalid), "unknown protect bits are Invalid");
    // Batches: a map record and a share record without NO_EXECUTE stop
    // there, with precise progress; one with it goes through.
    t.expect(sys::page_map(0, frame, VA, RW_NX), Ok([]), "map own page");
    let recs = [
        MapEntry::map(VA + PAGE_SIZE, frame, NX),
        MapEntry::map(VA + 2 * PAGE_SIZE, frame, 0),
        MapEntry { va: VA + 3 * PAGE_SIZE, frame_slot: SHARE, flags: 0, src: VA },
    ];
    let r = sys::page_batch(no_exec, recs.as_ptr() as u64, recs.len() as u64);
    t.expect(r, Err(Error::Denied), "a batch's executable map record refused");
    let share = [MapEntry { va: VA + 3 * PAGE_SIZE, frame_slot: SHARE, flags: 0, src: VA }];
    t.expect(sys::page_batch(no_exec, share.as_ptr() as u64, 1), Err(Error::Denied), "an executable share refused");
    let share_nx = [MapEntry { va: VA + 3 * PAGE_SIZE, frame_slot: SHARE, flags: NX, src: VA }];
    t.expect(sys::page_batch(no_exec, share_nx.as_ptr() as u64, 1), Ok([]), "a non-executable share allowed");
    // Its own address space: a self capability without execute.
    if let Ok([self_no_exec]) = sys::cap_derive(0, NO_EXEC) {
        t.expect(
            sys::page_map(self_no_exec, frame, VA + PAGE_SIZE, 0),
            Err(Error::Denied),
            "own space: executable map refused",
        );
        t.expect(
            sys::page_protect(self_no_exec, VA, pte::WRITABLE, frame),
            Err(Error::Denied),
            "own space: clearing NO_EXECUTE refused",
        );
        t.expect(sys::cap_drop(self_no_exec), Ok([]), "drop it");
    } else {
        t.check(false, "derive a self capability without execute");
    }
    t.expect(
        sys::cap_derive(no_exec, NO_EXEC | rights::EXECUTE).map(|_| ()),
        Err(Error::Denied),
        "execute cannot be derived back",
    );
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap own page");
    t.expect(sys::page_unmap(env, VA + PAGE_SIZE), Ok([]), "unmap the batch's first record");
    t.expect(sys::page_unmap(env, VA + 3 * PAGE_SIZE), Ok([]), "unmap the share");
    t.expect(sys::page_unmap(env, VA + 2 * PAGE_SIZE), Err(Error::NotFound), "the refused record mapped nothing");
    t.expect(sys::env_destroy(env), Ok([]), "destroy the environment");
    t.expect(sys::frame_free(frame), Ok([]), "free the frame");
}

/// Reaping needs write on the environment.
fn reap(t: &mut Checks) {
    let child = match exec::spawn("hostile-guards", &["hostile-guards", "child"]) {
        Ok(c) => c,
        Err(e) => {
            println!("hostile-guards: FAIL spawn child: {e}");
            t.check(false, "spawn the child");
            return;
        }
    };
    let Ok([ro]) = sys::cap_derive(child.slot, rights::READ) else {
        t.check(false, "derive a read-only capability for the child");
        return;
    };
    t.expect(sys::env_reap(ro), Err(Error::Denied), "reap of a live child without write: Denied");
    t.expect(sys::env_reap(child.slot), Err(Error::Busy), "reap of a live child: Busy");
    let Ok([frame, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame_alloc");
        return;
    };
    t.expect(sys::env_reap(frame), Err(Error::BadCap), "reap with a frame capability: BadCap");
    t.expect(sys::frame_free(frame), Ok([]), "free the frame");
    let stop: Msg = [STOP, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut sent = false;
    for _ in 0..WAIT {
        if pct::call(child.id, &stop).is_ok() {
            sent = true;
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.check(sent, "tell the child to end");
    let ended = (0..WAIT).any(|_| {
        let zombie = exposed::env_entry(child.id).is_some_and(|e| e.status == ENV_ZOMBIE);
        if !zombie {
            let _ = sys::yield_cpu(0);
        }
        zombie
    });
    t.check(ended, "the child ended");
    t.expect(sys::env_reap(ro), Err(Error::Denied), "reap of an ended child without write: Denied");
    t.check(exposed::env_entry(child.id).is_some(), "the refused reap left the row");
    let status = sys::env_reap(child.slot).map(|[s]| ExitStatus::from_raw(s));
    t.expect(status, Ok(ExitStatus::Exited(7)), "reap with write: the exit status");
    t.expect(sys::env_reap(child.slot), Err(Error::BadCap), "the slot emptied");
    t.expect(sys::env_reap(ro), Err(Error::Denied), "a read-only capability never reaps");
    t.expect(exposed::env_entry(child.id), None, "the row is gone");
    t.expect(sys::cap_drop(ro), Ok([]), "drop the read-only capability");
}

/// The documented edges.
fn edges(t: &mut Checks) {
    let unmapped = 0x1400_0000_0123;
    t.check(!exposed::readable(unmapped & !(PAGE_SIZE - 1)), "(the probe address is unmapped)");
    t.expect(sys::console_write(unmapped, 0), Ok([0]), "console_write of 0 bytes at an unmapped unaligned pointer");
    t.expect(sys::console_write(unmapped & !(PAGE_SIZE - 1), 0), Ok([0]), "console_write of 0 bytes, aligned");
    t.expect(sys::console_read(unmapped, 0), Ok([0]), "console_read of 0 bytes at an unmapped unaligned pointer");
    t.expect(sys::console_write(USER_TOP, 0), Err(Error::BadAddress), "console_write at USER_TOP");
    t.expect(sys::console_read(USER_TOP, 0), Err(Error::BadAddress), "console_read at USER_TOP");
    let Ok([env, id]) = sys::env_create() else {
        t.check(false, "env_create");
        return;
    };
    let mut state = EnvState::default();
    t.expect(sys::env_get_state(env, &raw mut state as u64), Ok([]), "get a fresh state");
    state.regs.rip = 0x40_0000;
    state.regs.rsp = USER_TOP;
    t.expect(sys::env_set_state(env, &raw const state as u64), Err(Error::Invalid), "rsp == USER_TOP refused");
    state.regs.rsp = USER_TOP - 16;
    t.expect(sys::env_set_state(env, &raw const state as u64), Ok([]), "rsp below USER_TOP accepted");
    t.expect(sys::upcall_register(env, upcall::PCT, 0x40_0000), Ok([]), "give it a PCT entry");
    let msg: Msg = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    t.expect(pct::call(id, &msg).map(|_| ()), Err(Error::Busy), "pct_call to a never-run environment: Busy");
    t.expect(pct::send(id, &msg), Err(Error::Busy), "pct_send to a never-run environment: Busy");
    t.expect(sys::env_destroy(env), Ok([]), "destroy it");
}
