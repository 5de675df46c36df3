//! ping [A.B.C.D [COUNT]]: ICMP echo requests from 10.0.2.15 (smoltcp's
//! ICMP socket over a packet ring; filters: ARP (unless an `arpd` shares
//! the neighbour table), and ICMP echo replies to
//! 10.0.2.15 — `oxok_dpf::build::icmp` — so an answerer can hold the echo
//! requests beside it), one a
//! second (default: the gateway 10.0.2.2, 4 times). Prints one line per
//! reply and a summary; exits 0 if any reply came.
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
use smoltcp::phy::{ChecksumCapabilities, Device};
use smoltcp::socket::icmp;
use smoltcp::wire::{Icmpv4Packet, Icmpv4Repr, IpAddress};

oxok_libos::main!(main);

const IDENT: u16 = 0x0a5e;
/// This machine's address.
const IP: [u8; 4] = [10, 0, 2, 15];
/// Milliseconds between requests, and to wait for the last reply.
const INTERVAL_MS: u64 = 1000;

fn parse_ip(s: &str) -> Option<[u8; 4]> {
    let mut ip = [0u8; 4];
    let mut parts = s.split('.');
    for b in ip.iter_mut() {
        *b = parts.next()?.parse().ok()?;
    }
    parts.next().is_none().then_some(ip)
}

fn main(args: Args) -> i32 {
    let target = args.get(1).and_then(parse_ip).unwrap_or([10, 0, 2, 2]);
    let count: u16 = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(4).clamp(1, 100);
    match ping(target, count) {
        Ok(received) => {
            let [a, b, c, d] = target;
            println!("ping: {a}.{b}.{c}.{d}: {count} sent, {received} received");
            if received > 0 { 0 } else { 1 }
        }
        Err(why) => {
            println!("ping: {why}");
            1
        }
    }
}

fn ping(target: [u8; 4], count: u16) -> Result<u16, &'static str> {
    let mac = net::mac().map_err(|_| "no NIC")?;
    // Keep what the parent allows (ICMP carries no ports); a boot program
    // sets its own.
    if net::template(0).is_err() {
        let t = TxTemplate { mac, pad: [0; 2], ip: IP, port_lo: 0, port_hi: 0 };
        net::set_template(0, &t).map_err(|_| "template refused")?;
    }
    let ring = Ring::new(2).map_err(|_| "cannot bind a ring")?;
    // ARP from the neighbour table if an `arpd` shares one, else its filter.
    let arp = neigh::arp(&ring, mac, IP);
    if arp.is_none() {
        return Err("ARP belongs to another program");
    }
    // Echo replies to this address only: echo requests stay free for an
    // answerer (`icmpd`) beside it.
    let replies = filters::icmp(filters::ICMP_ECHO_REPLY, u32::from_be_bytes(IP));
    let _icmp = Filter::install(&ring, &replies, None).map_err(|_| "echo replies belong to another program")?;
    let mut dev = RingDevice::new(ring).map_err(|_| "no transmit frame")?;
    let neigh::Arp { filter: _arp, resolver } = arp;
    dev.resolver = resolver;
    let checksum: ChecksumCapabilities = dev.capabilities().checksum;
    let mut iface = stack::interface(&mut dev, mac, IP, 24, [10, 0, 2, 2]);
    let mut sockets = SocketSet::new(vec![]);
    let buffer = || icmp::PacketBuffer::new(vec![icmp::PacketMetadata::EMPTY; 4], vec![0; 1024]);
    let h = sockets.add(icmp::Socket::new(buffer(), buffer()));
    sockets.get_mut::<icmp::Socket>(h).bind(icmp::Endpoint::Ident(IDENT)).map_err(|_| "bind")?;
    let remote = IpAddress::v4(target[0], target[1], target[2], target[3]);
    let step = ms_to_ticks(INTERVAL_MS);
    let (mut seq, mut received) = (0u16, 0u16);
    let mut sent_at = [0u64; 100];
    let mut next_send = ticks();
    loop {
        let seen = dev.ring.produced();
        iface.poll(now(), &mut dev, &mut sockets);
        let s = sockets.get_mut::<icmp::Socket>(h);
        if seq < count && ticks() >= next_send && s.can_send() {
            let data = [0x6fu8; 32];
            let repr = Icmpv4Repr::EchoRequest { ident: IDENT, seq_no: seq, data: &data };
            if let Ok(buf) = s.send(repr.buffer_len(), remote) {
                repr.emit(&mut Icmpv4Packet::new_unchecked(buf), &checksum);
                sent_at[usize::from(seq)] = ticks();
                seq += 1;
                next_send = ticks() + step;
            }
        }
        while s.can_recv() {
            let Ok((payload, _)) = s.recv() else { break };
            let Ok(packet) = Icmpv4Packet::new_checked(payload) else { continue };
            if let Ok(Icmpv4Repr::EchoReply { ident: IDENT, seq_no, data }) = Icmpv4Repr::parse(&packet, &checksum)
                && seq_no < seq
            {
                let ms = (ticks() - sent_at[usize::from(seq_no)]) * 1000 / ms_to_ticks(1000);
                println!("ping: {} bytes from {remote}: icmp_seq={seq_no} time={ms} ms", data.len());
                received += 1;
            }
        }
        iface.poll(now(), &mut dev, &mut sockets);
        if seq == count && (received == count || ticks() >= next_send) {
            return Ok(received);
        }
        let wake = ticks() + ms_to_ticks(dev.sleep_ms(INTERVAL_MS));
        dev.ring.wait(seen, next_send.min(wake).max(ticks() + 1)).map_err(|_| "wait failed")?;
    }
}
