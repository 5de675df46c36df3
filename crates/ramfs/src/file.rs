//! File contents: sparse, in pages.
//!
//! A file is a size plus a sorted map from page index to a
//! [`PAGE_SIZE`]-byte page. Pages are allocated only when written, so a
//! hole (past-the-end write, extending truncate) costs nothing and reads as
//! zeros. Invariant: every byte of a page at or past `size` is zero, and no
//! page lies wholly at or past `size`; so growing a file never exposes old
//! data. Space is accounted in whole pages against the file system's byte
//! limit; pages come from the heap with `try_reserve`, so a heap that
//! refuses turns into [`FsError::NoSpace`], not an abort.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::error::{FsError, Result};

/// The size of a file page in bytes: the unit of space accounting.
pub const PAGE_SIZE: usize = 4096;
const PAGE: u64 = PAGE_SIZE as u64;

/// Page budget shared by all files of one file system.
pub(crate) struct Budget {
    pub used: u64,
    pub max: u64,
}

/// One file's bytes.
#[derive(Default)]
pub(crate) struct FileData {
    size: u64,
    pages: BTreeMap<u64, Box<[u8]>>,
}

/// A zeroed page, or `None` if the heap refuses.
fn zeroed_page() -> Option<Box<[u8]>> {
    let mut v = Vec::new();
    v.try_reserve_exact(PAGE_SIZE).ok()?;
    v.resize(PAGE_SIZE, 0);
    Some(v.into_boxed_slice())
}

impl FileData {
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Pages allocated.
    pub fn pages(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Copies bytes from `offset` into `buf`; returns the count (0 at or
    /// past the end).
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> usize {
        if offset >= self.size {
            return 0;
        }
        let n = (self.size - offset).min(buf.len() as u64) as usize;
        let mut done = 0;
        while done < n {
            let pos = offset + done as u64;
            let (index, within) = (pos / PAGE, (pos % PAGE) as usize);
            let len = (PAGE_SIZE - within).min(n - done);
            let out = &mut buf[done..done + len];
            match self.pages.get(&index) {
                Some(page) => out.copy_from_slice(&page[within..within + len]),
                None => out.fill(0),
            }
            done += len;
        }
        n
    }

    /// Writes `data` at `offset` (already clipped by the caller to the size
    /// limit), allocating pages from `budget`. Stops early when the budget
    /// or the heap runs out: returns the bytes written, or `NoSpace` if none
    /// could be.
    pub fn write(&mut self, offset: u64, data: &[u8], budget: &mut Budget) -> Result<usize> {
        let mut done = 0;
        while done < data.len() {
            let pos = offset + done as u64;
            let (index, within) = (pos / PAGE, (pos % PAGE) as usize);
            let len = (PAGE_SIZE - within).min(data.len() - done);
            let page = match self.pages.get_mut(&index) {
                Some(page) => page,
                None => {
                    if budget.used >= budget.max {
                        break;
                    }
                    let Some(page) = zeroed_page() else { break };
                    budget.used += 1;
                    self.pages.entry(index).or_insert(page)
                }
            };
            page[within..within + len].copy_from_slice(&data[done..done + len]);
            done += len;
        }
        if done == 0 && !data.is_empty() {
            return Err(FsError::NoSpace);
        }
        self.size = self.size.max(offset + done as u64);
        Ok(done)
    }

    /// Sets the size to `len`: shrinking frees whole pages past the end and
    /// zeroes the tail of the last one; growing leaves a hole. Returns the
    /// pages freed.
    pub fn truncate(&mut self, len: u64) -> u64 {
        if len >= self.size {
            self.size = len;
            return 0;
        }
        let keep = len.div_ceil(PAGE);
        let before = self.pages.len();
        let _dropped = self.pages.split_off(&keep);
        if !len.is_multiple_of(PAGE)
            && let Some(page) = self.pages.get_mut(&(len / PAGE))
        {
            page[(len % PAGE) as usize..].fill(0);
        }
        self.size = len;
        (before - self.pages.len()) as u64
    }

    /// Checks the page invariants (for [`Fs::fsck`](crate::Fs::fsck)).
    pub fn check(&self) -> core::result::Result<(), &'static str> {
        for (&index, page) in &self.pages {
            if page.len() != PAGE_SIZE {
                return Err("file page of the wrong size");
            }
            let start = index.checked_mul(PAGE).ok_or("file page index overflows")?;
            if start >= self.size {
                return Err("file page wholly past the end");
            }
            let live = (self.size - start).min(PAGE) as usize;
            if page[live..].iter().any(|&b| b != 0) {
                return Err("nonzero bytes past the end of a file");
            }
        }
        Ok(())
    }
}
