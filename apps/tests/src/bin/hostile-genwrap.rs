//! hostile-genwrap LIMIT: names are never reused while a capability could
//! match them. Booted with `gen_limit=LIMIT frame_gen_limit=LIMIT` (test
//! aids narrowing the 22-bit environment and 32-bit frame generations).
//!
//! * Environments: it keeps a copy of the capability for a child, destroys
//!   the child and cycles that table row `2 × LIMIT` times. The row must be
//!   retired when its generation reaches the limit (never handed out
//!   again), and the stale capability must match none of the environments
//!   created afterwards. (Once, after 4,194,302 cycles, a stale capability
//!   read and destroyed an unrelated program's child.)
//! * Frames: it keeps a copy of a frame capability, frees the frame and
//!   allocates and frees that frame by number until refused: the frame
//!   must be retired (`OWNER_RETIRED`) and the stale capability map
//!   nothing.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::frames::OWNER_RETIRED;
use oxok_libos::abi::layout::ENV_TABLE_ROWS;
use oxok_libos::abi::{ACCOUNT_FRAMES, ANY_FRAME, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

fn row(id: u64) -> u64 {
    id & (ENV_TABLE_ROWS as u64 - 1)
}

fn main(args: Args) -> i32 {
    let mut c = Checks::new("hostile-genwrap");
    let limit: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let all = rights::READ | rights::WRITE | rights::GRANT;

    // Environments.
    let Ok([slot, first]) = sys::env_create() else {
        println!("hostile-genwrap: FAIL env_create");
        return 1;
    };
    let stale = sys::cap_grant(slot, 0, all).map(|[s]| s);
    c.check(stale.is_ok(), "keep a copy of the child's capability");
    let stale = stale.unwrap_or(0);
    c.expect(sys::env_destroy(slot), Ok([]), "destroy the child");
    let r = row(first);
    let (mut in_row, mut last_in_row) = (0u64, 0u64);
    for i in 0..2 * limit {
        let Ok([s, id]) = sys::env_create() else {
            c.check(false, "env_create while cycling");
            break;
        };
        if row(id) == r {
            in_row += 1;
            last_in_row = i;
        }
        c.check(id != first, "no new environment gets the old id");
        let _ = sys::env_destroy(s);
    }
    println!("hostile-genwrap: row {r} reused {in_row} times in {} cycles, last at cycle {last_in_row}", 2 * limit);
    c.check(in_row > 0 && in_row < limit, "the row was retired at the generation limit");
    c.check(last_in_row < limit, "and never handed out again");
    let mut kept = Vec::new();
    for _ in 0..8 {
        if let Ok([s, id]) = sys::env_create() {
            c.check(row(id) != r, "a retired row stays retired");
            kept.push(s);
        }
    }
    c.check(sys::account_info(stale, ACCOUNT_FRAMES).is_err(), "the stale capability matches nothing");
    c.check(sys::env_destroy(stale).is_err(), "and destroys nothing");
    for s in kept {
        let _ = sys::env_destroy(s);
    }

    // Frames.
    let Ok([fslot, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-genwrap: FAIL frame_alloc");
        return 1;
    };
    let fstale = sys::cap_grant(fslot, 0, all).map(|[s]| s).unwrap_or(0);
    c.expect(sys::frame_free(fslot), Ok([]), "free the frame");
    let mut cycles = 0u64;
    let refused = loop {
        match sys::frame_alloc(pfn) {
            Ok([s, _]) => {
                cycles += 1;
                let _ = sys::frame_free(s);
            }
            Err(e) => break Some(e),
        }
        if cycles > limit + 2 {
            break None;
        }
    };
    println!("hostile-genwrap: frame {pfn:#x} reallocated {cycles} times, then {refused:?}");
    c.check(refused.is_some() && cycles < limit, "the frame was retired at the generation limit");
    c.check(exposed::frame_entry(pfn).is_some_and(|e| e.owner == OWNER_RETIRED), "the frame table says retired");
    c.check(sys::page_map(0, fstale, 0x3000_0000_0000, 0).is_err(), "the stale frame capability maps nothing");
    c.finish()
}
