//! Workloads (ACE's bounded shape): a fixed small tree, then a sequence of
//! up to 3 operations drawn from a pool over a few names — existing files
//! in two directories, new names, a new directory — with write sizes that
//! stay in a block, cross a block boundary, and add a block.

use std::fmt;

use super::model::Model;
use crate::script::Cmd;
use crate::{Disk, Fs, FsError};

/// One operation of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `create`.
    Create(&'static str),
    /// `mkdir`.
    Mkdir(&'static str),
    /// Overwrite (or extend) `len` bytes at `off`.
    Write(&'static str, u64, usize),
    /// `len` bytes at the end.
    Append(&'static str, usize),
    /// `truncate`.
    Truncate(&'static str, u64),
    /// `rename`.
    Rename(&'static str, &'static str),
    /// `link`.
    Link(&'static str, &'static str),
    /// `unlink`.
    Unlink(&'static str),
    /// `fsync`.
    Fsync(&'static str),
    /// `sync`.
    Sync,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Create(p) => write!(f, "create {p}"),
            Op::Mkdir(p) => write!(f, "mkdir {p}"),
            Op::Write(p, o, n) => write!(f, "write {p} @{o}+{n}"),
            Op::Append(p, n) => write!(f, "append {p} +{n}"),
            Op::Truncate(p, n) => write!(f, "truncate {p} {n}"),
            Op::Rename(a, b) => write!(f, "rename {a} {b}"),
            Op::Link(a, b) => write!(f, "link {a} {b}"),
            Op::Unlink(p) => write!(f, "unlink {p}"),
            Op::Fsync(p) => write!(f, "fsync {p}"),
            Op::Sync => f.write_str("sync"),
        }
    }
}

/// The tree every workload starts from (made durable before recording):
/// `/A/f` (5000 bytes), `/g` (100 bytes), directory `/A`.
pub const SETUP: [Op; 6] = [
    Op::Mkdir("/A"),
    Op::Create("/A/f"),
    Op::Write("/A/f", 0, 5000),
    Op::Create("/g"),
    Op::Write("/g", 0, 100),
    Op::Sync,
];

/// Directories that, with `/A` and the root, fill the first inode table.
const FILLERS: [&str; 29] = [
    "/d0", "/d1", "/d2", "/d3", "/d4", "/d5", "/d6", "/d7", "/d8", "/d9", "/d10", "/d11", "/d12", "/d13", "/d14",
    "/d15", "/d16", "/d17", "/d18", "/d19", "/d20", "/d21", "/d22", "/d23", "/d24", "/d25", "/d26", "/d27", "/d28",
];

/// [`SETUP`] with the first inode table full, so the next directory or
/// first hard link needs a new table (and a superblock change).
pub fn setup_full_table() -> Vec<Op> {
    let mut v: Vec<Op> = SETUP[..SETUP.len() - 1].to_vec();
    v.extend(FILLERS.iter().map(|d| Op::Mkdir(d)));
    v.push(Op::Sync);
    v
}

/// The operation pool.
pub fn pool() -> Vec<Op> {
    vec![
        Op::Create("/n"),
        Op::Create("/A/n"),
        Op::Mkdir("/B"),
        Op::Mkdir("/A/C"),
        Op::Write("/A/f", 4000, 300),
        Op::Write("/g", 0, 50),
        Op::Write("/n", 0, 5000),
        Op::Append("/A/f", 4096),
        Op::Append("/g", 10),
        Op::Truncate("/A/f", 100),
        Op::Truncate("/g", 0),
        Op::Rename("/A/f", "/g"),
        Op::Rename("/g", "/A/n"),
        Op::Rename("/A", "/B"),
        Op::Rename("/A/f", "/A/m"),
        Op::Link("/A/f", "/l"),
        Op::Link("/g", "/A/l"),
        Op::Unlink("/A/f"),
        Op::Unlink("/g"),
        Op::Fsync("/A/f"),
        Op::Fsync("/g"),
        Op::Fsync("/n"),
        Op::Sync,
        Op::Create("/B/h"),
        Op::Write("/l", 0, 200),
        Op::Rename("/n", "/A/f"),
        Op::Fsync("/A"),
    ]
}

pub use crate::script::pattern;

impl Op {
    /// The script operation doing this as the `seq`-th of a run.
    pub fn cmd(&self, seq: usize) -> Cmd {
        let seq64 = seq as u64;
        match *self {
            Op::Create(p) => Cmd::Create(p.into()),
            Op::Mkdir(p) => Cmd::Mkdir(p.into()),
            Op::Write(p, off, len) => Cmd::Write { path: p.into(), off, len, seq: seq64 },
            Op::Append(p, len) => Cmd::Append { path: p.into(), len, seq: seq64 },
            Op::Truncate(p, n) => Cmd::Truncate(p.into(), n),
            Op::Rename(a, b) => Cmd::Rename(a.into(), b.into()),
            Op::Link(a, b) => Cmd::Link(a.into(), b.into()),
            Op::Unlink(p) => Cmd::Unlink(p.into()),
            Op::Fsync(p) => Cmd::Fsync(p.into()),
            Op::Sync => Cmd::Sync,
        }
    }
}

/// Applies `op` (the `seq`-th of the run) to the model; whether it
/// succeeds there.
pub fn model_apply(m: &mut Model, op: &Op, seq: usize) -> bool {
    match *op {
        Op::Create(p) => m.create(p),
        Op::Mkdir(p) => m.mkdir(p),
        Op::Write(p, off, n) => m.write(p, off as usize, &pattern(seq as u64, n)),
        Op::Append(p, n) => {
            let at = m.file(p).and_then(|i| m.files.get(i)).map_or(0, |f| f.len());
            m.write(p, at, &pattern(seq as u64, n))
        }
        Op::Truncate(p, n) => m.truncate(p, n as usize),
        Op::Rename(a, b) => m.rename(a, b),
        Op::Link(a, b) => m.link(a, b),
        Op::Unlink(p) => m.unlink(p),
        Op::Fsync(p) => m.exists(p),
        Op::Sync => true,
    }
}

/// Whether a file-system result agrees with the model's `ok`: `Ok(true)`
/// both succeeded, `Ok(false)` both refused (for an ordinary reason).
pub fn agree(op: &Op, fs_res: &Result<(), FsError>, ok: bool) -> Result<bool, String> {
    match (fs_res, ok) {
        (Ok(()), true) => Ok(true),
        (Err(e), false) if !matches!(e, FsError::Refused(_) | FsError::Corrupt(_) | FsError::Stuck) => Ok(false),
        _ => Err(format!("{op}: file system {fs_res:?}, model ok={ok}")),
    }
}

/// Applies `op` (the `seq`-th operation of the run) to the file system and
/// the model; `Err` if they disagree on success.
pub fn apply<D: Disk>(fs: &mut Fs<D>, m: &mut Model, op: &Op, seq: usize) -> Result<bool, String> {
    let fs_res = op.cmd(seq).run(fs);
    let ok = model_apply(m, op, seq);
    agree(op, &fs_res, ok)
}
