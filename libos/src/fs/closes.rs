//! Closes, sent together.
//!
//! A round trip to the file server is two address-space switches; under
//! QEMU's TCG each empties the emulated TLB and the translated-code lookup
//! cache, so a round trip costs far more time than its instructions. A
//! close reports nothing a program could act on, so it need not be a
//! round trip of its own: it waits here, up to [`WAITING_MAX`] of them,
//! and they go with this process's next `OPEN` that uses its buffer
//! ([`take_for`], `flags::CLOSES`: the handles at the buffer's start), or
//! else [`CLOSE_MAX`] to a `CLOSE` (the handles in its words).
//!
//! What a waiting close could change is seen only by calls that look at
//! the server's handles or at what an unlinked file still holds: before
//! `UNLINK`, `RMDIR`, `RENAME`, `INFO`, `SYNC` and `STOP` the waiting
//! closes go first ([`before`]), and so they do when the descriptors are
//! all closed (exit, `execve`), when this process moves to another server,
//! and when an open finds the server's table of this client's handles
//! full.
//!
//! A handle that was written through waits as well. What its close did
//! besides — the disk server hands the file's gathered writes to its file
//! system then — every request but a write does first, whoever sends it
//! (`dfsd`'s `settle`), and so does the `update` daemon's write-back each
//! second: another process that opens, reads or stats the file sees every
//! byte written before the close, with the close still waiting, and the
//! bytes reach the disk at most a second later than they did. A failure
//! to take the gathered
//! writes was never the close's to report (the reply of a `CLOSE` is not
//! passed on); the server keeps it for the file, and the next write or
//! `fsync` of it reports it.
//!
//! A forked child inherits the list with the parent's memory and drops it
//! unsent (the handles are the parent's); a restored process drops the
//! old server's.

use spin::Mutex;

use super::client::call;
use super::proto::{self, op};
use crate::exposed;
use crate::pct::Msg;

/// Most handles one `CLOSE` carries (words 1..9).
pub const CLOSE_MAX: usize = proto::WORDS - 1;

/// Most closes waiting: as many as an `OPEN` carries.
pub const WAITING_MAX: usize = proto::CLOSES_MAX;

/// The closes waiting, all for one server.
struct Waiting {
    /// The process that made the list (a forked child is another).
    owner: u64,
    /// Restores seen when it was made.
    restores: u64,
    server: u64,
    handles: [u64; WAITING_MAX],
    n: usize,
}

static WAITING: Mutex<Option<Waiting>> = Mutex::new(None);

/// Closes `handle` of `server` when the list next goes (at once if the
/// list is in use by an interrupted close).
pub(crate) fn close(server: u64, handle: u64) {
    if let Some(mut guard) = WAITING.try_lock() {
        let me = exposed::self_id();
        let restores = crate::restore::count();
        let w = guard.get_or_insert(Waiting { owner: me, restores, server, handles: [0; WAITING_MAX], n: 0 });
        if w.owner != me || w.restores != restores {
            *w = Waiting { owner: me, restores, server, handles: [0; WAITING_MAX], n: 0 };
        }
        if w.server != server || w.n == WAITING_MAX {
            send(w);
            w.server = server;
        }
        w.handles[w.n] = handle;
        w.n += 1;
        return;
    }
    send_one(server, &[handle]);
}

/// Sends the waiting closes for `server` before a request `op` that could
/// see them.
pub(crate) fn before(server: u64, op: u8) {
    if matches!(op, op::UNLINK | op::RMDIR | op::RENAME | op::INFO | op::SYNC | op::STOP) {
        flush_for(Some(server));
    }
}

/// Sends every waiting close (exit, `execve`: the descriptors are gone).
pub fn flush() {
    flush_for(None);
}

/// Sends the waiting closes if they are for `server` (any server: `None`),
/// with the handles opened ahead there that no open took.
pub(crate) fn flush_for(server: Option<u64>) {
    super::buffer::drop_ahead(server);
    let Some(mut guard) = WAITING.try_lock() else { return };
    if let Some(w) = guard.as_mut()
        && server.is_none_or(|s| s == w.server)
    {
        send(w);
    }
}

/// Sends `w`'s closes if they are this process's own, and empties it.
fn send(w: &mut Waiting) {
    let mine = w.owner == exposed::self_id() && w.restores == crate::restore::count();
    if mine {
        send_now(w.server, &w.handles[..w.n]);
    }
    w.n = 0;
}

/// Takes the closes waiting for `server` into `list` as an `OPEN` with
/// `flags::CLOSES` carries them (word 0 their count, then the handles):
/// how many words of it to send (0: none are this process's for it, or
/// the list is in use).
pub(crate) fn take_for(server: u64, list: &mut [u64; 1 + WAITING_MAX]) -> usize {
    let Some(mut guard) = WAITING.try_lock() else { return 0 };
    let Some(w) = guard.as_mut().filter(|w| w.server == server && w.n > 0) else { return 0 };
    let mine = w.owner == exposed::self_id() && w.restores == crate::restore::count();
    let n = if mine { w.n } else { 0 };
    list[0] = n as u64;
    list[1..=n].copy_from_slice(&w.handles[..n]);
    w.n = 0;
    if n == 0 { 0 } else { 1 + n }
}

/// Closes `handles` of `server` now, [`CLOSE_MAX`] to a `CLOSE`.
pub(crate) fn send_now(server: u64, handles: &[u64]) {
    for chunk in handles.chunks(CLOSE_MAX) {
        send_one(server, chunk);
    }
}

/// One `CLOSE` of `handles` (1..=[`CLOSE_MAX`]); a dead server has nothing
/// left to close, and a close reports nothing the caller could act on.
fn send_one(server: u64, handles: &[u64]) {
    let mut m: Msg = [0; proto::WORDS];
    m[0] = proto::request(op::CLOSE, handles.len(), 0);
    m[1..=handles.len()].copy_from_slice(handles);
    let _ = call(server, &m);
}
