//! A terminal line discipline: what a Unix tty driver does between the
//! keyboard and a program's `read`, as a pure state machine the libOS runs
//! (`oxok_libos::tty`) and the shell runs for its foreground jobs.
//!
//! * [`Termios`] is the settings structure, laid out and numbered like
//!   Linux's kernel `struct termios` (the one `ioctl(TCGETS/TCSETS)` copies),
//!   so a Linux personality can hand a program's settings over unchanged.
//! * [`Discipline`] takes typed bytes one at a time ([`Discipline::feed`])
//!   and says what happened: nothing yet, a line is ready (canonical mode),
//!   bytes are ready (raw mode), end of input (`^D` on an empty line), or a
//!   signal key (`^C` → `SIGINT`, `^\` → `SIGQUIT`, `^Z` → `SIGTSTP`). What
//!   should appear on the screen (the echo) is written to a caller's buffer.
//!
//! Canonical mode (`ICANON`): input is collected into a line of at most
//! [`LINE_MAX`] bytes, edited with erase (`VERASE`, and backspace `^H`),
//! kill (`VKILL`, `^U`) and word erase (`VWERASE`, `^W`, with `IEXTEN`),
//! and handed over when a newline arrives (`ICRNL` turns the Enter key's CR
//! into one) or `VEOF` (`^D`) is typed after some text. Bytes beyond
//! [`LINE_MAX`] are refused (rung as a bell when echoing) rather than cut
//! into a second line. Output processing (`ONLCR`) is the kernel's serial
//! driver's: it sends CR before every NL.
#![no_std]

/// Control characters in [`Termios::cc`] (Linux's `NCCS` for `TCGETS`).
pub const NCCS: usize = 19;
/// Longest canonical line, the newline included (Linux's `N_TTY_BUF_SIZE`).
pub const LINE_MAX: usize = 4096;

/// `ioctl` request numbers of the Linux interface these settings follow.
pub const TCGETS: u32 = 0x5401;
/// Set now.
pub const TCSETS: u32 = 0x5402;
/// Set after output drains (the same here: output is synchronous).
pub const TCSETSW: u32 = 0x5403;
/// Set after output drains, discarding pending input.
pub const TCSETSF: u32 = 0x5404;

// c_iflag
/// Ignore CR.
pub const IGNCR: u32 = 0o200;
/// CR → NL on input.
pub const ICRNL: u32 = 0o400;
/// NL → CR on input.
pub const INLCR: u32 = 0o100;
/// Strip the eighth bit.
pub const ISTRIP: u32 = 0o40;
/// Start/stop output with ^Q/^S (accepted, not acted on).
pub const IXON: u32 = 0o2000;
// c_oflag
/// Output processing.
pub const OPOST: u32 = 0o1;
/// NL → CR NL on output (done by the kernel's serial driver).
pub const ONLCR: u32 = 0o4;
// c_cflag
/// Eight bits per character.
pub const CS8: u32 = 0o60;
/// The receiver is on.
pub const CREAD: u32 = 0o200;
// c_lflag
/// Signal keys (`VINTR`, `VQUIT`, `VSUSP`) send signals.
pub const ISIG: u32 = 0o1;
/// Canonical (line-at-a-time) input.
pub const ICANON: u32 = 0o2;
/// Echo input.
pub const ECHO: u32 = 0o10;
/// Erase visibly (`\b \b`).
pub const ECHOE: u32 = 0o20;
/// Echo NL after a kill.
pub const ECHOK: u32 = 0o40;
/// Echo NL even without `ECHO`.
pub const ECHONL: u32 = 0o100;
/// Do not discard the line when a signal key is typed.
pub const NOFLSH: u32 = 0o200;
/// Echo control characters as `^X`.
pub const ECHOCTL: u32 = 0o1000;
/// Kill erases the line visibly.
pub const ECHOKE: u32 = 0o4000;
/// Extensions (`VWERASE`).
pub const IEXTEN: u32 = 0o100000;

// c_cc indices
/// Interrupt: `^C`.
pub const VINTR: usize = 0;
/// Quit: `^\`.
pub const VQUIT: usize = 1;
/// Erase one character: DEL.
pub const VERASE: usize = 2;
/// Erase the line: `^U`.
pub const VKILL: usize = 3;
/// End of input: `^D`.
pub const VEOF: usize = 4;
/// Raw mode: tenths of a second to wait (accepted).
pub const VTIME: usize = 5;
/// Raw mode: bytes to wait for.
pub const VMIN: usize = 6;
/// Suspend: `^Z`.
pub const VSUSP: usize = 10;
/// Erase a word: `^W`.
pub const VWERASE: usize = 14;

/// Signal numbers the keys send (Linux's).
pub const SIGINT: i32 = 2;
/// `^\`.
pub const SIGQUIT: i32 = 3;
/// `^Z`.
pub const SIGTSTP: i32 = 20;

/// Terminal settings, in the layout of Linux's kernel `struct termios`
/// (36 bytes: four flag words, the line discipline number, `NCCS` control
/// characters), which `TCGETS`/`TCSETS` copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Termios {
    /// Input modes (`ICRNL`, `IGNCR`, `INLCR`, `ISTRIP`, `IXON`).
    pub iflag: u32,
    /// Output modes (`OPOST`, `ONLCR`).
    pub oflag: u32,
    /// Control modes (`CS8`, `CREAD`).
    pub cflag: u32,
    /// Local modes (`ISIG`, `ICANON`, `ECHO`, `ECHOE`, `ECHOK`, `ECHOCTL`, …).
    pub lflag: u32,
    /// Line discipline number (0, N_TTY).
    pub line: u8,
    /// Control characters, indexed by `VINTR`, `VERASE`, …; 0 disables one.
    pub cc: [u8; NCCS],
}

const _: () = assert!(core::mem::size_of::<Termios>() == 36);

impl Termios {
    /// A fresh terminal's settings (Linux's `stty sane`): canonical, echo,
    /// signal keys, CR → NL.
    pub const fn sane() -> Termios {
        let mut cc = [0u8; NCCS];
        cc[VINTR] = 0x03;
        cc[VQUIT] = 0x1c;
        cc[VERASE] = 0x7f;
        cc[VKILL] = 0x15;
        cc[VEOF] = 0x04;
        cc[VMIN] = 1;
        cc[VSUSP] = 0x1a;
        cc[VWERASE] = 0x17;
        Termios {
            iflag: ICRNL | IXON,
            oflag: OPOST | ONLCR,
            cflag: CS8 | CREAD,
            lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
            line: 0,
            cc,
        }
    }

    /// Raw mode, as `cfmakeraw`: no line editing, echo, signal keys or
    /// input translation; every byte is handed over as it arrives.
    pub fn make_raw(&mut self) {
        self.iflag &= !(IGNCR | ICRNL | INLCR | ISTRIP | IXON);
        self.oflag &= !OPOST;
        self.lflag &= !(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
        self.cflag |= CS8;
        self.cc[VMIN] = 1;
        self.cc[VTIME] = 0;
    }

    /// Whether the `lflag` bit(s) `f` are all set.
    pub const fn local(&self, f: u32) -> bool {
        self.lflag & f == f
    }

    /// The settings as the 36 bytes `TCGETS` copies out.
    pub fn to_bytes(&self) -> [u8; 36] {
        let mut b = [0u8; 36];
        for (i, w) in [self.iflag, self.oflag, self.cflag, self.lflag].iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        b[16] = self.line;
        b[17..].copy_from_slice(&self.cc);
        b
    }

    /// Settings from the 36 bytes `TCSETS` copies in.
    pub fn from_bytes(b: &[u8; 36]) -> Termios {
        let w = |i: usize| u32::from_le_bytes([b[i * 4], b[i * 4 + 1], b[i * 4 + 2], b[i * 4 + 3]]);
        let mut cc = [0u8; NCCS];
        cc.copy_from_slice(&b[17..]);
        Termios { iflag: w(0), oflag: w(1), cflag: w(2), lflag: w(3), line: b[16], cc }
    }
}

impl Default for Termios {
    fn default() -> Termios {
        Termios::sane()
    }
}

/// What a typed byte completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    /// Canonical mode: a line (its newline included, unless it ended with
    /// `VEOF`) is ready in [`Discipline::line`]. Raw mode: the byte(s) are.
    Input,
    /// `VEOF` on an empty line: the reader sees end of input.
    Eof,
    /// A signal key: the caller sends this signal to the foreground job.
    Signal(i32),
}

/// Where echo goes: bytes for the screen.
pub trait Echo {
    /// Shows `bytes`.
    fn echo(&mut self, bytes: &[u8]);
}

impl<F: FnMut(&[u8])> Echo for F {
    fn echo(&mut self, bytes: &[u8]) {
        self(bytes)
    }
}

/// The line being typed (canonical mode) or the bytes not yet taken (raw).
pub struct Discipline {
    buf: [u8; LINE_MAX],
    len: usize,
    /// A line (or raw bytes) is complete and waits to be taken.
    ready: bool,
}

impl Default for Discipline {
    fn default() -> Self {
        Self::new()
    }
}

impl Discipline {
    /// Nothing typed.
    pub const fn new() -> Discipline {
        Discipline { buf: [0; LINE_MAX], len: 0, ready: false }
    }

    /// The completed input (after [`Ready::Input`]); empty otherwise.
    pub fn line(&self) -> &[u8] {
        if self.ready { &self.buf[..self.len] } else { &[] }
    }

    /// Forgets the completed input once the caller has taken it.
    pub fn consume(&mut self) {
        if self.ready {
            self.len = 0;
            self.ready = false;
        }
    }

    /// Forgets everything typed and not taken (a signal key from elsewhere).
    pub fn clear(&mut self) {
        self.len = 0;
        self.ready = false;
    }

    /// Whether input is complete and not yet consumed (then [`feed`](Self::feed)
    /// must not be called until it is).
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Bytes of a line being typed (not yet complete).
    pub fn pending(&self) -> usize {
        if self.ready { 0 } else { self.len }
    }

    /// Takes one typed byte under settings `t`; echo goes to `out`.
    pub fn feed(&mut self, t: &Termios, b: u8, out: &mut impl Echo) -> Option<Ready> {
        if self.ready {
            return Some(Ready::Input);
        }
        let mut b = if t.iflag & ISTRIP != 0 { b & 0x7f } else { b };
        if b == b'\r' {
            if t.iflag & IGNCR != 0 {
                return None;
            }
            if t.iflag & ICRNL != 0 {
                b = b'\n';
            }
        } else if b == b'\n' && t.iflag & INLCR != 0 {
            b = b'\r';
        }
        if t.local(ISIG) && b != 0 {
            let sig = if b == t.cc[VINTR] {
                Some(SIGINT)
            } else if b == t.cc[VQUIT] {
                Some(SIGQUIT)
            } else if b == t.cc[VSUSP] {
                Some(SIGTSTP)
            } else {
                None
            };
            if let Some(sig) = sig {
                if t.local(ECHO) {
                    self.echo_char(t, b, out);
                    out.echo(b"\n");
                }
                if !t.local(NOFLSH) {
                    self.len = 0;
                }
                return Some(Ready::Signal(sig));
            }
        }
        if !t.local(ICANON) {
            if t.local(ECHO) {
                out.echo(&[b]);
            }
            self.buf[0] = b;
            self.len = 1;
            self.ready = true;
            return Some(Ready::Input);
        }
        if b != 0 && (b == t.cc[VERASE] || b == 0x08) {
            self.erase(t, 1, out);
            return None;
        }
        if b != 0 && b == t.cc[VKILL] {
            self.erase(t, self.len, out);
            if t.local(ECHOK) && !t.local(ECHOKE) && t.local(ECHO) {
                out.echo(b"\n");
            }
            return None;
        }
        if b != 0 && t.local(IEXTEN) && b == t.cc[VWERASE] {
            let text = &self.buf[..self.len];
            let trailing = text.iter().rev().take_while(|c| c.is_ascii_whitespace()).count();
            let word = text[..self.len - trailing].iter().rev().take_while(|c| !c.is_ascii_whitespace()).count();
            self.erase(t, trailing + word, out);
            return None;
        }
        if b != 0 && b == t.cc[VEOF] {
            if self.len == 0 {
                return Some(Ready::Eof);
            }
            self.ready = true;
            return Some(Ready::Input);
        }
        // Keep room for the newline that ends the line.
        if self.len + 1 >= LINE_MAX && b != b'\n' {
            if t.local(ECHO) {
                out.echo(b"\x07");
            }
            return None;
        }
        self.buf[self.len] = b;
        self.len += 1;
        if t.local(ECHO) {
            self.echo_char(t, b, out);
        } else if b == b'\n' && t.local(ECHONL) {
            out.echo(b"\n");
        }
        if b == b'\n' {
            self.ready = true;
            return Some(Ready::Input);
        }
        None
    }

    /// Takes back `n` characters of the line being typed, visibly if set so.
    fn erase(&mut self, t: &Termios, n: usize, out: &mut impl Echo) {
        for _ in 0..n.min(self.len) {
            self.len -= 1;
            let c = self.buf[self.len];
            if t.local(ECHO) && t.local(ECHOE) {
                let width = if c < 0x20 && c != b'\t' && t.local(ECHOCTL) { 2 } else { 1 };
                for _ in 0..width {
                    out.echo(b"\x08 \x08");
                }
            }
        }
    }

    /// Echoes `b`: a control character as `^X` under `ECHOCTL`.
    fn echo_char(&self, t: &Termios, b: u8, out: &mut impl Echo) {
        if b < 0x20 && b != b'\n' && b != b'\t' && t.local(ECHOCTL) {
            out.echo(&[b'^', b + 0x40]);
        } else if b == 0x7f && t.local(ECHOCTL) {
            out.echo(b"^?");
        } else {
            out.echo(&[b]);
        }
    }
}

#[cfg(test)]
mod tests;
