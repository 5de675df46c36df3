//! The requests on open files: open, read, write, seek, status, directory
//! entries and handing a handle to a child. Each checks the caller's handle
//! in its own table and the access the file was opened with.

use oxok_libos::fs::proto::{self, INLINE, KIND_FILE, NAME_CHUNK, Status, WRITE_MAX, behind, flags};
use oxok_libos::{exposed, pct::Msg};
use oxok_ramfs::OpenFlags;

use crate::files::Meta;

use crate::server::{Server, alive, kind_code, status};
use crate::table::{Desc, Pending};

type Reply = Result<usize, Status>;

/// The largest position a seek may reach (a signed 64-bit offset, as
/// `lseek`'s `off_t`).
const MAX_POSITION: i128 = i64::MAX as i128;

impl Server {
    /// Opens `path` with the `OPEN` flag `bits`: the handle, the kind, the
    /// inode number and, for a reader that asked (`flags::PREFETCH`), the
    /// file's bytes in its buffer if they fit (`proto`: words 4 and 5),
    /// with `flags::AHEAD` the files that follow ([`open_ahead`](Server::open_ahead):
    /// words 6 and 7).
    pub(crate) fn open(&mut self, caller: u64, path: &[u8], bits: u64, out: &mut Msg) -> Reply {
        if bits & !(flags::ALL | flags::MODE_FIELD) != 0 {
            return Err(Status::Invalid);
        }
        if !self.table.has_room(caller, true) {
            self.sweep();
            if !self.table.has_room(caller, true) {
                return Err(Status::NoSpace);
            }
        }
        let has = |f: u64| bits & f != 0;
        let write = has(flags::WRITE) || has(flags::APPEND);
        let read = has(flags::READ) || !write;
        let o = OpenFlags {
            create: has(flags::CREATE),
            exclusive: has(flags::EXCLUSIVE),
            truncate: has(flags::TRUNCATE),
            directory: has(flags::DIRECTORY),
            write,
            nofollow: has(flags::NOFOLLOW),
            mode: proto::mode_of(bits),
        };
        let (ino, meta) = self.fs.open(path, o).map_err(status)?;
        let kind = kind_code(meta.kind);
        self.fs.pin(ino).map_err(status)?;
        match self.table.open(caller, Desc::new(ino, read, write, has(flags::APPEND))) {
            Ok(handle) => {
                out[1] = handle;
                out[2] = kind;
                out[3] = meta.number;
                // A first write that may wait behind, for a writer that
                // asked and has a buffer to leave it in.
                if has(flags::BEHIND)
                    && kind == KIND_FILE
                    && self.buffers.parts(caller).is_some_and(|(b, _)| b.has_behind())
                    && self.table.grant(caller, handle)
                {
                    out[4] = behind::GRANTED;
                }
                // A small file read along, for a reader that asked (not
                // while a write may wait behind for it).
                if has(flags::PREFETCH)
                    && !write
                    && !has(flags::TRUNCATE)
                    && kind == KIND_FILE
                    && !self.granted_files().contains(&meta.number)
                    && let Some(generation) = self.generation.current()
                    && let Some(n) = self.prefetch(caller, ino, meta.size)
                {
                    out[4] = n;
                    out[5] = generation;
                    // And the files that follow, for a reader that asked.
                    if has(flags::AHEAD)
                        && let Some(names) = self.generation.names()
                        && let went @ 1.. = self.open_ahead(caller, path, n as usize, has(flags::AHEAD_WIDE))
                    {
                        out[6] = went;
                        out[7] = names;
                    }
                }
                Ok(0)
            }
            Err(e) => {
                let _ = self.fs.unpin(ino);
                Err(e)
            }
        }
    }

    /// Reads up to `want` bytes at the handle's position into the reply.
    pub(crate) fn read(&mut self, caller: u64, handle: u64, want: usize, out: &mut Msg) -> Reply {
        let d = self.table.get(caller, handle)?;
        if !d.read {
            return Err(Status::BadHandle);
        }
        let mut buf = [0u8; INLINE];
        let want = want.min(INLINE);
        let n = self.fs.read(d.ino, d.offset, &mut buf[..want]).map_err(status)?;
        d.offset = d.offset.saturating_add(n as u64);
        proto::put_bytes(&mut out[1..], &buf[..n]);
        Ok(n)
    }

    /// Writes the request's `len` bytes at the handle's position (at the
    /// end for an append handle); the count taken goes in reply word 1.
    pub(crate) fn write(&mut self, caller: u64, req: &Msg, len: usize, out: &mut Msg) -> Reply {
        if len > WRITE_MAX {
            return Err(Status::Invalid);
        }
        let mut data = [0u8; WRITE_MAX];
        proto::get_bytes(&req[2..], &mut data[..len]);
        let d = self.table.get(caller, req[1])?;
        if !d.write {
            return Err(Status::BadHandle);
        }
        d.kept_failure()?;
        let (ino, append, mut at) = (d.ino, d.append, d.offset);
        if append {
            at = self.fs.stat(ino).map_err(status)?.size;
        }
        let n = self.fs.write(ino, at, &data[..len]).map_err(status)?;
        self.table.get(caller, req[1])?.offset = at.saturating_add(n as u64);
        out[1] = n as u64;
        Ok(0)
    }

    /// Moves the position (`whence` 0: from the start, 1: from the
    /// position, 2: from the end); the new position goes in reply word 1.
    pub(crate) fn seek(&mut self, caller: u64, handle: u64, whence: u64, offset: i64, out: &mut Msg) -> Reply {
        let d = self.table.get(caller, handle)?;
        let ino = d.ino;
        let base: i128 = match whence {
            0 => 0,
            1 => i128::from(d.offset),
            2 => i128::from(self.fs.stat(ino).map_err(status)?.size),
            _ => return Err(Status::Invalid),
        };
        // SEEK_SET takes the offset as unsigned (any u64 that fits).
        let delta = if whence == 0 { i128::from(offset as u64) } else { i128::from(offset) };
        let to = base + delta;
        if !(0..=MAX_POSITION).contains(&to) {
            return Err(Status::Invalid);
        }
        self.table.get(caller, handle)?.offset = to as u64;
        out[1] = to as u64;
        Ok(0)
    }

    /// The status of `ino` in reply words 1.. ([`proto::WireStat`]).
    pub(crate) fn put_stat(&mut self, ino: u64, out: &mut Msg) -> Reply {
        let st = self.fs.stat(ino).map_err(status)?;
        Self::put_meta(&st, out)
    }

    /// `st` in reply words 1.. ([`proto::WireStat`]).
    pub(crate) fn put_meta(st: &Meta, out: &mut Msg) -> Reply {
        let wire = proto::WireStat {
            kind: kind_code(st.kind),
            size: st.size,
            ino: st.number,
            nlink: st.nlink,
            mtime: st.mtime,
            mode: st.mode,
            allocated: st.allocated,
        };
        wire.put(&mut out[1..]);
        Ok(0)
    }

    /// The entry after the directory's cursor (`at` 0), or more of the
    /// name of the entry being handed out (`at` > 0): reply word 1 from
    /// `proto::readdir_word`, word 2 the size, words 3.. the name bytes
    /// from `at`. The cursor is the last name handed out, so entries added
    /// or removed meanwhile never make the listing skip or repeat another.
    pub(crate) fn readdir(&mut self, caller: u64, handle: u64, at: u64, out: &mut Msg) -> Reply {
        let d = self.table.get(caller, handle)?;
        let ino = d.ino;
        if at == 0 {
            let next = self.fs.next_entry(ino, d.cursor.as_deref()).map_err(status)?;
            let pending = next.map(|e| Pending { name: e.name, kind: kind_code(e.kind), size: e.size });
            let d = self.table.get(caller, handle)?;
            d.cursor = pending.as_ref().map(|p| p.name.clone()).or(d.cursor.take());
            d.pending = pending;
        }
        let d = self.table.get(caller, handle)?;
        let Some(p) = &d.pending else {
            if at != 0 {
                return Err(Status::Invalid);
            }
            out[1] = proto::readdir_word(false, 0, 0);
            return Ok(0);
        };
        let start = usize::try_from(at).ok().filter(|&s| s <= p.name.len()).ok_or(Status::Invalid)?;
        let chunk = &p.name[start..p.name.len().min(start + NAME_CHUNK)];
        out[1] = proto::readdir_word(true, p.kind, p.name.len());
        out[2] = p.size;
        proto::put_bytes(&mut out[3..], chunk);
        Ok(chunk.len())
    }

    /// Gives `child` — a live environment the caller created — its own
    /// handle on the caller's open file; the handle goes in reply word 1.
    pub(crate) fn dup(&mut self, caller: u64, handle: u64, child: u64, out: &mut Msg) -> Reply {
        let parent = exposed::env_entry(child).map(|r| u64::from(r.parent));
        if child == caller || parent != Some(caller) || !alive(child) {
            return Err(Status::Denied);
        }
        out[1] = self.table.dup(caller, handle, child)?;
        Ok(0)
    }
}
