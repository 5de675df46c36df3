//! Octal ASCII numbers as ustar header fields hold them.

/// Parses an octal field: optional leading spaces, at least one octal digit,
/// then a NUL or space terminator inside the field. Whatever follows the
/// terminator is ignored. `None` on any other shape, including a field with
/// no terminator or a value that does not fit in a `u64`.
pub(crate) fn parse(field: &[u8]) -> Option<u64> {
    let mut bytes = field.iter().copied().skip_while(|&b| b == b' ');
    let mut value: u64 = 0;
    let mut digits = 0usize;
    for b in bytes.by_ref() {
        match b {
            b'0'..=b'7' => {
                value = value.checked_mul(8)?.checked_add(u64::from(b - b'0'))?;
                digits += 1;
            }
            0 | b' ' if digits > 0 => return Some(value),
            _ => return None,
        }
    }
    None
}

/// Writes `value` as zero-padded octal into all of `field` but its last byte,
/// which becomes NUL. `None` (field untouched) when the value does not fit.
#[cfg(any(feature = "alloc", test))]
pub(crate) fn format(field: &mut [u8], value: u64) -> Option<()> {
    let (last, digits) = field.split_last_mut()?;
    let bits = u32::try_from(digits.len()).ok()?.checked_mul(3)?;
    if bits < 64 && value >> bits != 0 {
        return None;
    }
    let mut rest = value;
    for d in digits.iter_mut().rev() {
        // `rest & 7` is below 8, so the cast is lossless.
        *d = b'0' + (rest & 7) as u8;
        rest >>= 3;
    }
    *last = 0;
    Some(())
}
