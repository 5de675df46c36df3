//! The XN buffer cache's frames: kernel-owned frames, each charged to the
//! account of the environment that caused it, reached by XN through
//! [`oxok_xn::Frames`]. Only frames in this pool are ever named to XN or
//! the disk.

use super::{PAGE_SIZE, frame, phys};
use crate::account::{self, AccountId};
use alloc::collections::BTreeMap;
use oxok_abi::Error;
use oxok_abi::frames::OWNER_KERNEL;
use oxok_abi::xn::BLOCK_SIZE;

/// The pool: frame number → the account charged for it.
#[derive(Default)]
pub struct CacheFrames {
    frames: BTreeMap<u64, AccountId>,
}

impl CacheFrames {
    /// A fresh zeroed kernel frame charged to `acct` (and keeping that
    /// account alive); its frame number. `NoMemory` when the account or the
    /// machine is out of frames or the kernel heap is full.
    pub fn alloc(&mut self, acct: AccountId) -> Result<u64, Error> {
        super::heap::reserve(64)?;
        // The frame and its entry in this pool's map (`account::owned`).
        account::charge_amount(acct, account::owned(1))?;
        let Some(pa) = frame::with(|f| f.alloc(OWNER_KERNEL)) else {
            account::uncharge_amount(acct, account::owned(1));
            return Err(Error::NoMemory);
        };
        let _ = account::with(|a| a.attach(acct));
        self.frames.insert(pa / PAGE_SIZE, acct);
        Ok(pa / PAGE_SIZE)
    }

    /// Frame `pfn` as a frame that may be mapped, if it is in this pool.
    pub fn mappable(&self, pfn: u64) -> Option<super::access::Mappable> {
        self.frames.contains_key(&pfn).then(|| super::access::Mappable::checked(pfn * PAGE_SIZE))
    }

    /// A frame charged to the kernel itself (boot-time recovery).
    pub fn alloc_kernel(&mut self) -> Option<u64> {
        let pa = frame::with(|f| f.alloc(OWNER_KERNEL))?;
        self.frames.insert(pa / PAGE_SIZE, account::ROOT);
        Some(pa / PAGE_SIZE)
    }

    /// Gives frame `pfn` back: freed now if nothing maps it, else handed to
    /// the orphan owner so the last unmapping frees it (a stale mapping
    /// keeps seeing the old bytes, never anyone else's). The charge goes
    /// back either way.
    pub fn release(&mut self, pfn: u64) {
        let Some(acct) = self.frames.remove(&pfn) else { return };
        if acct != account::ROOT {
            account::uncharge_amount(acct, account::owned(1));
            account::with(|a| a.detach(acct));
        }
        frame::with(|f| {
            let mapped = f.entry(pfn).is_some_and(|e| e.maps > 0);
            if mapped {
                if let Some(e) = f.entry_mut(pfn) {
                    e.owner = oxok_abi::frames::OWNER_ORPHAN;
                }
            } else {
                f.free(pfn * PAGE_SIZE);
            }
        });
    }

    /// Whether `pfn` is a cache frame.
    pub fn contains(&self, pfn: u64) -> bool {
        self.frames.contains_key(&pfn)
    }

    /// Frames in the pool.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether any mapping of frame `pfn` remains.
    pub fn mapped(&self, pfn: u64) -> bool {
        frame::with(|f| f.entry(pfn).is_some_and(|e| e.maps > 0))
    }

    /// Copies `bytes` into cache frame `pfn` (false if it is not one).
    pub fn fill(&mut self, pfn: u64, bytes: &[u8; BLOCK_SIZE]) -> bool {
        match oxok_xn::Frames::write(self, pfn) {
            Some(f) => {
                f.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    /// Copies cache frame `pfn` into `out` (false if it is not one).
    pub fn copy_out(&self, pfn: u64, out: &mut [u8; BLOCK_SIZE]) -> bool {
        match oxok_xn::Frames::read(self, pfn) {
            Some(f) => {
                out.copy_from_slice(f);
                true
            }
            None => false,
        }
    }
}

impl oxok_xn::Frames for CacheFrames {
    fn read(&self, pfn: u64) -> Option<&[u8; BLOCK_SIZE]> {
        if !self.contains(pfn) {
            return None;
        }
        // XN reads only metadata frames this way, which are never mapped
        // writable and which the device only reads.
        // SAFETY: `pfn` is a kernel-owned, direct-mapped frame of this pool,
        // allocated until `release`, which needs `&mut self` (not while this borrow lives).
        Some(unsafe { &*(phys::virt(pfn * PAGE_SIZE) as *const [u8; BLOCK_SIZE]) })
    }

    fn write(&mut self, pfn: u64) -> Option<&mut [u8; BLOCK_SIZE]> {
        if !self.contains(pfn) {
            return None;
        }
        // SAFETY: as `read`; the unique borrow of the pool makes this the
        // only kernel reference. XN writes only metadata frames (never
        // mapped writable), and `fill` writes frames not yet registered.
        Some(unsafe { &mut *(phys::virt(pfn * PAGE_SIZE) as *mut [u8; BLOCK_SIZE]) })
    }
}
