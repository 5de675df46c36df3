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

/// An absolute path in normal form — `/`, or a slash before each
/// component and none empty, `.` or `..`, no NUL, shorter than
/// [`PATH_MAX`] — as [`absolute_normal`] makes it: routed and sent as it
/// is, with no second look.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Normal(String);

impl Normal {
    /// The path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path, taken.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl core::ops::Deref for Normal {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// [`normalize`] of [`absolute`]`(path)`, with one copy of `path` when it
/// is absolute and normal already (as most paths a program names are).
pub fn absolute_normal(path: &str) -> Result<Normal, IoError> {
    Ok(Normal(absolute_normal_cow(path)?.into_owned()))
}

/// [`absolute_normal`] of `path`, kept as it is (no copy) when it is
/// absolute and normal already.
pub fn absolute_normal_owned(path: String) -> Result<Normal, IoError> {
    if path.len() < PATH_MAX && is_normal(&path) {
        return Ok(Normal(path));
    }
    absolute_normal(&path)
}

/// [`normalize`] of `dir` joined with the relative `name`: `Invalid` for
/// a NUL byte or a result of [`PATH_MAX`] bytes or longer, as
/// [`absolute`] has it.
pub fn join_normal(dir: &str, name: &str) -> Result<Normal, IoError> {
    let full = normalize(&join(dir, name));
    if full.len() >= PATH_MAX || full.contains('\0') {
        return Err(IoError::Invalid);
    }
    Ok(Normal(full))
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
    let Some((&b'/', rest)) = path.as_bytes().split_first() else { return false };
    if rest.is_empty() {
        return true;
    }
    // What the component read so far is: 0 nothing yet, 1 `.`, 2 `..`,
    // 3 a name. Most bytes are above `/` (letters, digits) and make it a
    // name with one comparison; `.`, `/` and NUL lie below.
    let mut part = 0u8;
    for &c in rest {
        if c > b'/' {
            part = 3;
            continue;
        }
        match c {
            b'/' if part < 3 => return false,
            b'/' => part = 0,
            b'.' if part < 3 => part += 1,
            0 => return false,
            _ => part = 3,
        }
    }
    part == 3
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
