//! The server's bookkeeping of the disk's open files: the mounted file
//! system, what an open file's requests work on (its path, or its inode
//! number once its name went), the gathered writes handed over before
//! every other request, and what waits for the next write-back.

use alloc::string::String;
use oxok_cffs::{Fs, FsError as DiskError, Kind as DiskKind};
use oxok_libos::xn::XnDisk;
use oxok_ramfs::{FsError, OpenFlags};

use super::convert::{err, meta_of};
use super::mount::mount;
use super::{DiskFiles, Target};
use crate::files::Meta;
use oxok_gather::Gatherer;
use oxok_slab::Slab;

impl DiskFiles {
    /// Serves the disk's file system, mounted (or made) at the first
    /// request: requests run on the server's large stack, which C-FFS's
    /// mount and repairs need.
    pub fn new() -> DiskFiles {
        DiskFiles {
            mounted: None,
            failed: false,
            nodes: Slab::new(),
            last_added: None,
            unwritten: None,
            gathered: Gatherer::default(),
            now: 0,
        }
    }

    /// The mounted file system.
    pub(super) fn fs(&mut self) -> Result<&mut Fs<XnDisk>, FsError> {
        if self.mounted.is_none() && !self.failed {
            self.mounted = mount();
            self.failed = self.mounted.is_none();
            if let Some(fs) = self.mounted.as_mut() {
                fs.set_time(self.now);
            }
        }
        self.mounted.as_mut().ok_or(FsError::Invalid)
    }

    /// The path of the open directory `ino` (a file whose name went is
    /// none).
    pub(super) fn dir_path(&self, ino: u64) -> Result<String, FsError> {
        match self.target(ino)? {
            Target::Path(p) => Ok(p),
            Target::Detached(_) => Err(FsError::NotADirectory),
        }
    }

    /// Changes the open file `ino` by its path, or by its number when it
    /// has no name left: the server's changes settled first, the change
    /// counted after.
    pub(super) fn change_open(
        &mut self,
        ino: u64,
        by_path: impl FnOnce(&mut Fs<XnDisk>, &str) -> Result<(), DiskError>,
        detached: impl FnOnce(&mut Fs<XnDisk>, u32) -> Result<(), DiskError>,
    ) -> Result<(), FsError> {
        self.settle();
        match self.target(ino)? {
            Target::Path(p) => by_path(self.fs()?, &p),
            Target::Detached(i) => detached(self.fs()?, i),
        }
        .map_err(err)?;
        self.changed();
        Ok(())
    }

    pub(super) fn target(&self, ino: u64) -> Result<Target, FsError> {
        let n = self.nodes.get(ino).ok_or(FsError::BadInode)?;
        Ok(match n.detached {
            Some(i) => Target::Detached(i),
            None => Target::Path(n.path.clone()),
        })
    }

    /// Writes `data` at `off` of the open file `ino`.
    pub(super) fn write_now(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<usize, FsError> {
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.write(&p, off, data),
            Target::Detached(i) => self.fs()?.write_detached(i, off, data),
        }
        .map_err(err)
    }

    /// Takes the name `p` away from what it names and keeps the file for
    /// the nodes open on it, if any are (they reach it by number from
    /// then on); says whether it did.
    pub(super) fn detach_open(&mut self, p: &str) -> Result<bool, FsError> {
        if !self.nodes.values().any(|n| n.detached.is_none() && n.pins > 0 && n.path == p) {
            return Ok(false);
        }
        let i = self.fs()?.detach(p).map_err(err)?;
        for n in self.nodes.values_mut().filter(|n| n.detached.is_none() && n.path == p) {
            n.detached = Some(i);
        }
        Ok(true)
    }

    pub(super) fn meta(&mut self, path: &str) -> Result<Meta, FsError> {
        let st = self.fs()?.stat(path).map_err(err)?;
        Ok(meta_of(path, &st))
    }

    /// Writes everything back (C-FFS's ordered write-back and a flush).
    pub(super) fn sync(&mut self) -> Result<(), FsError> {
        self.fs()?.sync().map_err(err)?;
        self.unwritten = None;
        Ok(())
    }

    /// Notes a change that waits in the cache for the next write-back.
    pub(super) fn changed(&mut self) {
        self.unwritten.get_or_insert_with(oxok_libos::time::ticks_ms);
    }

    /// Hands the gathered writes to C-FFS: done first by every request
    /// but a write, so each sees them. A failure is kept for the file.
    pub(super) fn settle(&mut self) {
        let Some(g) = self.gathered.take() else { return };
        let done = self.write_now(g.ino, g.off, &g.data);
        match done {
            Ok(_) => self.changed(),
            Err(e) => self.gathered.fail(g.ino, e),
        }
    }

    /// [`settle`](Self::settle), then the failure kept for `ino`, if any.
    pub(super) fn settle_for(&mut self, ino: u64) -> Result<(), FsError> {
        self.settle();
        self.gathered.failure(ino).map_or(Ok(()), Err)
    }
    /// An open of `path` (with no link before its last component): made
    /// or found, checked against `o`, truncated if asked. A symbolic link
    /// there is `Loop`, which the caller follows (or reports, with
    /// `O_NOFOLLOW`).
    pub(super) fn open_at(&mut self, path: &str, o: OpenFlags) -> Result<Meta, FsError> {
        let fs = self.fs()?;
        // A file to create is made at once (one look for its name, not a
        // status and then a create); a name that exists is opened as below.
        let created = o.create && !o.directory && {
            // A file made to be written: its record may wait on the disk
            // for the first write's block, which takes it along
            // (`oxok_cffs::held`).
            fs.disk_mut().hold_changes(o.write);
            let made = fs.create_mode(path, o.mode.unwrap_or(oxok_cffs::layout::FILE_MODE));
            fs.disk_mut().hold_changes(false);
            match made {
                Ok(()) => true,
                Err(DiskError::Exists) if o.exclusive => return Err(FsError::Exists),
                Err(DiskError::Exists) => false,
                Err(e) => return Err(err(e)),
            }
        };
        if created {
            self.changed();
            return self.meta(path);
        }
        let mut st = fs.stat(path).map_err(err)?;
        match st.kind {
            _ if o.create && o.exclusive => return Err(FsError::Exists),
            DiskKind::Symlink => return Err(FsError::Loop),
            DiskKind::Dir if o.write => return Err(FsError::IsADirectory),
            DiskKind::File if o.directory => return Err(FsError::NotADirectory),
            DiskKind::File if o.truncate && st.size > 0 => {
                fs.truncate(path, 0).map_err(err)?;
                st.size = 0;
                self.changed();
            }
            _ => {}
        }
        Ok(meta_of(path, &st))
    }

    /// A rename of `from` to `to` (neither with a link before its last
    /// component); open files follow their names.
    pub(super) fn rename_at(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        if from == to {
            return self.fs()?.stat(from).map(|_| ()).map_err(err);
        }
        // A file open under the name replaced keeps living, nameless
        // (two names of one file are left as they are, as POSIX says).
        let old = self.fs()?.stat(from).map_err(err)?;
        if let Ok(new) = self.fs()?.stat(to)
            && old.kind == DiskKind::File
            && new.kind == DiskKind::File
            && (old.ino.is_none() || old.ino != new.ino)
        {
            self.detach_open(to)?;
        }
        self.fs()?.rename(from, to).map_err(err)?;
        // Open files under the old name follow it.
        for n in self.nodes.values_mut().filter(|n| n.detached.is_none()) {
            if n.path == from {
                n.path = String::from(to);
            } else if let Some(rest) = n.path.strip_prefix(from).filter(|r| r.starts_with('/')) {
                n.path = alloc::format!("{to}{rest}");
            }
        }
        Ok(())
    }
}
