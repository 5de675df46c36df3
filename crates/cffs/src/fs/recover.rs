//! What mount repairs after a crash. XN's own recovery has already
//! rebuilt the free map from the superblock; the ordering rules leave only
//! name-level leftovers for the file system: out-of-line inodes no name
//! reaches (created or unlinked around the crash), link counts off by the
//! names written or removed, and a directory named twice (a rename whose
//! old name had not yet gone).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::{Fs, Loc};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

/// What [`Fs::mount`] repaired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repairs {
    /// Inodes freed because no name reached them.
    pub orphans: u64,
    /// Link counts corrected.
    pub nlinks: u64,
    /// Names removed (a second name of a directory, a name of a free inode).
    pub names: u64,
}

impl<D: Disk> Fs<D> {
    /// Counts the names of every out-of-line inode reachable from the root,
    /// dropping names no tree may hold.
    fn count_names(&mut self, rep: &mut Repairs) -> Result<BTreeMap<u32, u16>, FsError> {
        let mut refs = BTreeMap::from([(ROOT_INO, 1u16)]);
        let mut dirs = Vec::from([ROOT_INO]);
        while let Some(d) = dirs.pop() {
            let dir = self.inode_loc(d)?;
            for (at, r) in self.names(dir)? {
                if r.kind != K_LINK {
                    continue;
                }
                let target = self.inode_loc(r.ino).and_then(|l| self.rec(l));
                let ok = match target {
                    Ok(t) if t.kind == K_XFILE => true,
                    Ok(t) if t.kind == K_XDIR => !refs.contains_key(&r.ino),
                    _ => false,
                };
                if !ok {
                    self.put_rec(at, &Record::default())?;
                    rep.names += 1;
                    continue;
                }
                if matches!(target, Ok(t) if t.kind == K_XDIR) {
                    dirs.push(r.ino);
                }
                let n = refs.entry(r.ino).or_insert(0);
                *n = n.saturating_add(1);
            }
        }
        Ok(refs)
    }

    /// Frees inodes no name reaches and fixes link counts.
    pub(crate) fn repair(&mut self) -> Result<Repairs, FsError> {
        let mut rep = Repairs::default();
        let refs = self.count_names(&mut rep)?;
        let sb = self.get(self.sb)?;
        for t in 0..ITABS {
            let block = itab(&sb, t);
            if block == 0 {
                continue;
            }
            for rec in 0..RECORDS {
                let at = Loc { block, rec };
                let r = self.rec(at)?;
                if r.kind != K_XFILE && r.kind != K_XDIR {
                    continue;
                }
                match refs.get(&ino_join(t, rec)).copied().unwrap_or(0) {
                    0 => {
                        if r.kind == K_XDIR {
                            self.empty_orphan_dir(at)?;
                        }
                        self.free_inode(at)?;
                        rep.orphans += 1;
                    }
                    n if n != r.nlink => {
                        self.put_rec(at, &Record { nlink: n, ..r })?;
                        rep.nlinks += 1;
                    }
                    _ => {}
                }
            }
        }
        Ok(rep)
    }

    /// Drops every name in an unreachable directory (their inodes, reached
    /// from nowhere else, are orphans too).
    fn empty_orphan_dir(&mut self, dir: Loc) -> Result<(), FsError> {
        for (at, r) in self.names(dir)? {
            if r.kind == K_FILE || r.kind == K_SYMLINK {
                self.clear_rec(at)?;
            } else {
                self.put_rec(at, &Record::default())?;
            }
        }
        Ok(())
    }
}
