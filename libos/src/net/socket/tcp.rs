//! TCP sockets on smoltcp. A listening socket keeps a backlog of smoltcp
//! sockets on its port (smoltcp has no accept queue: each takes one
//! connection): up to [`READY`] of them listening, the rest connections
//! being set up or waiting for `accept`, all of them together no more than
//! the backlog. `accept` hands out one that completed its handshake; fresh
//! listeners are added as connections take them (at `listen`, `accept` and
//! each readiness check). Few listeners keep the stack cheap: smoltcp looks
//! at every socket for every packet and every poll, so idle listeners cost
//! a server on each request (a backlog of 32, all listening, was a third of
//! `httpd`'s instructions).

use super::cork::CORK_MS;
use super::host::{Net, PortRef};
use super::{IoError, Opts, Ready, Shutdown, SockAddr, Socket};
use crate::net::stack::ms_to_ticks;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use oxok_abi::Error;
use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::time::Duration;
use smoltcp::wire::{IpAddress, IpEndpoint};

/// The most connections a listener lets the stack complete before `accept`.
pub const BACKLOG_MAX: usize = 64;
/// The most smoltcp sockets of one listening socket that listen at once:
/// up to this many connection attempts arriving between two looks at the
/// stack are taken (one more finds no listener and is reset, as one past
/// the backlog always was).
pub const READY: usize = 8;
/// How long a connection attempt may take.
const CONNECT_MS: u64 = 20_000;

/// A connection.
pub(crate) struct Conn {
    handle: SocketHandle,
    port: Option<PortRef>,
    local: SockAddr,
    peer: SockAddr,
    rd_shut: bool,
}

/// Where a TCP socket is in its life.
pub(crate) enum State {
    /// Created; `local` is the bound port (0: none).
    Fresh { local: u16 },
    /// Listening on `port` with these smoltcp sockets (listening, being set
    /// up or waiting for `accept`; at most `limit`).
    Listening { port: u16, backlog: Vec<SocketHandle>, limit: usize },
    /// Connected, connecting, or closed by the peer.
    Conn(Conn),
    /// Aborted.
    Closed,
}

fn new_socket(o: &Opts) -> tcp::Socket<'static> {
    let mut s = tcp::Socket::new(tcp::SocketBuffer::new(vec![0; o.rx]), tcp::SocketBuffer::new(vec![0; o.tx]));
    s.set_nagle_enabled(!o.nodelay);
    s
}

fn addr_of(e: IpEndpoint) -> SockAddr {
    let IpAddress::Ipv4(a) = e.addr;
    SockAddr { ip: a.octets(), port: e.port }
}

fn kernel(e: Error) -> IoError {
    match e {
        Error::Exists => IoError::AddrInUse,
        e => IoError::Kernel(e),
    }
}

/// True once a listening smoltcp socket has a connection to hand out.
fn completed(st: tcp::State) -> bool {
    !matches!(st, tcp::State::Listen | tcp::State::SynReceived)
}

/// True while a connection is still being set up.
fn opening(st: tcp::State) -> bool {
    matches!(st, tcp::State::SynSent | tcp::State::SynReceived | tcp::State::Listen)
}

fn listener(net: &mut Net, port: u16, o: &Opts) -> Result<SocketHandle, IoError> {
    let mut s = new_socket(o);
    s.listen(port).map_err(|_| IoError::Invalid)?;
    Ok(net.set.add(s))
}

/// Adds listeners on `port` to `backlog` until [`READY`] of its sockets
/// listen or it holds `limit` (or no more can be made).
fn top_up(net: &mut Net, port: u16, backlog: &mut Vec<SocketHandle>, limit: usize, o: &Opts) {
    let mut listening =
        backlog.iter().filter(|&&h| net.set.get::<tcp::Socket>(h).state() == tcp::State::Listen).count();
    while listening < READY && backlog.len() < limit {
        match listener(net, port, o) {
            Ok(h) => backlog.push(h),
            Err(_) => break,
        }
        listening += 1;
    }
}

pub(crate) fn bind(s: &Socket, addr: SockAddr) -> Result<(), IoError> {
    super::host::with(|net| {
        if addr.ip != [0; 4] && addr.ip != net.ip {
            return Ok(Err(IoError::Invalid));
        }
        if addr.port != 0 && net.listening(addr.port) {
            return Ok(Err(IoError::AddrInUse));
        }
        let mut st = s.tcp.lock();
        Ok(match &mut *st {
            State::Fresh { local } if *local == 0 => {
                *local = addr.port;
                Ok(())
            }
            _ => Err(IoError::Invalid),
        })
    })?
}

pub(crate) fn listen(s: &Socket, backlog: usize) -> Result<(), IoError> {
    let o = *s.opts.lock();
    super::host::with(|net| {
        let mut st = s.tcp.lock();
        let local = match &*st {
            State::Fresh { local } => *local,
            State::Listening { .. } => return Ok(Ok(())),
            _ => return Ok(Err(IoError::Invalid)),
        };
        let port = if local == 0 {
            match net.ephemeral(|net, p| net.listen_port(p).map(|()| p)) {
                Ok(p) => p,
                Err(e) => return Ok(Err(kernel(e))),
            }
        } else {
            if net.listening(local) {
                return Ok(Err(IoError::AddrInUse));
            }
            if let Err(e) = net.listen_port(local) {
                return Ok(Err(kernel(e)));
            }
            local
        };
        let limit = backlog.clamp(1, BACKLOG_MAX);
        let mut handles = Vec::new();
        top_up(net, port, &mut handles, limit, &o);
        *st = State::Listening { port, backlog: handles, limit };
        Ok(Ok(()))
    })?
}

pub(crate) fn accept(s: &Socket) -> Result<(Arc<Socket>, SockAddr), IoError> {
    let o = *s.opts.lock();
    let conn = s.block(0, |net| {
        let mut st = s.tcp.lock();
        let State::Listening { port, backlog, limit } = &mut *st else { return Err(IoError::Invalid) };
        let port = *port;
        let done = backlog.iter().position(|&h| completed(net.set.get::<tcp::Socket>(h).state()));
        let handle = done.map(|i| backlog.remove(i));
        top_up(net, port, backlog, *limit, &o);
        let Some(handle) = handle else { return Ok(None) };
        let _ = net.listen_port(port); // one more user of the port's filter
        let sock = net.set.get::<tcp::Socket>(handle);
        let local = SockAddr { ip: net.ip, port };
        let peer = sock.remote_endpoint().map_or(SockAddr::default(), addr_of);
        Ok(Some(Conn { handle, port: Some(PortRef::Listen(port)), local, peer, rd_shut: false }))
    })?;
    let peer = conn.peer;
    let new = Socket::with_kind(super::Kind::Tcp);
    *new.opts.lock() = o;
    *new.tcp.lock() = State::Conn(conn);
    Ok((Arc::new(new), peer))
}

pub(crate) fn connect(s: &Socket, addr: SockAddr) -> Result<(), IoError> {
    if addr.port == 0 || addr.ip == [0; 4] {
        return Err(IoError::Invalid);
    }
    let o = *s.opts.lock();
    // Start the handshake unless a non-blocking connect already did.
    super::host::with(|net| {
        let mut st = s.tcp.lock();
        let local = match &*st {
            State::Fresh { local } => *local,
            State::Conn(_) => return Ok(Ok(())),
            _ => return Ok(Err(IoError::Invalid)),
        };
        let filter = if local == 0 {
            net.ephemeral(|net, p| net.connection_filter(p, addr).map(|f| (p, f)))
        } else {
            net.connection_filter(local, addr).map(|f| (local, f))
        };
        let (port, filter) = match filter {
            Ok(pf) => pf,
            Err(e) => return Ok(Err(kernel(e))),
        };
        let mut sock = new_socket(&o);
        sock.set_timeout(Some(Duration::from_millis(CONNECT_MS)));
        let [a, b, c, d] = addr.ip;
        let remote = (IpAddress::v4(a, b, c, d), addr.port);
        if sock.connect(net.iface.context(), remote, port).is_err() {
            return Ok(Err(IoError::Invalid));
        }
        let handle = net.set.add(sock);
        let local = SockAddr { ip: net.ip, port };
        *st = State::Conn(Conn { handle, port: Some(PortRef::Own(filter)), local, peer: addr, rd_shut: false });
        Ok(Ok(()))
    })??;
    s.block(0, |net| {
        let st = s.tcp.lock();
        let State::Conn(c) = &*st else { return Err(IoError::Invalid) };
        let sock = net.set.get_mut::<tcp::Socket>(c.handle);
        match sock.state() {
            tcp::State::SynSent | tcp::State::SynReceived => Ok(None),
            tcp::State::Closed => Err(IoError::ConnRefused),
            _ => {
                sock.set_timeout(None);
                Ok(Some(()))
            }
        }
    })
}

/// Runs `f` on the connection's smoltcp socket.
fn with_conn<R>(
    s: &Socket,
    net: &mut Net,
    f: impl FnOnce(&mut tcp::Socket<'static>, &mut Conn) -> Result<Option<R>, IoError>,
) -> Result<Option<R>, IoError> {
    with_conn_in(s, net, |net, c| f(net.set.get_mut::<tcp::Socket>(c.handle), c))
}

/// Runs `f` on the stack and the connection.
fn with_conn_in<R>(
    s: &Socket,
    net: &mut Net,
    f: impl FnOnce(&mut Net, &mut Conn) -> Result<Option<R>, IoError>,
) -> Result<Option<R>, IoError> {
    let mut st = s.tcp.lock();
    match &mut *st {
        State::Conn(c) => f(net, c),
        State::Closed => Err(IoError::ConnReset),
        _ => Err(IoError::NotConnected),
    }
}

/// Sends what the connection's buffer takes of `buf`. Corked (`more`, as
/// `MSG_MORE`, or the socket's `TCP_CORK`), the bytes wait in the stack's
/// [`Corks`](super::cork::Corks) for a whole segment, the cork's removal,
/// the close or [`CORK_MS`]; uncorked, they go with any that waited.
pub(crate) fn send(s: &Socket, buf: &[u8], more: bool) -> Result<usize, IoError> {
    if buf.is_empty() {
        return Ok(0);
    }
    let cork = more || s.opts.lock().cork;
    s.block(0, |net| {
        let due = super::host::now_tick() + ms_to_ticks(CORK_MS);
        with_conn_in(s, net, |net, c| {
            let h = c.handle;
            let sock = net.set.get_mut::<tcp::Socket>(h);
            if !sock.can_send() {
                return match sock.state() {
                    st if opening(st) => Ok(None),
                    tcp::State::Closed => Err(IoError::ConnReset),
                    _ if !sock.may_send() => Err(IoError::BrokenPipe),
                    _ => Ok(None),
                };
            }
            if !cork && net.corks.waiting(h) == 0 {
                return sock.send_slice(buf).map(Some).map_err(|_| IoError::BrokenPipe);
            }
            let n = net.corks.hold(sock, h, buf, due);
            if !cork {
                net.corks.release(sock, h);
            }
            Ok((n > 0).then_some(n))
        })
    })
}

/// Takes the cork off (`TCP_CORK` 0): what waited goes now.
pub(crate) fn uncork(s: &Socket) {
    let _ = super::host::with(|net| {
        let _ = with_conn_in(s, net, |net, c| {
            net.uncork(c.handle);
            Ok(Some(()))
        });
        net.poll();
        Ok(())
    });
}

pub(crate) fn recv(s: &Socket, buf: &mut [u8]) -> Result<(usize, SockAddr), IoError> {
    let ms = s.recv_timeout();
    let until = if ms == 0 { 0 } else { super::host::now_tick() + crate::net::stack::ms_to_ticks(ms) };
    s.block(until, |net| {
        with_conn(s, net, |sock, c| {
            if c.rd_shut {
                return Ok(Some((0, c.peer)));
            }
            if sock.can_recv() {
                let n = sock.recv_slice(buf).map_err(|_| IoError::ConnReset)?;
                return Ok(Some((n, c.peer)));
            }
            if opening(sock.state()) || sock.may_recv() { Ok(None) } else { Ok(Some((0, c.peer))) }
        })
    })
}

pub(crate) fn shutdown(s: &Socket, how: Shutdown) -> Result<(), IoError> {
    super::host::with(|net| {
        let r = with_conn_in(s, net, |net, c| {
            if matches!(how, Shutdown::Read | Shutdown::Both) {
                c.rd_shut = true;
            }
            if matches!(how, Shutdown::Write | Shutdown::Both) {
                // Corked bytes go first, the FIN riding on the last of them.
                net.uncork(c.handle);
                net.set.get_mut::<tcp::Socket>(c.handle).close();
            }
            Ok(Some(()))
        });
        net.poll();
        Ok(r.map(|_| ()))
    })?
}

pub(crate) fn abort(s: &Socket) {
    let _ = super::host::with(|net| {
        let mut st = s.tcp.lock();
        if let State::Conn(c) = &mut *st
            && let Some(port) = c.port.take()
        {
            net.abort(c.handle, port);
            *st = State::Closed;
        }
        Ok(())
    });
}

pub(crate) fn close(s: &Socket) {
    let _ = super::host::with(|net| {
        let mut st = s.tcp.lock();
        match core::mem::replace(&mut *st, State::Closed) {
            State::Listening { port, backlog, .. } => {
                for h in backlog {
                    net.kill(h);
                }
                net.release(PortRef::Listen(port));
            }
            State::Conn(mut c) => {
                if let Some(port) = c.port.take() {
                    net.orphan(c.handle, port);
                }
            }
            State::Fresh { .. } | State::Closed => {}
        }
        net.poll();
        Ok(())
    });
}

pub(crate) fn ready(s: &Socket, net: &mut Net) -> Ready {
    let o = *s.opts.lock();
    let mut st = s.tcp.lock();
    match &mut *st {
        State::Listening { port, backlog, limit } => {
            // Connections took listeners since the last look: more listen.
            top_up(net, *port, backlog, *limit, &o);
            Ready {
                read: backlog.iter().any(|&h| completed(net.set.get::<tcp::Socket>(h).state())),
                write: false,
                hangup: false,
            }
        }
        State::Conn(c) => {
            let sock = net.set.get::<tcp::Socket>(c.handle);
            let st = sock.state();
            let open = opening(st);
            // Corked bytes take their room in the send buffer.
            let room = sock.send_capacity().saturating_sub(sock.send_queue()) > net.corks.waiting(c.handle);
            Ready {
                read: c.rd_shut || sock.can_recv() || (!open && !sock.may_recv()),
                write: (sock.can_send() && room) || (!open && !sock.may_send()),
                hangup: matches!(st, tcp::State::Closed | tcp::State::TimeWait),
            }
        }
        State::Fresh { .. } | State::Closed => Ready { read: false, write: false, hangup: true },
    }
}

pub(crate) fn set_nodelay(s: &Socket, on: bool) {
    let _ = super::host::with(|net| {
        let _ = with_conn(s, net, |sock, _| {
            sock.set_nagle_enabled(!on);
            Ok(Some(()))
        });
        Ok(())
    });
}

pub(crate) fn local_addr(s: &Socket) -> Result<SockAddr, IoError> {
    let ip = super::host::with(|net| Ok(net.ip))?;
    Ok(match &*s.tcp.lock() {
        State::Fresh { local } => SockAddr { ip: [0; 4], port: *local },
        State::Listening { port, .. } => SockAddr { ip, port: *port },
        State::Conn(c) => c.local,
        State::Closed => return Err(IoError::Invalid),
    })
}

pub(crate) fn peer_addr(s: &Socket) -> Result<SockAddr, IoError> {
    match &*s.tcp.lock() {
        State::Conn(c) => Ok(c.peer),
        _ => Err(IoError::NotConnected),
    }
}
