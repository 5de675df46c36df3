//! The console as a file: writes go to `console_write`, reads block for
//! keyboard input through this process's line discipline (`crate::tty`).

use super::File;
use super::IoError;
use alloc::string::String;

/// The console device.
pub struct Console;

impl File for Console {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        Ok(crate::tty::read(buf)?)
    }

    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        crate::console::write(buf)?;
        Ok(buf.len())
    }

    fn kind(&self) -> &'static str {
        "console"
    }

    fn spec(&self, _child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        Ok(Some(alloc::format!("{}", oxok_fdspec::Spec::Console)))
    }
}
