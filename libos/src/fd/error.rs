//! The libOS's I/O errors: what descriptor, pipe and file operations fail
//! with. Kernel refusals keep their ABI error inside [`IoError::Kernel`].

use core::fmt;

/// Why an I/O operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoError {
    /// The kernel refused a call.
    Kernel(oxok_abi::Error),
    /// The descriptor is not open.
    BadFd,
    /// No such file or directory.
    NotFound,
    /// The name already exists.
    Exists,
    /// A path component is not a directory.
    NotDir,
    /// The operation needs a file, not a directory.
    IsDir,
    /// The directory is not empty.
    NotEmpty,
    /// Writing to a pipe nobody will read.
    BrokenPipe,
    /// The object does not support the operation (seek on a pipe, …).
    Unsupported,
    /// An argument is out of range (a name too long, a bad position, …).
    Invalid,
    /// The file system or the server is out of room.
    NoSpace,
    /// The server that keeps the object cannot be reached.
    NoServer,
    /// A non-blocking operation would have to wait (sockets).
    WouldBlock,
    /// The address or port is taken (sockets).
    AddrInUse,
    /// The socket is not connected.
    NotConnected,
    /// The peer refused the connection.
    ConnRefused,
    /// The peer reset the connection.
    ConnReset,
    /// The operation's time limit passed.
    TimedOut,
    /// Too many symbolic links in a path, or one where none may be.
    Loop,
    /// A name or path is too long.
    TooLong,
    /// Not on this kind of object (a hard link to a directory).
    NotPermitted,
}

impl IoError {
    /// A short English description.
    pub fn text(self) -> &'static str {
        match self {
            IoError::Kernel(e) => e.text(),
            IoError::BadFd => "bad file descriptor",
            IoError::NotFound => "no such file or directory",
            IoError::Exists => "file exists",
            IoError::NotDir => "not a directory",
            IoError::IsDir => "is a directory",
            IoError::NotEmpty => "directory not empty",
            IoError::BrokenPipe => "broken pipe",
            IoError::Unsupported => "operation not supported",
            IoError::Invalid => "invalid argument",
            IoError::NoSpace => "no space left",
            IoError::NoServer => "file server unreachable",
            IoError::WouldBlock => "operation would block",
            IoError::AddrInUse => "address in use",
            IoError::NotConnected => "not connected",
            IoError::ConnRefused => "connection refused",
            IoError::ConnReset => "connection reset",
            IoError::TimedOut => "timed out",
            IoError::Loop => "too many levels of symbolic links",
            IoError::TooLong => "file name too long",
            IoError::NotPermitted => "operation not permitted",
        }
    }
}

impl From<oxok_abi::Error> for IoError {
    fn from(e: oxok_abi::Error) -> Self {
        IoError::Kernel(e)
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}
