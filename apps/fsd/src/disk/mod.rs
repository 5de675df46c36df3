//! [`DiskFiles`]: the C-FFS library file system (`crates/cffs`) on the
//! disk, through XN's calls (`oxok_libos::xn::XnDisk`), as the server's
//! [`Files`]. C-FFS names files by path; an open file is a path this table
//! keeps (and moves along when a rename moves it or a directory above it),
//! or its inode number once its name went while it was open (`nodes.rs`;
//! `convert.rs` turns C-FFS's words into the server's, `mount.rs` mounts
//! or makes the file system).
//!
//! Durability: changes (names, data, sizes) stay in the buffer cache until
//! a client asks (`FSYNC`: C-FFS's `fsync` of that file; `SYNC`:
//! everything), until the oldest has waited 5 s (the `update` daemon's
//! `WRITE_BACK` each second, `fsproto::WRITE_BACK_AGE_MS`; Linux waits
//! 30 s), or until the server stops — always through C-FFS's ordered
//! write-back, so a crash at any point leaves a disk `fsck` accepts, with
//! everything fsynced or synced before it.

use alloc::string::String;
use alloc::vec::Vec;
use oxok_cffs::{Fs, FsError as DiskError, Kind as DiskKind};
use oxok_libos::println;
use oxok_libos::xn::XnDisk;
use oxok_ramfs::{FsError, OpenFlags};

use crate::files::{Along, Entry, Files, Meta, Usage};
use oxok_gather::Gatherer;
use oxok_libos::abi::xn::BLOCK_SIZE;
use oxok_slab::Slab;

mod along;
mod convert;
mod links;
mod mount;
mod nodes;

use convert::{err, kind, meta_of, normal};

/// An open file: by its path, or — once its name was removed while it
/// was open — by its inode number ([`Target::Detached`]), until its last
/// close lets it go (POSIX's unlinked open file; `oxok_cffs::Fs::detach`).
struct Node {
    path: String,
    pins: u32,
    detached: Option<u32>,
}

/// What a request on an open file works on.
enum Target {
    Path(String),
    Detached(u32),
}

/// The disk file system (mounted at the first request) and its open files.
pub struct DiskFiles {
    mounted: Option<Fs<XnDisk>>,
    /// Mounting failed (said once): every request is refused.
    failed: bool,
    /// Open files under the words handed out for them.
    nodes: Slab<Node>,
    /// The node the last open added: the one that may be unpinned (its
    /// open failed half-way, after this file system's part), since every
    /// open lets the one before go first.
    last_added: Option<u64>,
    /// When (ms of the kernel's clock) the oldest change not yet written
    /// back was made; `None` when everything is durable.
    unwritten: Option<u64>,
    /// Consecutive writes to one file gathered into one (`crates/gather`).
    gathered: Gatherer<FsError>,
    /// The server's clock at the request (Unix seconds), which C-FFS
    /// stamps on what the request makes, writes or truncates. Gathered
    /// writes get the time of the request that hands them over (at most a
    /// second later: the `update` daemon's write-back is a request).
    now: u64,
}

impl Files for DiskFiles {
    fn open(&mut self, path: &[u8], o: OpenFlags) -> Result<(u64, Meta), FsError> {
        self.settle();
        let path = normal(path)?;
        // A record nobody pinned (an open that failed half-way) goes
        // first: only the last open's can be one.
        if let Some(last) = self.last_added.take()
            && self.nodes.get(last).is_some_and(|n| n.pins == 0)
        {
            self.nodes.remove(last);
        }
        // The node keeps the path with no link in it (a link's target
        // renamed later does not move it, as a file open by any path). A
        // path with no link costs nothing more (`links.rs`).
        let (meta, rewritten) = self.following_to(&path, !o.nofollow, |fs, p| fs.open_at(p, o))?;
        let path = rewritten.unwrap_or(path);
        let ino = self.nodes.add(Node { path, pins: 0, detached: None }).ok_or(FsError::NoSpace)?;
        self.last_added = Some(ino);
        Ok((ino, meta))
    }

    fn stat(&mut self, ino: u64) -> Result<Meta, FsError> {
        self.settle();
        match self.target(ino)? {
            Target::Path(p) => self.meta(&p),
            Target::Detached(i) => {
                let st = self.fs()?.stat_detached(i).map_err(err)?;
                Ok(meta_of("", &st))
            }
        }
    }

    fn stat_path(&mut self, path: &[u8]) -> Result<Meta, FsError> {
        self.settle();
        let p = normal(path)?;
        self.following(&p, true, |fs, p| {
            let st = fs.fs()?.stat(p).map_err(err)?;
            if st.kind == DiskKind::Symlink {
                return Err(FsError::Loop);
            }
            Ok(meta_of(p, &st))
        })
    }

    fn lstat_path(&mut self, path: &[u8]) -> Result<Meta, FsError> {
        self.settle();
        let p = normal(path)?;
        self.following(&p, false, |fs, p| fs.meta(p))
    }

    /// A link to an open file keeps the path it was opened by; a link
    /// with no name of its own (`EPERM`) cannot have a second one.
    fn symlink(&mut self, target: &[u8], path: &[u8]) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        self.following(&p, false, |fs, p| {
            fs.fs()?.symlink(target, p).map_err(|e| match e {
                DiskError::InvalidArg => FsError::TooLong,
                e => err(e),
            })
        })?;
        self.changed();
        Ok(())
    }

    fn readlink(&mut self, path: &[u8]) -> Result<Vec<u8>, FsError> {
        self.settle();
        let p = normal(path)?;
        self.following(&p, false, |fs, p| {
            fs.fs()?.readlink(p).map_err(|e| match e {
                DiskError::InvalidArg => FsError::Invalid,
                e => err(e),
            })
        })
    }

    fn pin(&mut self, ino: u64) -> Result<(), FsError> {
        let n = self.nodes.get_mut(ino).ok_or(FsError::BadInode)?;
        n.pins = n.pins.saturating_add(1);
        Ok(())
    }

    fn unpin(&mut self, ino: u64) -> Result<(), FsError> {
        // Its gathered writes go first; a failure to take them is the
        // close's.
        let kept = self.settle_for(ino);
        let n = self.nodes.get_mut(ino).ok_or(FsError::BadInode)?;
        n.pins = n.pins.saturating_sub(1);
        if n.pins == 0
            && let Some(Node { detached: Some(i), .. }) = self.nodes.remove(ino)
            && !self.nodes.values().any(|n| n.detached == Some(i))
        {
            // The last close of a file whose name went: freed now.
            if let Err(e) = self.fs()?.release(i) {
                println!("dfsd: releasing inode {i}: {e:?}");
            }
            self.changed();
        }
        kept
    }

    fn read(&mut self, ino: u64, off: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        self.settle();
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.read(&p, off, buf),
            Target::Detached(i) => {
                let want = buf.len();
                self.fs()?.read_detached(i, off, want, |at, b| buf[at..at + b.len()].copy_from_slice(b))
            }
        }
        .map_err(err)
    }

    fn read_to(
        &mut self,
        ino: u64,
        off: u64,
        scratch: &mut [u8],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        self.settle();
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.read_with(&p, off, scratch.len(), sink),
            Target::Detached(i) => self.fs()?.read_detached(i, off, scratch.len(), sink),
        }
        .map_err(err)
    }

    fn write(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<usize, FsError> {
        if self.nodes.get(ino).is_none() {
            return Err(FsError::BadInode);
        }
        if let Some(e) = self.gathered.failure(ino) {
            return Err(e);
        }
        // Gathered while it continues the run and fits (the file system
        // takes it later, in one write); else the run goes first.
        let fits = off.checked_add(data.len() as u64).is_some_and(|end| end <= oxok_cffs::MAX_FILE);
        let free = oxok_libos::xn::header().map_or(0, |h| h.free);
        if fits && self.gathered.gather(ino, off, data, free) {
            return Ok(data.len());
        }
        self.settle_for(ino)?;
        if fits && self.gathered.gather(ino, off, data, free) {
            return Ok(data.len());
        }
        let n = self.write_now(ino, off, data)?;
        self.changed();
        Ok(n)
    }

    fn truncate(&mut self, ino: u64, len: u64) -> Result<(), FsError> {
        self.change_open(ino, |fs, p| fs.truncate(p, len), |fs, i| fs.truncate_detached(i, len))
    }

    fn next_entry(&mut self, ino: u64, after: Option<&[u8]>) -> Result<Option<Entry>, FsError> {
        self.settle();
        let dir = self.dir_path(ino)?;
        let mut names = self.fs()?.readdir(&dir).map_err(err)?;
        names.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let Some((name, k)) = names.into_iter().find(|(n, _)| after.is_none_or(|a| n.as_bytes() > a)) else {
            return Ok(None);
        };
        let size = match k {
            DiskKind::File | DiskKind::Symlink => {
                let child = if dir == "/" { alloc::format!("/{name}") } else { alloc::format!("{dir}/{name}") };
                self.fs()?.stat(&child).map_or(0, |s| s.size)
            }
            DiskKind::Dir => 0,
        };
        Ok(Some(Entry { name: name.into_bytes(), kind: kind(k), size }))
    }

    fn open_along(
        &mut self,
        path: &[u8],
        look: usize,
        max: usize,
        _scratch: &mut [u8],
        along: &mut dyn Along,
    ) -> usize {
        self.open_along_disk(path, look, max, along)
    }

    fn following(&mut self, path: &[u8], max: usize) -> Result<Vec<Entry>, FsError> {
        self.settle();
        let p = normal(path)?;
        let found = self.fs()?.following(&p, max).map_err(err)?;
        Ok(found.into_iter().map(|(name, k, size)| Entry { name: name.into_bytes(), kind: kind(k), size }).collect())
    }

    fn mkdir(&mut self, path: &[u8], mode: Option<u16>) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        let mode = mode.unwrap_or(oxok_cffs::layout::DIR_MODE);
        self.following(&p, false, |fs, p| fs.fs()?.mkdir_mode(p, mode).map_err(err))?;
        self.changed();
        Ok(())
    }

    fn unlink(&mut self, path: &[u8]) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        self.following(&p, false, |fs, p| {
            if !fs.detach_open(p)? {
                // Its record's removal and its blocks' free may wait on the
                // disk for the next file's of the same directory block, and
                // go with them as one (`oxok_cffs::held`).
                let c = fs.fs()?;
                c.disk_mut().hold_changes(true);
                let gone = c.unlink_file(p);
                c.disk_mut().hold_changes(false);
                gone.map_err(err)?;
            }
            Ok(())
        })?;
        self.changed();
        Ok(())
    }

    fn rmdir(&mut self, path: &[u8]) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        if p == "/" {
            return Err(FsError::Busy);
        }
        self.following(&p, false, |fs, p| {
            if fs.fs()?.stat(p).map_err(err)?.kind != DiskKind::Dir {
                return Err(FsError::NotADirectory);
            }
            fs.fs()?.unlink(p).map_err(err)
        })?;
        self.changed();
        Ok(())
    }

    fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), FsError> {
        self.settle();
        let (from, to) = (normal(from)?, normal(to)?);
        self.following_both(&from, &to, |fs, from, to| fs.rename_at(from, to))?;
        self.changed();
        Ok(())
    }

    /// C-FFS's hard links: the file's inode moves out of its directory
    /// into the inode table, where both names point (open files keep
    /// their paths, which still name it). A directory, or a symbolic link
    /// (it has no inode of its own on the disk), has one name: `EPERM`.
    fn link(&mut self, existing: &[u8], new: &[u8]) -> Result<(), FsError> {
        self.settle();
        let (existing, new) = (normal(existing)?, normal(new)?);
        self.following_both(&existing, &new, |fs, existing, new| {
            if fs.fs()?.stat(existing).map_err(err)?.kind == DiskKind::Symlink {
                return Err(FsError::NotPermitted);
            }
            fs.fs()?.link(existing, new).map_err(|e| match e {
                DiskError::IsDir => FsError::NotPermitted,
                e => err(e),
            })
        })?;
        self.changed();
        Ok(())
    }

    /// A file with no name left has nothing to make durable: a crash
    /// frees it.
    fn fsync(&mut self, ino: u64) -> Result<(), FsError> {
        self.settle_for(ino)?;
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.fsync(&p).map_err(err),
            Target::Detached(_) => Ok(()),
        }
    }

    fn sync_all(&mut self) -> Result<(), FsError> {
        self.settle();
        self.sync()
    }

    fn write_back(&mut self, age_ms: u64) -> Result<bool, FsError> {
        self.settle();
        match self.unwritten {
            Some(since) if oxok_libos::time::ticks_ms().saturating_sub(since) >= age_ms => self.sync().map(|()| true),
            _ => Ok(false),
        }
    }

    fn copy_tree(&mut self, from: &[u8], to: &[u8]) -> Result<[u64; 3], FsError> {
        self.settle();
        let (from, to) = (normal(from)?, normal(to)?);
        let c = self.following_both(&from, &to, |fs, from, to| fs.fs()?.copy_tree(from, to).map_err(err))?;
        self.changed();
        Ok([c.files, c.bytes, c.blocks])
    }

    fn set_time(&mut self, now: u64) {
        self.now = now;
        if let Some(fs) = self.mounted.as_mut() {
            fs.set_time(now);
        }
    }

    fn set_mode(&mut self, ino: u64, mode: u16) -> Result<(), FsError> {
        self.change_open(ino, |fs, p| fs.set_mode(p, mode), |fs, i| fs.set_mode_detached(i, mode))
    }

    /// C-FFS keeps a modification time and no access time: an access time
    /// alone changes nothing.
    fn set_times(&mut self, ino: u64, mtime: Option<u64>, _atime: Option<u64>) -> Result<(), FsError> {
        self.settle();
        let target = self.target(ino)?;
        if let Some(t) = mtime {
            match target {
                Target::Path(p) => self.fs()?.set_mtime(&p, t),
                Target::Detached(i) => self.fs()?.set_mtime_detached(i, t),
            }
            .map_err(err)?;
            self.changed();
        }
        Ok(())
    }

    /// The disk's blocks, as XN's exposed header counts them (every file
    /// system on it); C-FFS has no inode limit (embedded inodes).
    fn usage(&mut self) -> Usage {
        self.settle();
        let (nblocks, free) = oxok_libos::xn::header().map_or((0, 0), |h| (h.nblocks, h.free));
        let block = BLOCK_SIZE as u64;
        Usage {
            inodes: self.nodes.len() as u64,
            used: nblocks.saturating_sub(free) * block,
            capacity: nblocks * block,
            max_inodes: 0,
        }
    }

    fn end_request(&mut self) {
        if let Some(fs) = self.mounted.as_mut()
            && let Err(e) = fs.disk_mut().end_request()
        {
            println!("dfsd: a held metadata change could not go to the kernel yet: {e:?}");
        }
    }

    fn finish(&mut self) {
        self.settle();
        if let Some(Err(e)) = self.mounted.as_mut().map(|fs| fs.sync()) {
            println!("dfsd: final sync: {e:?}");
        }
    }
}
