//! heap: the libOS heap (`alloc` in a program): growth on demand, reuse
//! after free, large and small objects, contents intact; everything it took
//! goes back to the kernel at exit (the kernel's leak line).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use oxok_libos::{Args, exposed, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("heap");
    let frames_before = exposed::owned_frames();

    // Large: 4 MiB in one vector, filled and checked.
    let n = 512 * 1024;
    let mut big: Vec<u64> = Vec::with_capacity(n);
    for i in 0..n as u64 {
        big.push(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    t.check(
        big.iter().enumerate().all(|(i, &v)| v == (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        "4 MiB vector intact",
    );
    let grown = exposed::owned_frames().zip(frames_before).map(|(a, b)| a.saturating_sub(b));
    t.check(grown.is_some_and(|g| g >= 1024), "the heap grew by frames from the kernel");
    drop(big);

    // Small: many boxes, freed and reused without growing further.
    let before_small = exposed::owned_frames();
    for round in 0..4u64 {
        let boxes: Vec<Box<[u64; 8]>> = (0..20_000).map(|i| Box::new([i ^ round; 8])).collect();
        t.check(boxes.iter().enumerate().all(|(i, b)| b[7] == i as u64 ^ round), "boxes intact");
    }
    t.check(exposed::owned_frames() == before_small, "freed memory is reused (no growth)");

    // Collections.
    let mut m = BTreeMap::new();
    let mut s = String::new();
    for i in 0..2000u32 {
        m.insert(i * 7 % 2003, i);
        let _ = write!(s, "{i},");
    }
    t.check(m.len() == 2000 && m.get(&7) == Some(&1), "BTreeMap works");
    t.check(s.len() > 8000 && s.starts_with("0,1,2,"), "String works");
    println!("heap: {} frames owned at the end", exposed::owned_frames().unwrap_or(0));
    t.finish()
}
