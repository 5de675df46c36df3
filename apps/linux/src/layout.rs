//! Where the personality puts a Linux program's memory. Linux programs
//! (`ET_EXEC`) keep their own addresses (0x400000 and up, below
//! [`IMAGE_LIMIT`]); the personality itself is linked at [`LINUX_BASE`]
//! (`linux.ld`) — 1.75 GiB, above any program image and its break, but
//! below 2 GiB because every user program is compiled for a code model
//! that puts static addresses in 32-bit signed immediates — and its libOS
//! keeps its heap at 1 TiB, its regions at 56 TiB, exec's scratch at
//! 80 TiB and its stack below 112 TiB.

/// The personality's link address (`apps/linux/linux.ld`).
pub const LINUX_BASE: u64 = 0x7000_0000;
/// The end of the range reserved for the personality's image.
pub const LINUX_END: u64 = 0x8000_0000;

/// Every segment of a Linux program must end below this (the personality
/// comes next).
pub const IMAGE_LIMIT: u64 = LINUX_BASE;

/// Where a position-independent program (static-pie) is loaded: 256 GiB,
/// above the personality and below [`FIXED_LIMIT`].
pub const PIE_BASE: u64 = 0x40_0000_0000;

/// Fixed mappings may go anywhere below this but the personality's range
/// (1 TiB, where the libOS heap starts).
pub const FIXED_LIMIT: u64 = 0x100_0000_0000;

/// Where `mmap` places mappings without `MAP_FIXED`: 32 TiB up to 48 TiB.
pub const MMAP_BASE: u64 = 0x2000_0000_0000;
/// End of the `mmap` area.
pub const MMAP_END: u64 = 0x3000_0000_0000;

/// The top (exclusive) of the Linux program's stack: 88 TiB.
pub const STACK_TOP: u64 = 0x5800_0000_0000;
/// Its size (demand-zero below the pages the initial stack fills).
pub const STACK_SIZE: u64 = 8 << 20;

/// The session's terminal page (`groups.rs`): 92 TiB, between the
/// program's stack and the libOS's.
pub const TERMINAL_PAGE: u64 = 0x5c00_0000_0000;

/// The most the program break may grow past the image.
pub const BRK_MAX: u64 = 1 << 30;

/// True if `[start, end)` is somewhere a Linux program may have memory:
/// below [`FIXED_LIMIT`] outside the personality (image, break, fixed
/// mappings), the `mmap` area or the stack.
pub fn guest_range(start: u64, end: u64) -> bool {
    start < end
        && ((end <= FIXED_LIMIT && (end <= LINUX_BASE || LINUX_END <= start))
            || (MMAP_BASE <= start && end <= MMAP_END)
            || (STACK_TOP - STACK_SIZE <= start && end <= STACK_TOP))
}
