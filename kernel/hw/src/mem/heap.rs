//! The kernel heap: one contiguous run of frames, direct-mapped. Kernel
//! objects (environments, tables) live here.
//!
//! Small requests (up to `oxok_sizeclass::MAX_SIZE` bytes) come from free
//! lists of equal blocks, one per size class, as the program heap's do
//! (`oxok_sizeclass::Lists`): a pop to allocate and a push to free, where
//! a first-fit search of the linked-list heap below walked its holes from
//! the lowest address each time — instructions, and pages that a switch
//! of address space makes the emulator walk again. Larger requests, and
//! the refills of the lists, go to the linked-list heap. The lists keep at
//! most [`LISTS_MAX`] bytes, a block freed past that going back below;
//! [`usage`] counts the blocks on the lists as free, [`has_room`] only what
//! the linked-list heap can still serve.

use super::{PAGE_SIZE, frame, phys};
use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use oxok_abi::frames::OWNER_KERNEL;
use oxok_sizeclass::{ALIGN, Links, Lists, block_size, class_of, resize_in_place};
use spin::Mutex;

/// The heap below and the class lists over it.
struct State {
    heap: Heap,
    lists: Lists,
}

/// The kernel's global allocator.
struct KernelHeap(Mutex<State>);

#[global_allocator]
static HEAP: KernelHeap = KernelHeap(Mutex::new(State { heap: Heap::empty(), lists: Lists::bounded(LISTS_MAX) }));

/// The most bytes the class lists keep; a block freed past it goes back to
/// the linked-list heap. What a program frees can so never leave the heap
/// below short: make and free objects of one size, then of another, and
/// without a bound each size's blocks would stay in its class.
pub const LISTS_MAX: usize = 256 * 1024;

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
    unsafe { HEAP.0.lock().heap.init(phys::virt(pa) as *mut u8, HEAP_FRAMES * PAGE_SIZE as usize) };
    Ok(())
}

/// Bytes in use and free in the heap (a block on a class list is free).
pub fn usage() -> (usize, usize) {
    let s = HEAP.0.lock();
    let held = s.lists.held();
    (s.heap.used().saturating_sub(held), s.heap.free() + held)
}

/// Bytes the linked-list heap below the class lists can still serve.
pub fn free_below() -> usize {
    HEAP.0.lock().heap.free()
}

/// True if `bytes` more can be allocated while keeping [`RESERVE`] free:
/// of the linked-list heap, whatever the class lists hold (a large request
/// cannot use their blocks).
pub fn has_room(bytes: usize) -> bool {
    HEAP.0.lock().heap.free() >= bytes.saturating_add(RESERVE)
}

/// `Ok` if [`has_room`], else `NoMemory`.
pub fn reserve(bytes: usize) -> Result<(), oxok_abi::Error> {
    if has_room(bytes) { Ok(()) } else { Err(oxok_abi::Error::NoMemory) }
}

/// The class lists' links: the first word of each free block. (The
/// program heap, `oxok_rt::heap`, has the same few lines: the reads and
/// writes of a heap's memory stay in the crate that owns it.)
struct Words;

impl Links for Words {
    fn next(&self, block: usize) -> usize {
        // SAFETY: `Lists` reads only blocks on its lists: carved from this
        // heap for their class or freed into it, 16-aligned with room for
        // the word, used by nobody while listed.
        unsafe { *(block as *const usize) }
    }

    fn set_next(&mut self, block: usize, next: usize) {
        // SAFETY: as in `next`: a block being put on a list is this heap's
        // and nobody else's.
        unsafe { *(block as *mut usize) = next }
    }
}

// SAFETY: small blocks come from the class lists (each block on at most
// one list, handed out once until freed), the rest from the linked-list
// heap, over memory only this allocator hands out; the mutex serialises
// all access. A layout's class is decided by `class_of` the same way on
// allocation, free and resize, so a block returns to where it came from.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut guard = self.0.lock();
        let State { heap, lists } = &mut *guard;
        let mut below = |layout: Layout| heap.allocate_first_fit(layout).ok().map(|p| p.as_ptr() as usize);
        let block = match class_of(layout.size(), layout.align()) {
            Some(class) => lists.take(class, &mut Words, |bytes| below(Layout::from_size_align(bytes, ALIGN).ok()?)),
            None => below(layout),
        };
        block.unwrap_or(0) as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let mut guard = self.0.lock();
        let Some(p) = NonNull::new(ptr) else { return };
        match class_of(layout.size(), layout.align()) {
            // `ptr` came from `alloc` with this `layout` (the GlobalAlloc
            // contract), so from this class's blocks.
            Some(class) => {
                if !guard.lists.give(class, ptr as usize, &mut Words)
                    && let Ok(block) = Layout::from_size_align(block_size(class), ALIGN)
                {
                    // SAFETY: the block is `block_size(class)` bytes of a
                    // refill the linked-list heap handed out, used by
                    // nobody now: it returns to that heap as a hole.
                    unsafe { guard.heap.deallocate(p, block) }
                }
            }
            // SAFETY: from the linked-list heap with `layout` (the
            // GlobalAlloc contract).
            None => unsafe { guard.heap.deallocate(p, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block whose class also serves the new size stays where it is.
        if resize_in_place(layout.size(), layout.align(), new_size) {
            return ptr;
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else { return core::ptr::null_mut() };
        // SAFETY: the GlobalAlloc contract for `realloc` makes `new_layout`
        // valid and non-zero-sized.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live, distinct allocations at least
            // `min(old, new)` bytes long; the old one is then freed with
            // the layout it was allocated with.
            unsafe {
                core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}
