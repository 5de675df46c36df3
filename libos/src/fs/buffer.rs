//! The shared buffer of the file protocol (`proto`: `BUFFER`, `READ_BUF`,
//! `WRITE_BUF`): up to [`BUFFER_PAGES`] frames per client, owned by the
//! file server, mapped in both, handed to the client by `pct_grant` up to
//! [`BUFFER_GRANT`] at a time (Xok's page ACLs by capability: only the
//! client the server granted them to holds them).
//!
//! Both sides may write the pages at any time, so they are never a Rust
//! object and never referenced: data moves in and out by bounds-checked
//! copies, and the server reads every length from the registers, never
//! from the pages (the runtime's `SharedRegion`: checked mapped when made,
//! bytes only by clipped copies). The module reserves the virtual region
//! `[BUFFER_BASE, BUFFER_BASE + (1 + SERVED_MAX) · (BUFFER_PAGES + 1) + 2
//! pages)`: the client's buffer at its start, a server's buffers after it,
//! each with room for its behind page after its pages (a write left
//! behind, [`behind`]), then the two generation pages. Nothing
//! else maps or unmaps there, so a page stays mapped as long as its owner
//! here says.
//!
//! The last two pages of the region are for the server's generation page
//! (`proto::op::GENERATION`): where a client maps it read-only, and where
//! the server maps its own. A prefetching `OPEN` (`flags::PREFETCH`) puts a
//! small file's bytes at the buffer's start; they are this process's to
//! read ([`read_prefetched`]) while the generation page says what the open
//! said, and until the buffer's next use.
//!
//! A client asks for pages when a transfer wants more than it has mapped,
//! as many as the transfer needs (at most [`BUFFER_GRANT`] a call), so a
//! program that only ever moves a few KiB at a time costs the server a
//! page or two, as before the buffer had more than one.

use crate::fd::IoError;
use crate::pct::Msg;
use crate::{exposed, sys};
use core::sync::atomic::Ordering;
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error, rights};
use oxok_rt::page::{SharedPage, SharedRegion};
use spin::Mutex;

use super::ahead::{self, Ahead, Hit};
use super::proto::{BUFFER_GRANT, BUFFER_PAGE, BUFFER_PAGES, behind, flags, op};
use super::sinks::{Sink, Source};
use alloc::string::String;

/// Start of the region this module reserves.
pub const BUFFER_BASE: u64 = 0x5200_0000_0000;
/// Most buffers one server hands out at once.
pub const SERVED_MAX: usize = 32;
/// Bytes of address space one buffer takes: its pages and its behind page.
const SPAN: u64 = (BUFFER_PAGES as u64 + 1) * PAGE_SIZE;
/// Where a buffer's behind page lies, from the buffer's start.
const BEHIND_OFFSET: u64 = BUFFER_PAGES as u64 * PAGE_SIZE;
/// Pages a client's buffer grows to when it asks for files to be opened
/// along: room for [`AHEAD_MAX`](super::proto::AHEAD_MAX) files of 1 KiB
/// after the one opened.
const AHEAD_PAGES: usize = 3;
/// ... and when it asks for a wide batch (`flags::AHEAD_WIDE`): room for
/// [`AHEAD_WIDE_MAX`](super::proto::AHEAD_WIDE_MAX) files of 1 KiB with
/// names of up to 8 bytes.
const AHEAD_WIDE_PAGES: usize = (oxok_fsproto::ahead::start(1024)
    + super::proto::AHEAD_WIDE_MAX * oxok_fsproto::ahead::Head::record_len(8, 1024))
.div_ceil(BUFFER_PAGE);
const _: () = assert!(AHEAD_WIDE_PAGES <= BUFFER_PAGES, "a wide batch fits the buffer");
/// Where a client maps its buffer. Shared across `fork` (`LIBOS_SHARED`), so
/// the pages stay the server's after a fork instead of turning
/// copy-on-write; a child notices the buffer is not its own and replaces it.
const CLIENT_VA: u64 = BUFFER_BASE;
/// Where a client maps its behind page ([`behind`]).
pub const BEHIND_CLIENT_VA: u64 = CLIENT_VA + BEHIND_OFFSET;
/// Where a client maps its server's generation page, read-only.
pub const GENERATION_CLIENT_VA: u64 = BUFFER_BASE + (1 + SERVED_MAX as u64) * SPAN;
/// Where a server maps its own generation page.
pub const GENERATION_SERVED_VA: u64 = GENERATION_CLIENT_VA + PAGE_SIZE;
const FLAGS: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_SHARED;

const _: () = assert!(BUFFER_PAGE as u64 == PAGE_SIZE);

/// This process's buffer with one server.
struct Client {
    /// The process that set it up (a forked child is another).
    owner: u64,
    server: u64,
    /// Restores seen when it was set up: a restored process's buffer is
    /// the old server's pages, even where the ids happen to repeat (the
    /// same boot sequence on another machine).
    restores: u64,
    /// Pages mapped from `CLIENT_VA` on, one after the other.
    pages: usize,
    /// The server gave less than asked (its table full, a call refused,
    /// or it predates buffers): this process asks no more.
    refused: bool,
    /// The mapped pages as the runtime checked them.
    region: Option<SharedRegion>,
    /// The server's generation page, mapped read-only at
    /// [`GENERATION_CLIENT_VA`] (asked for by the first open that could
    /// prefetch).
    generation: Option<SharedPage>,
    /// The server gave no generation page: no open prefetches.
    no_generation: bool,
    /// The behind page, mapped after the buffer's pages (asked for by the
    /// first open that could leave a write behind).
    behind: Option<SharedPage>,
    /// The server gave no behind page: no write is left behind.
    no_behind: bool,
    /// The file the last prefetching open put at the buffer's start, or
    /// the last open took from `ahead`.
    prefetch: Option<Prefetch>,
    /// The files a prefetching open opened along.
    ahead: Option<Ahead>,
    /// The directory of the file the last prefetching open was of.
    last_dir: String,
}

/// A small file's bytes at the start of the buffer, as a prefetching open
/// left them.
struct Prefetch {
    /// The open-file table's entry and the server's handle of the file.
    slot: usize,
    handle: u64,
    /// Where its bytes start in the buffer.
    at: usize,
    /// The file's length (all of it is here).
    len: usize,
    /// The server's generation when it read them.
    generation: u64,
}

impl Client {
    /// A fresh record for `server`, nothing mapped yet.
    fn new(owner: u64, server: u64, restores: u64) -> Client {
        Client {
            owner,
            server,
            restores,
            pages: 0,
            refused: false,
            region: None,
            generation: None,
            no_generation: false,
            behind: None,
            no_behind: false,
            prefetch: None,
            ahead: None,
            last_dir: String::new(),
        }
    }

    /// True if this is the current process's record for `server`.
    fn serves(&self, server: u64) -> bool {
        self.owner == exposed::self_id() && self.server == server && self.restores == crate::restore::count()
    }

    /// Asks the server for pages until the buffer has `need` (as far as
    /// it gives them).
    fn grow(&mut self, need: usize) {
        while self.pages < need && !self.refused {
            let want = (need - self.pages).min(BUFFER_GRANT);
            let got = ask(self.server, self.pages, want);
            self.pages += got;
            self.refused = got < want;
            self.region = SharedRegion::readable(CLIENT_VA, self.pages);
        }
    }

    /// The server's generation page, asked for and mapped the first time.
    fn generation(&mut self) -> Option<&SharedPage> {
        if self.generation.is_none() && !self.no_generation {
            self.generation = map_generation(self.server);
            self.no_generation = self.generation.is_none();
        }
        self.generation.as_ref()
    }

    /// Puts the closes waiting for `server` at the buffer's start for an
    /// `OPEN` to carry (the reply may overwrite them, and so whatever was
    /// there: the bytes a prefetching open or the files opened along left
    /// are gone): `flags::CLOSES` if it did, 0 if none were waiting (or
    /// there is no buffer: they are sent at once).
    fn put_closes(&mut self, server: u64) -> u64 {
        let mut list = [0u64; 1 + super::closes::WAITING_MAX];
        let words = super::closes::take_for(server, &mut list);
        if words == 0 {
            return 0;
        }
        let mut bytes = [0u8; 8 * (1 + super::closes::WAITING_MAX)];
        for (b, w) in bytes.chunks_exact_mut(8).zip(&list[..words]) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        let Some(region) = self.region.as_ref() else {
            super::closes::send_now(server, &list[1..words]);
            return 0;
        };
        region.copy_in(0, &bytes[..8 * words]);
        self.prefetch = None;
        if let Some(a) = self.ahead.as_mut() {
            a.bytes = false;
        }
        flags::CLOSES
    }

    /// The behind page, asked for and mapped the first time.
    fn behind(&mut self) -> Option<&SharedPage> {
        if self.behind.is_none() && !self.no_behind && self.pages > 0 {
            self.behind = map_behind(self.server);
            self.no_behind = self.behind.is_none();
        }
        self.behind.as_ref()
    }
}

static CLIENT: Mutex<Option<Client>> = Mutex::new(None);

/// Runs `f` with this process's buffer for `server` and its size in bytes,
/// after asking for the pages `want` bytes need (as far as the server
/// gives them); `None` when there is none (the caller uses the register
/// path) or it is in use (an upcall handler interrupted a transfer).
pub(crate) fn with_client<R>(server: u64, want: usize, f: impl FnOnce(&SharedRegion, usize) -> R) -> Option<R> {
    let mut guard = CLIENT.try_lock()?;
    if guard.as_ref().is_none_or(|c| !c.serves(server)) {
        if let Some(mut old) = guard.take() {
            // Ours from before (or from before a restore), or the
            // parent's shared into this child by fork: either way not the
            // buffer for this server. Handles opened ahead on our own
            // other server are closed.
            if old.serves(old.server)
                && let Some(a) = old.ahead.take()
            {
                release(old.server, a);
            }
            unmap_client(old.pages, old.generation.is_some(), old.behind.is_some());
        }
        *guard = Some(Client::new(exposed::self_id(), server, crate::restore::count()));
    }
    let client = guard.as_mut()?;
    // The transfer overwrites what a prefetching open left.
    client.prefetch = None;
    if let Some(a) = client.ahead.as_mut() {
        a.bytes = false;
    }
    client.grow(want.div_ceil(BUFFER_PAGE).min(BUFFER_PAGES));
    let size = client.pages * BUFFER_PAGE;
    Some(f(client.region.as_ref()?, size))
}

/// Runs `open`, an `OPEN` that changes a file (for writing, creating or
/// truncating) on `server`, with the `OPEN` flags this process's buffer
/// with `server` adds: the closes waiting (`flags::CLOSES`) and, with a
/// behind page (asked for the first time), `flags::BEHIND` if `behind`
/// (an open for writing, not appending). Its reply, and whether it asked
/// for `BEHIND`.
pub(crate) fn open_changing(
    server: u64,
    behind: bool,
    open: impl FnOnce(u64) -> Result<Msg, IoError>,
) -> (Result<Msg, IoError>, bool) {
    let Some(mut guard) = CLIENT.try_lock() else { return (open(0), false) };
    let Some(client) = guard.as_mut().filter(|c| c.serves(server) && c.pages > 0) else {
        return (open(0), false);
    };
    let behind = behind && client.behind().is_some();
    let asked = client.put_closes(server) | if behind { flags::BEHIND } else { 0 };
    (open(asked), behind)
}

/// Leaves the `len` bytes of `from` behind in the behind page with
/// `server` as `handle`'s first write ([`behind`]): true if they wait
/// there now, for the server to take before its next request from anyone;
/// false if they cannot (too long, no page, the buffer in use, a source
/// that cannot be read), and nothing was done.
pub(crate) fn leave_behind(server: u64, handle: u64, from: &Source<'_>, len: usize) -> bool {
    let Some(w) = behind::word(handle, len) else { return false };
    let Some(guard) = CLIENT.try_lock() else { return false };
    let Some(page) = guard.as_ref().filter(|c| c.serves(server)).and_then(|c| c.behind.as_ref()) else {
        return false;
    };
    let word = &page.words()[behind::WORD_AT / 8];
    // One record at a time: one still waiting is taken first.
    if word.load(Ordering::Acquire) != 0 && (settle(server).is_err() || word.load(Ordering::Acquire) != 0) {
        return false;
    }
    if from.give(&page.region(), behind::DATA_AT, len) != Ok(len) {
        return false;
    }
    word.store(w, Ordering::Release);
    true
}

/// Has `server` take what waits behind (`SETTLE`).
fn settle(server: u64) -> Result<(), IoError> {
    super::client::handle_call(server, op::SETTLE, 0, 0, &[]).map(|_| ())
}

/// Unmaps the first `pages` pages of the client's part of the region and,
/// with `generation`, the generation page, with `behind` the behind page.
fn unmap_client(pages: usize, generation: bool, behind: bool) {
    for i in 0..pages as u64 {
        let _ = sys::page_unmap(0, CLIENT_VA + i * PAGE_SIZE);
    }
    if generation {
        let _ = sys::page_unmap(0, GENERATION_CLIENT_VA);
    }
    if behind {
        let _ = sys::page_unmap(0, BEHIND_CLIENT_VA);
    }
}

/// Asks `server` for this client's behind page and maps it after the
/// buffer's pages.
fn map_behind(server: u64) -> Option<SharedPage> {
    let r = super::client::handle_call(server, op::BEHIND_PAGE, 0, 0, &[]).ok()?;
    let mapped = sys::page_map(0, r[1], BEHIND_CLIENT_VA, FLAGS);
    let _ = sys::cap_drop(r[1]);
    mapped.ok()?;
    SharedPage::writable(BEHIND_CLIENT_VA)
}

/// Asks `server` for its generation page and maps it read-only.
fn map_generation(server: u64) -> Option<SharedPage> {
    let r = super::client::handle_call(server, op::GENERATION, 0, 0, &[]).ok()?;
    let mapped = sys::page_map(0, r[1], GENERATION_CLIENT_VA, pte::NO_EXECUTE);
    let _ = sys::cap_drop(r[1]);
    mapped.ok()?;
    SharedPage::readable(GENERATION_CLIENT_VA)
}

/// Runs `open`, an `OPEN` for reading of table entry `slot` on `server`
/// of the absolute path `path`, asking for the file's bytes with it
/// (`open(true, _)`: `flags::PREFETCH`) when this process's buffer is with
/// `server` and the server keeps a generation page, and for the files that
/// follow it (`open(_, flags::AHEAD)`, [`ahead`](super::ahead)) when the
/// file this process opened so before was in the same directory — a wide
/// batch (`flags::AHEAD_WIDE` too) when every file of the last batch from
/// that directory was taken by an open. The reply, and whether the bytes
/// came ([`read_prefetched`] then serves reads of them).
pub(crate) fn open_prefetching(
    server: u64,
    slot: usize,
    path: &str,
    open: impl FnOnce(bool, u64) -> Result<Msg, IoError>,
) -> (Result<Msg, IoError>, bool) {
    let Some(mut guard) = CLIENT.try_lock() else { return (open(false, 0), false) };
    let Some(client) = guard.as_mut().filter(|c| c.serves(server) && c.pages > 0) else {
        return (open(false, 0), false);
    };
    if client.generation().is_none() {
        return (open(false, 0), false);
    }
    client.prefetch = None; // the open overwrites the buffer's start
    let dir = ahead::parent(path).unwrap_or("");
    let along = !dir.is_empty() && client.last_dir == dir;
    let wide = along && client.ahead.as_ref().is_some_and(|a| a.used_up(dir));
    // Room for the files that follow, if they are small.
    let asked = match (along, wide) {
        (false, _) => 0,
        (true, false) => {
            client.grow(AHEAD_PAGES);
            flags::AHEAD
        }
        (true, true) => {
            client.grow(AHEAD_WIDE_PAGES);
            flags::AHEAD | flags::AHEAD_WIDE
        }
    };
    let asked = asked | client.put_closes(server);
    let r = open(true, asked);
    client.last_dir.clear();
    if client.last_dir.try_reserve(dir.len()).is_ok() {
        client.last_dir.push_str(dir);
    }
    let size = client.pages * BUFFER_PAGE;
    let fits = |m: &Msg| m[5] != 0 && m[4] <= size as u64;
    match r {
        Ok(m) if fits(&m) => {
            client.prefetch = Some(Prefetch { slot, handle: m[1], at: 0, len: m[4] as usize, generation: m[5] });
            if let Some(a) = client.ahead.as_mut() {
                a.bytes = false; // overwritten by this open's
            }
            if m[6] != 0
                && m[7] != 0
                && let Some(region) = client.region.as_ref()
            {
                let new = Ahead::read(region, size, m[4] as usize, m[6], (m[7], m[5]), dir);
                if let Some(old) = client.ahead.replace(new) {
                    release(server, old);
                }
            }
            (r, true)
        }
        r => (r, false),
    }
}

/// Takes the handle of `path` on `server` from the files a prefetching
/// open opened along, for table entry `slot`, if the server's name
/// generation says the path still names it; its bytes then serve the
/// file's reads as a prefetching open's. A list found stale is closed.
pub(crate) fn take_ahead(server: u64, slot: usize, path: &str) -> Option<Hit> {
    let mut guard = CLIENT.try_lock()?;
    let client = guard.as_mut().filter(|c| c.serves(server))?;
    let names = client.generation.as_ref()?.words()[1].load(Ordering::Acquire);
    if !client.ahead.as_ref()?.current(names) {
        let stale = client.ahead.take()?;
        release(server, stale);
        return None;
    }
    let hit = client.ahead.as_mut()?.take(path)?;
    if let Some((at, len, generation)) = hit.bytes {
        client.prefetch = Some(Prefetch { slot, handle: hit.handle, at, len, generation });
    }
    Some(hit)
}

/// Closes the handles of the files opened along on `server` (any server:
/// `None`) that no open took (before a request that could see them, and
/// when the descriptors all go).
pub(crate) fn drop_ahead(server: Option<u64>) {
    let Some(mut guard) = CLIENT.try_lock() else { return };
    if let Some(client) = guard.as_mut()
        && client.serves(client.server)
        && server.is_none_or(|s| s == client.server)
        && let Some(a) = client.ahead.take()
    {
        release(client.server, a);
    }
}

/// Closes the handles of `ahead` no open took, as every handle closes.
fn release(server: u64, ahead: Ahead) {
    for handle in ahead.handles() {
        super::closes::close(server, handle);
    }
}

/// Copies the bytes from `at` on of the file of table entry `slot`
/// (`handle` on `server`) that its prefetching open put in the buffer into
/// the start of `to`, at most `len`: how many (0 at the end of the file).
/// `None` when they are not there or no longer hold: the buffer was used
/// since, or the server's generation moved on (something may have changed
/// the file).
pub(crate) fn read_prefetched(
    server: u64,
    slot: usize,
    handle: u64,
    at: usize,
    to: &mut Sink<'_>,
    len: usize,
) -> Option<Result<usize, Error>> {
    with_prefetched(server, slot, handle, at, |region, from, left| to.take(region, from, 0, len.min(left)))
}

/// Runs `f` with the buffer, where byte `at` of the file of table entry
/// `slot` (`handle` on `server`) lies in it, and how many of its bytes
/// from there it holds, if its prefetching open's bytes still hold.
fn with_prefetched<R>(
    server: u64,
    slot: usize,
    handle: u64,
    at: usize,
    f: impl FnOnce(&SharedRegion, usize, usize) -> R,
) -> Option<R> {
    let mut guard = CLIENT.try_lock()?;
    let client = guard.as_mut().filter(|c| c.serves(server))?;
    let p = client.prefetch.as_ref().filter(|p| p.slot == slot && p.handle == handle && at <= p.len)?;
    let now = client.generation.as_ref()?.words()[0].load(Ordering::Acquire);
    if now != p.generation {
        client.prefetch = None;
        return None;
    }
    let (from, left) = (p.at + at, p.len - at);
    Some(f(client.region.as_ref()?, from, left))
}

/// Forgets what a prefetching open of table entry `slot` left (the file is
/// closed).
pub(crate) fn forget_prefetch(slot: usize) {
    if let Some(mut guard) = CLIENT.try_lock()
        && let Some(client) = guard.as_mut()
        && client.prefetch.as_ref().is_some_and(|p| p.slot == slot)
    {
        client.prefetch = None;
    }
}

/// Asks `server` for `want` more pages of the buffer, from page `first`
/// on (the pages mapped so far), and maps them after those; the pages
/// mapped (`want` unless something was refused). Each capability is
/// dropped once mapped (the binding stays; the list keeps its room).
fn ask(server: u64, first: usize, want: usize) -> usize {
    if first + want > BUFFER_PAGES {
        return 0;
    }
    let Ok(r) = super::client::handle_call(server, op::BUFFER, 0, first as u64, &[want as u64]) else { return 0 };
    let at = CLIENT_VA + first as u64 * PAGE_SIZE;
    let mut mapped = 0;
    for (i, &slot) in r[1..=BUFFER_GRANT].iter().enumerate() {
        if slot == 0 {
            break; // the server granted fewer
        }
        if mapped == i && i < want && sys::page_map(0, slot, at + i as u64 * PAGE_SIZE, FLAGS).is_ok() {
            mapped += 1;
        }
        let _ = sys::cap_drop(slot);
    }
    mapped
}

/// One client's buffer on the server side: frames the server owns, mapped
/// at the buffer's index in the server's part of the region, and granted
/// as the client asks. The server keeps no capability for them: dropping the
/// buffer unmaps them here, and the kernel frees each frame once the
/// client's mapping is gone too.
pub struct ServedBuffer {
    /// First page of this buffer in the server's part of the region.
    va: u64,
    /// Frame numbers of the pages made so far, in order.
    frames: [u64; BUFFER_PAGES],
    pages: usize,
    region: Option<SharedRegion>,
    /// The behind page ([`behind`]), once the client asked: its frame
    /// number and the page as mapped here.
    behind: Option<(u64, SharedPage)>,
}

impl ServedBuffer {
    /// An empty buffer at index `index` (< [`SERVED_MAX`]).
    pub fn new(index: usize) -> Result<ServedBuffer, Error> {
        if index >= SERVED_MAX {
            return Err(Error::Invalid);
        }
        let va = BUFFER_BASE + (1 + index as u64) * SPAN;
        Ok(ServedBuffer { va, frames: [0; BUFFER_PAGES], pages: 0, region: None, behind: None })
    }

    /// Makes `want` more pages (1..=[`BUFFER_GRANT`]), from page `first`
    /// on, which must be where the buffer ends now (`Invalid` otherwise,
    /// or when it is whole), and grants the client being served a
    /// read-write capability for each (`pct_grant`): their slots in its
    /// list, 0 past the last page granted. Fewer than asked at the buffer's
    /// end, or when the server or the client ran out of room part-way
    /// (nothing at all: the error).
    pub fn grant(&mut self, first: usize, want: usize) -> Result<[u64; BUFFER_GRANT], Error> {
        if first != self.pages || first >= BUFFER_PAGES || want == 0 || want > BUFFER_GRANT {
            return Err(Error::Invalid);
        }
        let mut slots = [0; BUFFER_GRANT];
        for (i, out) in slots.iter_mut().take(want.min(BUFFER_PAGES - first)).enumerate() {
            match self.add_page() {
                Ok(slot) => *out = slot,
                Err(e) if i == 0 => return Err(e),
                Err(_) => break,
            }
        }
        self.region = SharedRegion::readable(self.va, self.pages);
        Ok(slots)
    }

    /// One more page: allocated, mapped here, granted; the client's slot.
    fn add_page(&mut self) -> Result<u64, Error> {
        let va = self.va + self.pages as u64 * PAGE_SIZE;
        let (slot, frame) = Self::page_at(va)?;
        self.frames[self.pages] = frame;
        self.pages += 1;
        Ok(slot)
    }

    /// Makes the behind page ([`behind`]) after the buffer's pages, once,
    /// and grants the client being served a read-write capability for it:
    /// its slot in the client's list. `Invalid` before the buffer's first
    /// page and once the page was made (the client keeps it as long as
    /// the buffer).
    pub fn grant_behind(&mut self) -> Result<u64, Error> {
        if self.pages == 0 || self.behind.is_some() {
            return Err(Error::Invalid);
        }
        let va = self.va + BEHIND_OFFSET;
        let (slot, frame) = Self::page_at(va)?;
        match SharedPage::writable(va) {
            Some(page) => {
                self.behind = Some((frame, page));
                Ok(slot)
            }
            None => {
                let _ = sys::page_unmap(0, va);
                Err(Error::Invalid)
            }
        }
    }

    /// True once the behind page is made.
    pub fn has_behind(&self) -> bool {
        self.behind.is_some()
    }

    /// A fresh frame mapped here at `va` and granted read-write to the
    /// client being served: the client's slot and the frame number.
    fn page_at(va: u64) -> Result<(u64, u64), Error> {
        let [own, frame] = sys::frame_alloc(ANY_FRAME)?;
        let granted = match sys::page_map(0, own, va, pte::WRITABLE | pte::NO_EXECUTE) {
            Ok(_) => sys::pct_grant(own, rights::READ | rights::WRITE).map(|[slot]| slot),
            Err(e) => Err(e),
        };
        match granted {
            Ok(slot) => {
                // Mapped here and granted: the frame lives on without our
                // capability until both mappings go.
                let _ = sys::cap_drop(own);
                Ok((slot, frame))
            }
            Err(e) => {
                let _ = sys::page_unmap(0, va);
                let _ = sys::frame_free(own);
                Err(e)
            }
        }
    }

    /// True while anyone but this server still maps one of the pages or
    /// holds a capability for one (the client has not let go of them).
    pub fn held_elsewhere(&self) -> bool {
        let me = exposed::self_id();
        let behind = self.behind.as_ref().map(|(frame, _)| *frame);
        self.frames[..self.pages].iter().chain(behind.iter()).any(|&pfn| {
            exposed::frame_entry(pfn).is_some_and(|e| u64::from(e.owner) == me && (e.maps > 1 || e.refs > 0))
        })
    }

    /// Bytes the buffer holds.
    pub fn len(&self) -> usize {
        self.pages * BUFFER_PAGE
    }

    /// True before the first page is made.
    pub fn is_empty(&self) -> bool {
        self.pages == 0
    }

    /// Copies the buffer's first `dst.len()` bytes out (clipped to it).
    pub fn copy_out(&self, dst: &mut [u8]) {
        if let Some(r) = &self.region {
            r.copy_out(0, dst);
        }
    }

    /// Takes the word of the write the client left behind ([`behind`]),
    /// leaving 0: what it says, if it is a record (0 and garbage alike:
    /// nothing waits).
    pub fn take_behind(&self) -> Option<(u64, usize)> {
        let (_, page) = self.behind.as_ref()?;
        behind::parse(page.words()[behind::WORD_AT / 8].swap(0, Ordering::AcqRel))
    }

    /// Copies `dst.len()` bytes of a record out of the behind page (clipped
    /// to the page).
    pub fn copy_behind(&self, dst: &mut [u8]) {
        if let Some((_, page)) = &self.behind {
            page.copy_out(behind::DATA_AT, dst);
        }
    }

    /// Copies `src` into the buffer at byte `at` (clipped to it).
    pub fn copy_in(&self, at: usize, src: &[u8]) {
        if let Some(r) = &self.region {
            r.copy_in(at, src);
        }
    }
}

impl Drop for ServedBuffer {
    fn drop(&mut self) {
        for i in 0..self.pages as u64 {
            let _ = sys::page_unmap(0, self.va + i * PAGE_SIZE);
        }
        if self.behind.take().is_some() {
            let _ = sys::page_unmap(0, self.va + BEHIND_OFFSET);
        }
    }
}

/// What one transfer through the buffer moved.
pub(crate) struct Moved {
    /// Bytes moved.
    pub n: usize,
    /// Bytes asked for (short of this: the end of the file, or the writer
    /// took less).
    pub asked: usize,
    /// Reply word 0 (it carries the position).
    pub word0: u64,
}

/// Reads up to `len` bytes (at most the buffer) at `handle`'s position
/// through the buffer into `to` from its byte `at` on; `None` when this
/// process has no buffer with `server`. A destination that will not take
/// the bytes is `Kernel(BadAddress)` after the server moved the position
/// (the caller checks it first, as it checks a buffer of its own).
pub(crate) fn read(
    server: u64,
    handle: u64,
    to: &mut Sink<'_>,
    at: usize,
    len: usize,
) -> Option<Result<Moved, IoError>> {
    with_client(server, len, |region, size| {
        let asked = len.min(size);
        let r = super::client::handle_call(server, op::READ_BUF, 0, 0, &[handle, asked as u64])?;
        let n = to.take(region, 0, at, (r[1] as usize).min(asked)).map_err(IoError::Kernel)?;
        Ok(Moved { n, asked, word0: r[0] })
    })
}

/// Writes up to the buffer's worth of `len` bytes of `from` at `handle`'s
/// position through the buffer. `None` when this process has no buffer;
/// a source that cannot be read is `Kernel(BadAddress)`, nothing written.
pub(crate) fn write(server: u64, handle: u64, from: &Source<'_>, len: usize) -> Option<Result<Moved, IoError>> {
    with_client(server, len, |region, size| {
        let n = from.give(region, 0, len.min(size)).map_err(IoError::Kernel)?;
        let r = super::client::handle_call(server, op::WRITE_BUF, 0, 0, &[handle, n as u64])?;
        Ok(Moved { n: (r[1] as usize).min(n), asked: n, word0: r[0] })
    })
}
