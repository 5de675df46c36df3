//! The one `unsafe` piece of exec: writing a page the caller has just mapped
//! at a scratch address in its own space.

use crate::exposed;
use oxok_abi::Error;
use oxok_abi::layout::PAGE_SIZE;

/// Runs `fill` on the page mapped at `va` (page-aligned, in the scratch
/// region) and returns its result. `BadAddress` if the page is not mapped
/// user-writable, checked through the caller's own page tables first.
pub(super) fn with_page(va: u64, fill: impl FnOnce(&mut [u8]) -> Result<(), Error>) -> Result<(), Error> {
    if !va.is_multiple_of(PAGE_SIZE) || !exposed::writable(va) {
        return Err(Error::BadAddress);
    }
    // `va` is page-aligned and the page is mapped user-writable (checked just
    // above). Only exec maps anything in the scratch region: each frame once,
    // filled through this one slice, unmapped after `fill` returns (the
    // unmapping system call is a compiler barrier).
    // SAFETY: so the slice is valid and nothing else aliases it while it lives.
    let page = unsafe { core::slice::from_raw_parts_mut(va as *mut u8, PAGE_SIZE as usize) };
    fill(page)
}
