//! Just enough Ethernet, ARP, IPv4 and UDP to answer ARP and exchange UDP
//! datagrams over raw packets (the kernel does no protocol processing).

use oxok_abi::net::{ETHERTYPE_ARP, ETHERTYPE_IPV4, IP_UDP};

/// Length of an Ethernet header.
pub const ETH_HDR: usize = 14;
/// Length of an IPv4 header without options.
pub const IP_HDR: usize = 20;
/// Length of a UDP header.
pub const UDP_HDR: usize = 8;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The Internet checksum of `data` folded into `sum`.
pub fn checksum(mut sum: u32, data: &[u8]) -> u16 {
    for c in data.chunks(2) {
        let w = if c.len() == 2 { u16::from_be_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], 0]) };
        sum += u32::from(w);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// If `p` is an ARP request for `ip`, writes the reply from `mac` into
/// `out` and returns its length.
pub fn arp_reply(p: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Option<usize> {
    if p.len() < ETH_HDR + 28 || out.len() < ETH_HDR + 28 || be16(p, 12) != ETHERTYPE_ARP {
        return None;
    }
    let a = &p[ETH_HDR..];
    // Ethernet/IPv4, request, for us.
    if be16(a, 0) != 1 || be16(a, 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4 || be16(a, 6) != 1 || a[24..28] != ip {
        return None;
    }
    let (sha, spa) = (&a[8..14], &a[14..18]);
    out[0..6].copy_from_slice(sha);
    out[6..12].copy_from_slice(&mac);
    out[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    let r = &mut out[ETH_HDR..ETH_HDR + 28];
    r[0..8].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    r[8..14].copy_from_slice(&mac);
    r[14..18].copy_from_slice(&ip);
    r[18..24].copy_from_slice(sha);
    r[24..28].copy_from_slice(spa);
    Some(ETH_HDR + 28)
}

/// A UDP datagram inside an Ethernet frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Udp<'a> {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// IPv4 source and destination.
    pub src_ip: [u8; 4],
    /// IPv4 destination.
    pub dst_ip: [u8; 4],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// The payload.
    pub payload: &'a [u8],
}

/// Parses an unfragmented IPv4/UDP frame (header checksum checked).
pub fn parse_udp(p: &[u8]) -> Option<Udp<'_>> {
    if p.len() < ETH_HDR + IP_HDR + UDP_HDR || be16(p, 12) != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = &p[ETH_HDR..];
    let ihl = usize::from(ip[0] & 0xf) * 4;
    let total = usize::from(be16(ip, 2));
    if ip[0] >> 4 != 4 || ihl < IP_HDR || total > ip.len() || total < ihl + UDP_HDR || ip[9] != IP_UDP {
        return None;
    }
    if be16(ip, 6) & 0x3fff != 0 || checksum(0, &ip[..ihl]) != 0 {
        return None;
    }
    let u = &ip[ihl..total];
    let ulen = usize::from(be16(u, 4));
    if ulen < UDP_HDR || ulen > u.len() {
        return None;
    }
    let mut src_mac = [0u8; 6];
    src_mac.copy_from_slice(&p[6..12]);
    let mut src_ip = [0u8; 4];
    src_ip.copy_from_slice(&ip[12..16]);
    let mut dst_ip = [0u8; 4];
    dst_ip.copy_from_slice(&ip[16..20]);
    Some(Udp { src_mac, src_ip, dst_ip, src_port: be16(u, 0), dst_port: be16(u, 2), payload: &u[UDP_HDR..ulen] })
}

/// Writes an Ethernet/IPv4/UDP frame into `out`; returns its length
/// (`None` if it does not fit).
pub fn build_udp(out: &mut [u8], src_mac: [u8; 6], dst_mac: [u8; 6], d: &Udp<'_>) -> Option<usize> {
    let total = ETH_HDR + IP_HDR + UDP_HDR + d.payload.len();
    if total > out.len() || total > oxok_abi::net::PACKET_MAX {
        return None;
    }
    out[0..6].copy_from_slice(&dst_mac);
    out[6..12].copy_from_slice(&src_mac);
    out[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip_len = (IP_HDR + UDP_HDR + d.payload.len()) as u16;
    let ip = &mut out[ETH_HDR..ETH_HDR + IP_HDR];
    ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, IP_UDP, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[12..16].copy_from_slice(&d.src_ip);
    ip[16..20].copy_from_slice(&d.dst_ip);
    let c = checksum(0, ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let ulen = (UDP_HDR + d.payload.len()) as u16;
    let u = &mut out[ETH_HDR + IP_HDR..total];
    u[0..2].copy_from_slice(&d.src_port.to_be_bytes());
    u[2..4].copy_from_slice(&d.dst_port.to_be_bytes());
    u[4..6].copy_from_slice(&ulen.to_be_bytes());
    u[6..8].copy_from_slice(&[0, 0]);
    u[UDP_HDR..].copy_from_slice(d.payload);
    // Pseudo-header: addresses, protocol, length.
    let mut sum = 0u32;
    for w in [&d.src_ip[..], &d.dst_ip[..]] {
        sum += u32::from(be16(w, 0)) + u32::from(be16(w, 2));
    }
    sum += u32::from(IP_UDP) + u32::from(ulen);
    let c = match checksum(sum, u) {
        0 => 0xffff,
        c => c,
    };
    u[6..8].copy_from_slice(&c.to_be_bytes());
    Some(total)
}
