//! fsbase K: FS and GS bases per environment. Copy K (0 or 1) points its
//! FS base at `CELLS[K]` and its GS base at `CELLS[K + 2]`, writes its own
//! markers there and poison in the other copy's cells, then for about
//! 300 ms (preempted often: the scenario sets a one-tick slot) reads
//! `%fs:0` and `%gs:0` and checks it sees its own markers — a base left
//! over from the other copy would read poison. Also: `env_get_base` and
//! the exported state report the bases; out-of-range bases and unknown
//! `which` are refused (`Invalid`) and change nothing.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::USER_TOP;
use oxok_libos::abi::{BASE_FS, BASE_GS, EnvState, Error};
use oxok_libos::{Args, println, sys};
use oxok_tests::{Checks, cpu, fpu};

oxok_libos::main!(main);

static CELLS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
const POISON: u64 = 0xdead_dead_dead_dead;

fn main(args: Args) -> i32 {
    let k: usize = args.get(1).and_then(|s| s.parse().ok()).filter(|&k| k < 2).unwrap_or(0);
    let mut t = Checks::new("fsbase");
    let me = oxok_libos::process::env_id();
    let (fs_mark, gs_mark) = (0xf5_0000 + me, 0x65_0000 + me);
    for (i, c) in CELLS.iter().enumerate() {
        let v = if i == k {
            fs_mark
        } else if i == k + 2 {
            gs_mark
        } else {
            POISON
        };
        c.store(v, Ordering::SeqCst);
    }
    let fs = &CELLS[k] as *const AtomicU64 as u64;
    let gs = &CELLS[k + 2] as *const AtomicU64 as u64;
    t.expect(sys::env_get_base(0, BASE_FS), Ok([0]), "a new environment's FS base is 0");
    t.expect(sys::env_set_base(0, BASE_FS, fs), Ok([]), "set FS base");
    t.expect(sys::env_set_base(0, BASE_GS, gs), Ok([]), "set GS base");
    for (which, v, what) in [
        (BASE_FS, USER_TOP, "FS base at USER_TOP"),
        (BASE_FS, 0xffff_ffff_8020_0000, "kernel FS base"),
        (BASE_GS, 0x0000_8000_0000_0000, "non-canonical GS base"),
        (2, fs, "unknown base"),
    ] {
        t.expect(sys::env_set_base(0, which, v), Err(Error::Invalid), what);
    }
    t.expect(sys::env_get_base(0, 2), Err(Error::Invalid), "get an unknown base");
    t.expect(sys::env_get_base(0, BASE_FS), Ok([fs]), "FS base reads back");
    t.expect(sys::env_get_base(0, BASE_GS), Ok([gs]), "GS base reads back");
    let mut st = EnvState::new();
    t.expect(sys::env_get_state(0, &raw mut st as u64), Ok([]), "export own state");
    t.expect((st.fs_base, st.gs_base), (fs, gs), "exported bases");
    let per_ms = cpu::cycles_per_ms();
    let end = oxok_libos::exposed::rdtsc() + 300 * per_ms;
    let (mut reads, mut wrong, mut gaps) = (0u64, 0u64, 0u64);
    let mut last = oxok_libos::exposed::rdtsc();
    loop {
        let now = oxok_libos::exposed::rdtsc();
        if now.wrapping_sub(last) > per_ms {
            gaps += 1;
        }
        last = now;
        if now >= end {
            break;
        }
        reads += 1;
        if fpu::fs0() != fs_mark || fpu::gs0() != gs_mark {
            wrong += 1;
        }
    }
    t.expect(wrong, 0, "reads through %fs/%gs that saw another base");
    t.check(gaps > 0, "was preempted while reading");
    if t.finish() == 0 {
        println!("fsbase {k}: ok ({reads} reads, preempted {gaps} times)");
        0
    } else {
        1
    }
}
