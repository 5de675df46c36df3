//! The errors a malformed boot archive produces.

use core::fmt;

/// Why an archive entry could not be read (or written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveError {
    /// The data ends inside a header or inside an entry's data.
    Truncated,
    /// A header's checksum field is unreadable or does not match its bytes.
    BadChecksum,
    /// A size field is not NUL/space-terminated octal, or the size is too large.
    BadSize,
    /// A name is empty, not UTF-8, uses the ustar prefix field, or (when
    /// writing) is longer than 99 bytes or not printable ASCII.
    BadName,
    /// The entry's type flag is neither `'0'` nor NUL (a directory, link, ...).
    NotRegularFile,
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ArchiveError::Truncated => "archive truncated",
            ArchiveError::BadChecksum => "archive header checksum mismatch",
            ArchiveError::BadSize => "archive entry has a malformed size",
            ArchiveError::BadName => "archive entry has a malformed name",
            ArchiveError::NotRegularFile => "archive entry is not a regular file",
        };
        f.write_str(text)
    }
}
