//! The kernel's bookkeeping, exposed read-only to every environment (Xok's
//! principle: reading costs no system call). The frame table lives in
//! frame.rs; this module owns the environment table and the clock page and
//! maps all three at the addresses `oxok_abi::layout` fixes.

use super::access::ArchivePage;
use super::addr::{Pfn, PhysAddr};
use super::{PAGE_SIZE, align_up, frame, paging, phys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::EnvEntry;
use oxok_abi::Error;
use oxok_abi::frames::OWNER_KERNEL;
use oxok_abi::layout::{
    BOOT_ARCHIVE, CLOCK, Clock, ENV_TABLE, ENV_TABLE_ROWS, FRAME_TABLE, RUN_STATS, RunRow, SLOT_ROWS, SLOT_VECTOR,
    SYSINFO, SlotRow, SysInfo, VectorHeader,
};

/// Where one exposed table starts in physical memory, set once by [`init`].
struct TableAddr(AtomicU64);

impl TableAddr {
    const fn unset() -> TableAddr {
        TableAddr(AtomicU64::new(0))
    }

    fn set(&self, pa: PhysAddr) {
        self.0.store(pa.raw(), Ordering::Relaxed);
    }

    /// The table's address, `None` before [`init`] made it (frame 0 is
    /// never allocated, so 0 means unset). Inlined: every exposed write
    /// and every page a protect makes writable asks.
    #[inline]
    fn get(&self) -> Option<PhysAddr> {
        Some(PhysAddr::new(self.0.load(Ordering::Relaxed))).filter(|pa| pa.raw() != 0)
    }
}

static ENV_TABLE_PA: TableAddr = TableAddr::unset();
static CLOCK_PA: TableAddr = TableAddr::unset();
static SYSINFO_PA: TableAddr = TableAddr::unset();
static SLOTS_PA: TableAddr = TableAddr::unset();
/// The boot archive's pages: the first one's address and the byte length of
/// the whole pages from it (0: no archive).
static ARCHIVE_PA: TableAddr = TableAddr::unset();
static ARCHIVE_SPAN: AtomicU64 = AtomicU64::new(0);

/// Allocates the environment table, clock and system-information pages and
/// maps them, the frame table and the boot archive (`[start, end)`,
/// physical) into the exposed region. `env_frames` (the frames every
/// environment is charged for itself) is published in the
/// system-information page.
pub fn init(clock: Clock, archive: (u64, u64), env_frames: u64) -> Result<RunRows, Error> {
    let env_bytes = align_up((ENV_TABLE_ROWS * size_of::<EnvEntry>()) as u64, PAGE_SIZE);
    let env_pa = frame::with(|f| f.alloc_contiguous((env_bytes / PAGE_SIZE) as usize, 1, OWNER_KERNEL))
        .ok_or(Error::NoMemory)?;
    for i in 0..env_bytes / PAGE_SIZE {
        // SAFETY: frames just allocated to the kernel for this table.
        unsafe { frame::zero(env_pa.offset(i * PAGE_SIZE)) };
    }
    let clock_pa = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or(Error::NoMemory)?;
    ENV_TABLE_PA.set(env_pa);
    CLOCK_PA.set(clock_pa);
    set_clock(clock);

    let (table_pa, table_bytes) = frame::with(|f| f.table_phys());
    // SAFETY: kernel tables made to be read by every environment (the frame
    // table, the environment table, the clock), exposed read-only; the
    // exposures below are of the same kind.
    unsafe {
        paging::expose_range(FRAME_TABLE, table_pa, table_bytes)?;
        paging::expose_range(ENV_TABLE, env_pa, env_bytes)?;
        paging::expose_range(CLOCK, clock_pa, PAGE_SIZE)?;
    }

    let info_pa = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or(Error::NoMemory)?;
    let (start, end) = archive;
    let base = start & !(PAGE_SIZE - 1);
    let info = SysInfo {
        frame_count: frame::with(|f| f.len()) as u64,
        archive_offset: start - base,
        archive_len: end - start,
        console_in: 0,
        kernel_heap_used: 0,
        env_frames,
        restart_records: oxok_abi::BATCH_STEP,
        env_rows_used: 0,
    };
    SYSINFO_PA.set(info_pa);
    // SAFETY: a frame just allocated to the kernel, direct-mapped; users map
    // it read-only.
    unsafe { (phys::virt(info_pa) as *mut SysInfo).write_volatile(info) };
    // SAFETY: as above (the system-information page).
    unsafe { paging::expose_range(SYSINFO, info_pa, PAGE_SIZE)? };
    let slots_pa = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or(Error::NoMemory)?;
    // SAFETY: a frame just allocated to the kernel (already zeroed by
    // `alloc`; cleared again for clarity).
    unsafe { frame::zero(slots_pa) };
    SLOTS_PA.set(slots_pa);
    // SAFETY: as above (the slot vector).
    unsafe { paging::expose_range(SLOT_VECTOR, slots_pa, PAGE_SIZE)? };
    let run_bytes = align_up((ENV_TABLE_ROWS * size_of::<RunRow>()) as u64, PAGE_SIZE);
    let run_pa = frame::with(|f| f.alloc_contiguous((run_bytes / PAGE_SIZE) as usize, 1, OWNER_KERNEL))
        .ok_or(Error::NoMemory)?;
    for i in 0..run_bytes / PAGE_SIZE {
        // SAFETY: frames just allocated to the kernel for this table.
        unsafe { frame::zero(run_pa.offset(i * PAGE_SIZE)) };
    }
    // SAFETY: as above (the run statistics).
    unsafe { paging::expose_range(RUN_STATS, run_pa, run_bytes)? };
    if end > start {
        // SAFETY: the boot archive, public by design, exposed read-only.
        unsafe { paging::expose_range(BOOT_ARCHIVE, PhysAddr::new(base), align_up(end, PAGE_SIZE) - base)? };
        ARCHIVE_PA.set(PhysAddr::new(base));
        ARCHIVE_SPAN.store(align_up(end, PAGE_SIZE) - base, Ordering::Relaxed);
    }
    Ok(RunRows(run_pa))
}

/// The frame behind page `va` of the exposed boot archive (`va` page-aligned
/// in `[BOOT_ARCHIVE, BOOT_ARCHIVE + span)`), to be mapped **read-only**
/// elsewhere: every environment reads it at `BOOT_ARCHIVE` already, so
/// another read-only mapping of it gives nothing new, and a program's text
/// can be mapped where it runs instead of copied (the archive's files start
/// on page boundaries). `None` for any other address.
pub fn archive_page(va: u64) -> Option<ArchivePage> {
    let offset = va.checked_sub(BOOT_ARCHIVE).filter(|_| va.is_multiple_of(PAGE_SIZE))?;
    archive_at(offset)
}

/// Frame `pfn` if it holds part of the boot archive, to be mapped
/// read-only (as [`archive_page`]): how such a page, mapped in one space,
/// is shared on to another (a fork's child). Inlined: every protect that
/// adds write asks.
#[inline]
pub fn archive_frame(pfn: Pfn) -> Option<ArchivePage> {
    archive_at(pfn.addr().raw().checked_sub(ARCHIVE_PA.get()?.raw())?)
}

/// The archive's page `offset` bytes (page-aligned) from its first page,
/// if the archive reaches that far.
#[inline]
fn archive_at(offset: u64) -> Option<ArchivePage> {
    let base = ARCHIVE_PA.get()?;
    (offset < ARCHIVE_SPAN.load(Ordering::Relaxed)).then(|| ArchivePage::checked(base.offset(offset)))
}

/// Rewrites row `index` of the environment table.
pub fn set_env_row(index: usize, row: EnvEntry) {
    let Some(base) = ENV_TABLE_PA.get().filter(|_| index < ENV_TABLE_ROWS) else { return };
    // SAFETY: the table's frames are kernel-owned, direct-mapped, and index
    // is in bounds; user mappings of them are read-only, so the kernel is the
    // only writer, and it writes with the kernel lock held.
    unsafe { (phys::virt(base) as *mut EnvEntry).add(index).write_volatile(row) }
}

/// Rewrites only the `status` and `runs` fields of row `index` of the
/// environment table (what a switch changes; the other fields are
/// published by whatever changes them).
pub fn set_env_status(index: usize, status: u32, runs: u64) {
    let Some(base) = ENV_TABLE_PA.get().filter(|_| index < ENV_TABLE_ROWS) else { return };
    // SAFETY: as in `set_env_row`: kernel-owned, direct-mapped, index in
    // bounds, read-only to users; the two fields are written in place.
    unsafe {
        let row = (phys::virt(base) as *mut EnvEntry).add(index);
        (&raw mut (*row).status).write_volatile(status);
        (&raw mut (*row).runs).write_volatile(runs);
    }
}

/// Rewrites only the `frames` field of row `index` of the environment
/// table (what taking or giving back one owned frame changes).
pub fn set_env_frames(index: usize, frames: u32) {
    let Some(base) = ENV_TABLE_PA.get().filter(|_| index < ENV_TABLE_ROWS) else { return };
    // SAFETY: as in `set_env_row`: kernel-owned, direct-mapped, index in
    // bounds, read-only to users; the field is written in place.
    unsafe {
        let row = (phys::virt(base) as *mut EnvEntry).add(index);
        (&raw mut (*row).frames).write_volatile(frames);
    }
}

/// Rewrites the clock page.
pub fn set_clock(clock: Clock) {
    if let Some(pa) = CLOCK_PA.get() {
        // SAFETY: the clock frame is kernel-owned and direct-mapped; users
        // map it read-only.
        unsafe { (phys::virt(pa) as *mut Clock).write_volatile(clock) }
    }
}

/// Changes the clock page in place.
pub fn update_clock(f: impl FnOnce(&mut Clock)) {
    let Some(pa) = CLOCK_PA.get() else { return };
    // SAFETY: as in `set_clock`; the clock frame is written only by the
    // kernel, with interrupts off.
    unsafe {
        let p = phys::virt(pa) as *mut Clock;
        let mut c = p.read_volatile();
        f(&mut c);
        p.write_volatile(c);
    }
}

/// Changes the system-information page in place.
pub fn update_sysinfo(f: impl FnOnce(&mut SysInfo)) {
    let Some(pa) = SYSINFO_PA.get() else { return };
    // SAFETY: the page is kernel-owned and direct-mapped; users map it
    // read-only; the kernel writes it with interrupts off.
    unsafe {
        let p = phys::virt(pa) as *mut SysInfo;
        let mut i = p.read_volatile();
        f(&mut i);
        p.write_volatile(i);
    }
}

/// Rewrites the exposed slot vector: header and rows.
pub fn set_slot_vector(header: VectorHeader, rows: &[SlotRow]) {
    let Some(pa) = SLOTS_PA.get() else { return };
    let max = (PAGE_SIZE - (SLOT_ROWS - SLOT_VECTOR)) as usize / size_of::<SlotRow>();
    // SAFETY: the slot-vector frame is kernel-owned and direct-mapped; users
    // map it read-only. The header fits below `SLOT_ROWS` (asserted in the
    // ABI) and at most `max` rows fit in the page after it.
    unsafe {
        (phys::virt(pa) as *mut VectorHeader).write_volatile(header);
        let base = phys::virt(pa.offset(SLOT_ROWS - SLOT_VECTOR)) as *mut SlotRow;
        for (i, row) in rows.iter().take(max).enumerate() {
            base.add(i).write_volatile(*row);
        }
    }
}

/// Rewrites the slot vector's header and row `index` only (what a switch
/// that changed no slot's owner changes).
pub fn set_slot_row(header: VectorHeader, index: usize, row: SlotRow) {
    let max = (PAGE_SIZE - (SLOT_ROWS - SLOT_VECTOR)) as usize / size_of::<SlotRow>();
    let Some(pa) = SLOTS_PA.get().filter(|_| index < max) else { return };
    // SAFETY: as in `set_slot_vector`: the slot-vector frame is
    // kernel-owned, direct-mapped and read-only to users; `index < max`.
    unsafe {
        (phys::virt(pa) as *mut VectorHeader).write_volatile(header);
        let base = phys::virt(pa.offset(SLOT_ROWS - SLOT_VECTOR)) as *mut SlotRow;
        base.add(index).write_volatile(row);
    }
}

/// Rewrites only who runs in the exposed slot vector: the header's
/// `running` and `reason` and the `last_env` and `last_use` of row `index`,
/// `env` and `how` in both (what a donation within a slot changes).
pub fn set_slot_use(index: usize, env: u32, how: u32) {
    let max = (PAGE_SIZE - (SLOT_ROWS - SLOT_VECTOR)) as usize / size_of::<SlotRow>();
    let Some(pa) = SLOTS_PA.get().filter(|_| index < max) else { return };
    // Fields are written in place; the header is at the frame's start and
    // row `index` lies in the page after it.
    // SAFETY: as in `set_slot_vector`: the slot-vector frame is
    // kernel-owned, direct-mapped and read-only to users.
    unsafe {
        let header = phys::virt(pa) as *mut VectorHeader;
        (&raw mut (*header).running).write_volatile(env);
        (&raw mut (*header).reason).write_volatile(how);
        let r = (phys::virt(pa.offset(SLOT_ROWS - SLOT_VECTOR)) as *mut SlotRow).add(index);
        (&raw mut (*r).last_env).write_volatile(env);
        (&raw mut (*r).last_use).write_volatile(how);
    }
}

/// The run-statistics table (`layout::RUN_STATS`, one [`RunRow`] per
/// environment-table row) as the kernel's own CPU ledgers: the scheduler
/// keeps each environment's debt, strikes and counters in its row and
/// nowhere else, so what a program reads is what the kernel keeps, with no
/// copy made after a change. Only [`init`] makes one, once: a row borrowed
/// from it is the only reference to that row in the kernel (programs see
/// the table through their read-only mapping, and never while the kernel
/// runs, on this one CPU).
pub struct RunRows(PhysAddr);

impl RunRows {
    /// Row `index`, to change (`None` past the table).
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<&mut RunRow> {
        if index >= ENV_TABLE_ROWS {
            return None;
        }
        let row = (phys::virt(self.0) as *mut RunRow).wrapping_add(index);
        // SAFETY: kernel frames zeroed by `init` (any bits are a `RunRow`), aligned, direct-mapped, `index`
        // in bounds; borrowed from `self`, the table's only owner: the only reference to the row.
        Some(unsafe { &mut *row })
    }

    /// Rows `a` and `b`, two different ones, to change together (`None`
    /// if they are one row or either is past the table).
    #[inline]
    pub fn pair_mut(&mut self, a: usize, b: usize) -> Option<(&mut RunRow, &mut RunRow)> {
        if a == b || a >= ENV_TABLE_ROWS || b >= ENV_TABLE_ROWS {
            return None;
        }
        let base = phys::virt(self.0) as *mut RunRow;
        // SAFETY: as in `get_mut`, for each of two different in-bounds rows,
        // so the two references do not overlap.
        Some(unsafe { (&mut *base.wrapping_add(a), &mut *base.wrapping_add(b)) })
    }
}
