//! hostile-revoke-bomb [N]: maps one of its own frames N times (default
//! 1,200,000, with `page_batch`), lists it in its repossession vector and
//! asks itself for one frame back with a deadline of 0. The abort protocol
//! must take that frame — removing all N mappings in bounded steps, with
//! no allocation the program could blow up — while the kernel keeps
//! running and other programs keep their CPU (once the kernel ran out of
//! heap here, and walked owned frames × mappings with interrupts off).
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, MapEntry};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const BASE: u64 = 0x2000_0000_0000;
const CHUNK: usize = 1024;

fn main(args: Args) -> i32 {
    let mut c = Checks::new("hostile-revoke-bomb");
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_200_000);
    let me = exposed::self_id();
    let Ok([slot, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-revoke-bomb: FAIL frame_alloc");
        return 1;
    };
    let mut recs: Vec<MapEntry> = Vec::with_capacity(CHUNK);
    let mut done = 0u64;
    while done < n {
        recs.clear();
        let k = (n - done).min(CHUNK as u64);
        for i in 0..k {
            recs.push(MapEntry { va: BASE + (done + i) * PAGE_SIZE, frame_slot: slot, flags: pte::NO_EXECUTE, src: 0 });
        }
        if let Err(e) = sys::page_batch(0, recs.as_ptr() as u64, k) {
            println!("hostile-revoke-bomb: page_batch after {done}: {e:?}");
            break;
        }
        done += k;
    }
    c.expect(done, n, "every mapping made");
    println!("hostile-revoke-bomb: frame {pfn:#x} mapped {done} times; revoking it from myself");
    c.expect(exposed::set_repossess(&[pfn]), Ok(()), "list it for repossession");
    c.expect(sys::frame_revoke(0, 1, 0), Ok([]), "frame_revoke(self, 1, 0)");
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    let until = exposed::rdtsc() + 120 * hz;
    while exposed::env_entry(me).is_some_and(|r| r.revoke_pending > 0) && exposed::rdtsc() < until {
        let _ = sys::null();
    }
    let row = exposed::env_entry(me);
    c.expect(row.map(|r| r.revoke_pending), Some(0), "nothing pending");
    c.expect(row.map(|r| r.repossessed), Some(1), "one frame repossessed");
    c.expect(exposed::repossessed(0), Some((pfn, BASE)), "recorded in the application area");
    for i in [0, 1, n / 2, n - 1] {
        c.expect(exposed::pte(BASE + i * PAGE_SIZE), None, "mapping removed");
    }
    c.check(exposed::frame_entry(pfn).is_some_and(|e| u64::from(e.owner) != me), "the frame is no longer mine");
    c.expect(sys::cap_info(slot).map(|_| ()), Err(oxok_libos::abi::Error::BadCap), "its capability is gone");
    println!("hostile-revoke-bomb: all {done} mappings removed; the kernel is still here");
    c.finish()
}
