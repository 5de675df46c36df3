//! What the tools share: option parsing in the POSIX style (`-l`, `-rf`,
//! `--` ends the options), error lines on standard error, and copying
//! between descriptors. Every tool is a plain client of the file server
//! through `oxok_libos::fs` and of its descriptors through `oxok_libos::fd`,
//! so redirecting it (its fds 0 and 1) needs nothing from it.
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::fd::{self, IoError};
use oxok_libos::{Args, eprintln};

/// A command line split into option letters and operands.
pub struct Command {
    /// The tool's name (for messages).
    pub name: &'static str,
    flags: Vec<char>,
    /// The operands, in order.
    pub operands: Vec<&'static str>,
}

impl Command {
    /// Parses `args`, accepting the option letters in `known`. An unknown
    /// letter prints a usage line naming `usage` and gives `Err(2)`.
    pub fn parse(args: &Args, name: &'static str, known: &str, usage: &str) -> Result<Command, i32> {
        let mut cmd = Command { name, flags: Vec::new(), operands: Vec::new() };
        let mut options = true;
        for arg in args.iter().skip(1) {
            if options && arg == "--" {
                options = false;
            } else if options && arg.len() > 1 && arg.starts_with('-') {
                for c in arg.chars().skip(1) {
                    if !known.contains(c) {
                        eprintln!("{name}: unknown option -{c}");
                        eprintln!("usage: {name} {usage}");
                        return Err(2);
                    }
                    cmd.flags.push(c);
                }
            } else {
                options = false;
                cmd.operands.push(arg);
            }
        }
        Ok(cmd)
    }

    /// True if option `c` was given.
    pub fn has(&self, c: char) -> bool {
        self.flags.contains(&c)
    }

    /// Prints `name: what: error` on standard error.
    pub fn error(&self, what: &str, e: IoError) {
        eprintln!("{}: {what}: {e}", self.name);
    }
}

/// Copies everything readable from `from` to `to`; feeds `seen` each piece.
pub fn copy(from: usize, to: Option<usize>, mut seen: impl FnMut(&[u8])) -> Result<(), IoError> {
    let mut buf = [0u8; 512];
    loop {
        let n = fd::read(from, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let piece = &buf[..n.min(buf.len())];
        seen(piece);
        if let Some(to) = to {
            fd::write_all(to, piece)?;
        }
    }
}

/// Everything readable from descriptor `from` (until its end).
pub fn read_all(from: usize) -> Result<Vec<u8>, IoError> {
    let mut all = Vec::new();
    copy(from, None, |piece| all.extend_from_slice(piece))?;
    Ok(all)
}

/// Runs `each` on the contents of every operand of `cmd` (`-` or none:
/// standard input), in order; a file that cannot be read is reported and
/// makes the status 1.
pub fn for_each_input(cmd: &Command, mut each: impl FnMut(&str, &[u8])) -> i32 {
    let stdin = ["-"];
    let names: &[&str] = if cmd.operands.is_empty() { &stdin } else { &cmd.operands };
    let mut status = 0;
    for &name in names {
        let data = if name == "-" {
            read_all(fd::STDIN)
        } else {
            oxok_libos::fs::open(name, oxok_libos::fs::OpenFlags::READ).and_then(|f| {
                let r = read_all(f);
                let _ = fd::close(f);
                r
            })
        };
        match data {
            Ok(d) => each(name, &d),
            Err(e) => {
                cmd.error(name, e);
                status = 1;
            }
        }
    }
    status
}

/// Writes `bytes` to standard output; false if it is gone (a closed pipe).
pub fn out(bytes: &[u8]) -> bool {
    fd::write_all(fd::STDOUT, bytes).is_ok()
}

/// Parses a line-counting tool's arguments (`NAME [-n lines] [file...]`,
/// as `head` and `tail` take them): the command with `-n N` removed from its
/// operands, and N (or `default`). `Err(2)` after a usage line.
pub fn parse_counted(args: &Args, name: &'static str, default: usize) -> Result<(Command, usize), i32> {
    let usage = "[-n lines] [file...]";
    let mut cmd = Command::parse(args, name, "n", usage)?;
    if !cmd.has('n') {
        return Ok((cmd, default));
    }
    if cmd.operands.is_empty() {
        eprintln!("{}: -n needs a number", cmd.name);
        eprintln!("usage: {} {usage}", cmd.name);
        return Err(2);
    }
    let n = cmd.operands.remove(0);
    match n.parse() {
        Ok(count) => Ok((cmd, count)),
        Err(_) => {
            eprintln!("{}: {n}: not a number", cmd.name);
            Err(2)
        }
    }
}
