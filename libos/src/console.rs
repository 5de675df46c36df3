//! The console: `console_write` and blocking keyboard input, and
//! `print!`/`println!`, which write to standard output (descriptor 1).

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
    fd: usize,
}

impl Buffered {
    /// An empty buffer.
    pub const fn new() -> Buffered {
        Buffered::to(crate::fd::STDOUT)
    }

    /// An empty buffer that flushes to descriptor `fd`.
    pub const fn to(fd: usize) -> Buffered {
        Buffered { buf: [0; 256], len: 0, fd }
    }

    /// Sends what is buffered to its descriptor (standard output unless
    /// made with [`Buffered::to`]).
    pub fn flush(&mut self) {
        let _ = crate::fd::write_all(self.fd, &self.buf[..self.len]);
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

#[doc(hidden)]
pub fn _eprint(args: fmt::Arguments<'_>) {
    let mut b = Buffered::to(crate::fd::STDERR);
    let _ = b.write_fmt(args);
    b.flush();
}

/// Prints to standard error (descriptor 2).
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::console::_eprint(format_args!($($arg)*)) };
}

/// Prints a line to standard error.
#[macro_export]
macro_rules! eprintln {
    () => { $crate::eprint!("\n") };
    ($($arg:tt)*) => { $crate::console::_eprint(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Prints to standard output.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::_print(format_args!($($arg)*)) };
}

/// Prints a line to standard output.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::console::_print(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Copies the console input already received, up to `buf.len()` bytes,
/// without taking it (`console_peek`): it stays for the next read.
pub fn peek(buf: &mut [u8]) -> Result<usize, crate::Error> {
    let len = buf.len().min(oxok_abi::CONSOLE_WRITE_MAX as usize);
    crate::vm::prepare_write(&mut buf[..len]);
    let [n] = crate::sys::console_peek(buf.as_mut_ptr() as u64, len as u64)?;
    Ok(n as usize)
}

/// Takes the console input already received, up to `buf.len()` bytes,
/// without waiting; 0 when there is none.
pub fn try_read(buf: &mut [u8]) -> Result<usize, crate::Error> {
    let len = buf.len().min(oxok_abi::CONSOLE_WRITE_MAX as usize);
    crate::vm::prepare_write(&mut buf[..len]);
    let [n] = crate::sys::console_read(buf.as_mut_ptr() as u64, len as u64)?;
    Ok(n as usize)
}

/// The count of console bytes ever received (the system-information page),
/// and its address, for wakeup predicates that wait for typing.
pub fn received() -> (u64, u64) {
    use oxok_abi::layout::{SYSINFO, SysInfo};
    let counter = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
    (counter, crate::exposed::sysinfo().map_or(0, |i| i.console_in))
}

/// The wakeup-predicate index the console reserves for blocking reads.
pub const INPUT_PRED: u64 = 2;

/// Reads console input into `buf`, sleeping until at least one byte is
/// there; returns how many bytes were read.
///
/// The count of bytes ever received is read *before* trying, and the sleep
/// waits for it to move past that value, so input arriving in between is
/// never missed. Uses wakeup-predicate index [`INPUT_PRED`].
pub fn read(buf: &mut [u8]) -> Result<usize, crate::Error> {
    use oxok_abi::layout::{SYSINFO, SysInfo};
    let len = buf.len().min(oxok_abi::CONSOLE_WRITE_MAX as usize);
    crate::vm::prepare_write(&mut buf[..len]);
    let counter = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
    let mut installed = false;
    loop {
        let seen = crate::exposed::sysinfo().map_or(0, |i| i.console_in);
        let [n] = crate::sys::console_read(buf.as_mut_ptr() as u64, len as u64)?;
        if n > 0 || len == 0 {
            return Ok(n as usize);
        }
        if !installed {
            let mut b = oxok_pred::Builder::new();
            b.load_u64(counter).ne_param(0);
            let code = b.build().map_err(|_| crate::Error::Invalid)?;
            let bytes = code.as_bytes();
            crate::pred::install(INPUT_PRED, bytes)?;
            installed = true;
        }
        crate::sys::pred_param(0, INPUT_PRED, 0, seen)?;
        crate::sys::env_sleep(1 << INPUT_PRED)?;
    }
}
