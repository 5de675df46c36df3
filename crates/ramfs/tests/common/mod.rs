//! Shared helpers for the integration tests: a deterministic PRNG and small
//! conveniences over the file system.

#![allow(dead_code)]

use oxok_ramfs::{Fs, Ino, OpenFlags};

pub use oxok_testrng::Rng;

/// This crate's distributions on top of the shared generator.
pub trait RngExt {
    fn hostile(&mut self) -> u64;
}

impl RngExt for Rng {
    fn hostile(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => u64::MAX,
            2 => u64::MAX - self.below(5000),
            3 => 1 << self.below(64),
            4 => (1 << self.below(64)) - 1,
            5 => self.below(10_000),
            _ => self.next(),
        }
    }
}

pub const ROOT: Ino = Ino::ROOT;

pub const CREATE: OpenFlags = OpenFlags { create: true, write: true, ..NONE };
pub const EXCL: OpenFlags = OpenFlags { create: true, exclusive: true, write: true, ..NONE };
pub const TRUNC: OpenFlags = OpenFlags { truncate: true, write: true, ..NONE };
pub const READ: OpenFlags = NONE;
pub const DIRECTORY: OpenFlags = OpenFlags { directory: true, ..NONE };
/// No flag at all (`OpenFlags::default()`, usable in constants).
const NONE: OpenFlags = OpenFlags {
    create: false,
    exclusive: false,
    truncate: false,
    directory: false,
    write: false,
    nofollow: false,
    mode: None,
};

/// Creates (or truncates) `path` and writes `data` into it.
pub fn put(fs: &mut Fs, path: &str, data: &[u8]) -> Ino {
    let ino = fs.open(ROOT, path, OpenFlags { truncate: true, ..CREATE }).unwrap();
    assert_eq!(fs.write(ino, 0, data).unwrap(), data.len());
    ino
}

/// A file's whole contents.
pub fn contents(fs: &Fs, ino: Ino) -> Vec<u8> {
    let size = fs.stat(ino).unwrap().size as usize;
    let mut buf = vec![0xAA; size + 7];
    let n = fs.read(ino, 0, &mut buf).unwrap();
    assert_eq!(n, size);
    buf.truncate(n);
    buf
}

/// The names in directory `path`, in readdir order, as strings.
pub fn ls(fs: &Fs, path: &str) -> Vec<String> {
    let ino = fs.lookup(ROOT, path).unwrap();
    fs.readdir(ino).unwrap().into_iter().map(|e| String::from_utf8(e.name).unwrap()).collect()
}

/// The target of the symbolic link `path`, as a string.
pub fn target(fs: &Fs, path: &str) -> String {
    String::from_utf8(fs.readlink(ROOT, path).unwrap()).unwrap()
}

pub fn ok(fs: &Fs) {
    if let Err(e) = fs.fsck() {
        panic!("fsck: {e}");
    }
}
