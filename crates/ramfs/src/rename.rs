//! `rename(2)`: moving a name, atomically replacing what the target held.
//!
//! The rules are POSIX's, with Linux's error choices:
//!
//! - the last component of either path must be an ordinary name (`Busy`
//!   for `.`, `..` or the root);
//! - the source must exist (`NotFound`); if it is not a directory, neither
//!   path may end in `/` (`NotADirectory`);
//! - symbolic links as last components are not followed: a link is renamed
//!   (or replaced) itself, and counts as a file in every rule here;
//! - a directory cannot move into itself or its own subtree (`Invalid`);
//! - if source and target are the same inode (the same name, or two hard
//!   links to one file) nothing happens and the call succeeds;
//! - a directory may replace only a directory (`NotADirectory`), a file or
//!   link only a file or link (`IsADirectory`), and a replaced directory
//!   must be empty (`NotEmpty`);
//! - the target's parent must not have been removed (`NotFound`).
//!
//! Every check is made before anything changes, so a failed rename leaves
//! the tree as it was; a successful one replaces the target in one step
//! (the replaced inode is freed unless pinned).

use crate::error::{FsError, Result};
use crate::fs::Fs;
use crate::inode::{Ino, Kind};
use crate::path::{Last, Path};

impl Fs {
    /// Renames `from` to `to`, both relative to `cwd`.
    pub fn rename(&mut self, cwd: Ino, from: impl AsRef<[u8]>, to: impl AsRef<[u8]>) -> Result<()> {
        self.rename_at(cwd, from, cwd, to)
    }

    /// [`rename`](Self::rename) with separate working directories
    /// (`renameat`).
    pub fn rename_at(
        &mut self,
        from_cwd: Ino,
        from: impl AsRef<[u8]>,
        to_cwd: Ino,
        to: impl AsRef<[u8]>,
    ) -> Result<()> {
        let from = Path::parse(from.as_ref())?;
        let to = Path::parse(to.as_ref())?;
        let (from_dir, from_last) = self.walk_parent(from_cwd, &from)?;
        let (to_dir, to_last) = self.walk_parent(to_cwd, &to)?;
        let (Last::Name(from_name), Last::Name(to_name)) = (from_last, to_last) else {
            return Err(FsError::Busy);
        };
        let src = self.arena.get(from_dir)?.dir()?.get(from_name).ok_or(FsError::NotFound)?;
        if src.kind != Kind::Dir && (from.trailing_slash || to.trailing_slash) {
            return Err(FsError::NotADirectory);
        }
        if src.kind == Kind::Dir && self.is_within(to_dir, src.ino)? {
            return Err(FsError::Invalid);
        }
        let to_d = self.arena.get(to_dir)?.dir()?;
        let dst = to_d.get(to_name);
        match dst {
            Some(dst) if dst.ino == src.ino => return Ok(()),
            Some(dst) => match (src.kind, dst.kind) {
                (Kind::Dir, Kind::File | Kind::Symlink) => return Err(FsError::NotADirectory),
                (Kind::File | Kind::Symlink, Kind::Dir) => return Err(FsError::IsADirectory),
                (Kind::Dir, Kind::Dir) if !self.arena.get(dst.ino)?.dir()?.is_empty() => {
                    return Err(FsError::NotEmpty);
                }
                _ => {}
            },
            None if to_d.parent.is_none() => return Err(FsError::NotFound),
            None => {}
        }

        // Checked: from here on nothing fails.
        let now = self.now;
        if let Some(dst) = dst {
            self.remove_entry(to_dir, to_name)?;
            match dst.kind {
                Kind::File | Kind::Symlink => {
                    let inode = self.arena.get_mut(dst.ino)?;
                    inode.nlink -= 1;
                    inode.ctime = now;
                    self.release_if_unused(dst.ino);
                }
                Kind::Dir => {
                    self.arena.get_mut(to_dir)?.nlink -= 1;
                    self.kill_dir(dst.ino)?;
                }
            }
        }
        self.remove_entry(from_dir, from_name)?;
        self.add_entry(to_dir, to_name, src)?;
        let inode = self.arena.get_mut(src.ino)?;
        inode.ctime = now;
        if src.kind == Kind::Dir {
            let dir = inode.dir_mut()?;
            dir.parent = Some(to_dir);
            dir.name = to_name.into();
            if from_dir != to_dir {
                self.arena.get_mut(from_dir)?.nlink -= 1;
                self.arena.get_mut(to_dir)?.nlink += 1;
            }
        }
        Ok(())
    }

    /// Whether directory `dir` is `ancestor` or lies beneath it.
    fn is_within(&self, dir: Ino, ancestor: Ino) -> Result<bool> {
        let mut at = dir;
        for _ in 0..=self.arena.capacity() {
            if at == ancestor {
                return Ok(true);
            }
            if at == Ino::ROOT {
                return Ok(false);
            }
            match self.arena.get(at)?.dir()?.parent {
                Some(parent) => at = parent,
                None => return Ok(false),
            }
        }
        Err(FsError::Invalid)
    }
}
