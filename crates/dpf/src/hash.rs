//! The hash node's table: field value → child node, open addressing with
//! linear probing and backward-shift deletion, grown fallibly.
//!
//! Keys are chosen by users, so the index is a multiply-shift hash with a
//! multiplier the kernel picks at boot ([`Dpf::new`](crate::Dpf::new)'s
//! seed): a program cannot precompute values that all land in one probe run.

use alloc::vec::Vec;

const EMPTY: u32 = u32::MAX;
const MIN_CAP: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u32,
    val: u32,
}

/// A map from `u32` to `u32` (values never `u32::MAX`).
#[derive(Debug, Default)]
pub(crate) struct Table {
    slots: Vec<Slot>,
    len: usize,
}

/// The allocation failed; the table is unchanged.
#[derive(Debug)]
pub(crate) struct NoMemory;

impl Table {
    fn index(&self, key: u32, mult: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        ((key as u64).wrapping_mul(mult) >> (64 - bits)) as usize
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, key: u32, mult: u64) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let m = self.slots.len() - 1;
        let mut i = self.index(key, mult);
        loop {
            let s = self.slots[i];
            if s.val == EMPTY {
                return None;
            }
            if s.key == key {
                return Some(s.val);
            }
            i = (i + 1) & m;
        }
    }

    /// Inserts a key that is not present.
    pub(crate) fn insert(&mut self, key: u32, val: u32, mult: u64) -> Result<(), NoMemory> {
        debug_assert!(val != EMPTY);
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow(mult)?;
        }
        self.place(key, val, mult);
        self.len += 1;
        Ok(())
    }

    fn place(&mut self, key: u32, val: u32, mult: u64) {
        let m = self.slots.len() - 1;
        let mut i = self.index(key, mult);
        while self.slots[i].val != EMPTY {
            i = (i + 1) & m;
        }
        self.slots[i] = Slot { key, val };
    }

    fn grow(&mut self, mult: u64) -> Result<(), NoMemory> {
        let cap = (self.slots.len() * 2).max(MIN_CAP);
        let mut fresh = Vec::new();
        fresh.try_reserve_exact(cap).map_err(|_| NoMemory)?;
        fresh.resize(cap, Slot { key: 0, val: EMPTY });
        let old = core::mem::replace(&mut self.slots, fresh);
        for s in old.into_iter().filter(|s| s.val != EMPTY) {
            self.place(s.key, s.val, mult);
        }
        Ok(())
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: u32, mult: u64) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let m = self.slots.len() - 1;
        let mut i = self.index(key, mult);
        loop {
            let s = self.slots[i];
            if s.val == EMPTY {
                return None;
            }
            if s.key == key {
                break;
            }
            i = (i + 1) & m;
        }
        let val = self.slots[i].val;
        // Backward-shift: pull later members of the probe run into the hole.
        let mut hole = i;
        let mut j = (i + 1) & m;
        while self.slots[j].val != EMPTY {
            let home = self.index(self.slots[j].key, mult);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            let between = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !between {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
            j = (j + 1) & m;
        }
        self.slots[hole].val = EMPTY;
        self.len -= 1;
        Some(val)
    }

    /// The values, in no particular order.
    #[cfg(test)]
    pub(crate) fn values(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter(|s| s.val != EMPTY).map(|s| s.val)
    }
}

#[cfg(test)]
mod tests {
    use super::Table;
    use alloc::collections::BTreeMap;

    #[test]
    fn behaves_like_a_map() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mult = 0x9e37_79b9_7f4a_7c15 | 1;
        let mut t = Table::default();
        let mut model = BTreeMap::new();
        for step in 0..20_000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = (seed % 97) as u32 * 0x0101;
            if seed & 0x100 == 0 {
                assert_eq!(t.remove(key, mult), model.remove(&key));
            } else if let alloc::collections::btree_map::Entry::Vacant(e) = model.entry(key) {
                e.insert(step);
                t.insert(key, step, mult).unwrap();
            }
            assert_eq!(t.len(), model.len());
            for k in [key, key ^ 0x0101, 5] {
                assert_eq!(t.get(k, mult), model.get(&k).copied());
            }
        }
        let mut vals: alloc::vec::Vec<u32> = t.values().collect();
        vals.sort_unstable();
        let mut want: alloc::vec::Vec<u32> = model.values().copied().collect();
        want.sort_unstable();
        assert_eq!(vals, want);
    }
}
