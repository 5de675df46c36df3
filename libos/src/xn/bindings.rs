//! [`Bindings`]: where a program keeps the buffer-cache pages it bound —
//! one page of its address space per block, read in and bound on first
//! use, so a library file system reads and writes cached blocks directly.
//! Each bound page is claimed once, at the bind ([`PageRef`]), and the
//! claim is let go at the unbind: reads and writes borrow it, so an access
//! costs no page check of its own.

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
    /// The claim on each page index bound now (writable when bound so),
    /// taken at the bind and let go before the unbind.
    claims: Vec<Option<PageRef>>,
    /// Page indices given back by [`forget`](Bindings::forget).
    spare: Vec<u64>,
    next: u64,
}

impl Bindings {
    /// A window of `pages` pages at `base` (page-aligned, unused by
    /// anything else in this program).
    pub const fn new(base: u64, pages: u64) -> Bindings {
        Bindings { base, pages, bound: BlockMap::new(), claims: Vec::new(), spare: Vec::new(), next: 0 }
    }

    /// Pages of the window: blocks bound at once at most.
    pub fn capacity(&self) -> u64 {
        self.pages
    }

    fn va(&self, index: u64) -> u64 {
        self.base + index * BLOCK_SIZE as u64
    }

    /// Reads `block` into the cache if needed, binds it (writable when
    /// `write`) and claims its page; its address. [`held`](Bindings::held)
    /// and [`held_mut`](Bindings::held_mut) borrow the bytes then;
    /// [`get`](Bindings::get) and [`get_mut`](Bindings::get_mut) are this
    /// and the borrow together.
    pub fn ensure(&mut self, block: u64, write: bool) -> Result<u64, XnError> {
        match self.bound.get(block) {
            Some(w) if w & 1 == 1 || !write => return Ok(self.va(w >> 1)),
            Some(_) => self.forget(block),
            None => {}
        }
        self.bound.reserve(block).map_err(|_| XnError::Sys(Error::NoMemory))?;
        // Room for the claim of any index this could take.
        let room = self.next as usize + 1;
        if self.claims.len() < room {
            self.claims.try_reserve(room - self.claims.len()).map_err(|_| XnError::Sys(Error::NoMemory))?;
            self.claims.resize_with(room, || None);
        }
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
        let va = self.va(index);
        let claim = match if write { page_mut(va) } else { page(va) } {
            Ok(claim) => claim,
            Err(e) => {
                let _ = sys::page_unmap(0, va);
                self.spare.push(index);
                return Err(e.into());
            }
        };
        // Room made above: neither can fail (an index is far below the
        // map's limit, and below `claims`' length).
        let _ = self.bound.insert(block, index << 1 | u64::from(write));
        if let Some(slot) = self.claims.get_mut(index as usize) {
            *slot = Some(claim);
        }
        Ok(va)
    }

    /// The bytes of `block` if it is bound (metadata or data; a change XN
    /// made to metadata shows here at once: it is the same frame).
    pub fn held(&self, block: u64) -> Option<&[u8; BLOCK_SIZE]> {
        let w = self.bound.get(block)?;
        self.claims.get((w >> 1) as usize)?.as_ref().map(PageRef::bytes)
    }

    /// The bytes of `block` if it is bound writable.
    pub fn held_mut(&mut self, block: u64) -> Option<&mut [u8; BLOCK_SIZE]> {
        let w = self.bound.get(block)?;
        self.claims.get_mut((w >> 1) as usize)?.as_mut()?.bytes_mut()
    }

    /// The cached bytes of `block` (metadata or data), bound read-only on
    /// first use. Metadata changed through `modify`, `alloc` or `free`
    /// shows here at once: it is the same frame.
    pub fn get(&mut self, block: u64) -> Result<&[u8; BLOCK_SIZE], XnError> {
        self.ensure(block, false)?;
        self.held(block).ok_or(XnError::Sys(Error::BadAddress))
    }

    /// The cached bytes of data `block`, bound writable (the rights check
    /// happens at the first bind); write them, then [`super::write`].
    pub fn get_mut(&mut self, block: u64) -> Result<&mut [u8; BLOCK_SIZE], XnError> {
        self.ensure(block, true)?;
        self.held_mut(block).ok_or(XnError::Sys(Error::BadAddress))
    }

    /// Unbinds `block` (do this before evicting it, and after freeing it:
    /// a freed block's old frame is no longer its cache).
    pub fn forget(&mut self, block: u64) {
        if let Some(w) = self.bound.remove(block) {
            let i = w >> 1;
            // The claim goes first: no borrow of the page outlives it.
            if let Some(slot) = self.claims.get_mut(i as usize) {
                *slot = None;
            }
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
