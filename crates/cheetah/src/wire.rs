//! Ethernet, ARP, IPv4 and TCP as Cheetah reads and writes them: only what a
//! passive-open server needs, every length checked.

use crate::checksum;

/// Ethernet header bytes.
pub const ETH: usize = 14;
/// IPv4 header bytes (no options are sent).
pub const IP: usize = 20;
/// TCP header bytes without options.
pub const TCP: usize = 20;
/// The headers of a data segment: Ethernet, IPv4, TCP.
pub const HEADERS: usize = ETH + IP + TCP;
/// Largest header Cheetah writes (a SYN-ACK's MSS option included).
pub const HEADERS_MAX: usize = HEADERS + 4;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_ARP: u16 = 0x0806;
const PROTO_TCP: u8 = 6;

/// TCP flags.
pub mod flags {
    /// No more data from the sender.
    pub const FIN: u8 = 0x01;
    /// Synchronise sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push.
    pub const PSH: u8 = 0x08;
    /// The acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A received TCP segment (checksums verified).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Ethernet source (where replies go).
    pub src_mac: [u8; 6],
    /// IPv4 source.
    pub src_ip: [u8; 4],
    /// IPv4 destination.
    pub dst_ip: [u8; 4],
    /// TCP source port.
    pub src_port: u16,
    /// TCP destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags ([`flags`]).
    pub flags: u8,
    /// Advertised window.
    pub window: u16,
    /// The MSS option, if present (SYN).
    pub mss: Option<u16>,
    /// The payload.
    pub payload: &'a [u8],
}

impl Segment<'_> {
    /// Whether flag `f` is set.
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Sequence space the segment occupies (payload, SYN and FIN).
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32 + u32::from(self.has(flags::SYN)) + u32::from(self.has(flags::FIN))
    }
}

/// Parses an Ethernet/IPv4/TCP frame addressed to `ip`: unfragmented, both
/// checksums right. `None` for anything else.
pub fn parse_tcp(p: &[u8], ip: [u8; 4]) -> Option<Segment<'_>> {
    if p.len() < ETH + IP + TCP || be16(p, 12) != ETHERTYPE_IPV4 {
        return None;
    }
    let h = &p[ETH..];
    let ihl = usize::from(h[0] & 0xf) * 4;
    let total = usize::from(be16(h, 2));
    if h[0] >> 4 != 4 || ihl < IP || total > h.len() || total < ihl + TCP || h[9] != PROTO_TCP {
        return None;
    }
    if be16(h, 6) & 0x3fff != 0 || checksum::finish(checksum::add(0, &h[..ihl])) != 0 || h[16..20] != ip {
        return None;
    }
    let t = &h[ihl..total];
    let off = usize::from(t[12] >> 4) * 4;
    if off < TCP || off > t.len() {
        return None;
    }
    let mut src_ip = [0u8; 4];
    src_ip.copy_from_slice(&h[12..16]);
    let pseudo = checksum::pseudo(src_ip, ip, PROTO_TCP, t.len() as u16);
    if checksum::finish(checksum::add(pseudo, t)) != 0 {
        return None;
    }
    let mut src_mac = [0u8; 6];
    src_mac.copy_from_slice(&p[6..12]);
    Some(Segment {
        src_mac,
        src_ip,
        dst_ip: ip,
        src_port: be16(t, 0),
        dst_port: be16(t, 2),
        seq: be32(t, 4),
        ack: be32(t, 8),
        flags: t[13] & 0x3f,
        window: be16(t, 14),
        mss: mss_option(&t[TCP..off]),
        payload: &t[off..],
    })
}

/// The MSS option in a TCP option list, if any.
fn mss_option(mut opts: &[u8]) -> Option<u16> {
    while let [kind, rest @ ..] = opts {
        match kind {
            0 => return None,
            1 => opts = rest,
            _ => {
                let len = usize::from(*rest.first()?);
                if len < 2 || len > opts.len() {
                    return None;
                }
                if *kind == 2 && len == 4 {
                    return Some(be16(opts, 2));
                }
                opts = &opts[len..];
            }
        }
    }
    None
}

/// If `p` is an ARP request for `ip`, writes the reply from `mac` into
/// `out` and returns its length.
pub fn arp_reply(p: &[u8], mac: [u8; 6], ip: [u8; 4], out: &mut [u8]) -> Option<usize> {
    if p.len() < ETH + 28 || out.len() < ETH + 28 || be16(p, 12) != ETHERTYPE_ARP {
        return None;
    }
    let a = &p[ETH..];
    if be16(a, 0) != 1 || be16(a, 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4 || be16(a, 6) != 1 || a[24..28] != ip {
        return None;
    }
    out[0..6].copy_from_slice(&a[8..14]);
    out[6..12].copy_from_slice(&mac);
    out[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    let r = &mut out[ETH..ETH + 28];
    r[0..8].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    r[8..14].copy_from_slice(&mac);
    r[14..18].copy_from_slice(&ip);
    r[18..24].copy_from_slice(&a[8..14]);
    r[24..28].copy_from_slice(&a[14..18]);
    Some(ETH + 28)
}

/// What a sent segment's headers say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Our Ethernet address.
    pub src_mac: [u8; 6],
    /// The peer's (or its router's) Ethernet address.
    pub dst_mac: [u8; 6],
    /// Our IPv4 address.
    pub src_ip: [u8; 4],
    /// The peer's.
    pub dst_ip: [u8; 4],
    /// Our port.
    pub src_port: u16,
    /// The peer's.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags.
    pub flags: u8,
    /// Our receive window.
    pub window: u16,
    /// An MSS option to send (SYN-ACK), if any.
    pub mss: Option<u16>,
    /// The IPv4 identification field.
    pub ip_id: u16,
}

/// Writes the Ethernet, IPv4 and TCP headers of a segment carrying
/// `payload_len` bytes whose ones'-complement sum is `payload_sum`
/// (see [`checksum::add`]) into `out`; returns the headers' length.
/// The TCP checksum is finished here from the two sums.
pub fn write_header(out: &mut [u8; HEADERS_MAX], h: &Header, payload_len: usize, payload_sum: u64) -> usize {
    let opt = if h.mss.is_some() { 4 } else { 0 };
    let tcp_len = TCP + opt + payload_len;
    out[0..6].copy_from_slice(&h.dst_mac);
    out[6..12].copy_from_slice(&h.src_mac);
    out[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = &mut out[ETH..ETH + IP];
    ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, PROTO_TCP, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ip[2..4].copy_from_slice(&((IP + tcp_len) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&h.ip_id.to_be_bytes());
    ip[12..16].copy_from_slice(&h.src_ip);
    ip[16..20].copy_from_slice(&h.dst_ip);
    let c = checksum::finish(checksum::add(0, ip));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let t = &mut out[ETH + IP..ETH + IP + TCP + opt];
    t[0..2].copy_from_slice(&h.src_port.to_be_bytes());
    t[2..4].copy_from_slice(&h.dst_port.to_be_bytes());
    t[4..8].copy_from_slice(&h.seq.to_be_bytes());
    t[8..12].copy_from_slice(&h.ack.to_be_bytes());
    t[12] = (((TCP + opt) / 4) as u8) << 4;
    t[13] = h.flags;
    t[14..16].copy_from_slice(&h.window.to_be_bytes());
    t[16..20].copy_from_slice(&[0, 0, 0, 0]);
    if let Some(mss) = h.mss {
        t[20..24].copy_from_slice(&[2, 4, (mss >> 8) as u8, mss as u8]);
    }
    let sum = checksum::pseudo(h.src_ip, h.dst_ip, PROTO_TCP, tcp_len as u16) + checksum::add(0, t) + payload_sum;
    let c = checksum::finish(sum);
    t[16..18].copy_from_slice(&c.to_be_bytes());
    HEADERS + opt
}
