//! [`Handles`]: at most [`HANDLES`] values under numbers handed out in
//! increasing order, such as one client's handles at a file server
//! (`apps/fsd/src/table.rs`). A value lives in the slot its number names
//! modulo [`HANDLES`], so it is found by index, not by a search, and
//! adding and removing move nothing (a map's insertion and removal per
//! open and close, with its node rebalancing, were about a tenth of a
//! small file's read). Numbers added one after another are consecutive
//! while their slots are free; a number whose slot is taken is skipped.
//! A number is reused only after the counter wraps (2^32 adds), so a
//! closed handle does not name what came after it.

/// Values one [`Handles`] holds at most.
pub const HANDLES: usize = 128;

/// Up to [`HANDLES`] values under numbers (never 0).
pub struct Handles<T> {
    /// Slot `n % HANDLES`: the number and value it holds.
    slots: [Option<(u32, T)>; HANDLES],
    /// Where the next search for a number starts.
    next: u32,
    held: usize,
}

impl<T> Default for Handles<T> {
    fn default() -> Handles<T> {
        Handles::new()
    }
}

impl<T> Handles<T> {
    /// None held; the first number is 1.
    pub const fn new() -> Handles<T> {
        Handles { slots: [const { None }; HANDLES], next: 1, held: 0 }
    }

    fn slot(n: u32) -> usize {
        n as usize % HANDLES
    }

    /// Keeps `value` under the next number whose slot is free; `None`
    /// (nothing kept) when [`HANDLES`] are held.
    pub fn add(&mut self, value: T) -> Option<u32> {
        if self.held == HANDLES {
            return None;
        }
        // At most HANDLES - 1 slots are taken, so this ends within HANDLES steps.
        let mut n = self.next;
        while self.slots[Self::slot(n)].is_some() {
            n = n.wrapping_add(1).max(1);
        }
        self.slots[Self::slot(n)] = Some((n, value));
        self.next = n.wrapping_add(1).max(1);
        self.held += 1;
        Some(n)
    }

    /// The value under `n`, if it is held.
    pub fn get(&self, n: u32) -> Option<&T> {
        match &self.slots[Self::slot(n)] {
            Some((held, v)) if *held == n => Some(v),
            _ => None,
        }
    }

    /// Takes out the value under `n`.
    pub fn remove(&mut self, n: u32) -> Option<T> {
        let slot = &mut self.slots[Self::slot(n)];
        if slot.as_ref().is_none_or(|(held, _)| *held != n) {
            return None;
        }
        self.held -= 1;
        slot.take().map(|(_, v)| v)
    }

    /// Takes out every value.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.held = 0;
        self.slots.iter_mut().filter_map(|s| s.take().map(|(_, v)| v))
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.held
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::HashMap;
    use std::vec::Vec;

    #[test]
    fn numbers_run_on_and_skip_a_held_slot() {
        let mut h = Handles::new();
        let first: Vec<u32> = (0..3).map(|v| h.add(v).unwrap()).collect();
        assert_eq!(first, [1, 2, 3], "consecutive from 1");
        assert_eq!(h.remove(2), Some(1));
        assert_eq!(h.remove(2), None, "a closed number removes nothing");
        assert_eq!(h.get(2), None);
        // Numbers go on from 4 (2 is not reused); 128 takes slot 0, and
        // 129's slot is 1's, held, so the last goes to 130 (slot 2, freed).
        let n = HANDLES as u32;
        let next: Vec<u32> = (0..n - 2).map(|v| h.add(v).unwrap()).collect();
        assert_eq!(next[0], 4);
        assert_eq!((next[HANDLES - 4], next[HANDLES - 3]), (n, n + 2), "129 is skipped");
        assert_eq!((h.len(), h.add(999)), (HANDLES, None), "full");
        assert_eq!((h.get(1), h.get(3), h.get(n + 2)), (Some(&0), Some(&2), Some(&(n - 3))));
        assert_eq!(h.get(n + 1), None, "a number never handed out");
        assert_eq!(h.drain().count(), HANDLES);
        assert!(h.is_empty() && h.get(1).is_none());
    }

    #[test]
    fn the_counter_wraps_past_zero() {
        let mut h = Handles { next: u32::MAX, ..Handles::new() };
        assert_eq!(h.add('a'), Some(u32::MAX));
        assert_eq!(h.add('b'), Some(1), "0 is never a number");
        assert_eq!((h.get(u32::MAX), h.get(1), h.get(0)), (Some(&'a'), Some(&'b'), None));
    }

    /// Random adds and removes against a map of the numbers handed out:
    /// every held number finds its value, every closed one nothing, no
    /// number is handed out twice, and an add fails only when full.
    #[test]
    fn numbers_agree_with_a_map() {
        let mut h = Handles::new();
        let mut live: HashMap<u32, u32> = HashMap::new();
        let mut closed = Vec::new();
        let mut x = 99u64;
        for n in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (x >> 40) % 5 < 2 && !live.is_empty() {
                let k = *live.keys().nth((x >> 20) as usize % live.len()).unwrap();
                assert_eq!(h.remove(k), live.remove(&k));
                closed.push(k);
            } else {
                match h.add(n) {
                    Some(k) => assert!(live.insert(k, n).is_none() && !closed.contains(&k), "{k} handed out twice"),
                    None => assert_eq!(live.len(), HANDLES, "refused below the limit"),
                }
            }
            assert_eq!(h.len(), live.len());
        }
        assert!(live.iter().all(|(k, v)| h.get(*k) == Some(v)));
        assert!(closed.iter().all(|k| h.get(*k).is_none()));
    }
}
