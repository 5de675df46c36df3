//! hostile-victim PEER: an unrelated program that keeps working while the
//! hostile program `PEER` attacks the kernel's bounds. Until `PEER` has
//! ended (at most 120 s) it checks a checksum of its own data and, every
//! round, that the kernel still gives it what it asks for: an environment
//! (`env_create`/`env_destroy`) and a frame (`frame_alloc`/`frame_free`).
//! Prints `victim: ok, N rounds, data intact, env_create and frame_alloc
//! worked throughout` or FAIL lines.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::ANY_FRAME;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::cpu::peer;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let name = args.get(1).unwrap_or("");
    // The environment table keeps 15 bytes of a name.
    let name = name.get(..name.len().min(15)).unwrap_or(name);
    let data: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let sum = |d: &[u64]| d.iter().fold(0u64, |a, &x| a.rotate_left(5) ^ x);
    let want = sum(&data);
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    let start = exposed::rdtsc();
    // Wait (at most 5 s) for the peer to show up.
    while peer(name).is_none() && exposed::rdtsc() < start + 5 * hz {
        let _ = sys::yield_cpu(0);
    }
    let (mut rounds, mut wrong, mut refused) = (0u64, 0u64, 0u64);
    while (peer(name).is_some() || rounds < 50) && exposed::rdtsc() < start + 120 * hz {
        if sum(&data) != want {
            wrong += 1;
        }
        match sys::env_create() {
            Ok([slot, _]) => {
                if sys::env_destroy(slot).is_err() {
                    refused += 1;
                }
            }
            Err(e) => {
                refused += 1;
                if refused < 4 {
                    println!("victim: FAIL env_create refused: {e:?}");
                }
            }
        }
        match sys::frame_alloc(ANY_FRAME) {
            Ok([slot, _]) => {
                let _ = sys::frame_free(slot);
            }
            Err(e) => {
                refused += 1;
                if refused < 4 {
                    println!("victim: FAIL frame_alloc refused: {e:?}");
                }
            }
        }
        rounds += 1;
        let _ = sys::yield_cpu(0);
    }
    if wrong == 0 && refused == 0 {
        println!("victim: ok, {rounds} rounds, data intact, env_create and frame_alloc worked throughout");
        0
    } else {
        println!("victim: FAIL {wrong} wrong checksums, {refused} refusals in {rounds} rounds");
        1
    }
}
