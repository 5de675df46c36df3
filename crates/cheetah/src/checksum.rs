//! The Internet checksum (RFC 1071) in pieces: ones'-complement sums of
//! separate byte runs combine by addition, which is what lets Cheetah sum a
//! file's segments once, when the file enters the cache, and finish each
//! packet's checksum at send time from the header's sum and the stored one.

/// The ones'-complement sum of `data` (big-endian 16-bit words, an odd last
/// byte padded with zero) added to `acc`, not yet folded. `data` must start
/// at an even offset of the checksummed run.
pub fn add(mut acc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(u16::from_be_bytes([*last, 0]));
    }
    acc
}

/// Folds a sum to 16 bits (end-around carry).
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field's value for a run whose sum is `acc`.
pub fn finish(acc: u64) -> u16 {
    !fold(acc)
}

/// The sum of a run that starts at an odd offset of the checksummed data:
/// its bytes sit in the other halves of the 16-bit words, so its folded sum
/// is byte-swapped (RFC 1071 §2(B)).
pub fn shift_odd(acc: u64) -> u64 {
    u64::from(fold(acc).swap_bytes())
}

/// The TCP/UDP pseudo-header's sum for IPv4 `src` → `dst`, protocol
/// `proto`, transport length `len`.
pub fn pseudo(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) -> u64 {
    add(add(0, &src), &dst) + u64::from(proto) + u64::from(len)
}
