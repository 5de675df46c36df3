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

    // Every size class and the sizes around their ends (blocks of 1 to
    // 1,100 bytes; classes serve up to 1,024): each block filled with its
    // own tag, a third freed, the rest grown and shrunk in place or moved
    // (`realloc`), then all checked — no block overlaps another, and a
    // resized block keeps its bytes.
    let tag = |n: usize| (n % 251) as u8;
    let mut blocks: Vec<Vec<u8>> = (1..=1100usize).map(|n| alloc::vec![tag(n); n]).collect();
    t.check(blocks.iter().enumerate().all(|(i, b)| b.iter().all(|&x| x == tag(i + 1))), "blocks of every size intact");
    for (i, b) in blocks.iter_mut().enumerate() {
        if i % 3 == 0 {
            *b = Vec::new();
        }
    }
    for (i, b) in blocks.iter_mut().enumerate() {
        let n = b.len();
        if n == 0 {
            continue;
        }
        b.resize(n + (i * 37) % 300, 0xee);
        b.truncate(n + (i * 37) % 150);
        b.shrink_to_fit();
    }
    let kept = blocks.iter().enumerate().filter(|(_, b)| !b.is_empty()).all(|(i, b)| {
        let n = i + 1;
        b.len() == n + (i * 37) % 150 && b[..n].iter().all(|&x| x == tag(n)) && b[n..].iter().all(|&x| x == 0xee)
    });
    t.check(kept, "resized blocks keep their bytes; none overlaps another");
    let before_classes = exposed::owned_frames();
    for _ in 0..3 {
        let again: Vec<Vec<u8>> = (1..=1100usize).step_by(3).map(|n| alloc::vec![tag(n); n]).collect();
        t.check(again.iter().all(|b| b.iter().all(|&x| x == tag(b.len()))), "blocks taken again intact");
    }
    t.check(exposed::owned_frames() == before_classes, "freed blocks of each size are reused (no growth)");
    drop(blocks);

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
