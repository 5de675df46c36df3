//! udpecho [PORT]: a UDP echo server over a raw packet ring, with its own
//! Ethernet, ARP, IPv4 and UDP handling (the kernel does no protocol
//! processing). The guest is 10.0.2.15 on QEMU's user network.
//!
//! 1. Sets its own transmit template (a boot program may): its NIC's MAC,
//!    10.0.2.15, source port PORT only (default 7).
//! 2. Binds a ring in frames of its own and installs two filters on it:
//!    ARP, and UDP to PORT.
//! 3. Sleeps on a wakeup predicate over the ring's `produced` counter (a
//!    parameter, no reinstall), answers ARP requests for its address, and
//!    sends every datagram back to its sender with the addresses swapped.
//! 4. After echoing a datagram that says `quit` it lingers for
//!    [`LINGER_MS`] (echoing what still comes, such as a resent `quit`
//!    whose echo was lost), then ends, printing the count.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::net::TxTemplate;
use oxok_libos::net::ether::{self, Udp};
use oxok_libos::net::{self, Filter, Ring, Tx, filters};
use oxok_libos::time::ticks;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

/// How long to keep serving after `quit`, in milliseconds.
const LINGER_MS: u64 = 300;

/// The guest's address on QEMU's user network.
const IP: [u8; 4] = [10, 0, 2, 15];

fn main(args: Args) -> i32 {
    let port = args.get(1).and_then(|p| p.parse::<u16>().ok()).unwrap_or(7);
    match serve(port) {
        Ok(n) => {
            println!("udpecho: {n} datagrams echoed, quit");
            if let Some(h) = oxok_libos::exposed::net_header() {
                println!("udpecho: the NIC received {}, {} claimed by no filter", h.received, h.unclaimed);
            }
            0
        }
        Err(why) => {
            println!("udpecho: {why}");
            1
        }
    }
}

fn serve(port: u16) -> Result<u64, &'static str> {
    let mac = net::mac().map_err(|_| "no NIC")?;
    let template = TxTemplate { mac, pad: [0; 2], ip: IP, port_lo: port, port_hi: port };
    net::set_template(0, &template).map_err(|_| "template refused")?;
    let mut ring = Ring::new(4).map_err(|_| "cannot bind a ring")?;
    // One program on the machine answers ARP (a second ARP filter would
    // overlap); replies go to the sender's MAC, so this one needs no ARP.
    let arp = Filter::install(&ring, &filters::arp(), None);
    if arp.is_err() {
        println!("udpecho: another program answers ARP");
    }
    let _udp = Filter::install(&ring, &filters::udp(port), None).map_err(|_| "UDP filter refused")?;
    let tx = Tx::new().map_err(|_| "no transmit frame")?;
    println!(
        "udpecho: listening on 10.0.2.15:{port}, mac {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]
    );
    let mut packet = [0u8; 2048];
    let mut reply = [0u8; 2048];
    let (mut echoed, mut arps) = (0u64, 0u64);
    let mut until = 0;
    loop {
        let seen = ring.produced();
        while let Some(len) = ring.recv(&mut packet) {
            let p = &packet[..len.min(packet.len())];
            if let Some(n) = ether::arp_reply(p, mac, IP, &mut reply) {
                arps += 1;
                if arps == 1 {
                    println!("udpecho: answering ARP");
                }
                tx.send(&reply[..n]).map_err(|_| "ARP reply refused")?;
                continue;
            }
            let Some(d) = ether::parse_udp(p) else { continue };
            if d.dst_ip != IP || d.dst_port != port {
                continue;
            }
            let back = Udp { src_ip: IP, dst_ip: d.src_ip, src_port: port, dst_port: d.src_port, ..d };
            let Some(n) = ether::build_udp(&mut reply, mac, d.src_mac, &back) else { continue };
            tx.send_retrying(&reply[..n], 1000).map_err(|e| match e {
                oxok_libos::abi::Error::WouldBlock => "transmit stuck",
                _ => "echo refused",
            })?;
            echoed += 1;
            if d.payload == b"quit" && until == 0 {
                until = ticks() + oxok_libos::time::ms_to_ticks(LINGER_MS);
            }
        }
        if until != 0 && ticks() >= until {
            return Ok(echoed);
        }
        ring.wait(seen, until).map_err(|_| "wait failed")?;
    }
}
