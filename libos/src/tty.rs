//! The terminal: this process's line discipline over the console
//! (`oxok_tty`), which `read` on a console descriptor goes through.
//!
//! The kernel only moves bytes from the serial port into a ring and counts
//! them (`console_read`, `SysInfo::console_in`); what the keys mean is this
//! library's policy, per process, as everything else in ExOS:
//!
//! * **Canonical mode** (the default, [`Termios::sane`]): a read returns one
//!   line, typed with echo, erase (DEL or backspace), kill (`^U`), word
//!   erase (`^W`); Enter's CR becomes NL; `^D` on an empty line is the end
//!   of input (the read returns 0), after text it hands the text over.
//! * **Raw mode** ([`Termios::make_raw`]): bytes are handed over as they
//!   come, unechoed — the shell's line editor and full-screen programs.
//! * **Signal keys** (`ISIG`): `^C` raises `SIGINT`, `^\` `SIGQUIT`, `^Z`
//!   `SIGTSTP` in this process (the default action ends it with status
//!   128 + signal; [`crate::signal`] can catch or ignore them).
//!
//! Settings are read and changed with [`get`] and [`set`], whose structure
//! is Linux's `TCGETS`/`TCSETS` one, so a Linux personality can map those
//! `ioctl`s onto them. A program started by the shell in the foreground
//! reads a pipe the shell feeds instead (the shell runs the same discipline
//! for it and turns `^C` into `SIGINT` for the whole job); its settings here
//! then apply only to reads it makes of the console itself.

use crate::console;
use oxok_tty::{Discipline, Ready};
use spin::Mutex;

pub use oxok_tty::{SIGINT, SIGQUIT, SIGTSTP, Termios};

/// Raw bytes read from the console and not yet fed to the discipline.
const RAW: usize = 64;

struct Tty {
    termios: Termios,
    disc: Discipline,
    /// How much of a completed line earlier reads already returned.
    taken: usize,
    raw: [u8; RAW],
    raw_start: usize,
    raw_end: usize,
    /// `^D` on an empty line, seen by [`ready`] and not yet returned.
    eof_pending: bool,
}

static TTY: Mutex<Tty> = Mutex::new(Tty {
    termios: Termios::sane(),
    disc: Discipline::new(),
    taken: 0,
    raw: [0; RAW],
    raw_start: 0,
    raw_end: 0,
    eof_pending: false,
});

/// This process's terminal settings (`TCGETS`).
pub fn get() -> Termios {
    TTY.lock().termios
}

/// Changes this process's terminal settings (`TCSETS`). Input typed under
/// the old settings and not read yet is kept.
pub fn set(t: &Termios) {
    TTY.lock().termios = *t;
}

/// Switches this process's console to raw mode; returns the settings before.
pub fn raw() -> Termios {
    let mut tty = TTY.lock();
    let before = tty.termios;
    tty.termios.make_raw();
    before
}

/// What one pass over buffered bytes produced.
enum Step {
    /// `n` bytes were copied into the caller's buffer.
    Data(usize),
    /// End of input.
    Eof,
    /// A signal key.
    Signal(i32),
    /// Nothing yet: more raw bytes are needed.
    More,
}

/// Reads from the console through the line discipline (see the module
/// documentation): a line in canonical mode, the bytes there are in raw
/// mode; 0 at end of input. Blocks until then.
pub fn read(buf: &mut [u8]) -> Result<usize, crate::Error> {
    if buf.is_empty() {
        return Ok(0);
    }
    loop {
        let mut echo = EchoBuf::default();
        let step = TTY.lock().step(buf, &mut echo);
        echo.flush();
        match step {
            Step::Data(n) => return Ok(n),
            Step::Eof => return Ok(0),
            Step::Signal(sig) => {
                // Ends the process by default; if caught or ignored, go on.
                let _ = crate::signal::raise(sig);
            }
            Step::More => {
                let mut raw = [0u8; RAW];
                let n = console::read(&mut raw)?;
                let mut tty = TTY.lock();
                tty.raw[..n].copy_from_slice(&raw[..n]);
                tty.raw_start = 0;
                tty.raw_end = n;
            }
        }
    }
}

/// Whether a [`read`] would return without waiting: takes what was typed
/// (without waiting) and runs it through the discipline as `read` does —
/// echo, and signal keys raised here — until a line is complete in
/// canonical mode, or a byte is there in raw mode, or the end of input.
/// Readiness as Linux's `poll` reports it on a terminal; a caller that
/// must not block in `read` (to let a signal end its wait) waits for
/// typing ([`crate::console::received`]) until this says yes.
pub fn ready() -> bool {
    loop {
        let mut echo = EchoBuf::default();
        let step = TTY.lock().pump(&mut echo);
        echo.flush();
        match step {
            Pump::Ready => return true,
            Pump::Signal(sig) => {
                let _ = crate::signal::raise(sig);
            }
            Pump::Empty => {
                let mut raw = [0u8; RAW];
                match console::try_read(&mut raw) {
                    Ok(n @ 1..) => {
                        let mut tty = TTY.lock();
                        tty.raw[..n].copy_from_slice(&raw[..n]);
                        tty.raw_start = 0;
                        tty.raw_end = n;
                    }
                    _ => return false,
                }
            }
        }
    }
}

/// What [`Tty::pump`] found.
enum Pump {
    /// A read would return now.
    Ready,
    /// A signal key.
    Signal(i32),
    /// Every raw byte is fed and nothing is ready.
    Empty,
}

impl Tty {
    /// Feeds buffered raw bytes into the discipline until a read would
    /// return (a line, a raw byte, the end of input) or none are left.
    fn pump(&mut self, echo: &mut EchoBuf) -> Pump {
        loop {
            if self.disc.is_ready() || self.eof_pending {
                return Pump::Ready;
            }
            if self.raw_start == self.raw_end {
                return Pump::Empty;
            }
            let b = self.raw[self.raw_start];
            self.raw_start += 1;
            let t = self.termios;
            match self.disc.feed(&t, b, echo) {
                None | Some(Ready::Input) => {}
                Some(Ready::Eof) => {
                    self.eof_pending = true;
                    return Pump::Ready;
                }
                Some(Ready::Signal(sig)) => return Pump::Signal(sig),
            }
        }
    }

    /// Feeds buffered raw bytes until something is ready for the caller.
    fn step(&mut self, buf: &mut [u8], echo: &mut EchoBuf) -> Step {
        let mut copied = 0;
        loop {
            if self.eof_pending && !self.disc.is_ready() {
                self.eof_pending = copied > 0;
                return if copied > 0 { Step::Data(copied) } else { Step::Eof };
            }
            if self.disc.is_ready() {
                let line = self.disc.line();
                let n = (line.len() - self.taken).min(buf.len() - copied);
                buf[copied..copied + n].copy_from_slice(&line[self.taken..self.taken + n]);
                copied += n;
                self.taken += n;
                if self.taken == line.len() {
                    self.disc.consume();
                    self.taken = 0;
                }
                // Canonical: one line per read. Raw: as much as is there.
                if self.termios.local(oxok_tty::ICANON) || copied == buf.len() {
                    return Step::Data(copied);
                }
            }
            if self.raw_start == self.raw_end {
                return if copied > 0 { Step::Data(copied) } else { Step::More };
            }
            let b = self.raw[self.raw_start];
            self.raw_start += 1;
            let t = self.termios;
            match self.disc.feed(&t, b, echo) {
                None | Some(Ready::Input) => {}
                Some(Ready::Eof) if copied == 0 => return Step::Eof,
                Some(Ready::Eof) => return Step::Data(copied),
                Some(Ready::Signal(sig)) => return Step::Signal(sig),
            }
        }
    }
}

/// Echo collected while the state is locked, written after.
#[derive(Default)]
pub struct EchoBuf {
    bytes: alloc::vec::Vec<u8>,
}

impl EchoBuf {
    /// Writes what was collected to the console.
    pub fn flush(&mut self) {
        if !self.bytes.is_empty() {
            let _ = console::write(&self.bytes);
            self.bytes.clear();
        }
    }
}

impl oxok_tty::Echo for EchoBuf {
    fn echo(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }
}
