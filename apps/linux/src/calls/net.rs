//! Sockets: the BSD socket calls on the libOS's sockets
//! (`oxok_libos::net::socket`), IPv4 TCP and UDP only. A socket is a
//! descriptor of the libOS's table like any other, so `read`, `write`,
//! `close`, `dup` and `poll` work on it; `O_NONBLOCK` (from `socket`,
//! `accept4` or `fcntl`) is the socket's non-blocking mode.

use crate::errno::{
    EAFNOSUPPORT, EAGAIN, EBADF, EDESTADDRREQ, EFAULT, EINPROGRESS, EINVAL, ENETDOWN, ENOPROTOOPT, ENOTSOCK,
    EOPNOTSUPP, EPROTONOSUPPORT, Res, from_io,
};
use crate::{fdtab, uaccess};
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fd::{self, IoError};
use oxok_libos::net::socket::{self, Kind, Shutdown, SockAddr, Socket};

const AF_INET: u64 = 2;
const SOCK_STREAM: u64 = 1;
const SOCK_DGRAM: u64 = 2;
const SOCK_TYPE_MASK: u64 = 0xf;
/// `SOCK_NONBLOCK` and `O_NONBLOCK`.
pub const NONBLOCK: u64 = 0o4000;
const CLOEXEC: u64 = 0o2_000_000;
const IPPROTO_TCP: u64 = 6;
const IPPROTO_UDP: u64 = 17;
const MSG_PEEK: u64 = 0x2;
const MSG_DONTWAIT: u64 = 0x40;
const MSG_WAITALL: u64 = 0x100;
const MSG_NOSIGNAL: u64 = 0x4000;
const MSG_MORE: u64 = 0x8000;

const SOL_SOCKET: u64 = 1;
const SO_REUSEADDR: u64 = 2;
const SO_TYPE: u64 = 3;
const SO_ERROR: u64 = 4;
const SO_SNDBUF: u64 = 7;
const SO_RCVBUF: u64 = 8;
const SO_KEEPALIVE: u64 = 9;
const SO_REUSEPORT: u64 = 15;
const SO_RCVTIMEO: u64 = 20;
const TCP_NODELAY: u64 = 1;
const TCP_CORK: u64 = 3;

/// Length of `struct sockaddr_in`.
const SOCKADDR_IN: usize = 16;

/// Runs `f` on the socket behind `fd` (`EBADF`, `ENOTSOCK`).
fn with<R>(fd: u64, f: impl FnOnce(&Socket) -> Result<R, i64>) -> Result<R, i64> {
    let h = fd::get(usize::try_from(fd).map_err(|_| EBADF)?).map_err(|_| EBADF)?;
    let s = h.as_socket().ok_or(ENOTSOCK)?;
    f(s)
}

/// Reads a `sockaddr_in` of `len` bytes at `addr`.
fn read_addr(addr: u64, len: u64) -> Result<SockAddr, i64> {
    if addr == 0 {
        return Err(EDESTADDRREQ);
    }
    if len < SOCKADDR_IN as u64 {
        return Err(EINVAL);
    }
    let mut raw = [0u8; SOCKADDR_IN];
    uaccess::read(addr, &mut raw)?;
    if u64::from(u16::from_le_bytes([raw[0], raw[1]])) != AF_INET {
        return Err(EAFNOSUPPORT);
    }
    Ok(SockAddr { ip: [raw[4], raw[5], raw[6], raw[7]], port: u16::from_be_bytes([raw[2], raw[3]]) })
}

/// Writes `a` as a `sockaddr_in` at `addr` (if not null), truncated to the
/// `socklen_t` at `lenp`, which gets the full length.
fn write_addr(a: SockAddr, addr: u64, lenp: u64) -> Result<(), i64> {
    if addr == 0 {
        return Ok(());
    }
    let mut l = [0u8; 4];
    uaccess::read(lenp, &mut l)?;
    let room = u32::from_le_bytes(l) as usize;
    let mut raw = [0u8; SOCKADDR_IN];
    raw[0..2].copy_from_slice(&(AF_INET as u16).to_le_bytes());
    raw[2..4].copy_from_slice(&a.port.to_be_bytes());
    raw[4..8].copy_from_slice(&a.ip);
    uaccess::write(addr, &raw[..room.min(SOCKADDR_IN)])?;
    uaccess::write(lenp, &(SOCKADDR_IN as u32).to_le_bytes())
}

/// Installs `s` in a descriptor with the `SOCK_NONBLOCK`/`SOCK_CLOEXEC`
/// bits of `flags`.
fn install(s: alloc::sync::Arc<Socket>, flags: u64) -> Res {
    s.set_nonblocking(flags & NONBLOCK != 0);
    let fd = socket::install(s).map_err(from_io)?;
    fdtab::set(fd, fdtab::Info { cloexec: flags & CLOEXEC != 0, flags: 2, ..Default::default() });
    Ok(fd as i64)
}

pub fn socket(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (domain, ty, proto) = (a[0], a[1], a[2]);
    if domain != AF_INET {
        return Err(EAFNOSUPPORT);
    }
    if ty & !(SOCK_TYPE_MASK | NONBLOCK | CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    let kind = match (ty & SOCK_TYPE_MASK, proto) {
        (SOCK_STREAM, 0 | IPPROTO_TCP) => Kind::Tcp,
        (SOCK_DGRAM, 0 | IPPROTO_UDP) => Kind::Udp,
        _ => return Err(EPROTONOSUPPORT),
    };
    // No NIC, or no transmit template: the network is down.
    let s = Socket::new(kind).map_err(|e| if let IoError::Kernel(_) = e { ENETDOWN } else { from_io(e) })?;
    install(s, ty)
}

pub fn bind(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let addr = read_addr(a[1], a[2])?;
    with(a[0], |s| s.bind(addr).map(|()| 0).map_err(from_io))
}

pub fn listen(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let backlog = (a[1] as i32).clamp(1, 64) as usize;
    with(a[0], |s| s.listen(backlog).map(|()| 0).map_err(from_io))
}

fn accept_flags(a: &[u64; 6], flags: u64) -> Res {
    if flags & !(NONBLOCK | CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    let (new, peer) = with(a[0], |s| s.accept().map_err(from_io))?;
    if a[1] != 0 {
        uaccess::writable(a[2], 4)?;
    }
    write_addr(peer, a[1], a[2])?;
    install(new, flags)
}

pub fn accept(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    accept_flags(a, 0)
}

pub fn accept4(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    accept_flags(a, a[3])
}

pub fn connect(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let addr = read_addr(a[1], a[2])?;
    with(a[0], |s| match s.connect(addr) {
        Ok(()) => Ok(0),
        Err(IoError::WouldBlock) => Err(EINPROGRESS),
        Err(e) => Err(from_io(e)),
    })
}

/// Runs `f` with the socket non-blocking if `flags` has `MSG_DONTWAIT`.
fn with_flags<R>(s: &Socket, flags: u64, f: impl FnOnce() -> Result<R, IoError>) -> Result<R, i64> {
    if flags & !(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_WAITALL) != 0 {
        return Err(if flags & MSG_PEEK != 0 { EOPNOTSUPP } else { EINVAL });
    }
    let was = s.nonblocking();
    if flags & MSG_DONTWAIT != 0 {
        s.set_nonblocking(true);
    }
    let r = f();
    s.set_nonblocking(was);
    // Linux reports an expired SO_RCVTIMEO as EAGAIN too.
    r.map_err(|e| if matches!(e, IoError::WouldBlock | IoError::TimedOut) { EAGAIN } else { from_io(e) })
}

fn send_buf(fd: u64, data: &[u8], flags: u64, to: Option<SockAddr>) -> Res {
    with(fd, |s| {
        let to = if s.kind() == Kind::Tcp { None } else { to };
        // MSG_MORE corks this send (TCP only: UDP's corked datagrams are
        // not kept).
        let more = flags & MSG_MORE != 0;
        if more && s.kind() != Kind::Tcp {
            return Err(EOPNOTSUPP);
        }
        with_flags(s, flags & !MSG_MORE, || if more { s.send_more(data) } else { s.send_to(data, to) })
            .map(|n| n as i64)
    })
}

/// Receives into a buffer of `len` bytes (all of them for `MSG_WAITALL`
/// on a stream, unless the stream ends).
fn recv_buf(fd: u64, len: usize, flags: u64) -> Result<(Vec<u8>, SockAddr), i64> {
    let mut buf = vec![0u8; len.min(1 << 20)];
    with(fd, |s| {
        let (mut n, from) = with_flags(s, flags, || s.recv_from(&mut buf))?;
        while flags & MSG_WAITALL != 0 && s.kind() == Kind::Tcp && n > 0 && n < buf.len() {
            match with_flags(s, flags & !MSG_WAITALL, || s.recv(&mut buf[n..]))? {
                0 => break,
                m => n += m,
            }
        }
        buf.truncate(n);
        Ok((buf, from))
    })
}

pub fn sendto(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let data = uaccess::read_vec(a[1], (a[2] as usize).min(1 << 20))?;
    let to = if a[4] != 0 { Some(read_addr(a[4], a[5])?) } else { None };
    send_buf(a[0], &data, a[3], to)
}

pub fn recvfrom(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    uaccess::writable(a[1], a[2].min(1 << 20))?;
    let (data, from) = recv_buf(a[0], a[2] as usize, a[3])?;
    uaccess::write(a[1], &data)?;
    write_addr(from, a[4], a[5])?;
    Ok(data.len() as i64)
}

/// An iovec list: (base, length) pairs.
type IoVecs = Vec<(u64, u64)>;

/// A `struct msghdr`'s name, name length, and iovec list.
fn read_msghdr(addr: u64) -> Result<(u64, u64, IoVecs), i64> {
    let mut raw = [0u8; 56];
    uaccess::read(addr, &mut raw)?;
    let word = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().unwrap_or([0; 8]));
    let (name, namelen, iov, iovlen) = (word(0), word(8) & 0xffff_ffff, word(16), word(24));
    if iovlen > 64 {
        return Err(EINVAL);
    }
    let vecs = uaccess::read_vec(iov, iovlen as usize * 16)?;
    let list = vecs
        .chunks(16)
        .map(|c| {
            let b = u64::from_le_bytes(c[..8].try_into().unwrap_or([0; 8]));
            let l = u64::from_le_bytes(c[8..].try_into().unwrap_or([0; 8]));
            (b, l)
        })
        .collect();
    Ok((name, namelen, list))
}

pub fn sendmsg(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (name, namelen, iov) = read_msghdr(a[1])?;
    let mut data = Vec::new();
    for (base, len) in iov {
        if data.len() as u64 + len > 1 << 20 {
            return Err(EINVAL);
        }
        data.extend_from_slice(&uaccess::read_vec(base, len as usize)?);
    }
    let to = if name != 0 { Some(read_addr(name, namelen)?) } else { None };
    send_buf(a[0], &data, a[2], to)
}

pub fn recvmsg(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (name, _, iov) = read_msghdr(a[1])?;
    let total: u64 = iov.iter().map(|(_, l)| *l).sum();
    for &(base, len) in &iov {
        uaccess::writable(base, len)?;
    }
    let (data, from) = recv_buf(a[0], total as usize, a[2])?;
    let mut at = 0;
    for (base, len) in iov {
        let n = (len as usize).min(data.len() - at);
        uaccess::write(base, &data[at..at + n])?;
        at += n;
    }
    // msg_namelen (at 8) gets the address's length; msg_controllen (at 40)
    // and msg_flags (at 48) say nothing came besides the data.
    write_addr(from, name, a[1] + 8)?;
    uaccess::write(a[1] + 40, &0u64.to_le_bytes())?;
    uaccess::write(a[1] + 48, &0u32.to_le_bytes())?;
    Ok(data.len() as i64)
}

pub fn shutdown(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let how = match a[1] {
        0 => Shutdown::Read,
        1 => Shutdown::Write,
        2 => Shutdown::Both,
        _ => return Err(EINVAL),
    };
    with(a[0], |s| s.shutdown(how).map(|()| 0).map_err(from_io))
}

pub fn getsockname(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let addr = with(a[0], |s| s.local_addr().map_err(from_io))?;
    write_addr(addr, a[1], a[2]).map(|()| 0)
}

pub fn getpeername(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let addr = with(a[0], |s| s.peer_addr().map_err(from_io))?;
    write_addr(addr, a[1], a[2]).map(|()| 0)
}

fn read_int(addr: u64, len: u64) -> Result<i32, i64> {
    if len < 4 {
        return Err(EINVAL);
    }
    let mut b = [0u8; 4];
    uaccess::read(addr, &mut b)?;
    Ok(i32::from_le_bytes(b))
}

pub fn setsockopt(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (level, name, val, len) = (a[1], a[2], a[3], a[4]);
    with(a[0], |s| {
        match (level, name) {
            (SOL_SOCKET, SO_REUSEADDR | SO_REUSEPORT | SO_KEEPALIVE) => {
                read_int(val, len)?;
            }
            (SOL_SOCKET, SO_SNDBUF) => s.set_buffers(None, Some(read_int(val, len)?.max(0) as usize)),
            (SOL_SOCKET, SO_RCVBUF) => s.set_buffers(Some(read_int(val, len)?.max(0) as usize), None),
            (SOL_SOCKET, SO_RCVTIMEO) => {
                if len < 16 {
                    return Err(EINVAL);
                }
                let mut tv = [0u8; 16];
                uaccess::read(val, &mut tv)?;
                let sec = i64::from_le_bytes(tv[..8].try_into().map_err(|_| EFAULT)?);
                let usec = i64::from_le_bytes(tv[8..].try_into().map_err(|_| EFAULT)?);
                if sec < 0 || !(0..1_000_000).contains(&usec) {
                    return Err(EINVAL);
                }
                s.set_recv_timeout((sec as u64).saturating_mul(1000) + (usec as u64).div_ceil(1000));
            }
            (IPPROTO_TCP, TCP_NODELAY) if s.kind() == Kind::Tcp => s.set_nodelay(read_int(val, len)? != 0),
            (IPPROTO_TCP, TCP_CORK) if s.kind() == Kind::Tcp => s.set_cork(read_int(val, len)? != 0),
            _ => return Err(ENOPROTOOPT),
        }
        Ok(0)
    })
}

pub fn getsockopt(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (level, name, val, lenp) = (a[1], a[2], a[3], a[4]);
    let value: i32 = with(a[0], |s| {
        let (rx, tx) = s.buffers();
        Ok(match (level, name) {
            (SOL_SOCKET, SO_TYPE) => {
                if s.kind() == Kind::Tcp {
                    SOCK_STREAM as i32
                } else {
                    SOCK_DGRAM as i32
                }
            }
            (SOL_SOCKET, SO_ERROR) => 0,
            (SOL_SOCKET, SO_REUSEADDR | SO_REUSEPORT | SO_KEEPALIVE) => 0,
            (SOL_SOCKET, SO_SNDBUF) => tx as i32,
            (SOL_SOCKET, SO_RCVBUF) => rx as i32,
            (IPPROTO_TCP, TCP_NODELAY) if s.kind() == Kind::Tcp => i32::from(s.nodelay()),
            (IPPROTO_TCP, TCP_CORK) if s.kind() == Kind::Tcp => i32::from(s.cork()),
            _ => return Err(ENOPROTOOPT),
        })
    })?;
    let mut l = [0u8; 4];
    uaccess::read(lenp, &mut l)?;
    let room = (u32::from_le_bytes(l) as usize).min(4);
    uaccess::write(val, &value.to_le_bytes()[..room])?;
    uaccess::write(lenp, &(room as u32).to_le_bytes())?;
    Ok(0)
}
