//! A line editor for a serial terminal, with no I/O of its own.
//!
//! The table of keys is on [`LineEditor`].

use alloc::string::String;
use alloc::vec::Vec;

use crate::history::History;

/// What a byte completed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// Enter: the finished line (without the line ending).
    Line(String),
    /// `^C`: the line was discarded.
    Cancel,
    /// `^D` on an empty line: end of input.
    Eof,
    /// Enter on a line that did not fit: it is discarded whole (never cut
    /// and run); `typed` is how many bytes were typed for it.
    TooLong {
        /// Bytes typed for the line, the refused ones included.
        typed: usize,
    },
}

/// Where we are in an escape sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    /// After ESC.
    Start,
    /// After `ESC [`: parameter and intermediate bytes until a final byte.
    Csi,
    /// After `ESC O`: one final byte.
    Ss3,
}

const BELL: u8 = 0x07;
const ERASE: &[u8] = b"\x08 \x08";

/// The editing state of one terminal.
///
/// Feed it the bytes read from the terminal one at a time with
/// [`LineEditor::feed`]; it appends to `out` what must be written back
/// (echo, erasing, bells) and returns an [`Event`] when a line is finished,
/// cancelled, or at end of input. The caller writes its prompt itself.
///
/// | input | effect |
/// | --- | --- |
/// | printable ASCII, UTF-8 | appended and echoed; a bell (`\x07`) instead if the line would exceed its byte limit |
/// | CR, LF (CR LF counts once) | `\r\n`, [`Event::Line`]; recorded in the history; [`Event::TooLong`] instead if anything was refused for the limit |
/// | BS (`^H`), DEL | erase the last character: `\x08 \x08` |
/// | `^U` | erase the whole line |
/// | `^W` | erase the last word (and the blanks after it) |
/// | `^C` | `^C\r\n`, [`Event::Cancel`]; the line is discarded |
/// | `^D` | [`Event::Eof`] on an empty line; ignored otherwise |
/// | `ESC [ A`, `ESC O A` (up) | replace the line with the previous history entry (bell at the oldest) |
/// | `ESC [ B`, `ESC O B` (down) | the next entry, and after the newest the line being typed before |
/// | other escape sequences | swallowed (left/right arrows too: there is no cursor movement) |
/// | NUL, TAB, other control bytes, invalid UTF-8 | ignored |
///
/// Every character is taken to be one column wide. Lines handed out are
/// valid UTF-8 without control characters, at most `max_len` bytes.
///
/// ```
/// use oxok_shparse::{Event, LineEditor};
///
/// let mut ed = LineEditor::new();
/// let mut echo = Vec::new();
/// let mut events = Vec::new();
/// for &byte in b"lx\x7fs\r\n" {
///     events.extend(ed.feed(byte, &mut echo));
/// }
/// assert_eq!(echo, b"lx\x08 \x08s\r\n");
/// assert_eq!(events, [Event::Line("ls".into())]);
/// ```
#[derive(Clone, Debug)]
pub struct LineEditor {
    line: String,
    max_len: usize,
    /// A UTF-8 sequence being received.
    utf8: [u8; 4],
    utf8_have: usize,
    utf8_need: usize,
    esc: Escape,
    /// The previous byte was CR, so an LF now is its partner.
    after_cr: bool,
    history: History,
    /// Bytes refused for the line limit since the line began.
    refused: usize,
    /// Which history entry is shown (0 = newest), if browsing.
    browse: Option<usize>,
    /// The line being typed when browsing started.
    draft: String,
}

impl Default for LineEditor {
    fn default() -> Self {
        LineEditor::new()
    }
}

impl LineEditor {
    /// The default line limit in bytes.
    pub const DEFAULT_MAX_LEN: usize = 1024;
    /// The default number of history entries.
    pub const DEFAULT_HISTORY: usize = 32;

    /// An editor with the default limits.
    pub fn new() -> LineEditor {
        LineEditor::with_limits(Self::DEFAULT_MAX_LEN, Self::DEFAULT_HISTORY)
    }

    /// An editor accepting lines of at most `max_len` bytes and keeping
    /// `history` entries.
    pub fn with_limits(max_len: usize, history: usize) -> LineEditor {
        LineEditor {
            line: String::new(),
            max_len,
            utf8: [0; 4],
            utf8_have: 0,
            utf8_need: 0,
            esc: Escape::None,
            after_cr: false,
            history: History::new(history),
            refused: 0,
            browse: None,
            draft: String::new(),
        }
    }

    /// The line as typed so far.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The line limit in bytes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The history (for a `history` command).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The history, to add or clear entries.
    pub fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    /// Appends the current line to `out`: after something else wrote to the
    /// terminal, print the prompt and then this.
    pub fn redraw(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.line.as_bytes());
    }

    /// Processes one byte from the terminal, appending what to echo to `out`
    /// (always whole UTF-8 characters, so `out` stays valid UTF-8 and can be
    /// printed as a `str`).
    pub fn feed(&mut self, byte: u8, out: &mut Vec<u8>) -> Option<Event> {
        if core::mem::take(&mut self.after_cr) && byte == b'\n' {
            return None;
        }
        if self.escape(byte, out) {
            return None;
        }
        if self.utf8_need > 0 {
            if byte & 0xc0 == 0x80 {
                self.utf8[self.utf8_have] = byte;
                self.utf8_have += 1;
                if self.utf8_have == self.utf8_need {
                    self.utf8_need = 0;
                    let bytes = self.utf8;
                    if let Ok(s) = core::str::from_utf8(&bytes[..self.utf8_have]) {
                        self.insert(s, out);
                    }
                }
                return None;
            }
            self.utf8_need = 0; // broken sequence: drop it, handle this byte afresh
        }
        match byte {
            b'\r' | b'\n' => {
                self.after_cr = byte == b'\r';
                out.extend_from_slice(b"\r\n");
                let line = core::mem::take(&mut self.line);
                self.end_browsing();
                let refused = core::mem::take(&mut self.refused);
                if refused > 0 {
                    return Some(Event::TooLong { typed: line.len() + refused });
                }
                self.history.push(&line);
                return Some(Event::Line(line));
            }
            0x03 => {
                out.extend_from_slice(b"^C\r\n");
                self.line.clear();
                self.refused = 0;
                self.end_browsing();
                return Some(Event::Cancel);
            }
            0x04 if self.line.is_empty() => return Some(Event::Eof),
            0x08 | 0x7f => self.erase(1, out),
            0x15 => self.erase(usize::MAX, out),
            0x17 => {
                let trimmed = self.line.trim_end_matches(' ');
                let word = trimmed.len() - trimmed.trim_end_matches(|c| c != ' ').len();
                let n = self.line[trimmed.len() - word..].chars().count();
                self.erase(n, out);
            }
            0x1b => self.esc = Escape::Start,
            0x20..=0x7e => {
                let buf = [byte];
                // ASCII is valid UTF-8.
                if let Ok(s) = core::str::from_utf8(&buf) {
                    self.insert(s, out);
                }
            }
            0xc2..=0xf4 => {
                self.utf8[0] = byte;
                self.utf8_have = 1;
                self.utf8_need = match byte {
                    0xc2..=0xdf => 2,
                    0xe0..=0xef => 3,
                    _ => 4,
                };
            }
            _ => {}
        }
        None
    }

    /// Handles `byte` if it belongs to an escape sequence; false if it must
    /// be processed as ordinary input.
    fn escape(&mut self, byte: u8, out: &mut Vec<u8>) -> bool {
        match self.esc {
            Escape::None => false,
            Escape::Start => {
                self.esc = match byte {
                    b'[' => Escape::Csi,
                    b'O' => Escape::Ss3,
                    // Not a sequence (Alt+key, or ESC typed alone): drop
                    // the ESC, keep the byte.
                    _ => {
                        self.esc = Escape::None;
                        return false;
                    }
                };
                true
            }
            Escape::Csi | Escape::Ss3 => {
                if self.esc == Escape::Csi && (0x20..=0x3f).contains(&byte) {
                    return true;
                }
                self.esc = Escape::None;
                match byte {
                    b'A' => self.history_step(true, out),
                    b'B' => self.history_step(false, out),
                    0x40..=0x7e => {}
                    // A control byte (Enter, ^C, ...) aborts the sequence
                    // and counts as itself.
                    _ => return false,
                }
                true
            }
        }
    }

    /// Appends `s` (one character) if it is not a control character and fits.
    fn insert(&mut self, s: &str, out: &mut Vec<u8>) {
        if s.chars().any(char::is_control) {
            return;
        }
        if self.line.len() + s.len() > self.max_len {
            out.push(BELL);
            self.refused += s.len();
            return;
        }
        self.line.push_str(s);
        out.extend_from_slice(s.as_bytes());
    }

    /// Erases up to `n` characters from the end.
    fn erase(&mut self, n: usize, out: &mut Vec<u8>) {
        for _ in 0..n {
            if self.line.pop().is_none() {
                break;
            }
            out.extend_from_slice(ERASE);
        }
    }

    /// Up (`older`) or down the history.
    fn history_step(&mut self, older: bool, out: &mut Vec<u8>) {
        let target = match (older, self.browse) {
            (true, None) => Some(0),
            (true, Some(i)) => Some(i + 1),
            (false, None) => return,
            (false, Some(0)) => None,
            (false, Some(i)) => Some(i - 1),
        };
        let text = match target {
            Some(i) => match self.history.recent(i) {
                Some(text) => String::from(text),
                None => {
                    out.push(BELL);
                    return;
                }
            },
            None => core::mem::take(&mut self.draft),
        };
        if self.browse.is_none() {
            self.draft = core::mem::take(&mut self.line);
            self.erase_shown(self.draft.chars().count(), out);
        } else {
            self.erase(usize::MAX, out);
        }
        self.browse = target;
        self.line = text;
        let mut end = self.line.len().min(self.max_len);
        while !self.line.is_char_boundary(end) {
            end -= 1;
        }
        self.line.truncate(end);
        out.extend_from_slice(self.line.as_bytes());
    }

    /// Writes the erasure of `n` characters already removed from the line.
    fn erase_shown(&self, n: usize, out: &mut Vec<u8>) {
        for _ in 0..n {
            out.extend_from_slice(ERASE);
        }
    }

    fn end_browsing(&mut self) {
        self.browse = None;
        self.draft.clear();
    }
}
