//! [`ReadSet`]: the words of a block a UDF run read.

use oxok_abi::xn::BLOCK_SIZE;

/// The 8-byte words of a block a run may have read: bit `i` for bytes
/// `8i..8i + 8`. A run over another block that differs from this one only
/// in words outside the set reads the same values, takes the same path and
/// emits the same results: the UDF is deterministic and reads nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSet([u64; BLOCK_SIZE / 8 / 64]);

impl ReadSet {
    /// Marks the words of bytes `addr..addr + bytes` (at most 8 bytes, so
    /// at most two words; `addr` inside the block).
    #[inline(always)]
    pub fn mark(&mut self, addr: usize, bytes: u8) {
        let first = addr / 8;
        let last = (addr + usize::from(bytes).clamp(1, 8) - 1) / 8;
        let words = self.0.len();
        for w in [first, last] {
            self.0[(w / 64) % words] |= 1 << (w % 64);
        }
    }

    /// Adds the words of `other`.
    pub(crate) fn add(&mut self, other: &ReadSet) {
        for (w, o) in self.0.iter_mut().zip(other.0) {
            *w |= o;
        }
    }

    /// Whether `a` and `b` agree on every word of the set. Only the words
    /// in the set are looked at (a run reads tens of a block's 512).
    pub fn same_on(&self, a: &[u8; BLOCK_SIZE], b: &[u8; BLOCK_SIZE]) -> bool {
        self.words().all(|w| word_at(a, w) == word_at(b, w))
    }

    /// The words of the set where `a` and `b` differ.
    pub(crate) fn differing(&self, a: &[u8; BLOCK_SIZE], b: &[u8; BLOCK_SIZE]) -> ReadSet {
        let mut d = ReadSet::default();
        for w in self.words().filter(|&w| word_at(a, w) != word_at(b, w)) {
            d.0[(w / 64) % d.0.len()] |= 1 << (w % 64);
        }
        d
    }

    /// Whether word `w` is in the set.
    pub(crate) fn has(&self, w: usize) -> bool {
        self.0.get(w / 64).is_some_and(|m| m & (1 << (w % 64)) != 0)
    }

    /// The words of the set, in order.
    pub(crate) fn words(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &mask)| {
            let mut rest = mask;
            core::iter::from_fn(move || {
                let b = (rest != 0).then(|| rest.trailing_zeros() as usize)?;
                rest &= rest - 1;
                Some(i * 64 + b)
            })
        })
    }
}

/// The 8-byte word `w` of `x` (0 past the end).
fn word_at(x: &[u8; BLOCK_SIZE], w: usize) -> u64 {
    x.get(w * 8..w * 8 + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_ne_bytes)
}
