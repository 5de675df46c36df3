//! [`BlockSet`]: a set of block numbers kept as a bitmap, for a library
//! file system's own bookkeeping of the blocks it holds (dirty, tainted,
//! file data, fetched). A lookup, an insertion and a removal are a word's
//! bit each, where a B-tree of thousands of blocks walked its nodes for
//! every one (about 270 instructions a lookup in `xcp`). A second bitmap
//! says which words hold any block, so the set iterates, in ascending
//! order, over the words that hold its blocks rather than the whole disk.

use alloc::vec::Vec;

use crate::Refusal;

/// A set of block numbers.
#[derive(Clone, Debug, Default)]
pub struct BlockSet {
    /// Bit `b % 64` of word `b / 64` is set when `b` is in the set.
    words: Vec<u64>,
    /// Bit `w % 64` of word `w / 64` is set when `words[w]` is not 0.
    summary: Vec<u64>,
    /// Blocks in the set.
    count: usize,
}

impl BlockSet {
    /// The empty set (nothing allocated).
    pub const fn new() -> BlockSet {
        BlockSet { words: Vec::new(), summary: Vec::new(), count: 0 }
    }

    fn at(block: u64) -> (usize, u64) {
        ((block / 64) as usize, 1 << (block % 64))
    }

    /// Whether `block` is in the set.
    pub fn contains(&self, block: u64) -> bool {
        let (w, bit) = Self::at(block);
        self.words.get(w).is_some_and(|&x| x & bit != 0)
    }

    /// Makes room for every block below `end`, so that inserting one of
    /// them cannot fail. `NoMemory`, nothing changed, if it cannot.
    pub fn reserve(&mut self, end: u64) -> Result<(), Refusal> {
        let w = end.div_ceil(64) as usize;
        if w > self.words.len() {
            let len = w.max(2 * self.words.len());
            let summary = len.div_ceil(64);
            self.words.try_reserve(len - self.words.len()).map_err(|_| Refusal::NoMemory)?;
            self.summary.try_reserve(summary.saturating_sub(self.summary.len())).map_err(|_| Refusal::NoMemory)?;
            self.words.resize(len, 0);
            self.summary.resize(summary.max(self.summary.len()), 0);
        }
        Ok(())
    }

    /// Adds `block`: true if it was not there. `NoMemory`, nothing
    /// changed, if the bitmap must grow to reach it and cannot.
    pub fn insert(&mut self, block: u64) -> Result<bool, Refusal> {
        self.reserve(block.saturating_add(1))?;
        let (w, bit) = Self::at(block);
        let Some(x) = self.words.get_mut(w) else { return Err(Refusal::NoMemory) };
        let new = *x & bit == 0;
        *x |= bit;
        if let Some(s) = self.summary.get_mut(w / 64) {
            *s |= 1 << (w % 64);
        }
        self.count += usize::from(new);
        Ok(new)
    }

    /// Takes `block` out: true if it was there.
    pub fn remove(&mut self, block: u64) -> bool {
        let (w, bit) = Self::at(block);
        let Some(x) = self.words.get_mut(w) else { return false };
        let was = *x & bit != 0;
        *x &= !bit;
        if *x == 0
            && let Some(s) = self.summary.get_mut(w / 64)
        {
            *s &= !(1 << (w % 64));
        }
        self.count -= usize::from(was);
        was
    }

    /// Blocks in the set.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Empties the set (keeping its bitmap).
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.summary.fill(0);
        self.count = 0;
    }

    /// The blocks in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let words = self.summary.iter().enumerate().flat_map(|(i, &s)| Bits(s).map(move |j| i as u64 * 64 + j));
        words.flat_map(|w| {
            let x = self.words.get(w as usize).copied().unwrap_or(0);
            Bits(x).map(move |b| w * 64 + b)
        })
    }
}

/// The set bits of a word, lowest first (also the exposed table's changed
/// rows, `rows.rs`).
pub(crate) struct Bits(pub(crate) u64);

impl Iterator for Bits {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(u64::from(b))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::BlockSet;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    /// Random insertions, removals, lookups and clears over blocks spread
    /// from 0 past several words (and summary words): the set answers as
    /// a B-tree set does, iterates in the same order and counts the same.
    #[test]
    fn a_bitmap_set_answers_as_a_btree_set() {
        let mut rng = oxok_testrng::Rng::new(5);
        for _ in 0..200 {
            let mut s = BlockSet::new();
            let mut m = BTreeSet::new();
            // Past several words, and past several summary words.
            let span = 1 + if rng.below(2) == 0 { rng.below(700) } else { rng.below(20_000) };
            for _ in 0..300 {
                let b = rng.below(span);
                match rng.below(8) {
                    0..=2 => assert_eq!(s.insert(b), Ok(m.insert(b))),
                    3..=4 => assert_eq!(s.remove(b), m.remove(&b)),
                    5 => {
                        s.clear();
                        m.clear();
                    }
                    _ => assert_eq!(s.contains(b), m.contains(&b)),
                }
                assert_eq!(s.len(), m.len());
                assert_eq!(s.is_empty(), m.is_empty());
            }
            assert_eq!(s.iter().collect::<Vec<_>>(), m.iter().copied().collect::<Vec<_>>());
            assert!(!s.contains(span + 64 * 100) && !s.remove(span + 64 * 100));
        }
    }

    /// A block whose bitmap cannot be had is refused, the set unchanged.
    #[test]
    fn a_block_past_any_bitmap_is_refused_and_changes_nothing() {
        let mut s = BlockSet::new();
        assert_eq!(s.insert(3), Ok(true));
        assert_eq!(s.insert(u64::MAX - 1), Err(crate::Refusal::NoMemory));
        assert_eq!(s.iter().collect::<Vec<_>>(), [3]);
        assert_eq!(s.len(), 1);
    }
}
