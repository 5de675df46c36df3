//! Reading a line from the serial console with echo and simple editing
//! (backspace, Ctrl-U, Ctrl-C). Input arrives through the libOS's blocking
//! `console::read`, asleep on a wakeup predicate between keystrokes.

use alloc::string::String;
use oxok_libos::{console, print};

/// Longest line.
const MAX: usize = 1024;

/// A line editor over the console.
pub struct Editor {
    pending: [u8; 64],
    start: usize,
    end: usize,
    last_cr: bool,
}

impl Editor {
    /// A fresh editor.
    pub fn new() -> Editor {
        Editor { pending: [0; 64], start: 0, end: 0, last_cr: false }
    }

    fn byte(&mut self) -> Option<u8> {
        if self.start == self.end {
            let n = console::read(&mut self.pending).ok()?;
            self.start = 0;
            self.end = n;
            if n == 0 {
                return None;
            }
        }
        let b = self.pending[self.start];
        self.start += 1;
        Some(b)
    }

    /// The next line (without its end), or `None` on Ctrl-D at the start of
    /// a line or a console error.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        loop {
            let b = self.byte()?;
            let after_cr = core::mem::replace(&mut self.last_cr, b == b'\r');
            match b {
                b'\n' if after_cr => {}
                b'\r' | b'\n' => {
                    print!("\n");
                    return Some(line);
                }
                0x04 if line.is_empty() => return None,
                0x03 => {
                    print!("^C\n");
                    line.clear();
                    return Some(line);
                }
                0x15 => {
                    for _ in 0..line.chars().count() {
                        print!("\x08 \x08");
                    }
                    line.clear();
                }
                0x08 | 0x7f if line.pop().is_some() => print!("\x08 \x08"),
                0x20..=0x7e if line.len() < MAX => {
                    line.push(b as char);
                    print!("{}", b as char);
                }
                _ => {}
            }
        }
    }
}
