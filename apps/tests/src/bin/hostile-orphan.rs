//! hostile-orphan: a frame whose owner ended while another environment
//! still maps it (an orphan) stays charged to the account of the owner
//! that ended. A program limited to what it holds plus 64 frames loops
//! "create a child, allocate 24 frames owned by the child, map them here,
//! destroy the child": were orphans uncharged, every round would succeed
//! and it would hold frames beyond its limit. Checks: its account keeps
//! counting the orphans it maps, the third round is refused with
//! `NoMemory`, and once it unmaps them the account is back where it began.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error};
use oxok_libos::{Args, exposed, println, process, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const PER_ROUND: u64 = 24;
const BASE: u64 = 0x3400_0000_0000;

fn frames() -> u64 {
    process::usage(0).map_or(u64::MAX, |u| u.frames)
}

/// Page-table frames my mappings made (charged too, kept until I end).
fn tables() -> u64 {
    exposed::env_entry(exposed::self_id()).map_or(0, |e| u64::from(e.tables))
}

/// One round: a child, `PER_ROUND` frames of its own mapped here, then the
/// child destroyed. The error that stopped it, if any.
fn round(r: u64, mapped: &mut Vec<u64>) -> Result<(), Error> {
    let [child, _] = sys::env_create()?;
    let mut result = Ok(());
    for i in 0..PER_ROUND {
        match sys::frame_alloc_for(child, ANY_FRAME) {
            Ok([slot, _]) => {
                let va = BASE + (r * PER_ROUND + i) * PAGE_SIZE;
                if let Err(e) = sys::page_map(0, slot, va, pte::WRITABLE | pte::NO_EXECUTE) {
                    result = Err(e);
                }
                mapped.push(va);
                let _ = sys::cap_drop(slot);
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    sys::env_destroy(child)?;
    result
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-orphan");
    let mut mapped: Vec<u64> = Vec::with_capacity(256);
    // An account of my own first, so that it counts me alone (not the
    // victim beside me in the boot account).
    t.expect(process::limit(0, u64::MAX, u64::MAX), Ok(()), "an account of my own");
    let (start, tables0) = (frames(), tables());
    t.expect(process::limit(0, start + 64, 4), Ok(()), "limit myself to what I hold plus 64 frames");
    let mut refused = None;
    let mut rounds = 0;
    for r in 0..10 {
        match round(r, &mut mapped) {
            Ok(()) => rounds += 1,
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
        // The child's teardown finishes within a few kernel entries.
        for _ in 0..1000 {
            let _ = sys::yield_cpu(0);
        }
        let now = frames();
        t.check(now >= start + mapped.len() as u64, "the orphans I map stay charged to my account");
    }
    println!("hostile-orphan: {rounds} rounds of {PER_ROUND} orphans, then {refused:?}; {} mapped", mapped.len());
    t.check(refused == Some(Error::NoMemory), "handing frames over by dying is refused once the account is full");
    t.check(mapped.len() as u64 <= 64, "never more orphans mapped than the account allows");
    for &va in &mapped {
        t.check(sys::page_unmap(0, va).is_ok(), "unmap an orphan");
    }
    let tables = tables() - tables0;
    t.expect(
        frames(),
        start + tables,
        "the account is back where it began (plus the page tables made) once the orphans are gone",
    );
    t.finish()
}
