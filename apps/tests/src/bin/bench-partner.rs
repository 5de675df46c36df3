//! bench-partner VA ID: the partner of the bench's `shm_pingpong`.
//!
//! The bench environment (id `ID`, decimal) maps a frame of its own at
//! `VA` (hexadecimal, `0x` optional) in this environment. Word 0 of the
//! page is a counter, word 1 a stop flag. The partner waits until the page
//! is mapped (polling its own page-table entry, yielding between polls),
//! then: whenever the counter is odd it adds one; after every look it
//! yields the rest of its slot to `ID`. It returns 0 once the stop flag is
//! set, 1 if the page never appears or the arguments are bad.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::Ordering;
use oxok_libos::abi::layout::pte;
use oxok_libos::{Args, exposed, println, sys};

oxok_libos::main!(main);

/// Polls for the page before giving up.
const POLLS: u32 = 1_000_000;

fn main(args: Args) -> i32 {
    let va = args.get(1).and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok());
    let id = args.get(2).and_then(|s| s.parse::<u64>().ok());
    let (Some(va), Some(id)) = (va, id) else {
        println!("bench-partner: usage: bench-partner VA(hex) BENCH_ID");
        return 1;
    };
    if !va.is_multiple_of(4096) {
        println!("bench-partner: VA not page-aligned");
        return 1;
    }
    let mapped =
        || exposed::pte(va).is_some_and(|e| e & (pte::PRESENT | pte::WRITABLE) == pte::PRESENT | pte::WRITABLE);
    let mut polls = 0;
    while !mapped() {
        polls += 1;
        if polls == POLLS {
            println!("bench-partner: the page at {va:#x} never appeared");
            return 1;
        }
        let _ = sys::yield_cpu(0);
    }
    let (counter, stop) = shared::words(va);
    while stop.load(Ordering::Acquire) == 0 {
        let c = counter.load(Ordering::Acquire);
        if c & 1 == 1 {
            counter.store(c + 1, Ordering::Release);
        }
        if oxok_libos::callcap::yield_to(id).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
    0
}

#[allow(unsafe_code)]
mod shared {
    use core::sync::atomic::AtomicU64;

    /// The counter and the stop flag: the first two words of the page at
    /// `va`.
    pub fn words(va: u64) -> (&'static AtomicU64, &'static AtomicU64) {
        // The caller checked a writable page is mapped at the aligned `va`; it
        // stays mapped until this program exits, and only atomics touch it.
        // SAFETY: so both references are valid and unaliased by non-atomics.
        unsafe { (&*(va as *const AtomicU64), &*((va + 8) as *const AtomicU64)) }
    }
}
