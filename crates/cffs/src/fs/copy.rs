//! XCP (Xok SOSP '97 §7): copies a tree so that the CPU never touches the
//! data. The source's files and blocks are listed through the file system,
//! the destination's directories and files are made and given all their
//! blocks at once (placed as any file is: next to the directory block that
//! names it, C-FFS grouping), and then, batch by batch in source-block
//! order, the source blocks are read into the cache in one sorted request
//! batch and every destination block is written by XN straight from the
//! frame caching its source block ([`Disk::copy`]). After the last batch
//! one flush makes every copied block durable, so that the sync at the end
//! finds the data its metadata points to durable (XN refuses the metadata
//! until then); a flush per batch cost the device a flush each and bought
//! nothing.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Fs, Kind};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::BSIZE;

/// Source blocks read and copied per batch (bounds the cache frames a copy
/// holds at once: 4 MiB of source frames).
pub const COPY_BATCH: usize = 1024;

/// What a copy did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    /// Regular files copied.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Data blocks written from source frames.
    pub blocks: u64,
}

/// One file of the copy: source path, destination path, size.
struct Item {
    src: String,
    dst: String,
    size: u64,
}

fn join(dir: &str, name: &str) -> String {
    if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") }
}

impl<D: Disk> Fs<D> {
    /// Copies the file or directory tree `src` to the new name `dst`
    /// (directories recursively). `dst` must not exist and may not lie
    /// inside `src`; its parent must. On an error part of the copy may
    /// remain (as with `cp -r`); everything written stays consistent.
    pub fn copy_tree(&mut self, src: &str, dst: &str) -> Result<Copied, FsError> {
        self.renaming(|fs| fs.copy_tree_now(src, dst))
    }

    /// [`Fs::copy_tree`], run with the name cache emptied around it.
    fn copy_tree_now(&mut self, src: &str, dst: &str) -> Result<Copied, FsError> {
        let s = super::split(src)?;
        let d = super::split(dst)?;
        if d.starts_with(&s) {
            return Err(FsError::InvalidArg);
        }
        let kind = self.stat(src)?.kind;
        match self.stat(dst) {
            Ok(_) => return Err(FsError::Exists),
            Err(FsError::NotFound) => {}
            Err(e) => return Err(e),
        }
        let mut files = Vec::new();
        match kind {
            Kind::File => {
                let size = self.stat(src)?.size;
                files.push(Item { src: src.into(), dst: dst.into(), size });
            }
            Kind::Dir => self.list_tree(src, dst, &mut files)?,
            Kind::Symlink => self.copy_link(src, dst)?,
        }
        let mut done = Copied::default();
        let mut pairs: Vec<[u64; 2]> = Vec::new();
        for f in &files {
            self.make_copy_of(f, &mut pairs)?;
            done.files += 1;
            done.bytes += f.size;
            if pairs.len() >= COPY_BATCH {
                done.blocks += self.copy_blocks(&mut pairs)?;
            }
        }
        done.blocks += self.copy_blocks(&mut pairs)?;
        if done.blocks > 0 {
            self.disk.flush()?;
        }
        self.sync()?;
        Ok(done)
    }

    /// Makes the directories under `src` at `dst` and lists their files.
    fn list_tree(&mut self, src: &str, dst: &str, out: &mut Vec<Item>) -> Result<(), FsError> {
        self.mkdir(dst)?;
        let mut dirs = Vec::from([(String::from(src), String::from(dst))]);
        while let Some((s, d)) = dirs.pop() {
            for (name, kind) in self.readdir(&s)? {
                let (sp, dp) = (join(&s, &name), join(&d, &name));
                match kind {
                    Kind::Dir => {
                        self.mkdir(&dp)?;
                        dirs.push((sp, dp));
                    }
                    Kind::File => {
                        let size = self.stat(&sp)?.size;
                        out.push(Item { src: sp, dst: dp, size });
                    }
                    Kind::Symlink => self.copy_link(&sp, &dp)?,
                }
            }
        }
        Ok(())
    }

    /// Makes `dst` a symbolic link with the target of the link `src`
    /// (`cp -r` copies a link as a link).
    fn copy_link(&mut self, src: &str, dst: &str) -> Result<(), FsError> {
        let target = self.readlink(src)?;
        self.symlink(&target, dst)
    }

    /// Creates `f.dst` with all its blocks and size; adds `[destination,
    /// source]` block pairs.
    fn make_copy_of(&mut self, f: &Item, pairs: &mut Vec<[u64; 2]>) -> Result<(), FsError> {
        self.create(&f.dst)?;
        let from = self.file(&f.src)?.rec;
        let n = f.size.div_ceil(BSIZE);
        if n == 0 {
            return Ok(());
        }
        let to = self.file(&f.dst)?;
        // The size goes in the same change as the last extent.
        let r = self.grow_sized(to.inode, n, 0, to.at.block + 1, Some(f.size))?;
        pairs.try_reserve(n as usize).map_err(|_| FsError::NoMemory)?;
        for i in 0..n {
            let s = from.block_at(i).ok_or(FsError::Corrupt("size past the blocks"))?;
            let d = r.block_at(i).ok_or(FsError::Corrupt("block missing after grow"))?;
            pairs.push([d, s]);
        }
        Ok(())
    }

    /// Reads the source blocks of `pairs` into the cache in one sorted
    /// batch, writes each destination from its source's frame and lets go
    /// of the source frames the batch brought in (a source cached before
    /// the copy stays cached); empties `pairs`. Returns the blocks written.
    fn copy_blocks(&mut self, pairs: &mut Vec<[u64; 2]>) -> Result<u64, FsError> {
        pairs.sort_unstable_by_key(|&[d, s]| (s, d));
        let mut src: Vec<u64> = pairs.iter().map(|&[_, s]| s).collect();
        src.dedup();
        let mut fetched = Vec::new();
        fetched.try_reserve(src.len()).map_err(|_| FsError::NoMemory)?;
        fetched.extend(src.iter().copied().filter(|&b| !self.disk.is_cached(b)));
        self.disk.prefetch(&src)?;
        self.disk.copy_all(pairs)?;
        let n = pairs.len() as u64;
        pairs.clear();
        self.disk.uncache(&fetched)?;
        Ok(n)
    }
}
