//! Thin, documented wrappers over single privileged instructions.

use core::arch::asm;

/// Writes a byte to an I/O port.
pub(crate) fn outb(port: u16, value: u8) {
    // SAFETY: port output has no memory effects visible to Rust; the kernel
    // only names ports of devices it owns (serial, debug-exit, PIC).
    unsafe { asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack, preserves_flags)) }
}

/// Writes a 32-bit value to an I/O port.
pub(crate) fn outl(port: u16, value: u32) {
    // SAFETY: as for `outb`.
    unsafe { asm!("out dx, eax", in("dx") port, in("eax") value, options(nomem, nostack, preserves_flags)) }
}

/// Reads a byte from an I/O port.
pub(crate) fn inb(port: u16) -> u8 {
    let value: u8;
    // SAFETY: port input has no memory effects visible to Rust.
    unsafe { asm!("in al, dx", in("dx") port, out("al") value, options(nomem, nostack, preserves_flags)) }
    value
}

/// Reads a model-specific register.
pub fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: the kernel reads only architectural MSRs that exist on every
    // x86-64 CPU (EFER, STAR, LSTAR, SFMASK, FS/GS base).
    unsafe { asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Writes a model-specific register.
///
/// # Safety
/// The caller must know the new value keeps the machine consistent (e.g.
/// `LSTAR` must point at a valid entry stub).
pub(crate) unsafe fn wrmsr(msr: u32, value: u64) {
    // SAFETY: the caller upholds the contract above.
    unsafe {
        asm!("wrmsr", in("ecx") msr, in("eax") value as u32, in("edx") (value >> 32) as u32, options(nostack, preserves_flags))
    }
}

/// The faulting address of the last page fault.
pub fn cr2() -> u64 {
    let v: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { asm!("mov {}, cr2", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// The current page-table root.
pub fn cr3() -> u64 {
    let v: u64;
    // SAFETY: reading CR3 has no side effects.
    unsafe { asm!("mov {}, cr3", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// Switches to another page-table root.
///
/// # Safety
/// `root` must be the physical address of a valid PML4 that maps the kernel
/// (the upper half) exactly as the current one does.
pub(crate) unsafe fn set_cr3(root: u64) {
    // SAFETY: the caller upholds the contract above.
    unsafe { asm!("mov cr3, {}", in(reg) root, options(nostack, preserves_flags)) }
}

/// The time-stamp counter.
pub fn rdtsc() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: rdtsc only reads a counter.
    unsafe { asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// `cpuid` of `leaf` and `subleaf`: `[eax, ebx, ecx, edx]`.
pub fn cpuid(leaf: u32, subleaf: u32) -> [u32; 4] {
    let (eax, ebx, ecx, edx): (u32, u32, u32, u32);
    // SAFETY: cpuid only reads identification registers; `rbx`, which LLVM
    // reserves, is saved and restored around it.
    unsafe {
        asm!("mov {t:r}, rbx", "cpuid", "xchg {t:r}, rbx", t = out(reg) ebx, inout("eax") leaf => eax,
             inout("ecx") subleaf => ecx, out("edx") edx, options(nomem, nostack, preserves_flags))
    }
    [eax, ebx, ecx, edx]
}

/// Whether the CPU has `rdrand` (CPUID leaf 1, `ecx` bit 30): 0 not yet
/// asked, 1 no, 2 yes.
static HAS_RDRAND: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// A random word from the CPU's generator (`rdrand`), `None` if the CPU
/// has none or it gave nothing in ten tries (Intel's advice for a
/// transient underflow).
#[inline]
pub fn random() -> Option<u64> {
    use core::sync::atomic::Ordering::Relaxed;
    if HAS_RDRAND.load(Relaxed) != 2 {
        if HAS_RDRAND.load(Relaxed) == 1 {
            return None;
        }
        let [_, _, ecx, _] = cpuid(1, 0);
        HAS_RDRAND.store(if ecx & (1 << 30) != 0 { 2 } else { 1 }, Relaxed);
        return random();
    }
    for _ in 0..10 {
        let (value, ok): (u64, u8);
        // SAFETY: rdrand only writes its register and the carry flag; the
        // CPU has it (checked above).
        unsafe { asm!("rdrand {v}", "setc {ok}", v = out(reg) value, ok = out(reg_byte) ok, options(nomem, nostack)) }
        if ok != 0 {
            return Some(value);
        }
    }
    None
}

/// Stops the CPU for good: interrupts off, halt forever.
pub fn halt_forever() -> ! {
    loop {
        // SAFETY: cli; hlt only stops this CPU.
        unsafe { asm!("cli; hlt", options(nomem, nostack)) }
    }
}

/// Disables interrupts.
pub fn disable_interrupts() {
    // SAFETY: cli only masks interrupts on this CPU.
    unsafe { asm!("cli", options(nomem, nostack)) }
}

/// The current frame pointer (for backtraces).
pub fn frame_pointer() -> u64 {
    let v: u64;
    // SAFETY: reading rbp has no side effects.
    unsafe { asm!("mov {}, rbp", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// Invalidates the TLB entry for `va`.
pub fn invlpg(va: u64) {
    // SAFETY: invlpg only drops a cached translation.
    unsafe { asm!("invlpg [{}]", in(reg) va, options(nostack, preserves_flags)) }
}

/// CR4's global-pages bit.
const CR4_PGE: u64 = 1 << 7;
/// CR4's user-mode instruction prevention bit.
const CR4_UMIP: u64 = 1 << 11;
/// CR4's supervisor-mode execution prevention bit.
const CR4_SMEP: u64 = 1 << 20;

/// The control register CR4.
fn cr4() -> u64 {
    let cr4: u64;
    // SAFETY: reading CR4 has no side effects.
    unsafe { asm!("mov {}, cr4", out(reg) cr4, options(nomem, nostack, preserves_flags)) }
    cr4
}

/// Sets `bits` in CR4.
///
/// # Safety
/// The CPU must have the features `bits` turn on, and turning them on must
/// keep valid everything the kernel relies on.
unsafe fn set_cr4_bits(bits: u64) {
    // SAFETY: the caller upholds the contract above.
    unsafe { asm!("mov cr4, {}", in(reg) cr4() | bits, options(nostack, preserves_flags)) }
}

/// Whether CPUID leaf 7 (subleaf 0) sets bit `bit` of register `reg`
/// (0 `eax`, 1 `ebx`, 2 `ecx`, 3 `edx`).
fn has_leaf7(reg: usize, bit: u32) -> bool {
    cpuid(0, 0)[0] >= 7 && cpuid(7, 0).get(reg).is_some_and(|r| r & (1 << bit) != 0)
}

/// Whether CR4.SMEP is set ([`enable_smep`]).
pub fn smep_enabled() -> bool {
    cr4() & CR4_SMEP != 0
}

/// Sets CR4.SMEP where the CPU has it (CPUID leaf 7, `ebx` bit 7): the
/// kernel never runs code from a user page, so that a way into ring 0 at a
/// user address faults instead of running the program's code.
pub fn enable_smep() {
    if has_leaf7(1, 7) {
        // SAFETY: the CPU has SMEP; the kernel executes only its own
        // (supervisor) pages, so SMEP forbids only ring 0 running user pages.
        unsafe { set_cr4_bits(CR4_SMEP) }
    }
}

/// Whether CR4.UMIP is set ([`enable_umip`]).
pub fn umip_enabled() -> bool {
    cr4() & CR4_UMIP != 0
}

/// Sets CR4.UMIP where the CPU has it (CPUID leaf 7, `ecx` bit 2): `sgdt`,
/// `sidt`, `sldt`, `str` and `smsw` fault in ring 3 instead of showing the
/// kernel's tables' addresses and CR0 (whose TS bit says, under lazy x87
/// switching, whether another environment used the unit).
pub fn enable_umip() {
    if has_leaf7(2, 2) {
        // SAFETY: the CPU has UMIP, which changes only what those
        // instructions do in ring 3.
        unsafe { set_cr4_bits(CR4_UMIP) }
    }
}

/// Sets CR4.PGE so kernel mappings marked global survive CR3 switches.
pub fn enable_global_pages() {
    // SAFETY: every x86-64 CPU has PGE; it only changes TLB retention of
    // global entries, all of them kernel mappings identical in every
    // address space.
    unsafe { set_cr4_bits(CR4_PGE) }
}

/// Enables interrupts, waits for one, and disables them again (the kernel's
/// idle step). The interrupt's handler runs before this returns.
pub fn wait_for_interrupt() {
    // SAFETY: `sti; hlt` is atomic with respect to interrupts (the STI
    // shadow), so the wake-up cannot be lost; handlers of interrupts taken
    // in kernel mode touch only atomics.
    unsafe { asm!("sti; hlt; cli", options(nomem, nostack)) }
}

/// Reads a 32-bit value from an I/O port.
pub(crate) fn inl(port: u16) -> u32 {
    let value: u32;
    // SAFETY: port input has no memory effects visible to Rust.
    unsafe { asm!("in eax, dx", in("dx") port, out("eax") value, options(nomem, nostack, preserves_flags)) }
    value
}
