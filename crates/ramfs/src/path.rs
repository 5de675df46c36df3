//! Path syntax: checking a byte path and splitting it into components.
//!
//! A path is a byte string. It must be non-empty (`NotFound`), shorter than
//! [`PATH_MAX`] bytes (`TooLong`) and free of NUL bytes (`InvalidName`);
//! every component must be at most [`NAME_MAX`] bytes (`TooLong`). These
//! checks are made on the whole path before any lookup, so a bad path fails
//! the same way whatever the tree holds. A leading `/` makes it absolute;
//! repeated slashes count as one; a trailing slash (`dir/`) is remembered,
//! because it demands a directory.

use alloc::vec::Vec;

use crate::error::{FsError, Result};

/// The longest component, in bytes (Linux `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Paths must be shorter than this many bytes (Linux `PATH_MAX`, which
/// counts the terminating NUL).
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

/// A checked path.
#[derive(Debug)]
pub(crate) struct Path<'a> {
    /// Starts at the root rather than the working directory.
    pub absolute: bool,
    /// Ends in `/`: the object must be a directory.
    pub trailing_slash: bool,
    components: Vec<Component<'a>>,
}

impl<'a> Path<'a> {
    /// Checks `bytes` and splits it.
    pub fn parse(bytes: &'a [u8]) -> Result<Path<'a>> {
        if bytes.is_empty() {
            return Err(FsError::NotFound);
        }
        if bytes.len() >= PATH_MAX {
            return Err(FsError::TooLong);
        }
        if bytes.contains(&0) {
            return Err(FsError::InvalidName);
        }
        let mut components = Vec::new();
        for part in bytes.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            if part.len() > NAME_MAX {
                return Err(FsError::TooLong);
            }
            components.push(Component::of(part));
        }
        Ok(Path {
            absolute: bytes[0] == b'/',
            trailing_slash: bytes.len() > 1 && bytes[bytes.len() - 1] == b'/',
            components,
        })
    }

    /// Every component, in order.
    pub fn components(&self) -> &[Component<'a>] {
        &self.components
    }

    /// The components before the last, and the last.
    pub fn split_last(&self) -> (&[Component<'a>], Last<'a>) {
        match self.components.split_last() {
            None => (&[], Last::Root),
            Some((last, init)) => {
                let last = match *last {
                    Component::Dot => Last::Dot,
                    Component::DotDot => Last::DotDot,
                    Component::Name(n) => Last::Name(n),
                };
                (init, last)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_flags() {
        let p = Path::parse(b"//a//./b/../c//").unwrap();
        assert!(p.absolute && p.trailing_slash);
        assert_eq!(
            p.components(),
            &[Component::Name(b"a"), Component::Dot, Component::Name(b"b"), Component::DotDot, Component::Name(b"c")]
        );
        assert_eq!(p.split_last().1, Last::Name(b"c"));
        let root = Path::parse(b"///").unwrap();
        assert!(root.absolute && root.trailing_slash);
        assert_eq!(root.split_last(), (&[][..], Last::Root));
        let rel = Path::parse(b"x").unwrap();
        assert!(!rel.absolute && !rel.trailing_slash);
        assert!(!Path::parse(b"/").unwrap().trailing_slash);
        assert_eq!(Path::parse(b"a/..").unwrap().split_last().1, Last::DotDot);
        assert_eq!(Path::parse(b"a/.").unwrap().split_last().1, Last::Dot);
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
