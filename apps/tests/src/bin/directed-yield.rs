//! directed-yield MODE: `a` donates the rest of its slot to `b` with
//! `yield_cpu(b)`, five times, each time with distinctive values in the
//! callee-saved registers (rbx, rbp, r12–r15). Checks that they are intact
//! when `a` resumes and that `b` ran in between (its exposed `donated`
//! count went up by one each time), and with the XMM registers holding
//! markers of the round, which must hold too (`b` loads markers of its
//! own: the hand-off saves the yielder's unit and loads the receiver's).
//! A call slot the libOS remembers gone stale is retried with the
//! capability's new slot. Also the refusals: an unknown id (`BadEnv`), a
//! created environment that
//! cannot run (`Busy`, with and without a capability for it), and a yield
//! to oneself (a plain yield). `b` spins until `a` is gone.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::{Error, call_target, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu, fpu};

oxok_libos::main!(main);

const NAME: &str = "directed-yield";

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("b") => b(),
        _ => a(),
    }
}

fn b() -> i32 {
    fpu::xmm_load(&[[0xb0b0_b0b0, !0xb0b0_b0b0]; 16]);
    let end = exposed::rdtsc() + 20_000 * cpu::cycles_per_ms();
    let _ = cpu::wait_peer(NAME, 2000);
    while cpu::peer(NAME).is_some() && exposed::rdtsc() < end {}
    println!("directed-yield b: done");
    0
}

fn a() -> i32 {
    let mut t = Checks::new("directed-yield");
    let me = exposed::self_id();
    let Some(b) = cpu::wait_peer(NAME, 2000) else {
        t.check(false, "b exists");
        return t.finish();
    };
    for round in 0..5u64 {
        let before = exposed::run_stats(b).map_or(0, |r| r.donated);
        let seed = 0x1111_0000_0000_0000 * (round + 1);
        let values = [seed | 0xb, seed | 0xbe, seed | 0x12, seed | 0x13, seed | 0x14, seed | 0x15];
        // (Programs are built soft-float: nothing but `fpu` touches XMM.)
        let marks: [[u64; 2]; 16] = core::array::from_fn(|i| [seed | i as u64, !(seed | i as u64)]);
        fpu::xmm_load(&marks);
        let (status, got) = regs::yield_with(oxok_libos::callcap::target(b), values);
        t.check(fpu::xmm_store() == marks, "xmm registers intact after the yield");
        let after = exposed::run_stats(b).map_or(0, |r| r.donated);
        t.check(status == 0, "directed yield succeeded");
        t.check(got == values, "rbx, rbp, r12-r15 intact after the yield");
        t.check(after == before + 1, "b received the rest of the slot");
        if got != values {
            println!("directed-yield: sent {values:x?}, got {got:x?}");
        }
    }
    println!("directed-yield: b received {} donations", exposed::run_stats(b).map_or(0, |r| r.donated));
    // The call slot the libOS remembers gone stale: the capability is now
    // in another slot (derived from it, the first dropped); the kernel
    // refuses the remembered one and `yield_to` looks again and retries.
    match oxok_libos::callcap::slot_for(b) {
        Some(first) => match sys::cap_derive(first, rights::CALL) {
            Ok([second]) => {
                t.check(sys::cap_drop(first).is_ok(), "drop the first call slot");
                t.check(
                    oxok_libos::callcap::yield_to(b).is_ok(),
                    "a yield through a stale remembered slot is retried with the capability's new slot",
                );
                t.check(oxok_libos::callcap::slot_for(b) == Some(second), "the new slot is remembered");
            }
            Err(_) => t.check(false, "derive the call capability"),
        },
        None => t.check(false, "a call capability for b"),
    }
    t.check(sys::yield_cpu(0x7fff_ffff) == Err(Error::BadEnv), "unknown environment: BadEnv");
    t.check(sys::yield_cpu(u64::MAX) == Err(Error::BadEnv), "id out of range: BadEnv");
    t.check(sys::yield_cpu(me).is_ok(), "yield to oneself is a plain yield");
    t.check(sys::yield_cpu(0).is_ok(), "plain yield");
    match sys::env_create() {
        Ok([slot, id]) => {
            t.check(sys::yield_cpu(id) == Err(Error::Busy), "created, not runnable: Busy");
            t.check(
                sys::yield_cpu(call_target(id, slot)) == Err(Error::Busy),
                "created, not runnable, with a capability for it: Busy",
            );
            t.check(sys::env_destroy(slot).is_ok(), "destroy the child");
        }
        Err(_) => t.check(false, "env_create"),
    }
    t.finish()
}

/// The yield with chosen callee-saved registers.
#[allow(unsafe_code)]
mod regs {
    use core::arch::asm;
    use oxok_libos::abi::Call;

    /// Sets rbx, rbp, r12–r15 to `v`, calls `yield_cpu(target)`, and
    /// returns the status and the six registers as they are afterwards.
    pub fn yield_with(target: u64, v: [u64; 6]) -> (u64, [u64; 6]) {
        let mut out = [0u64; 2];
        let (status, r12, r13, r14, r15);
        // rbx and rbp are saved and restored around the call (the compiler may
        // use both); `out` (a live local) is kept on the stack across it;
        // r12–r15 are operands; rcx, r11 and the other argument registers are
        // SAFETY: declared clobbered, so the compiler's assumptions hold.
        unsafe {
            asm!(
                "push rbx",
                "push rbp",
                "push rdx",
                "mov rbx, [rsi]",
                "mov rbp, [rsi + 8]",
                "syscall",
                "mov rcx, [rsp]",
                "mov [rcx], rbx",
                "mov [rcx + 8], rbp",
                "add rsp, 8",
                "pop rbp",
                "pop rbx",
                inout("rsi") v.as_ptr() => _,
                inout("rdx") out.as_mut_ptr() => _,
                inlateout("rax") Call::yield_cpu.number() => status,
                inlateout("rdi") target => _,
                inlateout("r12") v[2] => r12,
                inlateout("r13") v[3] => r13,
                inlateout("r14") v[4] => r14,
                inlateout("r15") v[5] => r15,
                lateout("rcx") _,
                lateout("r11") _,
                lateout("r10") _,
                lateout("r8") _,
                lateout("r9") _,
            );
        }
        (status, [out[0], out[1], r12, r13, r14, r15])
    }
}
