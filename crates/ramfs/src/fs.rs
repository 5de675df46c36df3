//! The file system: its state, limits, and the inode-level operations
//! (read, write, truncate, stat, pins, directory listing).
//!
//! Path-level operations are in [`namei`](crate::namei) (resolution),
//! [`ops`](crate::ops) (create, open, unlink, rmdir, link),
//! [`symlink`](crate::symlink) (symlink, readlink) and
//! [`rename`](crate::rename).

use alloc::vec::Vec;

use crate::dir::{Dir, DirEntry};
use crate::error::{FsError, Result};
use crate::file::{Budget, FileData, PAGE_SIZE};
use crate::inode::{Arena, Body, Ino, Inode, Kind, MODE_MASK};

/// Configurable limits. Exceeding the per-file size gives
/// [`FsError::FileTooBig`]; running out of bytes or inodes gives
/// [`FsError::NoSpace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest size a file may reach, in bytes.
    pub max_file_size: u64,
    /// File data the whole file system may hold, in bytes (counted in
    /// whole [`PAGE_SIZE`] pages actually allocated; holes are free;
    /// directories, names and symbolic-link targets are not counted).
    pub max_bytes: u64,
    /// Live inodes (files, directories and symbolic links, the root
    /// included; unlinked but pinned ones still count).
    pub max_inodes: usize,
}

impl Limits {
    /// The defaults of [`Fs::new`]: 1 GiB files, 1 GiB of data, 65 536
    /// inodes.
    pub const DEFAULT: Limits = Limits { max_file_size: 1 << 30, max_bytes: 1 << 30, max_inodes: 1 << 16 };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// What [`Fs::stat`] reports about an inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stat {
    /// The inode's handle ([`Ino::number`] is its `st_ino`).
    pub ino: Ino,
    /// File, directory or symbolic link.
    pub kind: Kind,
    /// A file's length in bytes; a directory's number of entries (not
    /// counting `.` and `..`); a symbolic link's target length.
    pub size: u64,
    /// Links: directory entries naming a file or symbolic link (0 once
    /// unlinked); `2 + subdirectories` for a directory (0 once removed).
    pub nlink: u64,
    /// Permission bits (`st_mode & 0o7777`; the kind gives the type bits):
    /// by default `0o644` for a file, `0o755` for a directory, always
    /// `0o777` for a symbolic link. See [`Fs::set_mode`].
    pub mode: u16,
    /// Bytes of storage allocated (whole pages; less than `size` for a
    /// sparse file; 0 for a directory or symbolic link). `st_blocks` is
    /// this / 512.
    pub allocated: u64,
    /// Pins held ([`Fs::pin`]).
    pub pins: u64,
    /// Last access time as set by the caller (reads do not update it).
    pub atime: u64,
    /// Last content modification time.
    pub mtime: u64,
    /// Last status change time.
    pub ctime: u64,
}

/// What [`Fs::statfs`] reports about the whole file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FsStat {
    /// The accounting unit ([`PAGE_SIZE`]).
    pub page_size: u64,
    /// File data bytes allocated (a multiple of `page_size`).
    pub used_bytes: u64,
    /// The byte limit.
    pub max_bytes: u64,
    /// Live inodes.
    pub inodes: usize,
    /// The inode limit.
    pub max_inodes: usize,
}

/// A RAM file system.
///
/// Every operation validates its inode handles and paths and returns an
/// [`FsError`] rather than panicking. Times are plain counters: the caller
/// sets the current time with [`set_time`](Self::set_time) and operations
/// stamp inodes with it.
pub struct Fs {
    pub(crate) arena: Arena,
    pub(crate) limits: Limits,
    pub(crate) used_pages: u64,
    pub(crate) now: u64,
}

impl Default for Fs {
    fn default() -> Fs {
        Fs::new()
    }
}

impl Fs {
    /// An empty file system (just the root) with [`Limits::DEFAULT`].
    pub fn new() -> Fs {
        Fs::with_limits(Limits::DEFAULT)
    }

    /// An empty file system (just the root) with the given limits.
    pub fn with_limits(limits: Limits) -> Fs {
        let mut arena = Arena::new();
        let root = arena.alloc(Inode::new(Body::Dir(Dir::new(Ino::ROOT, b"")), 2, 0));
        debug_assert_eq!(root, Some(Ino::ROOT));
        Fs { arena, limits, used_pages: 0, now: 0 }
    }

    /// The root directory.
    pub const fn root(&self) -> Ino {
        Ino::ROOT
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Changes the limits. Lowering them below current usage makes later
    /// allocations fail; nothing is freed.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Sets the time stamped on inodes by later operations.
    pub fn set_time(&mut self, now: u64) {
        self.now = now;
    }

    /// The current time as last set.
    pub fn time(&self) -> u64 {
        self.now
    }

    /// Usage and limits.
    pub fn statfs(&self) -> FsStat {
        FsStat {
            page_size: PAGE_SIZE as u64,
            used_bytes: self.used_pages * PAGE_SIZE as u64,
            max_bytes: self.limits.max_bytes,
            inodes: self.arena.live(),
            max_inodes: self.limits.max_inodes,
        }
    }

    /// Status of `ino` (of a symbolic link itself: resolve a path with
    /// [`lookup`](Self::lookup) for `stat`, with
    /// [`lookup_nofollow`](Self::lookup_nofollow) for `lstat`).
    pub fn stat(&self, ino: Ino) -> Result<Stat> {
        let inode = self.arena.get(ino)?;
        let (size, allocated) = match &inode.body {
            Body::File(f) => (f.size(), f.pages() * PAGE_SIZE as u64),
            Body::Dir(d) => (d.len() as u64, 0),
            Body::Symlink(t) => (t.len() as u64, 0),
        };
        Ok(Stat {
            ino,
            kind: inode.kind(),
            size,
            nlink: inode.nlink,
            mode: inode.mode,
            allocated,
            pins: inode.pins,
            atime: inode.atime,
            mtime: inode.mtime,
            ctime: inode.ctime,
        })
    }

    /// Whether `ino` names a live inode.
    pub fn is_live(&self, ino: Ino) -> bool {
        self.arena.get(ino).is_ok()
    }

    /// Sets access and/or modification time (`utimensat`); the change time
    /// becomes now.
    pub fn set_times(&mut self, ino: Ino, atime: Option<u64>, mtime: Option<u64>) -> Result<()> {
        let now = self.now;
        let inode = self.arena.get_mut(ino)?;
        if let Some(t) = atime {
            inode.atime = t;
        }
        if let Some(t) = mtime {
            inode.mtime = t;
        }
        inode.ctime = now;
        Ok(())
    }

    /// Sets the permission bits of `ino` (`chmod`) to `mode & 0o7777`; the
    /// change time becomes now. `NotPermitted` for a symbolic link, whose
    /// mode is always `0o777` (Linux's `chmod` follows links and it has no
    /// `lchmod`, so a caller resolves the path with [`lookup`](Self::lookup)
    /// first). No permission is enforced here: modes are kept for the
    /// layers above.
    pub fn set_mode(&mut self, ino: Ino, mode: u16) -> Result<()> {
        let now = self.now;
        let inode = self.arena.get_mut(ino)?;
        if inode.kind() == Kind::Symlink {
            return Err(FsError::NotPermitted);
        }
        inode.mode = mode & MODE_MASK;
        inode.ctime = now;
        Ok(())
    }

    /// Takes an open reference on `ino` (a file descriptor, a working
    /// directory…). A pinned inode outlives its last link: an unlinked file
    /// stays readable and writable, a removed directory stays a (dead, empty)
    /// directory, until the last [`unpin`](Self::unpin).
    pub fn pin(&mut self, ino: Ino) -> Result<()> {
        let inode = self.arena.get_mut(ino)?;
        inode.pins = inode.pins.checked_add(1).ok_or(FsError::Invalid)?;
        Ok(())
    }

    /// Drops an open reference; frees the inode if it was the last reference
    /// and no link remains (the handle is then stale). `Invalid` if `ino` is
    /// not pinned.
    pub fn unpin(&mut self, ino: Ino) -> Result<()> {
        let inode = self.arena.get_mut(ino)?;
        inode.pins = inode.pins.checked_sub(1).ok_or(FsError::Invalid)?;
        self.release_if_unused(ino);
        Ok(())
    }

    /// Reads from file `ino` at `offset` into `buf`; returns the bytes read
    /// (0 at or past the end). Holes read as zeros. Reads do not update
    /// the access time. `IsADirectory` for a directory, `Invalid` for a
    /// symbolic link (here and in [`write`](Self::write) and
    /// [`truncate`](Self::truncate)).
    pub fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize> {
        Ok(self.arena.get(ino)?.file()?.read(offset, buf))
    }

    /// Writes `data` into file `ino` at `offset`; returns the bytes written.
    ///
    /// Writing past the end leaves a hole that reads as zeros. A write that
    /// would cross [`Limits::max_file_size`] is cut short at it
    /// (`FileTooBig` if `offset` is already there); one that runs out of
    /// space is cut short where it ran out (`NoSpace` if nothing fit). An
    /// empty write changes nothing and returns 0.
    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8]) -> Result<usize> {
        let now = self.now;
        let inode = self.arena.get_mut(ino)?;
        let file = inode.file_mut()?;
        if data.is_empty() {
            return Ok(0);
        }
        let limit = self.limits.max_file_size;
        if offset >= limit {
            return Err(FsError::FileTooBig);
        }
        let room = (limit - offset).min(usize::MAX as u64) as usize;
        let data = &data[..data.len().min(room)];
        let mut budget = Budget { used: self.used_pages, max: self.limits.max_bytes / PAGE_SIZE as u64 };
        let written = file.write(offset, data, &mut budget);
        self.used_pages = budget.used;
        let written = written?;
        inode.modified(now);
        Ok(written)
    }

    /// Sets file `ino`'s length to `len`: shrinking discards data,
    /// growing adds a hole. `FileTooBig` past [`Limits::max_file_size`].
    pub fn truncate(&mut self, ino: Ino, len: u64) -> Result<()> {
        let now = self.now;
        let inode = self.arena.get_mut(ino)?;
        let file = inode.file_mut()?;
        if len > self.limits.max_file_size {
            return Err(FsError::FileTooBig);
        }
        self.used_pages -= file.truncate(len);
        inode.modified(now);
        Ok(())
    }

    /// Every entry of directory `ino`, sorted by name bytes (without `.` and
    /// `..`). A removed directory has none.
    pub fn readdir(&self, ino: Ino) -> Result<Vec<DirEntry>> {
        self.readdir_after(ino, None, usize::MAX)
    }

    /// Up to `max` entries of directory `ino` whose names sort strictly
    /// after `after` (from the start if `None`), sorted by name bytes.
    ///
    /// This is the `getdents` primitive: a directory stream keeps the last
    /// name it returned as its cursor, so entries added or removed between
    /// calls never make it skip or repeat any other entry.
    pub fn readdir_after(&self, ino: Ino, after: Option<&[u8]>, max: usize) -> Result<Vec<DirEntry>> {
        let dir = self.arena.get(ino)?.dir()?;
        Ok(dir
            .after(after)
            .take(max)
            .map(|(name, e)| DirEntry { name: name.to_vec(), ino: e.ino, kind: e.kind })
            .collect())
    }

    /// The parent of directory `ino` (the root's is the root):
    /// `NotFound` once it has been removed.
    pub fn parent(&self, ino: Ino) -> Result<Ino> {
        self.arena.get(ino)?.dir()?.parent.ok_or(FsError::NotFound)
    }

    /// The absolute path of directory `ino` (`getcwd`): `/` for the root,
    /// `/a/b` otherwise, never a trailing slash. `NotADirectory` for a file
    /// or symbolic link (they may have several names or none); `NotFound` for a removed
    /// directory. The result may be [`PATH_MAX`](crate::PATH_MAX) bytes or
    /// longer, since deep trees can be built with relative paths.
    pub fn path_of(&self, ino: Ino) -> Result<Vec<u8>> {
        let mut names: Vec<&[u8]> = Vec::new();
        let mut at = ino;
        // Parent links form a tree (rename refuses cycles); the bound only
        // makes termination evident.
        for _ in 0..=self.arena.capacity() {
            if at == Ino::ROOT {
                names.reverse();
                let mut path = Vec::new();
                for name in &names {
                    path.push(b'/');
                    path.extend_from_slice(name);
                }
                if path.is_empty() {
                    path.push(b'/');
                }
                return Ok(path);
            }
            let dir = self.arena.get(at)?.dir()?;
            names.push(&dir.name);
            at = dir.parent.ok_or(FsError::NotFound)?;
        }
        Err(FsError::Invalid)
    }

    /// Allocates an inode, subject to the inode limit.
    pub(crate) fn alloc(&mut self, body: Body, nlink: u64) -> Result<Ino> {
        if self.arena.live() >= self.limits.max_inodes {
            return Err(FsError::NoSpace);
        }
        self.arena.alloc(Inode::new(body, nlink, self.now)).ok_or(FsError::NoSpace)
    }

    /// Frees `ino` if nothing refers to it any more (no link, no pin).
    pub(crate) fn release_if_unused(&mut self, ino: Ino) {
        let unused = matches!(self.arena.get(ino), Ok(i) if i.nlink == 0 && i.pins == 0);
        if unused
            && ino != Ino::ROOT
            && let Some(Inode { body: Body::File(f), .. }) = self.arena.remove(ino)
        {
            self.used_pages -= f.pages();
        }
    }

    /// A new, empty file body.
    pub(crate) fn new_file() -> Body {
        Body::File(FileData::default())
    }
}
