//! Path syntax: checking a byte path and splitting it into components.
//!
//! A path is a byte string. It must be non-empty (`NotFound`), shorter than
//! [`PATH_MAX`] bytes (`TooLong`) and free of NUL bytes (`InvalidName`);
//! every component must be at most [`NAME_MAX`] bytes (`TooLong`). These
//! checks are made on the whole path before any lookup, so a bad path fails
//! the same way whatever the tree holds. A leading `/` makes it absolute;
//! repeated slashes count as one; a trailing slash (`dir/`) is remembered,
//! because it demands a directory (and makes a symbolic link there be
//! followed). Components are split off as resolution needs them, from the
//! path or from a symbolic link's target alike ([`split_first`]), so
//! resolving allocates nothing.

use crate::error::{FsError, Result};

/// The longest component, in bytes (Linux `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Paths must be shorter than this many bytes (Linux `PATH_MAX`, which
/// counts the terminating NUL). So must symbolic-link targets.
pub const PATH_MAX: usize = 4096;

/// One path component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Component<'a> {
    /// `.`: stay.
    Dot,
    /// `..`: go to the parent (the root is its own parent).
    DotDot,
    /// Any other name.
    Name(&'a [u8]),
}

impl<'a> Component<'a> {
    fn of(bytes: &'a [u8]) -> Component<'a> {
        match bytes {
            b"." => Component::Dot,
            b".." => Component::DotDot,
            name => Component::Name(name),
        }
    }

    /// The same component as a [`Last`].
    pub fn into_last(self) -> Last<'a> {
        match self {
            Component::Dot => Last::Dot,
            Component::DotDot => Last::DotDot,
            Component::Name(n) => Last::Name(n),
        }
    }
}

/// What the last component of a path is, for operations that act on a
/// name inside a directory (create, unlink, rename…).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Last<'a> {
    /// The path has no components at all (`/`, `//`): the root itself.
    Root,
    /// It ends in `.`.
    Dot,
    /// It ends in `..`.
    DotDot,
    /// It ends in an ordinary name.
    Name(&'a [u8]),
}

/// `bytes` without its leading slashes.
pub(crate) fn skip_slashes(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|&&b| b == b'/').count();
    &bytes[n..]
}

/// Splits the first component off `bytes` (which starts with one, not with
/// a slash): the component, whether a slash follows it, and the rest with
/// its leading slashes skipped (empty when this was the last component).
pub(crate) fn split_first(bytes: &[u8]) -> (Component<'_>, bool, &[u8]) {
    let end = bytes.iter().position(|&b| b == b'/').unwrap_or(bytes.len());
    let (name, rest) = bytes.split_at(end);
    (Component::of(name), !rest.is_empty(), skip_slashes(rest))
}

/// A checked path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Path<'a> {
    /// Starts at the root rather than the working directory.
    pub absolute: bool,
    /// Ends in `/`: the object must be a directory.
    pub trailing_slash: bool,
    /// The path, all checks passed.
    bytes: &'a [u8],
}

/// The checks every path and every symbolic link's target pass: non-empty
/// (`NotFound`), shorter than [`PATH_MAX`] (`TooLong`), no NUL
/// (`InvalidName`).
pub(crate) fn check_text(bytes: &[u8]) -> Result<()> {
    if bytes.is_empty() {
        return Err(FsError::NotFound);
    }
    if bytes.len() >= PATH_MAX {
        return Err(FsError::TooLong);
    }
    if bytes.contains(&0) {
        return Err(FsError::InvalidName);
    }
    Ok(())
}

impl<'a> Path<'a> {
    /// Checks `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Path<'a>> {
        check_text(bytes)?;
        if bytes.split(|&b| b == b'/').any(|part| part.len() > NAME_MAX) {
            return Err(FsError::TooLong);
        }
        Ok(Path {
            absolute: bytes[0] == b'/',
            trailing_slash: bytes.len() > 1 && bytes[bytes.len() - 1] == b'/',
            bytes,
        })
    }

    /// The path's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The last component.
    pub fn last(&self) -> Last<'a> {
        let end = self.bytes.len() - self.bytes.iter().rev().take_while(|&&b| b == b'/').count();
        let trimmed = &self.bytes[..end];
        match trimmed.rsplit(|&b| b == b'/').next() {
            None | Some([]) => Last::Root,
            Some(last) => Component::of(last).into_last(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every component of `bytes`, in order.
    fn components(bytes: &[u8]) -> alloc::vec::Vec<Component<'_>> {
        let mut out = alloc::vec::Vec::new();
        let mut rest = skip_slashes(bytes);
        while !rest.is_empty() {
            let (c, _, r) = split_first(rest);
            out.push(c);
            rest = r;
        }
        out
    }

    #[test]
    fn splits_and_flags() {
        let p = Path::parse(b"//a//./b/../c//").unwrap();
        assert!(p.absolute && p.trailing_slash);
        assert_eq!(
            components(p.bytes()),
            [Component::Name(b"a"), Component::Dot, Component::Name(b"b"), Component::DotDot, Component::Name(b"c")]
        );
        assert_eq!(p.last(), Last::Name(b"c"));
        assert_eq!(split_first(b"ab//c"), (Component::Name(b"ab"), true, &b"c"[..]));
        assert_eq!(split_first(b"ab//"), (Component::Name(b"ab"), true, &b""[..]));
        assert_eq!(split_first(b".."), (Component::DotDot, false, &b""[..]));
        let root = Path::parse(b"///").unwrap();
        assert!(root.absolute && root.trailing_slash);
        assert_eq!(root.last(), Last::Root);
        assert!(components(root.bytes()).is_empty());
        let rel = Path::parse(b"x").unwrap();
        assert!(!rel.absolute && !rel.trailing_slash);
        assert_eq!(rel.last(), Last::Name(b"x"));
        assert!(!Path::parse(b"/").unwrap().trailing_slash);
        assert_eq!(Path::parse(b"/").unwrap().last(), Last::Root);
        assert_eq!(Path::parse(b"a/..").unwrap().last(), Last::DotDot);
        assert_eq!(Path::parse(b"a/.").unwrap().last(), Last::Dot);
        assert_eq!(Path::parse(b"a/b//").unwrap().last(), Last::Name(b"b"));
    }

    #[test]
    fn rejects() {
        assert_eq!(Path::parse(b"").unwrap_err(), FsError::NotFound);
        assert_eq!(Path::parse(b"a\0b").unwrap_err(), FsError::InvalidName);
        assert_eq!(Path::parse(&[b'a'; NAME_MAX + 1]).unwrap_err(), FsError::TooLong);
        assert!(Path::parse(&[b'a'; NAME_MAX]).is_ok());
        assert_eq!(Path::parse(&[b'/'; PATH_MAX]).unwrap_err(), FsError::TooLong);
        assert!(Path::parse(&[b'/'; PATH_MAX - 1]).is_ok());
    }
}
