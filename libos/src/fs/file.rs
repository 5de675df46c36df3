//! An open file of the file server as a descriptor object (Xok §5.2: the
//! descriptor's entry carries its own operations).
//!
//! The object holds only the server's id and the handle the server gave
//! this process; the position, access mode and the pinned inode live in the
//! server's open-file record, which every handle duplicated from this one
//! shares (as POSIX's open file description: a child that inherits the
//! descriptor moves the same position). Reads and writes of more than a
//! message's worth go up to the shared buffer's size (64 KiB) at a time
//! through it ([`buffer`](super::buffer)), smaller ones (or all, without a buffer) in
//! chunks of one message each ([`proto`](super::proto)); dropping the last
//! reference closes the handle. A handle's first write, if its open was
//! granted `flags::BEHIND` and the bytes fit a page, waits behind in the
//! buffer's behind page for the server to take before its next request
//! from anyone ([`proto::behind`](super::proto::behind)): a small file's
//! create costs its open's round trip and no other.

use alloc::format;
use alloc::string::String;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::client::{call, handle_call};
use super::proto::{self, INLINE, WRITE_MAX, op};
use super::sinks::{Sink, Source};
use super::{FileKind, Metadata};
use crate::fd::{File, IoError, SeekFrom};
use crate::pct::Msg;
use oxok_fdspec::{Origin, Spec};

/// An open file or directory of the file server: its entry in the
/// open-file table ([`ftable`](super::ftable)), which holds the server, the
/// handle, the path, the mode and the position in this process's memory,
/// where a checkpointer finds and re-binds them.
#[derive(Debug)]
pub struct OpenFile {
    slot: usize,
    /// Whether it is a directory, as the server's `OPEN` reply said
    /// (`None` for a file this process did not open itself).
    dir: Option<bool>,
    /// For a file whose bytes came with its open (`flags::PREFETCH`): the
    /// position reads from them reached, which the server, whose position
    /// stays 0, has not been told ([`IN_STEP`]: none, or told).
    ahead: AtomicU64,
    /// The server granted that this handle's first write may wait behind
    /// in the buffer (`flags::BEHIND`), and no request has named it yet.
    behind: AtomicBool,
}

/// [`OpenFile::ahead`] when the server knows the position.
const IN_STEP: u64 = u64::MAX;

impl OpenFile {
    /// The file of table entry `slot` (taken and filled by the caller).
    pub(crate) fn at(slot: usize) -> OpenFile {
        OpenFile { slot, dir: None, ahead: AtomicU64::new(IN_STEP), behind: AtomicBool::new(false) }
    }

    /// The file of table entry `slot`, just opened here: `kind` is the
    /// `OPEN` reply's (`proto::KIND_*`); `prefetched` if its bytes came
    /// with it; `behind` if its first write may wait behind.
    pub(crate) fn opened(slot: usize, kind: u64, prefetched: bool, behind: bool) -> OpenFile {
        let ahead = AtomicU64::new(if prefetched { 0 } else { IN_STEP });
        OpenFile { slot, dir: Some(kind == proto::KIND_DIR), ahead, behind: AtomicBool::new(behind) }
    }

    /// Reads up to `len` bytes into `to` from the bytes that came with the
    /// open, if they still hold; the position moves here only. Two threads
    /// reading at once each get their own bytes: a read whose position
    /// moved under it reads again from the new one.
    fn read_prefetched(&self, to: &mut Sink<'_>, len: usize) -> Option<Result<usize, IoError>> {
        let copied = self
            .prefetched(|server, handle, at| super::buffer::read_prefetched(server, self.slot, handle, at, to, len))?;
        Some(copied.map_err(IoError::Kernel))
    }

    /// Reads up to `len` bytes into `to`, as [`File::read`] says: from the
    /// bytes that came with the open, else more than a message's worth up to
    /// 64 KiB at a time through the shared buffer (if this process has one
    /// with the server), the rest a message at a time.
    fn read_to(&self, mut to: Sink<'_>, len: usize) -> Result<usize, IoError> {
        if let Some(r) = self.read_prefetched(&mut to, len) {
            return r;
        }
        let mut done = 0;
        while done < len {
            let (server, handle) = super::ftable::ids(self.slot);
            if len - done > INLINE
                && let Some(r) = self.paged(|| super::buffer::read(server, handle, &mut to, done, len - done))
            {
                let (n, asked) = r?;
                done += n;
                if n < asked {
                    break; // the end of the file
                }
                continue;
            }
            let want = (len - done).min(INLINE);
            let r: Msg = self.moving(op::READ, want, 0, &[])?;
            let n = proto::len_of(r[0]).min(want);
            let mut chunk = [0u8; INLINE];
            proto::get_bytes(&r[1..], &mut chunk[..n]);
            to.put(done, &chunk[..n]).map_err(IoError::Kernel)?;
            done += n;
            if n < want {
                break; // the end of the file
            }
        }
        Ok(done)
    }

    /// Writes `len` bytes from `from`, as [`File::write`] says: the first
    /// write after the open may wait behind (at position 0), the rest goes
    /// by [`write_from`](Self::write_from).
    fn write_any(&self, from: &Source<'_>, len: usize) -> Result<usize, IoError> {
        if self.behind.swap(false, Ordering::AcqRel) {
            let (server, handle) = super::ftable::ids(self.slot);
            super::ftable::begin(self.slot);
            let left = super::buffer::leave_behind(server, handle, from, len);
            super::ftable::end(self.slot, left.then_some(len as u64));
            if left {
                return Ok(len);
            }
        }
        self.write_from(from, len)
    }

    /// Writes `len` bytes from `from`, as [`File::write`] says: more than a
    /// message's worth up to 64 KiB at a time through the shared buffer (if
    /// this process has one with the server), the rest a message at a time.
    fn write_from(&self, from: &Source<'_>, len: usize) -> Result<usize, IoError> {
        let mut done = 0;
        while done < len {
            let rest = len - done;
            let (server, handle) = super::ftable::ids(self.slot);
            let paged = if rest > WRITE_MAX {
                self.paged(|| super::buffer::write(server, handle, &from.after(done), rest))
            } else {
                None
            };
            let result = match paged {
                Some(r) => r,
                None => {
                    let n = rest.min(WRITE_MAX);
                    let mut chunk = [0u8; WRITE_MAX];
                    let mut words = [0u64; 7];
                    from.get(done, &mut chunk[..n])
                        .map_err(IoError::Kernel)
                        .and_then(|()| {
                            proto::put_bytes(&mut words, &chunk[..n]);
                            self.moving(op::WRITE, n, 0, &words)
                        })
                        .map(|r| ((r[1] as usize).min(n), n))
                }
            };
            let (n, asked) = match result {
                Ok(moved) => moved,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break, // report what was written
            };
            done += n;
            if n < asked {
                break;
            }
        }
        Ok(done)
    }

    /// Moves the position past the bytes `copy` copied from the buffer
    /// (given the server, the handle and the position), as
    /// [`read_prefetched`](OpenFile::read_prefetched) does; `None` when the
    /// prefetched bytes do not serve.
    fn prefetched<E>(
        &self,
        mut copy: impl FnMut(u64, u64, usize) -> Option<Result<usize, E>>,
    ) -> Option<Result<usize, E>> {
        loop {
            let at = self.ahead.load(Ordering::Acquire);
            if at == IN_STEP {
                return None;
            }
            let (server, handle) = super::ftable::ids(self.slot);
            let n = match copy(server, handle, at as usize)? {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            let to = at + n as u64;
            if self.ahead.compare_exchange(at, to, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                super::ftable::begin(self.slot);
                super::ftable::end(self.slot, Some(to));
                return Some(Ok(n));
            }
        }
    }

    /// Tells the server the position reads from prefetched bytes reached,
    /// before a request that uses or hands on the server's position (kept
    /// to tell again if the server could not be told).
    fn in_step(&self) -> Result<(), IoError> {
        // A request that names the handle ends the server's grant.
        self.behind.store(false, Ordering::Release);
        let at = self.ahead.swap(IN_STEP, Ordering::AcqRel);
        if at == IN_STEP || at == 0 {
            return Ok(());
        }
        let (server, handle) = super::ftable::ids(self.slot);
        let told = handle_call(server, op::SEEK, 0, 0, &[handle, at]).map(|_| ());
        if told.is_err() {
            let _ = self.ahead.compare_exchange(IN_STEP, at, Ordering::AcqRel, Ordering::Acquire);
        }
        told
    }

    /// Whether it is a directory, when known without asking the server
    /// (it was opened by this process: the `OPEN` reply said).
    pub fn known_dir(&self) -> Option<bool> {
        self.dir
    }

    /// The object for `handle` of `server`, which the server gave this
    /// process, opened by `path` (`None`: unknown) with `flags` on inode
    /// `ino`, on the server's record `share` names (`None`: opened here).
    /// If the open-file table has no room the handle is closed and the open
    /// fails (`NoSpace`): a file a checkpointer could not see would not
    /// survive a restore.
    pub(crate) fn new(
        server: u64,
        handle: u64,
        flags: u64,
        ino: u64,
        path: Option<&str>,
        share: Option<u64>,
    ) -> Result<OpenFile, IoError> {
        match super::ftable::take(server, handle, flags, ino, path, share) {
            Some(slot) => Ok(OpenFile::at(slot)),
            None => {
                let mut m: Msg = [0; proto::WORDS];
                m[0] = proto::request(op::CLOSE, 0, 0);
                m[1] = handle;
                let _ = call(server, &m);
                Err(IoError::NoSpace)
            }
        }
    }

    /// The server's id.
    pub fn server(&self) -> u64 {
        super::ftable::ids(self.slot).0
    }

    /// The server's handle (meaningful only to this process).
    pub fn handle(&self) -> u64 {
        super::ftable::ids(self.slot).1
    }

    /// A request on this file whose reply reports the position: kept in
    /// the table, the request marked in flight meanwhile.
    fn moving(&self, op: u8, len: usize, arg: u64, words: &[u64]) -> Result<Msg, IoError> {
        self.in_step()?;
        let (server, handle) = super::ftable::ids(self.slot);
        let mut w = [0u64; 8];
        w[0] = handle;
        for (d, s) in w[1..].iter_mut().zip(words) {
            *d = *s;
        }
        super::ftable::begin(self.slot);
        let r = handle_call(server, op, len, arg, &w[..1 + words.len().min(7)]);
        let pos = match (&r, op) {
            (Ok(m), op::SEEK) => Some(m[1]),
            (Ok(m), _) => proto::pos_of(m[0]),
            _ => None,
        };
        super::ftable::end(self.slot, pos);
        r
    }

    /// Kind, size, inode number and links of the open file.
    pub fn metadata(&self) -> Result<Metadata, IoError> {
        let (server, handle) = super::ftable::ids(self.slot);
        let r = handle_call(server, op::FSTAT, 0, 0, &[handle])?;
        Ok(Metadata::from_words(&r[1..]))
    }

    /// Sets the file's length.
    pub fn set_len(&self, len: u64) -> Result<(), IoError> {
        let (server, handle) = super::ftable::ids(self.slot);
        handle_call(server, op::TRUNCATE, 0, 0, &[handle, len]).map(|_| ())
    }

    /// Makes the file's data, size and name durable before it returns (the
    /// server's `FSYNC`; at once for a file in memory).
    pub fn sync_all(&self) -> Result<(), IoError> {
        let (server, handle) = super::ftable::ids(self.slot);
        handle_call(server, op::FSYNC, 0, 0, &[handle]).map(|_| ())
    }

    /// Sets the file's modification and access times, in Unix seconds
    /// (`None`: unchanged); `Unsupported` where the file system keeps no
    /// times (the disk's C-FFS).
    pub fn set_times(&self, mtime: Option<u64>, atime: Option<u64>) -> Result<(), IoError> {
        let (server, handle) = super::ftable::ids(self.slot);
        let w = |t: Option<u64>| t.unwrap_or(proto::KEEP_TIME);
        handle_call(server, op::SET_TIMES, 0, 0, &[handle, w(mtime), w(atime)]).map(|_| ())
    }

    /// Sets the file's permission bits (`0o7777`); `Unsupported` where the
    /// file system keeps no modes (the disk's C-FFS).
    pub fn set_mode(&self, mode: u32) -> Result<(), IoError> {
        let (server, handle) = super::ftable::ids(self.slot);
        handle_call(server, op::SET_MODE, 0, 0, &[handle, u64::from(mode & 0o7777)]).map(|_| ())
    }

    /// Asks the server for a handle of environment `child` (a child of this
    /// one) on the same open file; returns it.
    pub fn dup_for(&self, child: u64) -> Result<u64, IoError> {
        self.in_step()?;
        let (server, handle) = super::ftable::ids(self.slot);
        Ok(handle_call(server, op::DUP, 0, 0, &[handle, child])?[1])
    }

    /// The next directory entry, or `None` at the end. The cursor (the
    /// name handed out) is kept in the open-file table, the request marked
    /// in flight meanwhile (a long name takes several messages).
    pub fn next_entry(&self) -> Result<Option<super::DirEntry>, IoError> {
        super::ftable::begin(self.slot);
        let r = self.next_entry_inner();
        if let Ok(Some(e)) = &r {
            super::ftable::set_cursor(self.slot, e.name.as_bytes());
        }
        super::ftable::end(self.slot, None);
        r
    }

    fn next_entry_inner(&self) -> Result<Option<super::DirEntry>, IoError> {
        let mut name = alloc::vec::Vec::new();
        loop {
            let (server, handle) = super::ftable::ids(self.slot);
            let r = handle_call(server, op::READDIR, 0, 0, &[handle, name.len() as u64])?;
            let (present, kind, len) = proto::split_readdir_word(r[1]);
            if !present {
                return Ok(None);
            }
            let n = proto::len_of(r[0]).min(proto::NAME_CHUNK);
            let mut chunk = [0u8; proto::NAME_CHUNK];
            proto::get_bytes(&r[3..], &mut chunk[..n]);
            name.extend_from_slice(&chunk[..n]);
            if n == 0 || name.len() >= len {
                name.truncate(len);
                let kind = FileKind::of(kind);
                let name = String::from_utf8_lossy(&name).into_owned();
                return Ok(Some(super::DirEntry { name, kind, size: r[2] }));
            }
        }
    }
}

impl File for OpenFile {
    fn read_to_guest(&self, addr: u64, len: usize) -> Option<Result<usize, IoError>> {
        Some(self.read_to(Sink::Guest(addr), len))
    }

    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        let len = buf.len();
        self.read_to(Sink::Here(buf), len)
    }

    fn write_from_guest(&self, addr: u64, len: usize) -> Option<Result<usize, IoError>> {
        Some(self.write_any(&Source::Guest(addr), len))
    }

    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        self.write_any(&Source::Here(buf), buf.len())
    }

    fn seek(&self, to: SeekFrom) -> Result<u64, IoError> {
        let (whence, offset) = match to {
            SeekFrom::Start(o) => (0, o),
            SeekFrom::Current(o) => (1, o as u64),
            SeekFrom::End(o) => (2, o as u64),
        };
        Ok(self.moving(op::SEEK, 0, whence, &[offset])?[1])
    }

    fn kind(&self) -> &'static str {
        "file"
    }

    /// `file:<server>:<handle>`, the handle being the child's own (asked of
    /// the server with `DUP`), followed by the entry's origin (share id,
    /// mode, path) when the path is known, so the child's entry names the
    /// same record and path.
    fn spec(&self, child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        let handle = self.dup_for(child)?;
        let spec = Spec::File { server: self.server(), handle };
        Ok(Some(match super::ftable::origin(self.slot) {
            Some((share, flags, path)) => format!("{spec}{}", Origin { share, flags, path: &path }),
            None => format!("{spec}"),
        }))
    }

    /// The server knows this handle as the parent's: a fork child gets its
    /// own duplicate, as a spawned child does.
    fn fork_spec(&self, child: u64, child_slot: u64) -> Result<Option<String>, IoError> {
        self.spec(child, child_slot)
    }
}

impl OpenFile {
    /// A transfer through the shared buffer, marked in flight and its
    /// position kept: the bytes moved and the bytes asked for.
    fn paged(
        &self,
        f: impl FnOnce() -> Option<Result<super::buffer::Moved, IoError>>,
    ) -> Option<Result<(usize, usize), IoError>> {
        if let Err(e) = self.in_step() {
            return Some(Err(e));
        }
        super::ftable::begin(self.slot);
        let r = f();
        let pos = match &r {
            Some(Ok(m)) => proto::pos_of(m.word0),
            _ => None,
        };
        super::ftable::end(self.slot, pos);
        r.map(|r| r.map(|m| (m.n, m.asked)))
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        let (server, handle) = super::ftable::ids(self.slot);
        super::buffer::forget_prefetch(self.slot);
        super::ftable::free(self.slot);
        super::closes::close(server, handle);
    }
}

/// The object `file:<server>:<handle>[;origin]` names (see
/// [`OpenFile::spec`]). Without an origin its path is not known here, and
/// a checkpoint of this process is refused while it is open.
pub fn from_spec(spec: &str) -> Result<OpenFile, IoError> {
    let (base, origin) = Origin::split(spec);
    let Some(Spec::File { server, handle }) = Spec::parse(base) else {
        return Err(IoError::Invalid);
    };
    // The server knows this handle as ours, else this fails.
    let r = handle_call(server, op::FSTAT, 0, 0, &[handle])?;
    match origin {
        Some(o) if o.path.starts_with('/') => {
            OpenFile::new(server, handle, o.flags & super::ftable::KEEP_FLAGS, r[3], Some(o.path), Some(o.share))
        }
        _ => OpenFile::new(server, handle, 0, r[3], None, None),
    }
}
