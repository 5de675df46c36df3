//! Safe readers of what the kernel exposes read-only in every address space
//! (Xok's "expose information"): the environment's own page tables through
//! the self-map at [`UVPT`], the frame table, the environment table, the
//! clock page, the system-information page and the boot archive, and the
//! application area (which the environment may write).
//!
//! Every reader first checks, through the page tables, that the address it
//! is about to read is mapped user-readable, so a reader never faults: an
//! index past the end of a table (or a kernel that does not expose the
//! table) reads as `None`. The frame table's length is not published;
//! entries past the last frame read as `None` when their page is absent and
//! as an all-zero (free) entry when they share its last page, so ask only
//! about frames the program obtained (`frame_alloc`, `cap_info`). (The one
//! race left: another environment holding write on this one unmaps a page
//! between the check and the read; the kernel never unmaps its exposed
//! tables.)

use crate::sys;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::EnvEntry;
use oxok_abi::Error;
use oxok_abi::frames::FrameEntry;
use oxok_abi::layout::{
    APP_AREA, AppArea, BOOT_ARCHIVE, CLOCK, Clock, ENV_TABLE, ENV_TABLE_ROWS, FRAME_TABLE, PAGE_SIZE, REPOSSESS_SLOTS,
    REPOSSESSED_SLOTS, RUN_STATS, RunRow, SLOT_ROWS, SLOT_VECTOR, SLOT_VECTOR_SLOTS, SYSINFO, SlotRow, SysInfo, UVPT,
    VectorHeader, pde_address, pdpte_address, pml4e_address, pte, pte_address,
};

/// End of the lower half: the page-table walk answers only below it.
const LOWER_HALF_END: u64 = 0x8000_0000_0000;

/// Reads one page-table entry through the self-map.
fn read_entry(at: u64) -> u64 {
    debug_assert!((UVPT..UVPT + (1 << 39)).contains(&at));
    // SAFETY: callers pass only addresses inside UVPT whose covering
    // higher-level entries they found present and user-accessible, so the
    // self-map makes `at` a readable, aligned u64.
    unsafe { core::ptr::read_volatile(at as *const u64) }
}

/// The eight page-table entries from `at` (8-aligned, inside a table the
/// caller found present and user-accessible through the self-map) folded
/// into one with `$op` (`or`, `and`): one operation from memory per entry.
macro_rules! fold_eight {
    ($op:literal, $at:expr) => {{
        let at: u64 = $at;
        debug_assert!((UVPT..UVPT + (1 << 39)).contains(&at));
        let folded: u64;
        // SAFETY: as `read_entry`: the eight entries lie in one page-table
        // page the caller found present and user-accessible through the
        // self-map; the block only reads them.
        unsafe {
            core::arch::asm!(
                "mov {a}, [{p}]",
                concat!($op, " {a}, [{p} + 8]"),
                concat!($op, " {a}, [{p} + 16]"),
                concat!($op, " {a}, [{p} + 24]"),
                concat!($op, " {a}, [{p} + 32]"),
                concat!($op, " {a}, [{p} + 40]"),
                concat!($op, " {a}, [{p} + 48]"),
                concat!($op, " {a}, [{p} + 56]"),
                p = in(reg) at,
                a = out(reg) folded,
                options(nostack, readonly),
            );
        }
        folded
    }};
}

/// True if none of the eight entries from `at` (8-aligned, inside a table
/// the caller found present) is present.
#[inline(always)]
fn eight_absent(at: u64) -> bool {
    fold_eight!("or", at) & pte::PRESENT == 0
}

/// True if `entry` is present and reachable from user mode.
fn usable(entry: u64) -> bool {
    entry & (pte::PRESENT | pte::USER) == pte::PRESENT | pte::USER
}

/// The entry that maps `va` in the caller's page tables, walking them top
/// down through the self-map and checking each level before reading the
/// next. Returns the leaf entry (level 1, or a large-page entry at level 2
/// or 3) if it is present; `None` if anything on the way is absent or not
/// user-accessible, or `va` is not a lower-half address.
pub fn pte(va: u64) -> Option<u64> {
    if va >= LOWER_HALF_END {
        return None;
    }
    let l4 = read_entry(pml4e_address(va));
    if !usable(l4) {
        return None;
    }
    let l3 = read_entry(pdpte_address(va));
    if !usable(l3) {
        return None;
    }
    if l3 & pte::HUGE != 0 {
        return Some(l3);
    }
    let l2 = read_entry(pde_address(va));
    if !usable(l2) {
        return None;
    }
    if l2 & pte::HUGE != 0 {
        return Some(l2);
    }
    let l1 = read_entry(pte_address(va));
    (l1 & pte::PRESENT != 0).then_some(l1)
}

/// True if every page of `[start, end)` is mapped user-readable (false for
/// an unaligned `start` or an `end` past the lower half): each 2 MiB
/// block's upper levels are walked once ([`pte`] of its first page asked
/// for), and its last-level entries are tested eight at a time where they
/// are aligned.
pub fn all_readable(start: u64, end: u64) -> bool {
    const BLOCK: u64 = 512 * PAGE_SIZE;
    if !start.is_multiple_of(PAGE_SIZE) || end > LOWER_HALF_END {
        return false;
    }
    let mut va = start;
    while va < end {
        let block_end = (va - va % BLOCK + BLOCK).min(end);
        // The walk of the block's first page checks every level above the
        // last (present, user-accessible); the last level's entries, that
        // page's among them, are tested below.
        let Some(first) = pte(va).filter(|&e| e & pte::USER != 0) else { return false };
        if first & pte::HUGE != 0 {
            // A large page (which the kernel does not make): page by page.
            if !(va..block_end).step_by(PAGE_SIZE as usize).all(readable) {
                return false;
            }
            va = block_end;
        }
        while va < block_end {
            let at = pte_address(va);
            if at.is_multiple_of(64) && va + 8 * PAGE_SIZE <= block_end {
                if !eight_usable(at) {
                    return false;
                }
                va += 8 * PAGE_SIZE;
            } else {
                if !usable(read_entry(at)) {
                    return false;
                }
                va += PAGE_SIZE;
            }
        }
    }
    true
}

/// True if all eight last-level entries from `at` (64-aligned, inside a
/// table the caller found present and user-accessible) are present and
/// user-accessible.
#[inline(always)]
fn eight_usable(at: u64) -> bool {
    usable(fold_eight!("and", at))
}

/// True if the page holding `va` is mapped user-readable.
pub fn readable(va: u64) -> bool {
    pte(va).is_some_and(|e| e & pte::USER != 0)
}

/// True if the page holding `va` is mapped user-writable.
pub fn writable(va: u64) -> bool {
    pte(va).is_some_and(|e| e & (pte::USER | pte::WRITABLE) == pte::USER | pte::WRITABLE)
}

/// The frame number a present mapping of `va` points at.
pub fn frame_of(va: u64) -> Option<u64> {
    pte(va).map(|e| (e & pte::ADDRESS_MASK) / PAGE_SIZE)
}

/// The aligned word at `va`, if its page is mapped user-readable — a read
/// that cannot fault, for walking memory a fault may have left in any
/// state (a backtrace's frame chain).
pub fn read_word(va: u64) -> Option<u64> {
    read_exposed::<u64>(va)
}

/// Reads a `T` at `addr` if the whole of it is mapped user-readable.
fn read_exposed<T: Copy>(addr: u64) -> Option<T> {
    let size = core::mem::size_of::<T>() as u64;
    let last = addr.checked_add(size.max(1) - 1)?;
    // One walk when the value lies in one page (every table row does).
    let one_page = addr / PAGE_SIZE == last / PAGE_SIZE;
    if !addr.is_multiple_of(core::mem::align_of::<T>() as u64) || !readable(addr) || (!one_page && !readable(last)) {
        return None;
    }
    // SAFETY: both ends of the aligned range are mapped user-readable (and a
    // `T` spans at most two pages); every `T` used here is plain old data.
    Some(unsafe { core::ptr::read_volatile(addr as *const T) })
}

/// Row `pfn` of the frame table: owner, generation, mapping and reference
/// counts. `None` if the row is not exposed (see the module documentation
/// for rows past the last frame).
pub fn frame_entry(pfn: u64) -> Option<FrameEntry> {
    let offset = pfn.checked_mul(core::mem::size_of::<FrameEntry>() as u64)?;
    read_exposed(FRAME_TABLE.checked_add(offset)?)
}

/// Row `index` (the low 10 bits of an id) of the environment table.
/// Without a page check per read: the table's pages are checked once
/// ([`env_table_exposed`]).
pub fn env_row(index: usize) -> Option<EnvEntry> {
    if index >= ENV_TABLE_ROWS || !env_table_exposed() {
        return None;
    }
    const _: () = assert!(ENV_TABLE.is_multiple_of(PAGE_SIZE));
    const _: () = assert!(core::mem::size_of::<EnvEntry>().is_multiple_of(core::mem::align_of::<EnvEntry>()));
    let row = (ENV_TABLE + (index * core::mem::size_of::<EnvEntry>()) as u64) as *const EnvEntry;
    // The table's pages were checked once and are never unmapped (the
    // kernel's exposed tables lie above `USER_TOP`, where no program maps
    // or unmaps); the asserts above make every row aligned.
    // SAFETY: so the row is mapped readable and aligned; `EnvEntry` is POD.
    let entry = unsafe { core::ptr::read_volatile(row) };
    Some(entry)
}

/// The environment-table rows that have ever held an environment, in row
/// order (empty ones included): every other row is empty
/// ([`SysInfo::env_rows_used`]; all rows without the page).
pub fn env_rows() -> impl Iterator<Item = EnvEntry> {
    let used = sysinfo().map_or(ENV_TABLE_ROWS as u64, |i| i.env_rows_used);
    (0..(used as usize).min(ENV_TABLE_ROWS)).filter_map(env_row)
}

/// The environment table row of environment `id`, if that environment is
/// alive (the row's id matches).
pub fn env_entry(id: u64) -> Option<EnvEntry> {
    let row = env_row(oxok_abi::env_id::row(id))?;
    (u64::from(row.id) == id && id != 0).then_some(row)
}

/// The `parent` of live environment `id` (0: started by the kernel), read
/// alone ([`env_entry`] for one field, on the Linux personality's
/// `getppid` path).
#[inline]
pub fn env_parent(id: u64) -> Option<u32> {
    env_word(id, core::mem::offset_of!(EnvEntry, parent))
}

/// The `status` of live environment `id` (`ENV_*`), read alone: a pipe's
/// or a waiting parent's question whether someone is still there.
#[inline]
pub fn env_status(id: u64) -> Option<u32> {
    env_word(id, core::mem::offset_of!(EnvEntry, status))
}

/// The program name in environment `id`'s row (its NUL padding
/// included), if the row holds `id`: four words read instead of the row.
pub fn env_name(id: u64) -> Option<[u8; 16]> {
    const AT: usize = core::mem::offset_of!(EnvEntry, name);
    const _: () = assert!(core::mem::size_of::<[u8; 16]>() == 16 && AT.is_multiple_of(4));
    let mut name = [0u8; 16];
    for (k, chunk) in name.chunks_exact_mut(4).enumerate() {
        chunk.copy_from_slice(&env_word(id, AT + 4 * k)?.to_le_bytes());
    }
    Some(name)
}

/// The `u32` at byte `at` of environment `id`'s row, if the row holds `id`
/// (its word 0): two words read instead of the whole row.
#[inline(always)]
fn env_word(id: u64, at: usize) -> Option<u32> {
    const _: () = assert!(core::mem::offset_of!(EnvEntry, id) == 0, "env_word checks the id as the row's word 0");
    if !at.is_multiple_of(4) || at + 4 > core::mem::size_of::<EnvEntry>() {
        return None;
    }
    let index = oxok_abi::env_id::row(id);
    if index >= ENV_TABLE_ROWS || !env_table_exposed() {
        return None;
    }
    let row = ENV_TABLE + (index * core::mem::size_of::<EnvEntry>()) as u64;
    // Every page of the table is mapped user-readable (`env_table_exposed`;
    // the kernel never unmaps its exposed tables, which lie above
    // `USER_TOP` where no program maps or unmaps).
    // SAFETY: so the row's words are readable; `at` is 4-byte aligned and
    // inside the row (checked above); any bits are a u32.
    let read = |at: u64| unsafe { core::ptr::read_volatile(at as *const u32) };
    let (row_id, word) = (read(row), read(row + at as u64));
    (u64::from(row_id) == id && id != 0).then_some(word)
}

/// True if the whole environment table is mapped user-readable. Checked
/// page by page once, then remembered: the kernel maps its exposed tables
/// in every address space at boot and never unmaps them, and they lie above
/// `USER_TOP`, where no program can map or unmap (so a fork child's answer
/// is its parent's).
#[inline]
fn env_table_exposed() -> bool {
    match ENV_TABLE_MAPPED.load(Ordering::Relaxed) {
        0 => check_env_table(),
        v => v == 1,
    }
}

/// [`env_table_exposed`]'s first answer: every page checked, the answer
/// remembered.
#[inline(never)]
fn check_env_table() -> bool {
    let bytes = (ENV_TABLE_ROWS * core::mem::size_of::<EnvEntry>()) as u64;
    let ok = all_readable(ENV_TABLE, ENV_TABLE + bytes.next_multiple_of(PAGE_SIZE));
    ENV_TABLE_MAPPED.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
    ok
}

/// [`env_table_exposed`]'s answer: 0 not yet asked, 1 mapped, 2 not.
static ENV_TABLE_MAPPED: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// The slot vector's header: parameters, current slot, who runs.
pub fn slot_header() -> Option<VectorHeader> {
    read_exposed(SLOT_VECTOR)
}

/// Row `i` of the slot vector: owner, generation, last use.
pub fn slot_row(i: usize) -> Option<SlotRow> {
    if i >= SLOT_VECTOR_SLOTS {
        return None;
    }
    read_exposed(SLOT_ROWS + (i * core::mem::size_of::<SlotRow>()) as u64)
}

/// The run statistics of environment `id`, if it is alive (the row's
/// environment matches).
pub fn run_stats(id: u64) -> Option<RunRow> {
    let index = oxok_abi::env_id::row(id);
    let row: RunRow = read_exposed(RUN_STATS + (index * core::mem::size_of::<RunRow>()) as u64)?;
    (u64::from(row.env) == id && id != 0).then_some(row)
}

/// The clock page.
pub fn clock() -> Option<Clock> {
    read_exposed(CLOCK)
}

/// The system-information page: frame-table length and where the boot
/// archive lies.
pub fn sysinfo() -> Option<SysInfo> {
    read_exposed(SYSINFO)
}

/// Records `page_batch` applies between restart points (the kernel's
/// `restart_records=` word; [`BATCH_STEP`](oxok_abi::BATCH_STEP) if unset).
pub fn restart_records() -> u64 {
    sysinfo().map_or(oxok_abi::BATCH_STEP, |i| i.restart_records)
}

/// The boot archive (a ustar file of every program), read-only, as the
/// kernel exposes it at [`BOOT_ARCHIVE`]. `None` if there is none or any of
/// its pages is not mapped user-readable (every page is checked, once: the
/// kernel never unmaps its exposed areas, so the answer is remembered).
pub fn boot_archive() -> Option<&'static [u8]> {
    let info = sysinfo()?;
    let start = BOOT_ARCHIVE.checked_add(info.archive_offset)?;
    let end = start.checked_add(info.archive_len)?;
    if info.archive_len == 0 || end > LOWER_HALF_END {
        return None;
    }
    let mapped = match ARCHIVE_MAPPED.load(Ordering::Relaxed) {
        0 => {
            let ok = all_readable(start - start % PAGE_SIZE, end);
            ARCHIVE_MAPPED.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
            ok
        }
        v => v == 1,
    };
    if !mapped {
        return None;
    }
    let len = usize::try_from(info.archive_len).ok()?;
    // SAFETY: every page of `[start, end)` is mapped user-readable, and the
    // kernel never unmaps or writes its exposed areas, so the bytes stay
    // valid and unchanging for the program's life.
    Some(unsafe { core::slice::from_raw_parts(start as *const u8, len) })
}

/// Whether `[addr, addr + len)` lies inside the exposed boot archive: a
/// loader's test that a program's bytes are the archive's own (and so can
/// be mapped from it rather than copied).
pub fn in_boot_archive(addr: u64, len: u64) -> bool {
    boot_archive().is_some_and(|a| {
        let start = a.as_ptr() as u64;
        start <= addr && addr.checked_add(len).is_some_and(|end| end <= start + a.len() as u64)
    })
}

/// [`boot_archive`]'s page check: 0 not yet made, 1 every page mapped, 2
/// not.
static ARCHIVE_MAPPED: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// The caller's environment id, asked of the kernel once and then answered
/// from the libOS (a procedure call, no system call).
#[inline]
pub fn self_id() -> u64 {
    match SELF_ID.load(Ordering::Relaxed) {
        0 => {
            let id = sys::env_self().map(|[id]| id).unwrap_or(0);
            SELF_ID.store(id, Ordering::Relaxed);
            id
        }
        id => id,
    }
}

/// The cached id of [`self_id`]; 0 until first asked. Fork-private (the
/// page-fault path reads and may set it).
#[unsafe(link_section = ".libos_private")]
static SELF_ID: AtomicU64 = AtomicU64::new(0);

/// Forgets the cached id (a child of `fork` runs with its parent's memory).
pub fn forget_self_id() {
    SELF_ID.store(0, Ordering::Relaxed);
}

/// Calls `f(va, entry)` for every present 4 KiB mapping in `[start, end)`
/// (page-aligned, lower half), in address order, skipping absent page
/// tables whole: each table is scanned once, top down through the
/// self-map, and a level is read only where the level above is present, so
/// a walk costs one pass over the tables that exist (absent entries are
/// skipped eight at a time). Large pages (never made for user space) are
/// skipped.
pub fn walk(start: u64, end: u64, mut f: impl FnMut(u64, u64)) {
    let end = end.min(LOWER_HALF_END);
    let start = start & !(PAGE_SIZE - 1);
    if start >= end {
        return;
    }
    let last = end - 1;
    let index = |va: u64, shift: u32| ((va >> shift) & 511) as usize;
    // The index range of level `shift` under the table covering `base`:
    // clipped to `[start, last]` at the edges.
    let range = |base: u64, span: u64, shift: u32| {
        let lo = if base < start { index(start, shift) } else { 0 };
        let hi = if base + span - 1 > last { index(last, shift) } else { 511 };
        (lo, hi)
    };
    let (lo4, hi4) = (index(start, 39), index(last, 39));
    // Below the PML4, each table is read only in the spans its entry's
    // summary names (`pte::summary`: the kernel marks a span before it
    // makes anything in it present).
    scan(pml4e_address(0), lo4, hi4, u8::MAX, true, |i4, e4| {
        let b4 = (i4 as u64) << 39;
        let (lo3, hi3) = range(b4, 1 << 39, 30);
        scan(pdpte_address(b4), lo3, hi3, pte::summary(e4), true, |i3, e3| {
            let b3 = b4 | ((i3 as u64) << 30);
            let (lo2, hi2) = range(b3, 1 << 30, 21);
            scan(pde_address(b3), lo2, hi2, pte::summary(e3), true, |i2, e2| {
                let b2 = b3 | ((i2 as u64) << 21);
                let (lo1, hi1) = range(b2, 1 << 21, 12);
                scan(pte_address(b2), lo1, hi1, pte::summary(e2), false, |i1, e| f(b2 | ((i1 as u64) << 12), e));
            });
        });
    });
}

/// Calls `each(i, entry)` for the present entries `lo..=hi` of the page
/// table whose entry 0 is at `table` in the self-map (`upper`: a table
/// above the last level, whose entries must also be user-accessible and
/// not large pages), looking only in the spans `summary` names. Runs of
/// absent entries go eight per test.
#[inline(always)]
fn scan(table: u64, lo: usize, hi: usize, summary: u8, upper: bool, mut each: impl FnMut(usize, u64)) {
    let at = |i: usize| read_entry(table + (i as u64) * 8);
    let mut i = lo;
    while i <= hi {
        let span = i / pte::SUMMARY_SPAN;
        if summary & (1 << span) == 0 {
            i = (span + 1) * pte::SUMMARY_SPAN;
            continue;
        }
        if i.is_multiple_of(8) && i + 7 <= hi && eight_absent(table + (i as u64) * 8) {
            i += 8;
            continue;
        }
        let e = at(i);
        let ok = if upper { usable(e) && e & pte::HUGE == 0 } else { e & pte::PRESENT != 0 };
        if ok {
            each(i, e);
        }
        i += 1;
    }
}

/// A copy of the whole application area, or `None` if it is not mapped.
pub fn app_area() -> Option<AppArea> {
    read_exposed(APP_AREA)
}

/// The application area, checked writable; made first (`app_area_make`)
/// if the environment has none yet.
fn app_ptr() -> Result<*mut AppArea, Error> {
    if !writable(APP_AREA) {
        match sys::app_area_make() {
            Ok(_) | Err(Error::Exists) => {}
            Err(e) => return Err(e),
        }
    }
    if writable(APP_AREA) { Ok(APP_AREA as *mut AppArea) } else { Err(Error::BadAddress) }
}

/// Publishes the repossession vector: the frames the kernel should take
/// first if a revocation runs out of time. `Invalid` if longer than
/// [`REPOSSESS_SLOTS`].
pub fn set_repossess(pfns: &[u64]) -> Result<(), Error> {
    if pfns.len() > REPOSSESS_SLOTS {
        return Err(Error::Invalid);
    }
    let area = app_ptr()?;
    // SAFETY: the application area is a mapped, writable page laid out as
    // `AppArea`; the count goes to zero first and is set last, so the kernel
    // never sees a count covering unwritten entries.
    unsafe {
        core::ptr::write_volatile(&raw mut (*area).repossess_count, 0);
        for (i, &pfn) in pfns.iter().enumerate() {
            core::ptr::write_volatile(&raw mut (*area).repossess[i], pfn);
        }
        core::ptr::write_volatile(&raw mut (*area).repossess_count, pfns.len() as u64);
    }
    Ok(())
}

/// How many frames the abort protocol has recorded as taken (the kernel's
/// count; entries past [`REPOSSESSED_SLOTS`] are not recorded).
pub fn repossessed_count() -> u64 {
    app_area().map_or(0, |a| a.repossessed_count)
}

/// Record `i` of the frames taken: (frame number, page address or 0).
pub fn repossessed(i: usize) -> Option<(u64, u64)> {
    if i >= REPOSSESSED_SLOTS {
        return None;
    }
    let a = app_area()?;
    (i < a.repossessed_count as usize).then(|| (a.repossessed[i][0], a.repossessed[i][1]))
}

/// Sets the robust-critical-section flag.
pub fn set_critical(on: bool) -> Result<(), Error> {
    let area = app_ptr()?;
    // SAFETY: as in `set_repossess`: a mapped, writable `AppArea`.
    unsafe { core::ptr::write_volatile(&raw mut (*area).critical, u64::from(on)) };
    Ok(())
}

/// Time since boot in TSC cycles, and the TSC rate, from the clock page and
/// `rdtsc` (no system call). `None` if the clock page is not exposed.
pub fn tsc_since_boot() -> Option<(u64, u64)> {
    let c = clock()?;
    Some((rdtsc().wrapping_sub(c.boot_tsc), c.tsc_hz))
}

/// Reads the time-stamp counter.
#[inline(always)]
pub fn rdtsc() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: rdtsc only reads the counter into edx:eax.
    unsafe {
        core::arch::asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Free frames in the machine, asked of the kernel (`mem_info`). Other
/// environments' exits change it at any time (the kernel releases a dead
/// environment's memory in bounded steps), so use [`owned_frames`] to
/// check for leaks.
pub fn free_frames() -> Option<u64> {
    sys::mem_info().ok().map(|[_, free, _]| free)
}

/// Frames the caller owns now (its row of the environment table).
pub fn owned_frames() -> Option<u32> {
    env_entry(self_id()).map(|e| e.frames)
}

/// The network table's header (NIC address and counters); `None` if the
/// kernel exposes no network table.
pub fn net_header() -> Option<oxok_abi::net::NetHeader> {
    read_exposed(oxok_abi::net::NET_TABLE)
}

/// The network table's row for ring number `ring` (`None` if the row is
/// not that ring's any more).
pub fn ring_row(ring: u64) -> Option<oxok_abi::net::RingRow> {
    ring_row_at((ring & 0xff) as usize).filter(|row| row.ring == ring)
}

/// Row `index` of the network table's rings, if a ring is bound there.
pub fn ring_row_at(index: usize) -> Option<oxok_abi::net::RingRow> {
    if index >= oxok_abi::net::RING_ROWS_MAX {
        return None;
    }
    let size = core::mem::size_of::<oxok_abi::net::RingRow>();
    let row: oxok_abi::net::RingRow =
        read_exposed(oxok_abi::net::NET_TABLE + oxok_abi::net::RING_ROWS + (index * size) as u64)?;
    (row.owner != 0).then_some(row)
}

/// Row `index` of the filter table, if a filter is installed there: its
/// head (owner, ring, id, the filter it refines, packets accepted) and its
/// atoms in the install call's encoding.
pub fn filter_row_at(index: usize) -> Option<(oxok_abi::net::FilterRow, oxok_abi::filter::RawFilter)> {
    if index >= oxok_abi::net::FILTER_ROWS_MAX {
        return None;
    }
    let va = oxok_abi::net::filter_row_va(index);
    let head: oxok_abi::net::FilterRow = read_exposed(va)?;
    if head.owner == 0 {
        return None;
    }
    let atoms: [u8; oxok_abi::filter::FILTER_BYTES] =
        read_exposed(va + core::mem::size_of::<oxok_abi::net::FilterRow>() as u64)?;
    Some((head, oxok_abi::filter::RawFilter::from_bytes(&atoms)))
}

/// XN's table header (`None` if the kernel exposes no XN table).
pub fn xn_header() -> Option<oxok_abi::xn::XnHeader> {
    read_exposed(oxok_abi::xn::XN_TABLE)
}

/// Row `i` of XN's exposed registry.
pub fn xn_row(i: usize) -> Option<oxok_abi::xn::XnRow> {
    if i >= oxok_abi::xn::XN_ROWS_MAX {
        return None;
    }
    read_exposed(oxok_abi::xn::XN_TABLE + oxok_abi::xn::XN_ROWS + (i * 32) as u64)
}

/// Root row `i` of XN's table.
pub fn xn_root(i: usize) -> Option<oxok_abi::xn::XnRoot> {
    if i >= oxok_abi::xn::MAX_ROOTS {
        return None;
    }
    read_exposed(oxok_abi::xn::XN_TABLE + oxok_abi::xn::XN_ROOTS + (i * 16) as u64)
}

/// File-system row `i` of XN's table.
pub fn xn_fs(i: usize) -> Option<oxok_abi::xn::XnFs> {
    if i >= oxok_abi::xn::MAX_FS {
        return None;
    }
    read_exposed(oxok_abi::xn::XN_TABLE + oxok_abi::xn::XN_FSS + (i * 16) as u64)
}

/// Word `i` of XN's exposed free map.
pub fn xn_free_word(i: u64) -> Option<u64> {
    if i >= (oxok_abi::xn::XN_FREE_MAP_PAGES as u64) * 512 {
        return None;
    }
    read_exposed(oxok_abi::xn::XN_TABLE + oxok_abi::xn::XN_FREE_MAP + i * 8)
}
