//! The entries that follow a name in its directory, in the directory's own
//! order: what a server opening a directory's small files along with one
//! of them (`dfsd`'s open ahead) needs, each found once — its name, what
//! it is, and its bytes read from where the look found its record.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Found, Fs, Kind, Loc, Stat, split_last};
use crate::FsError;
use crate::disk::Disk;
use crate::layout::*;

/// An entry [`Fs::following_entries`] found, as it was when looked at: it
/// holds until the file system next changes (read it within the request
/// that found it).
pub struct Following {
    /// The name's bytes (`name_len` of them), as the name record holds them.
    name: [u8; NAME_MAX],
    name_len: u8,
    /// The out-of-line inode's number, for a name that leads to one.
    ino: Option<u32>,
    found: Found,
}

impl Following {
    /// The name's bytes.
    pub fn name_bytes(&self) -> &[u8] {
        &self.name[..usize::from(self.name_len).min(NAME_MAX)]
    }

    /// The name, if it is UTF-8 (a path made with it names this entry).
    pub fn name(&self) -> Option<&str> {
        core::str::from_utf8(self.name_bytes()).ok()
    }

    /// File, directory or symbolic link.
    pub fn kind(&self) -> Kind {
        Kind::of(&self.found.rec)
    }

    /// What `stat` of its path reports.
    pub fn stat(&self) -> Stat {
        Stat::of(&self.found.rec, self.ino)
    }
}

impl<D: Disk> Fs<D> {
    /// Up to `max` entries that follow `path`'s name in its directory, in
    /// the directory's own order (its blocks' and records', the order
    /// `readdir` gives): name, kind and a file's size. Looks at the name's
    /// block and as many after it as `max` records would fill, one more
    /// (a block holds [`RECORDS`]).
    pub fn following(&mut self, path: &str, max: usize) -> Result<Vec<(String, Kind, u64)>, FsError> {
        let entries = self.following_entries(path, max)?;
        let named = |e: &Following| String::from_utf8_lossy(e.name_bytes()).into_owned();
        Ok(entries.iter().map(|e| (named(e), e.kind(), e.found.rec.size)).collect())
    }

    /// [`following`](Fs::following), each entry with what its name leads
    /// to, for [`read_following`](Fs::read_following).
    pub fn following_entries(&mut self, path: &str, max: usize) -> Result<Vec<Following>, FsError> {
        let (up, _) = split_last(path)?.ok_or(FsError::InvalidPath)?;
        let Some(me) = self.resolve(path)? else { return Ok(Vec::new()) };
        let dir = self.dir_of(up)?;
        let blocks = self.dir_blocks(dir)?;
        let mut out = Vec::new();
        // Room for them all at once (each entry is some 200 bytes: growing
        // by doubling would copy them along).
        // The name's block and as many after it as `max` records fill.
        let looked = max.div_ceil(RECORDS) + 1;
        out.try_reserve(max.min(looked * RECORDS)).map_err(|_| FsError::NoSpace)?;
        let Some(first) = blocks.iter().position(|&b| b == me.at.block) else { return Ok(out) };
        let mut from = me.at.rec + 1;
        for &block in blocks.iter().skip(first).take(looked) {
            // The block's named records, each made an entry where it lies;
            // a name of an out-of-line inode is followed to it after.
            let start = out.len();
            self.disk.view(block, |b| {
                for i in from..RECORDS {
                    if out.len() == max {
                        break;
                    }
                    if !is_name(kind_at(b, i)) || out.try_reserve(1).is_err() {
                        continue;
                    }
                    let r = record(b, i);
                    let ino = (r.kind == K_LINK).then_some(r.ino);
                    let at = Loc { block, rec: i };
                    let (name, name_len) = (r.name, r.name_len);
                    out.push(Following { name, name_len, ino, found: Found { at, inode: at, rec: r } });
                }
            })?;
            for e in out[start..].iter_mut().filter(|e| e.ino.is_some()) {
                e.found = self.found(e.found.at, e.found.rec)?;
            }
            if out.len() == max {
                break;
            }
            from = 0;
        }
        Ok(out)
    }

    /// Reads up to `want` bytes from byte `off` of the file `e` names, as
    /// [`read_with`](Fs::read_with) of its path would (`e` found since the
    /// last change): a directory is `IsDir`, a symbolic link `Symlink`.
    pub fn read_following(
        &mut self,
        e: &Following,
        off: u64,
        want: usize,
        sink: impl FnMut(usize, &[u8]),
    ) -> Result<usize, FsError> {
        super::file::regular(&e.found.rec)?;
        self.read_found(&e.found, off, want, sink)
    }
}
