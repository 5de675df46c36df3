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
    /// The entry's type flag is neither `'0'` nor NUL (a directory, link, ...)
    /// nor a pax header (`'x'`, `'g'`), which the reader skips.
    NotRegularFile,
    /// (When writing aligned) the alignment is not a power of two and a
    /// multiple of 512, or the archive so far is not a whole number of
    /// 512-byte blocks.
    BadAlignment,
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ArchiveError::Truncated => "archive truncated",
            ArchiveError::BadChecksum => "archive header checksum mismatch",
            ArchiveError::BadSize => "archive entry has a malformed size",
            ArchiveError::BadName => "archive entry has a malformed name",
            ArchiveError::NotRegularFile => "archive entry is not a regular file",
            ArchiveError::BadAlignment => {
                "bad archive alignment (not a power-of-two multiple of 512, or the archive is not whole blocks)"
            }
        };
        f.write_str(text)
    }
}
