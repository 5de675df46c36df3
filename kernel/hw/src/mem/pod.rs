//! Plain-old-data structures that cross the user boundary as bytes.

use oxok_abi::{EnvState, ExceptionFrame, MapEntry, Mapping, Regs};

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
// SAFETY: as above.
unsafe impl Pod for Mapping {}
// SAFETY: as above (u64 and byte-array fields; sizes asserted in oxok_abi).
unsafe impl Pod for oxok_abi::FpuState {}
// SAFETY: a plain integer.
unsafe impl Pod for u64 {}
// SAFETY: #[repr(C)] of a u64 and an ExceptionFrame (u64 fields only).
unsafe impl Pod for Delivery {}

/// What exception delivery writes on a user exception stack, lowest
/// address first: the handler's return address (0: it must not return)
/// and the frame.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Delivery {
    /// The handler's return address.
    pub ret: u64,
    /// The exception.
    pub frame: ExceptionFrame,
}

/// The bytes of `value`.
pub fn bytes_of<T: Pod>(value: &T) -> &[u8] {
    // SAFETY: T is Pod: every byte is initialised; the slice borrows value.
    unsafe { core::slice::from_raw_parts(value as *const T as *const u8, size_of::<T>()) }
}

/// The bytes of `values`, one after another.
pub fn bytes_of_slice<T: Pod>(values: &[T]) -> &[u8] {
    // SAFETY: T is Pod: every byte of each element is initialised and a
    // slice has no gaps; the byte slice borrows `values`.
    unsafe { core::slice::from_raw_parts(values.as_ptr() as *const u8, core::mem::size_of_val(values)) }
}

/// The bytes of `value`, writable (any bytes make a valid `T`).
pub fn bytes_of_mut<T: Pod>(value: &mut T) -> &mut [u8] {
    // SAFETY: T is Pod: any byte pattern is a valid T and every byte is
    // initialised; the slice borrows value exclusively.
    unsafe { core::slice::from_raw_parts_mut(value as *mut T as *mut u8, size_of::<T>()) }
}
