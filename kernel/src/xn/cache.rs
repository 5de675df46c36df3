//! The XN buffer cache's frames, charged: the frame pool of
//! [`oxok_hw::mem::cache::CachePool`], each frame charged to the account of
//! the environment that caused it. Only frames in this pool are ever named
//! to XN or the disk. XN (`oxok_xn`, a crate of its own) names frames by
//! number, as words; this is where its words meet the pool's [`Pfn`]s.

use crate::account::{self, AccountId};
use crate::mem::access::Mappable;
use crate::mem::addr::Pfn;
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
        // The frame and its entry in this pool's map (`account::owned`),
        // charged first and given back by the guard if no frame is left.
        let charge = account::Charge::owned(acct)?;
        let pfn = self.pool.alloc(Some(acct)).ok_or(Error::NoMemory)?;
        charge.commit();
        let _ = account::with(|a| a.attach(acct));
        self.charged += 1;
        Ok(pfn.raw())
    }

    /// Frame `pfn` as a frame that may be mapped, if it is in this pool.
    pub fn mappable(&self, pfn: u64) -> Option<Mappable> {
        self.pool.mappable(Pfn::from_word(pfn))
    }

    /// A frame of the kernel's own, charged to nobody (boot-time recovery,
    /// the catalogue).
    pub fn alloc_kernel(&mut self) -> Option<u64> {
        self.pool.alloc(None).map(Pfn::raw)
    }

    /// Gives frame `pfn` back: freed now if nothing maps it, else handed to
    /// the orphan owner so the last unmapping frees it (a stale mapping
    /// keeps seeing the old bytes, never anyone else's). The charge goes
    /// back either way.
    pub fn release(&mut self, pfn: u64) {
        // The root account pays like any other (the boot programs'); only
        // the kernel's own frames were never charged.
        let Some(Some(acct)) = self.pool.release(Pfn::from_word(pfn)) else { return };
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
        self.pool.mapped(Pfn::from_word(pfn))
    }

    /// Copies `bytes` into cache frame `pfn` (false if it is not one).
    pub fn fill(&mut self, pfn: u64, bytes: &[u8; BLOCK_SIZE]) -> bool {
        self.pool.fill(Pfn::from_word(pfn), bytes)
    }

    /// Copies cache frame `pfn` into `out` (false if it is not one).
    pub fn copy_out(&self, pfn: u64, out: &mut [u8; BLOCK_SIZE]) -> bool {
        self.pool.copy_out(Pfn::from_word(pfn), out)
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

/// Most cache frames one call takes before XN's check ([`Taken`]).
const TAKEN_MAX: usize = oxok_abi::xn::MAX_EXTENT_CALL as usize;

/// Cache frames taken for one call before XN's own check decides whether
/// they are used. XN checks and records in one step (`add_root`,
/// `allocate`, a read's submission), so the frames must exist before it
/// runs — the one place an XN call takes something before its last check.
/// The guard gives every frame back when dropped, unless the call keeps
/// them: no release is written by hand on a refusal.
#[must_use = "frames taken and not kept are given back at once"]
pub struct Taken<'a> {
    mem: &'a mut CacheFrames,
    frames: [u64; TAKEN_MAX],
    n: usize,
}

impl CacheFrames {
    /// A guard for frames a call is about to take.
    pub fn taking(&mut self) -> Taken<'_> {
        Taken { mem: self, frames: [0; TAKEN_MAX], n: 0 }
    }
}

impl Taken<'_> {
    /// Takes a fresh frame charged to `acct` (see [`CacheFrames::alloc`]).
    pub fn alloc(&mut self, acct: AccountId) -> Result<u64, Error> {
        if self.n >= TAKEN_MAX {
            return Err(Error::NoMemory);
        }
        let pfn = self.mem.alloc(acct)?;
        self.frames[self.n] = pfn;
        self.n += 1;
        Ok(pfn)
    }

    /// Takes a fresh frame charged to the kernel (the catalogue's).
    pub fn alloc_kernel(&mut self) -> Result<u64, Error> {
        if self.n >= TAKEN_MAX {
            return Err(Error::NoMemory);
        }
        let pfn = self.mem.alloc_kernel().ok_or(Error::NoMemory)?;
        self.frames[self.n] = pfn;
        self.n += 1;
        Ok(pfn)
    }

    /// Holds frames taken earlier in the same call (at most the guard's
    /// room; the catalogue's four).
    pub fn adopt(&mut self, frames: &[u64]) {
        for &pfn in frames {
            if self.n < TAKEN_MAX {
                self.frames[self.n] = pfn;
                self.n += 1;
            }
        }
    }

    /// The pool, for XN's check (which reads the frames taken).
    pub fn mem(&mut self) -> &mut CacheFrames {
        self.mem
    }

    /// Keeps every frame taken: the call succeeded.
    pub fn keep(mut self) {
        self.n = 0;
    }

    /// Keeps the frames `keep(index, pfn)` accepts and gives the rest back
    /// (a frame XN's registry had no room for after the call succeeded).
    pub fn keep_each(mut self, mut keep: impl FnMut(usize, u64) -> bool) {
        let mut left = 0;
        for i in 0..self.n {
            let pfn = self.frames[i];
            if !keep(i, pfn) {
                self.frames[left] = pfn;
                left += 1;
            }
        }
        self.n = left;
    }
}

impl Drop for Taken<'_> {
    /// The call did not keep them: each frame goes back (and its charge).
    fn drop(&mut self) {
        for &pfn in &self.frames[..self.n] {
            self.mem.release(pfn);
        }
    }
}
