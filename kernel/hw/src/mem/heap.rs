//! The kernel heap: one contiguous run of frames, direct-mapped, managed by
//! a linked-list allocator. Kernel objects (environments, tables) live here.

use super::{PAGE_SIZE, frame, phys};
use linked_list_allocator::LockedHeap;
use oxok_abi::frames::OWNER_KERNEL;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

/// Heap size: 32 MiB.
pub const HEAP_FRAMES: usize = 8192;

/// Heap bytes every user-triggered allocation must leave free: kernel
/// objects are only created while [`has_room`] says so, so a user can make
/// calls fail with `NoMemory` but never exhaust the heap (an allocation
/// failure in the kernel would stop the machine).
pub const RESERVE: usize = 1 << 20;

/// Carves the heap out of free frames.
pub fn init() -> Result<(), oxok_abi::Error> {
    let pa = frame::with(|f| f.alloc_contiguous(HEAP_FRAMES, 1, OWNER_KERNEL)).ok_or(oxok_abi::Error::NoMemory)?;
    // SAFETY: the frames were just allocated to the kernel, are contiguous
    // and direct-mapped, and are handed to the allocator exactly once.
    unsafe { HEAP.lock().init(phys::virt(pa) as *mut u8, HEAP_FRAMES * PAGE_SIZE as usize) };
    Ok(())
}

/// Bytes in use and free in the heap.
pub fn usage() -> (usize, usize) {
    let heap = HEAP.lock();
    (heap.used(), heap.free())
}

/// True if `bytes` more can be allocated while keeping [`RESERVE`] free.
pub fn has_room(bytes: usize) -> bool {
    HEAP.lock().free() >= bytes.saturating_add(RESERVE)
}

/// `Ok` if [`has_room`], else `NoMemory`.
pub fn reserve(bytes: usize) -> Result<(), oxok_abi::Error> {
    if has_room(bytes) { Ok(()) } else { Err(oxok_abi::Error::NoMemory) }
}
