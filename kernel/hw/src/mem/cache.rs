//! The XN buffer cache's frame pool: kernel-owned frames, each recorded
//! with the account (`A`) the kernel charged for it; their bytes reached
//! only through [`CachePool::bytes`] and [`CachePool::bytes_mut`] (which
//! the kernel lends XN). Only frames in this pool are ever named to XN or
//! the disk. The charging, and XN's names for these frames, are the
//! kernel's (its `xn::cache`).

use super::addr::Pfn;
use super::{frame, phys};
use alloc::collections::BTreeMap;
use oxok_abi::frames::OWNER_KERNEL;
use oxok_abi::xn::BLOCK_SIZE;

/// The pool: frame number → the account charged for it.
pub struct CachePool<A> {
    frames: BTreeMap<Pfn, A>,
}

impl<A> Default for CachePool<A> {
    fn default() -> Self {
        CachePool { frames: BTreeMap::new() }
    }
}

impl<A: Copy> CachePool<A> {
    /// A fresh zeroed kernel frame recorded as charged to `acct`; its frame
    /// number, or `None` when the machine is out of frames.
    pub fn alloc(&mut self, acct: A) -> Option<Pfn> {
        let pfn = frame::with(|f| f.alloc(OWNER_KERNEL))?.pfn();
        self.frames.insert(pfn, acct);
        Some(pfn)
    }

    /// Frame `pfn` as a frame that may be mapped, if it is in this pool.
    pub fn mappable(&self, pfn: Pfn) -> Option<super::access::Mappable> {
        self.frames.contains_key(&pfn).then(|| super::access::Mappable::checked(pfn.addr()))
    }

    /// Takes frame `pfn` out of the pool: freed now if nothing maps it,
    /// else handed to the orphan owner so the last unmapping frees it (a
    /// stale mapping keeps seeing the old bytes, never anyone else's).
    /// Returns the account it was charged to and whether it lives on as
    /// an orphan (`None`: not in the pool).
    pub fn release(&mut self, pfn: Pfn) -> Option<(A, bool)> {
        let acct = self.frames.remove(&pfn)?;
        let mapped = frame::with(|f| {
            let mapped = f.entry(pfn).is_some_and(|e| e.maps > 0);
            if mapped {
                f.set_owner(pfn, oxok_abi::frames::OWNER_ORPHAN);
            } else {
                f.free(pfn.addr());
            }
            mapped
        });
        Some((acct, mapped))
    }

    /// Whether `pfn` is a cache frame.
    pub fn contains(&self, pfn: Pfn) -> bool {
        self.frames.contains_key(&pfn)
    }

    /// Frames in the pool.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True if the pool holds no frame.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Whether any mapping of frame `pfn` remains.
    pub fn mapped(&self, pfn: Pfn) -> bool {
        frame::with(|f| f.entry(pfn).is_some_and(|e| e.maps > 0))
    }

    /// Copies `bytes` into cache frame `pfn` (false if it is not one).
    pub fn fill(&mut self, pfn: Pfn, bytes: &[u8; BLOCK_SIZE]) -> bool {
        match self.bytes_mut(pfn) {
            Some(f) => {
                f.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    /// Copies cache frame `pfn` into `out` (false if it is not one).
    pub fn copy_out(&self, pfn: Pfn, out: &mut [u8; BLOCK_SIZE]) -> bool {
        match self.bytes(pfn) {
            Some(f) => {
                out.copy_from_slice(f);
                true
            }
            None => false,
        }
    }

    /// The bytes of cache frame `pfn` (`None` if it is not one).
    pub fn bytes(&self, pfn: Pfn) -> Option<&[u8; BLOCK_SIZE]> {
        if !self.contains(pfn) {
            return None;
        }
        // Read by `copy_out` and by XN (through the kernel), which reads
        // only metadata frames this way: never mapped writable, and the
        // device only reads them.
        // SAFETY: `pfn` is a kernel-owned, direct-mapped frame of this pool,
        // allocated until `release`, which needs `&mut self` (not while this borrow lives).
        Some(unsafe { &*(phys::virt(pfn.addr()) as *const [u8; BLOCK_SIZE]) })
    }

    /// The bytes of cache frame `pfn`, writable (`None` if it is not one).
    pub fn bytes_mut(&mut self, pfn: Pfn) -> Option<&mut [u8; BLOCK_SIZE]> {
        if !self.contains(pfn) {
            return None;
        }
        // SAFETY: as `bytes`; the unique borrow of the pool makes this the
        // only kernel reference. XN writes only metadata frames (never
        // mapped writable), and `fill` writes frames not yet registered.
        Some(unsafe { &mut *(phys::virt(pfn.addr()) as *mut [u8; BLOCK_SIZE]) })
    }
}
