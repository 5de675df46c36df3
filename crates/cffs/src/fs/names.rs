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
pub const MAX_NAMES: usize = 1024;

/// Paths (absolute, already checked) and where their name records lie.
#[derive(Default)]
pub(crate) struct Names {
    map: BTreeMap<String, Loc>,
}

impl Names {
    /// An empty cache.
    pub const fn new() -> Names {
        Names { map: BTreeMap::new() }
    }

    /// Where `path`'s name record was found last, if kept.
    pub fn get(&self, path: &str) -> Option<Loc> {
        self.map.get(path).copied()
    }

    /// Keeps `at` as the place of `path`'s name record.
    pub fn put(&mut self, path: &str, at: Loc) {
        if self.map.len() >= MAX_NAMES {
            self.map.clear();
        }
        self.map.insert(String::from(path), at);
    }

    /// Forgets `path` (its record no longer holds its name).
    pub fn forget(&mut self, path: &str) {
        self.map.remove(path);
    }

    /// Forgets everything (the name space is changing).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}
