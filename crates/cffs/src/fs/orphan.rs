//! Files that lose their name while open. POSIX keeps such a file until
//! its last close; [`Fs::detach`] takes the name away and hands back the
//! file's inode number, by which it is read, written, truncated and
//! stated from then on. With no name left it is an *orphan*: an
//! out-of-line inode no name reaches, freed by [`Fs::release`] at the last
//! close. A crash before that leaves nothing behind: mount frees every
//! inode no name reaches (`recover.rs`).

use super::{Found, Fs, Kind, Stat};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

impl<D: Disk> Fs<D> {
    /// Removes the name `path` as [`unlink_file`](Fs::unlink_file) does,
    /// but keeps the file and returns its inode number (an embedded file
    /// moves out of line first, its data copied, as for a second name).
    /// Its other names, if it has any, stay.
    pub fn detach(&mut self, path: &str) -> Result<u32, FsError> {
        self.renaming(|fs| fs.detach_now(path))
    }

    fn detach_now(&mut self, path: &str) -> Result<u32, FsError> {
        let f = self.named_file(path)?;
        let (dir, _) = self.parent(path)?;
        let (inode, ino) = self.out_of_line(&f)?;
        let name = self.rec(f.at)?;
        self.vacate(f.at.block, name.name())?;
        let rec = self.rec(inode)?;
        if self.drop_link(Found { at: f.at, inode, rec })? == 0 {
            self.put_rec(inode, &Record { nlink: 0, ..rec })?;
        }
        self.touch_dir(dir)?;
        Ok(ino)
    }

    /// The file whose inode number is `ino` (a [`detach`](Fs::detach)ed
    /// one), as a name lookup finds one.
    fn by_number(&mut self, ino: u32) -> Result<Found, FsError> {
        let at = self.inode_loc(ino)?;
        let rec = self.rec(at)?;
        if rec.kind != K_XFILE {
            return Err(FsError::NotFound);
        }
        Ok(Found { at, inode: at, rec })
    }

    /// [`read_with`](Fs::read_with) of the detached file `ino`.
    pub fn read_detached(
        &mut self,
        ino: u32,
        off: u64,
        want: usize,
        sink: impl FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        let f = self.by_number(ino)?;
        self.read_found(&f, off, want, sink)
    }

    /// [`write`](Fs::write) to the detached file `ino`.
    pub fn write_detached(&mut self, ino: u32, off: u64, data: &[u8]) -> Result<usize, FsError> {
        let f = self.by_number(ino)?;
        self.write_found(f, off, data)
    }

    /// [`truncate`](Fs::truncate) of the detached file `ino`.
    pub fn truncate_detached(&mut self, ino: u32, len: u64) -> Result<(), FsError> {
        let f = self.by_number(ino)?;
        if len > super::MAX_FILE {
            return Err(FsError::InvalidArg);
        }
        self.set_len(f.inode, f.inode.block, len)
    }

    /// [`stat`](Fs::stat) of the detached file `ino` (link count 0 once
    /// it has no name).
    pub fn stat_detached(&mut self, ino: u32) -> Result<Stat, FsError> {
        let r = self.by_number(ino)?.rec;
        Ok(Stat {
            kind: Kind::File,
            size: r.size,
            nlink: r.nlink,
            blocks: r.blocks(),
            ino: Some(ino),
            mtime: u64::from(r.mtime),
            mode: r.mode,
        })
    }

    /// [`set_mtime`](Fs::set_mtime) of the detached file `ino`.
    pub fn set_mtime_detached(&mut self, ino: u32, unix_secs: u64) -> Result<(), FsError> {
        let f = self.by_number(ino)?;
        let r = Record { mtime: u32::try_from(unix_secs).unwrap_or(u32::MAX), ..f.rec };
        self.put_rec(f.inode, &r)
    }

    /// [`set_mode`](Fs::set_mode) of the detached file `ino`.
    pub fn set_mode_detached(&mut self, ino: u32, mode: u16) -> Result<(), FsError> {
        let f = self.by_number(ino)?;
        let r = Record { mode: mode & crate::layout::MODE_BITS, ..f.rec };
        self.put_rec(f.inode, &r)
    }

    /// Lets the detached file `ino` go (its last close): freed with its
    /// blocks if no name reaches it; a file with names is left as it is.
    pub fn release(&mut self, ino: u32) -> Result<(), FsError> {
        let f = self.by_number(ino)?;
        if f.rec.nlink == 0 { self.free_inode(f.inode) } else { Ok(()) }
    }
}
