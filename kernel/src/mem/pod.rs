//! Plain-old-data structures that cross the user boundary as bytes.

use oxok_abi::{EnvState, ExceptionFrame, MapEntry, Regs};

/// Types made only of integers with no padding: any byte pattern is a valid
/// value and every byte of a value is initialised.
///
/// # Safety
/// Implement only for `#[repr(C)]` types whose fields are integers or arrays
/// of integers laid out without padding.
pub unsafe trait Pod: Copy + Default {}

// SAFETY: each is #[repr(C)] of u64 fields/arrays only (see oxok_abi).
unsafe impl Pod for Regs {}
// SAFETY: as above.
unsafe impl Pod for EnvState {}
// SAFETY: as above.
unsafe impl Pod for ExceptionFrame {}
// SAFETY: as above.
unsafe impl Pod for MapEntry {}
// SAFETY: a plain integer.
unsafe impl Pod for u64 {}

/// The bytes of `value`.
pub fn bytes_of<T: Pod>(value: &T) -> &[u8] {
    // SAFETY: T is Pod: every byte is initialised; the slice borrows value.
    unsafe { core::slice::from_raw_parts(value as *const T as *const u8, size_of::<T>()) }
}

/// A `T` from exactly `size_of::<T>()` bytes.
pub fn from_bytes<T: Pod>(bytes: &[u8]) -> Option<T> {
    if bytes.len() != size_of::<T>() {
        return None;
    }
    let mut value = T::default();
    // SAFETY: T is Pod (any bytes are a valid T), sizes match, and the
    // regions do not overlap.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), &mut value as *mut T as *mut u8, bytes.len()) };
    Some(value)
}
