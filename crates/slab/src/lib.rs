//! [`Slab`]: values kept under words that name them, such as the disk file
//! server's open files (`apps/fsd/src/disk.rs`). A word is a slot's index
//! and the slot's generation, so a value is found by index, not by a
//! search (a map insertion and removal per open and close were about a
//! tenth of a small file's read), and a slot taken again never answers to
//! a word handed out for what it held before.
//!
//! A pure `no_std` crate, host-tested.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod handles;
pub use handles::{HANDLES, Handles};

use alloc::vec::Vec;

/// Values under generation-tagged words (never 0).
pub struct Slab<T> {
    /// Each slot's generation and what it holds.
    slots: Vec<(u32, Option<T>)>,
    /// Empty slots.
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Slab<T> {
        Slab::new()
    }
}

impl<T> Slab<T> {
    /// An empty slab.
    pub const fn new() -> Slab<T> {
        Slab { slots: Vec::new(), free: Vec::new() }
    }

    fn slot(word: u64) -> (usize, u32) {
        ((word & 0xffff_ffff) as usize, (word >> 32) as u32)
    }

    /// Keeps `value` under a new word; `None` (nothing kept) without
    /// memory for it.
    pub fn add(&mut self, value: T) -> Option<u64> {
        let i = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                let i = u32::try_from(self.slots.len()).ok()?;
                self.slots.try_reserve(1).ok()?;
                self.free.try_reserve(self.slots.len() + 1).ok()?;
                self.slots.push((0, None));
                i as usize
            }
        };
        let slot = self.slots.get_mut(i)?;
        let generation = slot.0.wrapping_add(1).max(1);
        *slot = (generation, Some(value));
        Some((u64::from(generation) << 32) | i as u64)
    }

    /// The value `word` names, if it still does.
    pub fn get(&self, word: u64) -> Option<&T> {
        let (i, generation) = Self::slot(word);
        self.slots.get(i).filter(|s| s.0 == generation).and_then(|s| s.1.as_ref())
    }

    /// The value `word` names, for change.
    pub fn get_mut(&mut self, word: u64) -> Option<&mut T> {
        let (i, generation) = Self::slot(word);
        self.slots.get_mut(i).filter(|s| s.0 == generation).and_then(|s| s.1.as_mut())
    }

    /// Takes out the value `word` names.
    pub fn remove(&mut self, word: u64) -> Option<T> {
        let (i, generation) = Self::slot(word);
        let value = self.slots.get_mut(i).filter(|s| s.0 == generation)?.1.take()?;
        self.free.push(i as u32);
        Some(value)
    }

    /// Keeps only the values for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.1.as_ref().is_some_and(|v| !keep(v)) {
                s.1 = None;
                self.free.push(i as u32);
            }
        }
    }

    /// Every value.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|s| s.1.as_ref())
    }

    /// Every value, for change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().filter_map(|s| s.1.as_mut())
    }

    /// Values kept.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Whether it keeps nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_slot_taken_again_never_answers_to_the_old_word() {
        let mut s = Slab::new();
        let a = s.add("a").unwrap();
        let b = s.add("b").unwrap();
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(s.remove(a), Some("a"));
        let c = s.add("c").unwrap();
        assert_eq!(Slab::<&str>::slot(a).0, Slab::<&str>::slot(c).0, "the slot is reused");
        assert_eq!((s.get(a), s.get(c), s.get(b)), (None, Some(&"c"), Some(&"b")));
        assert_eq!(s.remove(a), None, "a stale word removes nothing");
        assert_eq!(s.len(), 2);
        s.retain(|v| *v != "b");
        assert_eq!((s.get(b), s.len()), (None, 1));
        *s.get_mut(c).unwrap() = "d";
        assert_eq!(s.values_mut().map(|v| *v).collect::<alloc::vec::Vec<_>>(), ["d"]);
        assert_eq!(s.values().collect::<alloc::vec::Vec<_>>(), [&"d"]);
    }

    /// Random adds and removes against a map of the words handed out:
    /// every live word finds its value, every ended one finds nothing.
    #[test]
    fn words_agree_with_a_map() {
        let mut s = Slab::new();
        let mut live: HashMap<u64, u32> = HashMap::new();
        let mut dead = alloc::vec::Vec::new();
        let mut x = 12345u64;
        for n in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 40).is_multiple_of(3) && !live.is_empty() {
                let w = *live.keys().nth((x >> 20) as usize % live.len()).unwrap();
                assert_eq!(s.remove(w), live.remove(&w));
                dead.push(w);
            } else {
                let w = s.add(n).unwrap();
                assert!(live.insert(w, n).is_none(), "a word handed out twice");
            }
            assert_eq!(s.len(), live.len());
        }
        assert!(live.iter().all(|(w, v)| s.get(*w) == Some(v)));
        assert!(dead.iter().all(|w| s.get(*w).is_none()));
    }
}
