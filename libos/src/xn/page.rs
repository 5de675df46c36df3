//! The bytes of a buffer-cache page this program bound with
//! [`bind`](super::bind), as the runtime's `PageRef`: claimed like a
//! borrow (read-only claims of an address, or one writable), made only for
//! a page checked mapped (writable) in this address space.

use oxok_abi::Error;
use oxok_abi::xn::BLOCK_SIZE;
use oxok_rt::page::{self, PageRef};

const _: () = assert!(BLOCK_SIZE == page::BYTES);

/// The page bound at `va`, read-only (`PageRef::bytes`). `BadAddress` if
/// it is not mapped here, `Busy` while a writable claim of it lives.
pub fn page(va: u64) -> Result<PageRef, Error> {
    PageRef::claim(va, false)
}

/// The page bound writable at `va` (`PageRef::bytes_mut`). `BadAddress` if
/// it is not mapped writable here, `Busy` while another claim of it lives.
pub fn page_mut(va: u64) -> Result<PageRef, Error> {
    PageRef::claim(va, true)
}
