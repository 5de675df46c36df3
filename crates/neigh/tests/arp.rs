//! ARP frames against smoltcp's reading of them.

use oxok_neigh::arp::{self, Arp, FRAME_LEN, REPLY, REQUEST};
use oxok_testrng::Rng;
use smoltcp::wire::{ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, Ipv4Address};

const US: [u8; 6] = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
const IP: [u8; 4] = [10, 0, 2, 15];
const GW: [u8; 6] = [0x52, 0x55, 10, 0, 2, 2];
const GW_IP: [u8; 4] = [10, 0, 2, 2];

fn smoltcp_reads(frame: &[u8]) -> ArpRepr {
    let eth = EthernetFrame::new_checked(frame).expect("an Ethernet frame");
    ArpRepr::parse(&ArpPacket::new_checked(eth.payload()).expect("an ARP packet")).expect("an ARP message")
}

#[test]
fn a_reply_from_the_table_reads_as_the_neighbours_own() {
    let mut out = [0u8; 64];
    let n = arp::reply_from(&mut out, GW, GW_IP, US, IP).expect("room");
    assert_eq!(n, FRAME_LEN);
    assert_eq!(&out[..6], &US);
    let ArpRepr::EthernetIpv4 {
        operation,
        source_hardware_addr,
        source_protocol_addr,
        target_hardware_addr,
        target_protocol_addr,
    } = smoltcp_reads(&out[..n])
    else {
        panic!("not Ethernet/IPv4")
    };
    assert_eq!(operation, ArpOperation::Reply);
    assert_eq!(source_hardware_addr, EthernetAddress(GW));
    assert_eq!(source_protocol_addr, Ipv4Address::from(GW_IP));
    assert_eq!(target_hardware_addr, EthernetAddress(US));
    assert_eq!(target_protocol_addr, Ipv4Address::from(IP));
}

#[test]
fn requests_are_answered_only_for_our_address() {
    let mut req = [0u8; 60];
    let ask = |tpa| Arp { op: REQUEST, sha: GW, spa: GW_IP, tha: [0; 6], tpa };
    arp::build(&mut req, [0xff; 6], &ask(IP)).expect("room");
    let mut out = [0u8; 60];
    let n = arp::answer(&req, US, IP, &mut out).expect("answered");
    assert_eq!(&out[..6], &GW);
    let m = arp::parse(&out[..n]).expect("parses");
    assert_eq!(m, Arp { op: REPLY, sha: US, spa: IP, tha: GW, tpa: GW_IP });
    arp::build(&mut req, [0xff; 6], &ask([10, 0, 2, 16])).expect("room");
    assert_eq!(arp::answer(&req, US, IP, &mut out), None);
    // Our own request: its target is what we asked for; another's is not ours.
    arp::build(&mut req, [0xff; 6], &Arp { op: REQUEST, sha: US, spa: IP, tha: [0; 6], tpa: GW_IP }).expect("room");
    assert_eq!(arp::asked_by(&req, US), Some(GW_IP));
    assert_eq!(arp::asked_by(&req, GW), None);
}

#[test]
fn garbage_is_not_arp() {
    let mut r = Rng::new(3);
    let mut out = [0u8; 64];
    for _ in 0..20_000 {
        let len = r.index(80);
        let mut p = r.bytes(len);
        if r.chance(2) && len >= 14 {
            p[12] = 0x08;
            p[13] = 0x06;
        }
        if let Some(m) = arp::parse(&p) {
            // Whatever parses is what smoltcp reads too.
            assert!(p.len() >= FRAME_LEN);
            let n = arp::build(&mut out, [0xff; 6], &m).expect("room");
            assert_eq!(arp::parse(&out[..n]), Some(m));
        }
        let _ = arp::answer(&p, US, IP, &mut out);
    }
}
