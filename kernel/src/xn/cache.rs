//! The XN buffer cache's frames, charged: the frame pool of
//! [`oxok_hw::mem::cache::CachePool`], each frame charged to the account of
//! the environment that caused it. Only frames in this pool are ever named
//! to XN or the disk. XN (`oxok_xn`, a crate of its own) names a frame by
//! its own type, [`Frame`], and so does the kernel's XN wrapper for the
//! frames of this pool; this file is the one place a [`Frame`] becomes the
//! kernel's [`Pfn`] (for the pool, a mapping or the disk) and back.

use crate::account::{self, AccountId};
use crate::mem::access::Mappable;
use crate::mem::addr::{Pfn, PhysAddr};
use crate::mem::cache::CachePool;
use oxok_abi::Error;
use oxok_abi::xn::BLOCK_SIZE;
use oxok_xn::Frame;

/// The kernel's frame number for XN's `frame`.
fn pfn(frame: Frame) -> Pfn {
    Pfn::from_word(frame.raw())
}

/// XN's name for the pool's frame `pfn`.
fn frame(pfn: Pfn) -> Frame {
    Frame::from_word(pfn.raw())
}

/// The physical address of cache frame `frame`, for the disk's requests.
pub fn addr(frame: Frame) -> PhysAddr {
    pfn(frame).addr()
}

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
    pub fn alloc(&mut self, acct: AccountId) -> Result<Frame, Error> {
        crate::mem::heap::reserve(64)?;
        // The frame and its entry in this pool's map (`account::cached`),
        // charged first and given back by the guard if no frame is left.
        let charge = account::Charge::cached(acct)?;
        let new = self.pool.alloc(Some(acct)).ok_or(Error::NoMemory)?;
        charge.commit();
        let _ = account::with(|a| a.attach(acct));
        self.charged += 1;
        Ok(frame(new))
    }

    /// Cache frame `f` as a frame that may be mapped, if it is in this pool.
    pub fn mappable(&self, f: Frame) -> Option<Mappable> {
        self.pool.mappable(pfn(f))
    }

    /// A frame of the kernel's own, charged to nobody (boot-time recovery,
    /// the catalogue).
    pub fn alloc_kernel(&mut self) -> Option<Frame> {
        self.pool.alloc(None).map(frame)
    }

    /// Gives cache frame `f` back: freed now if nothing maps it, else handed to
    /// the orphan owner so the last unmapping frees it (a stale mapping
    /// keeps seeing the old bytes, never anyone else's). The charge goes
    /// back — but for an orphan's frame, which stays charged to the account
    /// until its last mapping goes (`env::orphans`), as an ended owner's
    /// does: a block freed (`xn_free`) while its frame is mapped must not
    /// leave a frame nobody pays for.
    pub fn release(&mut self, f: Frame) {
        // The root account pays like any other (the boot programs'); only
        // the kernel's own frames were never charged.
        let Some((Some(acct), orphaned)) = self.pool.release(pfn(f)) else { return };
        let kept = orphaned && crate::env::orphans::adopt(pfn(f), acct);
        let back = if kept { oxok_account::Amount::heap(account::CACHE_HEAP) } else { account::cached(1) };
        account::uncharge_amount(acct, back);
        account::with(|a| a.detach(acct));
        self.charged = self.charged.saturating_sub(1);
    }

    /// What the frames charged to accounts cost them in all
    /// ([`account::cached`] each): charges that outlive the programs that
    /// caused them, as the cache does.
    pub fn charged(&self) -> oxok_account::Amount {
        account::cached(self.charged as u64)
    }

    /// Frames in the pool.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// Whether any mapping of cache frame `f` remains.
    pub fn mapped(&self, f: Frame) -> bool {
        self.pool.mapped(pfn(f))
    }

    /// Copies `bytes` into cache frame `f` (false if it is not one).
    pub fn fill(&mut self, f: Frame, bytes: &[u8; BLOCK_SIZE]) -> bool {
        self.pool.fill(pfn(f), bytes)
    }

    /// Copies cache frame `f` into `out` (false if it is not one).
    pub fn copy_out(&self, f: Frame, out: &mut [u8; BLOCK_SIZE]) -> bool {
        self.pool.copy_out(pfn(f), out)
    }
}

impl oxok_xn::Frames for CacheFrames {
    fn read(&self, f: Frame) -> Option<&[u8; BLOCK_SIZE]> {
        self.pool.bytes(pfn(f))
    }

    fn write(&mut self, f: Frame) -> Option<&mut [u8; BLOCK_SIZE]> {
        self.pool.bytes_mut(pfn(f))
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
    frames: [Frame; TAKEN_MAX],
    n: usize,
}

impl CacheFrames {
    /// A guard for frames a call is about to take.
    pub fn taking(&mut self) -> Taken<'_> {
        Taken { mem: self, frames: [Frame::from_word(0); TAKEN_MAX], n: 0 }
    }
}

impl Taken<'_> {
    /// Takes a fresh frame charged to `acct` (see [`CacheFrames::alloc`]).
    pub fn alloc(&mut self, acct: AccountId) -> Result<Frame, Error> {
        if self.n >= TAKEN_MAX {
            return Err(Error::NoMemory);
        }
        let f = self.mem.alloc(acct)?;
        self.frames[self.n] = f;
        self.n += 1;
        Ok(f)
    }

    /// Takes a fresh frame charged to the kernel (the catalogue's).
    pub fn alloc_kernel(&mut self) -> Result<Frame, Error> {
        if self.n >= TAKEN_MAX {
            return Err(Error::NoMemory);
        }
        let f = self.mem.alloc_kernel().ok_or(Error::NoMemory)?;
        self.frames[self.n] = f;
        self.n += 1;
        Ok(f)
    }

    /// Holds frames taken earlier in the same call (at most the guard's
    /// room; the catalogue's four).
    pub fn adopt(&mut self, frames: &[Frame]) {
        for &f in frames {
            if self.n < TAKEN_MAX {
                self.frames[self.n] = f;
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

    /// Keeps the frames `keep(index, frame)` accepts and gives the rest back
    /// (a frame XN's registry had no room for after the call succeeded).
    pub fn keep_each(mut self, mut keep: impl FnMut(usize, Frame) -> bool) {
        let mut left = 0;
        for i in 0..self.n {
            let f = self.frames[i];
            if !keep(i, f) {
                self.frames[left] = f;
                left += 1;
            }
        }
        self.n = left;
    }
}

impl Drop for Taken<'_> {
    /// The call did not keep them: each frame goes back (and its charge).
    fn drop(&mut self) {
        for &f in &self.frames[..self.n] {
            self.mem.release(f);
        }
    }
}
