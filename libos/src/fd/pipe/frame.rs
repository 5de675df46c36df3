//! The pipe's shared frame (Aegis §6 ExOS IPC; Xok §5.2): one 4 KiB page
//! mapped at the same address in every process that holds an end of the
//! pipe, a [`Header`] of atomic words and a ring buffer behind it.
//!
//! ```text
//! 0    magic     "OXOKPIPE" (diagnostic only)
//! 8    read      bytes taken out since creation   (written by readers)
//! 16   written   bytes put in since creation      (written by writers)
//! 24   lock      id of the writer copying now, 0 when free (writers)
//! 32   holders[0][0..8]  ids of processes holding a read end
//! 96   holders[1][0..8]  ids of processes holding a write end
//! 160  demand    `read + 1` stored by a reader about to wait on an empty
//!                pipe: more than `written` means "a reader wants bytes"
//! 256  ring      CAPACITY bytes; byte n of the stream is at 256 + n % CAPACITY
//! ```
//!
//! Everything here is shared with the pipe's partners and may be garbage:
//! this module hands out only atomics and bounds-checked copies, never a
//! reference into the ring, and every index it copies at comes from
//! `oxok_pipering::spans`, which reduces it modulo [`CAPACITY`]. The page
//! is the runtime's `SharedPage` (checked mapped when made, bytes only by
//! clipped copies).

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::PAGE_SIZE;
use oxok_rt::page::SharedPage;

/// The holder table of a header that cannot be read (never: the header
/// words are whole).
static EMPTY: [[AtomicU64; HOLDERS]; 2] = [const { [const { AtomicU64::new(0) }; HOLDERS] }; 2];

/// Holder entries per side.
pub const HOLDERS: usize = 8;
/// Where the ring starts in the frame.
const RING_AT: u64 = 256;
/// Bytes the ring holds.
pub const CAPACITY: u64 = PAGE_SIZE - RING_AT;
/// The first word of a pipe frame.
pub const MAGIC: u64 = u64::from_le_bytes(*b"OXOKPIPE");

/// Which end: the index into [`Header::holders`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The read end.
    Read = 0,
    /// The write end.
    Write = 1,
}

/// The header at the start of a pipe frame (layout in the module
/// documentation), as views of its words. Every field is an atomic word:
/// partners in other processes change them concurrently, and any bit
/// pattern is a value.
pub struct Header<'a> {
    /// [`MAGIC`] once the creator initialised the frame.
    pub magic: &'a AtomicU64,
    /// Bytes consumed since creation (free-running; readers advance it).
    pub read: &'a AtomicU64,
    /// Bytes produced since creation (free-running; writers advance it).
    pub written: &'a AtomicU64,
    /// The writer in the middle of a copy (its environment id), or 0.
    pub lock: &'a AtomicU64,
    /// Environment ids of the processes holding each end; 0 is free.
    pub holders: &'a [[AtomicU64; HOLDERS]; 2],
    /// A waiting reader's `read + 1` (see the layout above): a writer that
    /// feeds on demand (the shell's keyboard feed) writes only while this
    /// is above `written`.
    pub demand: &'a AtomicU64,
}

/// Word indices of the header's fields.
const W_MAGIC: usize = 0;
const W_READ: usize = 1;
const W_WRITTEN: usize = 2;
const W_LOCK: usize = 3;
const W_HOLDERS: usize = 4;
const W_DEMAND: usize = W_HOLDERS + 2 * HOLDERS;

const _: () = assert!(((W_DEMAND + 1) * 8) as u64 <= RING_AT);

/// A pipe frame mapped at `va` in this process.
///
/// Invariant (kept by `super::local`, the only code that makes one): the
/// page at `va` is mapped user-writable, is not a Rust object (the
/// runtime's `SharedPage` checked both), and stays mapped as long as the
/// end object that owns this `Frame` lives — the registry unmaps a pipe's
/// page only when the last end in this process is dropped.
pub struct Frame {
    page: SharedPage,
}

impl Frame {
    /// The frame at `va`, if that page is mapped user-writable here. Only
    /// `super::local` calls this, for pages it keeps mapped (see the
    /// invariant on [`Frame`]).
    pub(super) fn at(va: u64) -> Option<Frame> {
        SharedPage::writable(va).map(|page| Frame { page })
    }

    /// Where the frame is mapped.
    pub fn va(&self) -> u64 {
        self.page.va()
    }

    /// The header.
    pub fn header(&self) -> Header<'_> {
        let w = self.page.words();
        let (holders, _) = w[W_HOLDERS..W_DEMAND].as_chunks::<HOLDERS>();
        let holders = holders.try_into().unwrap_or(&EMPTY);
        Header {
            magic: &w[W_MAGIC],
            read: &w[W_READ],
            written: &w[W_WRITTEN],
            lock: &w[W_LOCK],
            holders,
            demand: &w[W_DEMAND],
        }
    }

    /// Address of a header word, for wakeup predicates.
    pub fn word_address(&self, word: &AtomicU64) -> u64 {
        word as *const AtomicU64 as u64
    }

    /// Copies `dst.len()` bytes of the stream starting at byte `pos` out
    /// of the ring (wrapping at its end). `dst.len()` ≤ [`CAPACITY`].
    pub fn copy_out(&self, pos: u64, dst: &mut [u8]) {
        for s in oxok_pipering::spans(pos, dst.len(), CAPACITY as usize) {
            let Some(to) = dst.get_mut(s.buf..s.buf + s.len) else { return };
            // `spans` keeps every piece inside the ring.
            self.page.copy_out(RING_AT as usize + s.ring, to);
        }
    }

    /// Copies `src` into the ring at stream byte `pos` (wrapping).
    /// `src.len()` ≤ [`CAPACITY`].
    pub fn copy_in(&self, pos: u64, src: &[u8]) {
        for s in oxok_pipering::spans(pos, src.len(), CAPACITY as usize) {
            let Some(from) = src.get(s.buf..s.buf + s.len) else { return };
            self.page.copy_in(RING_AT as usize + s.ring, from);
        }
    }

    /// Sets up a fresh (zeroed) frame: the magic and the creator as the
    /// holder of both ends.
    pub fn init(&self, me: u64) {
        let h = self.header();
        h.holders[Side::Read as usize][0].store(me, Ordering::Relaxed);
        h.holders[Side::Write as usize][0].store(me, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
    }
}

/// Rewrites the holder ids in the image of a pipe page (see
/// `pipe::rebind_holders`); false, changing nothing, unless the image is in
/// the pipe region and starts with the magic.
pub fn rebind_image(va: u64, page: &mut [u8], map: &dyn Fn(u64) -> Option<u64>) -> bool {
    let word = |p: &[u8], at: usize| p.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
    if !super::local::in_region(va) || word(page, 0) != Some(MAGIC) {
        return false;
    }
    let base = W_HOLDERS * 8;
    for i in 0..2 * HOLDERS {
        let at = base + i * 8;
        let Some(old) = word(page, at) else { return false };
        let new = if old == 0 { 0 } else { map(old).unwrap_or(0) };
        page[at..at + 8].copy_from_slice(&new.to_le_bytes());
    }
    true
}
