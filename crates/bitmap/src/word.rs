//! Bit positions within the `u64` words of a bitmap.

/// Bits per storage word.
pub(crate) const BITS: usize = 64;

/// The word holding index `i` and the bit within it.
pub(crate) fn split(i: usize) -> (usize, u32) {
    // `i % BITS` is below 64, so the cast is lossless.
    (i / BITS, (i % BITS) as u32)
}

/// A mask of bits `[lo, hi)` of one word; requires `lo <= hi <= 64`.
pub(crate) fn mask(lo: usize, hi: usize) -> u64 {
    let width = hi.saturating_sub(lo);
    if width >= BITS {
        u64::MAX
    } else {
        // `width` and `lo` are below 64 here, so the shifts cannot overflow.
        ((1u64 << width) - 1).checked_shl(lo as u32).unwrap_or(0)
    }
}

/// The words overlapping `[start, end)` (with `start < end`), each with the
/// mask of the bits inside the range.
pub(crate) fn spans(start: usize, end: usize) -> impl Iterator<Item = (usize, u64)> {
    let first = start / BITS;
    let last = end.div_ceil(BITS);
    (first..last).map(move |w| {
        let base = w.saturating_mul(BITS);
        let lo = start.saturating_sub(base);
        let hi = end.saturating_sub(base).min(BITS);
        (w, mask(lo, hi))
    })
}

/// Bits `b` of the word starting at index `base` with
/// `(base + b) % modulus == residue`; requires `residue < modulus`.
pub(crate) fn matching(base: usize, modulus: usize, residue: usize) -> u64 {
    let offset = base % modulus;
    // The first bit position b with (offset + b) % modulus == residue.
    let first = if residue >= offset { residue - offset } else { (modulus - offset) + residue };
    let mut bits = 0u64;
    let mut b = first;
    while b < BITS {
        bits |= 1 << b;
        b = match b.checked_add(modulus) {
            Some(next) => next,
            None => break,
        };
    }
    bits
}
