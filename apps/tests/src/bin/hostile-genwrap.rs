//! hostile-genwrap LIMIT: names are never reused while a capability could
//! match them. Booted with `gen_limit=LIMIT frame_gen_limit=LIMIT` (test
//! aids narrowing the 22-bit environment and 32-bit frame generations).
//!
//! * Environments: it keeps a copy of the capability for a child, destroys
//!   the child and cycles that table row until it is retired (a victim
//!   creating environments at the same time may take some of its
//!   generations). No id in the row may carry a generation above the limit,
//!   the row must end up retired (empty, every lower row taken, and still
//!   not handed out), and the stale capability must match none of the
//!   environments created afterwards. (Once, after 4,194,302 cycles, a stale capability
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

/// The generation part of an environment id (above the row's 10 bits).
fn generation(id: u64) -> u64 {
    id / ENV_TABLE_ROWS as u64
}

/// What the test saw of row `row`: ids handed to it, and ids of others'
/// environments found in the row.
struct Seen {
    row: u64,
    limit: u64,
    max_gen: u64,
    ours: u64,
    over_limit: u32,
    not_growing: u32,
}

impl Seen {
    /// An id the test was handed: in the row, its generation must be new.
    fn ours(&mut self, id: u64) {
        if row(id) != self.row {
            return;
        }
        self.ours += 1;
        if generation(id) <= self.max_gen {
            self.not_growing += 1;
        }
        self.other(id);
    }

    /// An id found in the row (0: empty).
    fn other(&mut self, id: u64) {
        if id == 0 || row(id) != self.row {
            return;
        }
        if generation(id) > self.limit {
            self.over_limit += 1;
        }
        self.max_gen = self.max_gen.max(generation(id));
    }
}

/// Creates an environment, holding (in `held`) any it gets below row `r`,
/// until one at row `r` or above: when it returns, every row below `r` was
/// taken at the moment of the last creation. `None` if refused.
fn create_from_row(r: u64, held: &mut Vec<u64>, c: &mut Checks) -> Option<(u64, u64)> {
    for _ in 0..64 {
        let Ok([s, id]) = sys::env_create() else {
            c.check(false, "env_create while cycling");
            return None;
        };
        if row(id) >= r {
            return Some((s, id));
        }
        held.push(s);
    }
    c.check(false, "fewer than 64 rows below the row freed at once");
    None
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
    // The victim creates environments at the same time, so it may take some
    // of the row's generations, or hold a lower row for a while. What must
    // hold whatever it does: no id in the row ever has a generation above
    // the limit, ours only grow, and at the end the row is retired: empty,
    // with every lower row taken, and still never handed out.
    let mut seen = Seen { row: r, limit, max_gen: generation(first), ours: 0, over_limit: 0, not_growing: 0 };
    let mut held = Vec::new();
    let (mut cycles, mut skipped_empty) = (0u64, 0u32);
    while cycles < 16 * limit && skipped_empty < 3 {
        cycles += 1;
        let Some((s, id)) = create_from_row(r, &mut held, &mut c) else { break };
        seen.ours(id);
        c.check(id != first, "no new environment gets the old id");
        let occupant = exposed::env_row(r as usize).map_or(0, |e| u64::from(e.id));
        seen.other(occupant);
        if row(id) == r {
            skipped_empty = 0;
        } else if occupant == 0 {
            // Row r was empty, every row below it taken, and the kernel
            // handed out a higher one: retired (or, briefly, tearing down).
            skipped_empty += 1;
            let _ = oxok_libos::time::sleep_ms(5);
        }
        let _ = sys::env_destroy(s);
        seen.other(exposed::env_row(r as usize).map_or(0, |e| u64::from(e.id)));
    }
    for s in held.drain(..) {
        let _ = sys::env_destroy(s);
    }
    println!(
        "hostile-genwrap: row {r} reused {} times in {cycles} cycles, highest generation seen {} of {limit}",
        seen.ours, seen.max_gen
    );
    c.check(seen.ours > 0 && seen.ours < limit, "the row was reused, fewer times than the limit");
    c.check(seen.over_limit == 0, "no environment in the row had a generation above the limit");
    c.check(seen.not_growing == 0, "the row's generations only grew");
    c.check(skipped_empty >= 3, "the row was retired at the generation limit: empty and never handed out again");
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
