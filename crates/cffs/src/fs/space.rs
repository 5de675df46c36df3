//! Placement (C-FFS explicit grouping): a directory block starts a free,
//! aligned group of [`GROUP`] blocks when one exists, and the data of the
//! small files it names is allocated first-fit from the block after it, so
//! one directory's small files sit together next to their inodes and one
//! large read brings them all in. Files grow in place when the next block
//! is free (one extent) and otherwise take a new extent, placed at a free
//! run as long as the file already is (or the longest one), so a growing
//! file's extents double rather than fill the small holes one by one.

use oxok_xn::Extent;

use super::{Fs, Loc};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

/// Blocks in a directory's group.
pub const GROUP: u64 = 16;
/// Most blocks a directory grows by at once.
pub const DIR_STEP_MAX: u64 = 64;

impl<D: Disk> Fs<D> {
    /// A free run for `want` blocks (at most [`EXT_MAX`]): the first one at
    /// or after `hint` (wrapping) that is that long, else the longest there
    /// is (the first of equals), so a file on a fragmented disk takes as
    /// few extents as the free space allows — it has only [`EXTENTS`].
    pub(crate) fn find_run(&self, hint: u64, want: u64) -> Result<(u64, u64), FsError> {
        let n = self.disk.nblocks();
        if n < 2 {
            return Err(FsError::NoSpace);
        }
        let want = want.clamp(1, EXT_MAX);
        let hint = hint.clamp(1, n - 1);
        let mut best: Option<(u64, u64)> = None;
        for range in [hint..n, 1..hint] {
            let mut b = range.start;
            while b < range.end {
                b = self.disk.next_free(b, range.end);
                if b >= range.end {
                    break;
                }
                let len = self.free_after(b, want);
                if len == want {
                    return Ok((b, len));
                }
                if best.is_none_or(|(_, l)| len > l) {
                    best = Some((b, len));
                }
                b += len + 1;
            }
        }
        best.ok_or(FsError::NoSpace)
    }

    /// How many blocks from `start` on are free, up to `max`.
    fn free_after(&self, start: u64, max: u64) -> u64 {
        (start..self.disk.nblocks()).take(max as usize).take_while(|&b| self.disk.is_free(b)).count() as u64
    }

    /// A block for a new directory block: the start of a free aligned
    /// group if one exists, else any free block after `hint`.
    fn group_start(&self, hint: u64) -> Result<u64, FsError> {
        let n = self.disk.nblocks();
        let group =
            (GROUP..n.saturating_sub(GROUP)).step_by(GROUP as usize).find(|&g| self.free_after(g, GROUP) == GROUP);
        match group {
            Some(g) => Ok(g),
            None => self.find_run(hint, 1).map(|(s, _)| s),
        }
    }

    /// Grows the record at `at` to `want` blocks of type `ty`, allocating
    /// near `hint`; returns the new record. On failure (disk full, too many
    /// extents) it frees what it took: all or nothing.
    pub(crate) fn grow(&mut self, at: Loc, want: u64, ty: u16, hint: u64) -> Result<Record, FsError> {
        self.grow_sized(at, want, ty, hint, None)
    }

    /// [`grow`](Fs::grow), the record's size becoming `size` (when given)
    /// in the same change as its last extent: a file growing by a write
    /// costs one metadata change, not two. Earlier steps keep the old size,
    /// so every image has at least the blocks its size needs.
    pub(crate) fn grow_sized(
        &mut self,
        at: Loc,
        want: u64,
        ty: u16,
        hint: u64,
        size: Option<u64>,
    ) -> Result<Record, FsError> {
        let had = self.rec(at)?.blocks();
        self.grow_some(at, want, ty, hint, size).or_else(|e| {
            self.shrink(at, had)?;
            Err(e)
        })
    }

    fn grow_some(&mut self, at: Loc, want: u64, ty: u16, hint: u64, size: Option<u64>) -> Result<Record, FsError> {
        let mut r = self.rec(at)?;
        while r.blocks() < want {
            let need = want - r.blocks();
            let last = r.ext.iter().rposition(|e| e.len > 0);
            let ext = match last {
                Some(l) if u64::from(r.ext[l].len) < EXT_MAX && self.disk.is_free(end(&r.ext[l])) => {
                    let e = &mut r.ext[l];
                    let k = self.free_after(end(e), need.min(EXT_MAX - u64::from(e.len)));
                    let x = Extent::new(end(e), k, u32::from(ty));
                    e.len += k as u16;
                    x
                }
                _ => {
                    let slot = last.map_or(0, |l| l + 1);
                    let hint = last.map_or(hint, |l| end(&r.ext[l]));
                    // Placed where the file can double in place (a run as
                    // long as it already is, or the longest there is),
                    // so a file written a block at a time on a fragmented
                    // disk does not spend an extent on every small hole.
                    let room = need.max(r.blocks());
                    let e = r.ext.get_mut(slot).ok_or(FsError::TooFragmented)?;
                    let (start, k) = self.find_run(hint, room)?;
                    let k = k.min(need);
                    *e = Ext { start: start as u32, len: k as u16, ty };
                    Extent::new(start, k, u32::from(ty))
                }
            };
            if let Some(size) = size.filter(|_| r.blocks() >= want) {
                r.size = size;
                r.mtime = self.now;
            }
            let mut b = self.get(at.block)?;
            set_record(&mut b, at.rec, &r);
            self.disk.alloc(at.block, &b, ext)?;
        }
        Ok(r)
    }

    /// Shrinks the record at `at` to its first `keep` blocks, freeing the
    /// rest from the tail; returns the new record.
    pub(crate) fn shrink(&mut self, at: Loc, keep: u64) -> Result<Record, FsError> {
        let mut r = self.rec(at)?;
        while r.blocks() > keep {
            let excess = r.blocks() - keep;
            let l = r.ext.iter().rposition(|e| e.len > 0).ok_or(FsError::Corrupt("blocks without extents"))?;
            let e = &mut r.ext[l];
            let cut = excess.min(u64::from(e.len));
            let x = Extent::new(end(e) - cut, cut, u32::from(e.ty));
            e.len -= cut as u16;
            if e.len == 0 {
                *e = Ext::default();
            }
            let mut b = self.get(at.block)?;
            set_record(&mut b, at.rec, &r);
            self.disk.free(at.block, &b, x)?;
        }
        Ok(r)
    }

    /// Frees every block of the record at `at` and clears it: the extents
    /// after its first from the tail ([`shrink`](Self::shrink)), then the
    /// first in the same change as the cleared record, which XN checks as
    /// the free of that extent (the record's `owns` before and after
    /// differ by exactly it). A small file's removal is one change of its
    /// directory block, not a free and then a change.
    pub(crate) fn clear_rec(&mut self, at: Loc) -> Result<(), FsError> {
        let first = u64::from(self.rec(at)?.ext[0].len);
        let r = self.shrink(at, first)?;
        let mut b = self.get(at.block)?;
        set_record(&mut b, at.rec, &Record::default());
        let e = r.ext[0];
        if e.len == 0 {
            self.disk.modify(at.block, &b)?;
        } else {
            self.disk.free(at.block, &b, Extent::new(u64::from(e.start), u64::from(e.len), u32::from(e.ty)))?;
        }
        Ok(())
    }

    /// A fresh out-of-line inode of `kind` (link count 1), adding an inode
    /// table when all are full.
    pub(crate) fn new_inode(&mut self, kind: u8, mode: u16) -> Result<(Loc, u32), FsError> {
        let mut sb = self.get(self.sb)?;
        for t in 0..ITABS {
            let mut block = itab(&sb, t);
            if block == 0 {
                let (b, _) = self.find_run(1, 1)?;
                set_itab(&mut sb, t, b);
                self.disk.alloc(self.sb, &sb, Extent::new(b, 1, T_ITAB))?;
                self.disk.modify(b, &header(MAGIC_ITAB, self.owner))?;
                block = b;
            }
            let tb = self.get(block)?;
            if let Some(rec) = (0..RECORDS).find(|&i| kind_at(&tb, i) == K_FREE) {
                let at = Loc { block, rec };
                self.put_rec(at, &Record { kind, nlink: 1, mtime: self.now, mode, ..Record::default() })?;
                return Ok((at, ino_join(t, rec)));
            }
        }
        Err(FsError::NoSpace)
    }

    /// Grows the directory inode at `dir` by as many blocks as it has (one
    /// at first, at most [`DIR_STEP_MAX`]), in one run where the disk has
    /// one — so a directory's extents cover 1, 1, 2, 4, … blocks — and
    /// returns the first new block.
    pub(crate) fn add_dir_block(&mut self, dir: Loc) -> Result<u64, FsError> {
        let r = self.rec(dir)?;
        let have = r.blocks();
        let n = have.clamp(1, DIR_STEP_MAX);
        let after = r.ext.iter().rposition(|e| e.len > 0).map(|l| end(&r.ext[l]));
        let hint = match after {
            Some(e) if self.free_after(e, n) == n => e,
            Some(e) => self.find_free_run(e, n).unwrap_or(e),
            None => self.group_start(dir.block)?,
        };
        let mut r = self.grow(dir, have + n, T_DIR as u16, hint)?;
        for i in have..have + n {
            let block = r.block_at(i).ok_or(FsError::Corrupt("directory block missing"))?;
            self.disk.modify(block, &header(MAGIC_DIR, self.owner))?;
        }
        r.size = r.blocks() * BSIZE;
        self.put_rec(dir, &r)?;
        r.block_at(have).ok_or(FsError::Corrupt("directory block missing"))
    }

    /// The first run of `n` free blocks at or after `hint` (wrapping).
    fn find_free_run(&self, hint: u64, n: u64) -> Option<u64> {
        let total = self.disk.nblocks();
        let mut b = hint.max(1);
        let mut scanned = 0;
        while scanned < total {
            if b >= total {
                b = 1;
            }
            let k = self.free_after(b, n);
            if k == n {
                return Some(b);
            }
            b += k + 1;
            scanned += k + 1;
        }
        None
    }

    /// A free record in the directory at `dir`, preferring block `near`,
    /// else looking from the block where the last one was found in this
    /// directory (a directory filling up is not scanned from its first
    /// block at every new name), each block looked at where it lies.
    pub(crate) fn free_record(&mut self, dir: Loc, near: Option<u64>) -> Result<Loc, FsError> {
        let mut blocks = self.dir_blocks(dir)?;
        let start = match self.free_hint {
            Some((d, block)) if d == dir => blocks.iter().position(|&b| b == block).unwrap_or(0),
            _ => 0,
        };
        blocks.rotate_left(start);
        if let Some(i) = near.and_then(|n| blocks.iter().position(|&b| b == n)) {
            blocks.swap(0, i);
        }
        for block in blocks {
            if let Some(rec) = self.disk.view(block, |b| (0..RECORDS).find(|&i| kind_at(b, i) == K_FREE))? {
                self.free_hint = Some((dir, block));
                return Ok(Loc { block, rec });
            }
        }
        let block = self.add_dir_block(dir)?;
        self.free_hint = Some((dir, block));
        Ok(Loc { block, rec: 0 })
    }
}

/// One past an extent's last block.
pub(crate) fn end(e: &Ext) -> u64 {
    u64::from(e.start) + u64::from(e.len)
}
