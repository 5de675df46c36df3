//! [`Bindings`]: where a program keeps the buffer-cache pages it bound —
//! one page of its address space per block, read in and bound on first
//! use, so a library file system reads and writes cached blocks directly.

use super::{XnError, bind, page, page_mut, read};
use crate::sys;
use alloc::vec::Vec;
use oxok_abi::Error;
use oxok_abi::xn::{BLOCK_SIZE, refuse, rights};
use oxok_rt::page::PageRef;
use oxok_xn::BlockMap;

/// The blocks this program has bound, each at its own page of a window.
pub struct Bindings {
    base: u64,
    pages: u64,
    /// Block → its page index and whether it is bound writable (the
    /// index times two, plus one if writable), in two loads.
    bound: BlockMap,
    /// Page indices given back by [`forget`](Bindings::forget).
    spare: Vec<u64>,
    next: u64,
}

impl Bindings {
    /// A window of `pages` pages at `base` (page-aligned, unused by
    /// anything else in this program).
    pub const fn new(base: u64, pages: u64) -> Bindings {
        Bindings { base, pages, bound: BlockMap::new(), spare: Vec::new(), next: 0 }
    }

    /// Pages of the window: blocks bound at once at most.
    pub fn capacity(&self) -> u64 {
        self.pages
    }

    fn va(&self, index: u64) -> u64 {
        self.base + index * BLOCK_SIZE as u64
    }

    /// Reads `block` into the cache if needed and binds it (writable when
    /// `write`); its address. The caller claims the page when it reads or
    /// writes it ([`page`], [`page_mut`]); [`get`](Bindings::get) and
    /// [`get_mut`](Bindings::get_mut) are this and the claim together.
    pub fn ensure(&mut self, block: u64, write: bool) -> Result<u64, XnError> {
        match self.bound.get(block) {
            Some(w) if w & 1 == 1 || !write => return Ok(self.va(w >> 1)),
            Some(_) => self.forget(block),
            None => {}
        }
        self.bound.reserve(block).map_err(|_| XnError::Sys(Error::NoMemory))?;
        let index = match self.spare.pop() {
            Some(i) => i,
            None if self.next < self.pages => {
                self.next += 1;
                self.next - 1
            }
            None => return Err(XnError::Sys(Error::NoMemory)),
        };
        let want = if write { rights::READ | rights::WRITE } else { rights::READ };
        // Bound at once when cached (XN gives a block its frame only once
        // the disk has filled it); else read in first, then bound.
        let bound = match bind(block, self.va(index), want) {
            Err(XnError::Refused { code: refuse::NOT_BOUND, block: b, .. }) if b == block => {
                read(block).and_then(|()| bind(block, self.va(index), want))
            }
            r => r,
        };
        if let Err(e) = bound {
            self.spare.push(index);
            return Err(e);
        }
        // Room made above: cannot fail (an index is far below the limit).
        let _ = self.bound.insert(block, index << 1 | u64::from(write));
        Ok(self.va(index))
    }

    /// The cached bytes of `block` (metadata or data), bound read-only on
    /// first use (`PageRef::bytes`). Metadata changed through `modify`,
    /// `alloc` or `free` shows here at once: it is the same frame.
    pub fn get(&mut self, block: u64) -> Result<PageRef, XnError> {
        let va = self.ensure(block, false)?;
        Ok(page(va)?)
    }

    /// The cached bytes of data `block`, bound writable (the rights check
    /// happens at the first bind; `PageRef::bytes_mut`); write them, then
    /// [`super::write`].
    pub fn get_mut(&mut self, block: u64) -> Result<PageRef, XnError> {
        let va = self.ensure(block, true)?;
        Ok(page_mut(va)?)
    }

    /// Unbinds `block` (do this before evicting it, and after freeing it:
    /// a freed block's old frame is no longer its cache).
    pub fn forget(&mut self, block: u64) {
        if let Some(w) = self.bound.remove(block) {
            let i = w >> 1;
            let _ = sys::page_unmap(0, self.va(i));
            self.spare.push(i);
        }
    }

    /// The blocks bound now, in order.
    pub fn blocks(&self) -> Vec<u64> {
        self.bound.keys().collect()
    }

    /// Whether `block` is bound (so cached: the kernel keeps a bound
    /// block's frame until it is unbound).
    pub fn contains(&self, block: u64) -> bool {
        self.bound.get(block).is_some()
    }

    /// Blocks bound now.
    pub fn len(&self) -> usize {
        self.bound.len()
    }

    /// Whether nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }
}

impl Drop for Bindings {
    fn drop(&mut self) {
        let blocks: Vec<u64> = self.bound.keys().collect();
        for b in blocks {
            self.forget(b);
        }
    }
}
