//! Processes, first piece: starting a program from the boot archive in a new
//! environment ([`spawn`]) and waiting for it to end ([`wait`]) — ExOS's
//! exec, done entirely in the libOS with no privilege.
//!
//! The parent builds the child's address space the way the kernel's own boot
//! loader does (`kernel/src/loader.rs`), so a program starts the same way
//! whoever loads it: every page of every PT_LOAD segment in its own frame
//! with the segment's permissions, a stack of
//! [`STACK_SIZE`](oxok_abi::layout::STACK_SIZE) bytes below
//! [`STACK_TOP`](oxok_abi::layout::STACK_TOP), and a System V initial stack
//! (argc, argv, NULL, envp, NULL, auxv, strings at the top). Each frame with
//! content is allocated with `frame_alloc_for`, so the **child** owns it and
//! it is freed when the child dies; the parent fills it through a
//! short-lived mapping in its own space (the [`SCRATCH`] region), maps it
//! into the child and drops its capability. Zero pages (bss, the stack below
//! its top page) are `FRESH` records: a zeroed frame the child owns, made
//! and mapped by the kernel in the same batch. Mappings go in batches (`page_batch`) of [`CHUNK`] pages.
//!
//! Reserved by this module in the caller's environment: the virtual region
//! `[SCRATCH, SCRATCH + CHUNK pages)` and wakeup-predicate index
//! [`WAIT_PRED`]. Neither [`spawn`] nor [`wait`] is reentrant (do not call
//! them from an upcall handler that may interrupt one of them).

mod options;
mod programs;
mod scratch;
mod stack;
mod wait;

use crate::fd::IoError;
use crate::fd::inherit::{self, ChildTable};
use crate::sys;
use core::fmt;
use oxok_abi::layout::{PAGE_SIZE, STACK_SIZE, STACK_TOP, USER_TOP, pte};
use oxok_abi::{ANY_FRAME, EnvState, Error, MapEntry, Regs, UNMAP};
use oxok_elf::{Elf, ElfError, Segment};
use stack::InitialStack;
pub use wait::{ExitStatus, wait};

pub use options::{MAX_CALLS, SpawnOptions};

/// Start of the scratch region where [`spawn`] maps a child's frames into
/// the caller's own space while it fills them: far above programs (linked at
/// `PROGRAM_BASE`, 4 MiB), below stacks (`STACK_TOP`, 0x7000_0000_0000) and
/// clear of the addresses the scenario programs use (0x1000_0000_0000 and
/// the like). Every scratch mapping is removed before `spawn` returns.
pub const SCRATCH: u64 = 0x5000_0000_0000;

/// Where [`fill_frame`] maps the frame it fills (one page, in the scratch
/// region's neighbourhood but clear of what `spawn` uses, the file
/// buffer page (`fs::buffer`) and the open-file table (`fs::ftable`)).
pub const FILL_VA: u64 = 0x5400_0000_0000;

/// Copies `bytes` (at most a page) into the frame named by capability
/// `frame_cap`, through a temporary writable mapping at [`FILL_VA`] in the
/// caller's own space, removed before returning. For a program building
/// another environment's memory (the checkpointer's restore). Not
/// reentrant.
pub fn fill_frame(frame_cap: u64, bytes: &[u8]) -> Result<(), Error> {
    if bytes.len() as u64 > oxok_abi::layout::PAGE_SIZE {
        return Err(Error::Invalid);
    }
    sys::page_map(0, frame_cap, FILL_VA, pte::WRITABLE | pte::NO_EXECUTE)?;
    let r = scratch::copy_in(FILL_VA, 0, bytes);
    sys::page_unmap(0, FILL_VA)?;
    r
}

/// Pages filled and mapped per batch; also the most frame capabilities
/// [`spawn`] holds at once (the caller's capability list needs that many
/// free slots, plus one for the child).
pub const CHUNK: usize = 16;

/// The wakeup-predicate index [`wait`] uses. The libOS reserves it; programs
/// that install their own predicates should use indices 0–2.
pub const WAIT_PRED: u64 = 3;

/// The rflags a new program starts with: interrupts enabled (IF) and the
/// always-one bit, as the kernel's loader sets them.
const START_RFLAGS: u64 = 0x202;

/// A child environment started by [`spawn`]. The caller holds a full
/// capability for it in its own list, slot `slot`, until it
/// [`release`](Child::release)s it.
#[derive(Debug, PartialEq, Eq)]
pub struct Child {
    /// The caller's capability slot for the child environment.
    pub slot: u64,
    /// The child's environment id.
    pub id: u64,
}

impl Child {
    /// The child's id as the capability in `slot` names it now (it changes
    /// when the process tree is restored from a checkpoint; `id` is the id
    /// at spawn), or `id` if the slot no longer names an environment.
    pub fn live_id(&self) -> u64 {
        match sys::cap_info(self.slot) {
            Ok([kind, number, _]) if kind == oxok_abi::cap_kind::ENV => number,
            _ => self.id,
        }
    }

    /// Drops the caller's capability for the child (the child, if still
    /// running, keeps running). Do this after [`wait`], or the capability
    /// list fills up: it has only [`CAP_SLOTS`](oxok_abi::CAP_SLOTS) slots.
    pub fn release(self) -> Result<(), Error> {
        sys::cap_drop(self.slot).map(|_| ())
    }

    /// Starts a child spawned with [`SpawnOptions::held`] (`env_run`).
    pub fn start(&self) -> Result<(), Error> {
        sys::env_run(self.slot).map(|_| ())
    }
}

/// Why [`spawn`] failed. Whatever it had built is gone again: the child
/// environment is destroyed, its frames freed, the scratch region and the
/// caller's capability list as they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpawnError {
    /// No such program in the boot archive (or no boot archive).
    NotFound,
    /// The file is not an executable this loader accepts.
    BadExecutable(ElfError),
    /// argv does not fit in the top page of the stack, or an argument
    /// contains a NUL byte.
    BadArguments,
    /// The kernel refused a call (memory, capability slots, …).
    Kernel(Error),
    /// A descriptor could not be passed to the child (see
    /// [`SpawnOptions`] and [`File::spec`](crate::fd::File::spec)).
    Descriptor(IoError),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NotFound => write!(f, "not in the boot archive"),
            SpawnError::BadExecutable(e) => write!(f, "bad executable: {e}"),
            SpawnError::BadArguments => write!(f, "arguments longer than a page or containing NUL"),
            SpawnError::Kernel(e) => write!(f, "{e}"),
            SpawnError::Descriptor(e) => write!(f, "cannot pass a descriptor: {e}"),
        }
    }
}

impl From<Error> for SpawnError {
    fn from(e: Error) -> Self {
        SpawnError::Kernel(e)
    }
}

/// Starts program `name` from the boot archive in a new environment with
/// argument vector `argv` (complete, as in `execve`: `argv[0]` is by
/// convention the program's name) and the caller's environment variables,
/// and makes it runnable. It runs after the environments already waiting for the CPU.
///
/// Checked before anything is created: the file exists, is an executable
/// [`Elf::parse`] accepts below `USER_TOP`, and argv fits. That argv and
/// the environment fit together is known only once the descriptors'
/// variables are written for the new child; if not, it is destroyed again.
///
/// The child gets the caller's descriptors (see [`spawn_with`]).
pub fn spawn(name: &str, argv: &[&str]) -> Result<Child, SpawnError> {
    spawn_with(name, argv, &SpawnOptions::new())
}

/// As [`spawn`], with the child's descriptors and environment as `opts`
/// says (the caller's own table is left as it is).
pub fn spawn_with(name: &str, argv: &[&str], opts: &SpawnOptions<'_>) -> Result<Child, SpawnError> {
    let child = spawn_image_with(program(name).ok_or(SpawnError::NotFound)?, argv, opts)?;
    // A server this process looks up by name is now the one it started.
    crate::fs::locate::started(name, child.id);
    Ok(child)
}

/// The file `name` in the boot archive, if there is an archive and it holds
/// that file (looked up in an index made once, [`programs`]).
pub fn program(name: &str) -> Option<&'static [u8]> {
    programs::find(name)
}

/// As [`spawn`], for an executable already in memory (`image`, the whole
/// ELF file). The image is only read; the child gets copies. The child's
/// environment is the caller's ([`crate::environ`]).
pub fn spawn_image(image: &[u8], argv: &[&str]) -> Result<Child, SpawnError> {
    spawn_image_with(image, argv, &SpawnOptions::new())
}

/// As [`spawn_image`], with the environment `envp` (`KEY=value` strings).
pub fn spawn_image_env(image: &[u8], argv: &[&str], envp: &[&str]) -> Result<Child, SpawnError> {
    spawn_image_with(image, argv, SpawnOptions::new().env(envp))
}

/// As [`spawn_image`], with `opts`: the one path every spawn takes.
///
/// The child's descriptors travel as `OXOK_FD<n>` variables
/// ([`crate::fd::inherit`]) whose text each object writes knowing the
/// child (a pipe end maps its frame into it), so the environment is
/// completed between `env_create` and writing the initial stack. Whatever
/// fails after `env_create` destroys the child again.
pub fn spawn_image_with(image: &[u8], argv: &[&str], opts: &SpawnOptions<'_>) -> Result<Child, SpawnError> {
    let elf = Elf::parse(image, USER_TOP).map_err(SpawnError::BadExecutable)?;
    // argv alone must fit before anything is created.
    InitialStack::new(&elf, argv, &[]).ok_or(SpawnError::BadArguments)?;
    let table = opts.table().map_err(SpawnError::Descriptor)?;
    let grants = Grants { calls: opts.calls(), principal: opts.principal_of() };
    match opts.explicit_env() {
        Some(envp) => create(&elf, argv, envp, &table, &grants, !opts.is_held()),
        None => crate::environ::with_strs(|envp| create(&elf, argv, envp, &table, &grants, !opts.is_held())),
    }
}

/// Capabilities a child gets before it runs, besides what
/// [`crate::callcap::pass_on`] gives every child.
struct Grants {
    /// Call capabilities for these environments (0: none).
    calls: [u64; options::MAX_CALLS],
    /// A principal.
    principal: Option<u64>,
}

/// Creates the child, completes its environment `envp` with the
/// descriptors of `table`, and builds it; starts it if `start`.
fn create(
    elf: &Elf<'_>,
    argv: &[&str],
    envp: &[&str],
    table: &ChildTable,
    grants: &Grants,
    start: bool,
) -> Result<Child, SpawnError> {
    let [slot, id] = sys::env_create()?;
    // Name the child after its program (argv[0]), for logs and the table.
    if let Some(name) = argv.first() {
        let name = &name.as_bytes()[..name.len().min(32)];
        let _ = sys::env_rename(slot, name.as_ptr() as u64, name.len() as u64);
    }
    // It may send what its parent may (narrower if it asks later).
    crate::net::pass_template(slot);
    let built = inherit::with_child_env(id, slot, table, envp, |envp| {
        let initial = InitialStack::new(elf, argv, envp).ok_or(SpawnError::BadArguments)?;
        build(slot, elf, &initial, grants, start).map_err(SpawnError::Kernel)
    });
    match built.map_err(SpawnError::Descriptor).and_then(|r| r) {
        Ok(()) => Ok(Child { slot, id }),
        Err(e) => {
            // Frees every frame the child owns and its mappings of shared
            // ones; the scratch region is already empty (`Loader::flush`
            // unmaps it whatever happens).
            let _ = sys::env_destroy(slot);
            Err(e)
        }
    }
}

/// Fills the new environment `child` (capability slot) with the program and
/// its stack, sets its registers and (if `start`) makes it runnable.
fn build(child: u64, elf: &Elf<'_>, initial: &InitialStack<'_>, grants: &Grants, start: bool) -> Result<(), Error> {
    let mut loader = Loader::new(child);
    for segment in elf.segments() {
        load_segment(&mut loader, &segment)?;
    }
    let stack_flags = pte::WRITABLE | pte::NO_EXECUTE;
    let top = STACK_TOP - PAGE_SIZE;
    let mut page = STACK_TOP - STACK_SIZE;
    while page < top {
        // Fresh frames are zeroed: nothing to write below the top page.
        loader.add(page, stack_flags, Fill::Zero)?;
        page += PAGE_SIZE;
    }
    loader.add(top, stack_flags, Fill::Stack(initial))?;
    loader.flush()?;

    let regs = Regs { rip: elf.entry(), rsp: initial.sp(), rflags: START_RFLAGS, ..Regs::default() };
    let state = EnvState { regs, ..EnvState::default() };
    sys::env_set_state(child, &raw const state as u64)?;
    crate::callcap::pass_on(child);
    for &env in grants.calls.iter().filter(|&&e| e != 0) {
        crate::callcap::grant_call(env, child);
    }
    if let Some(p) = grants.principal {
        // Best effort, as the call capabilities: without it the child acts
        // for no principal.
        let _ = crate::principal::give(child, p);
    }
    if start {
        sys::env_run(child)?;
    }
    Ok(())
}

/// Queues every page of one PT_LOAD segment.
fn load_segment<'a>(loader: &mut Loader<'a>, seg: &Segment<'a>) -> Result<(), Error> {
    let mut flags = 0;
    if seg.flags.write {
        flags |= pte::WRITABLE;
    }
    if !seg.flags.exec {
        flags |= pte::NO_EXECUTE;
    }
    // `Elf::parse` checked the segment lies below USER_TOP, so none of this
    // overflows; the checks only keep it that way.
    let end = seg.vaddr.checked_add(seg.mem_size).ok_or(Error::Invalid)?;
    let file_end = seg.vaddr.checked_add(seg.data.len() as u64).ok_or(Error::Invalid)?;
    let mut page = seg.vaddr - seg.vaddr % PAGE_SIZE;
    while page < end {
        let lo = page.max(seg.vaddr);
        let hi = (page + PAGE_SIZE).min(file_end);
        // `vaddr <= lo`, so the subtractions cannot wrap.
        let fill = if lo < hi {
            let data = seg.data.get((lo - seg.vaddr) as usize..(hi - seg.vaddr) as usize).ok_or(Error::Invalid)?;
            match archive_page(seg, page, data) {
                Some(src) => Fill::Archive(src),
                None => Fill::Bytes { offset: (lo - page) as usize, data },
            }
        } else {
            Fill::Zero
        };
        loader.add(page, flags, fill)?;
        page += PAGE_SIZE;
    }
    Ok(())
}

/// The address of `data`, the whole page `page` of segment `seg`, if the
/// page can be the boot archive's own: the segment is never writable and
/// the page lies page-aligned in the exposed archive (its files start on
/// page boundaries). The child then maps the archive's page read-only (a
/// `SHARE` record from the archive) instead of a copy.
fn archive_page(seg: &Segment<'_>, page: u64, data: &[u8]) -> Option<u64> {
    let at = data.as_ptr() as u64;
    let whole = seg.vaddr <= page && data.len() as u64 == PAGE_SIZE && at.is_multiple_of(PAGE_SIZE);
    (!seg.flags.write && whole && oxok_rt::exposed::in_boot_archive(at, PAGE_SIZE)).then_some(at)
}

/// What goes on one page of the child before it is mapped there.
#[derive(Clone, Copy)]
enum Fill<'a> {
    /// Nothing: frames arrive zeroed from the kernel (bss, stack).
    Zero,
    /// The boot archive's page at this (exposed) address, mapped read-only.
    Archive(u64),
    /// `data` at byte `offset` of the page; the rest stays zero.
    Bytes { offset: usize, data: &'a [u8] },
    /// The System V initial stack (the stack's top page).
    Stack(&'a InitialStack<'a>),
}

impl Fill<'_> {
    /// Whether the page needs a frame of its own, filled through the
    /// scratch region (a zero page is a `FRESH` record, an archive page a
    /// `SHARE`).
    fn needs_frame(&self) -> bool {
        !matches!(self, Fill::Zero | Fill::Archive(_))
    }
}

/// One page waiting in the current batch.
#[derive(Clone, Copy)]
struct Page<'a> {
    va: u64,
    flags: u64,
    fill: Fill<'a>,
}

/// Collects up to [`CHUNK`] pages and then builds them in one go.
struct Loader<'a> {
    child: u64,
    pages: [Page<'a>; CHUNK],
    len: usize,
}

impl<'a> Loader<'a> {
    fn new(child: u64) -> Loader<'a> {
        Loader { child, pages: [Page { va: 0, flags: 0, fill: Fill::Zero }; CHUNK], len: 0 }
    }

    /// Queues a page; builds the batch when it is full.
    fn add(&mut self, va: u64, flags: u64, fill: Fill<'a>) -> Result<(), Error> {
        if self.len == CHUNK {
            self.flush()?;
        }
        self.pages[self.len] = Page { va, flags, fill };
        self.len += 1;
        Ok(())
    }

    /// Builds the queued pages: allocates their frames for the child, fills
    /// them through the scratch region, maps them in the child and drops the
    /// capabilities. Whatever happens, the scratch region is empty again
    /// and every capability taken here is dropped when it returns.
    fn flush(&mut self) -> Result<(), Error> {
        let mut caps = [0u64; CHUNK];
        let result = build_batch(self.child, &self.pages[..self.len], &mut caps);
        if result.is_err() {
            for i in 0..self.len {
                // Most of these were never mapped or are gone already.
                let _ = sys::page_unmap(0, scratch_va(i));
            }
        }
        // Slot 0 is the environment's own capability: never a frame's.
        for &slot in caps.iter().filter(|&&s| s != 0) {
            let _ = sys::cap_drop(slot);
        }
        self.len = 0;
        result
    }
}

/// Builds one batch of `pages` for environment `child`, recording in
/// `caps[i]` the frame capability it took for page `i` (0 for a zero
/// page, which a `FRESH` record maps; the caller drops the others).
fn build_batch(child: u64, pages: &[Page<'_>], caps: &mut [u64; CHUNK]) -> Result<(), Error> {
    // Zero pages need no frame here: a FRESH record below.
    for (cap, page) in caps.iter_mut().zip(pages) {
        if page.fill.needs_frame() {
            let [slot, _pfn] = sys::frame_alloc_for(child, ANY_FRAME)?;
            *cap = slot;
        }
    }

    // Map the pages that need content at the scratch region, fill them,
    // unmap them.
    let mut batch = [MapEntry::default(); CHUNK];
    let mut n = 0;
    for (i, page) in pages.iter().enumerate() {
        if page.fill.needs_frame() {
            batch[n] = MapEntry::map(scratch_va(i), caps[i], pte::WRITABLE | pte::NO_EXECUTE);
            n += 1;
        }
    }
    apply(0, &batch[..n])?;
    for (i, page) in pages.iter().enumerate() {
        match page.fill {
            Fill::Zero | Fill::Archive(_) => {}
            Fill::Bytes { offset, data } => scratch::copy_in(scratch_va(i), offset, data)?,
            Fill::Stack(initial) => scratch::fill_page(scratch_va(i), |p| initial.write(p))?,
        }
    }
    for record in &mut batch[..n] {
        record.frame_slot = UNMAP;
    }
    apply(0, &batch[..n])?;

    // Map every page in the child with its own permissions.
    for (i, page) in pages.iter().enumerate() {
        batch[i] = match page.fill {
            Fill::Zero => MapEntry::fresh(page.va, page.flags),
            Fill::Archive(src) => MapEntry::share(page.va, src, page.flags),
            _ => MapEntry::map(page.va, caps[i], page.flags),
        };
    }
    apply(child, &batch[..pages.len()])
}

/// Scratch address of batch position `i`.
fn scratch_va(i: usize) -> u64 {
    SCRATCH + i as u64 * PAGE_SIZE
}

/// Applies map/unmap records to the environment in `env_slot` (0: self).
fn apply(env_slot: u64, records: &[MapEntry]) -> Result<(), Error> {
    if records.is_empty() {
        return Ok(());
    }
    sys::page_batch(env_slot, records.as_ptr() as u64, records.len() as u64).map(|_| ())
}
