//! One request: decode the message registers, check everything a client
//! controls (op, lengths, handle, offsets, paths), do it on the RAM file
//! system, and write the reply over the message (protocol in
//! `oxok_libos::fs::proto`). Nothing here panics on a message: a request
//! the server cannot make sense of is answered `Invalid`.

use alloc::vec::Vec;
use oxok_libos::abi::{ENV_FREE, ENV_ZOMBIE};
use oxok_libos::exposed;
use oxok_libos::fs::proto::{self, INLINE, KIND_DIR, KIND_FILE, KIND_LINK, LINK_CHUNK, STAGED, Status, flags, op};
use oxok_libos::pct::Msg;
use oxok_ramfs::{FsError, Kind};

use crate::files::Backend;

use crate::buffers::Buffers;
use crate::generation::Generation;
use crate::table::Table;

/// Requests between two sweeps for dead clients.
const SWEEP_EVERY: u64 = 64;

/// The file server's state.
pub struct Server {
    pub(crate) fs: Backend,
    pub(crate) table: Table,
    pub(crate) buffers: Buffers,
    pub(crate) generation: Generation,
    calls: u64,
    /// The environment that started the server: the only one that may stop it.
    creator: u64,
    /// Set by `STOP`: every later request is refused.
    pub stopping: bool,
}

type Reply = Result<usize, Status>;

impl Server {
    /// A server over `fs`, stoppable by `creator`.
    pub fn new(fs: Backend, creator: u64) -> Server {
        Server {
            fs,
            table: Table::default(),
            buffers: Buffers::default(),
            generation: Generation::default(),
            calls: 0,
            creator,
            stopping: false,
        }
    }

    /// Serves `msg` from `caller`, replacing it with the reply.
    pub fn serve(&mut self, caller: u64, msg: &mut Msg) {
        let req = *msg;
        *msg = [0; proto::WORDS];
        self.fs.set_time(oxok_libos::time::unix_secs().unwrap_or(0));
        // Whoever asks, the writes left behind come first.
        self.take_behind();
        if self.stopping {
            msg[0] = proto::reply(Status::Stopped, 0);
            return;
        }
        self.calls += 1;
        if self.calls.is_multiple_of(SWEEP_EVERY) {
            self.sweep();
        }
        self.end_grant_for(caller, proto::op_of(req[0]), req[1]);
        self.generation.note(&req);
        let result = self.dispatch(caller, &req, msg);
        self.fs.end_request();
        msg[0] = match result {
            Ok(len) => {
                let w0 = proto::reply(Status::Ok, len);
                match proto::op_of(req[0]) {
                    op::READ | op::WRITE | op::SEEK | op::READ_BUF | op::WRITE_BUF => {
                        self.table.get(caller, req[1]).map_or(w0, |d| proto::with_pos(w0, d.offset))
                    }
                    _ => w0,
                }
            }
            Err(status) => {
                *msg = [0; proto::WORDS];
                if proto::op_of(req[0]) != op::PATH {
                    self.table.drop_staging(caller);
                }
                proto::reply(status, 0)
            }
        };
    }

    fn dispatch(&mut self, caller: u64, req: &Msg, out: &mut Msg) -> Reply {
        let (len, arg) = (proto::len_of(req[0]), proto::arg_of(req[0]));
        match proto::op_of(req[0]) {
            op::PATH => {
                let bytes = inline(req, len)?;
                self.table.stage(caller, arg & 1 != 0, &bytes[..len]).map(|()| 0)
            }
            op::OPEN => {
                // Before anything could fail: the closes are owed whatever
                // becomes of the open.
                if arg & flags::CLOSES != 0 {
                    self.close_listed(caller);
                }
                let path = self.payload(caller, req)?;
                self.open(caller, &path, arg & !STAGED, out)
            }
            op::CLOSE => {
                // Up to eight handles (`len` of them; 0 counts as one).
                self.close_handles(caller, &req[1..=len.clamp(1, proto::WORDS - 1)])
            }
            op::READ => self.read(caller, req[1], len.min(INLINE), out),
            op::WRITE => self.write(caller, req, len, out),
            op::SEEK => self.seek(caller, req[1], arg, req[2] as i64, out),
            op::FSTAT => {
                let ino = self.table.get(caller, req[1])?.ino;
                self.put_stat(ino, out)
            }
            op::STAT => {
                let path = self.payload(caller, req)?;
                let st = if arg & flags::NOFOLLOW != 0 { self.fs.lstat_path(&path) } else { self.fs.stat_path(&path) };
                Self::put_meta(&st.map_err(status)?, out)
            }
            op::MKDIR => {
                let path = self.payload(caller, req)?;
                self.fs.mkdir(&path, proto::mode_of(arg)).map(|_| 0).map_err(status)
            }
            op::UNLINK => {
                let path = self.payload(caller, req)?;
                self.fs.unlink(&path).map(|()| 0).map_err(status)
            }
            op::RMDIR => {
                let path = self.payload(caller, req)?;
                self.fs.rmdir(&path).map(|()| 0).map_err(status)
            }
            op::RENAME => self.on_pair(caller, req, |fs, from, to| fs.rename(from, to)),
            op::LINK => self.on_pair(caller, req, |fs, from, to| fs.link(from, to)),
            op::SYMLINK => self.on_pair(caller, req, |fs, target, path| fs.symlink(target, path)),
            op::READLINK => {
                let path = self.payload(caller, req)?;
                let target = self.fs.readlink(&path).map_err(status)?;
                let from = usize::try_from(arg & !STAGED).ok().filter(|&f| f <= target.len()).ok_or(Status::Invalid)?;
                let chunk = &target[from..target.len().min(from + LINK_CHUNK)];
                out[1] = target.len() as u64;
                proto::put_bytes(&mut out[2..], chunk);
                Ok(chunk.len())
            }
            op::SET_MODE => {
                let ino = self.table.get(caller, req[1])?.ino;
                let mode = u16::try_from(req[2]).ok().filter(|m| m & !0o7777 == 0).ok_or(Status::Invalid)?;
                self.fs.set_mode(ino, mode).map(|()| 0).map_err(|e| match e {
                    FsError::NotPermitted => Status::Unsupported,
                    e => status(e),
                })
            }
            op::COPY => {
                let payload = self.payload(caller, req)?;
                let (from, to) = pair(&payload)?;
                let done = self.fs.copy_tree(from, to).map_err(|e| match e {
                    FsError::NotPermitted => Status::Unsupported,
                    e => status(e),
                })?;
                out[1..4].copy_from_slice(&done);
                Ok(0)
            }
            op::READDIR => self.readdir(caller, req[1], req[2], out),
            op::DUP => self.dup(caller, req[1], req[2], out),
            op::TRUNCATE => {
                let d = self.table.get(caller, req[1])?;
                if !d.write {
                    return Err(Status::BadHandle);
                }
                let ino = d.ino;
                self.fs.truncate(ino, req[2]).map(|()| 0).map_err(status)
            }
            op::FSYNC => {
                let d = self.table.get(caller, req[1])?;
                d.kept_failure()?;
                let ino = d.ino;
                self.fs.fsync(ino).map(|()| 0).map_err(status)
            }
            // What every request does first is all it asks.
            op::SETTLE => Ok(0),
            op::SYNC => self.fs.sync_all().map(|()| 0).map_err(status),
            op::WRITE_BACK => {
                out[1] = u64::from(self.fs.write_back(req[1]).map_err(status)?);
                Ok(0)
            }
            op::SET_TIMES => {
                let ino = self.table.get(caller, req[1])?.ino;
                let time = |w: u64| (w != proto::KEEP_TIME).then_some(w);
                self.fs.set_times(ino, time(req[2]), time(req[3])).map(|()| 0).map_err(|e| match e {
                    FsError::NotPermitted => Status::Unsupported,
                    e => status(e),
                })
            }
            op::INFO => {
                self.sweep();
                let (clients, handles, descs) = self.table.counts();
                let u = self.fs.usage();
                let words = [clients as u64, handles as u64, descs as u64, u.inodes, u.used, u.capacity, u.max_inodes];
                for (w, v) in out[1..].iter_mut().zip(words) {
                    *w = v;
                }
                Ok(0)
            }
            op::STOP if caller == self.creator && self.creator != 0 => {
                self.stopping = true;
                Ok(0)
            }
            op::STOP => Err(Status::Denied),
            op::BUFFER => self.buffer(caller, arg, req[1], out),
            op::GENERATION => {
                out[1] = self.generation.grant()?;
                Ok(0)
            }
            op::READ_BUF => self.read_buf(caller, req[1], req[2], out),
            op::WRITE_BUF => self.write_buf(caller, req[1], req[2], out),
            op::BEHIND_PAGE => self.behind_page(caller, out),
            _ => Err(Status::Invalid),
        }
    }

    /// A two-path op (payload `first NUL second`) done by `act`.
    fn on_pair(
        &mut self,
        caller: u64,
        req: &Msg,
        act: impl FnOnce(&mut Backend, &[u8], &[u8]) -> Result<(), FsError>,
    ) -> Reply {
        let payload = self.payload(caller, req)?;
        let (first, second) = pair(&payload)?;
        act(&mut self.fs, first, second).map(|()| 0).map_err(status)
    }

    /// Closes `handles` of `caller`, each as its own `CLOSE` would; the
    /// first failure is the reply.
    pub(crate) fn close_handles(&mut self, caller: u64, handles: &[u64]) -> Reply {
        let mut first = Ok(0);
        for &handle in handles {
            match self.table.close(caller, handle) {
                Ok(Some(ino)) => {
                    let _ = self.fs.unpin(ino);
                }
                Ok(None) => {}
                Err(e) => first = first.and(Err(e)),
            }
        }
        first
    }

    /// The path payload of a path op: what the caller staged (if the op
    /// says so) and the bytes in this message.
    fn payload(&mut self, caller: u64, req: &Msg) -> Result<Vec<u8>, Status> {
        let len = proto::len_of(req[0]);
        let bytes = inline(req, len)?;
        let mut payload = if proto::arg_of(req[0]) & STAGED != 0 {
            self.table.take_staging(caller)
        } else {
            self.table.drop_staging(caller);
            Vec::new()
        };
        payload.try_reserve(len).map_err(|_| Status::NoSpace)?;
        payload.extend_from_slice(&bytes[..len]);
        Ok(payload)
    }

    /// Releases what dead clients held: their handles, the records only
    /// they used, and so the pins on inodes (an unlinked file goes with
    /// its last one).
    pub(crate) fn sweep(&mut self) {
        for ino in self.table.reclaim(alive) {
            let _ = self.fs.unpin(ino);
        }
        self.buffers.reclaim();
    }
}

/// True while environment `id` exists and has not ended.
pub(crate) fn alive(id: u64) -> bool {
    exposed::env_entry(id).is_some_and(|r| r.status != ENV_ZOMBIE && r.status != ENV_FREE)
}

/// The first `len` (at most [`INLINE`]) payload bytes of words 1..9.
fn inline(req: &Msg, len: usize) -> Result<[u8; INLINE], Status> {
    if len > INLINE {
        return Err(Status::Invalid);
    }
    let mut bytes = [0u8; INLINE];
    proto::get_bytes(&req[1..], &mut bytes[..len]);
    Ok(bytes)
}

/// A two-part payload `first NUL second`.
fn pair(payload: &[u8]) -> Result<(&[u8], &[u8]), Status> {
    let at = payload.iter().position(|&b| b == 0).ok_or(Status::Invalid)?;
    Ok((&payload[..at], &payload[at + 1..]))
}

/// The wire kind of an inode kind.
pub(crate) fn kind_code(kind: Kind) -> u64 {
    match kind {
        Kind::File => KIND_FILE,
        Kind::Dir => KIND_DIR,
        Kind::Symlink => KIND_LINK,
    }
}

/// The wire status of a file-system error.
pub(crate) fn status(e: FsError) -> Status {
    match e {
        FsError::NotFound => Status::NotFound,
        FsError::NotADirectory => Status::NotDir,
        FsError::IsADirectory => Status::IsDir,
        FsError::Exists => Status::Exists,
        FsError::NotEmpty => Status::NotEmpty,
        FsError::BadInode => Status::BadHandle,
        FsError::NoSpace | FsError::FileTooBig => Status::NoSpace,
        FsError::Loop => Status::Loop,
        FsError::TooLong => Status::TooLong,
        FsError::NotPermitted => Status::NotPermitted,
        FsError::InvalidName | FsError::Invalid | FsError::Busy => Status::Invalid,
    }
}
