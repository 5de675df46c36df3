//! The GDT and the TSS.
//!
//! Layout (fixed by `syscall`/`sysret`, see `STAR` in [`super::syscall`]):
//! 0x08 kernel code, 0x10 kernel data, 0x18 empty (where `sysret` to 32-bit
//! code would find its code segment), 0x20 user data, 0x28 user code
//! (64-bit), 0x30 TSS.
//!
//! There is no 32-bit user code segment: `sysretq` never reads a
//! descriptor, and with one a program could far-return into compatibility
//! mode and run `syscall` there, which AMD CPUs and QEMU's TCG send to
//! `CSTAR` in ring 0 (Intel CPUs raise #UD). Loading selector 0x1b now
//! faults in ring 3 (`hostile-priv compat`).

use core::arch::asm;
use core::mem::size_of;

/// Kernel code selector.
pub const KERNEL_CS: u16 = 0x08;
/// Kernel data selector.
pub const KERNEL_DS: u16 = 0x10;
/// User data selector with RPL 3.
pub const USER_DS: u16 = 0x20 | 3;
/// User 64-bit code selector with RPL 3.
pub const USER_CS: u16 = 0x28 | 3;
const TSS_SEL: u16 = 0x30;

/// The 64-bit task-state segment: stack pointers for ring changes and IST.
#[repr(C, packed(4))]
struct Tss {
    _reserved0: u32,
    rsp: [u64; 3],
    _reserved1: u64,
    ist: [u64; 7],
    _reserved2: u64,
    _reserved3: u16,
    iomap_base: u16,
}

static mut TSS: Tss = Tss {
    _reserved0: 0,
    rsp: [0; 3],
    _reserved1: 0,
    ist: [0; 7],
    _reserved2: 0,
    _reserved3: 0,
    // No I/O bitmap: with IOPL 0, every port is closed to ring 3.
    iomap_base: size_of::<Tss>() as u16,
};

static mut GDT: [u64; 8] = [
    0,
    0x00AF_9A00_0000_FFFF, // kernel code 64
    0x00CF_9200_0000_FFFF, // kernel data
    0,                     // no 32-bit user code (module doc)
    0x00CF_F200_0000_FFFF, // user data
    0x00AF_FA00_0000_FFFF, // user code 64
    0,                     // TSS low
    0,                     // TSS high
];

#[repr(C, packed)]
struct Pointer {
    limit: u16,
    base: u64,
}

/// IST index (1-based, as the IDT names it) of the double-fault stack.
pub const IST_DOUBLE_FAULT: u8 = 1;
/// IST index of the NMI stack.
pub const IST_NMI: u8 = 2;
/// IST index of the machine-check stack.
pub const IST_MACHINE_CHECK: u8 = 3;

/// Sets the stack the CPU switches to on an interrupt or exception from
/// user mode (the process model gives each environment its own).
#[cfg(feature = "model-process")]
pub fn set_rsp0(top: u64) {
    // SAFETY: one CPU with interrupts off in the kernel: the CPU reads
    // `rsp0` only on the next entry from user mode.
    unsafe {
        let tss = &raw mut TSS;
        (*tss).rsp[0] = top;
    }
}

/// Loads the GDT, reloads every segment register and the task register.
pub fn init() {
    let tss_addr = (&raw const TSS) as u64;
    let limit = (size_of::<Tss>() - 1) as u64;
    let low = (limit & 0xffff)
        | ((tss_addr & 0xff_ffff) << 16)
        | (0x89 << 40) // present, 64-bit available TSS
        | (((limit >> 16) & 0xf) << 48)
        | (((tss_addr >> 24) & 0xff) << 56);
    let high = tss_addr >> 32;
    let ist = super::stack::ist_tops();

    // SAFETY: single-threaded boot; nothing else references GDT or TSS yet,
    // and we write through raw pointers without creating references.
    unsafe {
        let tss = &raw mut TSS;
        (*tss).rsp[0] = super::stack::kernel_stack_top();
        (*tss).ist[0] = ist[0];
        (*tss).ist[1] = ist[1];
        (*tss).ist[2] = ist[2];
        let gdt = &raw mut GDT;
        (*gdt)[6] = low;
        (*gdt)[7] = high;
    }

    let ptr = Pointer { limit: (size_of::<[u64; 8]>() - 1) as u16, base: (&raw const GDT) as u64 };
    // SAFETY: the GDT above is valid and 'static; the selectors we load name
    // its kernel code/data descriptors and the TSS descriptor just written.
    unsafe {
        asm!(
            "lgdt [{ptr}]",
            "push {cs}",
            "lea {tmp}, [rip + 2f]",
            "push {tmp}",
            "retfq",
            "2:",
            "mov ds, {ds:x}",
            "mov es, {ds:x}",
            "mov ss, {ds:x}",
            "xor {tmp:e}, {tmp:e}",
            "mov fs, {tmp:x}",
            "mov gs, {tmp:x}",
            "ltr {tss:x}",
            ptr = in(reg) &ptr,
            cs = in(reg) u64::from(KERNEL_CS),
            ds = in(reg) u64::from(KERNEL_DS),
            tss = in(reg) u64::from(TSS_SEL),
            tmp = out(reg) _,
        );
    }
}
