//! Everything that touches the x86-64 machine directly (in `oxok-hw`, the
//! one crate of the kernel that holds `unsafe`).

pub mod apic;
pub mod backtrace;
pub mod cpu;
pub mod fpu;
pub mod gdt;
pub mod handlers;
pub mod idt;
#[cfg(feature = "model-process")]
pub mod kstack;
pub mod msix;
pub mod pci;
pub mod pic;
pub mod qemu;
pub mod rtc;
pub mod serial;
pub mod stack;
pub mod syscall;
pub mod trapframe;
pub mod tsc;

/// Brings up the CPU tables: GDT and TSS, IDT, and the `syscall` MSRs.
pub fn init() {
    gdt::init();
    pic::init();
    idt::init();
    syscall::init();
    #[cfg(feature = "model-process")]
    kstack::init();
}
