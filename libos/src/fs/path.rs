//! Paths on the client side: the current directory, kept per process in the
//! environment variable `PWD` (so a child started by `spawn` starts where
//! its parent was), and relative paths made absolute against it.
//!
//! Paths are normalised lexically before they are sent ([`normalize`]:
//! `.`, `..` and repeated slashes resolved by the text alone), as the
//! current directory is. The server follows symbolic links, so a path
//! through one can differ from POSIX's physical walk: `link/..` is the
//! directory holding `link` (as a shell's logical `cd` has it), not the
//! parent of its target, and `file/..` names the file's directory.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::proto::PATH_MAX;
use crate::environ;
use crate::fd::IoError;

/// The variable holding the current directory.
pub const PWD: &str = "PWD";

/// The current directory: `PWD` if it is an absolute path, else `/`.
pub fn cwd() -> String {
    environ::var(PWD).filter(|p| p.starts_with('/')).unwrap_or_else(|| String::from("/"))
}

/// `path` made absolute against the current directory, as written
/// otherwise. `NotFound` for an empty path (as POSIX), `Invalid` for a NUL
/// byte, `Invalid` if the result is [`PATH_MAX`] bytes or longer.
pub fn absolute(path: &str) -> Result<String, IoError> {
    if path.is_empty() {
        return Err(IoError::NotFound);
    }
    if path.contains('\0') {
        return Err(IoError::Invalid);
    }
    let full = if path.starts_with('/') {
        String::from(path)
    } else {
        let mut base = cwd();
        if !base.ends_with('/') {
            base.push('/');
        }
        base.push_str(path);
        base
    };
    if full.len() >= PATH_MAX {
        return Err(IoError::Invalid);
    }
    Ok(full)
}

/// [`normalize`] of [`absolute`]`(path)`, with one copy of `path` when it
/// is absolute and normal already (as most paths a program names are).
pub fn absolute_normal(path: &str) -> Result<String, IoError> {
    Ok(absolute_normal_cow(path)?.into_owned())
}

/// [`absolute_normal`], borrowing `path` when it is normal already.
pub fn absolute_normal_cow(path: &str) -> Result<Cow<'_, str>, IoError> {
    if path.len() < PATH_MAX && is_normal(path) {
        return Ok(Cow::Borrowed(path));
    }
    Ok(Cow::Owned(normalize(&absolute(path)?)))
}

/// The absolute path `path` with `.`, `..` and repeated slashes resolved
/// lexically (the root is its own parent), without a trailing slash.
pub fn normalize(path: &str) -> String {
    if is_normal(path) {
        return String::from(path);
    }
    let mut parts: Vec<&str> = Vec::with_capacity(8);
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    for part in parts {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// True if `normalize` would return `path` as it is and it holds no NUL:
/// `/`, or a slash before each component and none empty, `.` or `..` (most
/// paths a program names; one pass over the bytes, nothing built).
fn is_normal(path: &str) -> bool {
    let b = path.as_bytes();
    if b.first() != Some(&b'/') {
        return false;
    }
    if b.len() == 1 {
        return true;
    }
    // Where the component being read started.
    let mut start = 1;
    for (i, &c) in b.iter().enumerate().skip(1) {
        match c {
            0 => return false,
            b'/' if dotted(&b[start..i]) => return false,
            b'/' => start = i + 1,
            _ => {}
        }
    }
    !dotted(&b[start..])
}

/// An empty component, `.` or `..`.
fn dotted(part: &[u8]) -> bool {
    matches!(part, b"" | b"." | b"..")
}

/// The last component of `path` (`""` for the root).
pub fn file_name(path: &str) -> &str {
    path.trim_end_matches('/').rsplit('/').next().unwrap_or("")
}

/// `dir` joined with `name` by one slash.
pub fn join(dir: &str, name: &str) -> String {
    let mut out = String::from(dir);
    if !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(name);
    out
}
