//! Fixed user-space addresses. The kernel refuses to map anything the user
//! asks for at or above [`USER_TOP`]; everything above it in the lower half is
//! the kernel's read-only exposure of its own bookkeeping.

/// Size of a page and of a frame.
pub const PAGE_SIZE: u64 = 4096;

/// Where user programs are linked (`libos/user.ld`).
pub const PROGRAM_BASE: u64 = 0x40_0000;

/// First address a user may not map. Everything from here to the end of the
/// lower half belongs to the kernel's exposed, read-only areas.
pub const USER_TOP: u64 = 0x7f00_0000_0000;

/// Initial stack of a program loaded from the boot archive: the top address
/// (exclusive) and its size.
pub const STACK_TOP: u64 = 0x7000_0000_0000;
/// Size of the initial stack, in bytes.
pub const STACK_SIZE: u64 = 64 * 1024;

/// True if `[addr, addr+len)` lies wholly in the part of the address space a
/// user may map. Zero-length ranges are accepted anywhere below `USER_TOP`.
pub const fn user_range_ok(addr: u64, len: u64) -> bool {
    match addr.checked_add(len) {
        Some(end) => addr < USER_TOP && end <= USER_TOP,
        None => false,
    }
}

/// Page-table-entry bits as user space sees them in its exposed page tables.
pub mod pte {
    /// Present.
    pub const PRESENT: u64 = 1 << 0;
    /// Writable.
    pub const WRITABLE: u64 = 1 << 1;
    /// Accessible from user mode.
    pub const USER: u64 = 1 << 2;
    /// Accessed (set by the CPU).
    pub const ACCESSED: u64 = 1 << 5;
    /// Dirty (set by the CPU).
    pub const DIRTY: u64 = 1 << 6;
    /// Large page (never in user mappings).
    pub const HUGE: u64 = 1 << 7;
    /// Reserved for the libOS: copy-on-write.
    pub const LIBOS_COW: u64 = 1 << 9;
    /// Reserved for the libOS: shared with another environment.
    pub const LIBOS_SHARED: u64 = 1 << 10;
    /// Reserved for the libOS: free for its own use.
    pub const LIBOS_SPARE: u64 = 1 << 11;
    /// All bits the libOS may set freely.
    pub const LIBOS_BITS: u64 = LIBOS_COW | LIBOS_SHARED | LIBOS_SPARE;
    /// No execute.
    pub const NO_EXECUTE: u64 = 1 << 63;
    /// The physical address field.
    pub const ADDRESS_MASK: u64 = 0x000f_ffff_ffff_f000;
}
