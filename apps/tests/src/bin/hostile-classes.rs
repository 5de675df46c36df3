//! hostile-classes: attacks the call table's argument classes, which the
//! kernel decodes once before a call runs — a capability of the wrong kind
//! where an environment's or a frame's is due, empty and out-of-range
//! slots, unaligned and kernel page addresses, unknown page-flag and
//! rights bits — and the check/perform split of `frame_alloc`: with its
//! capability list full, the call is refused with nothing allocated and
//! nothing charged. Every attempt must fail with its class's error and
//! change nothing; the program ends with `hostile-classes: ok`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{USER_TOP, pte};
use oxok_libos::abi::{ACCOUNT_FRAMES, ANY_FRAME, CAP_SLOTS, Error, rights};
use oxok_libos::{Args, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where this program would map.
const VA: u64 = 0x1200_0000_0000;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-classes");
    let Ok([frame, _]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-classes: FAIL frame_alloc refused");
        return 1;
    };
    let rw = pte::WRITABLE | pte::NO_EXECUTE;
    // EnvCap and FrameCap: the wrong kind, empty, out of range.
    t.expect(sys::page_map(frame, frame, VA, rw), Err(Error::BadCap), "a frame capability as EnvCap");
    t.expect(sys::page_map(0, 0, VA, rw), Err(Error::BadCap), "an environment capability as FrameCap");
    t.expect(sys::env_run(CAP_SLOTS as u64 - 1), Err(Error::BadCap), "an empty slot as EnvCap");
    t.expect(sys::env_run(u64::MAX), Err(Error::BadCap), "slot u64::MAX as EnvCap");
    t.expect(sys::frame_free(0), Err(Error::BadCap), "an environment capability as FrameCap (frame_free)");
    t.expect(sys::frame_free(1 << 40), Err(Error::BadCap), "an out-of-range FrameCap");
    // UserPage: unaligned, at USER_TOP, in the kernel.
    t.expect(sys::page_map(0, frame, VA + 1, rw), Err(Error::BadAddress), "an unaligned UserPage");
    t.expect(sys::page_map(0, frame, USER_TOP, rw), Err(Error::BadAddress), "USER_TOP as UserPage");
    t.expect(sys::page_unmap(0, 0xffff_8000_0000_0000), Err(Error::BadAddress), "a kernel address as UserPage");
    t.expect(sys::page_protect(0, VA + 8, rw, 0), Err(Error::BadAddress), "an unaligned UserPage (protect)");
    // PageFlags: present, user and huge-page bits are the kernel's.
    for (bit, what) in [(pte::PRESENT, "PRESENT"), (pte::USER, "USER"), (1 << 7, "huge page")] {
        t.expect(sys::page_map(0, frame, VA, rw | bit), Err(Error::Invalid), what);
    }
    // Rights: bits beyond those defined, and beyond a byte.
    t.expect(sys::cap_derive(frame, 1 << 8), Err(Error::Invalid), "rights beyond a byte");
    t.expect(sys::cap_derive(frame, 0x80), Err(Error::Invalid), "an undefined rights bit");
    t.expect(sys::cap_grant(frame, 0, 1 << 20), Err(Error::Invalid), "rights beyond a byte (grant)");
    // Nothing above changed anything: the page is still unmapped.
    t.expect(sys::page_unmap(0, VA), Err(Error::NotFound), "nothing was mapped");
    full_list(&mut t, frame);
    t.check(sys::frame_free(frame).is_ok(), "the frame is freed");
    t.finish()
}

/// Fills the capability list with copies of `frame`'s capability, then
/// asks for a frame: refused, with no frame taken and nothing charged.
fn full_list(t: &mut Checks, frame: u64) {
    let mut copies = [0u64; CAP_SLOTS];
    let mut n = 0;
    while let Ok([slot]) = sys::cap_derive(frame, rights::READ) {
        copies[n] = slot;
        n += 1;
    }
    t.check(n > 0, "the list filled up");
    let free = sys::mem_info().map(|[_, free, _]| free);
    let used = sys::account_info(0, ACCOUNT_FRAMES).map(|[used, _, _]| used);
    t.expect(sys::frame_alloc(ANY_FRAME).map(|_| ()), Err(Error::NoMemory), "frame_alloc with a full list");
    t.expect(sys::frame_alloc(0).map(|_| ()), Err(Error::NoMemory), "frame_alloc by number with a full list");
    t.expect(sys::mem_info().map(|[_, free, _]| free), free, "no frame taken");
    t.expect(sys::account_info(0, ACCOUNT_FRAMES).map(|[used, _, _]| used), used, "nothing charged");
    for &slot in &copies[..n] {
        let _ = sys::cap_drop(slot);
    }
    let got = sys::frame_alloc(ANY_FRAME);
    t.check(got.is_ok(), "frame_alloc works again");
    if let Ok([slot, _]) = got {
        t.check(sys::frame_free(slot).is_ok(), "and its frame is freed");
    }
}
