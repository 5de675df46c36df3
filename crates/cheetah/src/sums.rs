//! A response's checksums, computed once: the ones'-complement sum of each
//! maximum-size segment of the response (canned head followed by the file),
//! so sending a segment costs the sum of its 54 header bytes only.

use alloc::vec::Vec;

use crate::checksum;

/// The per-segment sums of one byte stream (the concatenation of `parts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentSums {
    mss: u32,
    len: u32,
    sums: Vec<u16>,
}

impl SegmentSums {
    /// Sums the stream `parts[0] ++ parts[1] ++ …` in segments of `mss`
    /// bytes (the last one shorter).
    pub fn new(parts: &[&[u8]], mss: u32) -> SegmentSums {
        let mss = mss.max(2);
        let mut sums = Vec::new();
        let (mut acc, mut in_seg, mut len) = (0u64, 0u32, 0u32);
        for part in parts {
            for &b in *part {
                acc += if in_seg.is_multiple_of(2) { u64::from(b) << 8 } else { u64::from(b) };
                in_seg += 1;
                len += 1;
                if in_seg == mss {
                    sums.push(checksum::fold(acc));
                    acc = 0;
                    in_seg = 0;
                }
            }
        }
        if in_seg > 0 {
            sums.push(checksum::fold(acc));
        }
        SegmentSums { mss, len, sums }
    }

    /// The stream's length.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segment size the sums were computed for.
    pub fn mss(&self) -> u32 {
        self.mss
    }

    /// The stored sum of bytes `off..off + len`, if that run is exactly one
    /// of the segments summed (else the caller sums the bytes itself).
    pub fn get(&self, off: u32, len: u32) -> Option<u64> {
        if !off.is_multiple_of(self.mss) || off >= self.len || len != self.mss.min(self.len - off) {
            return None;
        }
        self.sums.get((off / self.mss) as usize).map(|&s| u64::from(s))
    }
}
