//! UDP sockets on smoltcp: one filter per bound port; an unbound socket
//! takes an ephemeral port at its first send.

use super::host::Net;
use super::{IoError, Ready, Shutdown, SockAddr, Socket};
use alloc::vec;
use oxok_abi::Error;
use smoltcp::iface::SocketHandle;
use smoltcp::socket::udp;
use smoltcp::wire::{IpAddress, IpEndpoint};

/// The largest datagram (one unfragmented Ethernet frame).
pub const DATAGRAM_MAX: usize = 1472;
/// Datagrams each direction may queue.
const QUEUED: usize = 32;

/// A UDP socket's binding and default peer.
#[derive(Default)]
pub(crate) struct State {
    bound: Option<(SocketHandle, u16)>,
    peer: Option<SockAddr>,
    rd_shut: bool,
    wr_shut: bool,
}

fn endpoint(a: SockAddr) -> IpEndpoint {
    let [w, x, y, z] = a.ip;
    IpEndpoint::new(IpAddress::v4(w, x, y, z), a.port)
}

fn addr_of(e: IpEndpoint) -> SockAddr {
    let IpAddress::Ipv4(a) = e.addr;
    SockAddr { ip: a.octets(), port: e.port }
}

fn bind_in(net: &mut Net, st: &mut State, port: u16) -> Result<(), IoError> {
    if st.bound.is_some() {
        return Err(IoError::Invalid);
    }
    let port = if port == 0 {
        net.ephemeral(|net, p| net.udp_bind(p).map(|()| p))?
    } else {
        net.udp_bind(port).map_err(|e| if e == Error::Exists { IoError::AddrInUse } else { IoError::Kernel(e) })?;
        port
    };
    let meta = || vec![udp::PacketMetadata::EMPTY; QUEUED];
    let rx = udp::PacketBuffer::new(meta(), vec![0; QUEUED * 512]);
    let tx = udp::PacketBuffer::new(meta(), vec![0; QUEUED * 512]);
    let mut sock = udp::Socket::new(rx, tx);
    if sock.bind(port).is_err() {
        net.udp_unbind(port);
        return Err(IoError::Invalid);
    }
    st.bound = Some((net.set.add(sock), port));
    Ok(())
}

pub(crate) fn bind(s: &Socket, addr: SockAddr) -> Result<(), IoError> {
    super::host::with(|net| {
        if addr.ip != [0; 4] && addr.ip != net.ip {
            return Ok(Err(IoError::Invalid));
        }
        Ok(bind_in(net, &mut s.udp.lock(), addr.port))
    })?
}

pub(crate) fn connect(s: &Socket, addr: SockAddr) -> Result<(), IoError> {
    if addr.port == 0 {
        return Err(IoError::Invalid);
    }
    s.udp.lock().peer = Some(addr);
    Ok(())
}

pub(crate) fn send_to(s: &Socket, buf: &[u8], to: Option<SockAddr>) -> Result<usize, IoError> {
    if buf.len() > DATAGRAM_MAX {
        return Err(IoError::Invalid);
    }
    s.block(0, |net| {
        let mut st = s.udp.lock();
        if st.wr_shut {
            return Err(IoError::BrokenPipe);
        }
        let dest = to.or(st.peer).ok_or(IoError::NotConnected)?;
        if st.bound.is_none() {
            bind_in(net, &mut st, 0)?;
        }
        let Some((h, _)) = st.bound else { return Err(IoError::Invalid) };
        let sock = net.set.get_mut::<udp::Socket>(h);
        if !sock.can_send() {
            return Ok(None);
        }
        match sock.send_slice(buf, endpoint(dest)) {
            Ok(()) => Ok(Some(buf.len())),
            Err(udp::SendError::BufferFull) => Ok(None),
            Err(udp::SendError::Unaddressable) => Err(IoError::Invalid),
        }
    })
}

pub(crate) fn recv_from(s: &Socket, buf: &mut [u8]) -> Result<(usize, SockAddr), IoError> {
    let ms = s.recv_timeout();
    let until = if ms == 0 { 0 } else { super::host::now_tick() + crate::net::stack::ms_to_ticks(ms) };
    s.block(until, |net| {
        let st = s.udp.lock();
        if st.rd_shut {
            return Ok(Some((0, SockAddr::default())));
        }
        let Some((h, _)) = st.bound else { return Err(IoError::NotConnected) };
        let sock = net.set.get_mut::<udp::Socket>(h);
        loop {
            match sock.recv() {
                Ok((data, meta)) => {
                    let from = addr_of(meta.endpoint);
                    // A connected socket takes datagrams from its peer only.
                    if st.peer.is_some_and(|p| p != from) {
                        continue;
                    }
                    let n = data.len().min(buf.len());
                    buf[..n].copy_from_slice(&data[..n]);
                    return Ok(Some((n, from)));
                }
                Err(_) => return Ok(None),
            }
        }
    })
}

pub(crate) fn shutdown(s: &Socket, how: Shutdown) -> Result<(), IoError> {
    let mut st = s.udp.lock();
    if st.peer.is_none() {
        return Err(IoError::NotConnected);
    }
    st.rd_shut |= matches!(how, Shutdown::Read | Shutdown::Both);
    st.wr_shut |= matches!(how, Shutdown::Write | Shutdown::Both);
    Ok(())
}

pub(crate) fn close(s: &Socket) {
    let bound = s.udp.lock().bound.take();
    if let Some((h, port)) = bound {
        let _ = super::host::with(|net| {
            // What is queued still goes out.
            net.poll();
            net.set.remove(h);
            net.udp_unbind(port);
            Ok(())
        });
    }
}

pub(crate) fn ready(s: &Socket, net: &mut Net) -> Ready {
    let st = s.udp.lock();
    match st.bound {
        Some((h, _)) => {
            let sock = net.set.get::<udp::Socket>(h);
            Ready { read: st.rd_shut || sock.can_recv(), write: sock.can_send(), hangup: false }
        }
        None => Ready { read: st.rd_shut, write: true, hangup: false },
    }
}

pub(crate) fn local_addr(s: &Socket) -> Result<SockAddr, IoError> {
    let ip = super::host::with(|net| Ok(net.ip))?;
    Ok(match s.udp.lock().bound {
        Some((_, port)) => SockAddr { ip, port },
        None => SockAddr::default(),
    })
}

pub(crate) fn peer_addr(s: &Socket) -> Result<SockAddr, IoError> {
    s.udp.lock().peer.ok_or(IoError::NotConnected)
}
