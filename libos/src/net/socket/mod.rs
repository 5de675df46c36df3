//! BSD-style sockets over the libOS's TCP/IP (smoltcp, `host`): TCP and UDP
//! sockets that are descriptor objects ([`File`]), so `read`, `write`,
//! `close` and [`poll`] work on them as on pipes. A call that would block
//! polls the stack, and if it still cannot finish sleeps on the stack's
//! packet ring with a wakeup predicate (a packet arrived, or smoltcp's next
//! timer is due) — never spinning. Non-blocking sockets answer
//! [`IoError::WouldBlock`] instead.
//!
//! Each bound UDP port and each listening TCP port gets one packet filter
//! (accepted connections share it); an outgoing connection gets a filter
//! of its own. A closed connection is finished by the stack (its data and
//! FIN still go out) while the process keeps calling into it.

mod cork;
mod host;
mod poll;
mod tcp;
mod udp;

use crate::fd::{File, IoError};
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;

pub use host::MAX_SLEEP_MS;
pub(crate) use host::busy;
pub use poll::{drain, poll, pump};

/// An IPv4 address and port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SockAddr {
    /// The address (0.0.0.0: any).
    pub ip: [u8; 4],
    /// The port (0: any / let the stack choose).
    pub port: u16,
}

impl SockAddr {
    /// `ip`:`port`.
    pub const fn new(ip: [u8; 4], port: u16) -> SockAddr {
        SockAddr { ip, port }
    }
}

impl core::fmt::Display for SockAddr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let [a, b, c, d] = self.ip;
        write!(f, "{a}.{b}.{c}.{d}:{}", self.port)
    }
}

/// TCP or UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A stream (TCP).
    Tcp,
    /// Datagrams (UDP).
    Udp,
}

/// Which directions [`Socket::shutdown`] closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// No more receiving.
    Read,
    /// No more sending (a FIN).
    Write,
    /// Both.
    Both,
}

/// What a socket is ready for (see [`poll`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// A read (or accept) would not block.
    pub read: bool,
    /// A write would not block.
    pub write: bool,
    /// The peer closed or reset the connection, or it never came up.
    pub hangup: bool,
}

/// Buffer sizes and limits of a socket, settable before it connects.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opts {
    pub rx: usize,
    pub tx: usize,
    /// Milliseconds a blocking receive waits (0: forever).
    pub recv_timeout_ms: u64,
    pub nodelay: bool,
    /// Sends wait for whole segments (`TCP_CORK`).
    pub cork: bool,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts { rx: 8 * 1024, tx: 16 * 1024, recv_timeout_ms: 0, nodelay: true, cork: false }
    }
}

/// A socket: a descriptor object. Dropping the last reference closes it.
pub struct Socket {
    kind: Kind,
    tcp: Mutex<tcp::State>,
    udp: Mutex<udp::State>,
    nonblocking: AtomicBool,
    opts: Mutex<Opts>,
    /// Bytes sent and received, for `fds`-style views.
    sent: AtomicU64,
    received: AtomicU64,
}

impl Socket {
    fn with_kind(kind: Kind) -> Socket {
        Socket {
            kind,
            tcp: Mutex::new(tcp::State::Fresh { local: 0 }),
            udp: Mutex::new(udp::State::default()),
            nonblocking: AtomicBool::new(false),
            opts: Mutex::new(Opts::default()),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        }
    }

    /// A new unbound socket. Fails with the kernel's `NotFound` when the
    /// machine has no NIC or this process no transmit template.
    pub fn new(kind: Kind) -> Result<Arc<Socket>, IoError> {
        host::with(|_| Ok(()))?;
        Ok(Arc::new(Socket::with_kind(kind)))
    }

    /// TCP or UDP.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Makes calls fail with [`IoError::WouldBlock`] instead of waiting.
    pub fn set_nonblocking(&self, on: bool) {
        self.nonblocking.store(on, Ordering::Relaxed);
    }

    /// True in non-blocking mode.
    pub fn nonblocking(&self) -> bool {
        self.nonblocking.load(Ordering::Relaxed)
    }

    /// Sets the receive and send buffer sizes (bytes, 1 KiB to 1 MiB) used
    /// when the connection is made; `None` keeps one.
    pub fn set_buffers(&self, rx: Option<usize>, tx: Option<usize>) {
        let mut o = self.opts.lock();
        if let Some(r) = rx {
            o.rx = r.clamp(1024, 1 << 20);
        }
        if let Some(t) = tx {
            o.tx = t.clamp(1024, 1 << 20);
        }
    }

    /// The receive and send buffer sizes.
    pub fn buffers(&self) -> (usize, usize) {
        let o = self.opts.lock();
        (o.rx, o.tx)
    }

    /// How long a blocking receive waits before [`IoError::TimedOut`]
    /// (milliseconds, 0: forever).
    pub fn set_recv_timeout(&self, ms: u64) {
        self.opts.lock().recv_timeout_ms = ms;
    }

    /// The receive time limit in milliseconds (0: none).
    pub fn recv_timeout(&self) -> u64 {
        self.opts.lock().recv_timeout_ms
    }

    /// Sends small segments at once (no Nagle) when on; the default.
    pub fn set_nodelay(&self, on: bool) {
        self.opts.lock().nodelay = on;
        if self.kind == Kind::Tcp {
            tcp::set_nodelay(self, on);
        }
    }

    /// Corks a TCP socket (Linux's `TCP_CORK`) when on: what it sends
    /// waits until a whole segment has gathered, the cork comes off, the
    /// sending side closes (the FIN then rides on the last bytes) or 200 ms
    /// have passed. Turning it off sends what waits.
    pub fn set_cork(&self, on: bool) {
        self.opts.lock().cork = on;
        if !on && self.kind == Kind::Tcp {
            tcp::uncork(self);
        }
    }

    /// True while corked.
    pub fn cork(&self) -> bool {
        self.opts.lock().cork
    }

    /// True when Nagle's algorithm is off.
    pub fn nodelay(&self) -> bool {
        self.opts.lock().nodelay
    }

    /// Binds to `addr` (its address must be 0.0.0.0 or this machine's; port 0
    /// takes an ephemeral one for UDP).
    pub fn bind(&self, addr: SockAddr) -> Result<(), IoError> {
        match self.kind {
            Kind::Tcp => tcp::bind(self, addr),
            Kind::Udp => udp::bind(self, addr),
        }
    }

    /// Starts accepting TCP connections: up to `backlog` (1 to 64) may be
    /// completed by the stack before [`accept`](Socket::accept) takes them.
    pub fn listen(&self, backlog: usize) -> Result<(), IoError> {
        match self.kind {
            Kind::Tcp => tcp::listen(self, backlog),
            Kind::Udp => Err(IoError::Unsupported),
        }
    }

    /// The next connection a listening socket completed, and its peer.
    pub fn accept(&self) -> Result<(Arc<Socket>, SockAddr), IoError> {
        match self.kind {
            Kind::Tcp => tcp::accept(self),
            Kind::Udp => Err(IoError::Unsupported),
        }
    }

    /// Connects to `addr` (TCP: waits for the handshake unless non-blocking;
    /// UDP: sets the default peer).
    pub fn connect(&self, addr: SockAddr) -> Result<(), IoError> {
        match self.kind {
            Kind::Tcp => tcp::connect(self, addr),
            Kind::Udp => udp::connect(self, addr),
        }
    }

    /// Sends from `buf`; returns how much was taken.
    pub fn send(&self, buf: &[u8]) -> Result<usize, IoError> {
        self.counted(match self.kind {
            Kind::Tcp => tcp::send(self, buf, false),
            Kind::Udp => udp::send_to(self, buf, None),
        })
    }

    /// A send's result, its bytes added to the socket's count.
    fn counted(&self, sent: Result<usize, IoError>) -> Result<usize, IoError> {
        let n = sent?;
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    /// Sends on a TCP socket as [`send`](Socket::send), saying more follows
    /// (Linux's `MSG_MORE`): the bytes wait as if corked, until a send
    /// without it, the cork's removal, the close or 200 ms. A UDP socket
    /// refuses it with [`IoError::Invalid`].
    pub fn send_more(&self, buf: &[u8]) -> Result<usize, IoError> {
        if self.kind != Kind::Tcp {
            return Err(IoError::Invalid);
        }
        self.counted(tcp::send(self, buf, true))
    }

    /// Receives into `buf`; `Ok(0)` at the end of a TCP stream.
    pub fn recv(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        self.recv_from(buf).map(|(n, _)| n)
    }

    /// Sends one datagram to `to` (UDP; for TCP `to` must be `None`).
    pub fn send_to(&self, buf: &[u8], to: Option<SockAddr>) -> Result<usize, IoError> {
        match (self.kind, to) {
            (Kind::Tcp, None) => self.send(buf),
            (Kind::Tcp, Some(_)) => Err(IoError::Invalid),
            (Kind::Udp, to) => self.counted(udp::send_to(self, buf, to)),
        }
    }

    /// Receives into `buf` and says from whom.
    pub fn recv_from(&self, buf: &mut [u8]) -> Result<(usize, SockAddr), IoError> {
        let r = match self.kind {
            Kind::Tcp => tcp::recv(self, buf)?,
            Kind::Udp => udp::recv_from(self, buf)?,
        };
        self.received.fetch_add(r.0 as u64, Ordering::Relaxed);
        Ok(r)
    }

    /// Closes one or both directions.
    pub fn shutdown(&self, how: Shutdown) -> Result<(), IoError> {
        match self.kind {
            Kind::Tcp => tcp::shutdown(self, how),
            Kind::Udp => udp::shutdown(self, how),
        }
    }

    /// Drops the connection with a reset (nothing more is sent or received).
    pub fn abort(&self) {
        if self.kind == Kind::Tcp {
            tcp::abort(self);
        }
    }

    /// The local address (port 0 if unbound).
    pub fn local_addr(&self) -> Result<SockAddr, IoError> {
        match self.kind {
            Kind::Tcp => tcp::local_addr(self),
            Kind::Udp => udp::local_addr(self),
        }
    }

    /// The connected peer.
    pub fn peer_addr(&self) -> Result<SockAddr, IoError> {
        match self.kind {
            Kind::Tcp => tcp::peer_addr(self),
            Kind::Udp => udp::peer_addr(self),
        }
    }

    /// What the socket is ready for now (after polling the stack).
    pub fn ready(&self) -> Ready {
        let mut r = Ready::default();
        let _ = host::with(|net| {
            net.poll();
            r = self.ready_in(net);
            Ok(())
        });
        r
    }

    fn ready_in(&self, net: &mut host::Net) -> Ready {
        match self.kind {
            Kind::Tcp => tcp::ready(self, net),
            Kind::Udp => udp::ready(self, net),
        }
    }

    /// Bytes sent and received through this socket.
    pub fn counters(&self) -> (u64, u64) {
        (self.sent.load(Ordering::Relaxed), self.received.load(Ordering::Relaxed))
    }

    /// Runs `op` on the stack until it gives a value: each round polls the
    /// stack, tries `op`, and if it has nothing yet sleeps on the ring until
    /// a packet or smoltcp's next timer (never longer than
    /// [`MAX_SLEEP_MS`]). Non-blocking sockets get `WouldBlock` at once;
    /// `until_tick` (0: none) ends the wait with `TimedOut`.
    fn block<T>(
        &self,
        until_tick: u64,
        mut op: impl FnMut(&mut host::Net) -> Result<Option<T>, IoError>,
    ) -> Result<T, IoError> {
        loop {
            let mut out = None;
            let (ring, seen, wake) = host::with(|net| {
                let seen = net.seen();
                net.poll();
                out = op(net).transpose();
                net.poll();
                Ok((net.ring_id(), seen, net.wake_tick()))
            })?;
            if let Some(r) = out {
                return r;
            }
            if self.nonblocking() {
                return Err(IoError::WouldBlock);
            }
            let mut wake = wake;
            if until_tick != 0 {
                if host::now_tick() >= until_tick {
                    return Err(IoError::TimedOut);
                }
                wake = wake.min(until_tick);
            }
            host::sleep(ring, seen, wake)?;
        }
    }
}

impl File for Socket {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        self.recv(buf)
    }

    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        self.send(buf)
    }

    fn kind(&self) -> &'static str {
        match self.kind {
            Kind::Tcp => "tcp",
            Kind::Udp => "udp",
        }
    }

    fn as_socket(&self) -> Option<&Socket> {
        Some(self)
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        match self.kind {
            Kind::Tcp => tcp::close(self),
            Kind::Udp => udp::close(self),
        }
    }
}

/// A new socket in the lowest free descriptor.
pub fn open(kind: Kind) -> Result<usize, IoError> {
    let s: Arc<dyn File> = Socket::new(kind)?;
    crate::fd::install(s)
}

/// Puts a socket (from [`Socket::accept`]) in the lowest free descriptor.
pub fn install(s: Arc<Socket>) -> Result<usize, IoError> {
    let s: Arc<dyn File> = s;
    crate::fd::install(s)
}

/// Runs `f` on the socket behind descriptor `fd` (`Unsupported` if it is
/// not a socket).
pub fn with_fd<R>(fd: usize, f: impl FnOnce(&Socket) -> Result<R, IoError>) -> Result<R, IoError> {
    let h = crate::fd::get(fd)?;
    match h.as_socket() {
        Some(s) => f(s),
        None => Err(IoError::Unsupported),
    }
}
