//! The device files a Linux program expects: `/dev/null`, `/dev/zero`,
//! `/dev/urandom` (and `/dev/random`), `/dev/tty` (the console), as
//! descriptor objects of the libOS's table.

use oxok_libos::fd::{File, Handle, IoError};

/// Reads end at once, writes vanish.
struct Null;
/// Reads give zeros, writes vanish.
struct Zero;
/// Reads give random bytes, writes vanish.
struct Random;

impl File for Null {
    fn read(&self, _: &mut [u8]) -> Result<usize, IoError> {
        Ok(0)
    }
    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        Ok(buf.len())
    }
    fn kind(&self) -> &'static str {
        "null"
    }
}

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
    let obj: alloc::sync::Arc<dyn File> = match path {
        "/dev/null" => alloc::sync::Arc::new(Null),
        "/dev/zero" => alloc::sync::Arc::new(Zero),
        "/dev/urandom" | "/dev/random" => alloc::sync::Arc::new(Random),
        "/dev/tty" | "/dev/console" => return Some(Handle::Console),
        _ => return None,
    };
    Some(Handle::Object(obj))
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
