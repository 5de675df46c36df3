//! The XN buffer cache's frames, charged: the frame pool of
//! [`oxok_hw::mem::cache::CachePool`], each frame charged to the account of
//! the environment that caused it. Only frames in this pool are ever named
//! to XN or the disk.

use crate::account::{self, AccountId};
use crate::mem::access::Mappable;
use crate::mem::cache::CachePool;
use oxok_abi::Error;
use oxok_abi::xn::BLOCK_SIZE;

/// The pool, with who pays for each frame (`None`: the kernel itself).
#[derive(Default)]
pub struct CacheFrames {
    pool: CachePool<Option<AccountId>>,
    /// Frames charged to an account (all but the kernel's own).
    charged: usize,
}

impl CacheFrames {
    /// A fresh zeroed kernel frame charged to `acct` (and keeping that
    /// account alive); its frame number. `NoMemory` when the account or the
    /// machine is out of frames or the kernel heap is full.
    pub fn alloc(&mut self, acct: AccountId) -> Result<u64, Error> {
        crate::mem::heap::reserve(64)?;
        // The frame and its entry in this pool's map (`account::owned`).
        account::charge_amount(acct, account::owned(1))?;
        let Some(pfn) = self.pool.alloc(Some(acct)) else {
            account::uncharge_amount(acct, account::owned(1));
            return Err(Error::NoMemory);
        };
        let _ = account::with(|a| a.attach(acct));
        self.charged += 1;
        Ok(pfn)
    }

    /// Frame `pfn` as a frame that may be mapped, if it is in this pool.
    pub fn mappable(&self, pfn: u64) -> Option<Mappable> {
        self.pool.mappable(pfn)
    }

    /// A frame charged to the kernel itself (boot-time recovery).
    pub fn alloc_kernel(&mut self) -> Option<u64> {
        self.pool.alloc(None)
    }

    /// Gives frame `pfn` back: freed now if nothing maps it, else handed to
    /// the orphan owner so the last unmapping frees it (a stale mapping
    /// keeps seeing the old bytes, never anyone else's). The charge goes
    /// back either way.
    pub fn release(&mut self, pfn: u64) {
        // The root account pays like any other (the boot programs'); only
        // the kernel's own frames were never charged.
        let Some(Some(acct)) = self.pool.release(pfn) else { return };
        account::uncharge_amount(acct, account::owned(1));
        account::with(|a| a.detach(acct));
        self.charged = self.charged.saturating_sub(1);
    }

    /// What the frames charged to accounts cost them in all
    /// ([`account::owned`] each): charges that outlive the programs that
    /// caused them, as the cache does.
    pub fn charged(&self) -> oxok_account::Amount {
        account::owned(self.charged as u64)
    }

    /// Frames in the pool.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// Whether any mapping of frame `pfn` remains.
    pub fn mapped(&self, pfn: u64) -> bool {
        self.pool.mapped(pfn)
    }

    /// Copies `bytes` into cache frame `pfn` (false if it is not one).
    pub fn fill(&mut self, pfn: u64, bytes: &[u8; BLOCK_SIZE]) -> bool {
        self.pool.fill(pfn, bytes)
    }

    /// Copies cache frame `pfn` into `out` (false if it is not one).
    pub fn copy_out(&self, pfn: u64, out: &mut [u8; BLOCK_SIZE]) -> bool {
        self.pool.copy_out(pfn, out)
    }
}

impl oxok_xn::Frames for CacheFrames {
    fn read(&self, pfn: u64) -> Option<&[u8; BLOCK_SIZE]> {
        oxok_xn::Frames::read(&self.pool, pfn)
    }

    fn write(&mut self, pfn: u64) -> Option<&mut [u8; BLOCK_SIZE]> {
        oxok_xn::Frames::write(&mut self.pool, pfn)
    }
}
