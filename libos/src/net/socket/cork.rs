//! Corked TCP sends: Linux's `TCP_CORK` and `MSG_MORE`. A corked
//! connection's bytes wait here, outside smoltcp, until a whole segment's
//! worth has gathered, the cork comes off, the sending side closes, or
//! [`CORK_MS`] have passed since the first of them (Linux's ceiling). So a
//! response written as a head and a body and then closed leaves in one
//! segment that also carries the FIN, where written at once it takes three
//! (head, body, FIN) and the peer's acknowledgements of them.
//!
//! They cannot wait in smoltcp's own send buffer: the interface sends what
//! any socket holds at every poll, and a poll runs for every call on any
//! socket of the process. Bytes held here never exceed the room the
//! socket's buffer has for them, so letting them go always succeeds.

use alloc::vec::Vec;
use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp;

/// The longest a corked byte waits (Linux: 200 ms).
pub const CORK_MS: u64 = 200;
/// A whole segment on this interface (an MTU of 1500 less the IPv4 and
/// TCP headers): corked bytes go as soon as this many have gathered.
pub const SEGMENT: usize = 1460;

/// One connection's waiting bytes.
struct Held {
    handle: SocketHandle,
    bytes: Vec<u8>,
    /// When they must go at the latest, as a tick count.
    due: u64,
}

/// Every corked connection's waiting bytes (few: one per connection in
/// the middle of a corked write).
#[derive(Default)]
pub(crate) struct Corks {
    held: Vec<Held>,
}

impl Corks {
    fn find(&self, h: SocketHandle) -> Option<usize> {
        self.held.iter().position(|c| c.handle == h)
    }

    /// Bytes waiting for `h`.
    pub fn waiting(&self, h: SocketHandle) -> usize {
        self.find(h).map_or(0, |i| self.held[i].bytes.len())
    }

    /// Keeps back as much of `buf` as `sock`'s send buffer would still take
    /// (counting what already waits), hands whole segments to the socket,
    /// and returns how many bytes were taken (0 when the buffer is full).
    /// `due` is when the first waiting byte must go.
    pub fn hold(&mut self, sock: &mut tcp::Socket, h: SocketHandle, buf: &[u8], due: u64) -> usize {
        let i = match self.find(h) {
            Some(i) => i,
            None => {
                self.held.push(Held { handle: h, bytes: Vec::new(), due });
                self.held.len() - 1
            }
        };
        let c = &mut self.held[i];
        let room = sock.send_capacity().saturating_sub(sock.send_queue() + c.bytes.len());
        let n = buf.len().min(room);
        c.bytes.extend_from_slice(&buf[..n]);
        // A buffer smaller than a segment goes when full.
        let segment = SEGMENT.min(sock.send_capacity()).max(1);
        let whole = c.bytes.len() - c.bytes.len() % segment;
        if whole > 0 {
            let sent = push(sock, &c.bytes[..whole]);
            c.bytes.drain(..sent);
        }
        if c.bytes.is_empty() {
            self.held.swap_remove(i);
        }
        n
    }

    /// Hands everything waiting for `h` to its socket (the cork came off,
    /// or the sending side closes).
    pub fn release(&mut self, sock: &mut tcp::Socket, h: SocketHandle) {
        if let Some(i) = self.find(h) {
            let c = self.held.swap_remove(i);
            push(sock, &c.bytes);
        }
    }

    /// Forgets what waits for `h` (the connection is reset or freed).
    pub fn forget(&mut self, h: SocketHandle) {
        if let Some(i) = self.find(h) {
            self.held.swap_remove(i);
        }
    }

    /// Hands the bytes that have waited until `now` (a tick count) to
    /// their sockets.
    pub fn expire(&mut self, set: &mut SocketSet, now: u64) {
        let mut i = 0;
        while i < self.held.len() {
            if self.held[i].due <= now {
                let c = self.held.swap_remove(i);
                push(set.get_mut::<tcp::Socket>(c.handle), &c.bytes);
            } else {
                i += 1;
            }
        }
    }

    /// When the next waiting bytes must go, as a tick count.
    pub fn next_due(&self) -> Option<u64> {
        self.held.iter().map(|c| c.due).min()
    }
}

/// Hands `bytes` to `sock`; they fit (see [`Corks::hold`]) unless the
/// connection can no longer send, when they are lost with it.
fn push(sock: &mut tcp::Socket, bytes: &[u8]) -> usize {
    sock.send_slice(bytes).unwrap_or(bytes.len())
}
