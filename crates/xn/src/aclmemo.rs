//! `acl` results kept across the checks of one batch of copies (one kernel
//! entry of `xn_write_from_batch`), in which no metadata changes: the
//! blocks of a file share their parent, so its `acl` runs once per batch
//! instead of once per block. Keyed by the holder's block and allocation
//! generation, so a number freed and allocated again is never confused.

use crate::template::Acl;

/// Holders remembered (a batch's copies mostly name a few files).
const SEEN: usize = 4;

/// The memo; empty when made. Valid only while no metadata changes: make
/// one per batch, never keep it across calls.
#[derive(Clone, Debug, Default)]
pub struct AclMemo {
    seen: [(u64, u64, Acl); SEEN],
    len: usize,
    /// The slot the next new holder takes once all are used.
    next: usize,
}

impl AclMemo {
    /// A new, empty memo.
    pub fn new() -> AclMemo {
        AclMemo::default()
    }

    /// The `acl` remembered for `holder` in its allocation `generation`.
    pub(crate) fn get(&self, holder: u64, generation: u64) -> Option<&Acl> {
        self.seen.get(..self.len)?.iter().find(|s| s.0 == holder && s.1 == generation).map(|s| &s.2)
    }

    /// Remembers `acl` for `holder` in `generation`, replacing the oldest
    /// when full.
    pub(crate) fn put(&mut self, holder: u64, generation: u64, acl: Acl) {
        let at = if self.len < SEEN {
            self.len += 1;
            self.len - 1
        } else {
            let at = self.next;
            self.next = (self.next + 1) % SEEN;
            at
        };
        if let Some(slot) = self.seen.get_mut(at) {
            *slot = (holder, generation, acl);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_is_found_only_in_its_generation_and_the_oldest_goes_first() {
        let mut m = AclMemo::new();
        let a = Acl::default();
        assert_eq!(m.get(1, 1), None);
        for h in 1..=4 {
            m.put(h, 7, a);
        }
        assert!((1..=4).all(|h| m.get(h, 7).is_some()));
        assert_eq!(m.get(1, 8), None, "another allocation of block 1");
        m.put(5, 7, a);
        assert_eq!(m.get(1, 7), None, "the oldest went");
        assert!((2..=5).all(|h| m.get(h, 7).is_some()));
    }
}
