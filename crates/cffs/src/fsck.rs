//! `fsck`: checks a file system through the disk interface, decoding the
//! format itself (independently of the UDFs), and compares what it finds
//! with XN's free map.
//!
//! Errors: a block reached twice; a reachable block XN counts free or a
//! free one it counts allocated; a reachable block still tainted; a bad
//! magic, kind, name or extent type; a file whose blocks do not match its
//! size; a name of a free inode; a name repeated in a directory; a
//! directory named twice. Repairable (what mount fixes): inodes no name
//! reaches, wrong link counts.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use oxok_abi::xn::BLOCK_SIZE;

use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

/// What fsck found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fsck {
    /// Blocks reachable from the superblock.
    pub blocks: u64,
    /// Files (names of files count once per inode).
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Inodes no name reaches (repairable).
    pub orphans: u64,
    /// Link counts that differ from the names found (repairable).
    pub bad_nlinks: u64,
    /// Everything else, one line each.
    pub errors: Vec<String>,
}

impl Fsck {
    /// No errors and nothing to repair.
    pub fn clean(&self) -> bool {
        self.errors.is_empty() && self.orphans == 0 && self.bad_nlinks == 0
    }
}

struct Walk<'d, D: Disk> {
    disk: &'d mut D,
    seen: BTreeSet<u64>,
    out: Fsck,
}

impl<D: Disk> Walk<'_, D> {
    fn err(&mut self, s: String) {
        if self.out.errors.len() < 100 {
            self.out.errors.push(s);
        }
    }

    fn read(&mut self, b: u64) -> Option<Block> {
        let mut x = [0; BLOCK_SIZE];
        match self.disk.read(b, &mut x) {
            Ok(()) => Some(x),
            Err(e) => {
                self.err(format!("block {b}: unreadable: {e}"));
                None
            }
        }
    }

    fn claim(&mut self, b: u64, by: &str) {
        if b >= self.disk.nblocks() {
            self.err(format!("{by}: block {b} past the disk"));
        } else if !self.seen.insert(b) {
            self.err(format!("{by}: block {b} owned twice"));
        } else if self.disk.is_tainted(b) {
            self.err(format!("{by}: block {b} reachable but tainted"));
        }
    }

    /// Checks a record's extents (type `ty`, packed from slot 0, within the
    /// disk) and claims their blocks.
    fn extents(&mut self, r: &Record, ty: u16, by: &str) {
        let used = r.ext.iter().take_while(|e| e.len > 0).count();
        for (j, e) in r.ext.iter().enumerate() {
            if j >= used {
                if *e != Ext::default() {
                    self.err(format!("{by}: extent {j} after the last is not empty"));
                }
                continue;
            }
            if e.ty != ty {
                self.err(format!("{by}: extent {j} has type {}", e.ty));
            }
            for b in u64::from(e.start)..u64::from(e.start) + u64::from(e.len) {
                self.claim(b, by);
            }
        }
    }

    fn file_size(&mut self, r: &Record, by: &str) {
        if r.blocks() != r.size.div_ceil(BSIZE) {
            self.err(format!("{by}: size {} but {} blocks", r.size, r.blocks()));
        }
    }
}

/// Checks the file system on `disk` (superblock at block 0), assumed
/// the only one there: every block it does not reach must be free.
pub fn fsck<D: Disk>(disk: &mut D) -> Result<Fsck, FsError> {
    check(disk, SUPER_BLOCK, true)
}

/// Checks the file system whose superblock is block `root`, on a disk
/// other file systems may share (blocks it does not reach are not
/// checked).
pub fn fsck_at<D: Disk>(disk: &mut D, root: u64) -> Result<Fsck, FsError> {
    check(disk, root, false)
}

fn check<D: Disk>(disk: &mut D, root: u64, whole: bool) -> Result<Fsck, FsError> {
    let mut w = Walk { disk, seen: BTreeSet::new(), out: Fsck::default() };
    w.claim(root, "superblock");
    let sb = w.read(root).ok_or(FsError::Corrupt("superblock unreadable"))?;
    superblock_format(&sb).map_err(FsError::Corrupt)?;
    // Inode tables: every out-of-line inode, its kind and its blocks.
    let mut inodes: BTreeMap<u32, Record> = BTreeMap::new();
    for t in 0..ITABS {
        let block = itab(&sb, t);
        if block == 0 {
            continue;
        }
        w.claim(block, "superblock");
        let Some(tb) = w.read(block) else { continue };
        if magic(&tb) != MAGIC_ITAB {
            w.err(format!("inode table {block}: bad magic"));
            continue;
        }
        for i in 0..RECORDS {
            let r = record(&tb, i);
            let by = format!("inode {}", ino_join(t, i));
            match r.kind {
                K_FREE => w.extents(&r, 0, &by),
                K_XFILE => {
                    w.extents(&r, 0, &by);
                    w.file_size(&r, &by);
                    inodes.insert(ino_join(t, i), r);
                }
                K_XDIR => {
                    w.extents(&r, T_DIR as u16, &by);
                    if r.size != r.blocks() * BSIZE || r.blocks() == 0 {
                        w.err(format!("{by}: directory size {} for {} blocks", r.size, r.blocks()));
                    }
                    inodes.insert(ino_join(t, i), r);
                }
                k => w.err(format!("{by}: kind {k} in an inode table")),
            }
            if r.kind == K_FREE && r.blocks() != 0 {
                w.err(format!("{by}: free but owns blocks"));
            }
        }
    }
    // Directories: every name, from every directory inode (reachable or not,
    // so orphans' blocks are accounted for too).
    let mut refs: BTreeMap<u32, u16> = BTreeMap::new();
    for (&ino, r) in inodes.iter().filter(|(_, r)| r.kind == K_XDIR) {
        w.out.dirs += 1;
        let mut names = BTreeSet::new();
        for block in crate::fs::blocks_of(r) {
            let Some(db) = w.read(block) else { continue };
            if magic(&db) != MAGIC_DIR {
                w.err(format!("directory block {block}: bad magic"));
                continue;
            }
            for i in 0..RECORDS {
                let e = record(&db, i);
                let by = format!("directory {ino} block {block} record {i}");
                if e.kind != K_FREE && (e.name_len == 0 || usize::from(e.name_len) > NAME_MAX) {
                    w.err(format!("{by}: bad name length"));
                } else if e.kind != K_FREE && !names.insert(Vec::from(e.name())) {
                    w.err(format!("{by}: name repeated"));
                }
                match e.kind {
                    K_FREE => w.extents(&e, 0, &by),
                    K_FILE | K_SYMLINK => {
                        w.extents(&e, 0, &by);
                        w.file_size(&e, &by);
                        // 0 bytes: a link a crash caught between its name and
                        // its target (it leads nowhere).
                        if e.kind == K_SYMLINK && e.size > SYMLINK_MAX as u64 {
                            w.err(format!("{by}: a symbolic link of {} bytes", e.size));
                        }
                        w.out.files += 1;
                    }
                    K_LINK => match inodes.get(&e.ino) {
                        Some(t) => {
                            let n = refs.entry(e.ino).or_insert(0);
                            *n = n.saturating_add(1);
                            if t.kind == K_XDIR && *n > 1 {
                                w.err(format!("{by}: directory {} named twice", e.ino));
                            }
                        }
                        None => w.err(format!("{by}: names free inode {}", e.ino)),
                    },
                    k => w.err(format!("{by}: kind {k} in a directory")),
                }
            }
        }
    }
    refs.insert(ROOT_INO, 1);
    if inodes.get(&ROOT_INO).is_none_or(|r| r.kind != K_XDIR) {
        w.err(String::from("inode 0 is not the root directory"));
    }
    for (ino, r) in &inodes {
        let n = refs.get(ino).copied().unwrap_or(0);
        if n == 0 {
            w.out.orphans += 1;
        } else if n != r.nlink {
            w.out.bad_nlinks += 1;
        }
        if r.kind == K_XFILE {
            w.out.files += 1;
        }
    }
    // The free map is the complement of what is reachable.
    for b in 0..w.disk.nblocks() {
        let reached = w.seen.contains(&b);
        if w.disk.is_free(b) == reached && (reached || whole) {
            let s = if reached { "reachable but free" } else { "allocated but unreachable" };
            w.err(format!("block {b}: {s} in XN's free map"));
        }
    }
    w.out.blocks = w.seen.len() as u64;
    Ok(w.out)
}
