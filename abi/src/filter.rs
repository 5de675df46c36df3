//! Packet filters: the format a program hands the kernel to claim packets.
//!
//! The kernel decides which environment owns each arriving packet by running
//! downloaded, verified filters in the style of DPF (Engler & Kaashoek,
//! SIGCOMM'96). This module is the format only; the verifier, the merged
//! trie, the overlap check and the demultiplexer live in the `oxok-dpf`
//! crate.
//!
//! # The language
//!
//! A filter is a **conjunction of atoms**, read in order over the bytes of
//! one packet (starting at the Ethernet destination address). A *base*
//! starts at 0:
//!
//! * [`op::EQ`] — masked equality: the `size`-byte **big-endian** field at
//!   `base + offset`, ANDed with `mask`, must equal `value`.
//! * [`op::SHIFT`] — header-length shift: the `size`-byte big-endian field at
//!   `base + offset`, ANDed with `mask` and multiplied by `scale`, is added
//!   to the base for every following atom. IPv4's header length is
//!   `shift size=1 offset=14 mask=0x0f scale=4`, after which the TCP
//!   destination port is `eq size=2 offset=16` (14 bytes of Ethernet header,
//!   then 2 into the TCP header).
//!
//! A packet is accepted when every atom holds. Any field that lies, even in
//! part, past the end of the packet makes the filter **not match** (never an
//! error). There are no jumps: evaluation reads each atom once, in order.
//!
//! ## Well-formedness (what the verifier demands)
//!
//! * 1..=[`MAX_ATOMS`] atoms, ended by an [`op::END`] atom or the end of the
//!   block; everything after the end is zero.
//! * `size` is 1, 2 or 4; `mask` is not 0, has no bits above `size` bytes,
//!   and `value` has no bits outside `mask`.
//! * `scale` is 1..=[`MAX_SCALE`] for a shift and 0 for `eq`; `value` is 0
//!   for a shift; `reserved` is 0.
//! * Every field the filter can read lies below [`MAX_PACKET`] whatever the
//!   packet holds: the verifier takes every shift at its largest
//!   (`mask * scale`).
//! * The last atom is not a shift (it would test nothing), and the atoms do
//!   not contradict each other (a filter that accepts nothing is refused).
//!
//! # Encoding
//!
//! The install call copies a fixed block of [`FILTER_BYTES`] bytes:
//! [`MAX_ATOMS`] atoms of [`ATOM_SIZE`] bytes each, fields little-endian
//! (the packet fields they describe are big-endian):
//!
//! | bytes | field | meaning |
//! | --- | --- | --- |
//! | 0 | `op` | [`op`]; [`op::END`] (0) ends the filter |
//! | 1 | `size` | field width in bytes: 1, 2 or 4 |
//! | 2 | `scale` | shift multiplier; 0 for `eq` |
//! | 3 | `reserved` | 0 |
//! | 4–5 | `offset` | byte offset from the current base |
//! | 6–7 | `reserved` | 0 |
//! | 8–11 | `mask` | bits of the field that matter |
//! | 12–15 | `value` | `eq`: the value of the masked field; shift: 0 |
//!
//! # Overlap and refinement
//!
//! The kernel refuses a filter that could accept a packet an installed
//! filter also accepts (including duplicates and supersets) — unless the
//! install names an installed filter it *refines*, through that filter's
//! capability, and the new filter accepts only packets the refined one
//! accepts (and not all of them). A packet accepted by a filter and by its
//! refinements goes to the most specific one. When the kernel refuses an
//! install it says why with a [`reject`] code.

/// Bytes per atom.
pub const ATOM_SIZE: usize = 16;
/// Most atoms in one filter.
pub const MAX_ATOMS: usize = 16;
/// Bytes the install call copies: `MAX_ATOMS * ATOM_SIZE`.
pub const FILTER_BYTES: usize = MAX_ATOMS * ATOM_SIZE;
/// No filter may read at or beyond this byte of a packet, whatever the
/// packet holds (an Ethernet frame with a 1500-byte payload is 1514 bytes).
pub const MAX_PACKET: usize = 2048;
/// The largest shift multiplier.
pub const MAX_SCALE: u8 = 8;
/// Most filters in one refinement chain (a filter, the one it refines, the
/// one that one refines, ...).
pub const MAX_REFINE_DEPTH: usize = 8;

/// Atom operations (byte 0).
pub mod op {
    /// Ends the filter; this and every later atom are all zero.
    pub const END: u8 = 0;
    /// Masked equality on a big-endian field.
    pub const EQ: u8 = 1;
    /// Header-length shift: adds `(field & mask) * scale` to the base.
    pub const SHIFT: u8 = 2;
}

/// Why a filter was refused: stable codes the kernel reports.
pub mod reject {
    /// No atoms.
    pub const EMPTY: u64 = 1;
    /// The block is not [`FILTER_BYTES`](super::FILTER_BYTES) long.
    pub const BAD_LENGTH: u64 = 2;
    /// An unknown operation.
    pub const BAD_OP: u64 = 3;
    /// A `size` other than 1, 2 or 4.
    pub const BAD_SIZE: u64 = 4;
    /// A reserved field, or a field the operation does not use, is not 0;
    /// or a byte after the end of the filter is not 0.
    pub const RESERVED: u64 = 5;
    /// A zero mask, or mask bits above the field's width.
    pub const BAD_MASK: u64 = 6;
    /// `value` has bits outside `mask`.
    pub const BAD_VALUE: u64 = 7;
    /// A shift multiplier of 0 or above [`MAX_SCALE`](super::MAX_SCALE).
    pub const BAD_SCALE: u64 = 8;
    /// A field that can lie at or beyond [`MAX_PACKET`](super::MAX_PACKET).
    pub const OUT_OF_RANGE: u64 = 9;
    /// The last atom is a shift.
    pub const DANGLING_SHIFT: u64 = 10;
    /// Two atoms contradict each other: the filter accepts nothing.
    pub const CONTRADICTION: u64 = 11;
    /// The filter could accept a packet an installed filter accepts.
    pub const OVERLAP: u64 = 12;
    /// The filter named as refined does not exist.
    pub const NO_SUCH_FILTER: u64 = 13;
    /// The filter is not strictly more specific than the one it refines.
    pub const NOT_REFINEMENT: u64 = 14;
    /// The filter table is full.
    pub const FULL: u64 = 15;
    /// The kernel could not allocate the filter's trie nodes.
    pub const NO_MEMORY: u64 = 16;
    /// The refinement chain would be deeper than
    /// [`MAX_REFINE_DEPTH`](super::MAX_REFINE_DEPTH).
    pub const TOO_DEEP: u64 = 17;
}

/// One atom as raw fields, before any checking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawAtom {
    /// Operation ([`op`]).
    pub op: u8,
    /// Field width in bytes: 1, 2 or 4.
    pub size: u8,
    /// Shift multiplier (shifts only).
    pub scale: u8,
    /// Must be 0.
    pub reserved: u8,
    /// Offset of the field from the current base.
    pub offset: u16,
    /// Must be 0.
    pub reserved2: u16,
    /// Bits of the field that matter.
    pub mask: u32,
    /// Value of the masked field (`eq` only).
    pub value: u32,
}

impl RawAtom {
    /// Masked equality: `(field(size, offset) & mask) == value`.
    pub const fn eq(size: u8, offset: u16, mask: u32, value: u32) -> RawAtom {
        RawAtom { op: op::EQ, size, scale: 0, reserved: 0, offset, reserved2: 0, mask, value }
    }

    /// Header-length shift: `base += (field(size, offset) & mask) * scale`.
    pub const fn shift(size: u8, offset: u16, mask: u32, scale: u8) -> RawAtom {
        RawAtom { op: op::SHIFT, size, scale, reserved: 0, offset, reserved2: 0, mask, value: 0 }
    }

    /// Decodes the [`ATOM_SIZE`] bytes of one atom (no checking).
    pub const fn from_bytes(b: &[u8; ATOM_SIZE]) -> RawAtom {
        RawAtom {
            op: b[0],
            size: b[1],
            scale: b[2],
            reserved: b[3],
            offset: u16::from_le_bytes([b[4], b[5]]),
            reserved2: u16::from_le_bytes([b[6], b[7]]),
            mask: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            value: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
        }
    }

    /// Encodes the atom as its [`ATOM_SIZE`] bytes.
    pub const fn to_bytes(self) -> [u8; ATOM_SIZE] {
        let o = self.offset.to_le_bytes();
        let r = self.reserved2.to_le_bytes();
        let m = self.mask.to_le_bytes();
        let v = self.value.to_le_bytes();
        [
            self.op,
            self.size,
            self.scale,
            self.reserved,
            o[0],
            o[1],
            r[0],
            r[1],
            m[0],
            m[1],
            m[2],
            m[3],
            v[0],
            v[1],
            v[2],
            v[3],
        ]
    }
}

/// A whole filter as the install call reads it: [`MAX_ATOMS`] atoms, the
/// used ones first, then [`op::END`] atoms (all zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawFilter {
    /// The atoms.
    pub atoms: [RawAtom; MAX_ATOMS],
}

impl RawFilter {
    /// Decodes a [`FILTER_BYTES`] block (no checking).
    pub fn from_bytes(b: &[u8; FILTER_BYTES]) -> RawFilter {
        let mut f = RawFilter::default();
        for (atom, chunk) in f.atoms.iter_mut().zip(b.chunks_exact(ATOM_SIZE)) {
            let mut a = [0u8; ATOM_SIZE];
            a.copy_from_slice(chunk);
            *atom = RawAtom::from_bytes(&a);
        }
        f
    }

    /// Encodes the filter as the block the install call reads.
    pub fn to_bytes(&self) -> [u8; FILTER_BYTES] {
        let mut b = [0u8; FILTER_BYTES];
        for (atom, chunk) in self.atoms.iter().zip(b.chunks_exact_mut(ATOM_SIZE)) {
            chunk.copy_from_slice(&atom.to_bytes());
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_and_layout() {
        let a = RawAtom {
            op: op::SHIFT,
            size: 1,
            scale: 4,
            reserved: 9,
            offset: 0x0102,
            reserved2: 7,
            mask: 0x0f,
            value: 0x11,
        };
        let b = a.to_bytes();
        assert_eq!(b[..8], [op::SHIFT, 1, 4, 9, 2, 1, 7, 0]);
        assert_eq!(b[8..], [0x0f, 0, 0, 0, 0x11, 0, 0, 0]);
        assert_eq!(RawAtom::from_bytes(&b), a);
        let mut f = RawFilter::default();
        f.atoms[0] = RawAtom::eq(2, 12, 0xffff, 0x0806);
        f.atoms[3] = a;
        assert_eq!(RawFilter::from_bytes(&f.to_bytes()), f);
        assert_eq!(FILTER_BYTES, 256);
    }

    #[test]
    fn reject_codes_are_distinct() {
        let all = [
            reject::EMPTY,
            reject::BAD_LENGTH,
            reject::BAD_OP,
            reject::BAD_SIZE,
            reject::RESERVED,
            reject::BAD_MASK,
            reject::BAD_VALUE,
            reject::BAD_SCALE,
            reject::OUT_OF_RANGE,
            reject::DANGLING_SHIFT,
            reject::CONTRADICTION,
            reject::OVERLAP,
            reject::NO_SUCH_FILTER,
            reject::NOT_REFINEMENT,
            reject::FULL,
            reject::NO_MEMORY,
            reject::TOO_DEEP,
        ];
        for (i, a) in all.iter().enumerate() {
            assert_ne!(*a, 0);
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
