//! The direct map: all physical memory, mapped at [`DIRECT_BASE`] in every
//! address space (kernel half). The boot page tables already direct-map the
//! first 4 GiB; [`super::paging::init`] extends it to all RAM.

/// Virtual address of physical address 0.
pub const DIRECT_BASE: u64 = 0xFFFF_8000_0000_0000;

/// Kernel virtual address of physical address `pa`.
pub const fn virt(pa: u64) -> u64 {
    DIRECT_BASE + pa
}

/// Reads a `T` from physical address `pa` (unaligned reads allowed).
///
/// `pa` must be direct-mapped (RAM, or the first 4 GiB); anything else
/// faults in the kernel, which panics with a clear message — it cannot
/// corrupt memory. Only boot code and kernel-owned frames are read this way.
pub fn read<T: Copy>(pa: u64) -> T {
    // SAFETY: the direct map covers `pa` (see above), every bit pattern is
    // read as plain data by callers (`T` is an integer type in practice),
    // and read_unaligned has no alignment requirement.
    unsafe { core::ptr::read_unaligned(virt(pa) as *const T) }
}

/// The bytes of physical range `[pa, pa+len)` as a slice. For boot modules
/// the kernel reserved and never frees.
pub fn bytes(pa: u64, len: usize) -> &'static [u8] {
    // SAFETY: callers pass ranges of frames the kernel owns for ever
    // (reserved at boot), direct-mapped and never written after boot.
    unsafe { core::slice::from_raw_parts(virt(pa) as *const u8, len) }
}
