//! The name cache: where each recently resolved path's name record lies,
//! so that resolving it again looks at one block instead of scanning every
//! directory on the way (a directory of a thousand small files is a scan
//! of a thousand names per lookup without it).
//!
//! Correctness does not rest on the cache for names it holds:
//! [`Fs::resolve`](super::Fs) takes a hit only when the record it names
//! still holds a name (a file or a link) with the path's last component.
//! Creating a file adds its own path and removing one forgets only its own
//! (neither moves another name's record); every other change to the name
//! space (mkdir, unlink of a directory, link, rename, copy) empties the
//! cache before and after it, so a record reused for another directory's
//! name is never taken for the old one. Paths enter only after a full,
//! component-checked resolution, so a hit needs no checks of its own.
//!
//! A directory whose every name the cache holds is *complete*: a name not
//! in the cache is not in it, so creating a file there needs no scan of
//! the directory for the name first (a directory filling up with a
//! thousand small files was a scan of all of them per create). Anything
//! that may lose a name of a complete directory from the cache — the
//! cache emptied or full, a path sharing another's hash, a record found no
//! longer holding its name — forgets every directory's completeness.

use alloc::string::String;
use alloc::vec::Vec;

use super::Loc;
use super::pathtable::PathTable;

/// Most paths kept; the cache starts over when it is full.
pub const MAX_NAMES: usize = 4096;

/// Paths (absolute, already checked) and where their name records lie,
/// by a 64-bit hash of the path in an open-addressing table: a lookup
/// finds the hash in a probe or two and compares the path once. Two
/// paths with one hash share an entry (the later one wins, the other
/// misses): a cache may forget.
#[derive(Default)]
pub(crate) struct Names {
    map: PathTable<(String, Loc)>,
    /// The complete directories, by path (a few: the last ones made so).
    complete: Vec<String>,
    /// Times the cache lost names it held (emptied or an entry replaced
    /// by another path's): a directory's names put between two equal
    /// readings are all still there.
    losses: u64,
    /// The directory resolved last, by path, and where its inode is: a
    /// file made or removed there after the one before needs no look at
    /// its directory's own name. Gone with any loss (a directory's inode
    /// moves or goes only by a change that empties the cache).
    dir: Option<(String, Loc)>,
}

/// Complete directories remembered at once.
const COMPLETE: usize = 8;

/// The cache's key for `path`: its FNV-1a hash (the crate's one).
fn hash(path: &str) -> u64 {
    crate::script::hash(path.as_bytes())
}

impl Names {
    /// An empty cache.
    pub const fn new() -> Names {
        Names { map: PathTable::new(), complete: Vec::new(), losses: 0, dir: None }
    }

    /// Where `path`'s name record was found last, if kept.
    pub fn get(&self, path: &str) -> Option<Loc> {
        self.map.get(hash(path)).filter(|(p, _)| p == path).map(|&(_, at)| at)
    }

    /// Keeps `at` as the place of `path`'s name record.
    pub fn put(&mut self, path: &str, at: Loc) {
        if self.map.len() >= MAX_NAMES {
            self.clear();
        }
        let h = hash(path);
        if self.map.get(h).is_some_and(|(p, _)| p != path) {
            self.lost();
        }
        self.map.insert(h, (String::from(path), at));
    }

    /// Forgets `path`, whose name is gone from its directory (a complete
    /// directory stays complete).
    pub fn forget(&mut self, path: &str) {
        let h = hash(path);
        if self.map.get(h).is_some_and(|(p, _)| p == path) {
            self.map.remove(h);
        }
    }

    /// Forgets `path`, whose record no longer holds its name although the
    /// cache said so: no directory is taken as complete any more.
    pub fn stale(&mut self, path: &str) {
        self.forget(path);
        self.lost();
    }

    /// Forgets everything (the name space is changing).
    pub fn clear(&mut self) {
        self.map.clear();
        self.lost();
    }

    fn lost(&mut self) {
        self.complete.clear();
        self.dir = None;
        self.losses += 1;
    }

    /// Where the inode of directory `path` is, if it was the last one
    /// resolved.
    pub fn dir(&self, path: &str) -> Option<Loc> {
        self.dir.as_ref().filter(|(p, _)| p == path).map(|&(_, at)| at)
    }

    /// Keeps `at` as where directory `path`'s inode is.
    pub fn put_dir(&mut self, path: &str, at: Loc) {
        match &mut self.dir {
            Some((p, a)) => {
                p.clear();
                p.push_str(path);
                *a = at;
            }
            None => self.dir = Some((String::from(path), at)),
        }
    }

    /// The count of losses, to compare before and after putting a
    /// directory's names ([`Names::set_complete`]).
    pub fn losses(&self) -> u64 {
        self.losses
    }

    /// Takes directory `dir` as complete: every one of its names was put
    /// since the cache's loss count read `since`, if it still does.
    pub fn set_complete(&mut self, dir: &str, since: u64) {
        if since != self.losses || self.is_complete(dir) {
            return;
        }
        if self.complete.len() >= COMPLETE {
            self.complete.remove(0);
        }
        self.complete.push(String::from(dir));
    }

    /// Whether every name of directory `dir` is in the cache.
    pub fn is_complete(&self, dir: &str) -> bool {
        self.complete.iter().any(|d| d == dir)
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
        assert!(n.map.contains_key(hash("/a")), "forgetting /a leaves /b's entry");
        n.put("/c", at(3));
        assert_eq!(n.get("/c"), Some(at(3)));
        n.forget("/c");
        assert_eq!(n.get("/c"), None);
    }

    #[test]
    fn completeness_ends_with_any_loss_of_a_name() {
        let mut n = Names::new();
        let at = |block| Loc { block, rec: 0 };
        let since = n.losses();
        n.put("/d/a", at(1));
        n.set_complete("/d", since);
        assert!(n.is_complete("/d") && !n.is_complete("/e"));
        n.forget("/d/a");
        assert!(n.is_complete("/d"), "a name removed from the directory keeps it complete");
        // A path that takes another's entry loses a name.
        n.put("/d/b", at(2));
        n.map.insert(hash("/d/c"), (String::from("/d/x"), at(3)));
        n.put("/d/c", at(4));
        assert!(!n.is_complete("/d"));
        // Names put across a loss make nothing complete.
        let since = n.losses();
        n.put("/d/b", at(2));
        n.stale("/d/b");
        n.set_complete("/d", since);
        assert!(!n.is_complete("/d"));
        let since = n.losses();
        n.set_complete("/d", since);
        n.clear();
        assert!(!n.is_complete("/d"));
    }

    #[test]
    fn the_last_directory_is_kept_until_any_loss() {
        let mut n = Names::new();
        let at = |block| Loc { block, rec: 3 };
        n.put_dir("/d", at(7));
        assert_eq!((n.dir("/d"), n.dir("/e"), n.dir("/d/")), (Some(at(7)), None, None));
        n.put_dir("/e", at(8));
        assert_eq!((n.dir("/d"), n.dir("/e")), (None, Some(at(8))), "only the last");
        n.stale("/e/x");
        assert_eq!(n.dir("/e"), None, "a stale name forgets it");
        n.put_dir("/e", at(8));
        n.clear();
        assert_eq!(n.dir("/e"), None, "a change to the name space forgets it");
    }
}
