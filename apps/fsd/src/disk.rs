//! [`DiskFiles`]: the C-FFS library file system (`crates/cffs`) on the
//! disk, through XN's calls (`oxok_libos::xn::XnDisk`), as the server's
//! [`Files`]. C-FFS names files by path; an open file is a path this table
//! keeps (and moves along when a rename moves it or a directory above it).
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
use oxok_cffs::layout::SUPER_BLOCK;
use oxok_cffs::{Fs, FsError as DiskError, Kind as DiskKind};
use oxok_libos::abi::xn::{BLOCK_SIZE, refuse};
use oxok_libos::println;
use oxok_libos::xn::XnDisk;
use oxok_ramfs::{FsError, Kind, OpenFlags};

use crate::files::{Entry, Files, Meta};
use oxok_gather::Gatherer;
use oxok_slab::Slab;

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

/// The file system's error as the server's.
fn err(e: DiskError) -> FsError {
    match e {
        DiskError::NotFound => FsError::NotFound,
        DiskError::Exists => FsError::Exists,
        DiskError::NotDir => FsError::NotADirectory,
        DiskError::IsDir => FsError::IsADirectory,
        DiskError::NotEmpty => FsError::NotEmpty,
        DiskError::NameTooLong => FsError::TooLong,
        DiskError::InvalidPath => FsError::InvalidName,
        DiskError::NoSpace | DiskError::TooFragmented => FsError::NoSpace,
        DiskError::InvalidArg => FsError::FileTooBig,
        other => {
            println!("dfsd: {other:?}");
            FsError::Invalid
        }
    }
}

fn kind(k: DiskKind) -> Kind {
    match k {
        DiskKind::File => Kind::File,
        DiskKind::Dir => Kind::Dir,
    }
}

/// `path` (absolute, bytes) as C-FFS takes it: UTF-8, no empty, `.` or
/// `..` components.
fn normal(path: &[u8]) -> Result<String, FsError> {
    let s = core::str::from_utf8(path).map_err(|_| FsError::InvalidName)?;
    if !s.starts_with('/') {
        return Err(FsError::InvalidName);
    }
    // The libOS's own lexical resolution (a path it already normalised,
    // as nearly every client sends, is taken as it is).
    Ok(oxok_libos::fs::normalize(s))
}

/// What `stat` reports of `path`, whose C-FFS status is `st`.
fn meta_of(path: &str, st: &oxok_cffs::Stat) -> Meta {
    let number = st.ino.map_or_else(|| number_of(path), |i| u64::from(i) + 1);
    Meta {
        kind: kind(st.kind),
        size: st.size,
        number,
        nlink: u64::from(st.nlink),
        mtime: st.mtime,
        mode: None,
        allocated: None,
    }
}

/// A stable number for a name whose inode is embedded in its directory.
fn number_of(path: &str) -> u64 {
    let h = path.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    h | (1 << 63)
}

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
    fn fs(&mut self) -> Result<&mut Fs<XnDisk>, FsError> {
        if self.mounted.is_none() && !self.failed {
            self.mounted = mount();
            self.failed = self.mounted.is_none();
            if let Some(fs) = self.mounted.as_mut() {
                fs.set_time(self.now);
            }
        }
        self.mounted.as_mut().ok_or(FsError::Invalid)
    }

    fn path(&self, ino: u64) -> Result<String, FsError> {
        match self.target(ino)? {
            Target::Path(p) => Ok(p),
            Target::Detached(_) => Err(FsError::NotADirectory),
        }
    }

    fn target(&self, ino: u64) -> Result<Target, FsError> {
        let n = self.nodes.get(ino).ok_or(FsError::BadInode)?;
        Ok(match n.detached {
            Some(i) => Target::Detached(i),
            None => Target::Path(n.path.clone()),
        })
    }

    /// Writes `data` at `off` of the open file `ino`.
    fn write_now(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<usize, FsError> {
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.write(&p, off, data),
            Target::Detached(i) => self.fs()?.write_detached(i, off, data),
        }
        .map_err(err)
    }

    /// Takes the name `p` away from what it names and keeps the file for
    /// the nodes open on it, if any are (they reach it by number from
    /// then on); says whether it did.
    fn detach_open(&mut self, p: &str) -> Result<bool, FsError> {
        if !self.nodes.values().any(|n| n.detached.is_none() && n.pins > 0 && n.path == p) {
            return Ok(false);
        }
        let i = self.fs()?.detach(p).map_err(err)?;
        for n in self.nodes.values_mut().filter(|n| n.detached.is_none() && n.path == p) {
            n.detached = Some(i);
        }
        Ok(true)
    }

    fn meta(&mut self, path: &str) -> Result<Meta, FsError> {
        let st = self.fs()?.stat(path).map_err(err)?;
        Ok(meta_of(path, &st))
    }

    /// Writes everything back (C-FFS's ordered write-back and a flush).
    fn sync(&mut self) -> Result<(), FsError> {
        self.fs()?.sync().map_err(err)?;
        self.unwritten = None;
        Ok(())
    }

    /// Notes a change that waits in the cache for the next write-back.
    fn changed(&mut self) {
        self.unwritten.get_or_insert_with(oxok_libos::time::ticks_ms);
    }

    /// Hands the gathered writes to C-FFS: done first by every request
    /// but a write, so each sees them. A failure is kept for the file.
    fn settle(&mut self) {
        let Some(g) = self.gathered.take() else { return };
        let done = self.write_now(g.ino, g.off, &g.data);
        match done {
            Ok(_) => self.changed(),
            Err(e) => self.gathered.fail(g.ino, e),
        }
    }

    /// [`settle`](Self::settle), then the failure kept for `ino`, if any.
    fn settle_for(&mut self, ino: u64) -> Result<(), FsError> {
        self.settle();
        self.gathered.failure(ino).map_or(Ok(()), Err)
    }
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
        let fs = self.fs()?;
        // A file to create is made at once (one look for its name, not a
        // status and then a create); a name that exists is opened as below.
        let created = o.create && !o.directory && {
            match fs.create(&path) {
                Ok(()) => true,
                Err(DiskError::Exists) if o.exclusive => return Err(FsError::Exists),
                Err(DiskError::Exists) => false,
                Err(e) => return Err(err(e)),
            }
        };
        let meta = if created {
            self.changed();
            self.meta(&path)?
        } else {
            let mut st = fs.stat(&path).map_err(err)?;
            match st.kind {
                _ if o.create && o.exclusive => return Err(FsError::Exists),
                DiskKind::Dir if o.write => return Err(FsError::IsADirectory),
                DiskKind::File if o.directory => return Err(FsError::NotADirectory),
                DiskKind::File if o.truncate && st.size > 0 => {
                    fs.truncate(&path, 0).map_err(err)?;
                    st.size = 0;
                    self.changed();
                }
                _ => {}
            }
            meta_of(&path, &st)
        };
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
        self.meta(&p)
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
        self.settle();
        match self.target(ino)? {
            Target::Path(p) => self.fs()?.truncate(&p, len),
            Target::Detached(i) => self.fs()?.truncate_detached(i, len),
        }
        .map_err(err)?;
        self.changed();
        Ok(())
    }

    fn next_entry(&mut self, ino: u64, after: Option<&[u8]>) -> Result<Option<Entry>, FsError> {
        self.settle();
        let dir = self.path(ino)?;
        let mut names = self.fs()?.readdir(&dir).map_err(err)?;
        names.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let Some((name, k)) = names.into_iter().find(|(n, _)| after.is_none_or(|a| n.as_bytes() > a)) else {
            return Ok(None);
        };
        let size = match k {
            DiskKind::File => {
                let child = if dir == "/" { alloc::format!("/{name}") } else { alloc::format!("{dir}/{name}") };
                self.fs()?.stat(&child).map_or(0, |s| s.size)
            }
            DiskKind::Dir => 0,
        };
        Ok(Some(Entry { name: name.into_bytes(), kind: kind(k), size }))
    }

    fn following(&mut self, path: &[u8], max: usize) -> Result<Vec<Entry>, FsError> {
        self.settle();
        let p = normal(path)?;
        let found = self.fs()?.following(&p, max).map_err(err)?;
        Ok(found.into_iter().map(|(name, k, size)| Entry { name: name.into_bytes(), kind: kind(k), size }).collect())
    }

    fn mkdir(&mut self, path: &[u8], _mode: Option<u16>) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        self.fs()?.mkdir(&p).map_err(err)?;
        self.changed();
        Ok(())
    }

    fn unlink(&mut self, path: &[u8]) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        if !self.detach_open(&p)? {
            self.fs()?.unlink_file(&p).map_err(err)?;
        }
        self.changed();
        Ok(())
    }

    fn rmdir(&mut self, path: &[u8]) -> Result<(), FsError> {
        self.settle();
        let p = normal(path)?;
        if p == "/" {
            return Err(FsError::Busy);
        }
        if self.fs()?.stat(&p).map_err(err)?.kind != DiskKind::Dir {
            return Err(FsError::NotADirectory);
        }
        self.fs()?.unlink(&p).map_err(err)?;
        self.changed();
        Ok(())
    }

    fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), FsError> {
        self.settle();
        let (from, to) = (normal(from)?, normal(to)?);
        if from == to {
            return self.fs()?.stat(&from).map(|_| ()).map_err(err);
        }
        // A file open under the name replaced keeps living, nameless
        // (two names of one file are left as they are, as POSIX says).
        let old = self.fs()?.stat(&from).map_err(err)?;
        if let Ok(new) = self.fs()?.stat(&to)
            && old.kind == DiskKind::File
            && new.kind == DiskKind::File
            && (old.ino.is_none() || old.ino != new.ino)
        {
            self.detach_open(&to)?;
        }
        self.fs()?.rename(&from, &to).map_err(err)?;
        // Open files under the old name follow it.
        for n in self.nodes.values_mut().filter(|n| n.detached.is_none()) {
            if n.path == from {
                n.path = to.clone();
            } else if let Some(rest) = n.path.strip_prefix(from.as_str()).filter(|r| r.starts_with('/')) {
                n.path = alloc::format!("{to}{rest}");
            }
        }
        self.changed();
        Ok(())
    }

    /// C-FFS's hard links: the file's inode moves out of its directory
    /// into the inode table, where both names point (open files keep
    /// their paths, which still name it).
    fn link(&mut self, existing: &[u8], new: &[u8]) -> Result<(), FsError> {
        self.settle();
        let (existing, new) = (normal(existing)?, normal(new)?);
        // A directory has one name (Linux: EPERM).
        self.fs()?.link(&existing, &new).map_err(|e| match e {
            DiskError::IsDir => FsError::NotPermitted,
            e => err(e),
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
        let c = self.fs()?.copy_tree(&from, &to).map_err(err)?;
        self.changed();
        Ok([c.files, c.bytes, c.blocks])
    }

    fn set_time(&mut self, now: u64) {
        self.now = now;
        if let Some(fs) = self.mounted.as_mut() {
            fs.set_time(now);
        }
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

    fn usage(&mut self) -> (u64, u64) {
        self.settle();
        let files = self.nodes.len() as u64;
        let used = oxok_libos::xn::header().map_or(0, |h| h.nblocks.saturating_sub(h.free) * 4096);
        (files, used)
    }

    fn finish(&mut self) {
        self.settle();
        if let Some(Err(e)) = self.mounted.as_mut().map(|fs| fs.sync()) {
            println!("dfsd: final sync: {e:?}");
        }
    }
}

/// Mounts the C-FFS file system whose superblock is a catalogued root
/// (XN recovered its free map at boot; mount repairs link counts and
/// orphans), or registers the templates and makes a fresh one with a
/// `/tmp` (where the RAM server's `/tmp` is reached). The owner is the
/// principal init gave this environment (`DISK_PRINCIPAL`), the same in
/// every boot whatever this environment's id.
fn mount() -> Option<Fs<XnDisk>> {
    let Some(me) = oxok_libos::principal::mine() else {
        println!("dfsd: no file system: no principal (init gives the disk file server one)");
        return None;
    };
    let nblocks = oxok_libos::xn::header().map_or(0, |h| h.nblocks);
    let made = match XnDisk::existing() {
        Some(id) => XnDisk::new(id)
            .ok_or(DiskError::Io)
            .and_then(|mut d| {
                // The superblock's acl names its owner: another principal's
                // file system cannot even be read.
                let mut sb = [0u8; BLOCK_SIZE];
                if let Err(r) = oxok_cffs::Disk::read(&mut d, SUPER_BLOCK, &mut sb)
                    && r.code() == refuse::DENIED
                {
                    println!("dfsd: file system {id} belongs to another principal: XN refuses principal {me}");
                }
                Fs::mount(d, me)
            })
            .map(|(fs, r)| {
                (
                    fs,
                    alloc::format!(
                        "mounted file system {id} ({} orphans, {} link counts repaired)",
                        r.orphans,
                        r.nlinks
                    ),
                )
            }),
        None => match XnDisk::register() {
            Ok(id) => XnDisk::new(id).ok_or(DiskError::Io).and_then(|d| Fs::mkfs(d, me)).and_then(|mut fs| {
                fs.mkdir("/tmp")?;
                fs.sync()?;
                // The root is catalogued before anyone relies on it.
                if let Err(e) = oxok_libos::xn::wait_catalog() {
                    println!("dfsd: catalogue: {e}");
                }
                Ok((fs, alloc::format!("made file system {id}")))
            }),
            Err(e) => {
                println!("dfsd: cannot register the templates: {e}");
                return None;
            }
        },
    };
    match made {
        Ok((fs, how)) => {
            let env = oxok_libos::exposed::self_id();
            let window = (fs.disk().window() * BLOCK_SIZE as u64) >> 20;
            println!(
                "dfsd: C-FFS on a disk of {nblocks} blocks: {how}; principal {me}, environment {env}; cache window {window} MiB"
            );
            Some(fs)
        }
        Err(e) => {
            println!("dfsd: no file system: {e:?}");
            None
        }
    }
}
