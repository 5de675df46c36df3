//! Request targets to file paths.
//!
//! [`normalise`] accepts the origin form (`/a/b?q`) and the absolute form
//! (`http://host/a/b`), drops the query and fragment, decodes `%XX`,
//! removes empty and `.` segments and resolves `..` — refusing with 400 a
//! `..` that would climb above the root, however it was spelled (`/../`,
//! `/%2e%2e/`, `/a/../../`). An encoded `/` or `\`, a NUL or another control
//! character, a malformed escape or bytes that are not UTF-8 are refused
//! too: the result names exactly one file below the root.

use alloc::string::String;
use alloc::vec::Vec;

use crate::Status;

/// The file served for a directory's path.
pub const INDEX: &str = "index.html";

/// The normalised absolute path of `target`, starting with `/`; it ends
/// with `/` when it names a directory (see [`with_index`]).
pub fn normalise(target: &str) -> Result<String, Status> {
    let path = strip_authority(target)?;
    let end = path.find(['?', '#']).unwrap_or(path.len());
    let raw = &path.as_bytes()[..end];
    if raw.first() != Some(&b'/') {
        return Err(Status::BadRequest);
    }
    let decoded = decode(raw)?;
    let mut segments: Vec<&str> = Vec::new();
    let mut dir = false;
    for seg in decoded.split('/') {
        dir = true;
        match seg {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(Status::BadRequest);
                }
            }
            s => {
                segments.push(s);
                dir = false;
            }
        }
    }
    let mut out = String::with_capacity(decoded.len() + 1);
    for s in &segments {
        out.push('/');
        out.push_str(s);
    }
    if dir || segments.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// `path` with [`INDEX`] appended when it names a directory.
pub fn with_index(path: &str) -> String {
    let mut p = String::from(path);
    if p.ends_with('/') {
        p.push_str(INDEX);
    }
    p
}

/// The path part of an absolute-form target (`http://host:port/p` → `/p`).
fn strip_authority(target: &str) -> Result<&str, Status> {
    let lower_starts = |p: &str| target.len() >= p.len() && target[..p.len()].eq_ignore_ascii_case(p);
    let rest = if lower_starts("http://") {
        &target[7..]
    } else if lower_starts("https://") {
        &target[8..]
    } else {
        return Ok(target);
    };
    match rest.find('/') {
        Some(i) if i > 0 => Ok(&rest[i..]),
        None if !rest.is_empty() => Ok("/"),
        _ => Err(Status::BadRequest),
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-decodes `raw`, refusing escapes that would change the path's
/// structure or smuggle control bytes.
fn decode(raw: &[u8]) -> Result<String, Status> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'%' {
            let hi = raw.get(i + 1).copied().and_then(hex).ok_or(Status::BadRequest)?;
            let lo = raw.get(i + 2).copied().and_then(hex).ok_or(Status::BadRequest)?;
            let c = hi << 4 | lo;
            if c == b'/' || c == b'\\' {
                return Err(Status::BadRequest);
            }
            out.push(c);
            i += 3;
        } else {
            if b == b'\\' {
                return Err(Status::BadRequest);
            }
            out.push(b);
            i += 1;
        }
    }
    if out.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return Err(Status::BadRequest);
    }
    String::from_utf8(out).map_err(|_| Status::BadRequest)
}
