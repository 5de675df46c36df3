//! TCP checksums of whole Ethernet frames, for a network device that
//! checksums TCP for its stack (the libOS's smoltcp device): IPv4 only,
//! lengths from the IP header (a short frame is padded to 60 bytes),
//! fragments left alone.

/// The byte range of an IPv4 TCP segment in the Ethernet frame `f`, and
/// its addresses (from the IP header's own lengths: a short frame is padded
/// to 60 bytes). `None` for anything else or anything malformed.
pub fn tcp_segment(f: &[u8]) -> Option<(core::ops::Range<usize>, [u8; 4], [u8; 4])> {
    const ETH: usize = 14;
    let ip = f.get(ETH..)?;
    if f.get(12..14)? != [0x08, 0x00] || ip.first()? >> 4 != 4 || *ip.get(9)? != 6 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
    // A fragment's checksum covers the reassembled segment: smoltcp's.
    let fragmented = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]) & 0x3fff != 0;
    if ihl < 20 || total < ihl + 20 || total > ip.len() || fragmented {
        return None;
    }
    let src = [ip[12], ip[13], ip[14], ip[15]];
    let dst = [ip[16], ip[17], ip[18], ip[19]];
    Some((ETH + ihl..ETH + total, src, dst))
}

/// Whether the TCP checksum of the segment in `f` holds (true for what is
/// not an IPv4 TCP segment: smoltcp checks the rest itself).
pub fn tcp_checksum_ok(f: &[u8]) -> bool {
    let Some((seg, src, dst)) = tcp_segment(f) else { return true };
    let pseudo = crate::pseudo(src, dst, 6, seg.len() as u16);
    crate::finish(crate::add(pseudo, &f[seg])) == 0
}

/// Fills in the TCP checksum of the segment in `f`, if it is one (smoltcp
/// left the field zero).
pub fn fill_tcp_checksum(f: &mut [u8]) {
    let Some((seg, src, dst)) = tcp_segment(f) else { return };
    let pseudo = crate::pseudo(src, dst, 6, seg.len() as u16);
    let sum = crate::finish(crate::add(pseudo, &f[seg.clone()]));
    f[seg.start + 16..seg.start + 18].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxok_testrng::Rng;
    use smoltcp::wire::{IpAddress, Ipv4Address, TcpPacket};
    use std::vec;
    use std::vec::Vec;

    /// An Ethernet frame carrying IPv4 10.0.2.2 → 10.0.2.15, TCP, with
    /// `payload`, then `pad` bytes of padding after the IP datagram.
    fn frame(payload: &[u8], pad: usize) -> Vec<u8> {
        let total = 20 + 20 + payload.len();
        let mut f = vec![0u8; 14];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0x40, 0, 64, 6, 0, 0]);
        f.extend_from_slice(&[10, 0, 2, 2, 10, 0, 2, 15]);
        f.extend_from_slice(&[0x9c, 0x40, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        f.extend_from_slice(payload);
        f.extend(core::iter::repeat_n(0xa5, pad));
        f
    }

    fn smoltcp_accepts(f: &[u8]) -> bool {
        let (seg, ..) = tcp_segment(f).unwrap();
        let src = IpAddress::Ipv4(Ipv4Address::new(10, 0, 2, 2));
        let dst = IpAddress::Ipv4(Ipv4Address::new(10, 0, 2, 15));
        TcpPacket::new_checked(&f[seg]).unwrap().verify_checksum(&src, &dst)
    }

    /// Filled checksums are the ones smoltcp computes and checks, for
    /// every payload length (odd ones too) and with padding after the
    /// datagram; any one byte changed in the segment is caught.
    #[test]
    fn filled_checksums_are_smoltcps_and_changes_are_caught() {
        let mut rng = Rng::new(11);
        for len in 0..1460 {
            let payload = rng.bytes(len);
            let mut f = frame(&payload, if len < 6 { 6 - len } else { len % 3 });
            fill_tcp_checksum(&mut f);
            assert!(smoltcp_accepts(&f), "len {len}");
            assert!(tcp_checksum_ok(&f), "len {len}");
            let (seg, ..) = tcp_segment(&f).unwrap();
            let at = seg.start + rng.index(seg.len());
            let old = f[at];
            f[at] = old.wrapping_add(1 + rng.byte() % 254);
            assert!(!tcp_checksum_ok(&f), "len {len}: byte {at} changed");
            f[at] = old;
            // Padding is not the segment's.
            let last = f.len() - 1;
            if last >= seg.end {
                f[last] ^= 0xff;
                assert!(tcp_checksum_ok(&f), "len {len}: padding changed");
            }
        }
    }

    /// What is not an IPv4 TCP segment, or is malformed, is left to
    /// smoltcp: found nowhere, passed, never written.
    #[test]
    fn others_and_garbage_are_left_alone() {
        let mut udp = frame(b"hello", 0);
        udp[14 + 9] = 17;
        let mut arp = frame(b"", 0);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let mut frag = frame(b"x", 0);
        frag[14 + 6] = 0x20; // more fragments
        let mut long = frame(b"abc", 0);
        long[14 + 3] = 200; // total length past the frame
        let mut short_ihl = frame(b"", 0);
        short_ihl[14] = 0x44;
        for f in [udp, arp, frag, long, short_ihl] {
            assert!(tcp_segment(&f).is_none());
            assert!(tcp_checksum_ok(&f));
            let mut g = f.clone();
            fill_tcp_checksum(&mut g);
            assert_eq!(g, f);
        }
        let mut rng = Rng::new(3);
        for _ in 0..20_000 {
            let len = rng.index(80);
            let mut f = rng.bytes(len);
            if rng.chance(2) && len > 24 {
                f[12..14].copy_from_slice(&[0x08, 0x00]);
                f[14] = 0x45;
                f[14 + 9] = 6;
            }
            let _ = tcp_checksum_ok(&f);
            fill_tcp_checksum(&mut f);
        }
    }
}
