//! The device files a Linux program expects: `/dev/null` (the libOS's,
//! `oxok_libos::fd::null`), `/dev/zero`,
//! `/dev/urandom` (and `/dev/random`), `/dev/tty` (the console), as
//! descriptor objects of the libOS's table; and `/boot/NAME`, the boot
//! archive's file NAME, read-only (how a test suite packed into the
//! archive reaches a Linux program: `busybox tar xf /boot/bbsuite.tar`),
//! as are its programs where the file server has nothing by their names.

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::fd::{File, Handle, IoError, SeekFrom};

/// Reads give zeros, writes vanish.
struct Zero;
/// Reads give random bytes, writes vanish.
struct Random;

impl File for Zero {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        buf.fill(0);
        Ok(buf.len())
    }
    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        Ok(buf.len())
    }
    fn kind(&self) -> &'static str {
        "zero"
    }
}

impl File for Random {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        crate::random::fill(buf);
        Ok(buf.len())
    }
    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        Ok(buf.len())
    }
    fn kind(&self) -> &'static str {
        "random"
    }
}

/// A file of the boot archive: reads from the position on, seekable,
/// writes refused.
struct BootFile {
    data: &'static [u8],
    pos: AtomicU64,
}

impl File for BootFile {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        let pos = (self.pos.load(Ordering::Relaxed) as usize).min(self.data.len());
        let n = buf.len().min(self.data.len() - pos);
        buf[..n].copy_from_slice(&self.data[pos..pos + n]);
        self.pos.store((pos + n) as u64, Ordering::Relaxed);
        Ok(n)
    }
    fn write(&self, _: &[u8]) -> Result<usize, IoError> {
        Err(IoError::Unsupported)
    }
    fn seek(&self, to: SeekFrom) -> Result<u64, IoError> {
        let base = |b: u64, d: i64| b.checked_add_signed(d).ok_or(IoError::Invalid);
        let new = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(d) => base(self.pos.load(Ordering::Relaxed), d)?,
            SeekFrom::End(d) => base(self.data.len() as u64, d)?,
        };
        self.pos.store(new, Ordering::Relaxed);
        Ok(new)
    }
    fn kind(&self) -> &'static str {
        "boot"
    }
}

/// The boot archive's file that `/boot/NAME` names, if there is one, or
/// `/proc/mounts`.
pub fn boot_file(path: &str) -> Option<&'static [u8]> {
    if path == "/proc/mounts" || path == "/proc/self/mounts" {
        return Some(mounts());
    }
    let name = path.strip_prefix("/boot/").filter(|n| !n.is_empty() && !n.contains('/'))?;
    oxok_libos::exec::program(name)
}

/// `/proc/mounts`: the file systems the libOS routes paths to — the
/// disk's C-FFS at `/` and the RAM file system at `/tmp` when there is a
/// disk, else the RAM file system at `/` — as `df` and `mount` read it.
fn mounts() -> &'static [u8] {
    if oxok_libos::fs::locate::disk_server().is_some() {
        b"c-ffs / c-ffs rw 0 0\nramfs /tmp ramfs rw 0 0\n"
    } else {
        b"ramfs / ramfs rw 0 0\n"
    }
}

/// A device's major and minor number, as Linux numbers them.
pub fn rdev(kind: &str) -> Option<(u64, u64)> {
    match kind {
        "null" => Some((1, 3)),
        "zero" => Some((1, 5)),
        "random" => Some((1, 9)),
        "console" => Some((5, 1)),
        _ => None,
    }
}

/// The object for device path `path`, if it is one.
pub fn open(path: &str) -> Option<Handle> {
    // Every path below lies under one of these (most opens are of none).
    if !["/dev/", "/proc/", "/boot/"].iter().any(|d| path.starts_with(d)) {
        return None;
    }
    let obj: alloc::sync::Arc<dyn File> = match path {
        "/dev/null" => alloc::sync::Arc::new(oxok_libos::fd::null::Null),
        "/dev/zero" => alloc::sync::Arc::new(Zero),
        "/dev/urandom" | "/dev/random" => alloc::sync::Arc::new(Random),
        "/dev/tty" | "/dev/console" => return Some(Handle::Console),
        _ => alloc::sync::Arc::new(BootFile { data: boot_file(path)?, pos: AtomicU64::new(0) }),
    };
    Some(Handle::Object(obj))
}

/// A program of the boot archive that `path` names where `execve` finds
/// it (`/bin/NAME` and the like), as a read-only file: `cp /bin/busybox`,
/// a program reading its own `/proc/self/exe`.
pub fn open_program(path: &str) -> Option<Handle> {
    let data = crate::calls::exec::archive_program(path)?;
    Some(Handle::Object(alloc::sync::Arc::new(BootFile { data, pos: AtomicU64::new(0) })))
}

/// The kind of device path `path` (for `stat`).
pub fn kind_of(path: &str) -> Option<&'static str> {
    match path {
        "/dev/null" => Some("null"),
        "/dev/zero" => Some("zero"),
        "/dev/urandom" | "/dev/random" => Some("random"),
        "/dev/tty" | "/dev/console" => Some("console"),
        _ => None,
    }
}
