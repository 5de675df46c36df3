//! Opening ahead (`flags::AHEAD`, `proto::ahead`): with a small file's
//! prefetching open, the regular files that follow it in its directory,
//! opened for reading under handles of the caller's own and laid out with
//! their bytes in the caller's buffer after the opened file's. A reader of
//! a directory's files then asks once for every `AHEAD_MAX + 1` of them
//! (`AHEAD_WIDE_MAX + 1` with `flags::AHEAD_WIDE`).
//!
//! Each file is opened by its path exactly as the caller's own open of it
//! would be, so it is checked as that open is; the caller holds every
//! handle as if it had opened the file itself, and closes the ones it does
//! not use. A few handles of the caller's quota are always left over.

use alloc::vec::Vec;
use oxok_libos::fs::proto::ahead::{self, HEAD, Head, NAME_MAX};
use oxok_libos::fs::proto::{AHEAD_MAX, AHEAD_WIDE_MAX, KIND_FILE};
use oxok_ramfs::{Kind, OpenFlags};

use crate::files::split_parent;
use crate::server::Server;
use crate::table::{Desc, MAX_HANDLES};

/// Handles of the caller's quota an open ahead never takes.
const SPARE_HANDLES: usize = 16;

/// Entries of the directory looked at, at most, past the opened file:
/// two more than the files that may go.
const LOOK_MORE: usize = 2;

impl Server {
    /// Opens ahead of `path`, whose own `first` bytes the caller's buffer
    /// holds from its start: how many files went along (at most
    /// `AHEAD_MAX`, `AHEAD_WIDE_MAX` if `wide`). Stops at the first that
    /// cannot go (the buffer full, the caller's quota, an error); what
    /// went stays.
    pub(crate) fn open_ahead(&mut self, caller: u64, path: &[u8], first: usize, wide: bool) -> u64 {
        let max = if wide { AHEAD_WIDE_MAX } else { AHEAD_MAX };
        let Some((parent, _)) = split_parent(path) else { return 0 };
        let Ok(entries) = self.fs.following(path, max + LOOK_MORE) else { return 0 };
        let mut at = ahead::start(first);
        let mut full: Vec<u8> = Vec::new();
        let mut went = 0;
        for e in entries {
            if went == max as u64 || self.table.handles(caller) + SPARE_HANDLES >= MAX_HANDLES {
                break;
            }
            let name = e.name;
            if e.kind != Kind::File || name.is_empty() || name.len() > NAME_MAX || name.contains(&b'/') {
                continue;
            }
            full.clear();
            if full.try_reserve(parent.len() + 1 + name.len()).is_err() {
                break;
            }
            full.extend_from_slice(parent);
            if parent != b"/" {
                full.push(b'/');
            }
            full.extend_from_slice(&name);
            match self.open_one(caller, &full, &name, at) {
                Some(next) => {
                    at = next;
                    went += 1;
                }
                None => break,
            }
        }
        went
    }

    /// Opens the file `full` (named `name` in its directory) for `caller`
    /// and lays out its record at `at` in the caller's buffer: where the
    /// next record starts, or `None` (nothing of it stays).
    fn open_one(&mut self, caller: u64, full: &[u8], name: &[u8], at: usize) -> Option<usize> {
        // A plain open for reading, as the caller's own would be.
        let (ino, meta) = self.fs.open(full, OpenFlags::default()).ok()?;
        let len = usize::try_from(meta.size).ok()?;
        let room = self.buffers.len_of(caller)?;
        let end = at.checked_add(Head::record_len(name.len(), len))?;
        if meta.kind != Kind::File || end > room {
            return None;
        }
        self.fs.pin(ino).ok()?;
        let Ok(handle) = self.table.open(caller, Desc::new(ino, true, false, false)) else {
            let _ = self.fs.unpin(ino);
            return None;
        };
        let head = Head { handle, kind: KIND_FILE, number: meta.number, len: len as u64, name_len: name.len() as u64 };
        let bytes_at = at + HEAD + ahead::pad(name.len());
        if self.read_into_buffer(caller, ino, len, bytes_at) != Some(len) {
            if let Ok(Some(ino)) = self.table.close(caller, handle) {
                let _ = self.fs.unpin(ino);
            }
            return None;
        }
        self.buffers.put(caller, at, &head.bytes());
        self.buffers.put(caller, at + HEAD, name);
        Some(end)
    }
}
