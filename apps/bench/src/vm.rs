//! Memory and exception workloads, over the libOS upcall runtime.
//!
//! * `exception_upcall` (README): a write to an absent page; the page-fault
//!   handler maps the page read-write (one `page_map`) and resumes; taking
//!   the page away again before each write (`page_unmap`) is not timed.
//! * `demand_zero_fault` (README): the first write to each page of a fresh
//!   range of `OPS` pages; the handler allocates a zeroed frame, maps it and
//!   drops the capability (a capability list holds 64 slots, a batch needs
//!   512 frames: the frames stay owned, unmapped, until the program ends).
//!   Unmapping the range is not timed.
//! * Oxok only: `exception_upcall_ud2` (a `ud2` the handler steps over: the
//!   bare upcall round trip), `page_map` and `page_unmap` (single calls),
//!   `page_batch_100` (one 100-record `page_batch`).

use crate::cpu::{self, TOUCH_BYTES};
use crate::params::Counts;
use crate::{measure, median, report, skip};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error, ExceptionFrame, MapEntry};
use oxok_libos::upcall::{self, Kind, Outcome, VECTOR_INVALID_OPCODE};
use oxok_libos::{exposed, sys};

const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
/// The page `exception_upcall` writes.
const EXC_VA: u64 = 0x2000_0000_0000;
/// Where `demand_zero_fault` touches pages.
const DZ_BASE: u64 = 0x2100_0000_0000;
/// Where `page_map` maps.
const PM_BASE: u64 = 0x2200_0000_0000;
/// Where `page_batch_100` maps.
const PB_BASE: u64 = 0x2300_0000_0000;
/// Records per `page_batch_100` call.
const BATCH_RECORDS: usize = 100;

/// The frame `exception_upcall`'s handler maps.
static EXC_SLOT: AtomicU64 = AtomicU64::new(u64::MAX);
/// End (exclusive) of the demand-zero range of the current batch.
static DZ_END: AtomicU64 = AtomicU64::new(DZ_BASE);
/// Error code of a call that failed inside a handler (0: none).
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Runs every workload of this module.
pub fn run(c: &Counts) {
    if let Err(e) = upcall::install() {
        for name in ["exception_upcall", "demand_zero_fault", "exception_upcall_ud2"] {
            skip(name, e);
        }
    } else {
        upcall::set_handler(Kind::PageFault, on_page_fault);
        upcall::set_handler(Kind::Exception, on_exception);
        match sys::frame_alloc(ANY_FRAME) {
            Ok([slot, _]) => {
                EXC_SLOT.store(slot, Ordering::SeqCst);
                measure("exception_upcall", c.exception_upcall, c.batches, exception_upcall);
                let _ = sys::page_unmap(0, EXC_VA);
                let _ = sys::frame_free(slot);
            }
            Err(e) => skip("exception_upcall", e),
        }
        measure("demand_zero_fault", c.demand_zero_fault, c.batches, demand_zero_fault);
        measure("exception_upcall_ud2", c.exception_upcall, c.batches, exception_upcall_ud2);
    }
    match sys::frame_alloc(ANY_FRAME) {
        Ok([slot, _]) => {
            page_map_unmap(slot, c.page_map, c.batches);
            measure("page_batch_100", c.page_batch, c.batches, |ops| page_batch_100(slot, ops));
            let _ = sys::frame_free(slot);
        }
        Err(e) => {
            for name in ["page_map", "page_unmap", "page_batch_100"] {
                skip(name, e);
            }
        }
    }
}

/// The error a handler recorded, if any (and clears it).
fn handler_failure() -> Result<(), Error> {
    match FAILED.swap(0, Ordering::SeqCst) {
        0 => Ok(()),
        code => Err(Error::from_code(code).unwrap_or(Error::Invalid)),
    }
}

/// Page faults: the `exception_upcall` page, or the demand-zero range.
fn on_page_fault(f: &mut ExceptionFrame) -> Outcome {
    let page = f.addr & !(PAGE_SIZE - 1);
    let fixed = if page == EXC_VA {
        sys::page_map(0, EXC_SLOT.load(Ordering::Relaxed), EXC_VA, RW).map(|_| ())
    } else if (DZ_BASE..DZ_END.load(Ordering::Relaxed)).contains(&page) {
        demand_zero(page)
    } else {
        return Outcome::Unhandled;
    };
    if let Err(e) = fixed {
        // Could not fix it: remember why and step over the store (only
        // ever one of ours).
        if cpu::code_at::<3>(f.regs.rip) != Some(TOUCH_BYTES) {
            return Outcome::Unhandled;
        }
        FAILED.store(e.code(), Ordering::SeqCst);
        f.regs.rip += TOUCH_BYTES.len() as u64;
    }
    Outcome::Resume
}

/// Maps a fresh zeroed frame at `page` with one `FRESH` record (the
/// kernel allocates, charges and maps it; no capability is made).
fn demand_zero(page: u64) -> Result<(), Error> {
    let record = [oxok_libos::abi::MapEntry::fresh(page, RW)];
    sys::page_batch(0, record.as_ptr() as u64, 1).map(|_| ())
}

/// Steps over `ud2`.
fn on_exception(f: &mut ExceptionFrame) -> Outcome {
    if f.vector == VECTOR_INVALID_OPCODE && cpu::code_at::<2>(f.regs.rip) == Some([0x0f, 0x0b]) {
        f.regs.rip += 2;
        Outcome::Resume
    } else {
        Outcome::Unhandled
    }
}

fn exception_upcall(ops: u32) -> Result<u64, Error> {
    let mut total = 0;
    for i in 0..ops {
        if exposed::pte(EXC_VA).is_some() {
            sys::page_unmap(0, EXC_VA)?;
        }
        let t0 = cpu::now();
        cpu::touch(EXC_VA, u64::from(i));
        total += cpu::now() - t0;
        handler_failure()?;
    }
    Ok(total)
}

fn demand_zero_fault(ops: u32) -> Result<u64, Error> {
    let end = DZ_BASE + u64::from(ops) * PAGE_SIZE;
    DZ_END.store(end, Ordering::SeqCst);
    let t0 = cpu::now();
    for i in 0..u64::from(ops) {
        cpu::touch(DZ_BASE + i * PAGE_SIZE, i);
    }
    let cycles = cpu::now() - t0;
    DZ_END.store(DZ_BASE, Ordering::SeqCst);
    let failed = handler_failure();
    unmap_range(DZ_BASE, end)?;
    failed.map(|_| cycles)
}

fn exception_upcall_ud2(ops: u32) -> Result<u64, Error> {
    let t0 = cpu::now();
    for _ in 0..ops {
        cpu::ud2();
    }
    Ok(cpu::now() - t0)
}

/// Unmaps every mapped page of `[start, end)`, in batches.
fn unmap_range(start: u64, end: u64) -> Result<(), Error> {
    let mut records = [MapEntry::default(); 64];
    let mut va = start;
    while va < end {
        let mut n = 0;
        while va < end && n < records.len() {
            if exposed::pte(va).is_some() {
                records[n] = MapEntry::unmap(va);
                n += 1;
            }
            va += PAGE_SIZE;
        }
        if n > 0 {
            sys::page_batch(0, records.as_ptr() as u64, n as u64)?;
        }
    }
    Ok(())
}

/// `page_map` and `page_unmap`: per batch, `ops` single maps of one frame
/// at consecutive pages, then `ops` single unmaps; each timed as a whole.
fn page_map_unmap(slot: u64, ops: u32, batches: u32) {
    let mut maps = [0f64; crate::MAX_BATCHES];
    let mut unmaps = [0f64; crate::MAX_BATCHES];
    let n = (batches as usize).clamp(1, crate::MAX_BATCHES);
    let ops = ops.max(1);
    for b in 0..=n {
        match map_then_unmap(slot, ops) {
            // Batch 0 is the warm-up.
            Ok((m, u)) if b > 0 => {
                maps[b - 1] = m as f64 / f64::from(ops);
                unmaps[b - 1] = u as f64 / f64::from(ops);
            }
            Ok(_) => {}
            Err(e) => {
                let _ = unmap_range(PM_BASE, PM_BASE + u64::from(ops) * PAGE_SIZE);
                skip("page_map", e);
                skip("page_unmap", e);
                return;
            }
        }
    }
    report("page_map", median(&mut maps[..n]), "cycles");
    report("page_unmap", median(&mut unmaps[..n]), "cycles");
}

fn map_then_unmap(slot: u64, ops: u32) -> Result<(u64, u64), Error> {
    let t0 = cpu::now();
    for i in 0..u64::from(ops) {
        sys::page_map(0, slot, PM_BASE + i * PAGE_SIZE, RW)?;
    }
    let t1 = cpu::now();
    for i in 0..u64::from(ops) {
        sys::page_unmap(0, PM_BASE + i * PAGE_SIZE)?;
    }
    Ok((t1 - t0, cpu::now() - t1))
}

/// `n` single maps then `n` single unmaps of one frame, untimed (`bench
/// loop page_map N`, for counting instructions).
pub fn repeat_page_map(n: u32) -> Result<u64, Error> {
    let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
    let done = map_then_unmap(slot, n).map(|_| 0);
    let _ = sys::frame_free(slot);
    done
}

/// `n` demand-zero faults (`demand_zero_fault`'s work, untimed: `bench
/// loop demand_zero_fault N`, for counting instructions).
pub fn repeat_demand_zero(n: u32) -> Result<u64, Error> {
    upcall::install()?;
    upcall::set_handler(Kind::PageFault, on_page_fault);
    demand_zero_fault(n)
}

/// `bench loop exception_upcall_ud2 N`: `n` `ud2`s the handler steps over
/// (for counting instructions).
pub fn repeat_ud2(n: u32) -> Result<u64, Error> {
    upcall::install()?;
    upcall::set_handler(Kind::Exception, on_exception);
    exception_upcall_ud2(n)
}

/// `bench loop exception_upcall N`: `n` writes to an absent page the
/// handler maps (for counting instructions).
pub fn repeat_exception(n: u32) -> Result<u64, Error> {
    upcall::install()?;
    upcall::set_handler(Kind::PageFault, on_page_fault);
    let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
    EXC_SLOT.store(slot, Ordering::SeqCst);
    let r = exception_upcall(n);
    let _ = sys::page_unmap(0, EXC_VA);
    let _ = sys::frame_free(slot);
    r
}

/// `ops` calls of one 100-record `page_batch` each (mapping one frame at
/// 100 pages); the unmapping batch after each is not timed.
fn page_batch_100(slot: u64, ops: u32) -> Result<u64, Error> {
    let mut map = [MapEntry::default(); BATCH_RECORDS];
    let mut unmap = [MapEntry::default(); BATCH_RECORDS];
    for (i, (m, u)) in map.iter_mut().zip(unmap.iter_mut()).enumerate() {
        let va = PB_BASE + i as u64 * PAGE_SIZE;
        *m = MapEntry::map(va, slot, RW);
        *u = MapEntry::unmap(va);
    }
    let mut total = 0;
    for _ in 0..ops {
        let t0 = cpu::now();
        let r = sys::page_batch(0, map.as_ptr() as u64, BATCH_RECORDS as u64);
        total += cpu::now() - t0;
        if let Err(e) = r {
            let _ = unmap_range(PB_BASE, PB_BASE + BATCH_RECORDS as u64 * PAGE_SIZE);
            return Err(e);
        }
        sys::page_batch(0, unmap.as_ptr() as u64, BATCH_RECORDS as u64)?;
    }
    Ok(total)
}
