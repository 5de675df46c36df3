//! Little-endian integer reads that cannot go out of bounds.

/// `N` bytes at `at`, or `None` past the end.
fn array<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The byte at `at`.
pub(crate) fn u8_at(data: &[u8], at: usize) -> Option<u8> {
    data.get(at).copied()
}

/// A little-endian `u16` at `at`.
pub(crate) fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    array(data, at).map(u16::from_le_bytes)
}

/// A little-endian `u32` at `at`.
pub(crate) fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    array(data, at).map(u32::from_le_bytes)
}

/// A little-endian `u64` at `at`.
pub(crate) fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    array(data, at).map(u64::from_le_bytes)
}

/// The bytes `[offset, offset + len)` of `data`, with 64-bit file offsets.
pub(crate) fn range(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    data.get(start..end)
}
