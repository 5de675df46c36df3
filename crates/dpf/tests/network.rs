//! The common filters on real packet layouts, and the overlap rule as the
//! kernel will see it: listeners, connections, thieves.

use oxok_dpf::build::{self, PROTO_TCP, PROTO_UDP};
use oxok_dpf::{Builder, Dpf, InstallError};

const ME: u32 = 0x0a00_0002;
const PEER: u32 = 0x0a00_0001;

/// An Ethernet + IPv4 (with `opts` bytes of options) + TCP/UDP header.
fn ip_packet(proto: u8, src: (u32, u16), dst: (u32, u16), opts: usize) -> Vec<u8> {
    let ihl = 5 + opts / 4;
    let mut p = vec![0u8; 14 + ihl * 4 + 20 + 8];
    p[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    p[14] = 0x40 | ihl as u8;
    p[14 + 6] = 0x40; // don't fragment
    p[14 + 9] = proto;
    p[14 + 12..14 + 16].copy_from_slice(&src.0.to_be_bytes());
    p[14 + 16..14 + 20].copy_from_slice(&dst.0.to_be_bytes());
    let l4 = 14 + ihl * 4;
    p[l4..l4 + 2].copy_from_slice(&src.1.to_be_bytes());
    p[l4 + 2..l4 + 4].copy_from_slice(&dst.1.to_be_bytes());
    p
}

fn arp_packet() -> Vec<u8> {
    let mut p = vec![0u8; 42];
    p[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    p
}

#[test]
fn common_filters_match_what_they_should() {
    let arp = build::arp().build().unwrap();
    let udp = build::udp(53).build().unwrap();
    let tcp = build::tcp_listen(80).build().unwrap();
    let conn = build::tcp_connection((ME, 80), (PEER, 4000)).build().unwrap();
    assert!(arp.matches(&arp_packet()));
    assert!(!arp.matches(&ip_packet(PROTO_UDP, (PEER, 1), (ME, 53), 0)));
    for opts in [0, 4, 40] {
        let u = ip_packet(PROTO_UDP, (PEER, 9), (ME, 53), opts);
        assert!(udp.matches(&u) && !tcp.matches(&u) && !arp.matches(&u), "options {opts}");
        let t = ip_packet(PROTO_TCP, (PEER, 4000), (ME, 80), opts);
        assert!(tcp.matches(&t) && conn.matches(&t) && !udp.matches(&t));
        let other = ip_packet(PROTO_TCP, (PEER, 4001), (ME, 80), opts);
        assert!(tcp.matches(&other) && !conn.matches(&other));
    }
    // A later fragment carries no port: not matched.
    let mut frag = ip_packet(PROTO_UDP, (PEER, 9), (ME, 53), 0);
    frag[14 + 6..14 + 8].copy_from_slice(&0x0010u16.to_be_bytes());
    assert!(!udp.matches(&frag));
    // Not IPv4.
    let mut v6ish = ip_packet(PROTO_UDP, (PEER, 9), (ME, 53), 0);
    v6ish[14] = 0x65;
    assert!(!udp.matches(&v6ish));
}

#[test]
fn listeners_connections_and_thieves() {
    let mut dpf: Dpf<&str> = Dpf::new(64, 42);
    let arp = dpf.insert(build::arp().build().unwrap(), "arpd", None).unwrap();
    let web = dpf.insert(build::tcp_listen(80).build().unwrap(), "web", None).unwrap();
    let dns = dpf.insert(build::udp(53).build().unwrap(), "dns", None).unwrap();
    dpf.insert(build::udp(80).build().unwrap(), "udp80", None).expect("UDP 80 is not TCP 80");
    dpf.insert(build::tcp_listen(81).build().unwrap(), "web81", None).expect("another port");

    // Thieves: a duplicate, the same atoms reordered, wider filters, a
    // partial overlap, and a connection without the listener's capability.
    let overlap = |dpf: &mut Dpf<&str>, b: Builder, refines| match dpf.insert(b.build().unwrap(), "thief", refines) {
        Err(InstallError::Overlap { with }) => Some(with),
        other => panic!("{other:?}"),
    };
    assert_eq!(overlap(&mut dpf, build::tcp_listen(80), None), Some(web));
    let reordered =
        Builder::new().shift(1, 14, 0x0f, 4).eq16(16, 80).eq8(23, PROTO_TCP).masked(1, 14, 0xf0, 0x40).eq16(12, 0x0800);
    // (the shift first changes where the port is read: not the same filter,
    // but still possibly overlapping — refused)
    assert!(overlap(&mut dpf, reordered, None).is_some());
    let same_reordered = Builder::new()
        .eq8(23, PROTO_TCP)
        .masked(2, 20, 0x1fff, 0)
        .masked(1, 14, 0xf0, 0x40)
        .eq16(12, 0x0800)
        .shift(1, 14, 0x0f, 4)
        .eq16(16, 80);
    assert_eq!(overlap(&mut dpf, same_reordered, None), Some(web));
    assert!(overlap(&mut dpf, build::ipv4(PROTO_TCP), None).is_some());
    assert!(overlap(&mut dpf, Builder::new().eq16(12, 0x0800), None).is_some());
    assert!(overlap(&mut dpf, Builder::new().eq8(0, 0xff), None).is_some(), "a broadcast-MAC filter may take anything");
    let conn = build::tcp_connection((ME, 80), (PEER, 4000));
    assert_eq!(overlap(&mut dpf, conn, None), Some(web));
    // The only IHL=5 TCP port 80: different base, so undecidable: refused.
    let fixed = Builder::new().eq16(12, 0x0800).eq8(14, 0x45).eq8(23, PROTO_TCP).eq16(36, 80);
    assert!(overlap(&mut dpf, fixed, None).is_some());

    // Refining the wrong filter is refused, as is a non-subset.
    let c = conn.build().unwrap();
    assert_eq!(dpf.insert(c, "web", Some(dns)), Err(InstallError::NotRefinement));
    assert_eq!(dpf.insert(build::tcp_listen(81).build().unwrap(), "web", Some(web)), Err(InstallError::NotRefinement));

    // The listener refines itself; connections are disjoint from each other.
    let c1 = dpf.insert(c, "web/c1", Some(web)).unwrap();
    let c2 = dpf.insert(build::tcp_connection((ME, 80), (PEER, 4001)).build().unwrap(), "web/c2", Some(web)).unwrap();
    assert!(matches!(dpf.insert(c, "web/dup", Some(web)), Err(InstallError::Overlap { with }) if with == c1));

    let t = |port| ip_packet(PROTO_TCP, (PEER, port), (ME, 80), 0);
    assert_eq!(dpf.demux(&t(4000)), Some((c1, &"web/c1")));
    assert_eq!(dpf.demux(&t(4001)), Some((c2, &"web/c2")));
    assert_eq!(dpf.demux(&t(4002)), Some((web, &"web")));
    assert_eq!(dpf.demux(&arp_packet()), Some((arp, &"arpd")));
    assert_eq!(dpf.demux(&ip_packet(PROTO_UDP, (PEER, 1), (ME, 53), 8)), Some((dns, &"dns")));
    assert_eq!(dpf.demux(&ip_packet(PROTO_UDP, (PEER, 1), (ME, 54), 0)), None);
    assert_eq!(dpf.demux(&[]), None);

    // The listener closes: its connections stay, now top-level, still
    // disjoint from everything; the port is free for a new listener, which
    // must not cover the connections.
    assert_eq!(dpf.remove(web), Some("web"));
    assert_eq!(dpf.get(c1).unwrap().refines, None);
    assert_eq!(dpf.demux(&t(4000)), Some((c1, &"web/c1")));
    assert_eq!(dpf.demux(&t(4002)), None);
    assert!(matches!(
        dpf.insert(build::tcp_listen(80).build().unwrap(), "new", None),
        Err(InstallError::Overlap { .. })
    ));
    assert_eq!(dpf.remove(web), None, "stale id");
    assert_eq!(dpf.remove_where(|o| o.starts_with("web/")), 2);
    let again = dpf.insert(build::tcp_listen(80).build().unwrap(), "new", None).unwrap();
    assert_ne!(again, web, "a reused index has a new generation");
    assert_eq!(dpf.demux(&t(4000)), Some((again, &"new")));

    // The exposed view.
    let owners: Vec<&str> = dpf.iter().map(|i| *i.owner).collect();
    assert_eq!(owners.len(), dpf.len());
    assert!(owners.contains(&"arpd") && owners.contains(&"new"));
}

#[test]
fn refinement_needs_the_reach_too() {
    // The wide filter reads 4 bytes at 8 (the packet must hold byte 11);
    // one that only reads byte 8 is not a subset, even with more atoms.
    let mut dpf: Dpf<u8> = Dpf::new(8, 1);
    let wide = dpf.insert(Builder::new().masked(4, 8, 0xff00_0000, 0x0100_0000).build().unwrap(), 1, None).unwrap();
    let short = Builder::new().eq8(8, 1).eq8(0, 5).build().unwrap();
    assert_eq!(dpf.insert(short, 2, Some(wide)), Err(InstallError::NotRefinement));
    let long = Builder::new().eq8(8, 1).eq8(0, 5).eq8(11, 0).build().unwrap();
    assert!(dpf.insert(long, 2, Some(wide)).is_ok());
}

#[test]
fn capacity_depth_and_chains() {
    let mut dpf: Dpf<u8> = Dpf::new(3, 7);
    let a = dpf.insert(build::udp(1).build().unwrap(), 0, None).unwrap();
    dpf.insert(build::udp(2).build().unwrap(), 0, None).unwrap();
    dpf.insert(build::udp(3).build().unwrap(), 0, None).unwrap();
    assert_eq!(dpf.insert(build::udp(4).build().unwrap(), 0, None), Err(InstallError::Full));
    dpf.remove(a).unwrap();
    assert!(dpf.insert(build::udp(4).build().unwrap(), 0, None).is_ok());

    // A chain of refinements, each adding one byte of the source address.
    let chain_filter = |k: u16| {
        let b = (0..k).fold(build::ipv4(PROTO_UDP), |b, i| b.eq8(26 + i, i as u8 + 1));
        b.masked(2, 20, 0x1fff, 0).shift(1, 14, 0x0f, 4).eq16(16, 9).build().unwrap()
    };
    let mut dpf: Dpf<u32> = Dpf::new(64, 7);
    let mut prev = dpf.insert(chain_filter(0), 0, None).unwrap();
    let mut chain = vec![prev];
    for k in 1.. {
        match dpf.insert(chain_filter(k), k as u32, Some(prev)) {
            Ok(id) => {
                prev = id;
                chain.push(id);
            }
            Err(e) => {
                assert_eq!(e, InstallError::TooDeep);
                break;
            }
        }
    }
    assert_eq!(chain.len(), oxok_abi::filter::MAX_REFINE_DEPTH);
    let p = ip_packet(PROTO_UDP, (0x0102_0304, 1), (ME, 9), 0);
    assert_eq!(dpf.demux(&p).unwrap().1, &4, "bytes 1,2,3,4 of the source: the 4th refinement");
    // Removing a middle link: the rest moves up and the deepest still wins.
    dpf.remove(chain[2]).unwrap();
    assert_eq!(dpf.get(chain[3]).unwrap().refines, Some(chain[1]));
    assert_eq!(dpf.demux(&p).unwrap().1, &4);
    dpf.remove(chain[4]).unwrap();
    assert_eq!(dpf.demux(&p).unwrap().1, &3);
}

#[test]
fn demux_cost_does_not_grow_with_filters_on_one_field() {
    let visits = |n: u16| {
        let mut dpf: Dpf<u16> = Dpf::new(4096, 99);
        for port in 1..=n {
            dpf.insert(build::udp(port).build().unwrap(), port, None).unwrap();
            dpf.insert(build::tcp_listen(port).build().unwrap(), port, None).unwrap();
        }
        let (hit, v) = dpf.demux_counted(&ip_packet(PROTO_UDP, (PEER, 7), (ME, n), 0));
        assert_eq!(hit.map(|h| *h.1), Some(n));
        let (miss, w) = dpf.demux_counted(&ip_packet(PROTO_UDP, (PEER, 7), (ME, n + 1), 0));
        assert!(miss.is_none());
        let nodes = dpf.node_count();
        (v, w, nodes)
    };
    let (one, one_miss, _) = visits(1);
    let (many, many_miss, nodes) = visits(500);
    assert_eq!(one, many, "a matching packet visits as many nodes with 2 filters as with 1000");
    assert_eq!(one_miss, many_miss);
    assert!(many < 12, "{many} nodes visited");
    assert!(nodes < 2 * 500 + 20, "shared prefix: {nodes} nodes");
}

#[test]
fn filters_print_for_the_shell() {
    let f = build::tcp_listen(80).build().unwrap();
    assert_eq!(
        f.to_string(),
        "u16[12]&ffff=0800 u8[14]&f0=40 u16[20]&1fff=0000 u8[23]&ff=06 >>u8[14]&0f*4 u16[16]&ffff=0050"
    );
}

/// An ICMP message of type `ty` from `PEER` to `dst` (IPv4 with `opts`
/// bytes of options; `frag`: the flags and fragment-offset word).
fn icmp_packet(ty: u8, dst: u32, opts: usize, frag: u16) -> Vec<u8> {
    let mut p = ip_packet(build::PROTO_ICMP, (PEER, 0), (dst, 0), opts);
    p[14 + 6..14 + 8].copy_from_slice(&frag.to_be_bytes());
    p[14 + 20 + opts] = ty;
    p
}

#[test]
fn echo_answerer_and_pinger_side_by_side() {
    use build::{ICMP_ECHO_REPLY, ICMP_ECHO_REQUEST, PROTO_ICMP};
    let mut dpf: Dpf<&str> = Dpf::new(64, 7);
    let answerer = dpf.insert(build::icmp(ICMP_ECHO_REQUEST, ME).build().unwrap(), "icmpd", None).unwrap();
    let pinger = dpf
        .insert(build::icmp(ICMP_ECHO_REPLY, ME).build().unwrap(), "ping", None)
        .expect("echo replies are not echo requests");
    dpf.insert(build::icmp(ICMP_ECHO_REQUEST, PEER).build().unwrap(), "other address", None)
        .expect("another destination address");
    // A second answerer, all ICMP, or all ICMP to the address: refused.
    for thief in [build::icmp(ICMP_ECHO_REQUEST, ME), build::ipv4(PROTO_ICMP), build::ipv4(PROTO_ICMP).eq32(30, ME)] {
        assert!(
            matches!(dpf.insert(thief.build().unwrap(), "thief", None), Err(InstallError::Overlap { .. })),
            "{thief:?}"
        );
    }
    for opts in [0, 4, 40] {
        assert_eq!(dpf.demux(&icmp_packet(ICMP_ECHO_REQUEST, ME, opts, 0x4000)), Some((answerer, &"icmpd")));
        assert_eq!(dpf.demux(&icmp_packet(ICMP_ECHO_REPLY, ME, opts, 0)), Some((pinger, &"ping")));
    }
    // Other types, a later fragment (its first byte is not the type), a UDP
    // packet whose port bytes look like an echo request: nobody's.
    assert_eq!(dpf.demux(&icmp_packet(3, ME, 0, 0)), None);
    assert_eq!(dpf.demux(&icmp_packet(ICMP_ECHO_REQUEST, ME, 0, 0x0010)), None);
    let mut udp = ip_packet(PROTO_UDP, (PEER, 0x0800), (ME, 7), 0);
    udp[34] = ICMP_ECHO_REQUEST;
    assert_eq!(dpf.demux(&udp), None);
}
