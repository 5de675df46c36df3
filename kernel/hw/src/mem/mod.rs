//! Physical memory, page tables, the kernel heap and checked access to user
//! memory (in `oxok-hw`, the one crate of the kernel that holds `unsafe`).

pub mod access;
pub mod addr;
pub mod cache;
pub mod dma;
pub mod exposed;
pub mod frame;
pub mod heap;
pub mod paging;
pub mod phys;
pub mod pod;
pub mod user;

/// Size of a page and a frame.
pub const PAGE_SIZE: u64 = 4096;

/// Checks that `va` can name a user page: page-aligned and below
/// `USER_TOP` (`BadAddress` otherwise). The one place this rule is written.
pub fn user_page(va: u64) -> Result<(), oxok_abi::Error> {
    if va.is_multiple_of(PAGE_SIZE) && va < oxok_abi::layout::USER_TOP {
        Ok(())
    } else {
        Err(oxok_abi::Error::BadAddress)
    }
}

/// Rounds `x` up to a multiple of `align` (a power of two).
pub const fn align_up(x: u64, align: u64) -> u64 {
    (x + align - 1) & !(align - 1)
}

/// Rounds `x` down to a multiple of `align` (a power of two).
pub const fn align_down(x: u64, align: u64) -> u64 {
    x & !(align - 1)
}
