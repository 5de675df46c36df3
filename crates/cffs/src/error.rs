//! [`FsError`]: why a file-system operation failed, with stable codes.

use core::fmt;

use oxok_xn::Refusal;

/// Why an operation failed. Codes ([`FsError::code`]) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsError {
    /// No such file or directory.
    NotFound,
    /// The name exists already.
    Exists,
    /// A path component is not a directory.
    NotDir,
    /// The operation needs a file, the name is a directory.
    IsDir,
    /// The directory is not empty.
    NotEmpty,
    /// A name longer than [`NAME_MAX`](crate::layout::NAME_MAX) bytes.
    NameTooLong,
    /// A path that is not absolute, has an empty or `.`/`..` component, or
    /// asks to move a directory into itself.
    InvalidPath,
    /// No free block or inode slot.
    NoSpace,
    /// The file would need more than [`EXTENTS`](crate::layout::EXTENTS)
    /// extents.
    TooFragmented,
    /// More links than a `u16` counts.
    TooManyLinks,
    /// The disk holds something the file system never writes.
    Corrupt(&'static str),
    /// XN refused a request (a bug in the file system or a hostile disk).
    Refused(Refusal),
    /// The ordered write-back made no progress (a dependency cycle).
    Stuck,
    /// No memory.
    NoMemory,
    /// An argument out of range (offset past the largest file).
    InvalidArg,
    /// The block device failed.
    Io,
    /// A symbolic link where the operation needs a directory (a path
    /// through it: its user follows it and asks again), a file or
    /// something that can have a second name.
    Symlink,
}

impl FsError {
    /// The stable code.
    pub const fn code(&self) -> u32 {
        match self {
            FsError::NotFound => 1,
            FsError::Exists => 2,
            FsError::NotDir => 3,
            FsError::IsDir => 4,
            FsError::NotEmpty => 5,
            FsError::NameTooLong => 6,
            FsError::InvalidPath => 7,
            FsError::NoSpace => 8,
            FsError::TooFragmented => 9,
            FsError::TooManyLinks => 10,
            FsError::Corrupt(_) => 11,
            FsError::Refused(_) => 12,
            FsError::Stuck => 13,
            FsError::NoMemory => 14,
            FsError::InvalidArg => 15,
            FsError::Io => 16,
            FsError::Symlink => 17,
        }
    }
}

impl From<Refusal> for FsError {
    fn from(r: Refusal) -> FsError {
        FsError::Refused(r)
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsError::NotFound => f.write_str("no such file or directory"),
            FsError::Exists => f.write_str("name exists"),
            FsError::NotDir => f.write_str("not a directory"),
            FsError::IsDir => f.write_str("is a directory"),
            FsError::NotEmpty => f.write_str("directory not empty"),
            FsError::NameTooLong => f.write_str("name too long"),
            FsError::InvalidPath => f.write_str("invalid path"),
            FsError::NoSpace => f.write_str("no space left on the disk"),
            FsError::TooFragmented => f.write_str("file needs too many extents"),
            FsError::TooManyLinks => f.write_str("too many links"),
            FsError::Corrupt(w) => write!(f, "corrupt: {w}"),
            FsError::Refused(r) => write!(f, "XN refused: {r}"),
            FsError::Stuck => f.write_str("ordered write-back made no progress"),
            FsError::NoMemory => f.write_str("out of memory"),
            FsError::InvalidArg => f.write_str("invalid argument"),
            FsError::Io => f.write_str("I/O error"),
            FsError::Symlink => f.write_str("a symbolic link"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct() {
        let all = [
            FsError::NotFound,
            FsError::Exists,
            FsError::NotDir,
            FsError::IsDir,
            FsError::NotEmpty,
            FsError::NameTooLong,
            FsError::InvalidPath,
            FsError::NoSpace,
            FsError::TooFragmented,
            FsError::TooManyLinks,
            FsError::Corrupt(""),
            FsError::Refused(Refusal::NoMemory),
            FsError::Stuck,
            FsError::NoMemory,
            FsError::InvalidArg,
            FsError::Io,
            FsError::Symlink,
        ];
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| b.code() != a.code()));
        }
    }
}
