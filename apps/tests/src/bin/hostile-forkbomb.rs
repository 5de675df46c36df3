//! A fork bomb: every process forks until the kernel says no, then waits
//! for its children and exits. It is bounded by what the kernel will give
//! (environment-table rows, kernel memory, frames): the kernel answers
//! `NoMemory` and keeps running; an unrelated victim (`hostile-forkbomb
//! victim`) keeps computing correct results meanwhile; when the bomb is
//! over every frame is free again (the scenario checks the frame table at
//! halt). Started as `run=hostile-forkbomb+victim&hostile-forkbomb`.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::ENV_TABLE_ROWS;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::vm::{self, Fork};
use oxok_libos::{Args, exposed, println, sys};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    if args.get(1) == Some("victim") {
        return victim();
    }
    let root = exposed::self_id();
    let mut children = Vec::new();
    // Fork until refused; children run the same loop.
    let refused = loop {
        match vm::fork() {
            Ok(Fork::Child) => children.clear(),
            Ok(Fork::Parent(c)) => children.push(c),
            Err(e) => break e,
        }
    };
    if exposed::self_id() == root {
        let alive = (0..ENV_TABLE_ROWS)
            .filter_map(exposed::env_row)
            .filter(|r| r.id != 0 && r.name.starts_with(b"hostile-forkbo"))
            .count();
        println!("hostile-forkbomb: refused with: {}", refused);
        println!("hostile-forkbomb: {alive} bomb processes alive at the peak");
    }
    let mut reaped = 0usize;
    for c in children {
        if matches!(exec::wait(c), Ok(ExitStatus::Exited(_))) {
            reaped += 1;
        }
    }
    if exposed::self_id() == root {
        println!("hostile-forkbomb: the root reaped its {reaped} children; the bomb is over");
    }
    0
}

/// Computes checksums over its own heap data while the bomb goes off and
/// checks every one.
fn victim() -> i32 {
    let data: Vec<u64> = (0..8192u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let want: u64 = data.iter().fold(0u64, |a, &x| a.rotate_left(5) ^ x);
    let mut wrong = 0;
    for round in 0..400 {
        let got = data.iter().fold(0u64, |a, &x| a.rotate_left(5) ^ x);
        if got != want {
            wrong += 1;
        }
        if round % 4 == 0 {
            let _ = sys::yield_cpu(0);
        }
    }
    if wrong == 0 {
        println!("victim: ok, 400 checksums correct");
        0
    } else {
        println!("victim: FAIL {wrong} wrong checksums");
        1
    }
}
