//! hostile-revoke-dodge: revocation cannot be dodged. A target environment
//! that never runs (so never enters the kernel) owns 4 frames that it maps
//! and that an accomplice (this program) maps too. Revoking 4 frames with a
//! 1 ms deadline must take all four — enforced from the timer, every
//! mapping in every environment removed, the accomplice's included. Then
//! the same with a forked child asleep on a predicate that never holds:
//! revoking every frame it owns takes them all, shared ones included.
//! (Once, a shared frame was never taken and a target that never entered
//! the kernel kept its frames forever.) The sleeper has bound a packet
//! ring over three of its frames: the ring goes with them (unbound), and
//! they are freed — once they stayed pinned by the ring as uncharged
//! orphans, frames the program no longer paid for.
#![no_std]
#![no_main]

use oxok_libos::abi::frames::OWNER_ORPHAN;
use oxok_libos::abi::layout::{CLOCK, PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, ENV_SLEEPING};
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, exposed, println, process, sys};
use oxok_pred::Builder;
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
    sleeper(&mut c, hz);
    c.finish()
}

/// A forked child asleep for good, sharing 4 frames with this program,
/// loses every frame it owns.
fn sleeper(c: &mut Checks, hz: u64) {
    let child = match vm::fork() {
        Ok(Fork::Child) => {
            // A ring over frames of its own (kept bound: never dropped).
            if let Ok(ring) = oxok_libos::net::Ring::new(2) {
                core::mem::forget(ring);
            }
            // Sleep until the tick count reaches u64::MAX: never.
            let mut b = Builder::new();
            b.load_u64(CLOCK + 16).ge_param(0);
            if let Ok(code) = b.build() {
                let bytes = code.as_bytes();
                let _ = sys::pred_install(0, 0, bytes.as_ptr() as u64, bytes.len() as u64);
                let _ = sys::pred_param(0, 0, 0, u64::MAX);
                let _ = sys::env_sleep(1);
            }
            process::exit(3)
        }
        Ok(Fork::Parent(child)) => child,
        Err(e) => {
            println!("hostile-revoke-dodge: FAIL fork: {e}");
            c.check(false, "fork");
            return;
        }
    };
    let until = exposed::rdtsc() + 10 * hz;
    while exposed::env_entry(child.id).is_none_or(|r| r.status != ENV_SLEEPING) && exposed::rdtsc() < until {
        let _ = sys::yield_cpu(0);
    }
    c.expect(exposed::env_entry(child.id).map(|r| r.status), Some(ENV_SLEEPING), "the child sleeps");
    c.check(ring_of(child.id).is_some(), "the sleeper bound a ring");
    let orphans_before = orphans();
    let rw = pte::WRITABLE | pte::NO_EXECUTE;
    for i in 0..N {
        let Ok([slot, _]) = sys::frame_alloc_for(child.slot, ANY_FRAME) else {
            c.check(false, "frame_alloc_for the sleeper");
            return;
        };
        c.expect(sys::page_map(child.slot, slot, THEIRS + i * PAGE_SIZE, rw), Ok([]), "the sleeper maps it");
        c.expect(sys::page_map(0, slot, MINE + i * PAGE_SIZE, rw), Ok([]), "the accomplice maps it too");
    }
    let owned = exposed::env_entry(child.id).map_or(0, |r| u64::from(r.frames));
    c.expect(sys::frame_revoke(child.slot, owned, hz / 1000), Ok([]), "revoke all its frames, 1 ms deadline");
    let until = exposed::rdtsc() + 30 * hz;
    while exposed::env_entry(child.id).is_some_and(|r| r.revoke_pending > 0) && exposed::rdtsc() < until {
        let _ = sys::yield_cpu(0);
    }
    let row = exposed::env_entry(child.id);
    println!(
        "hostile-revoke-dodge: sleeping child {} repossessed {:?} of {owned}",
        child.id,
        row.map(|r| r.repossessed)
    );
    c.expect(row.map(|r| r.status), Some(ENV_SLEEPING), "it slept through it");
    c.expect(row.map(|r| u64::from(r.repossessed)), Some(owned), "every frame of the sleeper taken");
    c.expect(row.map(|r| r.frames), Some(0), "it owns nothing now");
    c.expect(ring_of(child.id), None, "its ring went with its frames");
    c.expect(orphans(), orphans_before, "no frame left pinned, uncharged, as an orphan");
    for i in 0..N {
        c.expect(exposed::pte(MINE + i * PAGE_SIZE), None, "the accomplice's mapping is gone");
    }
    c.expect(sys::env_destroy(child.slot), Ok([]), "destroy the sleeper");
}

/// The number of a ring environment `id` has bound, if any.
fn ring_of(id: u64) -> Option<u64> {
    (0..oxok_libos::abi::net::RING_ROWS_MAX)
        .find_map(|i| exposed::ring_row_at(i).filter(|r| r.owner == id).map(|r| r.ring))
}

/// Frames the frame table lists as orphans (owned by nobody, still
/// allocated).
fn orphans() -> usize {
    let frames = exposed::sysinfo().map_or(0, |s| s.frame_count);
    (0..frames).filter(|&pfn| exposed::frame_entry(pfn).is_some_and(|e| e.owner == OWNER_ORPHAN)).count()
}
