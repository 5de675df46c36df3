//! fpu-isolation NAME SEED: computes with x87 and SSE while another copy
//! does the same with other values, both preempted often (the scenario sets
//! a one-tick slot). Each round loads every XMM register, MXCSR and eight
//! x87 registers with values derived from SEED, computes a square root on
//! each unit, spins about 2 ms (long enough to be preempted), and checks
//! that every register still holds its own values and that the results are
//! what the same computation gave before. Prints `fpu-isolation NAME: ok
//! (R rounds, preempted P times)`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, println};
use oxok_tests::{Checks, cpu, fpu};

oxok_libos::main!(main);

const ROUNDS: u64 = 150;

fn main(args: Args) -> i32 {
    let name = args.get(1).unwrap_or("x");
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut t = Checks::new("fpu-isolation");
    // Reference results, computed once before any preemption matters.
    let (x87_ref, sse_ref) = compute(seed, 0);
    let mut gaps = 0u64;
    let mut bad = 0u64;
    for round in 0..ROUNDS {
        let xmm = pattern(seed, round);
        let mxcsr = if (seed + round).is_multiple_of(2) { 0x1f80 } else { 0x7f80 };
        fpu::xmm_load(&xmm);
        fpu::set_mxcsr(mxcsr);
        for i in 0..8 {
            fpu::x87_push((seed * 1000 + round * 10 + i) as f64 + 0.5);
        }
        gaps += spin_ms(2);
        let mut ok = fpu::mxcsr() == mxcsr && fpu::xmm_store() == xmm;
        for i in (0..8).rev() {
            ok &= fpu::x87_pop() == (seed * 1000 + round * 10 + i) as f64 + 0.5;
        }
        fpu::set_mxcsr(0x1f80);
        let (x, s) = compute(seed, 1);
        ok &= x.to_bits() == x87_ref.to_bits() && s.to_bits() == sse_ref.to_bits();
        if !ok {
            bad += 1;
        }
    }
    t.expect(bad, 0, "rounds whose registers or results changed");
    t.check(gaps > 0, "was preempted while holding state");
    if t.finish() == 0 {
        println!("fpu-isolation {name}: ok ({ROUNDS} rounds, preempted {gaps} times)");
        0
    } else {
        1
    }
}

/// sqrt(seed + 2) on the x87 and on SSE, each kept in its registers across
/// a spin of `ms` ms.
fn compute(seed: u64, ms: u64) -> (f64, f64) {
    let v = (seed + 2) as f64;
    fpu::x87_push(v);
    fpu::x87_sqrt();
    let mut xmm = [[0u64; 2]; 16];
    xmm[0] = [v.to_bits(), 0];
    fpu::xmm_load(&xmm);
    fpu::sse_sqrt0();
    spin_ms(ms);
    let s = f64::from_bits(fpu::xmm_store()[0][0]);
    (fpu::x87_pop(), s)
}

/// Distinct values for every XMM register of this copy and round.
fn pattern(seed: u64, round: u64) -> [[u64; 2]; 16] {
    let mut v = [[0u64; 2]; 16];
    for (i, r) in v.iter_mut().enumerate() {
        let base = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (round << 8) ^ i as u64;
        *r = [base, !base.rotate_left(17)];
    }
    v
}

/// Spins `ms` ms of wall time; returns how often the TSC jumped by more
/// than a millisecond (another environment ran).
fn spin_ms(ms: u64) -> u64 {
    let per_ms = cpu::cycles_per_ms();
    let start = oxok_libos::exposed::rdtsc();
    let (mut last, mut gaps) = (start, 0);
    loop {
        let now = oxok_libos::exposed::rdtsc();
        if now.wrapping_sub(last) > per_ms {
            gaps += 1;
        }
        last = now;
        if now >= start + ms * per_ms {
            return gaps;
        }
    }
}
