//! The free map: one bit per block, set when the block is allocated (owned,
//! a root, or freed but still on the will-free list).

use alloc::vec::Vec;

use crate::{Refusal, Spans};

/// One bit per block; 1 = not free. Keeps its count of allocated blocks
/// and the range of words changed since [`take_changed`](FreeMap::take_changed)
/// as it goes, so an exposed copy costs what changed, not the disk's size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreeMap {
    words: Vec<u64>,
    nblocks: u64,
    /// Bits set.
    used: u64,
    /// Words changed.
    changed: Spans,
}

impl FreeMap {
    /// A map of `nblocks` free blocks.
    pub fn new(nblocks: u64) -> Result<FreeMap, Refusal> {
        let n = usize::try_from(nblocks.div_ceil(64)).map_err(|_| Refusal::NoMemory)?;
        let mut words = Vec::new();
        words.try_reserve_exact(n).map_err(|_| Refusal::NoMemory)?;
        words.resize(n, 0);
        Ok(FreeMap { words, nblocks, used: 0, changed: Spans::all() })
    }

    /// Blocks on the disk.
    pub fn nblocks(&self) -> u64 {
        self.nblocks
    }

    /// Whether `block` exists and is free.
    pub fn is_free(&self, block: u64) -> bool {
        block < self.nblocks && self.word(block).is_some_and(|w| w & bit(block) == 0)
    }

    /// Marks `block` allocated (`true`) or free; ignores blocks past the
    /// disk.
    pub fn set(&mut self, block: u64, allocated: bool) {
        if block >= self.nblocks {
            return;
        }
        let Some(i) = usize::try_from(block / 64).ok().filter(|&i| i < self.words.len()) else { return };
        let old = self.words[i];
        let new = if allocated { old | bit(block) } else { old & !bit(block) };
        if new == old {
            return;
        }
        self.words[i] = new;
        if allocated {
            self.used += 1;
        } else {
            self.used -= 1;
        }
        self.changed.add(i, i + 1);
    }

    /// The words changed since the last call (all of them at the first),
    /// and none from now on.
    pub fn take_changed(&mut self) -> Spans {
        self.changed.take()
    }

    /// The words (bit `b % 64` of word `b / 64` is block `b`), as exposed.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Free blocks.
    pub fn free_count(&self) -> u64 {
        self.nblocks - self.used
    }

    fn word(&self, block: u64) -> Option<u64> {
        usize::try_from(block / 64).ok().and_then(|i| self.words.get(i)).copied()
    }
}

fn bit(block: u64) -> u64 {
    1 << (block % 64)
}
