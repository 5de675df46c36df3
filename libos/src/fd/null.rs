//! The null device (`/dev/null`): reads end at once, writes vanish. Opened
//! by its path like a file ([`crate::fs::open_handle`]) and passed to a
//! spawned child by its spec (`null`), so `cmd 2>/dev/null` works for a
//! builtin and a program alike.

use super::File;
use super::IoError;
use alloc::string::String;

/// The path that names it.
pub const PATH: &str = "/dev/null";

/// The null device.
pub struct Null;

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

    fn spec(&self, _child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        Ok(Some(alloc::format!("{}", oxok_fdspec::Spec::Null)))
    }
}
