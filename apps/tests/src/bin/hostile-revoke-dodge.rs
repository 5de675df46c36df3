//! hostile-revoke-dodge: revocation cannot be dodged. A target environment
//! that never runs (so never enters the kernel) owns 4 frames that it maps
//! and that an accomplice (this program) maps too. Revoking 4 frames with a
//! 1 ms deadline must take all four — enforced from the timer, every
//! mapping in every environment removed, the accomplice's included. (Once,
//! a shared frame was never taken and a target that never entered the
//! kernel kept its frames forever.)
#![no_std]
#![no_main]

use oxok_libos::abi::ANY_FRAME;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const THEIRS: u64 = 0x1000_0000_0000;
const MINE: u64 = 0x1100_0000_0000;
const N: u64 = 4;

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-revoke-dodge");
    let Ok([target, tid]) = sys::env_create() else {
        println!("hostile-revoke-dodge: FAIL env_create");
        return 1;
    };
    let mut slots = [0u64; N as usize];
    let mut pfns = [0u64; N as usize];
    for i in 0..N {
        let Ok([slot, pfn]) = sys::frame_alloc_for(target, ANY_FRAME) else {
            println!("hostile-revoke-dodge: FAIL frame_alloc_for");
            return 1;
        };
        slots[i as usize] = slot;
        pfns[i as usize] = pfn;
        let rw = pte::WRITABLE | pte::NO_EXECUTE;
        c.expect(sys::page_map(target, slot, THEIRS + i * PAGE_SIZE, rw), Ok([]), "the target maps it");
        c.expect(sys::page_map(0, slot, MINE + i * PAGE_SIZE, rw), Ok([]), "the accomplice maps it too");
        mem::write(MINE + i * PAGE_SIZE, 0x5eed + i);
    }
    let before = exposed::env_entry(tid).map_or(0, |r| r.frames);
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    c.expect(sys::frame_revoke(target, N, hz / 1000), Ok([]), "revoke 4 frames, 1 ms deadline");
    let until = exposed::rdtsc() + 30 * hz;
    while exposed::env_entry(tid).is_some_and(|r| r.revoke_pending > 0) && exposed::rdtsc() < until {
        let _ = sys::yield_cpu(0);
    }
    let row = exposed::env_entry(tid);
    println!("hostile-revoke-dodge: target {tid} never ran; repossessed {:?} of {N}", row.map(|r| r.repossessed));
    c.expect(row.map(|r| r.revoke_pending), Some(0), "nothing pending after the deadline");
    c.expect(row.map(|r| u64::from(r.repossessed)), Some(N), "all four taken from a target that never ran");
    c.expect(row.map(|r| r.frames), Some(before.saturating_sub(N as u32)), "the target owns them no more");
    for i in 0..N {
        c.expect(exposed::pte(MINE + i * PAGE_SIZE), None, "the accomplice's mapping is gone");
        c.check(
            exposed::frame_entry(pfns[i as usize]).is_some_and(|e| u64::from(e.owner) != tid),
            "the frame is not the target's",
        );
        c.check(sys::page_map(0, slots[i as usize], MINE + i * PAGE_SIZE, 0).is_err(), "no capability maps it again");
    }
    c.expect(sys::env_destroy(target), Ok([]), "destroy the target");
    c.finish()
}
