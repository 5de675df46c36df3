//! This process's side of its pipes: which pipe frames it maps, where, how
//! many end objects of each side it holds, and which frames it created
//! (and so must free).
//!
//! **Address region.** Pipe frames are mapped at
//! `[PIPE_BASE, PIPE_BASE + PIPE_PAGES pages)` — 64 TiB, clear of the
//! heap (1 TiB), `vm::map_anon` (0x3800_0000_0000, 1 TiB), exec's scratch
//! regions (0x5000_0000_0000, 0x5100_0000_0000) and stacks — and at the
//! *same* address in every process holding an end: `spawn` shares the
//! frame with the child at the parent's address (the child's region is
//! empty then), fork copies the layout. A new pipe takes the lowest page of
//! the region that is mapped neither here nor in the registry.
//!
//! **Frames.** The creator allocates the frame (it owns it) and keeps its
//! capability while it holds an end. When its last end closes it unmaps
//! the frame and frees it; if a partner still maps it (`Busy`), the
//! capability waits in a short list and the free is retried whenever this
//! process creates or closes a pipe. A frame whose owner ends first is
//! orphaned by the kernel and freed with its last mapping. No heap is used.

use super::frame::{Frame, MAGIC, Side};
use super::holders;
use crate::fd::IoError;
use crate::{exposed, sys};
use core::sync::atomic::Ordering;
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error};
use spin::Mutex;

/// Start of the pipe region (see the module documentation).
pub const PIPE_BASE: u64 = 0x4000_0000_0000;
/// Pages in the pipe region.
pub const PIPE_PAGES: u64 = 1024;
/// Pipes one process can have mapped at once.
pub const MAX_PIPES: usize = 32;
/// Flags of a pipe mapping: data, shared writable by fork (not
/// copy-on-write).
pub const FLAGS: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_SHARED;
/// Frees waiting for a partner to unmap.
const PENDING: usize = 8;

/// No frame capability (slot 0 is the environment's own capability, never
/// a frame's).
const NO_CAP: u64 = 0;

#[derive(Clone, Copy)]
struct Entry {
    va: u64,
    /// End objects of each side ([`Side`] as index) held in this process.
    ends: [u32; 2],
    /// The frame's capability if this process created (owns) it.
    cap: u64,
}

struct Registry {
    pipes: [Option<Entry>; MAX_PIPES],
    pending: [u64; PENDING],
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { pipes: [None; MAX_PIPES], pending: [NO_CAP; PENDING] });

/// True if `va` is a page of the pipe region.
pub fn in_region(va: u64) -> bool {
    va.is_multiple_of(PAGE_SIZE) && (PIPE_BASE..PIPE_BASE + PIPE_PAGES * PAGE_SIZE).contains(&va)
}

/// Creates a pipe: a fresh frame mapped in the region, this process the
/// holder of one read and one write end. Returns the frame twice, one for
/// each end object.
pub fn create() -> Result<(Frame, Frame), IoError> {
    reclaim();
    let mut reg = REGISTRY.lock();
    let free = reg.pipes.iter().position(Option::is_none).ok_or(IoError::NoSpace)?;
    let va = (0..PIPE_PAGES)
        .map(|k| PIPE_BASE + k * PAGE_SIZE)
        .find(|&va| exposed::pte(va).is_none() && !reg.pipes.iter().flatten().any(|e| e.va == va))
        .ok_or(IoError::NoSpace)?;
    let [cap, _pfn] = sys::frame_alloc(ANY_FRAME)?;
    if let Err(e) = sys::page_map(0, cap, va, FLAGS) {
        let _ = sys::frame_free(cap);
        return Err(e.into());
    }
    let (Some(frame), Some(again)) = (Frame::at(va), Frame::at(va)) else {
        let _ = sys::page_unmap(0, va);
        let _ = sys::frame_free(cap);
        return Err(IoError::Invalid);
    };
    frame.init(exposed::self_id());
    // A child of fork holds the same ends and must say so.
    crate::vm::at_fork_child(after_fork);
    reg.pipes[free] = Some(Entry { va, ends: [1, 1], cap });
    Ok((frame, again))
}

/// Takes up `side` of the pipe whose frame a parent mapped at `va` for this
/// process (from a descriptor spec): checks the page, counts the end and
/// makes sure this process is a registered holder.
pub fn adopt(va: u64, side: Side) -> Result<Frame, IoError> {
    if !in_region(va) {
        return Err(IoError::Invalid);
    }
    let frame = Frame::at(va).filter(|f| f.header().magic.load(Ordering::Acquire) == MAGIC).ok_or(IoError::Invalid)?;
    let mut reg = REGISTRY.lock();
    let index = match reg.pipes.iter().position(|e| e.is_some_and(|e| e.va == va)) {
        Some(i) => i,
        None => {
            let i = reg.pipes.iter().position(Option::is_none).ok_or(IoError::NoSpace)?;
            reg.pipes[i] = Some(Entry { va, ends: [0, 0], cap: NO_CAP });
            i
        }
    };
    if let Err(e) = holders::register(&frame, side, exposed::self_id()) {
        if reg.pipes[index].is_some_and(|e| e.ends == [0, 0]) {
            reg.pipes[index] = None; // the parent's mapping stays; it is the parent's
        }
        return Err(e);
    }
    if let Some(e) = reg.pipes[index].as_mut() {
        e.ends[side as usize] += 1;
    }
    crate::vm::at_fork_child(after_fork);
    Ok(frame)
}

/// Drops one end object of `side` at `va`: the last of its side clears
/// this process's holder entry (the partner sees the end); the last of the
/// pipe unmaps the frame and frees it if this process created it.
pub fn release(frame: &Frame, side: Side) {
    let va = frame.va();
    let mut reg = REGISTRY.lock();
    let Some(index) = reg.pipes.iter().position(|e| e.is_some_and(|e| e.va == va)) else { return };
    let Some(entry) = reg.pipes[index].as_mut() else { return };
    let count = &mut entry.ends[side as usize];
    *count = count.saturating_sub(1);
    if *count > 0 {
        return;
    }
    holders::unregister(frame, side, exposed::self_id());
    if entry.ends != [0, 0] {
        return;
    }
    let cap = entry.cap;
    reg.pipes[index] = None;
    // Nothing in this process touches the page any more: the caller's
    // `Frame` is the last and is being dropped.
    let _ = sys::page_unmap(0, va);
    if cap != NO_CAP && sys::frame_free(cap) == Err(Error::Busy) {
        park(&mut reg, cap);
    }
    drop(reg);
    reclaim();
}

/// Keeps `cap` to free later; with the list full, gives up the capability
/// (the frame then goes back when this process ends).
fn park(reg: &mut Registry, cap: u64) {
    match reg.pending.iter_mut().find(|c| **c == NO_CAP) {
        Some(free) => *free = cap,
        None => {
            let _ = sys::cap_drop(cap);
        }
    }
}

/// Retries freeing the frames of pipes this process created and has
/// closed, which partners still mapped when it closed them. Done also at
/// every pipe creation and close; a shell may call it after `wait`.
pub fn reclaim() {
    let mut reg = REGISTRY.lock();
    for cap in reg.pending.iter_mut().filter(|c| **c != NO_CAP) {
        if sys::frame_free(*cap) != Err(Error::Busy) {
            *cap = NO_CAP;
        }
    }
}

/// In a child of fork: the capabilities stayed with the parent (the child
/// owns none of the frames), and this process now holds the same ends, so
/// it registers itself as their holder.
pub fn after_fork() {
    let mut reg = REGISTRY.lock();
    reg.pending = [NO_CAP; PENDING];
    let me = exposed::self_id();
    for entry in reg.pipes.iter_mut().flatten() {
        entry.cap = NO_CAP;
        if let Some(frame) = Frame::at(entry.va) {
            for side in [Side::Read, Side::Write] {
                if entry.ends[side as usize] > 0 {
                    let _ = holders::register(&frame, side, me);
                }
            }
        }
    }
}

/// Registers environment `child` as a holder of every end this process
/// holds (for fork: call in the parent before the child runs, so no pipe
/// looks closed in between).
pub fn share_with(child: u64) {
    let reg = REGISTRY.lock();
    for entry in reg.pipes.iter().flatten() {
        if let Some(frame) = Frame::at(entry.va) {
            for side in [Side::Read, Side::Write] {
                if entry.ends[side as usize] > 0 {
                    let _ = holders::register(&frame, side, child);
                }
            }
        }
    }
}

/// True while the pipe registry's lock is held — by code that a protected
/// control transfer (a signal) may have interrupted, so the handler must
/// not create or close pipes now (see `pct::interrupted_busy`).
pub fn registry_busy() -> bool {
    REGISTRY.is_locked()
}

/// True if this process holds an end of `side` of the pipe at `va`.
pub fn holds(va: u64, side: Side) -> bool {
    REGISTRY.lock().pipes.iter().flatten().any(|e| e.va == va && e.ends[side as usize] > 0)
}
