//! The direct map: all physical memory, mapped at [`DIRECT_BASE`] in every
//! address space (kernel half). The boot page tables already direct-map the
//! first 4 GiB; [`super::paging::init`] extends it to all RAM.

use super::addr::PhysAddr;

/// Virtual address of physical address 0.
pub const DIRECT_BASE: u64 = 0xFFFF_8000_0000_0000;

/// Kernel virtual address of physical address `pa`.
pub const fn virt(pa: PhysAddr) -> u64 {
    DIRECT_BASE + pa.raw()
}

/// Reads a `T` from physical address `pa` (unaligned reads allowed).
///
/// Safe code outside `mem` reaches frames through
/// [`super::access::KernelFrame`] and [`super::access::FrameRef`] instead.
///
/// # Safety
/// `pa..pa+size_of::<T>()` must be direct-mapped (RAM, or the first 4 GiB)
/// memory the caller may read (boot structures, a frame it owns or checked
/// in the frame table), and every bit pattern must be a valid `T` (an
/// integer type).
pub(crate) unsafe fn read<T: Copy>(pa: PhysAddr) -> T {
    // SAFETY: the caller guarantees the range is mapped, readable and any
    // bits are a valid `T`; read_unaligned has no alignment requirement.
    unsafe { core::ptr::read_unaligned(virt(pa) as *const T) }
}

/// The bytes of physical range `[pa, pa+len)` as a slice.
///
/// # Safety
/// The range must be direct-mapped RAM that is not written for as long as
/// the slice lives (`'static`: boot modules the kernel reserved and never
/// frees), or the caller must drop the slice before anything writes it.
pub(crate) unsafe fn bytes(pa: PhysAddr, len: usize) -> &'static [u8] {
    // SAFETY: the caller guarantees the range is mapped and unchanging for
    // the slice's life.
    unsafe { core::slice::from_raw_parts(virt(pa) as *const u8, len) }
}
