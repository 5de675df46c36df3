//! A program that corrupts its own libOS only harms itself. The child
//! (`hostile-selfcorrupt corrupt`) overwrites every writable page of its
//! own image and heap — the upcall handler table, the descriptor table,
//! the heap's metadata, the PCT and exception stacks, the fork-private
//! statics — with pseudo-random bytes, then keeps calling into its libOS
//! (print, allocate, make a pipe, fault, exit). Whatever that does to it
//! (a fault the kernel ends it for, a spin on a lock that now looks held,
//! garbage output), the parent keeps running and checking its own data,
//! the kernel keeps running, and once the parent ends the child (it holds
//! its capability) every frame is free again.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, STACK_SIZE, STACK_TOP, pte};
use oxok_libos::exec;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    if args.get(1) == Some("corrupt") {
        corrupt();
    }
    let mut t = Checks::new("hostile-selfcorrupt");
    let mine: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let sum = |v: &[u64]| v.iter().fold(0u64, |a, &x| a.rotate_left(7) ^ x);
    let want = sum(&mine);
    let child = match exec::spawn("hostile-selfcorrupt", &["hostile-selfcorrupt", "corrupt"]) {
        Ok(c) => c,
        Err(e) => {
            t.check(false, &alloc::format!("spawn: {e}"));
            return t.finish();
        }
    };
    let id = child.id;
    // Work alongside the corrupted child for a while.
    let mut wrong = 0;
    for round in 0..300 {
        if sum(&mine) != want {
            wrong += 1;
        }
        if round % 3 == 0 {
            let _ = sys::yield_cpu(0);
        }
    }
    t.expect(wrong, 0, "the parent's own data stayed intact");
    let state = exposed::env_entry(id).map(|r| r.status);
    println!("hostile-selfcorrupt: the child's state after the parent's work: {state:?}");
    // End it if it is still there (spinning on a lock its garbage holds, say).
    let status = if exposed::env_entry(id).is_some_and(|r| r.status != oxok_libos::abi::ENV_ZOMBIE) {
        let _ = sys::env_destroy(child.slot);
        println!("hostile-selfcorrupt: the parent destroyed the still-running child");
        None
    } else {
        exec::wait(child).ok()
    };
    if let Some(s) = status {
        println!("hostile-selfcorrupt: the child ended: {s:?}");
    }
    t.check(
        exposed::env_entry(id).is_none_or(|r| r.id as u64 != id || r.status == oxok_libos::abi::ENV_ZOMBIE),
        "the child is gone",
    );
    t.check(sys::null().is_ok(), "the kernel still answers");
    t.finish()
}

/// Overwrites every writable page of this program outside its stack with
/// pseudo-random bytes, then uses the libOS.
fn corrupt() -> ! {
    let stack = STACK_TOP - STACK_SIZE..STACK_TOP;
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut targets = [0u64; 512];
    let mut n = 0;
    exposed::walk(0, STACK_TOP, |va, e| {
        if e & pte::WRITABLE != 0 && !stack.contains(&va) && n < targets.len() {
            targets[n] = va;
            n += 1;
        }
    });
    for &va in &targets[..n] {
        for off in (0..PAGE_SIZE).step_by(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            oxok_tests::mem::store(va + off, x);
        }
    }
    // The libOS is garbage now; use it anyway.
    let _ = sys::console_write(b"hostile-selfcorrupt: corrupted\n".as_ptr() as u64, 31);
    println!("hostile-selfcorrupt: printing through a corrupted libOS");
    let v: Vec<u8> = Vec::with_capacity(1 << 20);
    drop(v);
    let _ = oxok_libos::fd::pipe::pipe();
    oxok_tests::mem::store(0x10, 1); // a fault, for a handler table that is garbage
    oxok_libos::process::exit(0)
}
