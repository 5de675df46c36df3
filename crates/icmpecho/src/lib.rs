//! Answering ICMP echo (`ping`) without a network stack: [`answer`] checks
//! one received Ethernet frame — an unfragmented IPv4 packet with a good
//! header checksum, an ICMP echo request with a good checksum, addressed to
//! this machine from a unicast sender — and writes its reply: the same
//! identifier, sequence number and data, addresses swapped, no IP options,
//! fresh checksums. Anything else is refused with the reason
//! ([`Refusal`]), so the answerer (`icmpd`) can count what it did not
//! answer. Parsing and emitting are smoltcp's `wire` types, the ones the
//! libOS's stack uses. No allocation, no panic on any input.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, Icmpv4Packet, Icmpv4Repr, IpProtocol, Ipv4Address,
    Ipv4Packet, Ipv4Repr,
};

/// Hop limit of a reply.
pub const REPLY_TTL: u8 = 64;

/// Why a frame got no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Shorter than its Ethernet header, or not IPv4.
    NotIpv4,
    /// The IPv4 header is malformed (version, header length, total length
    /// beyond the frame) or its checksum is wrong.
    BadIp,
    /// A fragment: answered only whole (no reassembly here).
    Fragment,
    /// Not addressed to this machine.
    NotForUs,
    /// From a broadcast, multicast or unspecified address (Ethernet or
    /// IPv4): a reply would go to many, or nowhere.
    BadSender,
    /// Not ICMP, or ICMP too short or with a wrong checksum.
    BadIcmp,
    /// ICMP, but not an echo request (type 8, code 0).
    NotEchoRequest,
    /// The reply does not fit the output buffer.
    TooLarge,
}

/// If `frame` is an echo request to `ip` (this machine, at `mac`), writes
/// the echo reply from `mac`/`ip` back to its sender into `out` and returns
/// the reply's length.
pub fn answer(frame: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Result<usize, Refusal> {
    let eth = EthernetFrame::new_checked(frame).map_err(|_| Refusal::NotIpv4)?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Err(Refusal::NotIpv4);
    }
    let caps = ChecksumCapabilities::default();
    let packet = Ipv4Packet::new_checked(eth.payload()).map_err(|_| Refusal::BadIp)?;
    if packet.version() != 4 || !packet.verify_checksum() {
        return Err(Refusal::BadIp);
    }
    if packet.more_frags() || packet.frag_offset() != 0 {
        return Err(Refusal::Fragment);
    }
    let request = Ipv4Repr::parse(&packet, &caps).map_err(|_| Refusal::BadIp)?;
    let me = Ipv4Address::from(ip);
    if request.dst_addr != me {
        return Err(Refusal::NotForUs);
    }
    let sender = eth.src_addr();
    let from = request.src_addr;
    if !sender.is_unicast() || from.is_unspecified() || from.is_broadcast() || from.is_multicast() || from == me {
        return Err(Refusal::BadSender);
    }
    if request.next_header != IpProtocol::Icmp {
        return Err(Refusal::BadIcmp);
    }
    let icmp = Icmpv4Packet::new_checked(packet.payload()).map_err(|_| Refusal::BadIcmp)?;
    if !icmp.verify_checksum() {
        return Err(Refusal::BadIcmp);
    }
    let (ident, seq_no, data) = match Icmpv4Repr::parse(&icmp, &caps) {
        Ok(Icmpv4Repr::EchoRequest { ident, seq_no, data }) => (ident, seq_no, data),
        Ok(_) | Err(_) => return Err(Refusal::NotEchoRequest),
    };
    let reply = Icmpv4Repr::EchoReply { ident, seq_no, data };
    let ip_reply = Ipv4Repr {
        src_addr: me,
        dst_addr: from,
        next_header: IpProtocol::Icmp,
        payload_len: reply.buffer_len(),
        hop_limit: REPLY_TTL,
    };
    let eth_reply =
        EthernetRepr { src_addr: EthernetAddress(mac), dst_addr: sender, ethertype: EthernetProtocol::Ipv4 };
    let len = eth_reply.buffer_len() + ip_reply.buffer_len() + reply.buffer_len();
    let out = out.get_mut(..len).ok_or(Refusal::TooLarge)?;
    let mut eth_out = EthernetFrame::new_unchecked(out);
    eth_reply.emit(&mut eth_out);
    let mut ip_out = Ipv4Packet::new_unchecked(eth_out.payload_mut());
    ip_reply.emit(&mut ip_out, &caps);
    reply.emit(&mut Icmpv4Packet::new_unchecked(ip_out.payload_mut()), &caps);
    Ok(len)
}

#[cfg(test)]
mod tests;
