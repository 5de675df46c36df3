//! Between C-FFS's words and the server's: errors, kinds, paths and
//! what `stat` reports.

use alloc::string::String;
use oxok_cffs::{FsError as DiskError, Kind as DiskKind};
use oxok_libos::println;
use oxok_ramfs::{FsError, Kind};

use crate::files::Meta;

/// The file system's error as the server's.
pub(super) fn err(e: DiskError) -> FsError {
    match e {
        DiskError::NotFound => FsError::NotFound,
        DiskError::Exists => FsError::Exists,
        DiskError::NotDir => FsError::NotADirectory,
        DiskError::IsDir => FsError::IsADirectory,
        DiskError::NotEmpty => FsError::NotEmpty,
        DiskError::NameTooLong => FsError::TooLong,
        DiskError::InvalidPath => FsError::InvalidName,
        DiskError::NoSpace | DiskError::TooFragmented => FsError::NoSpace,
        DiskError::InvalidArg => FsError::FileTooBig,
        // A path through a symbolic link: followed by the caller
        // (`links.rs`); met again, a loop.
        DiskError::Symlink => FsError::Loop,
        other => {
            println!("dfsd: {other:?}");
            FsError::Invalid
        }
    }
}

pub(super) fn kind(k: DiskKind) -> Kind {
    match k {
        DiskKind::File => Kind::File,
        DiskKind::Dir => Kind::Dir,
        DiskKind::Symlink => Kind::Symlink,
    }
}

/// `path` (absolute, bytes) as C-FFS takes it: UTF-8, no empty, `.` or
/// `..` components.
pub(super) fn normal(path: &[u8]) -> Result<String, FsError> {
    let s = core::str::from_utf8(path).map_err(|_| FsError::InvalidName)?;
    if !s.starts_with('/') {
        return Err(FsError::InvalidName);
    }
    // The libOS's own lexical resolution (a path it already normalised,
    // as nearly every client sends, is taken as it is).
    Ok(oxok_libos::fs::normalize(s))
}

/// What `stat` reports of `path`, whose C-FFS status is `st`.
pub(super) fn meta_of(path: &str, st: &oxok_cffs::Stat) -> Meta {
    meta_with(st, || number_of(PATH_HASH_START, path.as_bytes()))
}

/// What `stat` reports of a file whose C-FFS status is `st`, numbered by
/// `embedded` if its inode is embedded in its directory.
pub(super) fn meta_with(st: &oxok_cffs::Stat, embedded: impl FnOnce() -> u64) -> Meta {
    let number = st.ino.map_or_else(embedded, |i| u64::from(i) + 1);
    Meta {
        kind: kind(st.kind),
        size: st.size,
        number,
        nlink: u64::from(st.nlink),
        mtime: st.mtime,
        mode: Some(st.mode),
        allocated: None,
    }
}

/// The hash a path's number starts from.
pub(super) const PATH_HASH_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The FNV-1a hash of a path's bytes continued from `h` over `rest`: a
/// directory's files hash their path from the hash of the directory's
/// path and `/`.
pub(super) fn path_hash(h: u64, rest: &[u8]) -> u64 {
    rest.iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// A stable number for a name whose inode is embedded in its directory:
/// the hash of its path (`rest` continued from `h`, [`path_hash`]).
pub(super) fn number_of(h: u64, rest: &[u8]) -> u64 {
    path_hash(h, rest) | (1 << 63)
}
