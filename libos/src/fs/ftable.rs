//! The open-file table: what the libOS keeps in its own memory about each
//! open file of the file server, so that a checkpointer can carry it
//! (Fluke §4: no cooperation from the target beyond what its libOS keeps
//! in its memory).
//!
//! The server's handle is bound to the client's environment id, and the
//! server is outside any checkpointed tree, so a handle means nothing after
//! a restore. What does survive is here, at a fixed address: for every
//! open file, the absolute path it was opened by, the open mode (without
//! the once-only `CREATE`, `TRUNCATE` and `EXCLUSIVE`), the position as the
//! last reply reported it and when (the TSC), a directory's cursor (the
//! last name it handed out), the inode number, the server and handle in
//! use, and a share id naming the server's open-file record: a descriptor
//! passed to a child (`file:` spec with its origin) keeps the parent's path,
//! mode and share id, so a checkpointer sees which entries of a tree share
//! one record and takes the position (or cursor) the latest reply among
//! them reported. A restore (`apps/ckpt`) re-opens each file by path on the target's
//! server, moves the new record to the saved position, hands the handle to
//! the restored process (`DUP`) and rewrites `SERVER`, `HANDLE` and
//! `OWNER` in the image; [`OpenFile`](super::OpenFile) reads them from
//! here on every request, so it follows.
//!
//! **Exact positions.** An entry's `BUSY` word counts requests in flight:
//! between raising it and storing the position of the reply, the server's
//! record may already have moved. A checkpointer takes no cut while any
//! entry is busy (as it takes none during a transfer between members).
//! An open takes its entry before asking the server, busy until the
//! handle of the reply is in it ([`take_opening`], [`opened`]): no cut
//! falls between a server's open and its record here.
//!
//! **Layout.** [`ENTRIES`] entries of [`ENTRY_BYTES`] at [`FILES_BASE`],
//! pages mapped on first use; words of an entry at the `W_*` indices, the
//! path's bytes from [`PATH_AT`]. An entry is live when its `MAGIC` word is
//! [`ENTRY_MAGIC`] and its `OWNER` is this environment (a forked child
//! inherits its parent's entries in copied memory; they are not its own).
//! A path longer than [`PATH_ROOM`] is recorded with length 0: the file
//! works, a checkpoint of it is refused. Its pages are the runtime's
//! `FixedPage`s: words are atomics, checked mapped once.

use crate::{exposed, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::ANY_FRAME;
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_rt::page::FixedPage;
use spin::Mutex;

/// Start of the table's region.
pub const FILES_BASE: u64 = 0x5300_0000_0000;
/// Entries (the server's handles per client).
pub const ENTRIES: usize = 64;
/// Bytes per entry.
pub const ENTRY_BYTES: usize = 512;
/// Pages of the region.
pub const PAGES: usize = ENTRIES * ENTRY_BYTES / PAGE_SIZE as usize;
/// Entries per page.
pub const PER_PAGE: usize = PAGE_SIZE as usize / ENTRY_BYTES;
/// Word 0 of a live entry.
pub const ENTRY_MAGIC: u64 = u64::from_le_bytes(*b"OXFILE\0\x01");
/// Word indices of an entry.
pub const W_MAGIC: usize = 0;
/// The environment the entry belongs to.
pub const W_OWNER: usize = 1;
/// The file server's id.
pub const W_SERVER: usize = 2;
/// The server's handle for `OWNER`.
pub const W_HANDLE: usize = 3;
/// Open flags to re-open with (`proto::flags`).
pub const W_FLAGS: usize = 4;
/// The position after the last reply.
pub const W_POS: usize = 5;
/// The inode number at open.
pub const W_INO: usize = 6;
/// Requests in flight.
pub const W_BUSY: usize = 7;
/// Bytes of the path (0: unknown).
pub const W_PATH_LEN: usize = 8;
/// The share id: entries with the same one use one open-file record of the
/// server (the TSC when the file was opened: unique on one CPU).
pub const W_SHARE: usize = 9;
/// The TSC when the reply that set `POS` (or the cursor) arrived; 0: none.
pub const W_STAMP: usize = 10;
/// Bytes of a directory's cursor, stored right after the path (padded to
/// whole words); 0: at the start; [`CURSOR_UNKNOWN`]: too long to keep.
pub const W_CURSOR_LEN: usize = 11;
/// Byte offset of the path in an entry.
pub const PATH_AT: usize = 96;
/// `W_CURSOR_LEN` of a cursor that did not fit.
pub const CURSOR_UNKNOWN: u64 = u64::MAX;
/// Longest path recorded.
pub const PATH_ROOM: usize = ENTRY_BYTES - PATH_AT;
/// Flags a re-open keeps.
pub const KEEP_FLAGS: u64 = super::proto::flags::READ
    | super::proto::flags::WRITE
    | super::proto::flags::APPEND
    | super::proto::flags::DIRECTORY;

const _: () = assert!(ENTRIES * ENTRY_BYTES == PAGES * PAGE_SIZE as usize);

/// Which pages are mapped (bit per page), for the owner in `MAPPED_BY`.
static MAPPED: AtomicU64 = AtomicU64::new(0);
static MAPPED_BY: AtomicU64 = AtomicU64::new(0);
/// Serializes taking and freeing entries.
static LOCK: Mutex<()> = Mutex::new(());

/// The table's pages, each checked mapped once (in `entry_word`).
static TABLE: [FixedPage; PAGES] = table();

const fn table() -> [FixedPage; PAGES] {
    let mut pages = [const { FixedPage::at(0) }; PAGES];
    let mut i = 0;
    while i < PAGES {
        pages[i] = FixedPage::at(FILES_BASE + i as u64 * PAGE_SIZE);
        i += 1;
    }
    pages
}

/// Word `at / 8` of entry `slot` (`at` a multiple of 8 inside the entry),
/// as an atomic. Callers only pass slots whose page `ensure_page` mapped
/// (in `take`, just before; everywhere else, slots `take` returned), and
/// the table's pages are never unmapped.
fn entry_word(slot: usize, at: usize) -> &'static AtomicU64 {
    debug_assert!(slot < ENTRIES && at.is_multiple_of(8) && at < ENTRY_BYTES);
    &entry(slot)[(at / 8) % (ENTRY_BYTES / 8)]
}

/// Word `w` of entry `slot`, as an atomic.
fn word(slot: usize, w: usize) -> &'static AtomicU64 {
    debug_assert!(w * 8 < PATH_AT);
    entry_word(slot, w * 8)
}

/// Maps page `page` of the region for this environment if it is not yet.
fn ensure_page(page: usize) -> bool {
    let me = exposed::self_id();
    if MAPPED_BY.load(Ordering::Acquire) != me {
        // A forked child (its parent's pages are copy-on-write copies) or a
        // restored process: the mappings are there; note them as ours.
        let mut mask = 0;
        for p in 0..PAGES {
            if exposed::readable(FILES_BASE + p as u64 * PAGE_SIZE) {
                mask |= 1 << p;
            }
        }
        MAPPED.store(mask, Ordering::Release);
        MAPPED_BY.store(me, Ordering::Release);
    }
    if MAPPED.load(Ordering::Acquire) & (1 << page) != 0 {
        return true;
    }
    let va = FILES_BASE + page as u64 * PAGE_SIZE;
    let Ok([slot, _]) = sys::frame_alloc(ANY_FRAME) else { return false };
    let mapped = sys::page_map(0, slot, va, pte::WRITABLE | pte::NO_EXECUTE).is_ok() && exposed::writable(va);
    // The binding stays; the capability is not needed any more.
    let _ = sys::cap_drop(slot);
    if mapped {
        MAPPED.fetch_or(1 << page, Ordering::AcqRel);
    }
    mapped
}

/// Address of byte `at` (a multiple of 8) of entry `slot`'s path area, as
/// an atomic word.
fn area_word(slot: usize, at: usize) -> &'static AtomicU64 {
    debug_assert!(at < PATH_ROOM);
    entry_word(slot, PATH_AT + at)
}

/// Stores `bytes` at byte `at` of entry `slot`'s path area (padded).
fn put_area(slot: usize, at: usize, bytes: &[u8]) {
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        area_word(slot, at + i * 8).store(u64::from_le_bytes(w), Ordering::Relaxed);
    }
}

/// A share id for a record this process opens.
fn new_share() -> u64 {
    crate::time::rdtsc().max(1)
}

/// Takes an entry for `handle` of `server`, opened as `flags` by `path`
/// (`None`: the path unknown) on inode `ino`, sharing the server's record
/// `share` names (`None`: a record of its own); `None` when the table is
/// full or no page can be mapped.
pub(crate) fn take(
    server: u64,
    handle: u64,
    flags: u64,
    ino: u64,
    path: Option<&str>,
    share: Option<u64>,
) -> Option<usize> {
    take_with(Fields { server, handle, flags, ino, share }, path, 0)
}

/// Takes an entry for a file about to be opened on `server` as `flags` by
/// `path`, busy from the start (one request in flight: the open), so a
/// checkpointer takes no cut until [`opened`] or [`free`]: a cut between
/// the server's reply and the entry would save a process whose open
/// happened but whose entry did not, and its restored copy would hold the
/// old handle.
pub(crate) fn take_opening(server: u64, flags: u64, path: &str) -> Option<usize> {
    take_with(Fields { server, handle: u64::MAX, flags, ino: 0, share: None }, Some(path), 1)
}

/// The open [`take_opening`] was for succeeded: the server's handle and the
/// inode, and the request ends.
pub(crate) fn opened(slot: usize, handle: u64, ino: u64) {
    word(slot, W_HANDLE).store(handle, Ordering::Release);
    word(slot, W_INO).store(ino, Ordering::Release);
    end(slot, None);
}

/// The words of a new entry besides its path.
struct Fields {
    server: u64,
    handle: u64,
    flags: u64,
    ino: u64,
    share: Option<u64>,
}

/// [`take`], with `busy` requests in flight from the start.
fn take_with(f: Fields, path: Option<&str>, busy: u64) -> Option<usize> {
    let Fields { server, handle, flags, ino, share } = f;
    let _guard = LOCK.lock();
    let me = exposed::self_id();
    for slot in 0..ENTRIES {
        if slot % PER_PAGE == 0 && !ensure_page(slot / PER_PAGE) {
            return None;
        }
        // The entry's words, looked up once (its page mapped just above).
        let e = entry(slot);
        let live = e[W_MAGIC].load(Ordering::Acquire) == ENTRY_MAGIC;
        if live && e[W_OWNER].load(Ordering::Acquire) == me {
            continue;
        }
        e[W_MAGIC].store(0, Ordering::Release);
        let path = path.map(str::as_bytes).filter(|p| p.len() <= PATH_ROOM).unwrap_or(&[]);
        for (w, chunk) in e[PATH_AT / 8..].iter().zip(path.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        for (w, v) in [
            (W_SHARE, share.unwrap_or_else(new_share)),
            (W_STAMP, 0),
            (W_CURSOR_LEN, 0),
            (W_OWNER, me),
            (W_SERVER, server),
            (W_HANDLE, handle),
            (W_FLAGS, flags & KEEP_FLAGS),
            (W_POS, 0),
            (W_INO, ino),
            (W_BUSY, busy),
            (W_PATH_LEN, path.len() as u64),
        ] {
            e[w].store(v, Ordering::Relaxed);
        }
        e[W_MAGIC].store(ENTRY_MAGIC, Ordering::Release);
        return Some(slot);
    }
    None
}

/// The words of entry `slot`, whose page `ensure_page` mapped (as for
/// [`entry_word`]).
fn entry(slot: usize) -> &'static [AtomicU64; ENTRY_BYTES / 8] {
    // Not mapped (which `ensure_page` rules out): words of nobody's.
    static UNMAPPED: [AtomicU64; ENTRY_BYTES / 8] = [const { AtomicU64::new(0) }; ENTRY_BYTES / 8];
    let words = TABLE.get(slot / PER_PAGE).and_then(FixedPage::words);
    let at = (slot % PER_PAGE) * (ENTRY_BYTES / 8);
    words.and_then(|w| w.get(at..at + ENTRY_BYTES / 8)).and_then(|e| e.try_into().ok()).unwrap_or(&UNMAPPED)
}

/// Frees entry `slot`.
pub(crate) fn free(slot: usize) {
    let _guard = LOCK.lock();
    word(slot, W_MAGIC).store(0, Ordering::Release);
}

/// The server and handle entry `slot` names now (a restore rewrites them).
pub(crate) fn ids(slot: usize) -> (u64, u64) {
    (word(slot, W_SERVER).load(Ordering::Acquire), word(slot, W_HANDLE).load(Ordering::Acquire))
}

/// A request on entry `slot` starts: the position may move.
pub(crate) fn begin(slot: usize) {
    word(slot, W_BUSY).fetch_add(1, Ordering::AcqRel);
}

/// The request ends; `pos` is the position its reply reported, if any.
pub(crate) fn end(slot: usize, pos: Option<u64>) {
    if let Some(p) = pos {
        word(slot, W_POS).store(p, Ordering::Release);
        word(slot, W_STAMP).store(crate::time::rdtsc(), Ordering::Release);
    }
    word(slot, W_BUSY).fetch_sub(1, Ordering::AcqRel);
}

/// A directory's cursor moved to `name` (the entry just handed out).
pub(crate) fn set_cursor(slot: usize, name: &[u8]) {
    let at = (word(slot, W_PATH_LEN).load(Ordering::Acquire) as usize).next_multiple_of(8);
    if at + name.len() > PATH_ROOM {
        word(slot, W_CURSOR_LEN).store(CURSOR_UNKNOWN, Ordering::Release);
    } else {
        put_area(slot, at, name);
        word(slot, W_CURSOR_LEN).store(name.len() as u64, Ordering::Release);
    }
    word(slot, W_STAMP).store(crate::time::rdtsc(), Ordering::Release);
}

/// What a child needs to keep the entry's path, mode and record: share
/// id, flags and path (`None` while the path is unknown).
pub(crate) fn origin(slot: usize) -> Option<(u64, u64, alloc::string::String)> {
    let len = (word(slot, W_PATH_LEN).load(Ordering::Acquire) as usize).min(PATH_ROOM);
    if len == 0 {
        return None;
    }
    let mut bytes = alloc::vec::Vec::with_capacity(len.next_multiple_of(8));
    for at in (0..len).step_by(8) {
        bytes.extend_from_slice(&area_word(slot, at).load(Ordering::Relaxed).to_le_bytes());
    }
    bytes.truncate(len);
    let path = alloc::string::String::from_utf8(bytes).ok()?;
    Some((word(slot, W_SHARE).load(Ordering::Acquire), word(slot, W_FLAGS).load(Ordering::Acquire), path))
}

/// One entry read from a page image (a checkpoint's copy of a frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    /// Entry index in the table.
    pub slot: usize,
    pub owner: u64,
    pub server: u64,
    pub handle: u64,
    pub flags: u64,
    pub pos: u64,
    pub ino: u64,
    pub busy: u64,
    pub share: u64,
    pub stamp: u64,
    /// Empty when the path is unknown.
    pub path: alloc::vec::Vec<u8>,
    /// A directory's cursor (empty: at the start); `None` if it did not fit.
    pub cursor: Option<alloc::vec::Vec<u8>>,
}

/// The live entries in the image of the table page mapped at `va`.
pub fn entries_in(va: u64, page: &[u8]) -> alloc::vec::Vec<Saved> {
    let mut out = alloc::vec::Vec::new();
    let Some(first) = page_index(va).map(|p| p * PER_PAGE) else { return out };
    for i in 0..PER_PAGE {
        let base = i * ENTRY_BYTES;
        let w = |k: usize| image_word(page, base + k * 8).unwrap_or(0);
        if w(W_MAGIC) != ENTRY_MAGIC {
            continue;
        }
        let len = (w(W_PATH_LEN) as usize).min(PATH_ROOM);
        let path = page.get(base + PATH_AT..base + PATH_AT + len).map(<[u8]>::to_vec).unwrap_or_default();
        let clen = w(W_CURSOR_LEN);
        let cat = base + PATH_AT + len.next_multiple_of(8);
        let cursor = usize::try_from(clen)
            .ok()
            .filter(|&n| len.next_multiple_of(8) + n <= PATH_ROOM)
            .and_then(|n| page.get(cat..cat + n))
            .map(<[u8]>::to_vec);
        out.push(Saved {
            slot: first + i,
            owner: w(W_OWNER),
            server: w(W_SERVER),
            handle: w(W_HANDLE),
            flags: w(W_FLAGS),
            pos: w(W_POS),
            ino: w(W_INO),
            busy: w(W_BUSY),
            share: w(W_SHARE),
            stamp: w(W_STAMP),
            path,
            cursor,
        });
    }
    out
}

/// Where an entry is re-bound to: its new owner, server and handle, and the
/// position its (possibly shared) record was given.
#[derive(Clone, Copy, Debug)]
pub struct Rebind {
    pub owner: u64,
    pub server: u64,
    pub handle: u64,
    pub pos: u64,
}

/// Rewrites entry `slot` in the image of its page (mapped at `va`) as `to`
/// says (no reply stamp yet: the old machine's clock means nothing here).
/// False if `va` is not that entry's page.
pub fn rebind_entry(va: u64, page: &mut [u8], slot: usize, to: Rebind) -> bool {
    if page_index(va) != Some(slot / PER_PAGE) || page.len() < PAGE_SIZE as usize {
        return false;
    }
    let base = (slot % PER_PAGE) * ENTRY_BYTES;
    for (k, v) in
        [(W_OWNER, to.owner), (W_SERVER, to.server), (W_HANDLE, to.handle), (W_BUSY, 0), (W_POS, to.pos), (W_STAMP, 0)]
    {
        page[base + k * 8..base + k * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    true
}

/// Marks entry `slot` dead in the image of its page (a file not carried).
pub fn kill_entry(va: u64, page: &mut [u8], slot: usize) -> bool {
    if page_index(va) != Some(slot / PER_PAGE) || page.len() < PAGE_SIZE as usize {
        return false;
    }
    let base = (slot % PER_PAGE) * ENTRY_BYTES;
    page[base..base + 8].copy_from_slice(&0u64.to_le_bytes());
    true
}

/// The table page `va` is, if it is one.
pub fn page_index(va: u64) -> Option<usize> {
    let off = va.checked_sub(FILES_BASE)?;
    (off.is_multiple_of(PAGE_SIZE) && off < (PAGES as u64) * PAGE_SIZE).then_some((off / PAGE_SIZE) as usize)
}

fn image_word(page: &[u8], at: usize) -> Option<u64> {
    page.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes)
}
