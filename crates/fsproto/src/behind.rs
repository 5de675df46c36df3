//! A write left behind ([`flags::BEHIND`](crate::flags::BEHIND)): a
//! handle's first write, waiting in the client's buffer for the server to
//! take before it serves anyone, instead of a round trip of its own.
//!
//! A round trip is two address-space switches, and under QEMU's TCG each
//! empties the emulated TLB and the translated-code lookup cache, so a
//! small file's create (an `OPEN`, a `WRITE_BUF`, a close) costs mostly
//! its switches. The bytes of a small file's one write can wait instead,
//! as its close already does:
//!
//! 1. A client with a buffer asks once for its *behind page*
//!    ([`BEHIND_PAGE`](crate::op::BEHIND_PAGE)): one more page the server
//!    makes for the client's buffer and grants read-write, which no
//!    transfer ever touches.
//! 2. An `OPEN` for writing, not appending, with `BEHIND` from a client
//!    whose buffer has its behind page is *granted* when the server
//!    answers [`GRANTED`] in reply word 4. The server counts the open in
//!    its generation, so every small file prefetched before it reads stale
//!    from then on, and prefetches or opens along no file that a granted
//!    handle is open on.
//! 3. As the handle's first request after its open (at position 0), the
//!    client may copy up to [`MAX`] bytes to [`DATA_AT`] in its behind
//!    page and then store [`word`]`(handle, len)` at [`WORD_AT`], and
//!    count the write as done.
//! 4. Before the server serves any request, from any client, it takes
//!    every record waiting (it swaps the word with 0) and writes its bytes
//!    at the handle's position as a `WRITE_BUF` would, counting them in
//!    its generation. So whoever looks next — this client, another
//!    process, the `update` daemon's write-back a second later — sees the
//!    bytes. A failure to write them is kept for the handle; its next
//!    `WRITE`, `WRITE_BUF` or `FSYNC` reports it, as a failed write-back
//!    is reported.
//! 5. The grant ends when the server takes the handle's record, when it
//!    serves a `READ`, `WRITE`, `SEEK`, `READ_BUF`, `WRITE_BUF` or `DUP`
//!    naming the handle, and with the handle. A record the server cannot
//!    take — a word [`parse`] refuses, a handle that is not the client's,
//!    not granted, or not open for writing — is dropped and changes
//!    nothing.
//!
//! A client that finds its record still waiting when it wants to leave
//! another first sends [`SETTLE`](crate::op::SETTLE), which the server
//! answers after taking it.

use crate::BUFFER_PAGE;

/// Reply word 4 of an `OPEN` whose `BEHIND` was granted.
pub const GRANTED: u64 = 1;

/// Where the record's word lies in the behind page: its first word.
pub const WORD_AT: usize = 0;

/// Where a record's bytes start in the behind page: after the word.
pub const DATA_AT: usize = 8;

/// Most bytes one record carries: the rest of the page.
pub const MAX: usize = BUFFER_PAGE - DATA_AT;

/// Handles a record can name (the word's low 40 bits).
const HANDLE_BITS: u32 = 40;

/// The word's tag: a record, never 0.
const TAG: u64 = 1 << 63;

const _: () = assert!(MAX < 1 << (63 - HANDLE_BITS));

/// The word of a record of `len` bytes (1..=[`MAX`]) for `handle`, or
/// `None` if it cannot be one.
pub const fn word(handle: u64, len: usize) -> Option<u64> {
    if len == 0 || len > MAX || handle >> HANDLE_BITS != 0 {
        return None;
    }
    Some(TAG | (len as u64) << HANDLE_BITS | handle)
}

/// The handle and length a record's word names, or `None` for 0 (nothing
/// waits) and for any word [`word`] never makes.
pub const fn parse(w: u64) -> Option<(u64, usize)> {
    if w & TAG == 0 {
        return None;
    }
    let len = ((w & !TAG) >> HANDLE_BITS) as usize;
    if len == 0 || len > MAX {
        return None;
    }
    Some((w & ((1 << HANDLE_BITS) - 1), len))
}
