//! # oxok-hw — the kernel's hardware and memory primitives
//!
//! Everything of the Oxok kernel that needs `unsafe` or touches the machine
//! directly lives in this crate; the kernel proper (`oxok-kernel`) is
//! `#![forbid(unsafe_code)]` and reaches the machine only through the safe
//! API below (the pattern of Asterinas's OSTD).
//!
//! ## Public surface
//! - [`boot`]: the boot entry (PVH and Multiboot2 headers, the 32-bit
//!   trampoline), [`boot::Entry`] (the protocol's registers, made only by
//!   the trampoline's call) and [`boot::BootInfo`], one shape for what the
//!   boot loader handed over.
//! - [`arch`]: the x86-64 machine — GDT/TSS, IDT and entry stubs, `syscall`,
//!   [`arch::trapframe::TrapFrame`], PIC, local APIC timer, MSI-X, serial
//!   ports, TSC and RTC, x87/SSE state, backtraces, QEMU's exit device;
//!   [`arch::handlers::register`] is how the kernel installs the handlers
//!   the entry stubs call; with `model-process`, [`arch::kstack`]
//!   (per-environment kernel stacks and the stack switches).
//! - [`mem`]: the frame allocator and frame table ([`mem::frame`]), the only
//!   safe ways to a frame's bytes ([`mem::access::KernelFrame`],
//!   [`mem::access::FrameRef`], [`mem::access::ReadablePage`],
//!   [`mem::access::Mappable`]), address spaces and page tables
//!   ([`mem::paging`]; a mapping split into the tables made and the entry
//!   written, [`mem::paging::Leaf`]), the kernel heap, checked user copies ([`mem::user`],
//!   over [`mem::pod::Pod`] types), the exposed read-only tables
//!   ([`mem::exposed`]), the XN buffer cache's frame pool ([`mem::cache`])
//!   and the virtio DMA plumbing ([`mem::dma`]).
//! - [`dev`]: the virtio-net and virtio-blk drivers.
//! - [`entry!`]: names the kernel proper's entry function.
//!
//! No safe function hands out raw physical memory: raw ranges are reached
//! only through `unsafe fn`s private to this crate (`mem::phys::read`,
//! `mem::phys::bytes`, `mem::frame::zero`), as are port I/O, MSR and CR3
//! writes (`arch::cpu`).
//!
//! Frame numbers and physical addresses are types of their own
//! ([`mem::addr::Pfn`], [`mem::addr::PhysAddr`]); the frame table's API
//! takes and gives only them. Still unguarded: the frame table's
//! `Frames::free` and `Frames::entry_mut`, and the process model's stack switches (`arch::kstack::block`, `resume`,
//! `enter`, `set_entry_stack`) take stack addresses the kernel computes
//! from its `KStack`s; both are safe functions whose misuse by the kernel
//! would corrupt memory.
#![no_std]

extern crate alloc;

pub mod arch;
pub mod boot;
pub mod dev;
pub mod mem;

/// Names the kernel proper's entry: `entry!(start)` makes
/// `start(entry: boot::Entry) -> !` (the boot protocol's two registers, for
/// [`boot::BootInfo::from_entry`]) the function the boot trampoline calls
/// once in long mode, on the boot stack, with the direct map of the first
/// 4 GiB in place. Used once, in the kernel's `main.rs`: the one
/// `#[unsafe(no_mangle)]` in the kernel's binary comes from this macro
/// (it names the symbol `boot` calls), and the `unsafe_code` lint does not
/// look into another crate's macro.
#[macro_export]
macro_rules! entry {
    ($start:path) => {
        /// The kernel proper's entry, called by `oxok_hw::boot`.
        #[unsafe(no_mangle)]
        fn __oxok_kernel_start(entry: $crate::boot::Entry) -> ! {
            $start(entry)
        }
    };
}
