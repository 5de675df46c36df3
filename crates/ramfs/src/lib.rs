//! Oxok's RAM file system: the logic of the libOS's first file system,
//! pure and host-tested.
//!
//! `no_std` with `alloc`, no `unsafe`, no dependencies, no panics on
//! anything a caller controls: paths, handles, offsets and lengths may all
//! come straight from a hostile program.
//!
//! # The model
//!
//! - An [`Fs`] is a tree of inodes held in a slab. An [`Ino`] is a handle
//!   (slot + generation); a handle kept after its inode was freed fails
//!   with [`FsError::BadInode`] rather than naming a newer inode.
//! - Directories map names to inodes, sorted by name bytes, which is the
//!   order of [`Fs::readdir`]. Names are 1..=[`NAME_MAX`] arbitrary bytes
//!   without `/` or NUL, never `.` or `..`.
//! - Symbolic links ([`Fs::symlink`], [`Fs::readlink`]) hold a target path
//!   verbatim. Resolution follows them in every component but the last,
//!   and in the last for [`Fs::lookup`], [`Fs::open`] (unless
//!   [`OpenFlags::nofollow`]) and paths ending in `/`; operations on a name
//!   (unlink, rename, link, mkdir…) and [`Fs::lookup_nofollow`] act on the
//!   link itself. One resolution follows at most 40 links
//!   ([`FsError::Loop`]).
//! - Files are sparse: data lives in [`PAGE_SIZE`] pages allocated on write;
//!   holes read as zeros and cost nothing. Space is accounted in pages
//!   against [`Limits::max_bytes`]; files are bounded by
//!   [`Limits::max_file_size`] and the inode count by [`Limits::max_inodes`].
//! - Paths are byte strings, absolute or relative to a working-directory
//!   inode passed with each call; `.`, `..` (the root is its own parent, so
//!   no path leaves the tree), repeated and trailing slashes follow POSIX
//!   (see [`Fs::lookup`]).
//! - The API is inode-based. A file-descriptor layer above keeps offsets and
//!   access modes; it [`pin`](Fs::pin)s the inodes it holds open (and a
//!   process's working directory), so that POSIX's unlinked-but-open files
//!   survive until the last [`unpin`](Fs::unpin).
//! - Every inode keeps permission bits ([`Fs::set_mode`], [`Stat::mode`]):
//!   files start at `0o644` (or [`OpenFlags::mode`]), directories at
//!   `0o755`, symbolic links are always `0o777`. They are recorded, not
//!   enforced: access checks belong to the layers above.
//! - Time is a counter the caller sets ([`Fs::set_time`]); no clock here.
//!
//! ```
//! use oxok_ramfs::{Fs, FsError, Kind, OpenFlags};
//!
//! let mut fs = Fs::new();
//! let root = fs.root();
//! let docs = fs.mkdir(root, "/docs")?;
//! let f = fs.create(docs, "note.txt", Kind::File)?;
//! fs.write(f, 0, b"hello")?;
//! fs.pin(f)?; // an open descriptor
//! fs.rename(root, "docs/note.txt", "/docs/old.txt")?;
//! fs.unlink(root, "/docs/old.txt")?;
//! // Still open: still readable.
//! let mut buf = [0; 8];
//! assert_eq!(fs.read(f, 0, &mut buf)?, 5);
//! assert_eq!(&buf[..5], b"hello");
//! fs.unpin(f)?; // the last reference: the file is freed
//! assert_eq!(fs.stat(f), Err(FsError::BadInode));
//! assert_eq!(fs.lookup(docs, "../docs/../../..")?, root);
//! assert_eq!(fs.path_of(docs)?, b"/docs");
//! let o = OpenFlags { create: true, ..OpenFlags::default() };
//! assert_eq!(fs.open(root, "docs/", o), Err(FsError::IsADirectory));
//! // A symbolic link, relative to the directory holding it.
//! fs.symlink(root, "docs", "/here")?;
//! let g = fs.open(root, "here/new.txt", OpenFlags { mode: Some(0o600), ..o })?;
//! assert_eq!(fs.readlink(root, "here")?, b"docs");
//! assert_eq!(fs.lookup(root, "here")?, docs);
//! assert_eq!(fs.stat(fs.lookup_nofollow(root, "here")?)?.kind, Kind::Symlink);
//! assert_eq!(fs.stat(g)?.mode, 0o600);
//! # Ok::<(), FsError>(())
//! ```
//!
//! # Errors
//!
//! Every failure is an [`FsError`] with a stable numeric
//! [`code`](FsError::code) and the Linux [`errno`](FsError::errno) value the
//! Linux personality reports. Where POSIX leaves the choice open, the
//! errors are Linux's (e.g. `unlink` of a directory is `EISDIR`, `rmdir(".")`
//! is `EINVAL`, renaming `.` is `EBUSY`).

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod dir;
mod error;
mod file;
mod fs;
mod fsck;
mod inode;
mod namei;
mod ops;
mod path;
mod rename;
mod symlink;

pub use dir::DirEntry;
pub use error::{FsError, Result};
pub use file::PAGE_SIZE;
pub use fs::{Fs, FsStat, Limits, Stat};
pub use inode::{Ino, Kind};
pub use ops::OpenFlags;
pub use path::{NAME_MAX, PATH_MAX};
