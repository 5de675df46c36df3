//! The bytes of a buffer-cache page this program bound with
//! [`bind`](super::bind): the one place the XN module touches memory by
//! address.

use oxok_abi::Error;
use oxok_abi::xn::BLOCK_SIZE;

/// Whether `va` is a page-aligned address mapped in this program
/// (writable too when `write`), read from its exposed page tables.
fn mapped(va: u64, write: bool) -> bool {
    let need = oxok_abi::layout::pte::PRESENT | if write { oxok_abi::layout::pte::WRITABLE } else { 0 };
    va.is_multiple_of(BLOCK_SIZE as u64) && crate::exposed::pte(va).is_some_and(|e| e & need == need)
}

/// The page bound at `va`, read-only.
pub fn page(va: u64) -> Result<&'static [u8; BLOCK_SIZE], Error> {
    if !mapped(va, false) {
        return Err(Error::BadAddress);
    }
    // SAFETY: `va` is page-aligned and mapped readable in this address
    // space (checked above); the kernel keeps a bound cache frame
    // allocated while any mapping of it remains.
    Ok(unsafe { &*(va as *const [u8; BLOCK_SIZE]) })
}

/// The page bound writable at `va`.
pub fn page_mut(va: u64) -> Result<&'static mut [u8; BLOCK_SIZE], Error> {
    if !mapped(va, true) {
        return Err(Error::BadAddress);
    }
    // SAFETY: as `page`, and mapped writable; the caller binds each page
    // at its own address and holds one reference to it at a time.
    Ok(unsafe { &mut *(va as *mut [u8; BLOCK_SIZE]) })
}
