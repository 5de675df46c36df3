//! Path resolution: from a working directory and a path to an inode.
//!
//! Resolution starts at the root for an absolute path and at the working
//! directory `cwd` otherwise (for an absolute path `cwd` is ignored, as
//! `openat` ignores its descriptor). Each component must be taken from a
//! directory (`NotADirectory` otherwise): `.` stays, `..` goes to the parent
//! — the root is its own parent, so no path climbs above it — and a name
//! must exist (`NotFound`). Inside a removed directory (a pinned working
//! directory that was `rmdir`ed) `.` still works but names and `..` are
//! `NotFound`. A trailing slash requires the result to be a directory.

use crate::error::{FsError, Result};
use crate::fs::Fs;
use crate::inode::{Ino, Kind};
use crate::path::{Component, Last, Path};

impl Fs {
    /// The inode `path` names, relative to directory `cwd` unless absolute.
    ///
    /// An absolute path ignores `cwd` (it need not even be valid); a
    /// relative one needs a live directory (`BadInode`, `NotADirectory`).
    /// Every component must be found in a directory (`NotADirectory` when
    /// walking through a file, `NotFound` for a missing name); `.` stays,
    /// `..` goes up and stops at the root; repeated slashes count as one; a
    /// trailing slash demands a directory (`NotADirectory`). Syntax errors
    /// come first: empty path `NotFound`, NUL `InvalidName`, a path of
    /// [`PATH_MAX`](crate::PATH_MAX) bytes or a component over
    /// [`NAME_MAX`](crate::NAME_MAX) bytes `TooLong`. In a removed directory
    /// only `.` resolves.
    pub fn lookup(&self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<Ino> {
        let path = Path::parse(path.as_ref())?;
        self.walk(cwd, &path)
    }

    /// Where resolution of `path` starts.
    fn start(&self, cwd: Ino, path: &Path<'_>) -> Result<Ino> {
        if path.absolute {
            return Ok(Ino::ROOT);
        }
        self.arena.get(cwd)?.dir()?;
        Ok(cwd)
    }

    /// One step from `at` (which must be a directory) through `component`.
    fn step(&self, at: Ino, component: Component<'_>) -> Result<Ino> {
        let dir = self.arena.get(at)?.dir()?;
        match component {
            Component::Dot => Ok(at),
            Component::DotDot => dir.parent.ok_or(FsError::NotFound),
            Component::Name(name) => dir.get(name).map(|e| e.ino).ok_or(FsError::NotFound),
        }
    }

    /// Resolves the whole path.
    pub(crate) fn walk(&self, cwd: Ino, path: &Path<'_>) -> Result<Ino> {
        let mut at = self.start(cwd, path)?;
        for &c in path.components() {
            at = self.step(at, c)?;
        }
        if path.trailing_slash && self.arena.get(at)?.kind() != Kind::Dir {
            return Err(FsError::NotADirectory);
        }
        Ok(at)
    }

    /// Resolves all but the last component: returns the directory the last
    /// component is to be found or made in (checked to be a directory, as
    /// it must be for any component to follow it), and the last component.
    pub(crate) fn walk_parent<'p>(&self, cwd: Ino, path: &Path<'p>) -> Result<(Ino, Last<'p>)> {
        let (init, last) = path.split_last();
        let mut at = self.start(cwd, path)?;
        for &c in init {
            at = self.step(at, c)?;
        }
        self.arena.get(at)?.dir()?;
        Ok((at, last))
    }

    /// The inode a non-name last component denotes in `dir`.
    pub(crate) fn resolve_dots(&self, dir: Ino, last: Last<'_>) -> Result<Ino> {
        match last {
            Last::Root | Last::Dot => Ok(dir),
            Last::DotDot => self.step(dir, Component::DotDot),
            Last::Name(name) => self.step(dir, Component::Name(name)),
        }
    }
}
