//! The Appel–Li workloads (Appel & Li, ASPLOS 1991; table 10 of the Aegis
//! paper), built on the libOS's Appel–Li API (`oxok_libos::vm::appel`) and
//! upcall runtime. Same work, counts and page choices as
//! `bench/linux/vm.c` (see `bench/README.md`): "protect" means read-only,
//! accesses are writes.
//!
//! The region is [`PAGES`] pages at [`BASE`], each with its own frame,
//! mapped and written before a workload runs and unmapped after it. The
//! program keeps no frame capabilities: adding write back presents its own
//! environment capability, which covers the frames it owns.
//!
//! * `appel_dirty`: `appel::dirty` of a random page (the dirty bit through
//!   the read-only self-map): no system call.
//! * `appel_prot1`: `appel::prot1` per page, every page once per pass.
//! * `appel_prot100`: `appel::prot_n` over the region, one
//!   `page_protect_range` — the counterpart of one `mprotect` over the range.
//! * `appel_unprot100`: `appel::unprot_n` over the region, one
//!   `page_protect_range` adding write with the environment capability.
//! * `appel_trap`: a write to a read-only page; the page-fault handler
//!   unprotects it (`appel::unprot1`) and resumes.
//! * `appel_appel1`: as `appel_trap`, the handler also protects the page it
//!   unprotected last time.
//! * `appel_appel2`: per pass, `appel::prot_n` over all pages, then one
//!   write per page in a random order, each unprotected by the handler.
//!
//! The untimed "unprotect the region" between batches is `unprot_n`.

use crate::cpu::{self, TOUCH_BYTES};
use crate::params::{APPEL_PAGES, Counts, RANDOM_SEED};
use crate::{measure, skip};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error, ExceptionFrame, MapEntry};
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::vm::appel as primitives;
use oxok_libos::{exposed, sys};

/// Pages in the region.
const PAGES: usize = APPEL_PAGES as usize;
/// Frames allocated and mapped per batch while setting the region up (each
/// capability is dropped once its frame is mapped).
const SETUP_CHUNK: usize = 25;
/// Where the region lies.
const BASE: u64 = 0x2400_0000_0000;
const END: u64 = BASE + PAGES as u64 * PAGE_SIZE;
/// Read-write and read-only ("protected") page flags.
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
/// `UNPROTECTED` when no page is.
const NONE: u64 = u64::MAX;

/// The workloads, in the order they run.
const NAMES: [&str; 7] =
    ["appel_dirty", "appel_prot1", "appel_prot100", "appel_unprot100", "appel_trap", "appel_appel1", "appel_appel2"];

/// appel1 mode: the handler also protects the page it unprotected last.
static APPEL1: AtomicBool = AtomicBool::new(false);
/// appel1: the one writable page ([`NONE`] at the start of a batch).
static UNPROTECTED: AtomicU64 = AtomicU64::new(NONE);
/// Error code of a call that failed inside the handler (0: none).
static FAILED: AtomicU64 = AtomicU64::new(0);
/// State of the xorshift64 generator, shared by all workloads as on Linux
/// (one generator for the whole program, so the page sequences match).
static RANDOM: AtomicU64 = AtomicU64::new(RANDOM_SEED);

/// Runs every Appel–Li workload, each on a fresh region.
pub fn run(c: &Counts) {
    if let Err(e) = upcall::install() {
        for name in NAMES {
            skip(name, e);
        }
        return;
    }
    upcall::set_handler(Kind::PageFault, on_page_fault);
    let b = c.batches;
    with_region(NAMES[0], c.appel_dirty, b, dirty);
    with_region(NAMES[1], c.appel_prot1, b, prot1);
    with_region(NAMES[2], c.appel_prot100, b, prot100);
    with_region(NAMES[3], c.appel_unprot100, b, unprot100);
    with_region(NAMES[4], c.appel_trap, b, trap);
    with_region(NAMES[5], c.appel_appel1, b, appel1);
    with_region(NAMES[6], c.appel_appel2, b, appel2);
    upcall::clear_handler(Kind::PageFault);
}

/// Sets the region up, measures `batch` on it, and takes it down again.
fn with_region(name: &str, ops: u32, batches: u32, batch: fn(u32) -> Result<u64, Error>) {
    match region_setup() {
        Ok(()) => measure(name, ops, batches, batch),
        Err(e) => skip(name, e),
    }
    if let Err(e) = region_teardown() {
        skip(name, e);
    }
}

/// Next value of the xorshift64 generator (as `next_random` in bench.c).
fn next_random() -> u64 {
    let mut x = RANDOM.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    RANDOM.store(x, Ordering::Relaxed);
    x
}

/// The address of page `i` of the region.
fn va(i: usize) -> u64 {
    BASE + i as u64 * PAGE_SIZE
}

/// Makes page `i` read-only.
fn protect(i: usize) -> Result<(), Error> {
    primitives::prot1(va(i))
}

/// Makes page `i` read-write.
fn unprotect(i: usize) -> Result<(), Error> {
    primitives::unprot1(va(i))
}

/// The whole region read-only: one `page_batch`.
fn protect_region() -> Result<(), Error> {
    primitives::prot_n(BASE, PAGES)
}

/// The whole region read-write: one `page_batch`.
fn unprotect_region() -> Result<(), Error> {
    primitives::unprot_n(BASE, PAGES)
}

/// Allocates the frames, maps every page read-write and writes it (as
/// `touched_region` in bench.c).
fn region_setup() -> Result<(), Error> {
    for first in (0..PAGES).step_by(SETUP_CHUNK) {
        let mut map = [MapEntry::default(); SETUP_CHUNK];
        for (k, m) in map.iter_mut().enumerate() {
            let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
            *m = MapEntry::map(va(first + k), slot, RW);
        }
        let mapped = sys::page_batch(0, map.as_ptr() as u64, SETUP_CHUNK as u64);
        for m in &map {
            let _ = sys::cap_drop(m.frame_slot);
        }
        mapped?;
    }
    for i in 0..PAGES {
        cpu::touch(va(i), 1);
    }
    handler_failure()
}

/// Unmaps whatever of the region is mapped; the kernel frees each frame as
/// its last mapping goes (no capability names it any more).
fn region_teardown() -> Result<(), Error> {
    let mut unmap = [MapEntry::default(); PAGES];
    let mut n = 0;
    for i in 0..PAGES {
        if exposed::pte(va(i)).is_some() {
            unmap[n] = MapEntry::unmap(va(i));
            n += 1;
        }
    }
    let unmapped = if n > 0 { sys::page_batch(0, unmap.as_ptr() as u64, n as u64).map(|_| ()) } else { Ok(()) };
    APPEL1.store(false, Ordering::Relaxed);
    UNPROTECTED.store(NONE, Ordering::Relaxed);
    unmapped
}

/// The error the handler recorded, if any (and clears it).
fn handler_failure() -> Result<(), Error> {
    match FAILED.swap(0, Ordering::SeqCst) {
        0 => Ok(()),
        code => Err(Error::from_code(code).unwrap_or(Error::Invalid)),
    }
}

/// Protection faults in the region: unprotect the page (appel1: protect
/// the previous one first) and resume.
fn on_page_fault(f: &mut ExceptionFrame) -> Outcome {
    let page = f.addr & !(PAGE_SIZE - 1);
    if !(BASE..END).contains(&page) {
        return Outcome::Unhandled;
    }
    let i = ((page - BASE) / PAGE_SIZE) as usize;
    let fixed = if APPEL1.load(Ordering::Relaxed) {
        match UNPROTECTED.swap(i as u64, Ordering::Relaxed) {
            NONE => Ok(()),
            prev => protect(prev as usize),
        }
        .and_then(|()| unprotect(i))
    } else {
        unprotect(i)
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

/// Is a random page dirty? Its entry, read through the self-map. Every
/// page was written, so every answer must be yes.
fn dirty(ops: u32) -> Result<u64, Error> {
    let mut dirty = 0u32;
    let t0 = cpu::now();
    for _ in 0..ops {
        let i = (next_random() % APPEL_PAGES as u64) as usize;
        dirty += u32::from(exposed::pte(va(i)).is_some_and(|e| e & pte::DIRTY != 0));
    }
    let cycles = cpu::now() - t0;
    if dirty != ops {
        return Err(Error::Invalid);
    }
    Ok(cycles)
}

/// Protect one page at a time, every page once per pass; unprotecting the
/// region between passes is not timed.
fn prot1(ops: u32) -> Result<u64, Error> {
    let mut total = 0;
    for _ in 0..ops / APPEL_PAGES {
        let t0 = cpu::now();
        for i in 0..PAGES {
            protect(i)?;
        }
        total += cpu::now() - t0;
        unprotect_region()?;
    }
    Ok(total)
}

/// Protect all pages with one call; unprotecting them is not timed.
fn prot100(ops: u32) -> Result<u64, Error> {
    let mut total = 0;
    for _ in 0..ops {
        let t0 = cpu::now();
        let r = protect_region();
        total += cpu::now() - t0;
        r?;
        unprotect_region()?;
    }
    Ok(total)
}

/// `bench loop appel_unprot100 N`: `n` protects and unprotects of the
/// whole region, on a fresh region (for counting instructions).
pub fn repeat_unprot100(n: u32) -> Result<u64, Error> {
    region_setup()?;
    let r = unprot100(n);
    region_teardown()?;
    r
}

/// Unprotect all pages; protecting them first is not timed.
fn unprot100(ops: u32) -> Result<u64, Error> {
    let mut total = 0;
    for _ in 0..ops {
        protect_region()?;
        let t0 = cpu::now();
        let r = unprotect_region();
        total += cpu::now() - t0;
        r?;
    }
    Ok(total)
}

/// Write the first page, made read-only (not timed) before each write:
/// protection fault, the handler unprotects, the write completes.
fn trap(ops: u32) -> Result<u64, Error> {
    let mut total = 0;
    for n in 0..ops {
        protect(0)?;
        let t0 = cpu::now();
        cpu::touch(va(0), u64::from(n));
        total += cpu::now() - t0;
        handler_failure()?;
    }
    Ok(total)
}

/// prot1+trap+unprot: every page read-only but the last faulting one; write
/// a random read-only page; the handler protects the previously faulting
/// page and unprotects this one.
fn appel1(ops: u32) -> Result<u64, Error> {
    protect_region()?;
    UNPROTECTED.store(NONE, Ordering::Relaxed);
    APPEL1.store(true, Ordering::Relaxed);
    let t0 = cpu::now();
    for n in 0..ops {
        let page = loop {
            let p = next_random() % APPEL_PAGES as u64;
            if p != UNPROTECTED.load(Ordering::Relaxed) {
                break p;
            }
        };
        cpu::touch(va(page as usize), u64::from(n));
    }
    let cycles = cpu::now() - t0;
    APPEL1.store(false, Ordering::Relaxed);
    let failed = handler_failure();
    unprotect_region()?;
    failed.map(|()| cycles)
}

/// protN+trap+unprot: per pass, protect all pages with one call and write
/// each once in a random order (shuffled untimed, as on Linux); the
/// handler unprotects the faulting page. One op is one page.
fn appel2(ops: u32) -> Result<u64, Error> {
    let mut order = [0usize; PAGES];
    let mut total = 0;
    for _ in 0..ops / APPEL_PAGES {
        for (i, o) in order.iter_mut().enumerate() {
            *o = i;
        }
        for i in (1..PAGES).rev() {
            let j = (next_random() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let t0 = cpu::now();
        let r = protect_region();
        for (n, &i) in order.iter().enumerate() {
            cpu::touch(va(i), n as u64);
        }
        total += cpu::now() - t0;
        r?;
        handler_failure()?;
    }
    Ok(total)
}
