//! ARP over Ethernet for IPv4 (RFC 826): reading a frame, and building the
//! requests, replies and answers the table needs.

use crate::{Ip, Mac};

/// Ethernet type of ARP.
pub const ETHERTYPE: u16 = 0x0806;
/// A request.
pub const REQUEST: u16 = 1;
/// A reply.
pub const REPLY: u16 = 2;
/// An Ethernet header and an IPv4 ARP message.
pub const FRAME_LEN: usize = 14 + 28;

/// An IPv4-over-Ethernet ARP message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arp {
    /// [`REQUEST`] or [`REPLY`] (or another operation, which nobody here
    /// answers).
    pub op: u16,
    /// Sender's Ethernet and IPv4 addresses.
    pub sha: Mac,
    /// Sender's IPv4 address.
    pub spa: Ip,
    /// Target's Ethernet address (zero in a request).
    pub tha: Mac,
    /// Target's IPv4 address.
    pub tpa: Ip,
}

fn be16(p: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([p[at], p[at + 1]])
}

/// The ARP message in Ethernet frame `p`, if it is one for IPv4 over
/// Ethernet (hardware type 1, protocol 0x0800, lengths 6 and 4).
pub fn parse(p: &[u8]) -> Option<Arp> {
    if p.len() < FRAME_LEN || be16(p, 12) != ETHERTYPE {
        return None;
    }
    let a = &p[14..FRAME_LEN];
    if be16(a, 0) != 1 || be16(a, 2) != 0x0800 || a[4] != 6 || a[5] != 4 {
        return None;
    }
    let mac = |at: usize| -> Mac { [a[at], a[at + 1], a[at + 2], a[at + 3], a[at + 4], a[at + 5]] };
    let ip = |at: usize| -> Ip { [a[at], a[at + 1], a[at + 2], a[at + 3]] };
    Some(Arp { op: be16(a, 6), sha: mac(8), spa: ip(14), tha: mac(18), tpa: ip(24) })
}

/// Writes `m` as a frame from `m.sha` to `to` into `out`; its length
/// ([`FRAME_LEN`]), or `None` if `out` is too short.
pub fn build(out: &mut [u8], to: Mac, m: &Arp) -> Option<usize> {
    let f = out.get_mut(..FRAME_LEN)?;
    f[0..6].copy_from_slice(&to);
    f[6..12].copy_from_slice(&m.sha);
    f[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    f[14..16].copy_from_slice(&1u16.to_be_bytes());
    f[16..18].copy_from_slice(&0x0800u16.to_be_bytes());
    f[18] = 6;
    f[19] = 4;
    f[20..22].copy_from_slice(&m.op.to_be_bytes());
    f[22..28].copy_from_slice(&m.sha);
    f[28..32].copy_from_slice(&m.spa);
    f[32..38].copy_from_slice(&m.tha);
    f[38..42].copy_from_slice(&m.tpa);
    Some(FRAME_LEN)
}

/// The reply to `p` if it is a request for `ip` (this machine at `mac`).
pub fn answer(p: &[u8], mac: Mac, ip: Ip, out: &mut [u8]) -> Option<usize> {
    let m = parse(p)?;
    if m.op != REQUEST || m.tpa != ip {
        return None;
    }
    build(out, m.sha, &Arp { op: REPLY, sha: mac, spa: ip, tha: m.sha, tpa: m.spa })
}

/// The address a request in `p` asks for, if `p` is a request sent by
/// `mac` (a stack's own outgoing request).
pub fn asked_by(p: &[u8], mac: Mac) -> Option<Ip> {
    parse(p).filter(|m| m.op == REQUEST && m.sha == mac).map(|m| m.tpa)
}

/// The reply that neighbour `their_ip` at `their_mac` would have sent to
/// this machine (`our_mac`, `our_ip`): what a stack whose requests are
/// answered elsewhere is handed once the table knows.
pub fn reply_from(out: &mut [u8], their_mac: Mac, their_ip: Ip, our_mac: Mac, our_ip: Ip) -> Option<usize> {
    build(out, our_mac, &Arp { op: REPLY, sha: their_mac, spa: their_ip, tha: our_mac, tpa: our_ip })
}
