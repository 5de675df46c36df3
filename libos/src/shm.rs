//! Shared memory between processes, and the shared-memory ping-pong
//! (Aegis §6's ExOS IPC: shared frames plus directed yield).
//!
//! A [`Region`] is a run of frames the creating process allocates (it owns
//! them) and maps writable at an address in `[SHM_BASE, SHM_END)`. It
//! passes the region to a process it holds a capability for — a child from
//! `spawn` — with [`Region::share`]: one `page_batch` of
//! `MapEntry::share` records, which map the creator's own frames at the
//! same address in the child, never with more rights than the creator's
//! mapping (so a read-only share stays read-only: the kernel refuses to
//! widen it). The child finds the region with [`Region::attach`] (the
//! address comes from its arguments) and waits, bounded, until the pages
//! are there.
//!
//! **Trust.** Every process mapping a shared page can write anything into
//! it, so its contents are a claim, never a fact: [`ping_pong`] checks
//! every value it reads and reports corruption instead of trusting it.
//! Nothing else is reachable through a region: the kernel maps only the
//! frames named. The creator (who holds a capability for its child) can
//! also unmap the child's view at any time; a later access then faults in
//! the child.
//!
//! **Lifetime.** Dropping a region unmaps it here; the creator then frees
//! its frames, or — if a partner still maps them — drops its capabilities,
//! and the kernel frees each frame when its last mapping goes.

use crate::{exposed, proc, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error, MapEntry};
use oxok_rt::page::SharedRegion;

/// Where regions go.
pub const SHM_BASE: u64 = 0x4800_0000_0000;
/// End of the region area.
pub const SHM_END: u64 = 0x4900_0000_0000;
/// The most pages in one region (a ring of `RING_DATA_FRAMES_MAX` entry
/// frames and its header; each page holds a capability slot while made).
pub const MAX_PAGES: usize = 32;

/// A shared region mapped in this process.
pub struct Region {
    va: u64,
    pages: usize,
    /// Frame capabilities (creator only; 0 = none).
    caps: [u64; MAX_PAGES],
    creator: bool,
    /// The pages as the runtime checked them (all of them mapped).
    shared: Option<SharedRegion>,
}

/// Next address to try for a new region (a hint; mapped pages are skipped).
static NEXT: AtomicU64 = AtomicU64::new(SHM_BASE);

impl Region {
    /// Allocates `pages` zeroed frames and maps them writable here.
    pub fn create(pages: usize) -> Result<Region, Error> {
        if pages == 0 || pages > MAX_PAGES {
            return Err(Error::Invalid);
        }
        let va = free_range(pages)?;
        let mut r = Region { va, pages: 0, caps: [0; MAX_PAGES], creator: true, shared: None };
        for i in 0..pages {
            let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
            let at = va + (i as u64) * PAGE_SIZE;
            if let Err(e) = sys::page_map(0, slot, at, pte::WRITABLE | pte::NO_EXECUTE) {
                let _ = sys::frame_free(slot);
                return Err(e); // `r` drops what was made so far
            }
            r.caps[i] = slot;
            r.pages = i + 1;
        }
        r.shared = Some(SharedRegion::readable(va, pages).ok_or(Error::BadAddress)?);
        Ok(r)
    }

    /// The region of `pages` pages another process shared at `va`, once
    /// all of it is mapped here (waits up to `tries` yields; `NotFound`
    /// after that, `Invalid` for an address outside the region area).
    pub fn attach(va: u64, pages: usize, tries: u32) -> Result<Region, Error> {
        let end = (pages as u64).checked_mul(PAGE_SIZE).and_then(|n| va.checked_add(n)).ok_or(Error::Invalid)?;
        if pages == 0 || pages > MAX_PAGES || !va.is_multiple_of(PAGE_SIZE) || va < SHM_BASE || end > SHM_END {
            return Err(Error::Invalid);
        }
        for _ in 0..=tries {
            if let Some(shared) = SharedRegion::readable(va, pages) {
                return Ok(Region { va, pages, caps: [0; MAX_PAGES], creator: false, shared: Some(shared) });
            }
            let _ = sys::yield_cpu(0);
        }
        Err(Error::NotFound)
    }

    /// Maps this region at the same address in the environment named by
    /// capability slot `env_slot` (read-only unless `writable`).
    pub fn share(&self, env_slot: u64, writable: bool) -> Result<(), Error> {
        let flags = if writable { pte::WRITABLE | pte::NO_EXECUTE } else { pte::NO_EXECUTE };
        let mut recs = [MapEntry::default(); MAX_PAGES];
        for (i, rec) in recs.iter_mut().enumerate().take(self.pages) {
            let at = self.va + (i as u64) * PAGE_SIZE;
            *rec = MapEntry::share(at, at, flags);
        }
        sys::page_batch(env_slot, recs.as_ptr() as u64, self.pages as u64).map(|_| ())
    }

    /// Drops the capabilities of its frames (creator only): the frames
    /// stay mapped here, and the kernel frees each when its last mapping
    /// (or pin) goes, at the latest when this region is dropped.
    pub fn release_caps(&mut self) {
        for cap in self.caps.iter_mut().take(self.pages).filter(|c| **c != 0) {
            let _ = sys::cap_drop(*cap);
            *cap = 0;
        }
    }

    /// Its address.
    pub fn va(&self) -> u64 {
        self.va
    }

    /// The capability slots of its frames (the creator's; empty in a
    /// partner's view).
    pub fn frame_slots(&self) -> &[u64] {
        if self.creator { &self.caps[..self.pages] } else { &[] }
    }

    /// Its length in pages.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// True if every page is mapped writable here.
    pub fn writable(&self) -> bool {
        (0..self.pages).all(|i| exposed::writable(self.va + (i as u64) * PAGE_SIZE))
    }

    /// The region as words. Writing through them needs [`writable`]
    /// (a read-only share faults).
    ///
    /// [`writable`]: Region::writable
    pub fn words(&self) -> &[AtomicU64] {
        self.shared.as_ref().map_or(&[], SharedRegion::words)
    }

    /// Copies bytes from byte `at` out into `dst`, clipped to the region
    /// (see `SharedRegion::copy_out`: for bytes nobody writes meanwhile).
    pub fn copy_out(&self, at: usize, dst: &mut [u8]) {
        if let Some(r) = &self.shared {
            r.copy_out(at, dst);
        }
    }

    /// Copies `src` in at byte `at`, clipped to the region; needs
    /// [`writable`](Region::writable).
    pub fn copy_in(&self, at: usize, src: &[u8]) {
        if let Some(r) = &self.shared {
            r.copy_in(at, src);
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        for i in 0..self.pages {
            let _ = sys::page_unmap(0, self.va + (i as u64) * PAGE_SIZE);
            if self.creator && self.caps[i] != 0 && sys::frame_free(self.caps[i]).is_err() {
                // A partner still maps it: the kernel frees it after them.
                let _ = sys::cap_drop(self.caps[i]);
            }
        }
    }
}

/// `pages` unmapped pages (plus a guard page) in the region area.
fn free_range(pages: usize) -> Result<u64, Error> {
    let len = (pages as u64 + 1) * PAGE_SIZE;
    let mut va = NEXT.load(Ordering::Relaxed);
    while va + len <= SHM_END {
        match (0..pages as u64).find(|i| exposed::pte(va + i * PAGE_SIZE).is_some()) {
            Some(i) => va += (i + 1) * PAGE_SIZE,
            None => {
                NEXT.store(va + len, Ordering::Relaxed);
                return Ok(va);
            }
        }
    }
    Err(Error::NoMemory)
}

/// Why a ping-pong stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PingPongError {
    /// The counter held a value no honest partner writes (here it is).
    Corrupt(u64),
    /// The partner ended before the game did.
    PartnerGone,
}

/// One side of the ping-pong: two processes take turns incrementing
/// `counter` — side 0 on even values, side 1 on odd ones — until it reaches
/// `2 * rounds`, each giving the rest of its slot to `partner` (directed
/// yield) after its turn and while waiting. Returns the turns taken here
/// (`rounds` when it went through). Every value read is checked: the
/// counter only ever moves by the partner's single increment.
pub fn ping_pong(counter: &AtomicU64, side: u64, partner: u64, rounds: u64) -> Result<u64, PingPongError> {
    let end = rounds.saturating_mul(2);
    let side = side & 1;
    let mut turns = 0;
    // The least value the counter may hold now: before our first turn,
    // anything from 0; after it, our own write.
    let mut floor = 0;
    loop {
        let v = counter.load(Ordering::Acquire);
        // Honest values: what we wrote, or one more (the partner's turn);
        // before our first turn, 0 or the partner's first 1.
        if v < floor || v > floor + 1 || v > end {
            return Err(PingPongError::Corrupt(v));
        }
        if v == end {
            return Ok(turns);
        }
        if v % 2 == side {
            counter.store(v + 1, Ordering::Release);
            turns += 1;
            floor = v + 1;
        } else if !proc::alive(partner) {
            return Err(PingPongError::PartnerGone);
        }
        if crate::callcap::yield_to(partner).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
}
