//! The console: `print!`/`println!` over the kernel's `console_write`.

use core::fmt::{self, Write};

/// Writes bytes to the console, all of them or an error.
pub fn write(bytes: &[u8]) -> Result<(), crate::Error> {
    for chunk in bytes.chunks(oxok_abi::CONSOLE_WRITE_MAX as usize) {
        crate::sys::console_write(chunk.as_ptr() as u64, chunk.len() as u64)?;
    }
    Ok(())
}

/// A line buffer: formatting goes into it and leaves in one call (so lines
/// from different environments do not interleave mid-line).
pub struct Buffered {
    buf: [u8; 256],
    len: usize,
}

impl Buffered {
    /// An empty buffer.
    pub const fn new() -> Buffered {
        Buffered { buf: [0; 256], len: 0 }
    }

    /// Sends what is buffered.
    pub fn flush(&mut self) {
        let _ = write(&self.buf[..self.len]);
        self.len = 0;
    }
}

impl Default for Buffered {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for Buffered {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

#[doc(hidden)]
pub fn _print(args: fmt::Arguments<'_>) {
    let mut b = Buffered::new();
    let _ = b.write_fmt(args);
    b.flush();
}

/// Prints to the console.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::_print(format_args!($($arg)*)) };
}

/// Prints a line to the console.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::console::_print(format_args!("{}\n", format_args!($($arg)*))) };
}
