//! Crash-test scripts: one file-system operation per line of text, the
//! form in which the host hands a workload to a program running on Oxok
//! (`crashrun`), and the one place an operation is carried out on an
//! [`Fs`] (the host harness runs its workloads through [`run`] too).
//!
//! Lines: `create P`, `mkdir P`, `write P OFF LEN SEQ`, `append P LEN SEQ`,
//! `truncate P LEN`, `rename A B`, `link A B`, `unlink P`, `fsync P`,
//! `sync`. Written bytes are [`pattern`]`(SEQ, LEN)`, so both sides know
//! them without sending them.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::{Disk, Fs, FsError};

/// One operation of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `create`.
    Create(String),
    /// `mkdir`.
    Mkdir(String),
    /// `len` bytes of [`pattern`]`(seq, len)` at `off`.
    Write {
        /// The file.
        path: String,
        /// Where.
        off: u64,
        /// How many bytes.
        len: usize,
        /// Whose pattern.
        seq: u64,
    },
    /// `len` bytes of [`pattern`]`(seq, len)` at the end.
    Append {
        /// The file.
        path: String,
        /// How many bytes.
        len: usize,
        /// Whose pattern.
        seq: u64,
    },
    /// `truncate`.
    Truncate(String, u64),
    /// `rename`.
    Rename(String, String),
    /// `link`.
    Link(String, String),
    /// `unlink` (a file or an empty directory).
    Unlink(String),
    /// `fsync`.
    Fsync(String),
    /// `sync`.
    Sync,
}

/// Longest write a script may ask for (a guest buffers it whole).
pub const MAX_LEN: usize = 1 << 16;

/// The bytes the `seq`-th operation writes (distinct per operation, never
/// zero).
pub fn pattern(seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (seq as usize * 37 + i * 7 + i / 4096) as u8 | 1).collect()
}

/// FNV-1a of `bytes`: how a guest reports a file's content.
pub fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl Cmd {
    /// Parses one line (`None` if it is not an operation).
    pub fn parse(line: &str) -> Option<Cmd> {
        let w: Vec<&str> = line.split_ascii_whitespace().collect();
        let path = |s: &&str| s.starts_with('/').then(|| s.to_string());
        let num = |s: &&str| s.parse::<u64>().ok();
        let len = |s: &&str| s.parse::<usize>().ok().filter(|&n| n <= MAX_LEN);
        Some(match w.as_slice() {
            ["create", p] => Cmd::Create(path(p)?),
            ["mkdir", p] => Cmd::Mkdir(path(p)?),
            ["write", p, o, n, s] => Cmd::Write { path: path(p)?, off: num(o)?, len: len(n)?, seq: num(s)? },
            ["append", p, n, s] => Cmd::Append { path: path(p)?, len: len(n)?, seq: num(s)? },
            ["truncate", p, n] => Cmd::Truncate(path(p)?, num(n)?),
            ["rename", a, b] => Cmd::Rename(path(a)?, path(b)?),
            ["link", a, b] => Cmd::Link(path(a)?, path(b)?),
            ["unlink", p] => Cmd::Unlink(path(p)?),
            ["fsync", p] => Cmd::Fsync(path(p)?),
            ["sync"] => Cmd::Sync,
            _ => return None,
        })
    }

    /// The line [`Cmd::parse`] reads back.
    pub fn line(&self) -> String {
        match self {
            Cmd::Create(p) => alloc::format!("create {p}"),
            Cmd::Mkdir(p) => alloc::format!("mkdir {p}"),
            Cmd::Write { path, off, len, seq } => alloc::format!("write {path} {off} {len} {seq}"),
            Cmd::Append { path, len, seq } => alloc::format!("append {path} {len} {seq}"),
            Cmd::Truncate(p, n) => alloc::format!("truncate {p} {n}"),
            Cmd::Rename(a, b) => alloc::format!("rename {a} {b}"),
            Cmd::Link(a, b) => alloc::format!("link {a} {b}"),
            Cmd::Unlink(p) => alloc::format!("unlink {p}"),
            Cmd::Fsync(p) => alloc::format!("fsync {p}"),
            Cmd::Sync => "sync".to_string(),
        }
    }

    /// Carries the operation out on `fs`.
    pub fn run<D: Disk>(&self, fs: &mut Fs<D>) -> Result<(), FsError> {
        match self {
            Cmd::Create(p) => fs.create(p),
            Cmd::Mkdir(p) => fs.mkdir(p),
            Cmd::Write { path, off, len, seq } => fs.write(path, *off, &pattern(*seq, *len)).map(|_| ()),
            Cmd::Append { path, len, seq } => {
                let at = fs.stat(path)?.size;
                fs.write(path, at, &pattern(*seq, *len)).map(|_| ())
            }
            Cmd::Truncate(p, n) => fs.truncate(p, *n),
            Cmd::Rename(a, b) => fs.rename(a, b),
            Cmd::Link(a, b) => fs.link(a, b),
            Cmd::Unlink(p) => fs.unlink(p),
            Cmd::Fsync(p) => fs.fsync(p),
            Cmd::Sync => fs.sync(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back() {
        let all = [
            Cmd::Create("/w1/n".into()),
            Cmd::Mkdir("/w1/B".into()),
            Cmd::Write { path: "/w1/A/f".into(), off: 4000, len: 300, seq: 7 },
            Cmd::Append { path: "/g".into(), len: 10, seq: 3 },
            Cmd::Truncate("/g".into(), 0),
            Cmd::Rename("/a".into(), "/b".into()),
            Cmd::Link("/a".into(), "/l".into()),
            Cmd::Unlink("/a".into()),
            Cmd::Fsync("/A".into()),
            Cmd::Sync,
        ];
        for c in all {
            assert_eq!(Cmd::parse(&c.line()), Some(c.clone()), "{}", c.line());
        }
    }

    #[test]
    fn bad_lines_are_refused() {
        for l in [
            "",
            "create",
            "create rel",
            "write /a 1 2",
            "write /a x 2 3",
            "append /a 99999999 1",
            "sync now",
            "format /",
        ] {
            assert_eq!(Cmd::parse(l), None, "{l}");
        }
    }

    #[test]
    fn patterns_differ_per_operation_and_hash_sees_it() {
        assert_ne!(pattern(1, 64), pattern(2, 64));
        assert!(pattern(5, 9000).iter().all(|&b| b != 0));
        assert_ne!(hash(&pattern(1, 64)), hash(&pattern(2, 64)));
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
    }
}
