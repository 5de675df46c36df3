//! The semantic view of a filter, for deciding overlap and refinement.
//!
//! A filter's *shape* splits its constraints into **levels**: level 0 is
//! relative to the start of the packet, level `k` to the base after the
//! filter's `k`-th shift. Every `eq` atom becomes per-byte constraints
//! (byte offset within its level, mask, value), merged and sorted; each level
//! also records how far its reads reach (a packet shorter than that is not
//! accepted). Two filters whose first `k` shifts are identical (same field,
//! mask and multiplier, read at the same position) have the same base at
//! levels `0..=k` on every packet both accept, so their constraints on those
//! levels can be compared byte by byte. Constraints on levels reached by
//! different shifts are never compared: the checks below treat them as
//! possibly compatible, which is the conservative direction for both.

use oxok_abi::filter::MAX_ATOMS;

use crate::filter::{Atom, Field, Filter};

/// Most per-byte constraints: every atom an `eq` on 4 bytes.
const MAX_BYTES: usize = MAX_ATOMS * 4;

/// One byte's constraint at one level: `(packet[base + off] & mask) == val`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ByteC {
    level: u8,
    off: u16,
    mask: u8,
    val: u8,
}

/// See the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    bytes: [ByteC; MAX_BYTES],
    n: usize,
    shifts: [(Field, u8); MAX_ATOMS],
    nshifts: usize,
    /// Per level, one past the farthest byte read.
    ends: [u16; MAX_ATOMS],
}

impl Shape {
    /// The shape of `f`, or `None` when two of its atoms contradict each
    /// other on some byte (the filter accepts nothing).
    pub(crate) fn of(f: &Filter) -> Option<Shape> {
        let mut s = Shape {
            bytes: [ByteC::default(); MAX_BYTES],
            n: 0,
            shifts: [(Field::default(), 0); MAX_ATOMS],
            nshifts: 0,
            ends: [0; MAX_ATOMS],
        };
        for a in f.atoms() {
            let level = s.nshifts;
            let field = a.field();
            s.ends[level] = s.ends[level].max(field.end() as u16);
            match *a {
                Atom::Eq { field, value } => {
                    let size = field.size as u32;
                    for i in 0..size {
                        let sh = 8 * (size - 1 - i);
                        let mask = (field.mask >> sh) as u8;
                        if mask != 0 && s.n < MAX_BYTES {
                            let off = field.offset + i as u16;
                            s.bytes[s.n] = ByteC { level: level as u8, off, mask, val: (value >> sh) as u8 };
                            s.n += 1;
                        }
                    }
                }
                Atom::Shift { field, scale } => {
                    if s.nshifts + 1 < MAX_ATOMS {
                        s.shifts[s.nshifts] = (field, scale);
                        s.nshifts += 1;
                    }
                }
            }
        }
        let bytes = &mut s.bytes[..s.n];
        bytes.sort_unstable_by_key(|b| (b.level, b.off));
        // Merge constraints on the same byte.
        let mut w = 0;
        for r in 0..s.n {
            let b = s.bytes[r];
            if w > 0 && (s.bytes[w - 1].level, s.bytes[w - 1].off) == (b.level, b.off) {
                let prev = &mut s.bytes[w - 1];
                if (prev.val ^ b.val) & prev.mask & b.mask != 0 {
                    return None;
                }
                prev.mask |= b.mask;
                prev.val |= b.val;
            } else {
                s.bytes[w] = b;
                w += 1;
            }
        }
        s.n = w;
        Some(s)
    }

    fn bytes(&self) -> &[ByteC] {
        &self.bytes[..self.n]
    }

    /// Levels whose base is the same in `self` and `other` on every packet
    /// both accept: 1 + the number of leading shifts they share.
    fn shared_levels(&self, other: &Shape) -> usize {
        let same = self.shifts[..self.nshifts].iter().zip(&other.shifts[..other.nshifts]).take_while(|(a, b)| a == b);
        1 + same.count()
    }

    /// True when no packet can satisfy both: some byte at a shared level is
    /// constrained to different values. (False means "possibly overlapping".)
    pub(crate) fn disjoint(&self, other: &Shape) -> bool {
        let levels = self.shared_levels(other) as u8;
        let (a, b) = (self.bytes(), other.bytes());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() && a[i].level < levels && b[j].level < levels {
            let (ka, kb) = ((a[i].level, a[i].off), (b[j].level, b[j].off));
            if ka < kb {
                i += 1;
            } else if kb < ka {
                j += 1;
            } else {
                if (a[i].val ^ b[j].val) & a[i].mask & b[j].mask != 0 {
                    return true;
                }
                i += 1;
                j += 1;
            }
        }
        false
    }

    /// True when every packet `self` accepts is accepted by `wider`: `wider`
    /// has no shift `self` lacks, and each of its byte constraints and reach
    /// is implied by `self`'s on the same level. (False means "not proven".)
    pub(crate) fn within(&self, wider: &Shape) -> bool {
        if wider.nshifts > self.nshifts || wider.shifts[..wider.nshifts] != self.shifts[..wider.nshifts] {
            return false;
        }
        if (0..=wider.nshifts).any(|l| wider.ends[l] > self.ends[l]) {
            return false;
        }
        let mine = self.bytes();
        let mut i = 0;
        for w in wider.bytes() {
            while i < mine.len() && (mine[i].level, mine[i].off) < (w.level, w.off) {
                i += 1;
            }
            match mine.get(i) {
                Some(m)
                    if (m.level, m.off) == (w.level, w.off) && m.mask & w.mask == w.mask && m.val & w.mask == w.val => {
                }
                _ => return false,
            }
        }
        true
    }

    /// True when `self` and `other` describe the same set of packets in the
    /// same way (then neither is a strict refinement of the other).
    pub(crate) fn same(&self, other: &Shape) -> bool {
        self.nshifts == other.nshifts
            && self.shifts[..self.nshifts] == other.shifts[..other.nshifts]
            && self.bytes() == other.bytes()
            && self.ends[..=self.nshifts] == other.ends[..=other.nshifts]
    }
}
