//! The Internet checksum (RFC 1071) in pieces: ones'-complement sums of
//! separate byte runs combine by addition, which is what lets Cheetah sum a
//! file's segments once, when the file enters the cache, and finish each
//! packet's checksum at send time from the header's sum and the stored one,
//! and lets the libOS's network device checksum TCP for smoltcp.
//!
//! [`add`] takes eight bytes a step: it sums the data as little-endian
//! 32-bit halves in a 64-bit accumulator and byte-swaps the folded result
//! (the sum is independent of byte order, RFC 1071 §2(B)), where summing
//! 16-bit big-endian words takes four times the steps. Every function is
//! total; sums are `u64`s not yet folded, and any two sums of the same
//! bytes fold ([`fold`]) to the same 16 bits.
#![no_std]

#[cfg(test)]
extern crate std;

pub mod frame;

#[cfg(test)]
mod tests;

/// The ones'-complement sum of `data` (big-endian 16-bit words, an odd last
/// byte padded with zero) added to `acc`, not yet folded. `data` must start
/// at an even offset of the checksummed run.
pub fn add(acc: u64, data: &[u8]) -> u64 {
    let mut native: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        // Two 32-bit halves: at most 2^33 a step, so 2^31 steps (16 GiB)
        // before the accumulator could overflow.
        native += (w & 0xffff_ffff) + (w >> 32);
    }
    let rest = chunks.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    let w = u64::from_le_bytes(tail);
    native += (w & 0xffff_ffff) + (w >> 32);
    // Little-endian 16-bit words summed are the big-endian sum byte-swapped.
    acc + u64::from(fold(native).swap_bytes())
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
