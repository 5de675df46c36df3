//! Path operations that add or remove one name: create, open, mkdir,
//! unlink, rmdir, link (symlink is in [`symlink`](crate::symlink)). The
//! rules and error choices follow Linux, so that the libOS's Linux
//! personality reports the errno a program expects.
//!
//! Operations on a name act on the name itself: a symbolic link as the
//! last component is unlinked, renamed or hard-linked, not followed, and
//! counts as an existing non-directory (`mkdir` over it is `Exists`,
//! `rmdir` of it `NotADirectory`). Only `open` follows it.

use alloc::vec::Vec;

use crate::dir::{Dir, Entry};
use crate::error::{FsError, Result};
use crate::fs::Fs;
use crate::inode::{Body, Ino, Kind, MODE_MASK};
use crate::namei::Walker;
use crate::path::{Last, Path};

/// How [`Fs::open`] treats the path (the file-system half of `open(2)`'s
/// flags; access checks and offsets are the descriptor layer's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpenFlags {
    /// Create a file if the name does not exist (`O_CREAT`).
    pub create: bool,
    /// With `create`: fail with `Exists` if it does (`O_EXCL`).
    pub exclusive: bool,
    /// Truncate an existing file to length 0 (`O_TRUNC`).
    pub truncate: bool,
    /// The result must be a directory (`O_DIRECTORY`).
    pub directory: bool,
    /// The caller opens for writing (`O_WRONLY`/`O_RDWR`): refused on a
    /// directory.
    pub write: bool,
    /// Do not follow a symbolic link as the last component (`O_NOFOLLOW`):
    /// opening one is `Loop` (`NotADirectory` with `directory`; `Exists`
    /// with `create` and `exclusive`). A trailing slash still follows it.
    pub nofollow: bool,
    /// The permission bits a file created by this open gets (masked to
    /// `0o7777`); `None`: `0o644`. An existing file's mode is unchanged.
    pub mode: Option<u16>,
}

/// Where an open with `create` leads.
enum Target {
    /// An existing inode (never a directory).
    Existing(Ino),
    /// A name to create in a directory.
    New(Ino, Vec<u8>),
}

impl Fs {
    /// Creates a file or directory at `path`; `Exists` if the name exists.
    /// A file is created as by [`open`](Self::open) with `create` and
    /// `exclusive`, a directory as by [`mkdir`](Self::mkdir).
    /// [`Kind::Symlink`] is `Invalid`: a link needs a target, see
    /// [`symlink`](Self::symlink).
    pub fn create(&mut self, cwd: Ino, path: impl AsRef<[u8]>, kind: Kind) -> Result<Ino> {
        match kind {
            Kind::File => self.open(cwd, path, OpenFlags { create: true, exclusive: true, ..OpenFlags::default() }),
            Kind::Dir => self.mkdir(cwd, path),
            Kind::Symlink => Err(FsError::Invalid),
        }
    }

    /// Makes an empty directory at `path` (a trailing slash is allowed),
    /// with mode `0o755` (see [`set_mode`](Self::set_mode)). `Exists` if
    /// the name exists (a symbolic link too, dangling or not) or is `.`,
    /// `..` or the root; `NotFound` in a removed directory.
    pub fn mkdir(&mut self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<Ino> {
        let path = Path::parse(path.as_ref())?;
        let (parent, last) = self.walk_parent(cwd, &path)?;
        let Last::Name(name) = last else { return Err(FsError::Exists) };
        self.check_can_add(parent, name)?;
        let ino = self.alloc(Body::Dir(Dir::new(parent, name)), 2)?;
        self.add_entry(parent, name, Entry { ino, kind: Kind::Dir })?;
        self.arena.get_mut(parent)?.nlink += 1;
        Ok(ino)
    }

    /// Opens `path`, returning its inode; see [`OpenFlags`]. Does not pin:
    /// a descriptor layer calls [`pin`](Self::pin) on the result.
    ///
    /// A symbolic link as the last component is followed unless `nofollow`
    /// (then `Loop`). With `create`: a missing name becomes an empty file
    /// (mode [`OpenFlags::mode`], default `0o644`); an existing one is
    /// `Exists` under `exclusive` (a symbolic link too, never followed
    /// then), `IsADirectory` if a directory (as is any path ending in `/`,
    /// `.`, `..` or naming the root). A dangling link is followed to create
    /// its target, in the directory the target names, as Linux does.
    /// `create` together with `directory` is `Invalid`. Without `create`:
    /// the path must exist; `directory` demands a directory
    /// (`NotADirectory`); `write` or `truncate` on a directory is
    /// `IsADirectory`.
    pub fn open(&mut self, cwd: Ino, path: impl AsRef<[u8]>, flags: OpenFlags) -> Result<Ino> {
        if flags.create && flags.directory {
            return Err(FsError::Invalid);
        }
        let path = Path::parse(path.as_ref())?;
        if !flags.create {
            let ino = self.resolve(cwd, &path, !flags.nofollow)?;
            return self.open_existing(ino, flags);
        }
        let (parent, name) = match self.create_target(cwd, &path, flags)? {
            Target::Existing(ino) => return self.open_existing(ino, flags),
            Target::New(parent, name) => (parent, name),
        };
        self.check_can_add(parent, &name)?;
        let ino = self.alloc(Fs::new_file(), 1)?;
        if let Some(mode) = flags.mode {
            self.arena.get_mut(ino)?.mode = mode & MODE_MASK;
        }
        self.add_entry(parent, &name, Entry { ino, kind: Kind::File })?;
        Ok(ino)
    }

    /// Resolves the path of an open with `create`, following a symbolic
    /// link as the last component (unless `exclusive` or `nofollow`) until
    /// it leads to an existing non-directory or a missing name.
    fn create_target(&self, cwd: Ino, path: &Path<'_>, flags: OpenFlags) -> Result<Target> {
        let mut walker = Walker::new(self, cwd, path)?;
        // Each round but the last follows a link: at most 41 rounds.
        loop {
            let (parent, last) = walker.walk_to_last(self)?;
            let Last::Name(name) = last else {
                self.resolve_dots(parent, last)?;
                return Err(if flags.exclusive { FsError::Exists } else { FsError::IsADirectory });
            };
            if walker.must_be_dir {
                return Err(FsError::IsADirectory);
            }
            match self.arena.get(parent)?.dir()?.get(name) {
                Some(_) if flags.exclusive => return Err(FsError::Exists),
                Some(entry) if entry.kind == Kind::Dir => return Err(FsError::IsADirectory),
                Some(entry) if entry.kind == Kind::Symlink && !flags.nofollow => walker.follow(self, entry.ino)?,
                Some(entry) => return Ok(Target::Existing(entry.ino)),
                None => return Ok(Target::New(parent, name.to_vec())),
            }
        }
    }

    fn open_existing(&mut self, ino: Ino, flags: OpenFlags) -> Result<Ino> {
        match self.arena.get(ino)?.kind() {
            Kind::Dir if flags.write || flags.truncate => Err(FsError::IsADirectory),
            Kind::Dir => Ok(ino),
            Kind::File | Kind::Symlink if flags.directory => Err(FsError::NotADirectory),
            // Only reached under `nofollow`.
            Kind::Symlink => Err(FsError::Loop),
            Kind::File => {
                if flags.truncate {
                    self.truncate(ino, 0)?;
                }
                Ok(ino)
            }
        }
    }

    /// Removes the file name `path` (a symbolic link itself, not its
    /// target). The file is freed when its last link goes and no pin holds
    /// it. `IsADirectory` for a directory (and for `.`, `..`, the root);
    /// `NotADirectory` for `file/` (and `link/`, even to a directory).
    pub fn unlink(&mut self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<()> {
        let path = Path::parse(path.as_ref())?;
        let (parent, last) = self.walk_parent(cwd, &path)?;
        let Last::Name(name) = last else { return Err(FsError::IsADirectory) };
        let entry = self.arena.get(parent)?.dir()?.get(name).ok_or(FsError::NotFound)?;
        if entry.kind == Kind::Dir {
            return Err(FsError::IsADirectory);
        }
        if path.trailing_slash {
            return Err(FsError::NotADirectory);
        }
        self.remove_entry(parent, name)?;
        let now = self.now;
        let inode = self.arena.get_mut(entry.ino)?;
        inode.nlink -= 1;
        inode.ctime = now;
        self.release_if_unused(entry.ino);
        Ok(())
    }

    /// Removes the empty directory `path`. `NotEmpty` if it has entries;
    /// `NotADirectory` for a file or a symbolic link (even one to a
    /// directory, even as `link/`); `Busy` for the root, `Invalid` for `.`,
    /// `NotEmpty` for `..` (as Linux). A pinned directory (a working
    /// directory) may be removed: it lives on, empty and unable to gain
    /// entries, until unpinned.
    pub fn rmdir(&mut self, cwd: Ino, path: impl AsRef<[u8]>) -> Result<()> {
        let path = Path::parse(path.as_ref())?;
        let (parent, last) = self.walk_parent(cwd, &path)?;
        let name = match last {
            Last::Name(name) => name,
            Last::Root => return Err(FsError::Busy),
            Last::Dot => return Err(FsError::Invalid),
            Last::DotDot => return Err(FsError::NotEmpty),
        };
        let entry = self.arena.get(parent)?.dir()?.get(name).ok_or(FsError::NotFound)?;
        if entry.kind != Kind::Dir {
            return Err(FsError::NotADirectory);
        }
        if !self.arena.get(entry.ino)?.dir()?.is_empty() {
            return Err(FsError::NotEmpty);
        }
        self.remove_entry(parent, name)?;
        self.arena.get_mut(parent)?.nlink -= 1;
        self.kill_dir(entry.ino)
    }

    /// Makes `new` another name for the file or symbolic link `existing`
    /// (`link(2)`), both relative to `cwd`. A symbolic link as `existing`'s
    /// last component is linked itself, not followed (unless the path ends
    /// in a slash).
    pub fn link(&mut self, cwd: Ino, existing: impl AsRef<[u8]>, new: impl AsRef<[u8]>) -> Result<()> {
        self.link_at(cwd, existing, cwd, new)
    }

    /// [`link`](Self::link) with separate working directories (`linkat`).
    /// `NotPermitted` for a directory; `Exists` if `new` exists (or is `.`,
    /// `..`, the root); `NotFound` for a new name with a trailing slash.
    pub fn link_at(
        &mut self,
        existing_cwd: Ino,
        existing: impl AsRef<[u8]>,
        new_cwd: Ino,
        new: impl AsRef<[u8]>,
    ) -> Result<()> {
        let existing = Path::parse(existing.as_ref())?;
        let target = self.resolve(existing_cwd, &existing, false)?;
        let new = Path::parse(new.as_ref())?;
        let (parent, name) = self.new_name(new_cwd, &new)?;
        let kind = self.arena.get(target)?.kind();
        if kind == Kind::Dir {
            return Err(FsError::NotPermitted);
        }
        let now = self.now;
        let inode = self.arena.get_mut(target)?;
        inode.nlink = inode.nlink.checked_add(1).ok_or(FsError::NoSpace)?;
        inode.ctime = now;
        self.add_entry(parent, name, Entry { ino: target, kind })
    }

    /// Where a link's new name goes (`link`, `symlink`): its directory and
    /// the name, which must be free. `Exists` if it is taken or is `.`,
    /// `..` or the root; `NotFound` for a new name with a trailing slash or
    /// in a removed directory.
    pub(crate) fn new_name<'p>(&self, cwd: Ino, path: &Path<'p>) -> Result<(Ino, &'p [u8])> {
        let (parent, last) = self.walk_parent(cwd, path)?;
        let Last::Name(name) = last else { return Err(FsError::Exists) };
        self.check_can_add(parent, name)?;
        if path.trailing_slash {
            return Err(FsError::NotFound);
        }
        Ok((parent, name))
    }

    /// `Exists` if `dir` has `name`; `NotFound` if `dir` has been removed.
    pub(crate) fn check_can_add(&self, dir: Ino, name: &[u8]) -> Result<()> {
        let d = self.arena.get(dir)?.dir()?;
        if d.get(name).is_some() {
            return Err(FsError::Exists);
        }
        if d.parent.is_none() {
            return Err(FsError::NotFound);
        }
        Ok(())
    }

    /// Inserts an entry and stamps the directory.
    pub(crate) fn add_entry(&mut self, dir: Ino, name: &[u8], entry: Entry) -> Result<()> {
        let now = self.now;
        let inode = self.arena.get_mut(dir)?;
        inode.dir_mut()?.insert(name, entry);
        inode.modified(now);
        Ok(())
    }

    /// Removes an entry and stamps the directory.
    pub(crate) fn remove_entry(&mut self, dir: Ino, name: &[u8]) -> Result<Entry> {
        let now = self.now;
        let inode = self.arena.get_mut(dir)?;
        let entry = inode.dir_mut()?.remove(name).ok_or(FsError::NotFound)?;
        inode.modified(now);
        Ok(entry)
    }

    /// Marks an (empty, already unlinked) directory removed and frees it
    /// unless pinned.
    pub(crate) fn kill_dir(&mut self, ino: Ino) -> Result<()> {
        let now = self.now;
        let inode = self.arena.get_mut(ino)?;
        inode.nlink = 0;
        inode.ctime = now;
        let dir = inode.dir_mut()?;
        dir.parent = None;
        dir.name = Default::default();
        self.release_if_unused(ino);
        Ok(())
    }
}
