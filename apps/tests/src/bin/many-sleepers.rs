//! many-sleepers: many sleepers, and a waking one still wakes promptly. Forks
//! 96 children that sleep — 24 on a deadline three hours away (keyed in
//! the kernel's deadline heap; destroyed at the end), 72 until this
//! program's row of the environment table changes (watched round robin, a
//! bounded number per tick, more than one tick's budget; they wake when it
//! exits) — then sleeps 20 times on a near deadline and 20 times on a
//! predicate the kernel must watch (the same deadline, or a word of its
//! memory). Checks: each sleep ends, never before its tick; none of the 96
//! is woken meanwhile (their `runs` stay unchanged); and prints how late
//! the wakes were, in ticks (figures, not thresholds: the machine may be
//! loaded).
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::sync::atomic::AtomicU64;
use oxok_libos::abi::layout::{CLOCK, Clock, ENV_TABLE};
use oxok_libos::abi::{ENV_SLEEPING, EnvEntry, env_id};
use oxok_libos::time::ticks;
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, exposed, println, process, sys, time};
use oxok_pred::Builder;
use oxok_tests::Checks;

oxok_libos::main!(main);

const CHILDREN: usize = 96;
/// Children on a deadline (the rest watch this program's row).
const ON_DEADLINE: usize = 24;
const ROUNDS: usize = 20;
/// A word that is never changed: a watcher over it never holds.
static NEVER: AtomicU64 = AtomicU64::new(0);
const SLOT: u64 = 3;

fn ticks_word() -> u64 {
    CLOCK + core::mem::offset_of!(Clock, ticks) as u64
}

/// Sleeps on `code` (slot [`SLOT`]) until `done` says so.
fn sleep_on(code: &[u8], done: impl Fn() -> bool) -> bool {
    if sys::pred_install(0, SLOT, code.as_ptr() as u64, code.len() as u64).is_err() {
        return false;
    }
    while !done() {
        if sys::env_sleep(1 << SLOT).is_err() {
            return false;
        }
    }
    true
}

/// The `id` word of `parent`'s row of the environment table.
fn row_id_word(parent: u64) -> u64 {
    ENV_TABLE + (env_id::row(parent) * size_of::<EnvEntry>() + core::mem::offset_of!(EnvEntry, id)) as u64
}

fn child(i: usize, parent: u64) -> ! {
    if i < ON_DEADLINE {
        // A deadline about 3 hours away.
        let _ = time::sleep_ms(10_000_000);
    } else {
        let word = row_id_word(parent);
        let mut b = Builder::new();
        b.load_u32(word).ne_imm(parent);
        if let Ok(code) = b.build() {
            let gone = || exposed::env_entry(parent).is_none();
            sleep_on(code.as_bytes(), gone);
        }
    }
    process::exit(0)
}

/// Median and maximum.
fn figures(mut v: Vec<u64>) -> (u64, u64) {
    v.sort_unstable();
    (v.get(v.len() / 2).copied().unwrap_or(0), v.last().copied().unwrap_or(0))
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("many-sleepers");
    let me = exposed::self_id();
    let mut kids = Vec::new();
    let mut ids = Vec::new();
    for i in 0..CHILDREN {
        match vm::fork() {
            Ok(Fork::Child) => child(i, me),
            Ok(Fork::Parent(c)) => {
                ids.push(c.id);
                if i < ON_DEADLINE {
                    kids.push(c);
                } else {
                    // Only a few capability slots: the watchers end by
                    // themselves when this program does.
                    let _ = sys::cap_drop(c.slot);
                }
            }
            Err(e) => {
                println!("many-sleepers: FAIL fork {i}: {e:?}");
                break;
            }
        }
    }
    t.check(ids.len() == CHILDREN, "every child forked");
    // Wait (bounded) until every child sleeps.
    let asleep = || ids.iter().filter(|&&id| exposed::env_entry(id).is_some_and(|e| e.status == ENV_SLEEPING)).count();
    for _ in 0..100_000 {
        if asleep() == ids.len() {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.check(asleep() == ids.len(), "every child is asleep");
    let runs = || -> Vec<u64> { ids.iter().map(|&id| exposed::env_entry(id).map_or(0, |e| e.runs)).collect() };
    let runs0 = runs();
    println!("many-sleepers: {} sleepers ({} on deadlines, {} watched)", ids.len(), kids.len(), ids.len() - kids.len());

    // Deadline sleeps beside them.
    let mut late_deadline = Vec::new();
    for _ in 0..ROUNDS {
        let due = ticks() + 3;
        let Ok(code) = Builder::new().load_u64(ticks_word()).ge_imm(due).build() else { break };
        let ok = sleep_on(code.as_bytes(), || ticks() >= due);
        let now = ticks();
        t.check(ok && now >= due, "a deadline sleep ends at its tick, not before");
        late_deadline.push(now.saturating_sub(due));
    }
    // Watched sleeps: the same deadline, or a word of our memory, so the
    // kernel cannot key it by the tick and must watch it.
    let mut late_watched = Vec::new();
    for _ in 0..ROUNDS {
        let due = ticks() + 3;
        let mut b = Builder::new();
        b.load_u64(ticks_word()).ge_imm(due).or().load_u64(NEVER.as_ptr() as u64).eq_imm(1);
        let Ok(code) = b.build() else { break };
        let ok = sleep_on(code.as_bytes(), || ticks() >= due);
        let now = ticks();
        t.check(ok && now >= due, "a watched sleep ends when its predicate holds, not before");
        late_watched.push(now.saturating_sub(due));
    }
    let (dm, dx) = figures(late_deadline);
    let (wm, wx) = figures(late_watched);
    println!("many-sleepers: woken late by (ticks) deadline median {dm} max {dx}; watched median {wm} max {wx}");
    t.check(runs() == runs0, "no sleeper was woken meanwhile");
    for c in &kids {
        t.check(sys::env_destroy(c.slot).is_ok(), "destroy a sleeper");
    }
    t.finish()
}
