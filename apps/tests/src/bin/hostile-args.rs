//! hostile-args: passes kernel, unmapped, wrapping and oversized pointers to
//! calls. Every one must come back as an error code — no output, no fault,
//! no kernel panic — and the program must keep running.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{STACK_TOP, USER_TOP};
use oxok_libos::abi::{CONSOLE_WRITE_MAX, Error};
use oxok_libos::{Args, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

static TEXT: [u8; 5] = *b"oops\n";

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-args");
    let bad: &[(&str, u64, u64, Error)] = &[
        ("kernel text", 0xffff_ffff_8020_0000, 16, Error::BadAddress),
        ("direct map", 0xffff_8000_0000_0000, 16, Error::BadAddress),
        ("unmapped user page", 0x1000_0000, 16, Error::BadAddress),
        ("null", 0, 1, Error::BadAddress),
        ("range crossing USER_TOP", USER_TOP - 8, 16, Error::BadAddress),
        ("wrapping range", u64::MAX - 4, 16, Error::BadAddress),
        ("beyond the stack top", STACK_TOP - 4, 8, Error::BadAddress),
        ("too long", TEXT.as_ptr() as u64, CONSOLE_WRITE_MAX + 1, Error::Invalid),
        ("huge length", TEXT.as_ptr() as u64, u64::MAX, Error::Invalid),
        ("valid start, unmapped end", TEXT.as_ptr() as u64, 64 * 1024 * 1024, Error::Invalid),
    ];
    for &(what, ptr, len, want) in bad {
        let got = sys::console_write(ptr, len);
        t.check(got == Err(want), what);
    }
    // Half-valid: starts in mapped rodata, runs off into unmapped memory; must
    // be refused as a whole (nothing printed).
    let half = sys::console_write(TEXT.as_ptr() as u64, 60 * 1024);
    t.check(half == Err(Error::BadAddress), "partly mapped range");
    // And a good call still works afterwards.
    t.check(sys::console_write(TEXT.as_ptr() as u64, 0) == Ok([0]), "empty write");
    t.finish()
}
