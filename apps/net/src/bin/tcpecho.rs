//! tcpecho [PORT]: a TCP echo server on smoltcp in the libOS, over a packet
//! ring (filters: TCP to PORT, default 7, and ARP unless an `arpd` shares
//! the machine's neighbour table) and checked transmit
//! (template: the NIC's MAC, 10.0.2.15, source port PORT). The guest is
//! 10.0.2.15 on QEMU's user network, the gateway 10.0.2.2.
//!
//! Serves one connection at a time, echoing every byte. A connection whose
//! whole content is `quit` ends the server (after lingering
//! [`LINGER_MS`] so the last segments go out), which prints the
//! connections served and bytes echoed.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec;
use oxok_libos::abi::net::TxTemplate;
use oxok_libos::net::stack::{self, RingDevice, ms_to_ticks, now};
use oxok_libos::net::{self, Filter, Ring, filters, neigh};
use oxok_libos::time::ticks;
use oxok_libos::{Args, println};
use smoltcp::iface::SocketSet;
use smoltcp::socket::tcp;

oxok_libos::main!(main);

/// Milliseconds to keep serving after the `quit`.
const LINGER_MS: u64 = 500;
/// The longest sleep between polls, in milliseconds.
const MAX_SLEEP_MS: u64 = 100;

fn main(args: Args) -> i32 {
    let port = args.get(1).and_then(|p| p.parse::<u16>().ok()).unwrap_or(7);
    match serve(port) {
        Ok(s) => {
            println!(
                "tcpecho: {} connections, {} bytes echoed, quit (ring: {} packets, {} dropped; {} sends refused)",
                s.conns, s.bytes, s.packets, s.dropped, s.refused
            );
            0
        }
        Err(why) => {
            println!("tcpecho: {why}");
            1
        }
    }
}

/// What a server's life came to.
struct Served {
    conns: u64,
    bytes: u64,
    /// Packets the kernel put in the ring, and dropped with the ring full.
    packets: u64,
    dropped: u64,
    /// Sends the kernel refused or could not queue.
    refused: u64,
}

/// Data frames of the ring (`ENTRIES_PER_FRAME` packets each).
const RING_FRAMES: usize = 31;

fn serve(port: u16) -> Result<Served, &'static str> {
    let mac = net::mac().map_err(|_| "no NIC")?;
    let template = TxTemplate { mac, pad: [0; 2], ip: [10, 0, 2, 15], port_lo: port, port_hi: port };
    net::set_template(0, &template).map_err(|_| "template refused")?;
    let ring = Ring::new(RING_FRAMES).map_err(|_| "cannot bind a ring")?;
    // ARP from the machine's neighbour table if an `arpd` serves one;
    // otherwise this program must own ARP.
    let arp = neigh::arp(&ring, mac, [10, 0, 2, 15]);
    if arp.is_none() {
        return Err("ARP filter refused");
    }
    let _tcp = Filter::install(&ring, &filters::tcp_listen(port), None).map_err(|_| "TCP filter refused")?;
    let mut dev = RingDevice::new(ring).map_err(|_| "no transmit frame")?;
    let neigh::Arp { filter: _arp, resolver } = arp;
    dev.resolver = resolver;
    let mut iface = stack::interface(&mut dev, mac, [10, 0, 2, 15], 24, [10, 0, 2, 2]);
    let mut sockets = SocketSet::new(vec![]);
    let mut socket = tcp::Socket::new(tcp::SocketBuffer::new(vec![0; 65535]), tcp::SocketBuffer::new(vec![0; 65535]));
    socket.set_nagle_enabled(false);
    let h = sockets.add(socket);
    println!("tcpecho: listening on 10.0.2.15:{port}");
    if dev.resolver.is_some() {
        println!("tcpecho: ARP through arpd's neighbour table");
    }

    let (mut conns, mut bytes, mut this_conn) = (0u64, 0u64, 0u64);
    let mut first = [0u8; 4];
    let mut active = false;
    let mut until = 0;
    let mut tmp = [0u8; 16384];
    loop {
        let seen = dev.ring.produced();
        iface.poll(now(), &mut dev, &mut sockets);
        let s = sockets.get_mut::<tcp::Socket>(h);
        if s.is_active() != active {
            active = s.is_active();
            if active {
                conns += 1;
                this_conn = 0;
            } else if this_conn == 4 && &first == b"quit" && until == 0 {
                until = ticks() + ms_to_ticks(LINGER_MS);
            }
        }
        if !s.is_open() && until == 0 {
            s.listen(port).map_err(|_| "listen failed")?;
        }
        if s.can_recv() && s.can_send() {
            let room = (s.send_capacity() - s.send_queue()).min(tmp.len());
            if let Ok(n) = s.recv_slice(&mut tmp[..room]) {
                // The connection's first bytes, to see whether it said `quit`.
                let at = (this_conn as usize).min(first.len());
                let k = (first.len() - at).min(n);
                first[at..at + k].copy_from_slice(&tmp[..k]);
                this_conn += n as u64;
                bytes += n as u64;
                let _ = s.send_slice(&tmp[..n]);
            }
        } else if !s.may_recv() && s.state() == tcp::State::CloseWait {
            s.close();
        }
        iface.poll(now(), &mut dev, &mut sockets);
        if until != 0 && ticks() >= until {
            if let Some(r) = &dev.resolver {
                println!("tcpecho: {} ARP requests answered from the neighbour table", r.answered);
            }
            let (packets, dropped, refused) = (dev.ring.produced(), dev.ring.dropped(), dev.tx_errors);
            return Ok(Served { conns, bytes, packets, dropped, refused });
        }
        let delay = iface.poll_delay(now(), &sockets).map_or(MAX_SLEEP_MS, |d| d.total_millis().min(MAX_SLEEP_MS));
        let delay = dev.sleep_ms(delay);
        if delay > 0 {
            let mut wake = ticks() + ms_to_ticks(delay);
            if until != 0 {
                wake = wake.min(until);
            }
            dev.ring.wait(seen, wake).map_err(|_| "wait failed")?;
        }
    }
}
