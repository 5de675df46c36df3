//! An open file of the file server as a descriptor object (Xok §5.2: the
//! descriptor's entry carries its own operations).
//!
//! The object holds only the server's id and the handle the server gave
//! this process; the position, access mode and the pinned inode live in the
//! server's open-file record, which every handle duplicated from this one
//! shares (as POSIX's open file description: a child that inherits the
//! descriptor moves the same position). Reads and writes of more than a
//! message's worth go a page at a time through the shared buffer
//! ([`buffer`](super::buffer)), smaller ones (or all, without a buffer) in
//! chunks of one message each ([`proto`](super::proto)); dropping the last
//! reference closes the handle.

use alloc::format;
use alloc::string::String;

use super::client::{call, handle_call};
use super::proto::{self, BUFFER_SIZE, INLINE, WRITE_MAX, op};
use super::{FileKind, Metadata};
use crate::fd::{File, IoError, SeekFrom};
use crate::pct::Msg;
use oxok_fdspec::Spec;

/// An open file or directory of the file server.
#[derive(Debug)]
pub struct OpenFile {
    server: u64,
    handle: u64,
}

impl OpenFile {
    /// The object for `handle`, which the server gave this process.
    pub(crate) fn new(server: u64, handle: u64) -> OpenFile {
        OpenFile { server, handle }
    }

    /// The server's id.
    pub fn server(&self) -> u64 {
        self.server
    }

    /// The server's handle (meaningful only to this process).
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// Kind, size, inode number and links of the open file.
    pub fn metadata(&self) -> Result<Metadata, IoError> {
        let r = handle_call(self.server, op::FSTAT, 0, 0, &[self.handle])?;
        Ok(Metadata::from_words(&r[1..]))
    }

    /// Sets the file's length.
    pub fn set_len(&self, len: u64) -> Result<(), IoError> {
        handle_call(self.server, op::TRUNCATE, 0, 0, &[self.handle, len]).map(|_| ())
    }

    /// Asks the server for a handle of environment `child` (a child of this
    /// one) on the same open file; returns it.
    pub fn dup_for(&self, child: u64) -> Result<u64, IoError> {
        Ok(handle_call(self.server, op::DUP, 0, 0, &[self.handle, child])?[1])
    }

    /// The next directory entry, or `None` at the end.
    pub(crate) fn next_entry(&self) -> Result<Option<super::DirEntry>, IoError> {
        let mut name = alloc::vec::Vec::new();
        loop {
            let r = handle_call(self.server, op::READDIR, 0, 0, &[self.handle, name.len() as u64])?;
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
                let kind = if kind == proto::KIND_DIR { FileKind::Dir } else { FileKind::File };
                let name = String::from_utf8_lossy(&name).into_owned();
                return Ok(Some(super::DirEntry { name, kind, size: r[2] }));
            }
        }
    }
}

impl File for OpenFile {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        let mut done = 0;
        while done < buf.len() {
            // More than a message's worth: a page at a time through the
            // shared buffer, if this process has one with the server.
            if buf.len() - done > INLINE
                && let Some(r) = super::buffer::read(self.server, self.handle, &mut buf[done..])
            {
                let want = (buf.len() - done).min(BUFFER_SIZE);
                let n = r?.min(want);
                done += n;
                if n < want {
                    break; // the end of the file
                }
                continue;
            }
            let want = (buf.len() - done).min(INLINE);
            let r: Msg = handle_call(self.server, op::READ, want, 0, &[self.handle])?;
            let n = proto::len_of(r[0]).min(want);
            proto::get_bytes(&r[1..], &mut buf[done..done + n]);
            done += n;
            if n < want {
                break; // the end of the file
            }
        }
        Ok(done)
    }

    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        let mut done = 0;
        while done < buf.len() {
            let rest = &buf[done..];
            // More than a message's worth: a page at a time through the
            // shared buffer, if this process has one with the server.
            let paged =
                if rest.len() > WRITE_MAX { super::buffer::write(self.server, self.handle, rest) } else { None };
            let (want, result) = match paged {
                Some(r) => (rest.len().min(BUFFER_SIZE), r),
                None => {
                    let chunk = &rest[..rest.len().min(WRITE_MAX)];
                    let mut words = [0u64; 8];
                    words[0] = self.handle;
                    proto::put_bytes(&mut words[1..], chunk);
                    (chunk.len(), handle_call(self.server, op::WRITE, chunk.len(), 0, &words).map(|r| r[1] as usize))
                }
            };
            let taken = match result {
                Ok(n) => n.min(want),
                Err(e) if done == 0 => return Err(e),
                Err(_) => break, // report what was written
            };
            done += taken;
            if taken < want {
                break;
            }
        }
        Ok(done)
    }

    fn seek(&self, to: SeekFrom) -> Result<u64, IoError> {
        let (whence, offset) = match to {
            SeekFrom::Start(o) => (0, o),
            SeekFrom::Current(o) => (1, o as u64),
            SeekFrom::End(o) => (2, o as u64),
        };
        Ok(handle_call(self.server, op::SEEK, 0, whence, &[self.handle, offset])?[1])
    }

    fn kind(&self) -> &'static str {
        "file"
    }

    /// `file:<server>:<handle>`, the handle being the child's own (asked of
    /// the server with `DUP`).
    fn spec(&self, child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        let handle = self.dup_for(child)?;
        Ok(Some(format!("{}", Spec::File { server: self.server, handle })))
    }

    /// The server knows this handle as the parent's: a fork child gets its
    /// own duplicate, as a spawned child does.
    fn fork_spec(&self, child: u64, child_slot: u64) -> Result<Option<String>, IoError> {
        self.spec(child, child_slot)
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        let mut m: Msg = [0; proto::WORDS];
        m[0] = proto::request(op::CLOSE, 0, 0);
        m[1] = self.handle;
        // A dead server has nothing left to close.
        let _ = call(self.server, &m);
    }
}

/// The object `file:<server>:<handle>` names (see [`OpenFile::spec`]).
pub fn from_spec(spec: &str) -> Result<OpenFile, IoError> {
    let Some(Spec::File { server, handle }) = Spec::parse(spec) else {
        return Err(IoError::Invalid);
    };
    let file = OpenFile::new(server, handle);
    file.metadata()?; // the server knows this handle as ours
    Ok(file)
}
