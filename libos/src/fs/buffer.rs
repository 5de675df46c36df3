//! The shared buffer page of the file protocol (`proto`: `BUFFER`,
//! `READ_BUF`, `WRITE_BUF`): one frame per client, owned by the file server,
//! mapped in both, handed to the client by `pct_grant` (Xok's page ACLs by
//! capability: only the client the server granted it to holds it).
//!
//! Both sides may write the page at any time, so it is never a Rust object
//! and never referenced: data moves in and out by bounds-checked copies,
//! and the server reads every length from the registers, never from the
//! page (the runtime's `SharedPage`: checked mapped when made, bytes only
//! by clipped copies). The module reserves the virtual region
//! `[BUFFER_BASE, BUFFER_BASE + (1 + SERVED_MAX) pages)`: the client's page
//! at its start, a server's pages after it. Nothing else maps or unmaps
//! there, so a page stays mapped as long as its `SharedPage` lives.

use crate::fd::IoError;
use crate::{exposed, sys};
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error, rights};
use oxok_rt::page::SharedPage;
use spin::Mutex;

use super::proto::{BUFFER_SIZE, op};

/// Start of the region this module reserves.
pub const BUFFER_BASE: u64 = 0x5200_0000_0000;
/// Most buffer pages one server hands out at once.
pub const SERVED_MAX: usize = 32;
/// Where a client maps its buffer. Shared across `fork` (`LIBOS_SHARED`), so
/// the page stays the server's after a fork instead of turning
/// copy-on-write; a child notices the buffer is not its own and replaces it.
const CLIENT_VA: u64 = BUFFER_BASE;
const FLAGS: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_SHARED;

const _: () = assert!(BUFFER_SIZE as u64 == PAGE_SIZE);

/// This process's buffer with one server.
struct Client {
    /// The process that set it up (a forked child is another).
    owner: u64,
    server: u64,
    /// Restores seen when it was set up: a restored process's buffer is
    /// the old server's page, even where the ids happen to repeat (the
    /// same boot sequence on another machine).
    restores: u64,
    /// Mapped at `CLIENT_VA`; `None`: the server gave none (its table was
    /// full, or it predates buffers), so this process uses the registers.
    page: Option<SharedPage>,
}

static CLIENT: Mutex<Option<Client>> = Mutex::new(None);

/// Runs `f` with this process's buffer page for `server`, setting it up on
/// first use; `None` when there is none (the caller uses the register
/// path) or it is in use (an upcall handler interrupted a transfer).
pub(crate) fn with_client<R>(server: u64, f: impl FnOnce(&mut dyn FnMut(Dir<'_>)) -> R) -> Option<R> {
    let mut guard = CLIENT.try_lock()?;
    let me = exposed::self_id();
    let restores = crate::restore::count();
    if guard.as_ref().is_none_or(|c| c.owner != me || c.server != server || c.restores != restores) {
        if let Some(old) = guard.take()
            && (old.page.is_some() || old.owner != me)
        {
            // Ours from before (or from before a restore), or the
            // parent's shared into this child by fork: either way not the
            // buffer for this server.
            let _ = sys::page_unmap(0, CLIENT_VA);
        }
        *guard = Some(Client { owner: me, server, restores, page: setup(server).ok() });
    }
    let page = guard.as_ref()?.page.as_ref()?;
    let mut io = |d: Dir<'_>| match d {
        Dir::In(src) => page.copy_in(0, src),
        Dir::Out(dst) => page.copy_out(0, dst),
    };
    Some(f(&mut io))
}

/// A copy into or out of the buffer page.
pub(crate) enum Dir<'a> {
    /// Into the page (before a `WRITE_BUF`).
    In(&'a [u8]),
    /// Out of the page (after a `READ_BUF`).
    Out(&'a mut [u8]),
}

/// Asks `server` for a buffer and maps it at `CLIENT_VA`; the capability
/// is dropped once mapped (the binding stays; the list keeps its room).
fn setup(server: u64) -> Result<SharedPage, IoError> {
    let r = super::client::handle_call(server, op::BUFFER, 0, 0, &[])?;
    let slot = r[1];
    let mapped = sys::page_map(0, slot, CLIENT_VA, FLAGS);
    let _ = sys::cap_drop(slot);
    mapped?;
    let Some(page) = SharedPage::writable(CLIENT_VA) else {
        let _ = sys::page_unmap(0, CLIENT_VA);
        return Err(IoError::Kernel(Error::BadAddress));
    };
    Ok(page)
}

/// One client's buffer page on the server side: a frame the server owns,
/// mapped at its index in the server's part of the region. Dropping it
/// unmaps it and revokes and drops the capability, so the frame is freed
/// once the client's mapping is gone too.
pub struct ServedPage {
    page: SharedPage,
    frame_slot: u64,
}

impl ServedPage {
    /// A fresh zeroed page for buffer index `index` (< [`SERVED_MAX`]).
    pub fn new(index: usize) -> Result<ServedPage, Error> {
        if index >= SERVED_MAX {
            return Err(Error::Invalid);
        }
        let va = BUFFER_BASE + (1 + index as u64) * PAGE_SIZE;
        let [frame_slot, _] = sys::frame_alloc(ANY_FRAME)?;
        if let Err(e) = sys::page_map(0, frame_slot, va, pte::WRITABLE | pte::NO_EXECUTE) {
            let _ = sys::frame_free(frame_slot);
            return Err(e);
        }
        let Some(page) = SharedPage::writable(va) else {
            let _ = sys::page_unmap(0, va);
            let _ = sys::frame_free(frame_slot);
            return Err(Error::BadAddress);
        };
        Ok(ServedPage { page, frame_slot })
    }

    /// Grants the client being served a read-write capability for the
    /// page (`pct_grant`); the slot in its list.
    pub fn grant(&self) -> Result<u64, Error> {
        let [slot] = sys::pct_grant(self.frame_slot, rights::READ | rights::WRITE)?;
        Ok(slot)
    }

    /// Copies the first `dst.len()` bytes of the page out.
    pub fn copy_out(&self, dst: &mut [u8]) {
        self.page.copy_out(0, dst);
    }

    /// Copies `src` into the start of the page.
    pub fn copy_in(&self, src: &[u8]) {
        self.page.copy_in(0, src);
    }
}

impl Drop for ServedPage {
    fn drop(&mut self) {
        let _ = sys::page_unmap(0, self.page.va());
        let _ = sys::cap_revoke(self.frame_slot);
        let _ = sys::cap_drop(self.frame_slot);
    }
}

/// Reads up to `buf.len()` (at most a page) at `handle`'s position through
/// the buffer; `None` when this process has no buffer with `server`.
/// With the count, reply word 0 (it carries the position).
pub(crate) fn read(server: u64, handle: u64, buf: &mut [u8]) -> Option<Result<(usize, u64), IoError>> {
    with_client(server, |io| {
        let want = buf.len().min(BUFFER_SIZE);
        let r = super::client::handle_call(server, op::READ_BUF, 0, 0, &[handle, want as u64])?;
        let n = (r[1] as usize).min(want);
        io(Dir::Out(&mut buf[..n]));
        Ok((n, r[0]))
    })
}

/// Writes up to a page of `buf` at `handle`'s position through the
/// buffer; the bytes taken and reply word 0. `None` when this process has
/// no buffer.
pub(crate) fn write(server: u64, handle: u64, buf: &[u8]) -> Option<Result<(usize, u64), IoError>> {
    with_client(server, |io| {
        let chunk = &buf[..buf.len().min(BUFFER_SIZE)];
        io(Dir::In(chunk));
        let r = super::client::handle_call(server, op::WRITE_BUF, 0, 0, &[handle, chunk.len() as u64])?;
        Ok(((r[1] as usize).min(chunk.len()), r[0]))
    })
}
