//! [`Files`]: what the server needs of a file system, so one server serves
//! either the RAM file system (`fsd`, `crates/ramfs`) or the C-FFS library
//! file system on the disk (`dfsd`, `crates/cffs` over XN). Open files are
//! named by a word the file system hands out (`open`) and keeps valid while
//! pinned.

use alloc::boxed::Box;
use alloc::vec::Vec;
use oxok_ramfs::{Fs, FsError, Ino, Kind, OpenFlags};

/// What `stat` reports.
#[derive(Clone, Copy, Debug)]
pub struct Meta {
    /// File or directory.
    pub kind: Kind,
    /// A file's bytes.
    pub size: u64,
    /// The inode number shown to programs.
    pub number: u64,
    /// Links.
    pub nlink: u64,
    /// The last change of the content in Unix seconds (0: not kept).
    pub mtime: u64,
    /// The permission bits (`None`: not kept).
    pub mode: Option<u16>,
    /// Bytes of storage held (`None`: not known).
    pub allocated: Option<u64>,
}

/// One directory entry.
pub struct Entry {
    /// Its name.
    pub name: Vec<u8>,
    /// File or directory.
    pub kind: Kind,
    /// A file's size.
    pub size: u64,
}

/// The absolute path `path` cut at its last `/`: its directory's path
/// (`/` for the root's entries) and its last component.
pub fn split_parent(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let cut = path.iter().rposition(|&b| b == b'/')?;
    Some((if cut == 0 { &b"/"[..] } else { &path[..cut] }, &path[cut + 1..]))
}

/// A file system's size and use (`INFO`).
pub struct Usage {
    /// Inodes in use (the disk's: files open).
    pub inodes: u64,
    /// Data bytes in use.
    pub used: u64,
    /// Data bytes it can hold.
    pub capacity: u64,
    /// Inodes it can hold (0: no limit).
    pub max_inodes: u64,
}

/// What a server does with the files [`Files::open_along`] opens for it,
/// one by one.
pub trait Along {
    /// Whether a file of this name can go at all (one that cannot is
    /// passed over).
    fn carries(&self, name: &[u8]) -> bool;
    /// Whether the next file, `len` bytes named `name`, fits: false ends
    /// the batch before it is opened.
    fn room(&mut self, name: &[u8], len: usize) -> bool;
    /// The piece `bytes` at byte `at` of the file [`room`](Along::room)
    /// let in.
    fn bytes(&mut self, at: usize, bytes: &[u8]);
    /// It is open as `ino` (pinned once), every byte handed over: whether
    /// it is kept (false: it is let go again and the batch ends).
    fn opened(&mut self, ino: u64, meta: &Meta, name: &[u8]) -> bool;
}

/// A file system the server serves. Paths are absolute.
pub trait Files: Send {
    /// Opens (creates, truncates) `path`: its word and its status (as
    /// `stat` of the word would say, without a second look for it).
    fn open(&mut self, path: &[u8], o: OpenFlags) -> Result<(u64, Meta), FsError>;
    /// Status of an open file.
    fn stat(&mut self, ino: u64) -> Result<Meta, FsError>;
    /// Status of `path`.
    fn stat_path(&mut self, path: &[u8]) -> Result<Meta, FsError>;
    /// Keeps `ino` valid until the matching `unpin`.
    fn pin(&mut self, ino: u64) -> Result<(), FsError>;
    /// Drops a pin.
    fn unpin(&mut self, ino: u64) -> Result<(), FsError>;
    /// Reads at `off`.
    fn read(&mut self, ino: u64, off: u64, buf: &mut [u8]) -> Result<usize, FsError>;
    /// Reads up to `scratch.len()` bytes at `off`, handing them to `sink`
    /// piece by piece, each with its offset in the read. A file system
    /// that can hands them over from where it keeps them; this default
    /// reads into `scratch` first.
    fn read_to(
        &mut self,
        ino: u64,
        off: u64,
        scratch: &mut [u8],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        let n = self.read(ino, off, scratch)?;
        sink(0, &scratch[..n]);
        Ok(n)
    }
    /// Writes at `off`.
    fn write(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<usize, FsError>;
    /// Sets the length.
    fn truncate(&mut self, ino: u64, len: u64) -> Result<(), FsError>;
    /// The entry of directory `ino` after `after` in name order.
    fn next_entry(&mut self, ino: u64, after: Option<&[u8]>) -> Result<Option<Entry>, FsError>;
    /// Up to `max` entries that follow `path`'s name in its directory, in
    /// the order the file system finds them fastest (this default: name
    /// order, by [`next_entry`](Files::next_entry)).
    fn following(&mut self, path: &[u8], max: usize) -> Result<Vec<Entry>, FsError> {
        let (parent, name) = split_parent(path).ok_or(FsError::InvalidName)?;
        let (dir, _) = self.open(parent, OpenFlags { directory: true, ..OpenFlags::default() })?;
        let mut after = name.to_vec();
        let mut out = Vec::new();
        while out.len() < max {
            let Some(e) = self.next_entry(dir, Some(&after))? else { break };
            after.clone_from(&e.name);
            out.try_reserve(1).map_err(|_| FsError::NoSpace)?;
            out.push(e);
        }
        Ok(out)
    }
    /// Opens for reading, as an open of its path would, each regular file
    /// among the `look` entries that follow `path`'s name in its
    /// directory ([`following`](Files::following)), at most `max`, and
    /// hands it with its bytes to `along` until it says stop: how many
    /// went. This default opens each by its path; `scratch` holds a file's
    /// bytes where [`read_to`](Files::read_to) needs it.
    fn open_along(&mut self, path: &[u8], look: usize, max: usize, scratch: &mut [u8], along: &mut dyn Along) -> usize {
        let Some((parent, _)) = split_parent(path) else { return 0 };
        let Ok(entries) = self.following(path, look) else { return 0 };
        let mut full: Vec<u8> = Vec::new();
        let mut went = 0;
        for e in entries {
            if went == max {
                break;
            }
            if e.kind != Kind::File || !along.carries(&e.name) {
                continue;
            }
            full.clear();
            if full.try_reserve(parent.len() + 1 + e.name.len()).is_err() {
                break;
            }
            full.extend_from_slice(parent);
            if parent != b"/" {
                full.push(b'/');
            }
            full.extend_from_slice(&e.name);
            let Ok((ino, meta)) = self.open(&full, OpenFlags::default()) else { break };
            let Ok(len) = usize::try_from(meta.size) else { break };
            if meta.kind != Kind::File || len > scratch.len() || !along.room(&e.name, len) || self.pin(ino).is_err() {
                break;
            }
            let read = self.read_to(ino, 0, &mut scratch[..len], &mut |at, b| along.bytes(at, b));
            if read.ok() != Some(len) || !along.opened(ino, &meta, &e.name) {
                let _ = self.unpin(ino);
                break;
            }
            went += 1;
        }
        went
    }
    /// Makes a directory, with the permission bits `mode` where the file
    /// system keeps them.
    fn mkdir(&mut self, path: &[u8], mode: Option<u16>) -> Result<(), FsError>;
    /// Removes a file name.
    fn unlink(&mut self, path: &[u8]) -> Result<(), FsError>;
    /// Removes an empty directory.
    fn rmdir(&mut self, path: &[u8]) -> Result<(), FsError>;
    /// Renames.
    fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), FsError>;
    /// Copies the tree `from` to the new name `to` (XCP): (files, bytes,
    /// data blocks). A file system that cannot copy without the CPU
    /// says `NotPermitted` (the client sees `Unsupported`).
    fn copy_tree(&mut self, _from: &[u8], _to: &[u8]) -> Result<[u64; 3], FsError> {
        Err(FsError::NotPermitted)
    }
    /// Status of `path`, a symbolic link as its last component not
    /// followed (`lstat`). A file system without links: as `stat_path`.
    fn lstat_path(&mut self, path: &[u8]) -> Result<Meta, FsError> {
        self.stat_path(path)
    }
    /// Makes `new` another name of what `existing` names (a symbolic link
    /// as the last component of `existing` is linked itself). A file
    /// system without hard links says `NotPermitted` (`EPERM`, as Linux's
    /// file systems without them).
    fn link(&mut self, _existing: &[u8], _new: &[u8]) -> Result<(), FsError> {
        Err(FsError::NotPermitted)
    }
    /// Makes a symbolic link at `path` holding `target` as it is. A file
    /// system without them says `NotPermitted`.
    fn symlink(&mut self, _target: &[u8], _path: &[u8]) -> Result<(), FsError> {
        Err(FsError::NotPermitted)
    }
    /// The target of the symbolic link `path` names (`Invalid` for
    /// anything else).
    fn readlink(&mut self, path: &[u8]) -> Result<Vec<u8>, FsError> {
        self.stat_path(path)?;
        Err(FsError::Invalid)
    }
    /// Sets `ino`'s permission bits. A file system that keeps no modes
    /// says `NotPermitted` (the client sees `Unsupported`).
    fn set_mode(&mut self, _ino: u64, _mode: u16) -> Result<(), FsError> {
        Err(FsError::NotPermitted)
    }
    /// What `INFO` reports of the file system.
    fn usage(&mut self) -> Usage;
    /// The server's clock (Unix seconds), stamped on what later calls change.
    fn set_time(&mut self, _now: u64) {}
    /// Sets `ino`'s modification and access times (`None`: unchanged). A
    /// file system that keeps no times says `NotPermitted` (the client
    /// sees `Unsupported`).
    fn set_times(&mut self, _ino: u64, _mtime: Option<u64>, _atime: Option<u64>) -> Result<(), FsError> {
        Err(FsError::NotPermitted)
    }
    /// Makes `ino`'s data, size and name durable before it returns
    /// (`FSYNC`). A file system in memory has nothing to write.
    fn fsync(&mut self, _ino: u64) -> Result<(), FsError> {
        Ok(())
    }
    /// Makes everything durable before it returns (`SYNC`).
    fn sync_all(&mut self) -> Result<(), FsError> {
        Ok(())
    }
    /// Makes everything durable if a change has waited unwritten for
    /// `age_ms` milliseconds or more (`WRITE_BACK`): whether it wrote. A
    /// file system in memory has nothing to write.
    fn write_back(&mut self, _age_ms: u64) -> Result<bool, FsError> {
        Ok(false)
    }
    /// Makes everything durable (the server is stopping).
    fn finish(&mut self) {}
    /// A request was served (whatever its outcome).
    fn end_request(&mut self) {}
}

fn ino(raw: u64) -> Ino {
    Ino::from_raw(raw)
}

impl Files for Fs {
    fn open(&mut self, path: &[u8], o: OpenFlags) -> Result<(u64, Meta), FsError> {
        let i = Fs::open(self, Ino::ROOT, path, o)?.to_raw();
        Ok((i, Files::stat(self, i)?))
    }
    fn stat(&mut self, i: u64) -> Result<Meta, FsError> {
        let st = Fs::stat(self, ino(i))?;
        Ok(Meta {
            kind: st.kind,
            size: st.size,
            number: st.ino.number(),
            nlink: st.nlink,
            mtime: st.mtime,
            mode: Some(st.mode),
            allocated: Some(st.allocated),
        })
    }
    fn stat_path(&mut self, path: &[u8]) -> Result<Meta, FsError> {
        let i = self.lookup(Ino::ROOT, path)?;
        Files::stat(self, i.to_raw())
    }
    fn lstat_path(&mut self, path: &[u8]) -> Result<Meta, FsError> {
        let i = self.lookup_nofollow(Ino::ROOT, path)?;
        Files::stat(self, i.to_raw())
    }
    fn link(&mut self, existing: &[u8], new: &[u8]) -> Result<(), FsError> {
        Fs::link(self, Ino::ROOT, existing, new)
    }
    fn symlink(&mut self, target: &[u8], path: &[u8]) -> Result<(), FsError> {
        Fs::symlink(self, Ino::ROOT, target, path).map(|_| ())
    }
    fn readlink(&mut self, path: &[u8]) -> Result<Vec<u8>, FsError> {
        Fs::readlink(self, Ino::ROOT, path)
    }
    fn set_mode(&mut self, i: u64, mode: u16) -> Result<(), FsError> {
        Fs::set_mode(self, ino(i), mode)
    }
    fn pin(&mut self, i: u64) -> Result<(), FsError> {
        Fs::pin(self, ino(i))
    }
    fn unpin(&mut self, i: u64) -> Result<(), FsError> {
        Fs::unpin(self, ino(i))
    }
    fn read(&mut self, i: u64, off: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        Fs::read(self, ino(i), off, buf)
    }
    fn write(&mut self, i: u64, off: u64, data: &[u8]) -> Result<usize, FsError> {
        Fs::write(self, ino(i), off, data)
    }
    fn truncate(&mut self, i: u64, len: u64) -> Result<(), FsError> {
        Fs::truncate(self, ino(i), len)
    }
    fn next_entry(&mut self, i: u64, after: Option<&[u8]>) -> Result<Option<Entry>, FsError> {
        let Some(e) = self.readdir_after(ino(i), after, 1)?.into_iter().next() else { return Ok(None) };
        let size = Fs::stat(self, e.ino).map_or(0, |s| s.size);
        Ok(Some(Entry { name: e.name, kind: e.kind, size }))
    }
    fn mkdir(&mut self, path: &[u8], mode: Option<u16>) -> Result<(), FsError> {
        let dir = Fs::mkdir(self, Ino::ROOT, path)?;
        match mode {
            Some(m) => Fs::set_mode(self, dir, m),
            None => Ok(()),
        }
    }
    fn unlink(&mut self, path: &[u8]) -> Result<(), FsError> {
        Fs::unlink(self, Ino::ROOT, path)
    }
    fn rmdir(&mut self, path: &[u8]) -> Result<(), FsError> {
        Fs::rmdir(self, Ino::ROOT, path)
    }
    fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), FsError> {
        Fs::rename(self, Ino::ROOT, from, to)
    }
    fn usage(&mut self) -> Usage {
        let st = self.statfs();
        Usage {
            inodes: st.inodes as u64,
            used: st.used_bytes,
            capacity: st.max_bytes,
            max_inodes: st.max_inodes as u64,
        }
    }
    fn set_time(&mut self, now: u64) {
        Fs::set_time(self, now)
    }
    fn set_times(&mut self, i: u64, mtime: Option<u64>, atime: Option<u64>) -> Result<(), FsError> {
        Fs::set_times(self, ino(i), atime, mtime)
    }
}

/// The server's file system.
pub type Backend = Box<dyn Files>;
