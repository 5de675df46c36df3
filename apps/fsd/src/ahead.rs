//! Opening ahead (`flags::AHEAD`, `proto::ahead`): with a small file's
//! prefetching open, the regular files that follow it in its directory,
//! opened for reading under handles of the caller's own and laid out with
//! their bytes in the caller's buffer after the opened file's. A reader of
//! a directory's files then asks once for every `AHEAD_MAX + 1` of them
//! (`AHEAD_WIDE_MAX + 1` with `flags::AHEAD_WIDE`).
//!
//! Each file is opened as the caller's own open of its path would be
//! (`Files::open_along`), so it is checked as that open is; the caller holds every
//! handle as if it had opened the file itself, and closes the ones it does
//! not use. A few handles of the caller's quota are always left over.

use oxok_libos::fs::buffer::ServedBuffer;
use oxok_libos::fs::proto::ahead::{self, HEAD, Head, NAME_MAX};
use oxok_libos::fs::proto::{AHEAD_MAX, AHEAD_WIDE_MAX, KIND_FILE};

use crate::files::{Along, Meta};
use crate::server::Server;
use crate::table::{Desc, MAX_HANDLES, Table};

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
        let granted = self.granted_files();
        let Server { fs, table, buffers, .. } = self;
        let Some((buffer, scratch)) = buffers.parts(caller) else { return 0 };
        let mut batch = Batch { caller, table, buffer, at: ahead::start(first), bytes_at: 0, granted: &granted };
        fs.open_along(path, max + LOOK_MORE, max, scratch, &mut batch) as u64
    }
}

/// One reply's files, laid out in the caller's buffer as they are opened.
struct Batch<'a> {
    caller: u64,
    table: &'a mut Table,
    buffer: &'a ServedBuffer,
    /// Where the next record starts.
    at: usize,
    /// Where the bytes of the file being read go.
    bytes_at: usize,
    /// The files whose first write may wait behind (`Server::granted_files`).
    granted: &'a [u64],
}

impl Along for Batch<'_> {
    fn carries(&self, name: &[u8]) -> bool {
        !name.is_empty() && name.len() <= NAME_MAX && !name.contains(&b'/')
    }

    fn room(&mut self, name: &[u8], len: usize) -> bool {
        // A few handles of the caller's quota always stay over.
        let end = self.at.checked_add(Head::record_len(name.len(), len));
        self.bytes_at = self.at + HEAD + ahead::pad(name.len());
        self.table.handles(self.caller) + SPARE_HANDLES < MAX_HANDLES && end.is_some_and(|e| e <= self.buffer.len())
    }

    fn bytes(&mut self, at: usize, bytes: &[u8]) {
        self.buffer.copy_in(self.bytes_at + at, bytes);
    }

    fn opened(&mut self, ino: u64, meta: &Meta, name: &[u8]) -> bool {
        // Not a file whose first write may still wait behind.
        if self.granted.contains(&meta.number) {
            return false;
        }
        // A plain open for reading, as the caller's own would be.
        let Ok(handle) = self.table.open(self.caller, Desc::new(ino, true, false, false)) else { return false };
        let len = meta.size;
        let head = Head { handle, kind: KIND_FILE, number: meta.number, len, name_len: name.len() as u64 };
        self.buffer.copy_in(self.at, &head.bytes());
        self.buffer.copy_in(self.at + HEAD, name);
        self.at += Head::record_len(name.len(), len as usize);
        true
    }
}
