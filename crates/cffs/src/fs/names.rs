//! The name cache: where each recently resolved path's name record lies,
//! so that resolving it again looks at one block instead of scanning every
//! directory on the way (a directory of a thousand small files is a scan
//! of a thousand names per lookup without it).
//!
//! Correctness does not rest on the cache: [`Fs::resolve`](super::Fs)
//! takes a hit only when the record it names still holds a name (a file or
//! a link) with the path's last component, and every change to the name
//! space (create, mkdir, unlink, link, rename, copy) empties the cache
//! before and after it, so a record reused for another directory's name
//! is never taken for the old one. Paths enter only after a full,
//! component-checked resolution, so a hit needs no checks of its own.

use alloc::collections::BTreeMap;
use alloc::string::String;

use super::Loc;

/// Most paths kept; the cache starts over when it is full.
pub const MAX_NAMES: usize = 4096;

/// Paths (absolute, already checked) and where their name records lie,
/// by a 64-bit hash of the path: a lookup compares integers on the way
/// down and the path once at the end. Two paths with one hash share an
/// entry (the later one wins, the other misses): a cache may forget.
#[derive(Default)]
pub(crate) struct Names {
    map: BTreeMap<u64, (String, Loc)>,
}

/// The cache's key for `path`: its FNV-1a hash (the crate's one).
fn hash(path: &str) -> u64 {
    crate::script::hash(path.as_bytes())
}

impl Names {
    /// An empty cache.
    pub const fn new() -> Names {
        Names { map: BTreeMap::new() }
    }

    /// Where `path`'s name record was found last, if kept.
    pub fn get(&self, path: &str) -> Option<Loc> {
        self.map.get(&hash(path)).filter(|(p, _)| p == path).map(|&(_, at)| at)
    }

    /// Keeps `at` as the place of `path`'s name record.
    pub fn put(&mut self, path: &str, at: Loc) {
        if self.map.len() >= MAX_NAMES {
            self.map.clear();
        }
        self.map.insert(hash(path), (String::from(path), at));
    }

    /// Forgets `path` (its record no longer holds its name).
    pub fn forget(&mut self, path: &str) {
        let h = hash(path);
        if self.map.get(&h).is_some_and(|(p, _)| p == path) {
            self.map.remove(&h);
        }
    }

    /// Forgets everything (the name space is changing).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_shares_a_hash_misses_and_never_answers_for_another() {
        let mut n = Names::new();
        let at = |block| Loc { block, rec: 0 };
        n.put("/a", at(1));
        // Another path in the same entry, as a colliding hash would put it.
        n.map.insert(hash("/a"), (String::from("/b"), at(2)));
        assert_eq!(n.get("/a"), None);
        n.forget("/a");
        assert!(n.map.contains_key(&hash("/a")), "forgetting /a leaves /b's entry");
        n.put("/c", at(3));
        assert_eq!(n.get("/c"), Some(at(3)));
        n.forget("/c");
        assert_eq!(n.get("/c"), None);
    }
}
