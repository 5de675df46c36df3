//! hostile-fpu-leak plant|probe: x87/SSE state must not cross from one
//! environment to another. `plant` pushes 1234567.875 on the x87 stack,
//! fills every XMM register with a marker, sets a distinctive MXCSR and
//! exits with all of it still in the registers. `probe`, started after it,
//! must find the clean state of a new environment: empty x87 stack, control
//! word 0x37f, MXCSR 0x1f80, every x87 and XMM register zero — nothing of
//! the planter's — and its own exported state (`env_get_state`) must say
//! the same. On a kernel that neither saves nor resets the unit (or never
//! enables SSE) this fails.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::{EnvState, FCW_DEFAULT, MXCSR_DEFAULT};
use oxok_libos::{Args, println, sys};
use oxok_tests::{Checks, fpu};

oxok_libos::main!(main);

const SECRET: f64 = 1234567.875;
const MARK: u64 = 0x5ec2_e75e_c2e7_5ec2;
/// Round toward zero, flush-to-zero, every exception masked.
const MXCSR_PLANT: u32 = 0xff80;

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("plant") => plant(),
        Some("probe") => probe(),
        _ => {
            println!("usage: hostile-fpu-leak plant|probe");
            2
        }
    }
}

fn plant() -> i32 {
    fpu::x87_push(SECRET);
    fpu::x87_push(SECRET * 2.0);
    fpu::xmm_load(&[[MARK, !MARK]; 16]);
    fpu::set_mxcsr(MXCSR_PLANT);
    let seen = fpu::save();
    let ok = seen.mxcsr() == MXCSR_PLANT && seen.xmm(15) == [MARK, !MARK];
    println!("hostile-fpu-leak: planted (own state {})", if ok { "holds" } else { "LOST" });
    // Leave with everything in the registers.
    sys::env_exit(0).map(|_| 0).unwrap_or(1)
}

fn probe() -> i32 {
    let mut t = Checks::new("hostile-fpu-leak");
    let unit = fpu::save();
    check_clean(&mut t, &unit, "live unit");
    let mut st = EnvState::new();
    t.expect(sys::env_get_state(0, &raw mut st as u64), Ok([]), "export own state");
    check_clean(&mut t, &st.fpu, "exported state");
    t.expect(fpu::mxcsr(), MXCSR_DEFAULT, "stmxcsr");
    t.expect(fpu::xmm_store(), [[0, 0]; 16], "xmm registers");
    // The stack is empty: a pop gives the invalid-operation default NaN
    // (hardware) or the zeroed register (QEMU's TCG does not model stack
    // underflow), never the planted value.
    let popped = fpu::x87_pop();
    t.check(
        popped.to_bits() != SECRET.to_bits() && (popped.is_nan() || popped.to_bits() == 0),
        "x87 pop of an empty stack",
    );
    t.finish()
}

fn check_clean(t: &mut Checks, s: &oxok_libos::abi::FpuState, what: &str) {
    t.expect(s.fcw(), FCW_DEFAULT, what);
    t.expect(s.mxcsr(), MXCSR_DEFAULT, what);
    // FSW (top of stack, flags) and the abridged tag word: nothing pushed.
    t.expect((s.bytes[2], s.bytes[3], s.bytes[4]), (0, 0, 0), what);
    let secret = SECRET.to_bits().to_le_bytes();
    let leaked = s.bytes.windows(8).any(|w| w == secret) || (0..16).any(|i| s.xmm(i) == [MARK, !MARK]);
    t.check(!leaked, "no planted value anywhere in the unit");
    t.check(s.bytes[32..416].iter().all(|&b| b == 0), "x87 and xmm registers zero");
}
