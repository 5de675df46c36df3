//! The name cache's table: 64-bit path hashes to what the cache keeps,
//! in open addressing with linear probing. A lookup is a multiply and a
//! probe or two where a B-tree of a thousand paths compared a dozen keys
//! on its way down; removal shifts the entries after it back, so no
//! tombstones build up. The table doubles when half full and starts small
//! again when emptied.

use alloc::vec::Vec;

/// Slots of a table's first allocation.
const MIN_SLOTS: usize = 64;

/// Hash → value, at most one value per hash.
pub(crate) struct PathTable<V> {
    /// A power of two long (or empty); `None` is a free slot.
    slots: Vec<Option<(u64, V)>>,
    len: usize,
}

impl<V> Default for PathTable<V> {
    fn default() -> Self {
        PathTable::new()
    }
}

impl<V> PathTable<V> {
    /// An empty table (no allocation).
    pub(crate) const fn new() -> PathTable<V> {
        PathTable { slots: Vec::new(), len: 0 }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Where `hash` would be found first in `slots` slots.
    fn home(hash: u64, slots: usize) -> usize {
        // The hashes are FNV-1a's: mixed again so their low bits spread.
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (slots - 1)
    }

    /// The slot holding `hash`, if any.
    fn find(&self, hash: u64) -> Option<usize> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let mut i = Self::home(hash, n);
        // At most half the slots are full: a free one ends every probe.
        loop {
            match self.slots.get(i)? {
                Some((h, _)) if *h == hash => return Some(i),
                Some(_) => i = (i + 1) & (n - 1),
                None => return None,
            }
        }
    }

    /// The value kept for `hash`.
    pub(crate) fn get(&self, hash: u64) -> Option<&V> {
        self.find(hash).and_then(|i| self.slots.get(i)?.as_ref()).map(|(_, v)| v)
    }

    /// Whether a value is kept for `hash`.
    #[cfg(test)]
    pub(crate) fn contains_key(&self, hash: u64) -> bool {
        self.find(hash).is_some()
    }

    /// Keeps `value` for `hash`, over the one kept before.
    pub(crate) fn insert(&mut self, hash: u64, value: V) {
        if let Some(i) = self.find(hash) {
            self.slots[i] = Some((hash, value));
            return;
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let n = self.slots.len();
        let mut i = Self::home(hash, n);
        while self.slots[i].is_some() {
            i = (i + 1) & (n - 1);
        }
        self.slots[i] = Some((hash, value));
        self.len += 1;
    }

    /// Twice the slots (the first allocation: [`MIN_SLOTS`]), every entry
    /// placed again.
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(MIN_SLOTS);
        let old = core::mem::replace(&mut self.slots, Vec::with_capacity(n));
        self.slots.resize_with(n, || None);
        self.len = 0;
        for (h, v) in old.into_iter().flatten() {
            self.insert(h, v);
        }
    }

    /// Forgets the value kept for `hash`, if any.
    pub(crate) fn remove(&mut self, hash: u64) {
        let Some(mut hole) = self.find(hash) else { return };
        self.slots[hole] = None;
        self.len -= 1;
        // Entries after the hole whose probe passed through it move back
        // into it, so every probe still meets its entry before a free slot.
        let n = self.slots.len();
        let mut j = (hole + 1) & (n - 1);
        while let Some((h, _)) = self.slots[j] {
            let home = Self::home(h, n);
            // Whether `home` lies cyclically in (hole, j]: then the entry
            // stays where it is.
            let stays = if hole < j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j].take();
                hole = j;
            }
            j = (j + 1) & (n - 1);
        }
    }

    /// Forgets everything, and the room with it.
    pub(crate) fn clear(&mut self) {
        self.slots = Vec::new();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;

    /// A small deterministic generator (xorshift).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn agrees_with_a_map_over_inserts_removals_and_clears() {
        for seed in 1..40u64 {
            let mut s = seed.wrapping_mul(0x1234_5678_9abc_def1);
            let mut t = PathTable::new();
            let mut m = BTreeMap::new();
            // Few distinct keys (many collide on their home slot in a
            // small table), many operations.
            let keys: Vec<u64> = (0..300).map(|_| next(&mut s)).collect();
            for step in 0..5_000 {
                let k = keys[(next(&mut s) % keys.len() as u64) as usize];
                match next(&mut s) % 10 {
                    0..=4 => {
                        t.insert(k, step);
                        m.insert(k, step);
                    }
                    5..=8 => {
                        t.remove(k);
                        m.remove(&k);
                    }
                    _ if step % 997 == 0 => {
                        t.clear();
                        m.clear();
                    }
                    _ => {}
                }
                assert_eq!(t.len(), m.len());
                assert_eq!(t.get(k), m.get(&k));
            }
            for k in &keys {
                assert_eq!(t.get(*k), m.get(k), "seed {seed}");
                assert_eq!(t.contains_key(*k), m.contains_key(k));
            }
            assert!(t.slots.is_empty() || t.len * 2 <= t.slots.len());
        }
    }

    #[test]
    fn entries_sharing_a_home_slot_survive_the_removal_of_any_of_them() {
        // Keys whose home is the same slot in a 64-slot table.
        let mut same = Vec::new();
        let mut k = 1u64;
        while same.len() < 6 {
            if PathTable::<u32>::home(k, MIN_SLOTS) == 5 {
                same.push(k);
            }
            k += 1;
        }
        for gone in 0..same.len() {
            let mut t = PathTable::new();
            for (i, &k) in same.iter().enumerate() {
                t.insert(k, i);
            }
            t.remove(same[gone]);
            for (i, &k) in same.iter().enumerate() {
                assert_eq!(t.get(k), (i != gone).then_some(&i));
            }
        }
    }

    #[test]
    fn a_probe_that_wraps_past_the_last_slot_finds_its_entry() {
        let mut last = Vec::new();
        let mut k = 1u64;
        while last.len() < 3 {
            if PathTable::<u32>::home(k, MIN_SLOTS) == MIN_SLOTS - 1 {
                last.push(k);
            }
            k += 1;
        }
        let mut t = PathTable::new();
        for (i, &k) in last.iter().enumerate() {
            t.insert(k, i);
        }
        t.remove(last[0]);
        assert_eq!(t.get(last[1]), Some(&1));
        assert_eq!(t.get(last[2]), Some(&2));
        assert_eq!(t.get(last[0]), None);
    }
}
