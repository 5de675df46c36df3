//! File contents: `read`, `write` (growing the file, holes read as zeros),
//! `truncate`, and [`Cursor`] for seek offsets. Bytes past a file's size
//! in its last block are kept zero, so growing never exposes old data.

use oxok_abi::xn::BLOCK_SIZE;

use alloc::vec::Vec;

use super::space::GROUP;
use super::{Found, Fs, Loc, blocks_of};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

/// Largest file: [`EXTENTS`] full extents.
pub const MAX_FILE: u64 = EXTENTS as u64 * EXT_MAX * BSIZE;

/// Blocks read ahead of a read that finds its first block not cached:
/// the rest of the read and this many after it come in one sorted batch
/// (as many requests in flight as the disk takes) instead of one request,
/// and one wait, per block.
pub const READ_AHEAD: u64 = 128;

impl<D: Disk> Fs<D> {
    /// The file `path` names (not a directory).
    pub(crate) fn file(&mut self, path: &str) -> Result<Found, FsError> {
        match self.resolve(path)? {
            Some(f) => regular(&f.rec).map(|()| f),
            None => Err(FsError::IsDir),
        }
    }

    /// Reads from byte `off` of `path` into `buf`; returns the bytes read
    /// (0 at or past the end).
    pub fn read(&mut self, path: &str, off: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let want = buf.len();
        self.read_with(path, off, want, |at, bytes| buf[at..at + bytes.len()].copy_from_slice(bytes))
    }

    /// Reads up to `want` bytes from byte `off` of `path`, handing them to
    /// `sink` straight from the cached blocks, a block's piece at a time,
    /// each with its offset in the read (so a caller with somewhere else to
    /// put them needs no copy in between); returns the bytes read (0 at or
    /// past the end).
    pub fn read_with(
        &mut self,
        path: &str,
        off: u64,
        want: usize,
        sink: impl FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        let f = self.file(path)?;
        self.read_found(&f, off, want, sink)
    }

    /// [`read_with`](Fs::read_with) of the file `f`.
    pub(crate) fn read_found(
        &mut self,
        f: &Found,
        off: u64,
        want: usize,
        mut sink: impl FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        let r = &f.rec;
        let n = r.size.saturating_sub(off).min(want as u64) as usize;
        if n > 0 {
            let first = off / BSIZE;
            if r.block_at(first).is_some_and(|b| !self.disk.is_cached(b)) {
                // The first read of a small file brings in its directory
                // block's other small files too; once its data is cached,
                // so most likely are theirs, and the look is skipped.
                if f.at == f.inode {
                    self.prefetch_group(f.at.block)?;
                }
                let end = ((off + n as u64).div_ceil(BSIZE) + READ_AHEAD).min(r.blocks());
                let mut blocks: Vec<u64> = (first..end).filter_map(|i| r.block_at(i)).collect();
                blocks.sort_unstable();
                self.disk.prefetch(&blocks)?;
            }
        }
        let mut done = 0;
        while done < n {
            let pos = off + done as u64;
            let block = r.block_at(pos / BSIZE).ok_or(FsError::Corrupt("size past the blocks"))?;
            let at = (pos % BSIZE) as usize;
            let k = (BLOCK_SIZE - at).min(n - done);
            self.disk.view(block, |b| sink(done, &b[at..at + k]))?;
            done += k;
        }
        Ok(n)
    }

    /// Brings in the data of every small file the directory block `dir`
    /// embeds (at most [`GROUP`] blocks each), sorted: one batch.
    fn prefetch_group(&mut self, dir: u64) -> Result<(), FsError> {
        let mut blocks: Vec<u64> = self.disk.view(dir, |b| {
            (0..RECORDS)
                .filter(|&i| kind_at(b, i) == K_FILE)
                .map(|i| record(b, i))
                .filter(|r| r.blocks() <= GROUP)
                .flat_map(|r| blocks_of(&r))
                .collect()
        })?;
        blocks.sort_unstable();
        self.disk.prefetch(&blocks)?;
        Ok(())
    }

    /// Writes `data` at byte `off` of `path`, growing it as needed.
    pub fn write(&mut self, path: &str, off: u64, data: &[u8]) -> Result<usize, FsError> {
        let f = self.file(path)?;
        self.write_found(f, off, data)
    }

    /// [`write`](Fs::write) to the file `f`.
    pub(crate) fn write_found(&mut self, f: Found, off: u64, data: &[u8]) -> Result<usize, FsError> {
        let end = off.checked_add(data.len() as u64).filter(|&e| e <= MAX_FILE).ok_or(FsError::InvalidArg)?;
        if data.is_empty() {
            return Ok(0);
        }
        let mut r = f.rec;
        // Blocks from here on are new with this write: they read as zeros.
        let fresh = r.blocks();
        if end.div_ceil(BSIZE) > fresh {
            // The new size goes with the new blocks (one change).
            let hint = r.block_at(0).unwrap_or(f.at.block + 1);
            r = self.grow_sized(f.inode, end.div_ceil(BSIZE), 0, hint, Some(end.max(r.size)))?;
        }
        let mut done = 0;
        while done < data.len() {
            let pos = off + done as u64;
            let block = r.block_at(pos / BSIZE).ok_or(FsError::Corrupt("block missing after grow"))?;
            let at = (pos % BSIZE) as usize;
            let k = (BLOCK_SIZE - at).min(data.len() - done);
            // A whole block goes as it is, without reading what it held.
            let piece = &data[done..done + k];
            match <&Block>::try_from(piece) {
                Ok(whole) => self.disk.write_data(block, whole)?,
                Err(_) if pos / BSIZE >= fresh => self.disk.write_fresh(block, at, piece)?,
                Err(_) => {
                    let mut b = self.get(block)?;
                    b[at..at + k].copy_from_slice(piece);
                    self.disk.write_data(block, &b)?;
                }
            }
            done += k;
        }
        // The new size and time in one change; a write inside the file in
        // the second of the last needs none.
        if end > r.size || r.mtime != self.now {
            r.size = r.size.max(end);
            r.mtime = self.now;
            self.put_rec(f.inode, &r)?;
        }
        Ok(data.len())
    }

    /// Sets the size of `path` to `len`: frees whole blocks past it and
    /// zeroes the rest of the last one, or grows it with zeros.
    pub fn truncate(&mut self, path: &str, len: u64) -> Result<(), FsError> {
        let f = self.file(path)?;
        if len > MAX_FILE {
            return Err(FsError::InvalidArg);
        }
        self.set_len(f.inode, f.at.block, len)
    }

    pub(crate) fn set_len(&mut self, inode: Loc, near: u64, len: u64) -> Result<(), FsError> {
        let mut r = self.rec(inode)?;
        let keep = len.div_ceil(BSIZE);
        if len < r.size {
            r = self.shrink(inode, keep)?;
            if !len.is_multiple_of(BSIZE) {
                let block = r.block_at(len / BSIZE).ok_or(FsError::Corrupt("last block missing"))?;
                let mut b = self.get(block)?;
                b[(len % BSIZE) as usize..].fill(0);
                self.disk.write_data(block, &b)?;
            }
        } else if keep > r.blocks() {
            let hint = r.block_at(0).unwrap_or(near + 1);
            r = self.grow(inode, keep, 0, hint)?;
        }
        r.size = len;
        r.mtime = self.now;
        self.put_rec(inode, &r)
    }
}

/// Where a seek is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    /// From the start.
    Set(u64),
    /// From the current offset.
    Cur(i64),
    /// From the end.
    End(i64),
}

/// An open file's offset: reads and writes advance it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The path it was opened by.
    pub path: alloc::string::String,
    /// The offset.
    pub pos: u64,
}

impl Cursor {
    /// An offset of 0 into `path`.
    pub fn new(path: &str) -> Cursor {
        Cursor { path: path.into(), pos: 0 }
    }

    /// Moves the offset; a result below 0 is refused.
    pub fn seek<D: Disk>(&mut self, fs: &mut Fs<D>, w: Whence) -> Result<u64, FsError> {
        let base = match w {
            Whence::Set(x) => Some(x),
            Whence::Cur(d) => self.pos.checked_add_signed(d),
            Whence::End(d) => fs.stat(&self.path)?.size.checked_add_signed(d),
        };
        self.pos = base.ok_or(FsError::InvalidArg)?;
        Ok(self.pos)
    }

    /// Reads at the offset and advances it.
    pub fn read<D: Disk>(&mut self, fs: &mut Fs<D>, buf: &mut [u8]) -> Result<usize, FsError> {
        let n = fs.read(&self.path, self.pos, buf)?;
        self.pos += n as u64;
        Ok(n)
    }

    /// Writes at the offset and advances it.
    pub fn write<D: Disk>(&mut self, fs: &mut Fs<D>, data: &[u8]) -> Result<usize, FsError> {
        let n = fs.write(&self.path, self.pos, data)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// `Ok` for a regular file's record: a symbolic link is `Symlink`, a
/// directory `IsDir`.
pub(crate) fn regular(r: &Record) -> Result<(), FsError> {
    match r.kind {
        K_SYMLINK => Err(FsError::Symlink),
        _ if r.is_dir() => Err(FsError::IsDir),
        _ => Ok(()),
    }
}
