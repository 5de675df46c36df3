//! Requests built byte by byte (not by the code under test), hostile ones
//! included: truncated, bad header lengths, bad checksums, other types,
//! fragments, senders a reply must not go to, replies too large.

use super::*;
extern crate std;
use std::vec::Vec;

const MAC: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const IP: [u8; 4] = [10, 0, 2, 15];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const PEER: [u8; 4] = [10, 0, 2, 2];

fn sum(data: &[u8]) -> u16 {
    let mut s: u32 = data.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// An echo request from the peer to `IP`: `opts` bytes of IP options,
/// `data` as payload; checksums right.
fn request(opts: usize, data: &[u8]) -> Vec<u8> {
    let ihl = 20 + opts;
    let mut p = Vec::new();
    p.extend_from_slice(&MAC);
    p.extend_from_slice(&PEER_MAC);
    p.extend_from_slice(&[0x08, 0x00]);
    let total = (ihl + 8 + data.len()) as u16;
    let mut ip = std::vec![0x40 | (ihl / 4) as u8, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, 1, 0, 0]);
    ip.extend_from_slice(&PEER);
    ip.extend_from_slice(&IP);
    ip.resize(ihl, 1); // options: NOPs
    let c = sum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&ip);
    let mut icmp = std::vec![8, 0, 0, 0, 0xbe, 0xef, 0, 7];
    icmp.extend_from_slice(data);
    let c = sum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&icmp);
    p
}

/// Fixes the IPv4 header checksum after a change (the header at 14).
fn refix_ip(p: &mut [u8]) {
    let end = (14 + usize::from(p[14] & 0xf) * 4).min(p.len());
    p[24..26].copy_from_slice(&[0, 0]);
    let c = sum(&p[14..end]);
    p[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Fixes the ICMP checksum after a change (IHL from the header).
fn refix_icmp(p: &mut [u8]) {
    let at = 14 + usize::from(p[14] & 0xf) * 4;
    let end = 14 + usize::from(u16::from_be_bytes([p[16], p[17]]));
    p[at + 2..at + 4].copy_from_slice(&[0, 0]);
    let c = sum(&p[at..end]);
    p[at + 2..at + 4].copy_from_slice(&c.to_be_bytes());
}

fn answer_of(p: &[u8]) -> Result<Vec<u8>, Refusal> {
    let mut out = [0u8; 2048];
    answer(p, MAC, IP, &mut out).map(|n| out[..n].to_vec())
}

/// Checks `r` is the echo reply to a request with `data`, byte by byte.
fn check_reply(r: &[u8], data: &[u8]) {
    assert_eq!(r.len(), 14 + 20 + 8 + data.len());
    assert_eq!((&r[0..6], &r[6..12], &r[12..14]), (&PEER_MAC[..], &MAC[..], &[8u8, 0][..]));
    let ip = &r[14..34];
    assert_eq!(ip[0], 0x45, "no options in a reply");
    assert_eq!(usize::from(u16::from_be_bytes([ip[2], ip[3]])), 20 + 8 + data.len());
    assert_eq!(u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff, 0, "not a fragment");
    assert_eq!((ip[8], ip[9]), (REPLY_TTL, 1));
    assert_eq!((&ip[12..16], &ip[16..20]), (&IP[..], &PEER[..]));
    assert_eq!(sum(ip), 0, "IPv4 header checksum");
    let icmp = &r[34..];
    assert_eq!((icmp[0], icmp[1]), (0, 0), "echo reply");
    assert_eq!(&icmp[4..8], &[0xbe, 0xef, 0, 7], "identifier and sequence number kept");
    assert_eq!(&icmp[8..], data, "data echoed");
    assert_eq!(sum(icmp), 0, "ICMP checksum");
}

#[test]
fn answers_echo_requests() {
    for data in [&b""[..], b"abcd", &[0x6f; 32], &[0xa5; 1472]] {
        check_reply(&answer_of(&request(0, data)).unwrap(), data);
    }
    // An odd length, and options (the reply carries none).
    check_reply(&answer_of(&request(0, b"odd")).unwrap(), b"odd");
    check_reply(&answer_of(&request(8, b"with options")).unwrap(), b"with options");
    // Ethernet padding after a short packet is not echoed.
    let mut padded = request(0, b"hi");
    padded.resize(60, 0xee);
    check_reply(&answer_of(&padded).unwrap(), b"hi");
}

#[test]
fn truncated_frames_are_refused() {
    let full = request(4, b"0123456789");
    for len in 0..full.len() {
        let r = answer_of(&full[..len]);
        assert!(matches!(r, Err(Refusal::NotIpv4 | Refusal::BadIp | Refusal::BadIcmp)), "length {len}: {r:?}");
    }
    // The IP header says more than the frame holds.
    let mut p = request(0, b"data");
    p[16..18].copy_from_slice(&200u16.to_be_bytes());
    refix_ip(&mut p);
    assert_eq!(answer_of(&p), Err(Refusal::BadIp));
    // The ICMP message shorter than its header.
    let mut p = request(0, b"");
    p[16..18].copy_from_slice(&24u16.to_be_bytes());
    refix_ip(&mut p);
    assert_eq!(answer_of(&p[..38]), Err(Refusal::BadIcmp));
}

#[test]
fn bad_header_lengths_and_versions_are_refused() {
    for ihl in [0u8, 1, 4, 15] {
        let mut p = request(0, b"data");
        p[14] = 0x40 | ihl;
        refix_ip(&mut p);
        assert_eq!(answer_of(&p), Err(Refusal::BadIp), "IHL {ihl}");
    }
    let mut p = request(0, b"data");
    p[14] = 0x65;
    refix_ip(&mut p);
    assert_eq!(answer_of(&p), Err(Refusal::BadIp), "version 6");
}

#[test]
fn bad_checksums_are_refused() {
    let mut p = request(0, b"data");
    p[24] ^= 1;
    assert_eq!(answer_of(&p), Err(Refusal::BadIp));
    let mut p = request(0, b"data");
    *p.last_mut().unwrap() ^= 0x40;
    assert_eq!(answer_of(&p), Err(Refusal::BadIcmp));
    let mut p = request(0, b"data");
    p[36] ^= 0xff;
    assert_eq!(answer_of(&p), Err(Refusal::BadIcmp));
}

#[test]
fn only_echo_requests_are_answered() {
    for (ty, code) in [(0u8, 0u8), (3, 1), (5, 0), (11, 0), (13, 0), (8, 1), (255, 0)] {
        let mut p = request(0, &[0x45; 28]);
        p[34] = ty;
        p[35] = code;
        refix_icmp(&mut p);
        assert_eq!(answer_of(&p), Err(Refusal::NotEchoRequest), "type {ty} code {code}");
    }
    let mut udp = request(0, b"data");
    udp[23] = 17;
    refix_ip(&mut udp);
    assert_eq!(answer_of(&udp), Err(Refusal::BadIcmp));
    let mut arp = request(0, b"data");
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(answer_of(&arp), Err(Refusal::NotIpv4));
}

#[test]
fn fragments_are_refused() {
    for word in [0x2000u16, 0x0001, 0x20ff, 0x1fff] {
        let mut p = request(0, b"data");
        p[20..22].copy_from_slice(&word.to_be_bytes());
        refix_ip(&mut p);
        assert_eq!(answer_of(&p), Err(Refusal::Fragment), "{word:#x}");
    }
}

#[test]
fn only_to_us_and_only_back_to_one_sender() {
    let mut p = request(0, b"data");
    p[30..34].copy_from_slice(&[10, 0, 2, 16]);
    refix_ip(&mut p);
    assert_eq!(answer_of(&p), Err(Refusal::NotForUs));
    for mac in [[0xff; 6], [0x01, 0, 0x5e, 0, 0, 1], [0x33, 0x33, 0, 0, 0, 1]] {
        let mut p = request(0, b"data");
        p[6..12].copy_from_slice(&mac);
        assert_eq!(answer_of(&p), Err(Refusal::BadSender), "{mac:02x?}");
    }
    for src in [[0, 0, 0, 0], [255, 255, 255, 255], [224, 0, 0, 1], IP] {
        let mut p = request(0, b"data");
        p[26..30].copy_from_slice(&src);
        refix_ip(&mut p);
        assert_eq!(answer_of(&p), Err(Refusal::BadSender), "{src:?}");
    }
}

#[test]
fn a_reply_that_does_not_fit_is_refused() {
    let p = request(0, &[7; 1000]);
    let mut out = [0u8; 1041];
    assert_eq!(answer(&p, MAC, IP, &mut out), Err(Refusal::TooLarge));
    let mut out = [0u8; 1042];
    assert_eq!(answer(&p, MAC, IP, &mut out), Ok(1042));
    assert_eq!(answer(&p, MAC, IP, &mut []), Err(Refusal::TooLarge));
}

#[test]
fn garbage_and_mutations_never_panic_and_answers_are_replies() {
    let mut rng = oxok_testrng::Rng::new(0x1c3e);
    let base = request(4, b"a request to mutate");
    let mut answered = 0;
    for round in 0..20_000 {
        let p = if round % 4 == 0 {
            let len = rng.index(120);
            rng.bytes(len)
        } else {
            let mut p = base.clone();
            for _ in 0..1 + rng.index(3) {
                let at = rng.index(p.len());
                p[at] = rng.byte();
            }
            if rng.chance(3) {
                let len = rng.index(p.len() + 1);
                p.truncate(len);
            }
            p
        };
        if let Ok(r) = answer_of(&p) {
            // Whatever got through is a well-formed reply to its sender.
            assert_eq!(r[12..14], [8, 0]);
            assert_eq!(sum(&r[14..34]), 0);
            assert_eq!((r[34], sum(&r[34..])), (0, 0));
            assert_eq!(r[26..30], IP);
            answered += 1;
        }
    }
    assert!(answered > 0, "some mutations (of data bytes with the checksum fixed by chance, or none) still pass");
}
