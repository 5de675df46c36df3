//! Shared helpers for the integration tests: a deterministic PRNG and small
//! conveniences over the file system.

#![allow(dead_code)]

use oxok_ramfs::{Fs, Ino, OpenFlags};

/// xorshift64*: deterministic, seedable, good enough for property tests.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }

    /// A hostile-looking u64: extremes as often as ordinary values.
    pub fn hostile(&mut self) -> u64 {
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

pub const CREATE: OpenFlags =
    OpenFlags { create: true, exclusive: false, truncate: false, directory: false, write: true };
pub const EXCL: OpenFlags = OpenFlags { create: true, exclusive: true, truncate: false, directory: false, write: true };
pub const TRUNC: OpenFlags =
    OpenFlags { create: false, exclusive: false, truncate: true, directory: false, write: true };
pub const READ: OpenFlags =
    OpenFlags { create: false, exclusive: false, truncate: false, directory: false, write: false };
pub const DIRECTORY: OpenFlags =
    OpenFlags { create: false, exclusive: false, truncate: false, directory: true, write: false };

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

pub fn ok(fs: &Fs) {
    if let Err(e) = fs.fsck() {
        panic!("fsck: {e}");
    }
}
