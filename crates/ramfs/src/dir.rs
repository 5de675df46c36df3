//! Directories: sorted maps from names to inodes.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::ops::Bound;

use crate::inode::{Ino, Kind};

/// One directory entry, as [`Fs::readdir`](crate::Fs::readdir) reports it.
///
/// `.` and `..` are never stored and never reported; see
/// [`Fs::parent`](crate::Fs::parent) to synthesise them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's name: 1..=[`NAME_MAX`](crate::NAME_MAX) bytes, no `/` or
    /// NUL, never `.` or `..`. Not necessarily UTF-8.
    pub name: Vec<u8>,
    /// The inode it names.
    pub ino: Ino,
    /// What the inode is.
    pub kind: Kind,
}

/// An entry as stored: the inode and its (immutable) kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub ino: Ino,
    pub kind: Kind,
}

/// A directory's contents.
pub(crate) struct Dir {
    /// Entries sorted by name bytes: the order of `readdir`.
    entries: BTreeMap<Box<[u8]>, Entry>,
    /// The directory containing this one (the root's parent is itself);
    /// `None` once the directory has been removed.
    pub parent: Option<Ino>,
    /// This directory's name in its parent (empty for the root and removed
    /// directories), for [`Fs::path_of`](crate::Fs::path_of).
    pub name: Box<[u8]>,
}

impl Dir {
    pub fn new(parent: Ino, name: &[u8]) -> Dir {
        Dir { entries: BTreeMap::new(), parent: Some(parent), name: name.into() }
    }

    pub fn get(&self, name: &[u8]) -> Option<Entry> {
        self.entries.get(name).copied()
    }

    pub fn insert(&mut self, name: &[u8], entry: Entry) {
        self.entries.insert(name.into(), entry);
    }

    pub fn remove(&mut self, name: &[u8]) -> Option<Entry> {
        self.entries.remove(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries with names strictly after `after` (all if `None`), in order.
    pub fn after<'a>(&'a self, after: Option<&'a [u8]>) -> impl Iterator<Item = (&'a [u8], Entry)> + 'a {
        let lower = match after {
            Some(name) => Bound::Excluded(name),
            None => Bound::Unbounded,
        };
        self.entries.range::<[u8], _>((lower, Bound::Unbounded)).map(|(k, e)| (&**k, *e))
    }
}
