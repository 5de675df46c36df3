//! Why a file-system operation failed.

use core::fmt;

/// Why a file-system operation failed.
///
/// No operation in this crate panics on input a caller controls; it returns
/// one of these instead. Each variant has a stable numeric [`code`](Self::code)
/// (never renumbered; new variants get new numbers) and the Linux `errno`
/// value the libOS's Linux personality reports for it ([`errno`](Self::errno)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum FsError {
    /// A path component (or the object itself) does not exist, or the
    /// directory it would be created in has been removed; also an empty
    /// path or symbolic-link target. `ENOENT`.
    NotFound = 1,
    /// A path walks through something that is not a directory, a trailing
    /// slash names a file, or a directory operation got a file. `ENOTDIR`.
    NotADirectory = 2,
    /// A file operation (read, write, truncate, unlink, open for writing,
    /// create) got a directory. `EISDIR`.
    IsADirectory = 3,
    /// The name to create already exists. `EEXIST`.
    Exists = 4,
    /// The directory to remove (or to replace by rename) is not empty.
    /// `ENOTEMPTY`.
    NotEmpty = 5,
    /// A path or symbolic-link target holds a NUL byte. `EINVAL`.
    InvalidName = 6,
    /// A path or symbolic-link target is [`PATH_MAX`](crate::PATH_MAX) bytes
    /// or longer, or a component of a path (or of a target being followed)
    /// is longer than [`NAME_MAX`](crate::NAME_MAX). `ENAMETOOLONG`.
    TooLong = 7,
    /// An invalid argument: renaming a directory into its own subtree,
    /// `rmdir` of `.`, `create` together with `directory` in an open,
    /// unpinning an inode that is not pinned, `readlink` of something that
    /// is not a symbolic link, [`Fs::create`](crate::Fs::create) with
    /// [`Kind::Symlink`](crate::Kind::Symlink), reading, writing or
    /// truncating a symbolic link's inode. `EINVAL`.
    Invalid = 8,
    /// The inode handle names no live inode (never allocated, or freed and
    /// its slot reused: the generation no longer matches). `EBADF`.
    BadInode = 9,
    /// The file system is full: its byte or inode limit is reached, or the
    /// heap refused a page. `ENOSPC`.
    NoSpace = 10,
    /// The write or truncate would take a file past the per-file size limit.
    /// `EFBIG`.
    FileTooBig = 11,
    /// The object is in use by the system: renaming or removing the root,
    /// renaming `.` or `..`. `EBUSY`.
    Busy = 12,
    /// The operation is not permitted on this kind of object (a hard link to
    /// a directory, [`set_mode`](crate::Fs::set_mode) on a symbolic link).
    /// `EPERM`.
    NotPermitted = 13,
    /// Resolving one path followed more than 40 symbolic links (Linux
    /// `MAXSYMLINKS`), or an open with
    /// [`nofollow`](crate::OpenFlags::nofollow) met a symbolic link as the
    /// last component. `ELOOP`.
    Loop = 14,
}

impl FsError {
    /// Every error, in code order, for exhaustive tests and tables.
    pub const ALL: [FsError; 14] = [
        FsError::NotFound,
        FsError::NotADirectory,
        FsError::IsADirectory,
        FsError::Exists,
        FsError::NotEmpty,
        FsError::InvalidName,
        FsError::TooLong,
        FsError::Invalid,
        FsError::BadInode,
        FsError::NoSpace,
        FsError::FileTooBig,
        FsError::Busy,
        FsError::NotPermitted,
        FsError::Loop,
    ];

    /// The stable numeric code (1-based; 0 is never an error).
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// The error with numeric code `code`, if any.
    pub fn from_code(code: u16) -> Option<FsError> {
        FsError::ALL.iter().copied().find(|e| e.code() == code)
    }

    /// The Linux x86-64 `errno` value (positive) for this error.
    pub const fn errno(self) -> i32 {
        match self {
            FsError::NotFound => 2,       // ENOENT
            FsError::NotADirectory => 20, // ENOTDIR
            FsError::IsADirectory => 21,  // EISDIR
            FsError::Exists => 17,        // EEXIST
            FsError::NotEmpty => 39,      // ENOTEMPTY
            FsError::InvalidName => 22,   // EINVAL
            FsError::TooLong => 36,       // ENAMETOOLONG
            FsError::Invalid => 22,       // EINVAL
            FsError::BadInode => 9,       // EBADF
            FsError::NoSpace => 28,       // ENOSPC
            FsError::FileTooBig => 27,    // EFBIG
            FsError::Busy => 16,          // EBUSY
            FsError::NotPermitted => 1,   // EPERM
            FsError::Loop => 40,          // ELOOP
        }
    }

    /// A short English description.
    pub const fn text(self) -> &'static str {
        match self {
            FsError::NotFound => "no such file or directory",
            FsError::NotADirectory => "not a directory",
            FsError::IsADirectory => "is a directory",
            FsError::Exists => "file exists",
            FsError::NotEmpty => "directory not empty",
            FsError::InvalidName => "invalid byte in path",
            FsError::TooLong => "file name too long",
            FsError::Invalid => "invalid argument",
            FsError::BadInode => "bad inode handle",
            FsError::NoSpace => "no space left on file system",
            FsError::FileTooBig => "file too large",
            FsError::Busy => "resource busy",
            FsError::NotPermitted => "operation not permitted",
            FsError::Loop => "too many levels of symbolic links",
        }
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl core::error::Error for FsError {}

/// The result of a file-system operation.
pub type Result<T> = core::result::Result<T, FsError>;
