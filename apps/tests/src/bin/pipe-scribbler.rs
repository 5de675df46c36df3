//! pipe-scribbler ROUNDS: a hostile pipe partner. It is given an end of a
//! pipe (as any child is, through `OXOK_FD<n>`), finds the pipe's shared
//! frame in its own address space (the libOS's pipe region), and for
//! ROUNDS rounds writes garbage over the header and the ring: random
//! words, counters that claim more bytes than the ring holds, counters
//! that wrap, a wrong magic word, the writers' lock naming live
//! environments, and always holder entries naming every live environment it
//! can see (its parent included) —
//! yielding after each round so its partner runs in between. It leaves the
//! header in the worst of these states and exits 0.
//!
//! What it must not achieve (checked by `pipe hostile`): crash or hang its
//! partner, or touch any pipe but its own. It reports on the console
//! (fd 2) how many pipe frames it could reach.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{ENV_TABLE_ROWS, PAGE_SIZE};
use oxok_libos::fd::pipe::{PIPE_BASE, PIPE_PAGES};
use oxok_libos::{Args, eprintln, exposed, sys};
use oxok_testrng::Rng;
use oxok_tests::mem;

oxok_libos::main!(main);

/// Header words scribbled (the header is 160 bytes; 256 covers it and the
/// ring's start).
const WORDS: u64 = 32;

fn main(args: Args) -> i32 {
    let rounds = args.get(1).and_then(|s| s.parse::<u64>().ok()).unwrap_or(1000);
    let frames: [Option<u64>; 4] = {
        let mut found = [None; 4];
        let mut n = 0;
        for k in 0..PIPE_PAGES {
            let va = PIPE_BASE + k * PAGE_SIZE;
            if exposed::writable(va) && n < found.len() {
                found[n] = Some(va);
                n += 1;
            }
        }
        found
    };
    let count = frames.iter().flatten().count();
    eprintln!("pipe-scribbler: {count} pipe frame(s) within reach");
    let live = live_ids();
    let mut rng = Rng::new(exposed::rdtsc());
    for round in 0..rounds {
        for &va in frames.iter().flatten() {
            scribble(va, round, &live, &mut rng);
        }
        let _ = sys::yield_cpu(0);
    }
    for &va in frames.iter().flatten() {
        worst(va, &live);
    }
    eprintln!("pipe-scribbler: done after {rounds} rounds");
    0
}

/// Up to 8 ids of live environments (the parent among them).
fn live_ids() -> [u64; 8] {
    let mut ids = [0u64; 8];
    for (slot, row) in ids.iter_mut().zip((0..ENV_TABLE_ROWS).filter_map(exposed::env_row).filter(|r| r.id != 0)) {
        *slot = u64::from(row.id);
    }
    ids
}

/// One round of garbage on the frame at `va`. The holder entries only ever
/// name live environments (its own registration, then forged ones), so
/// the partner cannot take the garbage for a closed pipe: only the
/// scribbler's end (the frame table then says no other process maps the
/// frame) ends the pipe.
fn scribble(va: u64, round: u64, live: &[u64; 8], rng: &mut Rng) {
    match round % 4 {
        0 => {
            // Every word but the holder entries (words 4..20).
            for w in (0..4).chain(20..WORDS) {
                mem::write(va + 8 * w, rng.next());
            }
        }
        1 => {
            let r = rng.next();
            mem::write(va + 8, r);
            mem::write(va + 16, r.wrapping_add(4096 + rng.next() % 1000)); // more than the ring holds
            holders(va, live);
        }
        2 => {
            let r = rng.next();
            mem::write(va + 8, r);
            mem::write(va + 16, r.wrapping_add(rng.next() % 3840)); // garbage "data"
            mem::write(va + 24, live[(round as usize / 4) % live.len()]); // the writers' lock
            holders(va, live);
            for w in 32..64 {
                mem::write(va + 8 * w, rng.next());
            }
        }
        _ => {
            mem::write(va, 0);
            mem::write(va + 8, u64::MAX - 3);
            mem::write(va + 16, 5); // wrapped: 9 bytes
            mem::write(va + 24, rng.next() % 4096);
        }
    }
}

/// Every holder entry of both sides names a live environment.
fn holders(va: u64, live: &[u64; 8]) {
    for w in 0..16u64 {
        mem::write(va + 32 + 8 * w, live[w as usize % live.len()]);
    }
}

/// The state left behind: counters claiming a full ring and more, every
/// slot and the lock naming live environments.
fn worst(va: u64, live: &[u64; 8]) {
    mem::write(va + 8, 1000);
    mem::write(va + 16, 1000 + 100_000);
    mem::write(va + 24, live[0]);
    holders(va, live);
}
