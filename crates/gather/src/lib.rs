//! Write gathering for the disk file server `dfsd`
//! (`apps/fsd/src/disk.rs`): a client's file data arrives a
//! buffer page (4 KiB) per round trip, and C-FFS grows a file by one XN
//! allocation per write. Consecutive writes to one file are gathered here
//! (up to [`GATHER_MAX`]) and handed to C-FFS as one write — one
//! allocation for the run instead of one per page.
//!
//! The gathered bytes are the file's as soon as the write is answered:
//! `dfsd` hands them on before it serves any other request (so every read,
//! `stat`, rename, sync or write-back sees them), and gathers only while
//! the disk has room to spare, so a disk filling up refuses the write that
//! does not fit. A failure when they are handed on (a file too fragmented
//! for its extents) is kept for the file and reported by its next write,
//! `fsync` or close.
//!
//! A pure `no_std` crate, host-tested; `dfsd` keeps one.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

#[cfg(test)]
mod tests;

use alloc::vec::Vec;

/// Most bytes gathered before they go to the file system.
pub const GATHER_MAX: usize = 64 * 1024;

/// Free blocks the disk must keep beyond what is gathered for gathering
/// to go on (else writes go through at once and a full disk says so).
pub const SPARE_BLOCKS: u64 = 1024;

/// Bytes gathered for one file.
pub struct Gathered {
    /// The file (the server's word for it).
    pub ino: u64,
    /// Where the bytes go.
    pub off: u64,
    /// The bytes.
    pub data: Vec<u8>,
}

/// Bytes of a disk block (what a run needs room for).
pub const BLOCK_BYTES: u64 = 4096;

/// The run being gathered and a failure (of error type `E`) not yet
/// reported.
pub struct Gatherer<E> {
    run: Option<Gathered>,
    failed: Option<(u64, E)>,
}

impl<E> Default for Gatherer<E> {
    fn default() -> Gatherer<E> {
        Gatherer { run: None, failed: None }
    }
}

impl<E: Copy> Gatherer<E> {
    /// Takes `data` for `ino` at `off` if it continues the run being
    /// gathered, or starts a run when none is (with `free` blocks free on
    /// the disk): whether it was taken. Not taken, the caller hands the
    /// run on ([`Gatherer::take`]) and writes `data` itself or retries.
    pub fn gather(&mut self, ino: u64, off: u64, data: &[u8], free: u64) -> bool {
        let room = |len: usize| {
            let blocks = (len as u64).div_ceil(BLOCK_BYTES);
            len <= GATHER_MAX && free > blocks + SPARE_BLOCKS
        };
        match &mut self.run {
            Some(r) if r.ino == ino && r.off + r.data.len() as u64 == off && room(r.data.len() + data.len()) => {
                if r.data.try_reserve(data.len()).is_err() {
                    return false;
                }
                r.data.extend_from_slice(data);
                true
            }
            Some(_) => false,
            None if room(data.len()) => {
                let mut v = Vec::new();
                if v.try_reserve(GATHER_MAX).is_err() {
                    return false;
                }
                v.extend_from_slice(data);
                self.run = Some(Gathered { ino, off, data: v });
                true
            }
            None => false,
        }
    }

    /// The run gathered so far, to hand on.
    pub fn take(&mut self) -> Option<Gathered> {
        self.run.take()
    }

    /// Keeps `e`, the failure of handing on `ino`'s bytes, for its next
    /// write, `fsync` or close.
    pub fn fail(&mut self, ino: u64, e: E) {
        self.failed = Some((ino, e));
    }

    /// The failure kept for `ino`, once.
    pub fn failure(&mut self, ino: u64) -> Option<E> {
        match self.failed {
            Some((i, e)) if i == ino => {
                self.failed = None;
                Some(e)
            }
            _ => None,
        }
    }
}
