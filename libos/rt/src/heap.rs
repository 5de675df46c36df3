//! The program's heap: `alloc` (Box, Vec, String…) for every Oxok program.
//!
//! Small requests (up to `oxok_sizeclass::MAX_SIZE` bytes) come from free
//! lists of equal blocks, one per size class: a pop to allocate, a push to
//! free. A list that runs dry is refilled with a few blocks carved from
//! the linked-list allocator below, which serves every larger request
//! itself; freed blocks stay in their class.
//!
//! The linked-list allocator lies over a region at [`HEAP_BASE`] that grows
//! on demand: each new page gets a fresh frame (`frame_alloc`), is mapped
//! writable and non-executable, and its capability is dropped at once — a
//! capability list has only 64 slots, so the heap keeps none. The frames
//! stay owned by the program and return to the kernel when it exits; the
//! heap never shrinks (like `brk`).
//!
//! Upcall handlers must not allocate: the heap's lock may be held by the
//! code they interrupted.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use oxok_abi::ANY_FRAME;
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_sizeclass::{ALIGN, Links, Lists, block_size, class_of, resize_in_place};
use spin::Mutex;

/// Where the heap starts (1 TiB), far from program images, stacks and the
/// libOS's other regions.
pub const HEAP_BASE: u64 = 0x100_0000_0000;
/// The most the heap may grow to.
pub const HEAP_MAX: u64 = 1 << 30;
/// Grow in steps of at least this much.
const GROW_STEP: u64 = 64 * 1024;

struct State {
    heap: Heap,
    /// First unmapped address above the heap.
    end: u64,
    /// The class lists.
    lists: Lists,
}

/// A block of the linked-list heap for `layout`, growing it as needed.
fn take(heap: &mut Heap, end: &mut u64, layout: Layout) -> *mut u8 {
    loop {
        if let Ok(p) = heap.allocate_first_fit(layout) {
            return p.as_ptr();
        }
        if !grow(heap, end, layout) {
            return core::ptr::null_mut();
        }
    }
}

impl State {
    /// A block of `class`: its list's first, or one of a fresh refill
    /// carved from the linked-list heap.
    fn take_block(&mut self, class: usize) -> *mut u8 {
        let State { heap, end, lists } = self;
        let refill = |bytes| {
            let layout = Layout::from_size_align(bytes, ALIGN).ok()?;
            Some(take(heap, end, layout) as usize)
        };
        lists.take(class, &mut Words, refill).unwrap_or(0) as *mut u8
    }
}

/// The class lists' links: the first word of each free block.
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

/// The global allocator of every program that links the libOS.
pub struct ProgramHeap(Mutex<Option<State>>);

#[global_allocator]
static HEAP: ProgramHeap = ProgramHeap(Mutex::new(None));

/// True while the heap's lock is held (by code a protected control
/// transfer interrupted: the libOS's `pct::interrupted_busy`).
pub fn busy() -> bool {
    HEAP.0.is_locked()
}

/// Maps `[from, to)` with fresh frames; stops at the first failure and
/// returns how far it got.
fn map_pages(from: u64, to: u64) -> u64 {
    let mut va = from;
    while va < to {
        let Ok([slot, _]) = crate::sys::frame_alloc(ANY_FRAME) else { break };
        let mapped = crate::sys::page_map(0, slot, va, pte::WRITABLE | pte::NO_EXECUTE).is_ok();
        if !mapped {
            let _ = crate::sys::frame_free(slot);
            break;
        }
        let _ = crate::sys::cap_drop(slot);
        va += PAGE_SIZE;
    }
    va
}

/// Grows the heap (whose first unmapped address is `end`) to fit
/// `layout`; false when memory ran out.
fn grow(heap: &mut Heap, end: &mut u64, layout: Layout) -> bool {
    let want = (layout.size() + layout.align()) as u64;
    let step = want.max(GROW_STEP).next_multiple_of(PAGE_SIZE);
    if *end + step > HEAP_BASE + HEAP_MAX {
        return false;
    }
    let reached = map_pages(*end, *end + step);
    let added = reached - *end;
    *end = reached;
    if added == 0 {
        return false;
    }
    // SAFETY: [old end, reached) was just mapped writable and directly
    // follows the heap's current top, which is what `extend` requires.
    unsafe { heap.extend(added as usize) };
    added >= want
}

// SAFETY: small blocks come from the class lists (each block on at most
// one list, handed out once until freed), the rest from the linked-list
// heap, over memory only this allocator hands out; the mutex serialises
// all access. A layout's class is decided by `class_of` the same way on
// allocation, free and resize, so a block returns to where it came from.
unsafe impl GlobalAlloc for ProgramHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut guard = self.0.lock();
        if guard.is_none() {
            let end = map_pages(HEAP_BASE, HEAP_BASE + GROW_STEP);
            if end == HEAP_BASE {
                return core::ptr::null_mut();
            }
            let mut heap = Heap::empty();
            // SAFETY: [HEAP_BASE, end) was just mapped writable for us alone.
            unsafe { heap.init(HEAP_BASE as *mut u8, (end - HEAP_BASE) as usize) };
            *guard = Some(State { heap, end, lists: Lists::EMPTY });
        }
        let Some(state) = guard.as_mut() else { return core::ptr::null_mut() };
        match class_of(layout.size(), layout.align()) {
            Some(class) => state.take_block(class),
            None => take(&mut state.heap, &mut state.end, layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let mut guard = self.0.lock();
        let (Some(state), Some(p)) = (guard.as_mut(), NonNull::new(ptr)) else { return };
        match class_of(layout.size(), layout.align()) {
            // `ptr` came from `alloc` with this `layout` (the GlobalAlloc
            // contract), so from this class's blocks (the lists have no
            // bound here: they keep every one).
            Some(class) => {
                if !state.lists.give(class, ptr as usize, &mut Words)
                    && let Ok(block) = Layout::from_size_align(block_size(class), ALIGN)
                {
                    // SAFETY: the block is `block_size(class)` bytes of a
                    // refill the linked-list heap handed out, used by
                    // nobody now: it returns to that heap as a hole.
                    unsafe { state.heap.deallocate(p, block) }
                }
            }
            // SAFETY: as with a class, from the linked-list heap with
            // `layout`.
            None => unsafe { state.heap.deallocate(p, layout) },
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
