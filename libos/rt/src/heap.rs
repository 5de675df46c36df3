//! The program's heap: `alloc` (Box, Vec, String…) for every Oxok program.
//!
//! A linked-list allocator over a region at [`HEAP_BASE`] that grows on
//! demand: each new page gets a fresh frame (`frame_alloc`), is mapped
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

/// Grows the heap to fit `layout`; false when memory ran out.
fn grow(state: &mut State, layout: Layout) -> bool {
    let want = (layout.size() + layout.align()) as u64;
    let step = want.max(GROW_STEP).next_multiple_of(PAGE_SIZE);
    if state.end + step > HEAP_BASE + HEAP_MAX {
        return false;
    }
    let reached = map_pages(state.end, state.end + step);
    let added = reached - state.end;
    state.end = reached;
    if added == 0 {
        return false;
    }
    // SAFETY: [old end, reached) was just mapped writable and directly
    // follows the heap's current top, which is what `extend` requires.
    unsafe { state.heap.extend(added as usize) };
    added >= want
}

// SAFETY: allocations come from the linked-list heap over memory only this
// allocator hands out; the mutex serialises all access.
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
            *guard = Some(State { heap, end });
        }
        let Some(state) = guard.as_mut() else { return core::ptr::null_mut() };
        loop {
            if let Ok(p) = state.heap.allocate_first_fit(layout) {
                return p.as_ptr();
            }
            if !grow(state, layout) {
                return core::ptr::null_mut();
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let (Some(state), Some(p)) = (self.0.lock().as_mut(), NonNull::new(ptr)) {
            // SAFETY: `ptr` came from `alloc` with this `layout` (the
            // GlobalAlloc contract).
            unsafe { state.heap.deallocate(p, layout) };
        }
    }
}
