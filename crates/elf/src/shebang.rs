//! The other format `execve` runs: a script whose first line names its
//! interpreter (`#!/bin/sh -e`), read as Linux's `binfmt_script` reads it.
//!
//! Only the first [`LINE_MAX`] bytes count. After `#!` come optional
//! blanks (spaces and tabs), the interpreter's path up to the next blank,
//! and the rest of the line with its blanks trimmed at both ends as one
//! optional argument (`#!/usr/bin/env python3 -u` passes `python3 -u`
//! whole, as Linux does). A line with no interpreter, or one cut by the
//! limit before its interpreter's path ends, is not runnable (`NoExec`).

/// Bytes of the first line Linux reads (`BINPRM_BUF_SIZE`).
pub const LINE_MAX: usize = 256;

/// A script's first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shebang<'a> {
    /// The interpreter's path, as written.
    pub interpreter: &'a str,
    /// The one optional argument: the rest of the line, trimmed.
    pub arg: Option<&'a str>,
}

/// Why a `#!` line cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoExec;

fn blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `None` if `image` is not a script (it does not start with `#!`); else
/// its interpreter and argument, or [`NoExec`].
pub fn parse(image: &[u8]) -> Option<Result<Shebang<'_>, NoExec>> {
    if !image.starts_with(b"#!") {
        return None;
    }
    let head = &image[2..image.len().min(LINE_MAX)];
    let (line, whole) = match head.iter().position(|&b| b == b'\n') {
        Some(end) => (&head[..end], true),
        None => (head, image.len() <= LINE_MAX),
    };
    // A NUL ends the line too, as it ends the C string Linux scans.
    let line = &line[..line.iter().position(|&b| b == 0).unwrap_or(line.len())];
    let line = &line[line.iter().position(|&b| !blank(b)).unwrap_or(line.len())..];
    let (path, tail) = line.split_at(line.iter().position(|&b| blank(b)).unwrap_or(line.len()));
    // Cut by the limit inside the path: Linux refuses rather than run a
    // truncated name.
    if path.is_empty() || (!whole && tail.is_empty()) {
        return Some(Err(NoExec));
    }
    let tail = trim(tail);
    let (Ok(interpreter), Ok(arg)) = (core::str::from_utf8(path), core::str::from_utf8(tail)) else {
        return Some(Err(NoExec));
    };
    Some(Ok(Shebang { interpreter, arg: (!arg.is_empty()).then_some(arg) }))
}

/// `b` without blanks at either end. A DOS line's `\r` stays, as in
/// Linux (whose "bad interpreter: /bin/sh^M" it is).
fn trim(b: &[u8]) -> &[u8] {
    let keep = |c: &u8| !blank(*c);
    let Some(s) = b.iter().position(keep) else { return &[] };
    let e = b.iter().rposition(keep).map_or(s, |e| e + 1);
    &b[s..e]
}
