//! Path resolution: from a working directory and a path to an inode,
//! following symbolic links.
//!
//! Resolution starts at the root for an absolute path and at the working
//! directory `cwd` otherwise (for an absolute path `cwd` is ignored, as
//! `openat` ignores its descriptor). Each component must be taken from a
//! directory (`NotADirectory` otherwise): `.` stays, `..` goes to the parent
//! — the root is its own parent, so no path climbs above it — and a name
//! must exist (`NotFound`). Inside a removed directory (a pinned working
//! directory that was `rmdir`ed) `.` still works but names and `..` are
//! `NotFound`. A trailing slash requires the result to be a directory.
//!
//! # Symbolic links
//!
//! A symbolic link met before the last component is always followed: its
//! target's components are resolved in its place, from the root if the
//! target is absolute, else from the directory holding the link (so `..`
//! in a target is the parent of where the target leads, never a textual
//! step back). The last component is followed by [`Fs::lookup`], by `open`
//! (unless [`nofollow`](crate::OpenFlags::nofollow)) and whenever the path
//! ends in a slash; not by [`Fs::lookup_nofollow`] nor by the operations
//! that act on a name (create, mkdir, unlink, rmdir, rename, link,
//! symlink), which resolve only the directory the name is in. Once a last
//! component has been followed, the last component of its target is
//! followed too, as on Linux.
//!
//! Pending text is a small fixed stack of byte slices borrowed from the
//! caller's path and from link targets in the arena (nothing changes while
//! a resolution runs), so resolving allocates nothing. One resolution
//! follows at most 40 links (Linux `MAXSYMLINKS`); the 41st is
//! [`FsError::Loop`]. Each target is shorter than
//! [`PATH_MAX`](crate::PATH_MAX), so the work is bounded.

use crate::error::{FsError, Result};
use crate::fs::Fs;
use crate::inode::{Ino, Kind};
use crate::path::{Component, Last, NAME_MAX, Path, skip_slashes, split_first};

/// The most symbolic links one resolution follows (Linux `MAXSYMLINKS`).
pub(crate) const MAX_SYMLINKS: usize = 40;

/// A resolution in progress.
pub(crate) struct Walker<'a> {
    /// Text still to resolve: the path at the bottom, the target being
    /// followed on top. Each entry is non-empty and starts with a component
    /// (not a slash). Every entry above the path was pushed by following a
    /// link, so there are never more than `MAX_SYMLINKS + 1`.
    pending: [&'a [u8]; MAX_SYMLINKS + 1],
    depth: usize,
    /// Links followed so far.
    links: usize,
    /// The directory reached.
    at: Ino,
    /// The last component was followed by a slash (or a link whose last
    /// component was): the result must be a directory, and a symbolic link
    /// there is followed.
    pub must_be_dir: bool,
}

impl<'a> Walker<'a> {
    /// Starts resolving `path` from `cwd` (checked to be a directory if the
    /// path is relative).
    pub fn new(fs: &Fs, cwd: Ino, path: &Path<'a>) -> Result<Walker<'a>> {
        let at = if path.absolute {
            Ino::ROOT
        } else {
            fs.arena.get(cwd)?.dir()?;
            cwd
        };
        let mut walker = Walker { pending: [&[]; MAX_SYMLINKS + 1], depth: 0, links: 0, at, must_be_dir: false };
        walker.push(skip_slashes(path.bytes()))?;
        Ok(walker)
    }

    fn push(&mut self, text: &'a [u8]) -> Result<()> {
        if !text.is_empty() {
            // Cannot overflow (see `pending`); refused rather than trusted.
            *self.pending.get_mut(self.depth).ok_or(FsError::Loop)? = text;
            self.depth += 1;
        }
        Ok(())
    }

    /// Takes the next component: it, whether a slash follows it, and
    /// whether it is the last one of the whole resolution so far.
    fn next(&mut self) -> Option<(Component<'a>, bool, bool)> {
        let top = self.depth.checked_sub(1)?;
        let (component, slash, rest) = split_first(self.pending[top]);
        if rest.is_empty() {
            self.depth = top;
        } else {
            self.pending[top] = rest;
        }
        Some((component, slash, self.depth == 0))
    }

    /// Resolves everything but the last component, following every
    /// symbolic link on the way. Returns the directory reached (checked to
    /// be one) and the last component (`Last::Root` if there is none: the
    /// path, or the target just followed, is all slashes).
    pub fn walk_to_last(&mut self, fs: &'a Fs) -> Result<(Ino, Last<'a>)> {
        loop {
            let Some((component, slash, last)) = self.next() else {
                fs.arena.get(self.at)?.dir()?;
                return Ok((self.at, Last::Root));
            };
            // The caller's path was checked whole; a target is checked here.
            if let Component::Name(name) = component
                && name.len() > NAME_MAX
            {
                return Err(FsError::TooLong);
            }
            if last {
                fs.arena.get(self.at)?.dir()?;
                self.must_be_dir |= slash;
                return Ok((self.at, component.into_last()));
            }
            let next = fs.step(self.at, component)?;
            if fs.arena.get(next)?.kind() == Kind::Symlink {
                self.follow(fs, next)?;
            } else {
                self.at = next;
            }
        }
    }

    /// Follows the symbolic link `link`, found in the directory reached:
    /// its target is resolved next, from the root if absolute. `Loop` past
    /// [`MAX_SYMLINKS`].
    pub fn follow(&mut self, fs: &'a Fs, link: Ino) -> Result<()> {
        self.links += 1;
        if self.links > MAX_SYMLINKS {
            return Err(FsError::Loop);
        }
        let target = fs.arena.get(link)?.target().ok_or(FsError::Invalid)?;
        if target.first() == Some(&b'/') {
            self.at = Ino::ROOT;
        }
        self.push(skip_slashes(target))
    }
}

impl Fs {
    /// The inode `path` names, relative to directory `cwd` unless absolute,
    /// following symbolic links (`stat`).
    ///
    /// An absolute path ignores `cwd` (it need not even be valid); a
    /// relative one needs a live directory (`BadInode`, `NotADirectory`).
    /// Every component must be found in a directory (`NotADirectory` when
    /// walking through a file, `NotFound` for a missing name); `.` stays,
    /// `..` goes up and stops at the root; repeated slashes count as one; a
    /// trailing slash demands a directory (`NotADirectory`). Symbolic links
    /// are followed wherever they are, the last component included
    /// (`NotFound` for a dangling one, `Loop` past 40 links). Syntax errors
    /// come first: empty path `NotFound`, NUL `InvalidName`, a path of
    /// [`PATH_MAX`](crate::PATH_MAX) bytes or a component over
    /// [`NAME_MAX`] bytes `TooLong`. In a removed directory
    /// only `.` resolves.
    pub fn lookup(&self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<Ino> {
        let path = Path::parse(path.as_ref())?;
        self.resolve(cwd, &path, true)
    }

    /// As [`lookup`](Self::lookup), but a symbolic link as the last
    /// component is not followed: its own inode is the result (`lstat`). A
    /// trailing slash still follows it, as on Linux.
    pub fn lookup_nofollow(&self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<Ino> {
        let path = Path::parse(path.as_ref())?;
        self.resolve(cwd, &path, false)
    }

    /// One step from `at` (which must be a directory) through `component`.
    pub(crate) fn step(&self, at: Ino, component: Component<'_>) -> Result<Ino> {
        let dir = self.arena.get(at)?.dir()?;
        match component {
            Component::Dot => Ok(at),
            Component::DotDot => dir.parent.ok_or(FsError::NotFound),
            Component::Name(name) => dir.get(name).map(|e| e.ino).ok_or(FsError::NotFound),
        }
    }

    /// Resolves the whole path, following a symbolic link as the last
    /// component if `follow` (or the path ends in a slash).
    pub(crate) fn resolve(&self, cwd: Ino, path: &Path<'_>, mut follow: bool) -> Result<Ino> {
        let mut walker = Walker::new(self, cwd, path)?;
        // Each round but the last follows a link: at most 41 rounds.
        loop {
            let (dir, last) = walker.walk_to_last(self)?;
            let ino = self.resolve_dots(dir, last)?;
            let kind = self.arena.get(ino)?.kind();
            if kind == Kind::Symlink && (follow || walker.must_be_dir) {
                // The end of a followed link's target is followed in turn.
                follow = true;
                walker.follow(self, ino)?;
                continue;
            }
            if walker.must_be_dir && kind != Kind::Dir {
                return Err(FsError::NotADirectory);
            }
            return Ok(ino);
        }
    }

    /// Resolves all but the last component (following symbolic links):
    /// returns the directory the last component is to be found or made in
    /// (checked to be a directory, as it must be for any component to
    /// follow it), and the last component, not resolved.
    pub(crate) fn walk_parent<'p>(&self, cwd: Ino, path: &Path<'p>) -> Result<(Ino, Last<'p>)> {
        let (dir, _) = Walker::new(self, cwd, path)?.walk_to_last(self)?;
        // Without following the last component, the last component resolved
        // is the path's own.
        Ok((dir, path.last()))
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
