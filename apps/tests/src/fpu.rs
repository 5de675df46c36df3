//! x87/SSE and segment-base access for the FPU scenarios: the compiler
//! never touches these registers here (the target is soft-float), so what
//! they hold between two calls is exactly what the kernel preserved.
#![allow(unsafe_code)]

use core::arch::asm;
use oxok_libos::abi::FpuState;

/// The whole unit, as FXSAVE writes it.
pub fn save() -> FpuState {
    let mut area = FpuState { bytes: [0; 512] };
    // SAFETY: FpuState is 512 bytes and 16-aligned, FXSAVE writes only it.
    unsafe { asm!("fxsave64 [{}]", in(reg) area.bytes.as_mut_ptr(), options(nostack, preserves_flags)) }
    area
}

/// Pushes `v` on the x87 stack.
pub fn x87_push(v: f64) {
    // SAFETY: loads from a local; only the x87 stack changes.
    unsafe { asm!("fld qword ptr [{}]", in(reg) &v, options(nostack, preserves_flags, readonly)) }
}

/// Pops the x87 stack top.
pub fn x87_pop() -> f64 {
    let mut v = 0f64;
    // SAFETY: stores into a local; only the x87 stack changes.
    unsafe { asm!("fstp qword ptr [{}]", in(reg) &mut v, options(nostack, preserves_flags)) }
    v
}

/// Replaces the top of the x87 stack by its square root.
pub fn x87_sqrt() {
    // SAFETY: only the x87 stack top changes.
    unsafe { asm!("fsqrt", options(nomem, nostack, preserves_flags)) }
}

/// Loads all 16 XMM registers from `v` (two quadwords each).
pub fn xmm_load(v: &[[u64; 2]; 16]) {
    // SAFETY: reads 256 bytes of `v`; only XMM registers change.
    unsafe {
        asm!(
            "movdqu xmm0, [{p}]", "movdqu xmm1, [{p} + 16]", "movdqu xmm2, [{p} + 32]",
            "movdqu xmm3, [{p} + 48]", "movdqu xmm4, [{p} + 64]", "movdqu xmm5, [{p} + 80]",
            "movdqu xmm6, [{p} + 96]", "movdqu xmm7, [{p} + 112]", "movdqu xmm8, [{p} + 128]",
            "movdqu xmm9, [{p} + 144]", "movdqu xmm10, [{p} + 160]", "movdqu xmm11, [{p} + 176]",
            "movdqu xmm12, [{p} + 192]", "movdqu xmm13, [{p} + 208]", "movdqu xmm14, [{p} + 224]",
            "movdqu xmm15, [{p} + 240]",
            p = in(reg) v.as_ptr(),
            options(nostack, preserves_flags, readonly)
        )
    }
}

/// Stores all 16 XMM registers.
pub fn xmm_store() -> [[u64; 2]; 16] {
    let mut v = [[0u64; 2]; 16];
    // SAFETY: writes 256 bytes of `v`.
    unsafe {
        asm!(
            "movdqu [{p}], xmm0", "movdqu [{p} + 16], xmm1", "movdqu [{p} + 32], xmm2",
            "movdqu [{p} + 48], xmm3", "movdqu [{p} + 64], xmm4", "movdqu [{p} + 80], xmm5",
            "movdqu [{p} + 96], xmm6", "movdqu [{p} + 112], xmm7", "movdqu [{p} + 128], xmm8",
            "movdqu [{p} + 144], xmm9", "movdqu [{p} + 160], xmm10", "movdqu [{p} + 176], xmm11",
            "movdqu [{p} + 192], xmm12", "movdqu [{p} + 208], xmm13", "movdqu [{p} + 224], xmm14",
            "movdqu [{p} + 240], xmm15",
            p = in(reg) v.as_mut_ptr(),
            options(nostack, preserves_flags)
        )
    }
    v
}

/// `xmm0 = sqrt(xmm0)` (scalar double), under the current MXCSR.
pub fn sse_sqrt0() {
    // SAFETY: only xmm0 and MXCSR flags change.
    unsafe { asm!("sqrtsd xmm0, xmm0", options(nomem, nostack, preserves_flags)) }
}

/// Sets MXCSR.
pub fn set_mxcsr(v: u32) {
    // SAFETY: reads a local; the caller passes a valid MXCSR.
    unsafe { asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags, readonly)) }
}

/// Reads MXCSR.
pub fn mxcsr() -> u32 {
    let mut v = 0u32;
    // SAFETY: writes a local.
    unsafe { asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags)) }
    v
}

/// The quadword at `%fs:0`.
pub fn fs0() -> u64 {
    let v: u64;
    // SAFETY: the caller set an FS base pointing at a readable quadword.
    unsafe { asm!("mov {}, qword ptr fs:[0]", out(reg) v, options(nostack, preserves_flags, readonly)) }
    v
}

/// The quadword at `%gs:0`.
pub fn gs0() -> u64 {
    let v: u64;
    // SAFETY: the caller set a GS base pointing at a readable quadword.
    unsafe { asm!("mov {}, qword ptr gs:[0]", out(reg) v, options(nostack, preserves_flags, readonly)) }
    v
}
