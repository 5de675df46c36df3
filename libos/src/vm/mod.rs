//! User-level virtual memory (Aegis §6.2, Xok §5.2): demand-zero regions,
//! copy-on-write, protection changes and fork, all in the libOS on top of
//! the kernel's map calls and the exposed page tables.
//!
//! The kernel only checks bindings; every policy here is the program's:
//! * **Regions** ([`map_anon`], [`unmap`], [`protect`]) are ranges of the
//!   address space with a protection, backed on first touch by a fresh
//!   (zeroed) frame: the page-fault upcall finds the region and maps the
//!   frame. Nothing is allocated for pages never touched.
//! * **Copy-on-write** pages carry the libOS bit `pte::LIBOS_COW` and no
//!   write right. A write fault on one either re-enables write — when this
//!   process owns the frame and nobody else maps it (the exposed frame
//!   table says so), presenting its own environment capability, which
//!   covers the frames it owns — or copies the page into a fresh frame.
//! * **fork** ([`fork`]) shares every page with the child through
//!   `page_batch` SHARE records, read-only and copy-on-write where the
//!   parent could write, read from the exposed page tables.
//! * The Appel–Li primitives ([`appel`]) are the same calls, batched.
//!
//! [`init`] installs the page-fault handler; [`fork`] and [`map_anon`] call
//! it themselves. Faults this module does not resolve go to the handler
//! that was installed before it (or end the program, as without one).

mod cow;
mod fork;
mod region;

pub mod appel;

use crate::upcall::{self, Kind, Outcome};
use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ExceptionFrame, MapEntry};
use oxok_rt::fncell::FnCell;

pub use cow::stats as cow_stats;
pub use fork::{Fork, at_fork_child, fork};
pub use region::MAX_REGIONS;

/// Where [`map_anon`] places regions when no address is given: 56 TiB,
/// clear of program images, the heap (1 TiB), exec's scratch region
/// (0x5000_0000_0000) and stacks.
pub const MAP_BASE: u64 = 0x3800_0000_0000;
/// The end of the area [`map_anon`] places regions in.
pub const MAP_END: u64 = MAP_BASE + (1 << 40);

/// Page protections a region or a page can have. x86 user pages are
/// always readable while present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prot {
    /// Writes allowed.
    pub write: bool,
    /// Instruction fetches allowed.
    pub exec: bool,
}

impl Prot {
    /// Read-only data.
    pub const READ: Prot = Prot { write: false, exec: false };
    /// Read-write data.
    pub const READ_WRITE: Prot = Prot { write: true, exec: false };

    /// The page-table flags for this protection.
    pub const fn flags(self) -> u64 {
        (if self.write { pte::WRITABLE } else { 0 }) | if self.exec { 0 } else { pte::NO_EXECUTE }
    }
}

/// Why a VM operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmError {
    /// The kernel refused a call (out of frames, …).
    Kernel(oxok_abi::Error),
    /// The range is not page-aligned, empty, or outside user space.
    BadRange,
    /// The range overlaps an existing region.
    Overlap,
    /// No region covers the range.
    NoRegion,
    /// No room for another region (see [`MAX_REGIONS`]) or in the map area.
    Full,
}

impl From<oxok_abi::Error> for VmError {
    fn from(e: oxok_abi::Error) -> Self {
        VmError::Kernel(e)
    }
}

impl fmt::Display for VmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VmError::Kernel(e) => write!(f, "{e}"),
            VmError::BadRange => f.write_str("bad address range"),
            VmError::Overlap => f.write_str("range overlaps a region"),
            VmError::NoRegion => f.write_str("no region there"),
            VmError::Full => f.write_str("no room for another region"),
        }
    }
}

/// The page-fault handler in place before [`init`], to pass faults on to.
static PREVIOUS: FnCell<upcall::Handler> = FnCell::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the upcall runtime and this module's page-fault handler (once;
/// later calls do nothing). A handler set earlier for page faults keeps
/// receiving the faults this module does not resolve.
pub fn init() -> Result<(), oxok_abi::Error> {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    if let Some(h) = upcall::handler(Kind::PageFault) {
        PREVIOUS.set(h);
    }
    upcall::set_handler(Kind::PageFault, on_fault);
    upcall::install()
}

/// Page-fault error-code bit: the access was a write.
const FAULT_WRITE: u64 = 1 << 1;
/// Page-fault error-code bit: the page was present (a protection fault).
const FAULT_PRESENT: u64 = 1 << 0;

fn on_fault(frame: &mut ExceptionFrame) -> Outcome {
    let va = frame.addr & !(PAGE_SIZE - 1);
    let resolved = if frame.error & FAULT_PRESENT != 0 {
        frame.error & FAULT_WRITE != 0
            && match cow::resolve(va) {
                Ok(done) => done || appel::trap(va),
                Err(_) => out_of_memory(),
            }
    } else {
        region::find(va).is_some_and(|prot| cow::fill_zero(va, prot).is_ok())
    };
    if resolved {
        return Outcome::Resume;
    }
    match PREVIOUS.get() {
        Some(previous) => previous(frame),
        None => Outcome::Unhandled,
    }
}

/// A copy-on-write page that cannot be copied (no frame left, or the
/// account's limit reached): the process cannot go on, and its own exit
/// path would write to more such pages. End it here, touching no memory,
/// as `SIGKILL` would (Linux's out-of-memory killer).
fn out_of_memory() -> bool {
    const MSG: &[u8] = b"vm: out of memory for a copy-on-write page; exiting with status 137\n";
    let _ = crate::sys::console_write(MSG.as_ptr() as u64, MSG.len() as u64);
    let _ = crate::sys::env_exit(crate::process::SIGNALLED | (128 + crate::signal::SIGKILL) as u64);
    false
}

/// Makes the copy-on-write page at `va` writable now (a private copy, or
/// write re-enabled when nothing else maps its frame), as a write fault
/// would: for code that writes another program's memory in this address
/// space through checked copies (the Linux personality). `Ok(true)` if
/// the page is writable afterwards, `Ok(false)` if it is absent or simply
/// read-only.
pub fn break_cow(va: u64) -> Result<bool, VmError> {
    cow::resolve(va & !(PAGE_SIZE - 1)).map_err(VmError::from)
}

fn check_range(addr: u64, len: u64) -> Result<u64, VmError> {
    let end = addr.checked_add(len).ok_or(VmError::BadRange)?;
    let ok =
        len > 0 && addr.is_multiple_of(PAGE_SIZE) && len.is_multiple_of(PAGE_SIZE) && end <= oxok_abi::layout::APP_AREA;
    if ok { Ok(end) } else { Err(VmError::BadRange) }
}

/// Reserves a demand-zero region of `len` bytes (a multiple of the page
/// size) with protection `prot` in the map area; returns its address.
/// Pages get frames on first touch.
pub fn map_anon(len: u64, prot: Prot) -> Result<u64, VmError> {
    init()?;
    region::place(len, prot)
}

/// As [`map_anon`], at `addr` (which must be free of regions).
pub fn map_anon_at(addr: u64, len: u64, prot: Prot) -> Result<(), VmError> {
    check_range(addr, len)?;
    init()?;
    region::insert(addr, len, prot)
}

/// Removes the regions in `[addr, addr + len)` (whole regions only) and
/// unmaps their pages, returning the frames to the kernel.
pub fn unmap(addr: u64, len: u64) -> Result<(), VmError> {
    let end = check_range(addr, len)?;
    region::remove(addr, end)?;
    let mut batch = Batch::new(0);
    let mut result = Ok(());
    crate::exposed::walk(addr, end, |va, _| {
        if result.is_ok() {
            result = batch.push(MapEntry::unmap(va));
        }
    });
    result.and_then(|()| batch.flush())
}

/// Changes the protection of the regions in `[addr, addr + len)` and of
/// their present pages. Copy-on-write pages stay read-only (their next
/// write fault copies or re-enables them); other pages gaining write get
/// it back with this process's own capability.
pub fn protect(addr: u64, len: u64, prot: Prot) -> Result<(), VmError> {
    let end = check_range(addr, len)?;
    region::set_prot(addr, end, prot)?;
    protect_pages(addr, end, prot)
}

/// Applies `prot` to every present page in `[addr, end)` in batches.
pub(crate) fn protect_pages(addr: u64, end: u64, prot: Prot) -> Result<(), VmError> {
    let mut batch = Batch::new(0);
    let mut result = Ok(());
    crate::exposed::walk(addr, end, |va, entry| {
        let cow = entry & pte::LIBOS_COW;
        let flags = if cow != 0 { (prot.flags() & !pte::WRITABLE) | cow } else { prot.flags() };
        if result.is_ok() && entry & (pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_COW) != flags {
            result = batch.push(MapEntry::protect_with(va, flags, OWN_ENV_SLOT));
        }
    });
    result.and_then(|()| batch.flush())
}

/// The capability slot of the environment's own capability (it covers the
/// frames the environment owns).
pub const OWN_ENV_SLOT: u64 = 0;

/// Records for one `page_batch` target, sent in chunks.
pub(crate) struct Batch {
    env_slot: u64,
    records: [MapEntry; BATCH],
    len: usize,
}

const BATCH: usize = 64;

impl Batch {
    pub(crate) const fn new(env_slot: u64) -> Batch {
        Batch { env_slot, records: [MapEntry { va: 0, frame_slot: 0, flags: 0, src: 0 }; BATCH], len: 0 }
    }

    pub(crate) fn push(&mut self, record: MapEntry) -> Result<(), VmError> {
        if self.len == BATCH {
            self.flush()?;
        }
        self.records[self.len] = record;
        self.len += 1;
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> Result<(), VmError> {
        let n = core::mem::take(&mut self.len);
        if n == 0 {
            return Ok(());
        }
        crate::sys::page_batch(self.env_slot, self.records.as_ptr() as u64, n as u64)?;
        Ok(())
    }
}

/// Makes sure every page of `buf` is privately writable before the kernel
/// writes into it: a system call that fills a buffer on a copy-on-write
/// page would otherwise fail with `BadAddress` (the kernel honours the
/// read-only bit and never resolves copy-on-write itself).
pub fn prepare_write(buf: &mut [u8]) {
    let start = buf.as_ptr() as u64 & !(PAGE_SIZE - 1);
    let end = buf.as_ptr() as u64 + buf.len() as u64;
    let mut va = start;
    while va < end {
        if crate::exposed::pte(va).is_some_and(|e| e & pte::LIBOS_COW != 0) {
            let _ = cow::resolve(va);
        }
        va += PAGE_SIZE;
    }
}
