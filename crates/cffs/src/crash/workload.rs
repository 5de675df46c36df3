//! Workloads (ACE's bounded shape): a fixed small tree, then a sequence of
//! up to 3 operations drawn from a pool over a few names — existing files
//! in two directories, new names, a new directory — with write sizes that
//! stay in a block, cross a block boundary, and add a block.

use std::fmt;

use super::model::Model;
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

/// The bytes the `seq`-th operation writes (distinct per operation).
pub fn pattern(seq: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (seq * 37 + i * 7 + i / 4096) as u8 | 1).collect()
}

/// Applies `op` (the `seq`-th of the run) to the file system and the
/// model; `Err` if they disagree on success.
pub fn apply<D: Disk>(fs: &mut Fs<D>, m: &mut Model, op: &Op, seq: usize) -> Result<bool, String> {
    let (fs_res, ok): (Result<(), FsError>, bool) = match *op {
        Op::Create(p) => (fs.create(p), m.create(p)),
        Op::Mkdir(p) => (fs.mkdir(p), m.mkdir(p)),
        Op::Write(p, off, n) => {
            let d = pattern(seq, n);
            (fs.write(p, off, &d).map(|_| ()), m.write(p, off as usize, &d))
        }
        Op::Append(p, n) => {
            let d = pattern(seq, n);
            let at = m.file(p).and_then(|i| m.files.get(i)).map_or(0, |f| f.len());
            let r = match fs.stat(p) {
                Ok(s) => fs.write(p, s.size, &d).map(|_| ()),
                Err(e) => Err(e),
            };
            (r, m.write(p, at, &d))
        }
        Op::Truncate(p, n) => (fs.truncate(p, n), m.truncate(p, n as usize)),
        Op::Rename(a, b) => (fs.rename(a, b), m.rename(a, b)),
        Op::Link(a, b) => (fs.link(a, b), m.link(a, b)),
        Op::Unlink(p) => (fs.unlink(p), m.unlink(p)),
        Op::Fsync(p) => (fs.fsync(p), m.exists(p)),
        Op::Sync => (fs.sync(), true),
    };
    match (&fs_res, ok) {
        (Ok(()), true) => Ok(true),
        (Err(e), false) if !matches!(e, FsError::Refused(_) | FsError::Corrupt(_) | FsError::Stuck) => Ok(false),
        _ => Err(format!("{op}: file system {fs_res:?}, model ok={ok}")),
    }
}
