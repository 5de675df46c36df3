//! [`BlockMap`]: a word for each of some block numbers, found with two
//! loads — a table of chunks of [`CHUNK`] words, each made when a block
//! in its range first gets a word. A program's buffer-cache bindings
//! (block → page of its window) are looked up on every access to a cached
//! block; a B-tree lookup among thousands of them cost some hundreds of
//! instructions.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::Refusal;

/// Blocks one chunk covers.
pub const CHUNK: usize = 512;

/// A map from block numbers to words.
#[derive(Debug, Default)]
pub struct BlockMap {
    /// Chunk `b / CHUNK` holds `b`'s word plus one at `b % CHUNK` (0: none).
    chunks: Vec<Option<Box<[u64; CHUNK]>>>,
    /// Blocks with a word.
    count: usize,
}

impl BlockMap {
    /// The empty map (nothing allocated).
    pub const fn new() -> BlockMap {
        BlockMap { chunks: Vec::new(), count: 0 }
    }

    fn at(block: u64) -> (usize, usize) {
        ((block / CHUNK as u64) as usize, (block % CHUNK as u64) as usize)
    }

    /// `block`'s word, if it has one.
    pub fn get(&self, block: u64) -> Option<u64> {
        let (c, i) = Self::at(block);
        match self.chunks.get(c)?.as_deref()?[i] {
            0 => None,
            w => Some(w - 1),
        }
    }

    /// Makes room for `block`'s word, so that [`insert`](BlockMap::insert)
    /// of it cannot fail. `NoMemory`, nothing changed, if it cannot.
    pub fn reserve(&mut self, block: u64) -> Result<(), Refusal> {
        let (c, _) = Self::at(block);
        if c >= self.chunks.len() {
            self.chunks.try_reserve(c + 1 - self.chunks.len()).map_err(|_| Refusal::NoMemory)?;
            self.chunks.resize_with(c + 1, || None);
        }
        if self.chunks[c].is_none() {
            let mut words: Vec<u64> = Vec::new();
            words.try_reserve_exact(CHUNK).map_err(|_| Refusal::NoMemory)?;
            words.resize(CHUNK, 0);
            let chunk: Box<[u64; CHUNK]> = words.into_boxed_slice().try_into().map_err(|_| Refusal::NoMemory)?;
            self.chunks[c] = Some(chunk);
        }
        Ok(())
    }

    /// Gives `block` the word `value` (at most `u64::MAX - 1`), replacing
    /// any: the word before. `NoMemory`, nothing changed, if room for it
    /// cannot be made; `OutOfRange` for `u64::MAX`.
    pub fn insert(&mut self, block: u64, value: u64) -> Result<Option<u64>, Refusal> {
        let stored = value.checked_add(1).ok_or(Refusal::OutOfRange(value))?;
        self.reserve(block)?;
        let (c, i) = Self::at(block);
        let Some(Some(chunk)) = self.chunks.get_mut(c) else { return Err(Refusal::NoMemory) };
        let before = core::mem::replace(&mut chunk[i], stored);
        self.count += usize::from(before == 0);
        Ok(before.checked_sub(1))
    }

    /// Takes `block`'s word out: the word, if it had one.
    pub fn remove(&mut self, block: u64) -> Option<u64> {
        let (c, i) = Self::at(block);
        let chunk = self.chunks.get_mut(c)?.as_deref_mut()?;
        let before = core::mem::replace(&mut chunk[i], 0);
        self.count -= usize::from(before != 0);
        before.checked_sub(1)
    }

    /// Blocks with a word.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no block has a word.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The blocks with a word, ascending.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            let words = chunk.as_deref().map_or(&[][..], |w| &w[..]);
            words.iter().enumerate().filter(|&(_, &w)| w != 0).map(move |(i, _)| (c * CHUNK + i) as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::{BlockMap, CHUNK};
    use crate::Refusal;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    /// Random insertions, replacements, removals and lookups over blocks
    /// spread across many chunks (and far past the first): the map answers
    /// as a B-tree map does, lists the same keys in order, counts the same.
    #[test]
    fn a_block_map_answers_as_a_btree_map() {
        let mut rng = oxok_testrng::Rng::new(11);
        let mut map = BlockMap::new();
        let mut model: BTreeMap<u64, u64> = BTreeMap::new();
        for step in 0..60_000 {
            let block = match rng.below(4) {
                0 => rng.below(8),
                1 => rng.below(CHUNK as u64 * 3),
                2 => rng.below(70_000),
                _ => CHUNK as u64 * rng.below(6) + rng.below(2),
            };
            match rng.below(3) {
                0 => {
                    let value = rng.below(1 << 40);
                    assert_eq!(map.insert(block, value), Ok(model.insert(block, value)), "step {step}");
                }
                1 => assert_eq!(map.remove(block), model.remove(&block), "step {step}"),
                _ => assert_eq!(map.get(block), model.get(&block).copied(), "step {step}"),
            }
            assert_eq!(map.len(), model.len());
        }
        assert_eq!(map.keys().collect::<Vec<_>>(), model.keys().copied().collect::<Vec<_>>());
        assert_eq!(map.is_empty(), model.is_empty());
    }

    /// The one word that cannot be kept is refused with nothing changed;
    /// 0 is a word like any other.
    #[test]
    fn the_largest_word_is_refused_and_zero_is_kept() {
        let mut map = BlockMap::new();
        assert_eq!(map.insert(5, u64::MAX), Err(Refusal::OutOfRange(u64::MAX)));
        assert_eq!((map.get(5), map.len()), (None, 0));
        assert_eq!(map.insert(5, 0), Ok(None));
        assert_eq!((map.get(5), map.len()), (Some(0), 1));
        assert_eq!(map.remove(5), Some(0));
        assert_eq!(map.remove(5), None);
    }
}
