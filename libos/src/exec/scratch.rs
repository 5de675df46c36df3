//! Writing a page the caller has just mapped at a scratch address in its
//! own space, through the runtime's `SharedPage` (checked mapped writable
//! when made; bytes only by clipped copies).

use oxok_abi::Error;
use oxok_rt::page::{self, SharedPage};

/// Copies `bytes` in at byte `offset` of the page mapped at `va`
/// (page-aligned, in the scratch region). `BadAddress` if the page is not
/// mapped user-writable, `Invalid` if the bytes do not fit in it.
pub(super) fn copy_in(va: u64, offset: usize, bytes: &[u8]) -> Result<(), Error> {
    if offset.checked_add(bytes.len()).is_none_or(|end| end > page::BYTES) {
        return Err(Error::Invalid);
    }
    SharedPage::writable(va).ok_or(Error::BadAddress)?.copy_in(offset, bytes);
    Ok(())
}

/// Builds a page's image with `fill` (on this stack), then copies it in
/// at `va` as [`copy_in`].
pub(super) fn fill_page(va: u64, fill: impl FnOnce(&mut [u8]) -> Result<(), Error>) -> Result<(), Error> {
    let mut image = [0u8; page::BYTES];
    fill(&mut image)?;
    copy_in(va, 0, &image)
}
