//! Symbolic links: making one (`symlink(2)`) and reading its target
//! (`readlink(2)`). Following them is path resolution's work
//! ([`namei`](crate::namei)).
//!
//! A target is stored verbatim: 1..[`PATH_MAX`](crate::PATH_MAX) bytes without NUL, checked
//! like a path's syntax (empty `NotFound`, too long `TooLong`, NUL
//! `InvalidName`) but not resolved, so it may name nothing (a dangling
//! link) or hold components longer than [`NAME_MAX`](crate::NAME_MAX)
//! (`TooLong` only when followed). A link's size is its target's length; it
//! holds no pages and is not counted against
//! [`Limits::max_bytes`](crate::Limits::max_bytes), only against the inode
//! limit. Its mode is always `0o777`.

use alloc::vec::Vec;

use crate::dir::Entry;
use crate::error::{FsError, Result};
use crate::fs::Fs;
use crate::inode::{Body, Ino, Kind};
use crate::path::{Path, check_text};

/// Checks a target's syntax and copies it (`NoSpace` if the heap refuses).
fn checked_target(target: &[u8]) -> Result<Body> {
    check_text(target)?;
    let mut copy = Vec::new();
    copy.try_reserve_exact(target.len()).map_err(|_| FsError::NoSpace)?;
    copy.extend_from_slice(target);
    Ok(Body::Symlink(copy.into_boxed_slice()))
}

impl Fs {
    /// Makes a symbolic link at `path` holding `target` verbatim
    /// (`symlink(2)`); returns the link's inode (one link, mode `0o777`).
    ///
    /// The target is checked first: empty `NotFound`, NUL `InvalidName`,
    /// [`PATH_MAX`](crate::PATH_MAX) bytes or more `TooLong`; it need not exist. Then, as
    /// for [`link`](Self::link)'s new name: the last component of `path` is
    /// not followed; `Exists` if the name exists (a symbolic link too) or
    /// is `.`, `..` or the root; `NotFound` for a new name with a trailing
    /// slash, or in a removed directory.
    pub fn symlink(&mut self, cwd: Ino, target: impl AsRef<[u8]>, path: impl AsRef<[u8]>) -> Result<Ino> {
        let body = checked_target(target.as_ref())?;
        let path = Path::parse(path.as_ref())?;
        let (parent, name) = self.new_name(cwd, &path)?;
        let ino = self.alloc(body, 1)?;
        self.add_entry(parent, name, Entry { ino, kind: Kind::Symlink })?;
        Ok(ino)
    }

    /// The target of the symbolic link `path` names (`readlink(2)`); the
    /// last component is not followed (unless the path ends in a slash, as
    /// on Linux, which then names the link's destination). `Invalid` if
    /// `path` names something other than a symbolic link; resolution errors
    /// as for [`lookup_nofollow`](Self::lookup_nofollow).
    pub fn readlink(&self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<Vec<u8>> {
        let ino = self.lookup_nofollow(cwd, path)?;
        self.arena.get(ino)?.target().map(<[u8]>::to_vec).ok_or(FsError::Invalid)
    }
}
