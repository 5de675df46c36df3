//! Kernel lines on the console only at its line boundaries.
//!
//! Programs (`console_write`) and the kernel (the log, `kprintln!`) share
//! COM1. A kernel line written while a program's line is open — a prompt,
//! a line written in pieces — would cut that line in two (`oxok$ [info] env
//! 12 (sleep) exited…` and the echo of the command on the next line). So
//! the kernel keeps its whole lines back while a program's line is open and
//! writes them after the program's next newline. They are written anyway,
//! after a newline of their own, when the open line has waited
//! [`HOLD_MS`] milliseconds (a prompt nobody answers), when they fill the
//! holding buffer, and before the machine halts; the panic path writes at
//! once (after a newline, if a line is open) and never waits for the lock.

use crate::arch::serial;
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use spin::Mutex;

/// Milliseconds a program's open line keeps kernel lines back.
pub const HOLD_MS: u64 = 2000;
/// Bytes of kernel lines kept back at most.
const HELD_BYTES: usize = 8192;
/// Longest kernel line; a longer one is cut and ends with `…`.
const LINE_MAX: usize = 512;

/// The last byte a program wrote was not a newline.
static OPEN: AtomicBool = AtomicBool::new(false);
/// Tick at which the first held line was kept back.
static HELD_SINCE: AtomicU64 = AtomicU64::new(0);

struct Held {
    bytes: [u8; HELD_BYTES],
    len: usize,
}

static HELD: Mutex<Held> = Mutex::new(Held { bytes: [0; HELD_BYTES], len: 0 });

impl Held {
    /// Writes what is held; after a newline if a program's line is open.
    fn flush(&mut self) {
        if self.len == 0 {
            return;
        }
        if OPEN.swap(false, Relaxed) {
            serial::write(b"\n");
        }
        serial::write(&self.bytes[..self.len]);
        self.len = 0;
    }
}

/// A program's bytes for the console: written, and the kernel lines held
/// meanwhile go out right after its last newline.
pub fn program_write(bytes: &[u8]) {
    let Some(&last) = bytes.last() else { return };
    let mut held = HELD.lock();
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(nl) if held.len > 0 => {
            serial::write(&bytes[..=nl]);
            OPEN.store(false, Relaxed);
            held.flush();
            serial::write(&bytes[nl + 1..]);
        }
        _ => serial::write(bytes),
    }
    OPEN.store(last != b'\n', Relaxed);
}

/// One whole kernel line (`\n` included): written now, or held while a
/// program's line is open.
fn kernel_line(line: &[u8]) {
    let mut held = HELD.lock();
    if !OPEN.load(Relaxed) {
        held.flush();
        serial::write(line);
        return;
    }
    if held.len + line.len() > HELD_BYTES {
        held.flush();
        serial::write(line);
        return;
    }
    if held.len == 0 {
        HELD_SINCE.store(crate::timer::ticks(), Relaxed);
    }
    let at = held.len;
    held.bytes[at..at + line.len()].copy_from_slice(line);
    held.len += line.len();
}

/// On each timer tick: held lines that waited long enough go out.
pub fn tick(now: u64) {
    if let Some(mut held) = HELD.try_lock()
        && held.len > 0
        && now.wrapping_sub(HELD_SINCE.load(Relaxed)) >= crate::timer::ms_to_ticks(HOLD_MS)
    {
        held.flush();
    }
}

/// Before the machine halts: everything held goes out.
pub fn flush() {
    if let Some(mut held) = HELD.try_lock() {
        held.flush();
    }
}

/// The panic path: an open line is ended, what is held goes out if the lock
/// is free, and the report is written directly ([`Direct`]).
pub fn panic_begin() {
    flush();
    if OPEN.swap(false, Relaxed) {
        serial::write(b"\n");
    }
}

/// A `fmt::Write` that collects one kernel line and hands it over whole on
/// drop ([`Line::new`] … `writeln!`).
pub struct Line {
    buf: [u8; LINE_MAX],
    len: usize,
    cut: bool,
}

impl Line {
    /// An empty line.
    pub fn new() -> Line {
        Line { buf: [0; LINE_MAX], len: 0, cut: false }
    }
}

impl Default for Line {
    fn default() -> Line {
        Line::new()
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = LINE_MAX - 4 - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        self.cut |= n < s.len();
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if self.cut {
            // `…` and the newline the cut took (4 bytes are kept for them).
            let end = "…\n".as_bytes();
            self.buf[self.len..self.len + end.len()].copy_from_slice(end);
            self.len += end.len();
        }
        kernel_line(&self.buf[..self.len]);
    }
}

/// Writes straight to the port (the panic report; nothing held, no lock).
pub struct Direct;

impl Write for Direct {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        serial::write(s.as_bytes());
        Ok(())
    }
}
