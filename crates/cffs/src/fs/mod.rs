//! [`Fs`]: the file system over a [`Disk`]. This file holds the state,
//! `mkfs`, `mount`, path resolution and `stat`; the operations live in
//! `file.rs` (read, write, truncate), `copy.rs` (XCP), `ns.rs` (create,
//! mkdir, unlink, rename, link), `orphan.rs` (files that lose their name
//! while open), `space.rs` (block and inode placement), `sync.rs`
//! (ordered write-back) and `recover.rs` (what mount repairs).

mod copy;
mod file;
mod following;
mod names;
mod ns;
mod orphan;
mod pathtable;
mod recover;
mod space;
mod sync;

use alloc::string::String;
use alloc::vec::Vec;

use oxok_abi::xn::BLOCK_SIZE;

use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

pub use copy::{COPY_BATCH, Copied};
pub use file::{Cursor, MAX_FILE, Whence};
pub use following::Following;
pub use recover::Repairs;
pub use space::GROUP;

/// Where a record lives: a directory or inode-table block and the record's
/// index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// The metadata block.
    pub block: u64,
    /// Record index.
    pub rec: usize,
}

/// A name found in a directory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found {
    /// The name's record.
    pub at: Loc,
    /// Where the inode is (`at` for an embedded file).
    pub inode: Loc,
    /// The inode's record.
    pub rec: Record,
}

impl Stat {
    /// What `stat` reports of the inode record `rec`, numbered `ino` if
    /// it is out of line.
    pub(crate) fn of(rec: &Record, ino: Option<u32>) -> Stat {
        let kind = Kind::of(rec);
        let nlink = if rec.kind == K_FILE || rec.kind == K_SYMLINK { 1 } else { rec.nlink };
        Stat { kind, size: rec.size, nlink, blocks: rec.blocks(), ino, mtime: u64::from(rec.mtime), mode: rec.mode }
    }
}

/// File, directory or symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Regular file.
    File,
    /// Directory.
    Dir,
    /// Symbolic link ([`Fs::symlink`]).
    Symlink,
}

impl Kind {
    /// The kind of what the record `r` is (an inode's record, not a link's).
    pub(crate) fn of(r: &Record) -> Kind {
        match r.kind {
            K_XDIR => Kind::Dir,
            K_SYMLINK => Kind::Symlink,
            _ => Kind::File,
        }
    }
}

/// What `stat` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// File or directory.
    pub kind: Kind,
    /// Bytes (a directory: its blocks × 4096).
    pub size: u64,
    /// Names.
    pub nlink: u16,
    /// Blocks allocated.
    pub blocks: u64,
    /// Out-of-line inode number; `None` for an embedded inode.
    pub ino: Option<u32>,
    /// Last change of the contents, Unix seconds ([`Fs::set_time`]'s
    /// clock when it was made, written or truncated, or what
    /// [`Fs::set_mtime`] set).
    pub mtime: u64,
    /// Permission bits ([`MODE_BITS`](crate::layout::MODE_BITS)): what it was
    /// made with or [`Fs::set_mode`] set.
    pub mode: u16,
}

/// A mounted file system.
pub struct Fs<D: Disk> {
    pub(crate) disk: D,
    pub(crate) owner: u64,
    /// Write-back order the file system adds to XN's: (first, then).
    pub(crate) deps: Vec<(u64, u64)>,
    /// The superblock (the XN root).
    pub(crate) sb: u64,
    /// Names taken out of a directory block and not yet durably gone:
    /// (block, name). The same name written elsewhere waits for them.
    pub(crate) vacated: Vec<(u64, Vec<u8>)>,
    /// Where recently resolved paths' name records lie (`names.rs`).
    pub(crate) names: names::Names,
    /// True while a change to the name space runs
    /// ([`Fs::changing_names`]): a lookup then keeps only its own answer in
    /// the name cache, not its block's other names, which the change may
    /// be moving.
    pub(crate) changing: bool,
    /// The directory and block where a free record was last found: where
    /// the next search in that directory starts (a hint, checked).
    pub(crate) free_hint: Option<(Loc, u64)>,
    /// The clock stamped on what changes ([`Fs::set_time`]), Unix seconds.
    pub(crate) now: u32,
    /// The directory last stamped and the time it got (`touch_dir`).
    pub(crate) touched: Option<(Loc, u32)>,
}

impl<D: Disk> Fs<D> {
    /// Makes a file system on a blank disk (nothing allocated): superblock
    /// root, the first inode table, the root directory; everything durable
    /// when it returns.
    pub fn mkfs(disk: D, owner: u64) -> Result<Fs<D>, FsError> {
        Fs::mkfs_at(disk, owner, SUPER_BLOCK)
    }

    /// The in-memory state of a file system on `disk` whose superblock is
    /// block `sb`, before anything is read or written.
    fn fresh(disk: D, owner: u64, sb: u64) -> Fs<D> {
        Fs {
            disk,
            owner,
            deps: Vec::new(),
            sb,
            vacated: Vec::new(),
            names: names::Names::new(),
            changing: false,
            free_hint: None,
            now: 0,
            touched: None,
        }
    }

    /// [`mkfs`](Fs::mkfs) with the superblock at block `sb` (another file
    /// system may own block 0); the file system never allocates block 0.
    pub fn mkfs_at(mut disk: D, owner: u64, sb: u64) -> Result<Fs<D>, FsError> {
        if disk.nblocks() < 8 || disk.nblocks() > u64::from(u32::MAX) || sb >= disk.nblocks() {
            return Err(FsError::InvalidArg);
        }
        disk.add_root(sb, T_SUPER, &superblock(owner, disk.nblocks()))?;
        let mut fs = Fs::fresh(disk, owner, sb);
        let (loc, _) = fs.new_inode(K_XDIR, DIR_MODE)?;
        if loc != fs.inode_loc(ROOT_INO)? {
            return Err(FsError::Corrupt("root inode is not inode 0"));
        }
        fs.add_dir_block(loc)?;
        fs.sync()?;
        Ok(fs)
    }

    /// Mounts a disk XN has recovered: checks the superblock, repairs what
    /// a crash may leave (link counts, orphaned inodes) and writes the
    /// repairs back.
    pub fn mount(disk: D, owner: u64) -> Result<(Fs<D>, Repairs), FsError> {
        Fs::mount_at(disk, owner, SUPER_BLOCK)
    }

    /// [`mount`](Fs::mount) with the superblock at block `sb`.
    pub fn mount_at(disk: D, owner: u64, sb: u64) -> Result<(Fs<D>, Repairs), FsError> {
        if disk.nblocks() < 8 || disk.nblocks() > u64::from(u32::MAX) {
            return Err(FsError::Corrupt("disk size"));
        }
        let mut fs = Fs::fresh(disk, owner, sb);
        let sb = fs.get(fs.sb)?;
        superblock_format(&sb).map_err(FsError::Corrupt)?;
        if itab(&sb, 0) == 0 {
            return Err(FsError::Corrupt("no superblock"));
        }
        let repairs = fs.renaming(|fs| fs.repair())?;
        fs.sync()?;
        Ok((fs, repairs))
    }

    /// Sets the clock that creating, writing and truncating stamp on a
    /// file (Unix seconds; past 2106 it stays there). The file system has
    /// no clock of its own: its user says what time it is.
    pub fn set_time(&mut self, unix_secs: u64) {
        self.now = u32::try_from(unix_secs).unwrap_or(u32::MAX);
    }

    /// Sets the modification time of what `path` names (`utimensat`,
    /// `touch`), Unix seconds (clamped as [`set_time`](Fs::set_time)'s).
    pub fn set_mtime(&mut self, path: &str, unix_secs: u64) -> Result<(), FsError> {
        let inode = match self.resolve(path)? {
            Some(f) => f.inode,
            None => self.inode_loc(ROOT_INO)?,
        };
        let mut r = self.rec(inode)?;
        r.mtime = u32::try_from(unix_secs).unwrap_or(u32::MAX);
        // A name added later this second stamps it again.
        self.touched = None;
        self.put_rec(inode, &r)
    }

    /// Sets the permission bits of what `path` names (`chmod`), kept as far
    /// as [`MODE_BITS`](crate::layout::MODE_BITS) goes.
    pub fn set_mode(&mut self, path: &str, mode: u16) -> Result<(), FsError> {
        let inode = match self.resolve(path)? {
            Some(f) => f.inode,
            None => self.inode_loc(ROOT_INO)?,
        };
        let r = self.rec(inode)?;
        self.put_rec(inode, &Record { mode: mode & crate::layout::MODE_BITS, ..r })
    }

    /// The disk.
    pub fn disk(&self) -> &D {
        &self.disk
    }

    /// The disk, to tell it how the file system is used (e.g. which
    /// changes may wait on it).
    pub fn disk_mut(&mut self) -> &mut D {
        &mut self.disk
    }

    /// Unmounts (after [`sync`](Fs::sync) if the caller wants durability).
    pub fn into_disk(self) -> D {
        self.disk
    }

    // ---- blocks and records ----

    pub(crate) fn get(&mut self, block: u64) -> Result<Block, FsError> {
        let mut b = [0; BLOCK_SIZE];
        self.disk.read(block, &mut b)?;
        Ok(b)
    }

    pub(crate) fn rec(&mut self, at: Loc) -> Result<Record, FsError> {
        Ok(self.disk.view(at.block, |b| record(b, at.rec))?)
    }

    /// Rewrites a record without changing what its block owns.
    pub(crate) fn put_rec(&mut self, at: Loc, r: &Record) -> Result<(), FsError> {
        self.disk.edit(at.block, |b| set_record(b, at.rec, r))?;
        Ok(())
    }

    /// The inode-table location of out-of-line inode `ino`.
    pub(crate) fn inode_loc(&mut self, ino: u32) -> Result<Loc, FsError> {
        let (t, rec) = ino_split(ino);
        if t >= ITABS {
            return Err(FsError::Corrupt("inode number past the tables"));
        }
        let block = self.disk.view(self.sb, |b| itab(b, t))?;
        if block == 0 {
            return Err(FsError::Corrupt("inode in a missing table"));
        }
        Ok(Loc { block, rec })
    }

    /// The directory blocks of the directory inode at `dir`.
    pub(crate) fn dir_blocks(&mut self, dir: Loc) -> Result<Vec<u64>, FsError> {
        let r = self.rec(dir)?;
        if r.kind != K_XDIR {
            return Err(FsError::NotDir);
        }
        Ok(blocks_of(&r))
    }

    /// Looks `name` up in the directory inode at `dir`.
    pub(crate) fn lookup(&mut self, dir: Loc, name: &[u8]) -> Result<Option<Found>, FsError> {
        for block in self.dir_blocks(dir)? {
            let hit = self.disk.view(block, |b| {
                (0..RECORDS).find_map(|i| {
                    let kind = kind_at(b, i);
                    (is_name(kind) && name_at(b, i) == name).then(|| (i, record(b, i)))
                })
            })?;
            if let Some((i, r)) = hit {
                return Ok(Some(self.found(Loc { block, rec: i }, r)?));
            }
        }
        Ok(None)
    }

    /// The inode behind the name record `r` at `at`.
    pub(crate) fn found(&mut self, at: Loc, r: Record) -> Result<Found, FsError> {
        if r.kind == K_LINK {
            let inode = self.inode_loc(r.ino)?;
            let rec = self.rec(inode)?;
            if rec.kind != K_XFILE && rec.kind != K_XDIR {
                return Err(FsError::Corrupt("name of a free inode"));
            }
            Ok(Found { at, inode, rec })
        } else {
            Ok(Found { at, inode: at, rec: r })
        }
    }

    /// The directory inode of `path`'s parent and its last component.
    pub(crate) fn parent<'p>(&mut self, path: &'p str) -> Result<(Loc, &'p [u8]), FsError> {
        let (up, last) = split_last(path)?.ok_or(FsError::InvalidPath)?;
        Ok((self.dir_of(up)?, last.as_bytes()))
    }

    /// The inode `path` names (`None` for the root, which has no name).
    /// A path resolved before is looked for where its name was (the name
    /// cache, `names.rs`): one block instead of a scan per component.
    pub(crate) fn resolve(&mut self, path: &str) -> Result<Option<Found>, FsError> {
        let Some((up, last)) = split_last(path)? else {
            return Ok(None);
        };
        if let Some(at) = self.names.get(path) {
            let name = last.as_bytes();
            let hit = self.disk.view(at.block, |b| {
                let kind = kind_at(b, at.rec);
                (is_name(kind) && name_at(b, at.rec) == name).then(|| record(b, at.rec))
            })?;
            if let Some(r) = hit {
                return self.found(at, r).map(Some);
            }
            self.names.stale(path);
        }
        let dir = self.dir_of(up)?;
        let f = self.lookup(dir, last.as_bytes())?.ok_or(FsError::NotFound)?;
        if !self.changing {
            // Its neighbours are likely next (a directory read in order).
            self.remember_block(up, f.at.block)?;
        }
        self.names.put(path, f.at);
        Ok(Some(f))
    }

    /// Keeps the place of every name in directory block `block` of the
    /// directory `up` (resolved in full just before) in the name cache:
    /// what resolving each of those paths would have kept, for the price
    /// of the one view. A name that is not UTF-8 is left out.
    pub(crate) fn remember_block(&mut self, up: &str, block: u64) -> Result<(), FsError> {
        let Fs { disk, names, .. } = self;
        let mut path = String::from(if up == "/" { "" } else { up });
        path.push('/');
        let base = path.len();
        disk.view(block, |b| {
            for rec in 0..RECORDS {
                let kind = kind_at(b, rec);
                if !is_name(kind) {
                    continue;
                }
                if let Ok(name) = core::str::from_utf8(name_at(b, rec)) {
                    path.truncate(base);
                    path.push_str(name);
                    names.put(&path, Loc { block, rec });
                }
            }
        })?;
        Ok(())
    }

    /// Runs `change`, a change to the name space, with the name cache
    /// emptied before and after it.
    pub(crate) fn renaming<R>(&mut self, change: impl FnOnce(&mut Self) -> R) -> R {
        self.names.clear();
        let r = self.changing_names(change);
        self.names.clear();
        r
    }

    /// Runs `change`, a change to the name space, with `changing`
    /// set: lookups inside it keep only their own answers in the cache.
    pub(crate) fn changing_names<R>(&mut self, change: impl FnOnce(&mut Self) -> R) -> R {
        let outer = core::mem::replace(&mut self.changing, true);
        let r = change(self);
        self.changing = outer;
        r
    }

    /// `stat`.
    pub fn stat(&mut self, path: &str) -> Result<Stat, FsError> {
        let (rec, ino) = match self.resolve(path)? {
            None => {
                let root = self.inode_loc(ROOT_INO)?;
                (self.rec(root)?, Some(ROOT_INO))
            }
            Some(f) => {
                let ino = (f.at != f.inode).then(|| self.rec(f.at).map(|r| r.ino)).transpose()?;
                (f.rec, ino)
            }
        };
        Ok(Stat::of(&rec, ino))
    }

    /// The names in directory `path`, with their kinds, in disk order.
    pub fn readdir(&mut self, path: &str) -> Result<Vec<(String, Kind)>, FsError> {
        let dir = self.dir_of(path)?;
        let mut out = Vec::new();
        for block in self.dir_blocks(dir)? {
            let b = self.get(block)?;
            for i in 0..RECORDS {
                let r = record(&b, i);
                if is_name(r.kind) {
                    let f = self.found(Loc { block, rec: i }, r)?;
                    let kind = Kind::of(&f.rec);
                    out.push((String::from_utf8_lossy(r.name()).into_owned(), kind));
                }
            }
        }
        Ok(out)
    }

    /// The inode location of directory `path`.
    pub(crate) fn dir_of(&mut self, path: &str) -> Result<Loc, FsError> {
        if let Some(at) = self.names.dir(path) {
            return Ok(at);
        }
        let at = match self.resolve(path)? {
            None => self.inode_loc(ROOT_INO)?,
            Some(f) if f.rec.is_dir() => f.inode,
            Some(f) if f.rec.kind == K_SYMLINK => return Err(FsError::Symlink),
            Some(_) => return Err(FsError::NotDir),
        };
        // Kept during a change too: a change that moves or removes a
        // directory runs in `renaming`, which empties the cache after it.
        self.names.put_dir(path, at);
        Ok(at)
    }
}

/// The blocks of a record's extents, in order.
pub(crate) fn blocks_of(r: &Record) -> Vec<u64> {
    // Room for all of them at once (a flattened iterator's length is not
    // known ahead, so collecting it grew the vector step by step).
    let mut out = Vec::with_capacity(r.blocks() as usize);
    for e in &r.ext {
        out.extend(u64::from(e.start)..u64::from(e.start) + u64::from(e.len));
    }
    out
}

/// An absolute path's parent (`/` for a name in the root) and last
/// component, `None` for the root itself; the last component checked as
/// [`split`] checks each (the parent is checked as it is resolved).
pub(crate) fn split_last(path: &str) -> Result<Option<(&str, &str)>, FsError> {
    if path == "/" {
        return Ok(None);
    }
    let cut = path.rfind('/').ok_or(FsError::InvalidPath)?;
    let (up, last) = (&path[..cut], &path[cut + 1..]);
    if up == "/" {
        return Err(FsError::InvalidPath);
    }
    if last.is_empty() || last == "." || last == ".." {
        return Err(FsError::InvalidPath);
    }
    if last.len() > NAME_MAX {
        return Err(FsError::NameTooLong);
    }
    Ok(Some((if up.is_empty() { "/" } else { up }, last)))
}

/// An absolute path's components: no empty, `.` or `..` component, none
/// longer than [`NAME_MAX`].
pub(crate) fn split(path: &str) -> Result<Vec<&str>, FsError> {
    let rest = path.strip_prefix('/').ok_or(FsError::InvalidPath)?;
    let mut v = Vec::new();
    for c in rest.split('/') {
        if c.is_empty() && rest.is_empty() {
            break;
        }
        if c.is_empty() || c == "." || c == ".." {
            return Err(FsError::InvalidPath);
        }
        if c.len() > NAME_MAX {
            return Err(FsError::NameTooLong);
        }
        v.push(c);
    }
    Ok(v)
}
