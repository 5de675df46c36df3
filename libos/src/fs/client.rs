//! The client's transport to the file server: finding it, one request by
//! protected control transfer, and path payloads cut into chunks.
//!
//! The server serves one call at a time: while it serves another client's
//! call (which may have been preempted half-way) a call fails with `Busy`.
//! The client then waits its turn without spinning (the pipes' waiter):
//! it donates its time to the server (`yield_cpu(server)`) so that the call
//! in progress finishes, and when that cannot help it sleeps on a wakeup
//! predicate until the server has run again (its `runs` word in the exposed
//! environment table moves) or a few ticks pass, then tries again — as
//! long as the server lives. Until a freshly started server has registered
//! its entry, calls fail with `Denied`: the client yields and tries again,
//! a bounded number of times.

use super::proto::{self, INLINE, PAYLOAD_MAX, Status, op};
use crate::fd::IoError;
use crate::fd::pipe::wait::Waiter;
use crate::pct::{self, Msg};
use crate::{Error, exposed, sys};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::EnvEntry;
use oxok_abi::layout::ENV_TABLE;

/// Tries while the server has not registered its entry yet.
const START_TRIES: u32 = 1_000;

/// The file server's id, found in the exposed environment table
/// ([`locate`](super::locate)).
pub fn server() -> Result<u64, IoError> {
    super::locate::server().ok_or(IoError::NoServer)
}

/// One request; the reply once its status is `Ok`. Closes waiting to be
/// sent go first when the request could see them ([`closes::before`]).
///
/// [`closes::before`]: super::closes::before
pub fn call(server: u64, msg: &Msg) -> Result<Msg, IoError> {
    super::closes::before(server, proto::op_of(msg[0]));
    let reply = raw_call(server, msg)?;
    proto::result(Status::of(reply[0]))?;
    Ok(reply)
}

/// Requests this process's threads had served (every server), since it
/// started.
static SERVED: AtomicU64 = AtomicU64::new(0);

/// Requests this process has had served by a file server (whatever their
/// status): what a test counts to see that a read took no round trip.
pub fn requests() -> u64 {
    SERVED.load(Ordering::Relaxed)
}

/// One request, whatever the reply's status.
pub fn raw_call(server: u64, msg: &Msg) -> Result<Msg, IoError> {
    let mut starting = 0u32;
    let mut waiter = Waiter::default();
    loop {
        match pct::call(server, msg) {
            Ok((_, reply)) => {
                SERVED.fetch_add(1, Ordering::Relaxed);
                return Ok(reply);
            }
            Err(Error::Busy) => {
                // The server's `runs` word: it moves when the server runs
                // (and so can finish the call in progress). A server that
                // has ended fails the next call with `BadEnv`.
                let Some(row) = exposed::env_entry(server) else { return Err(IoError::NoServer) };
                waiter.wait(Some(server), None, runs_word(server), row.runs);
            }
            Err(Error::Denied) if starting < START_TRIES => {
                starting += 1;
                let _ = sys::yield_cpu(0);
            }
            Err(_) => return Err(IoError::NoServer),
        }
    }
}

/// Address of environment `id`'s `runs` word in the exposed table.
fn runs_word(id: u64) -> u64 {
    let row = oxok_abi::env_id::row(id) * core::mem::size_of::<EnvEntry>();
    ENV_TABLE + (row + core::mem::offset_of!(EnvEntry, runs)) as u64
}

/// A request with a path payload: the payload's head goes ahead in `PATH`
/// chunks, its last at most [`INLINE`] bytes ride in the op's own message.
pub fn path_call(server: u64, op: u8, arg: u64, payload: &[u8]) -> Result<Msg, IoError> {
    if payload.len() > PAYLOAD_MAX {
        return Err(IoError::Invalid);
    }
    // Before any chunk is staged (a close between would end the staging if
    // it failed).
    super::closes::before(server, op);
    let head = payload.len().saturating_sub(1) / INLINE * INLINE;
    for (i, chunk) in payload[..head].chunks(INLINE).enumerate() {
        let mut m: Msg = [0; proto::WORDS];
        m[0] = proto::request(op::PATH, chunk.len(), u64::from(i == 0));
        proto::put_bytes(&mut m[1..], chunk);
        call(server, &m)?;
    }
    let tail = &payload[head..];
    let staged = if head == 0 { 0 } else { proto::STAGED };
    let mut m: Msg = [0; proto::WORDS];
    m[0] = proto::request(op, tail.len(), arg | staged);
    proto::put_bytes(&mut m[1..], tail);
    call(server, &m)
}

/// A request on an open handle: `words` go to words 1...
pub fn handle_call(server: u64, op: u8, len: usize, arg: u64, words: &[u64]) -> Result<Msg, IoError> {
    let mut m: Msg = [0; proto::WORDS];
    m[0] = proto::request(op, len, arg);
    for (d, s) in m[1..].iter_mut().zip(words) {
        *d = *s;
    }
    call(server, &m)
}
