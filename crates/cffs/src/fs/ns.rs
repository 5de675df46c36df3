//! The name space: create, mkdir, unlink (files and empty directories),
//! link, rename.
//!
//! Ordering the file system adds to XN's (every change stays in core until
//! [`sync`](Fs::sync); [`Fs::order`] records "this block reaches the disk
//! first"):
//! * a name for an out-of-line inode reaches the disk after the inode (and
//!   after the superblock, which lists a new inode table);
//! * an out-of-line inode is freed on disk only after its last name is gone;
//! * a file moved to another directory block (rename, or the first `link`
//!   moving C-FFS's embedded inode out of line) is copied — XN moves a block
//!   between owners only by free and allocate — and its old record goes
//!   only after the new one is durable: a crash leaves the old name, the
//!   new one, or both, never neither.

use alloc::vec::Vec;

use oxok_abi::xn::BLOCK_SIZE;

use super::{Found, Fs, Loc, blocks_of, split_last};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

impl<D: Disk> Fs<D> {
    /// Creates an empty file.
    ///
    /// The name cache keeps every other path (a new name record moves no
    /// other) and gains this one; in a directory whose names it holds all
    /// of, the name is known absent without a scan (`names.rs`). A create
    /// that fails empties the cache, unless the name was found to exist
    /// (before anything changed).
    pub fn create(&mut self, path: &str) -> Result<(), FsError> {
        self.create_mode(path, FILE_MODE)
    }

    /// [`create`](Fs::create), the file's permission bits `mode` (kept as
    /// far as [`MODE_BITS`] goes).
    pub fn create_mode(&mut self, path: &str, mode: u16) -> Result<(), FsError> {
        let absent = self.known_absent(path)?;
        self.making_name(path, |fs| fs.create_now(path, absent, K_FILE, mode))
    }

    /// Runs `make`, which puts a new name `path` in its directory (and
    /// says where), as a change to the name space that moves no other
    /// name: the cache gains `path`; a failure empties it, unless the name
    /// was found to exist (before anything changed: the cache holds).
    fn making_name(&mut self, path: &str, make: impl FnOnce(&mut Self) -> Result<Loc, FsError>) -> Result<(), FsError> {
        match self.changing_names(make) {
            Ok(at) => {
                self.names.put(path, at);
                Ok(())
            }
            Err(FsError::Exists) => Err(FsError::Exists),
            Err(e) => {
                self.names.clear();
                Err(e)
            }
        }
    }

    /// Whether `path`'s name is known not to be in its directory: the name
    /// cache holds every name of the directory and not this one. A
    /// directory not yet known complete has its names put in the cache
    /// first (one view per block, once), and is complete if nothing was
    /// lost meanwhile. False when unsure (the create then looks).
    fn known_absent(&mut self, path: &str) -> Result<bool, FsError> {
        let Some((up, _)) = split_last(path)? else { return Ok(false) };
        if !self.names.is_complete(up) {
            let Ok(dir) = self.dir_of(up) else { return Ok(false) };
            let since = self.names.losses();
            for block in self.dir_blocks(dir)? {
                self.remember_block(up, block)?;
            }
            self.names.set_complete(up, since);
        }
        Ok(self.names.is_complete(up) && self.names.get(path).is_none())
    }

    /// Makes a symbolic link at `path` holding `target` as it is (1 to
    /// [`SYMLINK_MAX`] bytes, not looked at: what it leads to is its
    /// follower's business).
    pub fn symlink(&mut self, target: &[u8], path: &str) -> Result<(), FsError> {
        if target.is_empty() || target.len() > SYMLINK_MAX {
            return Err(FsError::InvalidArg);
        }
        self.making_name(path, |fs| fs.symlink_now(target, path))
    }

    fn symlink_now(&mut self, target: &[u8], path: &str) -> Result<Loc, FsError> {
        let at = self.create_now(path, false, K_SYMLINK, SYMLINK_MODE)?;
        let rec = self.rec(at)?;
        self.write_found(Found { at, inode: at, rec }, 0, target)?;
        Ok(at)
    }

    /// The target of the symbolic link `path` (`InvalidArg` for anything
    /// else).
    pub fn readlink(&mut self, path: &str) -> Result<Vec<u8>, FsError> {
        let f = self.resolve(path)?.ok_or(FsError::InvalidArg)?;
        if f.rec.kind != K_SYMLINK {
            return Err(FsError::InvalidArg);
        }
        let mut out = alloc::vec![0; f.rec.size as usize];
        let n = out.len();
        self.read_found(&f, 0, n, |at, b| out[at..at + b.len()].copy_from_slice(b))?;
        Ok(out)
    }

    /// Creates an empty directory.
    pub fn mkdir(&mut self, path: &str) -> Result<(), FsError> {
        self.mkdir_mode(path, DIR_MODE)
    }

    /// [`mkdir`](Fs::mkdir), the directory's permission bits `mode`.
    pub fn mkdir_mode(&mut self, path: &str, mode: u16) -> Result<(), FsError> {
        self.renaming(|fs| fs.mkdir_now(path, mode))
    }

    /// Removes a file's name, or an empty directory.
    pub fn unlink(&mut self, path: &str) -> Result<(), FsError> {
        self.renaming(|fs| fs.unlink_now(path, true))
    }

    /// Removes a file's name; `IsDir` for a directory (`unlink(2)`). One
    /// resolution of `path`, where asking its kind first would make two.
    ///
    /// The name cache loses only `path`: removing a file's name frees its
    /// name record and the file's data (or drops a count on its
    /// out-of-line inode), never a directory block or another name's
    /// record, so every other path the cache holds still names what it
    /// named. (Every other change to the name space empties the cache.)
    pub fn unlink_file(&mut self, path: &str) -> Result<(), FsError> {
        let r = self.changing_names(|fs| fs.unlink_now(path, false));
        match r {
            Ok(()) => self.names.forget(path),
            // The name may still be there: no directory is complete.
            Err(_) => self.names.clear(),
        }
        r
    }

    /// Gives the file `old` the additional name `new`. The first extra name
    /// moves the embedded inode out of line (C-FFS), copying its data.
    pub fn link(&mut self, old: &str, new: &str) -> Result<(), FsError> {
        self.renaming(|fs| fs.link_now(old, new))
    }

    /// Renames `old` to `new`, replacing a file (or an empty directory, for
    /// a directory) at `new`.
    pub fn rename(&mut self, old: &str, new: &str) -> Result<(), FsError> {
        self.renaming(|fs| {
            let (from, _) = fs.parent(old)?;
            fs.rename_now(old, new)?;
            let (to, _) = fs.parent(new)?;
            fs.touch_dir(from)?;
            fs.touch_dir(to)
        })
    }

    /// Stamps the directory inode at `dir` with the clock: a name added
    /// to it or taken from it changes its time. At most one change of its
    /// inode's block a second (the same directory in the same second
    /// is not even read again).
    pub(crate) fn touch_dir(&mut self, dir: Loc) -> Result<(), FsError> {
        if self.touched == Some((dir, self.now)) {
            return Ok(());
        }
        let r = self.rec(dir)?;
        if r.mtime != self.now {
            self.put_rec(dir, &Record { mtime: self.now, ..r })?;
        }
        self.touched = Some((dir, self.now));
        Ok(())
    }

    /// The parent directory of `path` and its last name, which must not
    /// exist yet (the root always does: `mkdir -p` makes `/` first).
    fn new_name<'p>(&mut self, path: &'p str) -> Result<(Loc, &'p [u8]), FsError> {
        if path == "/" {
            return Err(FsError::Exists);
        }
        let (dir, name) = self.parent(path)?;
        if self.lookup(dir, name)?.is_some() {
            return Err(FsError::Exists);
        }
        Ok((dir, name))
    }

    /// Notes that `name` left `block` (in core).
    pub(crate) fn vacate(&mut self, block: u64, name: &[u8]) -> Result<(), FsError> {
        self.vacated.try_reserve(1).map_err(|_| FsError::NoMemory)?;
        self.vacated.push((block, Vec::from(name)));
        Ok(())
    }

    /// Orders a new `name` in `block` after every removal of the same name
    /// from another block not yet durable, so no crash shows it twice.
    fn claim(&mut self, block: u64, name: &[u8]) -> Result<(), FsError> {
        let from: Vec<u64> = self.vacated.iter().filter(|(b, n)| *b != block && n == name).map(|(b, _)| *b).collect();
        from.into_iter().try_for_each(|b| self.order(b, block))
    }

    /// [`Fs::create`]: where the new name record went, an empty record of
    /// `kind` (a file or a symbolic link). `absent`: the name is known not
    /// to be there (no look for it).
    fn create_now(&mut self, path: &str, absent: bool, kind: u8, mode: u16) -> Result<Loc, FsError> {
        let (dir, name) = if absent { self.parent(path)? } else { self.new_name(path)? };
        let at = self.free_record(dir, None)?;
        self.claim(at.block, name)?;
        let mut r = Record { kind, mtime: self.now, mode: mode & MODE_BITS, ..Record::default() };
        r.set_name(name);
        self.put_rec(at, &r)?;
        self.touch_dir(dir)?;
        Ok(at)
    }

    /// [`Fs::mkdir`], run with the name cache emptied around it.
    fn mkdir_now(&mut self, path: &str, mode: u16) -> Result<(), FsError> {
        let (dir, name) = self.new_name(path)?;
        let (inode, ino) = self.new_inode(K_XDIR, mode & MODE_BITS)?;
        self.add_dir_block(inode)?;
        self.add_link(dir, name, inode, ino, None).map(|_| ())
    }

    /// Writes a name record for the out-of-line inode `ino` (at `inode`)
    /// into directory `dir`, after the inode (ordering).
    fn add_link(&mut self, dir: Loc, name: &[u8], inode: Loc, ino: u32, near: Option<u64>) -> Result<Loc, FsError> {
        let at = self.free_record(dir, near)?;
        self.order_inode(inode, at.block)?;
        self.claim(at.block, name)?;
        let mut r = Record { kind: K_LINK, ino, ..Record::default() };
        r.set_name(name);
        self.put_rec(at, &r)?;
        self.touch_dir(dir)?;
        Ok(at)
    }

    /// Orders a name of the out-of-line inode at `inode` after the inode
    /// and after the superblock (which lists a new inode table).
    fn order_inode(&mut self, inode: Loc, name: u64) -> Result<(), FsError> {
        self.order(inode.block, name)?;
        self.order(self.sb, name)
    }

    /// [`Fs::unlink`] (or, without `dirs`, [`Fs::unlink_file`]), run with
    /// the name cache emptied around it.
    fn unlink_now(&mut self, path: &str, dirs: bool) -> Result<(), FsError> {
        let f = self.resolve(path)?.ok_or(FsError::InvalidPath)?;
        if f.rec.is_dir() && !dirs {
            return Err(FsError::IsDir);
        }
        if f.rec.is_dir() && !self.is_empty_dir(f.inode)? {
            return Err(FsError::NotEmpty);
        }
        let (dir, _) = self.parent(path)?;
        self.drop_name(f)?;
        self.touch_dir(dir)
    }

    fn is_empty_dir(&mut self, dir: Loc) -> Result<bool, FsError> {
        for block in self.dir_blocks(dir)? {
            let b = self.get(block)?;
            if (0..RECORDS).any(|i| kind_at(&b, i) != K_FREE) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Removes the name `f`; frees the inode with its last name.
    pub(crate) fn drop_name(&mut self, f: Found) -> Result<(), FsError> {
        let name = self.rec(f.at)?;
        self.vacate(f.at.block, name.name())?;
        if f.at == f.inode {
            return self.clear_rec(f.at);
        }
        if self.drop_link(f)? == 0 {
            return self.free_inode(f.inode);
        }
        Ok(())
    }

    /// Clears the link `f.at` to the out-of-line inode `f.inode` (after
    /// the inode, in write-back order) and takes one from its link count;
    /// returns the count left (at 0 the caller frees or keeps the inode).
    pub(crate) fn drop_link(&mut self, f: Found) -> Result<u16, FsError> {
        self.put_rec(f.at, &Record::default())?;
        self.order(f.at.block, f.inode.block)?;
        let mut r = self.rec(f.inode)?;
        r.nlink = r.nlink.saturating_sub(1);
        if r.nlink > 0 {
            self.put_rec(f.inode, &r)?;
        }
        Ok(r.nlink)
    }

    /// Frees an out-of-line inode and its blocks (a directory's blocks
    /// must own nothing).
    pub(crate) fn free_inode(&mut self, inode: Loc) -> Result<(), FsError> {
        self.clear_rec(inode)
    }

    /// [`Fs::link`], run with the name cache emptied around it.
    fn link_now(&mut self, old: &str, new: &str) -> Result<(), FsError> {
        let f = self.named_file(old)?;
        let (dir, name) = self.new_name(new)?;
        let (inode, ino) = self.out_of_line(&f)?;
        let mut r = self.rec(inode)?;
        r.nlink = r.nlink.checked_add(1).ok_or(FsError::TooManyLinks)?;
        self.put_rec(inode, &r)?;
        self.add_link(dir, name, inode, ino, None).map(|_| ())
    }

    /// The file `path` names, for a change to its names (a second one, or
    /// its name taken while it stays): a directory or the root is
    /// `IsDir`, a symbolic link `Symlink` (embedded, it has no inode of
    /// its own to move out of line).
    pub(crate) fn named_file(&mut self, path: &str) -> Result<Found, FsError> {
        let f = self.resolve(path)?.ok_or(FsError::IsDir)?;
        if f.rec.is_dir() {
            return Err(FsError::IsDir);
        }
        if f.rec.kind == K_SYMLINK {
            return Err(FsError::Symlink);
        }
        Ok(f)
    }

    /// The inode of the file `f` and its number, moved out of its
    /// directory into the inode table first if it is embedded there (its
    /// data copied; its name becomes a link to it), as a second name or
    /// an open file that loses its name needs.
    pub(crate) fn out_of_line(&mut self, f: &Found) -> Result<(Loc, u32), FsError> {
        if f.at != f.inode {
            return Ok((f.inode, self.rec(f.at)?.ino));
        }
        let (inode, ino) = self.new_inode(K_XFILE, f.rec.mode)?;
        self.copy_into(f, inode, inode.block)?;
        let mut old_name = Record { kind: K_LINK, ino, ..Record::default() };
        old_name.set_name(f.rec.name());
        self.order_inode(inode, f.at.block)?;
        self.shrink(f.at, 0)?;
        self.put_rec(f.at, &old_name)?;
        Ok((inode, ino))
    }

    /// Copies the data and size of file `f` into the (empty) record at
    /// `to`, allocating near `hint`.
    fn copy_into(&mut self, f: &Found, to: Loc, hint: u64) -> Result<(), FsError> {
        let src = blocks_of(&f.rec);
        let r = self.grow(to, src.len() as u64, 0, hint)?;
        let dst = blocks_of(&r);
        let mut buf = [0; BLOCK_SIZE];
        for (s, d) in src.iter().zip(dst.iter()) {
            self.disk.read(*s, &mut buf)?;
            self.disk.write_data(*d, &buf)?;
        }
        let mut r = self.rec(to)?;
        r.size = f.rec.size;
        r.mtime = f.rec.mtime;
        r.mode = f.rec.mode;
        self.put_rec(to, &r)
    }

    /// [`Fs::rename`], run with the name cache emptied around it.
    fn rename_now(&mut self, old: &str, new: &str) -> Result<(), FsError> {
        let f = self.resolve(old)?.ok_or(FsError::InvalidPath)?;
        let (dir, name) = self.parent(new)?;
        if f.rec.is_dir() {
            let (o, n) = (super::split(old)?, super::split(new)?);
            if n.len() > o.len() && n[..o.len()] == o[..] {
                return Err(FsError::InvalidPath);
            }
        }
        let mut replaced = None;
        if let Some(t) = self.lookup(dir, name)? {
            if t.inode == f.inode {
                return Ok(());
            }
            replaced = Some(t.at.block);
            match (f.rec.is_dir(), t.rec.is_dir()) {
                (true, false) => return Err(FsError::NotDir),
                (false, true) => return Err(FsError::IsDir),
                (true, true) if !self.is_empty_dir(t.inode)? => return Err(FsError::NotEmpty),
                _ => {}
            }
            self.drop_name(t)?;
        }
        let f = self.resolve(old)?.ok_or(FsError::InvalidPath)?;
        let same_block = self.dir_blocks(dir)?.contains(&f.at.block);
        if same_block {
            // Rename in place; a replaced name in another block goes first,
            // so no crash shows the name twice.
            if let Some(b) = replaced {
                self.order(b, f.at.block)?;
            }
            self.claim(f.at.block, name)?;
            let mut r = self.rec(f.at)?;
            self.vacate(f.at.block, r.name())?;
            r.set_name(name);
            return self.put_rec(f.at, &r);
        }
        // The replaced name's record is reused: removal and new name are one
        // block write.
        let at = self.free_record(dir, replaced)?;
        self.claim(at.block, name)?;
        let mut r = self.rec(f.at)?;
        let old_name = r;
        r.set_name(name);
        if f.at == f.inode {
            let mut head = r;
            head.ext = [Ext::default(); EXTENTS];
            head.size = 0;
            self.put_rec(at, &head)?;
            self.copy_into(&f, at, at.block + 1)?;
        } else {
            // The inode must be on disk before this new name is.
            self.order_inode(f.inode, at.block)?;
            self.put_rec(at, &r)?;
        }
        self.order(at.block, f.at.block)?;
        self.vacate(f.at.block, old_name.name())?;
        if f.at == f.inode {
            return self.clear_rec(f.at);
        }
        self.put_rec(f.at, &Record::default())
    }

    /// Names every record in use in the directory at `dir` (for repair).
    pub(crate) fn names(&mut self, dir: Loc) -> Result<Vec<(Loc, Record)>, FsError> {
        let mut out = Vec::new();
        for block in self.dir_blocks(dir)? {
            let b = self.get(block)?;
            for i in 0..RECORDS {
                let r = record(&b, i);
                if r.kind != K_FREE {
                    out.push((Loc { block, rec: i }, r));
                }
            }
        }
        Ok(out)
    }
}
