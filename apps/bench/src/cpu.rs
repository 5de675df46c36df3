//! The instructions the workloads are made of.
#![allow(unsafe_code)]

use core::arch::asm;

/// `lfence; rdtsc`: the time-stamp counter once earlier instructions are
/// done.
#[inline(always)]
pub fn now() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: lfence and rdtsc only order execution and read the counter.
    unsafe { asm!("lfence", "rdtsc", out("eax") lo, out("edx") hi, options(nostack, preserves_flags)) };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The encoding of the store [`touch`] executes (`mov [rdi], rsi`), so a
/// fault handler that cannot fix the fault can step over it.
pub const TOUCH_BYTES: [u8; 3] = [0x48, 0x89, 0x37];

/// Writes `v` at `va` with exactly the instruction [`TOUCH_BYTES`]. The
/// page may be absent or read-only: the page-fault handler maps or
/// unprotects it, or steps over the instruction if it cannot.
#[inline(always)]
pub fn touch(va: u64, v: u64) {
    // SAFETY: `va` lies in a range this program reserves for the workload
    // (no Rust object lives there); a fault goes to the handler in `vm` or
    // `appel`, which maps or unprotects the page or skips the store.
    unsafe { asm!("mov qword ptr [rdi], rsi", in("rdi") va, in("rsi") v, options(nostack, preserves_flags)) };
}

/// `ud2`, which the exception handler in `vm` steps over.
#[inline(always)]
pub fn ud2() {
    // SAFETY: the exception handler skips the two bytes; nothing changes.
    unsafe { asm!("ud2", options(nostack)) };
}

/// The bytes at `rip`, if mapped readable.
pub fn code_at<const N: usize>(rip: u64) -> Option<[u8; N]> {
    let last = rip.checked_add(N as u64 - 1)?;
    if !oxok_libos::exposed::readable(rip) || !oxok_libos::exposed::readable(last) {
        return None;
    }
    // SAFETY: both ends checked mapped readable (N is a few bytes).
    Some(unsafe { core::ptr::read_volatile(rip as *const [u8; N]) })
}
