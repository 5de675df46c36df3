//! longcall MODE: long kernel calls beside a computing neighbour (started
//! together: `run=longcall+batch&longcall+spin`).
//!
//! * `batch`: 24 rounds of one `page_batch` of 2048 maps of one frame (32
//!   restart points per call), a check through the exposed page tables that
//!   every page is mapped to that frame, one `page_batch` of the 2048
//!   unmaps, and a check that none is left. In the interrupt model each
//!   call comes back to user mode at every restart point and is re-issued;
//!   in the process model it goes on in the kernel and, when its slot ends,
//!   is blocked on its own kernel stack and resumed there later. Either
//!   way the caller sees one call that did all its records.
//! * `spin`: meanwhile computes a checksum for 1.5 s of its own time and
//!   compares it with the same sum computed first: a neighbour preempted
//!   and resumed in the middle of its kernel calls never disturbs it.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, MapEntry};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu};

oxok_libos::main!(main);

const BASE: u64 = 0x2600_0000_0000;
const PAGES: usize = 2048;
const ROUNDS: usize = 24;

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("batch") => batch(),
        Some("spin") => spin(),
        _ => {
            println!("longcall: FAIL unknown mode");
            1
        }
    }
}

fn batch() -> i32 {
    let mut c = Checks::new("longcall batch");
    let Ok([frame, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        c.check(false, "allocate a frame");
        return c.finish();
    };
    let rw = pte::WRITABLE | pte::NO_EXECUTE;
    let maps: Vec<MapEntry> = (0..PAGES).map(|i| MapEntry::map(BASE + i as u64 * PAGE_SIZE, frame, rw)).collect();
    let unmaps: Vec<MapEntry> = (0..PAGES).map(|i| MapEntry::unmap(BASE + i as u64 * PAGE_SIZE)).collect();
    let (mut mapped_ok, mut unmapped_ok, mut calls_ok) = (true, true, true);
    for _ in 0..ROUNDS {
        calls_ok &= sys::page_batch(0, maps.as_ptr() as u64, PAGES as u64).is_ok();
        mapped_ok &= (0..PAGES).all(|i| exposed::frame_of(BASE + i as u64 * PAGE_SIZE) == Some(pfn));
        calls_ok &= sys::page_batch(0, unmaps.as_ptr() as u64, PAGES as u64).is_ok();
        unmapped_ok &= (0..PAGES).all(|i| exposed::pte(BASE + i as u64 * PAGE_SIZE).is_none_or(|e| e & 1 == 0));
    }
    c.check(calls_ok, "every long call succeeds");
    c.check(mapped_ok, "after each map call, all 2048 pages map the frame");
    c.check(unmapped_ok, "after each unmap call, none is left");
    c.check(exposed::frame_entry(pfn).is_some_and(|e| e.maps == 0), "the frame counts no mapping");
    c.check(sys::frame_free(frame).is_ok(), "free the frame");
    println!("longcall batch: {} calls of {PAGES} records", 2 * ROUNDS);
    c.finish()
}

fn sum(n: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = core::hint::black_box(x.wrapping_add(i));
    }
    x
}

fn spin() -> i32 {
    let mut c = Checks::new("longcall spin");
    let n = 200_000;
    let want = sum(n);
    let me = exposed::self_id();
    let t0 = cpu::ticks(me).unwrap_or(0);
    let mut rounds = 0u64;
    let mut same = true;
    while cpu::ticks(me).unwrap_or(u64::MAX) - t0 < 1500 {
        same &= sum(n) == want;
        rounds += 1;
    }
    c.check(same, "every checksum equals the first");
    c.check(rounds > 0, "it ran");
    println!("longcall spin: {rounds} sums");
    c.finish()
}
