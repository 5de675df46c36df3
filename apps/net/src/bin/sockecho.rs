//! sockecho [PORT]: a TCP and UDP echo server on the libOS's
//! sockets API (not on smoltcp directly, as `tcpecho` is): one listening
//! TCP socket and one UDP socket on PORT (default 7), every socket
//! non-blocking, one `socket::poll` over all of them. Each TCP connection
//! is echoed until the peer closes; each datagram is sent back to its
//! sender — except `connect PORT`, which makes it connect to the gateway
//! (the host, through QEMU) at PORT, send [`GREETING`], read what comes
//! back until the host closes, and answer the datagram with `connected N`
//! (N: the bytes it read). Once a TCP connection whose whole content is `quit` has closed
//! and a datagram `quit` has come, the server lingers a little (resent
//! `quit`s are still echoed) and ends, printing what it echoed.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::sync::Arc;
use alloc::vec::Vec;
use oxok_libos::fd::IoError;
use oxok_libos::net::socket::{self, Kind, Ready, SockAddr, Socket};
use oxok_libos::time::ticks;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

/// What sockecho sends on a connection it makes.
const GREETING: &[u8] = b"hello from sockecho\n";
/// The host, as QEMU's user network shows it.
const GATEWAY: [u8; 4] = [10, 0, 2, 2];

/// Milliseconds to keep serving after the last quit.
const LINGER_MS: u64 = 1500;

struct Conn {
    sock: Arc<Socket>,
    /// Received but not yet echoed.
    out: Vec<u8>,
    /// The first bytes (to spot `quit`) and the total.
    first: Vec<u8>,
    total: u64,
    eof: bool,
}

fn main(args: Args) -> i32 {
    let port = args.get(1).and_then(|p| p.parse::<u16>().ok()).unwrap_or(7);
    match serve(port) {
        Ok((conns, bytes, dgrams)) => {
            println!("sockecho: {conns} connections, {bytes} bytes echoed, {dgrams} datagrams echoed, quit");
            0
        }
        Err((what, e)) => {
            println!("sockecho: {what}: {e}");
            1
        }
    }
}

fn serve(port: u16) -> Result<(u64, u64, u64), (&'static str, IoError)> {
    let listener = Socket::new(Kind::Tcp).map_err(|e| ("socket", e))?;
    listener.bind(SockAddr::new([0; 4], port)).map_err(|e| ("bind", e))?;
    listener.listen(8).map_err(|e| ("listen", e))?;
    listener.set_nonblocking(true);
    let udp = Socket::new(Kind::Udp).map_err(|e| ("socket", e))?;
    udp.bind(SockAddr::new([0; 4], port)).map_err(|e| ("udp bind", e))?;
    udp.set_nonblocking(true);
    println!("sockecho: listening on {} (tcp, udp)", listener.local_addr().map_err(|e| ("address", e))?);
    let (mut conns, mut bytes, mut dgrams) = (0u64, 0u64, 0u64);
    let (mut udp_quit, mut tcp_quit) = (false, false);
    let (mut done_back, mut back_bytes) = (None, 0usize);
    let mut until = 0u64;
    let mut open: Vec<Conn> = Vec::new();
    let mut buf = [0u8; 2048];
    while until == 0 || ticks() < until {
        let mut set: Vec<(&Socket, Ready)> = Vec::new();
        set.push((&listener, Ready { read: true, ..Ready::default() }));
        set.push((&udp, Ready { read: true, ..Ready::default() }));
        for c in &open {
            set.push((&c.sock, Ready { read: !c.eof && c.out.is_empty(), write: !c.out.is_empty(), hangup: false }));
        }
        let ready = socket::poll(&set, Some(200)).map_err(|e| ("poll", e))?;
        drop(set);
        if ready[0].read {
            loop {
                match listener.accept() {
                    Ok((sock, _peer)) => {
                        sock.set_nonblocking(true);
                        conns += 1;
                        open.push(Conn { sock, out: Vec::new(), first: Vec::new(), total: 0, eof: false });
                    }
                    Err(IoError::WouldBlock) => break,
                    Err(e) => return Err(("accept", e)),
                }
            }
        }
        if ready[1].read {
            loop {
                match udp.recv_from(&mut buf) {
                    Ok((n, from)) if buf[..n].starts_with(b"connect ") => {
                        let port = core::str::from_utf8(&buf[8..n]).ok().and_then(|p| p.trim().parse::<u16>().ok());
                        let answer = match port {
                            Some(p) if done_back != Some(p) => match connect_back(p) {
                                Ok(got) => {
                                    println!("sockecho: connected to {}, {got} bytes back", SockAddr::new(GATEWAY, p));
                                    done_back = Some(p);
                                    back_bytes = got;
                                    alloc::format!("connected {got}")
                                }
                                Err(e) => alloc::format!("connect failed: {e}"),
                            },
                            Some(_) => alloc::format!("connected {back_bytes}"),
                            None => alloc::string::String::from("connect: bad port"),
                        };
                        udp.send_to(answer.as_bytes(), Some(from)).map_err(|e| ("send_to", e))?;
                    }
                    Ok((n, from)) => {
                        udp.send_to(&buf[..n], Some(from)).map_err(|e| ("send_to", e))?;
                        dgrams += 1;
                        udp_quit |= &buf[..n] == b"quit";
                    }
                    Err(IoError::WouldBlock) => break,
                    Err(e) => return Err(("recv_from", e)),
                }
            }
        }
        for (c, r) in open.iter_mut().zip(ready.iter().skip(2)) {
            if r.write && !c.out.is_empty() {
                match c.sock.send(&c.out) {
                    Ok(n) => {
                        c.out.drain(..n);
                        bytes += n as u64;
                    }
                    Err(IoError::WouldBlock) => {}
                    Err(_) => c.eof = true,
                }
            } else if r.read || r.hangup {
                match c.sock.recv(&mut buf) {
                    Ok(0) => c.eof = true,
                    Ok(n) => {
                        if c.first.len() < 8 {
                            c.first.extend_from_slice(&buf[..n.min(8)]);
                        }
                        c.total += n as u64;
                        c.out.extend_from_slice(&buf[..n]);
                    }
                    Err(IoError::WouldBlock) => {}
                    Err(_) => c.eof = true,
                }
            }
        }
        open.retain(|c| {
            let done = c.eof && c.out.is_empty();
            tcp_quit |= done && c.total == 4 && c.first == b"quit";
            !done
        });
        if udp_quit && tcp_quit && until == 0 {
            until = ticks() + oxok_libos::time::ms_to_ticks(LINGER_MS);
        }
    }
    drop(open);
    socket::drain(2000);
    Ok((conns, bytes, dgrams))
}

/// Connects to the host at `port` (a blocking socket), sends the greeting,
/// shuts its side and reads until the host closes; returns the bytes read.
fn connect_back(port: u16) -> Result<usize, IoError> {
    let s = Socket::new(Kind::Tcp)?;
    s.connect(SockAddr::new(GATEWAY, port))?;
    let mut rest = GREETING;
    while !rest.is_empty() {
        let n = s.send(rest)?;
        rest = &rest[n..];
    }
    s.shutdown(oxok_libos::net::socket::Shutdown::Write)?;
    s.set_recv_timeout(10_000);
    let mut got = 0;
    let mut buf = [0u8; 512];
    loop {
        match s.recv(&mut buf)? {
            0 => return Ok(got),
            n => got += n,
        }
    }
}
