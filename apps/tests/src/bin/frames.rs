//! frames: physical memory by physical name. Allocates any frame and a
//! specific one (page colouring: a frame number the program picked from the
//! exposed frame table), maps it, writes and reads it back through the
//! mapping, sees itself as owner and one mapping in the frame table, unmaps
//! and frees it; then the refusals: freeing a mapped frame (`Busy`), a double
//! free (`BadCap`), an absurd frame number (`Invalid`), a taken one (`Busy`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::frames::{OWNER_FREE, OWNER_KERNEL};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error, cap_kind, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where this program maps its frames.
const VA: u64 = 0x1000_0000_0000;
/// Colour classes for the page-colouring check.
const COLOURS: u64 = 16;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("frames");
    let me = oxok_libos::process::env_id();
    let owned_at_start = exposed::owned_frames();

    let Ok([slot, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("frames: FAIL frame_alloc(ANY_FRAME) refused");
        return 1;
    };
    t.expect(
        sys::cap_info(slot),
        Ok([cap_kind::FRAME, pfn, rights::READ | rights::WRITE | rights::GRANT]),
        "cap_info of a fresh frame",
    );
    round_trip(&mut t, me, slot, pfn, 0x0123_4567_89ab_cdef);
    // `refs` counts the capabilities that name the frame.
    let refs = || exposed::frame_entry(pfn).map(|e| e.refs);
    t.expect(refs(), Some(1), "frame table: one capability");
    match sys::cap_grant(slot, 0, rights::READ) {
        Ok([copy]) => {
            t.expect(refs(), Some(2), "frame table: a granted copy counts");
            t.expect(sys::cap_drop(copy), Ok([]), "drop the copy");
            t.expect(refs(), Some(1), "frame table: the dropped copy no longer counts");
        }
        Err(_) => t.check(false, "grant to self"),
    }
    t.expect(sys::frame_free(slot), Ok([]), "free");
    t.expect(sys::frame_free(slot), Err(Error::BadCap), "double free");
    t.expect(sys::cap_info(slot), Err(Error::BadCap), "slot empty after free");
    let after = exposed::frame_entry(pfn);
    t.check(after.is_some_and(|e| e.owner == OWNER_FREE), "frame table: freed frame is free");

    specific(&mut t, me, pfn);
    refusals(&mut t);

    t.expect(exposed::owned_frames(), owned_at_start, "owned frames back to start");
    t.finish()
}

/// Maps `slot` at VA, writes, reads back, checks the tables, unmaps; the
/// frame stays allocated.
fn round_trip(t: &mut Checks, me: u64, slot: u64, pfn: u64, pattern: u64) {
    let e = exposed::frame_entry(pfn);
    t.check(e.is_some_and(|e| u64::from(e.owner) == me), "frame table: owner is self");
    t.check(e.is_some_and(|e| e.maps == 0), "frame table: not mapped yet");

    let flags = pte::WRITABLE | pte::NO_EXECUTE;
    t.expect(sys::page_map(0, slot, VA, flags), Ok([]), "map");
    t.expect(sys::page_map(0, slot, VA, flags), Err(Error::Exists), "map twice at one address");
    let entry = exposed::pte(VA).unwrap_or(0);
    t.expect(exposed::frame_of(VA), Some(pfn), "page table names the frame");
    t.check(entry & pte::WRITABLE != 0, "mapping is writable");
    t.check(entry & pte::NO_EXECUTE != 0, "mapping is no-execute");
    t.check(entry & pte::USER != 0, "mapping is user");
    if entry & pte::PRESENT == 0 {
        println!("frames: FAIL nothing mapped at {VA:#x}; skipping the memory checks");
        return;
    }
    let words = VA as *mut u64;
    t.expect(read(words, 0) | read(words, 511), 0, "a fresh frame reads as zero");
    for i in 0..512 {
        write(words, i, pattern ^ i as u64);
    }
    let ok = (0..512).all(|i| read(words, i) == pattern ^ i as u64);
    t.check(ok, "what was written reads back");
    let e = exposed::frame_entry(pfn);
    t.expect(e.map(|e| e.maps), Some(1), "frame table: maps == 1");

    t.expect(sys::frame_free(slot), Err(Error::Busy), "free of a mapped frame");
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap");
    t.expect(sys::page_unmap(0, VA), Err(Error::NotFound), "unmap twice");
    t.expect(exposed::pte(VA), None, "page table entry gone");
    let e = exposed::frame_entry(pfn);
    t.expect(e.map(|e| e.maps), Some(0), "frame table: maps == 0");
    t.check(e.is_some_and(|e| u64::from(e.owner) == me), "still owned after unmap");
}

/// Page colouring: picks a free frame of a chosen colour from the exposed
/// frame table and asks for it by number.
fn specific(t: &mut Checks, me: u64, near: u64) {
    let colour = (near + 5) % COLOURS;
    // Other environments allocate too: a frame the table showed free may be
    // taken by the time we ask (Busy); then try the next one.
    let mut candidates = (near + 1..near + 4096)
        .filter(|p| p % COLOURS == colour)
        .filter(|&p| exposed::frame_entry(p).is_some_and(|e| e.owner == OWNER_FREE));
    let (wanted, generation, got) = loop {
        let Some(p) = candidates.next() else {
            t.check(false, "found a free frame of the wanted colour");
            return;
        };
        let generation = exposed::frame_entry(p).map(|e| e.generation);
        match sys::frame_alloc(p) {
            Err(Error::Busy) => continue,
            r => break (p, generation, r),
        }
    };
    match got {
        Ok([slot, got]) => {
            t.expect(got, wanted, "frame_alloc(pfn) returns that frame");
            t.expect(got % COLOURS, colour, "frame has the wanted colour");
            t.expect(sys::frame_alloc(wanted), Err(Error::Busy), "frame_alloc of a taken frame");
            round_trip(t, me, slot, got, 0xfeed_f00d_0000_0000 | wanted);
            t.expect(sys::frame_free(slot), Ok([]), "free the specific frame");
            let e = exposed::frame_entry(wanted);
            t.check(e.is_some_and(|e| Some(e.generation) != generation), "generation advanced by the free");
            // Free again: the same frame can be asked for again.
            match sys::frame_alloc(wanted) {
                Ok([s, p]) => {
                    t.expect(p, wanted, "the freed frame can be allocated again");
                    t.expect(sys::frame_free(s), Ok([]), "free it again");
                }
                Err(e) => t.check(false, if e == Error::Busy { "realloc: busy" } else { "realloc" }),
            }
        }
        Err(e) => {
            println!("frames: frame_alloc({wanted}) failed: {e}");
            t.check(false, "frame_alloc(pfn) of a free frame");
        }
    }
}

/// Frame numbers that must be refused.
fn refusals(t: &mut Checks) {
    for (pfn, what) in [
        (1u64 << 40, "absurd frame number"),
        (u64::MAX - 1, "frame number u64::MAX - 1"),
        (1 << 52, "frame number beyond physical addresses"),
    ] {
        t.expect(sys::frame_alloc(pfn), Err(Error::Invalid), what);
    }
    // A frame the kernel uses (found in the frame table) is taken.
    let kernel = (0..1 << 20).find(|&p| exposed::frame_entry(p).is_some_and(|e| e.owner == OWNER_KERNEL));
    match kernel {
        Some(p) => t.expect(sys::frame_alloc(p), Err(Error::Busy), "frame_alloc of a kernel frame"),
        None => t.check(false, "frame table shows a kernel frame"),
    }
    // Frame 0 is firmware's (reserved or not RAM): refused either way.
    let zero = sys::frame_alloc(0);
    t.check(matches!(zero, Err(Error::Invalid | Error::Busy)), "frame_alloc(0) refused");
    if let Ok([s, _]) = zero {
        let _ = sys::frame_free(s);
    }
}

fn read(p: *mut u64, i: usize) -> u64 {
    debug_assert!(i < (PAGE_SIZE / 8) as usize);
    volatile::read(p, i)
}

fn write(p: *mut u64, i: usize, v: u64) {
    volatile::write(p, i, v)
}

/// Volatile access to the page this program mapped at [`VA`].
#[allow(unsafe_code)]
mod volatile {
    /// Reads word `i` of the mapped page.
    pub fn read(p: *mut u64, i: usize) -> u64 {
        // SAFETY: callers pass the page they mapped at VA (checked present)
        // and i < 512.
        unsafe { core::ptr::read_volatile(p.add(i)) }
    }

    /// Writes word `i` of the mapped page.
    pub fn write(p: *mut u64, i: usize, v: u64) {
        // SAFETY: as `read`; the mapping is writable.
        unsafe { core::ptr::write_volatile(p.add(i), v) }
    }
}
