//! shm-pingpong: two processes take turns incrementing a counter in a
//! shared page, with a directed yield to the partner after each turn
//! (`libos/src/shm.rs`; Aegis §6's shared frames plus directed yield).
//!
//! The parent makes two regions — the game page (shared writable) and a
//! page shared read-only — starts `shm-pingpong child GAME RO ROUNDS`,
//! passes both with `MapEntry::share` records, and plays side 0. The child
//! checks the read-only page is readable, holds what the parent wrote, and
//! cannot be made writable (the kernel never widens a share), then plays
//! side 1. Exit codes of the child: 0 played through, 3 the counter was
//! corrupted, 4 the partner left, 5 a check failed, 2 usage. (The victim of
//! `hostile-scribble` runs this child too.)
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use alloc::format;
use core::sync::atomic::Ordering;
use oxok_libos::abi::layout::pte;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::shm::{self, PingPongError, Region};
use oxok_libos::time::rdtsc;
use oxok_libos::{Args, println, proc, sys};
use oxok_tests::Checks;

extern crate alloc;

oxok_libos::main!(main);

const MAGIC: u64 = 0x5eed_0f5e_a5a5;
const ROUNDS: u64 = 2000;

fn main(args: Args) -> i32 {
    let num = |i: usize| args.get(i).and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok());
    match args.get(1) {
        Some("child") => match (num(2), num(3), num(4)) {
            (Some(game), Some(ro), Some(rounds)) => child(game, ro, rounds),
            _ => 2,
        },
        _ => parent(),
    }
}

fn child(game: u64, ro: u64, rounds: u64) -> i32 {
    let Some(partner) = proc::parent(proc::pid()) else { return 2 };
    let Ok(game) = Region::attach(game, 1, 100_000) else { return 5 };
    if ro != 0 {
        let Ok(page) = Region::attach(ro, 1, 100_000) else { return 5 };
        let magic = page.words()[0].load(Ordering::Acquire);
        let widened = sys::page_protect(0, page.va(), pte::WRITABLE | pte::NO_EXECUTE, 0).is_ok();
        if page.writable() || magic != MAGIC || widened {
            println!("shm-pingpong child: read-only page wrong (magic {magic:#x}, widened {widened})");
            return 5;
        }
    }
    match shm::ping_pong(&game.words()[0], 1, partner, rounds) {
        Ok(_) => 0,
        Err(PingPongError::Corrupt(v)) => {
            println!("shm-pingpong child: counter corrupted (value {v:#x}), stopped");
            3
        }
        Err(PingPongError::PartnerGone) => 4,
    }
}

fn parent() -> i32 {
    let mut t = Checks::new("shm-pingpong");
    let (Ok(game), Ok(ro)) = (Region::create(1), Region::create(1)) else {
        println!("shm-pingpong: FAIL regions");
        return 1;
    };
    t.check(game.writable() && ro.writable(), "the creator maps its regions writable");
    ro.words()[0].store(MAGIC, Ordering::Release);
    let (g, r, n) = (format!("{:#x}", game.va()), format!("{:#x}", ro.va()), format!("{ROUNDS:x}"));
    let child = match exec::spawn("shm-pingpong", &["shm-pingpong", "child", &g, &r, &n]) {
        Ok(c) => c,
        Err(e) => {
            println!("shm-pingpong: FAIL spawn: {e}");
            return 1;
        }
    };
    t.check(game.share(child.slot, true).is_ok(), "game page shared writable");
    t.check(ro.share(child.slot, false).is_ok(), "second page shared read-only");
    let start = rdtsc();
    let turns = shm::ping_pong(&game.words()[0], 0, child.id, ROUNDS);
    let cycles = rdtsc() - start;
    t.expect(turns, Ok(ROUNDS), "every turn of side 0 taken");
    t.expect(game.words()[0].load(Ordering::Acquire), 2 * ROUNDS, "the counter went through");
    t.expect(exec::wait(child), Ok(ExitStatus::Exited(0)), "the child played through");
    println!("shm-pingpong: {ROUNDS} rounds, {} cycles per round trip", cycles / ROUNDS);
    t.finish()
}
