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

    /// Entries of a table one summary bit covers (see [`summary`]).
    pub const SUMMARY_SPAN: usize = 64;

    /// The summary bit `k` (0 to 7) of an upper-level entry: a bit the
    /// processor ignores in PML4, PDPT and PD entries that point to a table,
    /// and also when the self-map reads such an entry as a last-level one
    /// (bits 9–11 and 52–56: never the global, dirty or protection-key
    /// bits).
    pub const fn summary_bit(k: usize) -> u64 {
        const BITS: [u64; 8] = [1 << 9, 1 << 10, 1 << 11, 1 << 52, 1 << 53, 1 << 54, 1 << 55, 1 << 56];
        BITS[k % 8]
    }

    /// The summary an upper-level entry carries of the table it points to:
    /// bit `k` set if entries `64k..64k + 64` of that table may be present
    /// — the kernel sets it before it makes any of them present and never
    /// clears it while the table lives, so a clear bit means all 64 are
    /// absent. Walks skip what it rules out (the kernel's teardown, the
    /// libOS's walk through the self-map). In last-level entries these
    /// bits mean something else (the libOS's bits, or nothing).
    pub const fn summary(entry: u64) -> u8 {
        (((entry >> 9) & 0x7) | (((entry >> 52) & 0x1f) << 3)) as u8
    }

    const _: () = {
        let mut k = 0;
        while k < 8 {
            assert!(summary(summary_bit(k)) == 1 << k);
            assert!(summary_bit(k) & (ADDRESS_MASK | PRESENT | WRITABLE | USER | HUGE | DIRTY | NO_EXECUTE) == 0);
            assert!(summary_bit(k) & (1 << 8) == 0 && summary_bit(k) < 1 << 59);
            k += 1;
        }
    };
}

/// Where every environment reads its own page tables (read-only): PML4 slot
/// 254 points back at the PML4 itself. See [`pte_address`].
pub const UVPT: u64 = 0x7f00_0000_0000;

/// Base of the kernel's exposed tables (PML4 slot 255), read-only.
pub const EXPOSED_BASE: u64 = 0x7f80_0000_0000;
/// The frame table: `[FrameEntry; frame_count]` (see `abi::frames`).
pub const FRAME_TABLE: u64 = EXPOSED_BASE;
/// The environment table: `[EnvEntry; 1024]`.
pub const ENV_TABLE: u64 = EXPOSED_BASE + 0x4000_0000;
/// Rows in the environment table.
pub const ENV_TABLE_ROWS: usize = 1024;
/// The clock page ([`Clock`](crate::layout::Clock)).
pub const CLOCK: u64 = EXPOSED_BASE + 0x8000_0000;

/// The system-information page ([`SysInfo`]), read-only.
pub const SYSINFO: u64 = CLOCK + PAGE_SIZE;
/// The slot vector of CPU 0, read-only: a [`VectorHeader`] at offset 0
/// (the parameters, the current slot, who runs and why), then
/// [`SLOT_VECTOR_SLOTS`] [`SlotRow`]s at [`SLOT_ROWS`] (owner, generation,
/// who last ran in it and how). Rewritten by the kernel at every tick.
pub const SLOT_VECTOR: u64 = EXPOSED_BASE + 0x8000_2000;
/// The slot rows: `[SlotRow; SLOT_VECTOR_SLOTS]`.
pub const SLOT_ROWS: u64 = SLOT_VECTOR + 64;
/// Slots per CPU (fixed at build time; see `boot` for the cmdline).
pub const SLOT_VECTOR_SLOTS: usize = 32;
/// Per-environment run statistics, read-only: `[RunRow; ENV_TABLE_ROWS]`,
/// indexed like the environment table (low 10 bits of the id); a row whose
/// `env` differs from the id asked about is stale or empty. Ticks run,
/// owned/spare/donated turns, debt, strikes, overruns, deferrals. The
/// rows are the scheduler's own ledgers, current whenever a program runs.
pub const RUN_STATS: u64 = EXPOSED_BASE + 0x8010_0000;

pub use crate::slot_rows::{RunRow, SlotRow, USE_DONATED, USE_IDLE, USE_NONE, USE_OWNER, USE_SPARE, VectorHeader};

const _: () = assert!(64 + SLOT_VECTOR_SLOTS * core::mem::size_of::<SlotRow>() <= PAGE_SIZE as usize);
const _: () = assert!(core::mem::size_of::<VectorHeader>() <= 64);

/// The boot archive (a ustar file of programs), read-only, at
/// `BOOT_ARCHIVE + SysInfo::archive_offset`, `SysInfo::archive_len` bytes.
/// The libOS's exec loads programs from here.
pub const BOOT_ARCHIVE: u64 = EXPOSED_BASE + 0xc000_0000;

/// The system-information page at [`SYSINFO`].
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct SysInfo {
    /// Entries in the frame table (frames up to the highest RAM address).
    pub frame_count: u64,
    /// Byte offset of the archive from [`BOOT_ARCHIVE`] (its start need not be
    /// page-aligned).
    pub archive_offset: u64,
    /// Length of the boot archive in bytes (0: none).
    pub archive_len: u64,
    /// Bytes received on the console so far (a libOS sleeps on a predicate
    /// watching this word, then calls `console_read`).
    pub console_in: u64,
    /// Bytes of kernel heap in use (environment records, capability lists,
    /// predicates…), refreshed whenever an environment is created or its
    /// teardown completes: with the frame table, what an environment costs
    /// the kernel (Fluke's table 7) can be measured from user space.
    pub kernel_heap_used: u64,
    /// Frames charged to an account for each environment it holds: its
    /// page-table root, plus the kernel stack in the process execution
    /// model (`cargo xtask build --model process`); set at boot.
    pub env_frames: u64,
    /// Records `page_batch` applies between restart points (the cmdline
    /// word `restart_records=`; default [`BATCH_STEP`](crate::BATCH_STEP));
    /// `page_protect_range` changes eight times as many pages.
    pub restart_records: u64,
    /// Environment-table rows used so far: every row from this one on has
    /// never held an environment (rows are taken lowest first, so scans of
    /// the table stop here). Grows, never shrinks.
    pub env_rows_used: u64,
}

/// The application area: one page per environment that the environment may
/// write and the kernel reads (and, for the abort protocol, writes), made
/// when the environment asks (`app_area_make`). Its layout is
/// [`AppArea`]. The page is the kernel's: page calls refuse it.
pub const APP_AREA: u64 = USER_TOP - PAGE_SIZE;

/// Address (through [`UVPT`]) of the level-1 entry that maps `va`. Read it
/// only after checking the higher levels ([`pde_address`] and up) are
/// present, or the read faults.
pub const fn pte_address(va: u64) -> u64 {
    UVPT | ((va >> 9) & 0x7f_ffff_fff8)
}
/// Address of the level-2 entry covering `va`.
pub const fn pde_address(va: u64) -> u64 {
    pte_address(pte_address(va))
}
/// Address of the level-3 entry covering `va`.
pub const fn pdpte_address(va: u64) -> u64 {
    pte_address(pde_address(va))
}
/// Address of the level-4 entry covering `va`.
pub const fn pml4e_address(va: u64) -> u64 {
    pte_address(pdpte_address(va))
}

/// The clock page at [`CLOCK`].
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Clock {
    /// TSC ticks per second, calibrated at boot against the PIT.
    pub tsc_hz: u64,
    /// TSC at boot.
    pub boot_tsc: u64,
    /// Timer ticks since boot (advances once the CPU issue adds the timer).
    pub ticks: u64,
    /// Timer ticks per second (0 while there is no timer).
    pub tick_hz: u64,
    /// Wall-clock time at boot (`boot_tsc`), seconds since 1970-01-01 UTC,
    /// read from the real-time clock; 0 if it could not be read. The time
    /// now is this plus the TSC ticks since `boot_tsc` over `tsc_hz`.
    pub boot_unix: u64,
}

/// Entries in the repossession vector.
pub const REPOSSESS_SLOTS: usize = 64;
/// Entries in the record of repossessed frames.
pub const REPOSSESSED_SLOTS: usize = 128;

/// The application area at [`APP_AREA`].
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct AppArea {
    /// Robust critical-section flag: while it is non-zero at the end of the
    /// environment's slot budget, the slot-end upcall (or, with no slot-end
    /// entry, the preemption) is deferred, for at most
    /// `VectorHeader::critical_grace_ticks`; the deferred ticks are charged
    /// against its next slots.
    pub critical: u64,
    /// Number of valid entries in `repossess`.
    pub repossess_count: u64,
    /// Frame numbers the environment offers first when the kernel must
    /// take frames back.
    pub repossess: [u64; REPOSSESS_SLOTS],
    /// Written by the kernel: how many frames the abort protocol took.
    pub repossessed_count: u64,
    /// Written by the kernel: which (frame number, page address or 0).
    pub repossessed: [[u64; 2]; REPOSSESSED_SLOTS],
}

const _: () = assert!(core::mem::size_of::<AppArea>() <= PAGE_SIZE as usize);
