//! smoltcp over a packet ring: the [`Device`] that receives from a [`Ring`]
//! and sends through a [`Tx`] frame (every packet still goes through the
//! kernel's template check), and the clock smoltcp runs on. TCP, UDP, ARP
//! and ICMP are all smoltcp's, in this process; a device without the ARP
//! filter takes ARP's answers from the machine's neighbour table
//! ([`super::neigh`]).

use super::neigh::{Outgoing, Resolver};
use super::{Ring, Tx};
use oxok_abi::Error;
use oxok_abi::net::PACKET_MAX;
use smoltcp::iface::{Config, Interface};
use smoltcp::phy::{self, Checksum, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, IpAddress, IpCidr, Ipv4Address};

/// A ring and a transmit frame as a smoltcp device.
pub struct RingDevice {
    /// Where the kernel puts this process's packets.
    pub ring: Ring,
    tx: Tx,
    rx: [u8; PACKET_MAX],
    /// Where smoltcp writes each packet it sends (kept, not cleared per
    /// packet: smoltcp writes every byte of what it emits, as it must for
    /// a driver's reused buffers).
    txbuf: [u8; PACKET_MAX],
    /// Packets the kernel refused to send (template) or could not queue.
    pub tx_errors: u64,
    /// TCP segments dropped on arrival for a bad checksum.
    pub rx_bad_checksums: u64,
    /// ARP through the neighbour table (when another program owns ARP).
    pub resolver: Option<Resolver>,
}

impl RingDevice {
    /// A device over `ring`, sending from a fresh frame.
    pub fn new(ring: Ring) -> Result<RingDevice, Error> {
        Ok(RingDevice {
            ring,
            tx: Tx::new()?,
            rx: [0; PACKET_MAX],
            txbuf: [0; PACKET_MAX],
            tx_errors: 0,
            rx_bad_checksums: 0,
            resolver: None,
        })
    }

    /// How long the stack may sleep before it polls again: `ms`, or less
    /// while the neighbour table has or may soon have an answer for it
    /// ([`Resolver::sleep_ms`]).
    pub fn sleep_ms(&self, ms: u64) -> u64 {
        self.resolver.as_ref().map_or(ms, |r| r.sleep_ms(ms))
    }
}

/// The current time for smoltcp, from the exposed clock's ticks.
pub fn now() -> Instant {
    Instant::from_millis(crate::time::ticks_ms() as i64)
}

pub use crate::time::ms_to_ticks;

/// One received packet.
pub struct Rx<'a>(&'a [u8]);

/// Permission to send one packet.
pub struct Send<'a> {
    tx: &'a Tx,
    buf: &'a mut [u8; PACKET_MAX],
    ring: &'a Ring,
    errors: &'a mut u64,
    resolver: Option<&'a mut Resolver>,
}

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.0)
    }
}

impl phy::TxToken for Send<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(mut self, len: usize, f: F) -> R {
        let buf = self.buf;
        let len = len.min(PACKET_MAX);
        let r = f(&mut buf[..len]);
        let arp = self.resolver.as_deref_mut().map_or(Outgoing::Send, |res| res.outgoing(&buf[..len]));
        if arp == Outgoing::Answered {
            return r; // answered from the neighbour table
        }
        oxok_inetsum::frame::fill_tcp_checksum(&mut buf[..len]);
        // Every transmit buffer may be with the device: retried a bounded
        // number of times, then waited for on the ring.
        if self.tx.send_waiting(&buf[..len], 100, self.ring).is_err() {
            *self.errors += 1;
        }
        if let (Outgoing::Ask(ip), Some(res)) = (arp, self.resolver) {
            res.asked(ip);
        }
        r
    }
}

impl Device for RingDevice {
    type RxToken<'a> = Rx<'a>;
    type TxToken<'a> = Send<'a>;

    fn receive(&mut self, _timestamp: Instant) -> Option<(Rx<'_>, Send<'_>)> {
        let RingDevice { ring, tx, rx, txbuf, tx_errors, rx_bad_checksums, resolver } = self;
        // An answer from the neighbour table first; then the ring, where a
        // segment whose checksum fails is dropped, as smoltcp would.
        let n = match resolver.as_mut().and_then(|r| r.incoming(rx)) {
            Some(n) => n,
            None => loop {
                let n = ring.recv(rx)?.min(rx.len());
                if oxok_inetsum::frame::tcp_checksum_ok(&rx[..n]) {
                    break n;
                }
                *rx_bad_checksums += 1;
            },
        };
        Some((Rx(&rx[..n]), Send { tx, buf: txbuf, ring, errors: tx_errors, resolver: resolver.as_mut() }))
    }

    fn transmit(&mut self, _timestamp: Instant) -> Option<Send<'_>> {
        Some(Send {
            tx: &self.tx,
            buf: &mut self.txbuf,
            ring: &self.ring,
            errors: &mut self.tx_errors,
            resolver: self.resolver.as_mut(),
        })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = PACKET_MAX;
        // What may arrive at once is what the ring holds: smoltcp caps every
        // TCP window it advertises at this many segments. (One, as before,
        // made every connection stop and wait: one segment a round trip.)
        caps.max_burst_size = Some(self.ring.entries.max(1));
        // TCP's checksums are this device's (eight bytes a step,
        // `oxok-inetsum`) rather than smoltcp's (two): it checks every
        // received segment and fills in every sent one.
        caps.checksum.tcp = Checksum::None;
        caps
    }
}

/// A smoltcp interface on `dev` with Ethernet address `mac`, IPv4 address
/// `ip`/`prefix` and default gateway `gateway`.
pub fn interface(dev: &mut RingDevice, mac: [u8; 6], ip: [u8; 4], prefix: u8, gateway: [u8; 4]) -> Interface {
    let mut config = Config::new(EthernetAddress(mac).into());
    config.random_seed = crate::time::rdtsc();
    let mut iface = Interface::new(config, dev, now());
    iface.update_ip_addrs(|a| {
        let _ = a.push(IpCidr::new(IpAddress::v4(ip[0], ip[1], ip[2], ip[3]), prefix));
    });
    let gw = Ipv4Address::new(gateway[0], gateway[1], gateway[2], gateway[3]);
    let _ = iface.routes_mut().add_default_ipv4_route(gw);
    iface
}
