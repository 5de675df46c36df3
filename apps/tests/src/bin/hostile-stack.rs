//! hostile-stack: recurses until the stack runs out. The guard-less stack
//! end is an unmapped page, so the environment takes a page fault and is
//! destroyed; the kernel and later environments go on.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, println};

oxok_libos::main!(main);

#[inline(never)]
#[allow(unconditional_recursion)]
fn deeper(n: u64, sink: &mut [u64; 64]) -> u64 {
    let mut local = [n; 64];
    local[(n % 64) as usize] ^= sink[0];
    sink[1] = local[3];
    deeper(n + 1, &mut local).wrapping_add(local[5])
}

fn main(_args: Args) -> i32 {
    println!("hostile-stack: recursing");
    let mut sink = [0u64; 64];
    let r = deeper(0, &mut sink);
    println!("hostile-stack: FAIL returned {r}");
    1
}
