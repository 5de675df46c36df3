//! A C-FFS-style library file system on XN (Ganger & Kaashoek, "Embedded
//! Inodes and Explicit Grouping", USENIX '97; Xok, SOSP '97 §4).
//!
//! * **On XN.** Every metadata type — superblock, inode table, directory
//!   block — has a template whose `owns`/`acl`/`size` UDFs are written in
//!   XN's bytecode ([`templates`]); every allocation, free and metadata
//!   change goes to XN as the proposed new block image through [`Disk`],
//!   and XN accepts it only if `owns` changes by exactly the extent.
//! * **Embedded inodes.** A file's inode is the directory record naming it;
//!   a second name moves it out of line into an inode table, as C-FFS does.
//!   Directories are out of line, so a rename moves only a name.
//! * **Grouping.** A directory block starts an aligned free group and its
//!   small files' data is placed right after it ([`fs`] `space.rs`).
//! * **Ordering.** XN refuses to persist a pointer to a block not yet
//!   durable; the file system adds "first, then" pairs for names of
//!   out-of-line inodes and for moves, and [`Fs::sync`] writes in rounds
//!   separated by flushes. Mount repairs orphans and link counts.
//! * **XCP.** [`Fs::copy_tree`] copies a tree with every destination data
//!   block written by XN from its source block's cache frame ([`Disk::copy`]).
//! * **Checked.** [`fsck`] decodes the format independently and compares
//!   with XN's free map; `crash` (with `std`) replays every crash state of
//!   ACE-style workloads.
//!
//! Limits: at most [`layout::EXTENTS`] extents per file (no indirect
//! blocks); a file moved to another directory
//! block (cross-directory rename, first hard link) is copied, because XN
//! changes a block's owner only by free and allocate.

#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod disk;
mod error;
mod fs;
mod fsck;
pub mod held;
pub mod layout;
pub mod script;
pub mod templates;

#[cfg(feature = "std")]
pub mod crash;
#[cfg(feature = "std")]
pub mod host;
#[cfg(feature = "std")]
pub mod image;

pub use disk::{Disk, next_free_by_words};
pub use error::FsError;
pub use fs::{COPY_BATCH, Copied, Cursor, Following, Fs, GROUP, Kind, Loc, MAX_FILE, Repairs, Stat, Whence};
pub use fsck::{Fsck, fsck, fsck_at};
