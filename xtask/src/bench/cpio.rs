//! A writer for the "newc" cpio format (`070701`), the format Linux unpacks
//! as an initramfs: per entry a 110-byte ASCII header of hexadecimal fields,
//! the NUL-terminated name padded to 4 bytes, the data padded to 4 bytes,
//! and a final `TRAILER!!!` entry.

/// File-type bits of `mode` (as in `st_mode`).
pub(crate) const S_IFDIR: u32 = 0o040000;
pub(crate) const S_IFREG: u32 = 0o100000;
pub(crate) const S_IFLNK: u32 = 0o120000;
pub(crate) const S_IFCHR: u32 = 0o020000;

/// An archive being built in memory.
#[derive(Debug, Default)]
pub(crate) struct Cpio {
    out: Vec<u8>,
    next_inode: u32,
}

impl Cpio {
    /// An empty archive.
    pub(crate) fn new() -> Cpio {
        Cpio { out: Vec::new(), next_inode: 1 }
    }

    /// A directory (no leading `/` in `path`).
    pub(crate) fn dir(&mut self, path: &str) {
        self.entry(path, S_IFDIR | 0o755, 2, (0, 0), b"");
    }

    /// A regular file with permission bits `perm` (e.g. `0o755`).
    pub(crate) fn file(&mut self, path: &str, perm: u32, data: &[u8]) {
        self.entry(path, S_IFREG | (perm & 0o7777), 1, (0, 0), data);
    }

    /// A symbolic link `path` → `target`.
    pub(crate) fn symlink(&mut self, path: &str, target: &str) {
        self.entry(path, S_IFLNK | 0o777, 1, (0, 0), target.as_bytes());
    }

    /// A character device node with the given (major, minor).
    pub(crate) fn char_device(&mut self, path: &str, perm: u32, dev: (u32, u32)) {
        self.entry(path, S_IFCHR | (perm & 0o7777), 1, dev, b"");
    }

    /// Appends the trailer and returns the archive's bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.next_inode = 0;
        self.entry("TRAILER!!!", 0, 1, (0, 0), b"");
        self.out
    }

    fn entry(&mut self, name: &str, mode: u32, nlink: u32, rdev: (u32, u32), data: &[u8]) {
        let inode = self.next_inode;
        if inode != 0 {
            self.next_inode += 1;
        }
        let fields = [
            inode,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: fixed, so equal inputs give equal archives
            data.len() as u32,
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check
        ];
        self.out.extend_from_slice(b"070701");
        for f in fields {
            self.out.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.pad();
        self.out.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back (name, mode, data) of every entry, checking the layout.
    fn entries(mut a: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut v = Vec::new();
        let total = a.len();
        loop {
            assert_eq!(&a[..6], b"070701");
            let field = |i: usize| {
                let s = std::str::from_utf8(&a[6 + i * 8..14 + i * 8]).unwrap();
                u32::from_str_radix(s, 16).unwrap() as usize
            };
            let (mode, size, namesize) = (field(1), field(6), field(11));
            let name = std::str::from_utf8(&a[110..110 + namesize - 1]).unwrap().to_string();
            assert_eq!(a[110 + namesize - 1], 0);
            let data_at = (110 + namesize).next_multiple_of(4);
            let data = a[data_at..data_at + size].to_vec();
            a = &a[(data_at + size).next_multiple_of(4)..];
            assert_eq!((total - a.len()) % 4, 0);
            if name == "TRAILER!!!" {
                assert!(a.is_empty());
                return v;
            }
            v.push((name, mode as u32, data));
        }
    }

    #[test]
    fn round_trips_every_kind_of_entry() {
        let mut c = Cpio::new();
        c.dir("bin");
        c.file("bin/busybox", 0o755, b"\x7fELF...");
        c.symlink("bin/sh", "busybox");
        c.char_device("dev/console", 0o600, (5, 1));
        c.file("init", 0o755, b"#!/bin/sh\n");
        let bytes = c.finish();
        let e = entries(&bytes);
        let names: Vec<&str> = e.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["bin", "bin/busybox", "bin/sh", "dev/console", "init"]);
        assert_eq!(e[0].1, S_IFDIR | 0o755);
        assert_eq!(e[1], ("bin/busybox".into(), S_IFREG | 0o755, b"\x7fELF...".to_vec()));
        assert_eq!(e[2].2, b"busybox");
        assert_eq!(e[3].1, S_IFCHR | 0o600);
        // The device numbers of dev/console: rdevmajor, rdevminor.
        let header = &bytes[bytes.windows(11).position(|w| w == b"dev/console").unwrap() - 110..];
        assert_eq!(&header[78..94], b"0000000500000001");
    }

    #[test]
    fn identical_inputs_give_identical_archives() {
        let make = || {
            let mut c = Cpio::new();
            c.file("a", 0o644, b"xyz");
            c.finish()
        };
        assert_eq!(make(), make());
        assert_eq!(make().len() % 4, 0);
    }
}
