//! The Oxok boot archive: a subset of the POSIX ustar tar format.
//!
//! The host tool packs user programs into an archive with `append_aligned`
//! (or `append`) and `finish` (feature `alloc`); the kernel and the libOS
//! read it with [`Archive`]. Only regular files are supported, with names
//! that fit the 100-byte name field (the writer keeps a NUL, so at most 99
//! bytes). POSIX pax headers (type `'x'` or `'g'`) are skipped, their records
//! not interpreted: `append_aligned` writes one as padding before a file so
//! that the file's data starts on a page (4096-byte) boundary of the archive.
//! A program's ELF segments (file offset ≡ address modulo the page size) then
//! share pages with the archive, so they can be mapped from it instead of
//! copied. GNU tar and other pax readers list and extract such an archive
//! unchanged (the padding record is a `comment`, which they ignore). The
//! reader treats its input as hostile: every field is checked, and it never
//! panics.

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(test)]
extern crate std;

mod error;
mod header;
mod octal;
#[cfg(any(feature = "alloc", test))]
mod write;

#[cfg(test)]
mod tests;

pub use error::ArchiveError;
#[cfg(any(feature = "alloc", test))]
pub use write::{append, append_aligned, finish};

use core::fmt;
use header::BLOCK;

/// A read-only view of a ustar archive held in memory.
#[derive(Clone, Copy)]
pub struct Archive<'a> {
    data: &'a [u8],
}

impl<'a> Archive<'a> {
    /// Wraps archive bytes; nothing is checked until entries are read.
    pub fn new(data: &'a [u8]) -> Archive<'a> {
        Archive { data }
    }

    /// Iterate the regular files in order (pax headers are skipped). Stops
    /// (returns `None`) at the end-of-archive marker (a zero block) or at the
    /// end of data.
    pub fn entries(&self) -> Entries<'a> {
        Entries { data: self.data, pos: 0, done: false }
    }

    /// The entry whose header starts at byte `offset` (as
    /// [`Entries::offset`] gave it, which may be the offset of pax headers
    /// before it); `None` if none does there or it is malformed.
    pub fn entry_at(&self, offset: usize) -> Option<Entry<'a>> {
        Entries { data: self.data, pos: offset, done: false }.read().ok().flatten()
    }

    /// The data of the first regular file with exactly this name; `None` if
    /// absent or if the archive is malformed before it.
    pub fn find(&self, name: &str) -> Option<&'a [u8]> {
        self.entries().map_while(Result::ok).find(|entry| entry.name == name).map(|entry| entry.data)
    }
}

/// One regular file in an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The file name as stored (at most 100 bytes of UTF-8).
    pub name: &'a str,
    /// The file contents.
    pub data: &'a [u8],
}

/// Iterator over the entries of an [`Archive`]; yields `None` forever after
/// the first error.
#[derive(Clone)]
pub struct Entries<'a> {
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Entries<'a> {
    /// Where the next entry's header starts: an offset for
    /// [`Archive::entry_at`].
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Reads the entry at `self.pos`, advancing past it and past any pax
    /// headers before it.
    fn read(&mut self) -> Result<Option<Entry<'a>>, ArchiveError> {
        // Each turn either returns or moves `pos` forward by at least one
        // whole block that lies inside `data`, so there are at most
        // `data.len() / BLOCK` turns.
        loop {
            let rest = self.data.get(self.pos..).unwrap_or(&[]);
            if rest.is_empty() {
                return Ok(None);
            }
            let block: &'a [u8; BLOCK] =
                rest.get(..BLOCK).and_then(|b| b.try_into().ok()).ok_or(ArchiveError::Truncated)?;
            if header::is_zero(block) {
                return Ok(None);
            }
            let h = header::parse(block)?;
            let data = rest.get(BLOCK..).and_then(|d| d.get(..h.size)).ok_or(ArchiveError::Truncated)?;
            // Data is padded to a whole block; a missing final pad just ends
            // the archive at the end of data.
            let padded = h
                .size
                .checked_next_multiple_of(BLOCK)
                .and_then(|p| p.checked_add(BLOCK))
                .ok_or(ArchiveError::BadSize)?;
            self.pos = self.pos.saturating_add(padded).min(self.data.len());
            if let Some(name) = h.name {
                return Ok(Some(Entry { name, data }));
            }
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Entry<'a>, ArchiveError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read() {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl fmt::Debug for Archive<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archive").field("len", &self.data.len()).finish()
    }
}

impl fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entries").field("pos", &self.pos).field("done", &self.done).finish_non_exhaustive()
    }
}
