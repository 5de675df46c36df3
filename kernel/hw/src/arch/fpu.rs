//! The x87/SSE unit and the FS/GS base registers: enabling SSE for user
//! programs, saving and restoring one environment's state in the FXSAVE
//! format, the task-switched flag for lazy switching, and the base MSRs.
//! The kernel itself never executes an x87 or SSE instruction (its target
//! is built soft-float), so whatever the unit holds is some environment's.

use core::arch::asm;
use core::sync::atomic::{AtomicU32, Ordering};
use oxok_abi::FpuState;

const CR0_MP: u64 = 1 << 1;
const CR0_EM: u64 = 1 << 2;
const CR0_TS: u64 = 1 << 3;
const CR0_NE: u64 = 1 << 5;
const CR4_OSFXSR: u64 = 1 << 9;
const CR4_OSXMMEXCPT: u64 = 1 << 10;
const MSR_FS_BASE: u32 = 0xC000_0100;
const MSR_GS_BASE: u32 = 0xC000_0101;
/// Offset of MXCSR in the FXSAVE image.
const MXCSR_AT: usize = 24;
/// Offset of MXCSR_MASK in the FXSAVE image.
const MXCSR_MASK_AT: usize = 28;

/// The MXCSR bits this CPU accepts (FXSAVE's MXCSR_MASK); 0 until `init`.
static MXCSR_MASK: AtomicU32 = AtomicU32::new(0);

fn cr0() -> u64 {
    let v: u64;
    // SAFETY: reading CR0 has no side effects.
    unsafe { asm!("mov {}, cr0", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

fn set_cr0(v: u64) {
    // SAFETY: callers here change only MP, EM, TS and NE, which affect how
    // x87/SSE instructions trap and report errors, nothing the kernel uses.
    unsafe { asm!("mov cr0, {}", in(reg) v, options(nostack, preserves_flags)) }
}

/// Enables x87 and SSE for user programs: CR0.MP and NE set, EM and TS
/// clear; CR4.OSFXSR (FXSAVE/FXRSTOR and SSE) and OSXMMEXCPT (SIMD errors
/// raise #XM). Reads this CPU's MXCSR_MASK for checking imported states.
pub fn init() {
    set_cr0((cr0() | CR0_MP | CR0_NE) & !(CR0_EM | CR0_TS));
    // SAFETY: setting OSFXSR/OSXMMEXCPT only enables SSE instructions and
    // SIMD exception reporting; every x86-64 CPU supports both.
    unsafe {
        let mut cr4: u64;
        asm!("mov {}, cr4", out(reg) cr4, options(nomem, nostack, preserves_flags));
        cr4 |= CR4_OSFXSR | CR4_OSXMMEXCPT;
        asm!("mov cr4, {}", in(reg) cr4, options(nostack, preserves_flags));
    }
    let mut probe = FpuState { bytes: [0; 512] };
    save(&mut probe);
    let mask = u32::from_le_bytes([
        probe.bytes[MXCSR_MASK_AT],
        probe.bytes[MXCSR_MASK_AT + 1],
        probe.bytes[MXCSR_MASK_AT + 2],
        probe.bytes[MXCSR_MASK_AT + 3],
    ]);
    // A zero mask means the architectural default (Intel SDM §11.6.6).
    MXCSR_MASK.store(if mask == 0 { 0xffbf } else { mask }, Ordering::Relaxed);
}

/// True if `state` can be loaded: its MXCSR sets no bit this CPU reserves
/// (FXRSTOR would raise #GP in the kernel otherwise).
pub fn valid(state: &FpuState) -> bool {
    state.mxcsr() & !MXCSR_MASK.load(Ordering::Relaxed) == 0
}

/// Runs `f` with CR0.TS clear (so FXSAVE/FXRSTOR do not trap), restoring
/// the flag afterwards.
fn with_ts_clear(f: impl FnOnce()) {
    let old = cr0();
    if old & CR0_TS != 0 {
        set_cr0(old & !CR0_TS);
    }
    f();
    if old & CR0_TS != 0 {
        set_cr0(old);
    }
}

/// Saves the unit's state into `area`.
#[inline]
pub fn save(area: &mut FpuState) {
    let p = area.bytes.as_mut_ptr();
    // SAFETY: `area` is 512 bytes, 16-aligned (FpuState's repr), and
    // exclusively borrowed; FXSAVE writes exactly those bytes.
    with_ts_clear(|| unsafe { asm!("fxsave64 [{}]", in(reg) p, options(nostack, preserves_flags)) });
}

/// Loads `area` into the unit; an area that could not be loaded (see
/// [`valid`]) loads the clean state instead.
#[inline]
pub fn restore(area: &FpuState) {
    let area = if valid(area) { area } else { &FpuState::CLEAN };
    let p = area.bytes.as_ptr();
    debug_assert!(MXCSR_AT + 4 <= area.bytes.len());
    // SAFETY: `area` is 512 bytes, 16-aligned and readable; its MXCSR was
    // checked against the CPU's mask, so FXRSTOR cannot fault.
    with_ts_clear(|| unsafe { asm!("fxrstor64 [{}]", in(reg) p, options(nostack, preserves_flags, readonly)) });
}

/// [`save`] into `out` then [`restore`] from `into`, with one look at
/// CR0.TS for both (a switch's two halves).
#[inline(always)]
pub fn exchange(out: &mut FpuState, into: &FpuState) {
    let into = if valid(into) { into } else { &FpuState::CLEAN };
    let (o, i) = (out.bytes.as_mut_ptr(), into.bytes.as_ptr());
    // SAFETY: as in `save` and `restore`: `out` is 512 writable, 16-aligned
    // bytes exclusively borrowed, `into` 512 readable ones whose MXCSR was
    // checked; the two cannot overlap (a `&mut` and a `&`).
    with_ts_clear(|| unsafe {
        asm!("fxsave64 [{}]", "fxrstor64 [{}]", in(reg) o, in(reg) i, options(nostack, preserves_flags));
    });
}

/// Sets (`true`) or clears CR0.TS: while set, the first x87/SSE
/// instruction in user mode raises #NM (lazy switching).
pub fn set_trap(on: bool) {
    let old = cr0();
    let new = if on { old | CR0_TS } else { old & !CR0_TS };
    if new != old {
        set_cr0(new);
    }
}

/// The FS and GS bases now loaded.
pub fn bases() -> (u64, u64) {
    (super::cpu::rdmsr(MSR_FS_BASE), super::cpu::rdmsr(MSR_GS_BASE))
}

/// Loads DS, ES, FS and GS with the null selector (the bases stay as they
/// are): at every switch to another environment, so that none sees
/// another's selectors — a program may load DS and ES (and FS and GS)
/// with selectors of its own, neither `sysret` nor `iretq` restores them,
/// and the next environment would read them (`hostile-segs`).
#[inline]
pub fn reset_selectors() {
    // SAFETY: loading the null selector into a data segment register is
    // always allowed in 64-bit mode, where DS and ES address nothing; the
    // kernel uses neither FS nor GS.
    unsafe {
        asm!("mov ds, {0:x}", "mov es, {0:x}", "mov fs, {0:x}", "mov gs, {0:x}", in(reg) 0u64, options(nostack, preserves_flags))
    }
}

/// Loads DS, ES, FS and GS with the null selector ([`reset_selectors`]) and
/// then the given FS and GS bases (each a canonical lower-half address,
/// checked by the caller's call).
pub fn set_bases(fs: u64, gs: u64) {
    const LOWER_HALF_END: u64 = 0x0000_8000_0000_0000;
    let fs = if fs < LOWER_HALF_END { fs } else { 0 };
    let gs = if gs < LOWER_HALF_END { gs } else { 0 };
    reset_selectors();
    // SAFETY: the kernel never uses FS or GS (no `swapgs`, no per-CPU
    // segment), so their bases are the environment's alone; canonical
    // bases cannot make WRMSR fault.
    unsafe {
        super::cpu::wrmsr(MSR_FS_BASE, fs);
        super::cpu::wrmsr(MSR_GS_BASE, gs);
    }
}
