//! hostile-net: the network's protections, attacked from one program on a
//! machine with a NIC (`net-hostile` scenario).
//!
//! Rings: frames owned by another environment (a capability with read and
//! write from `frame_alloc_for` is not enough), a read-only capability, an
//! empty slot, the same frame twice, a bad pointer — all refused; a bound
//! ring's frames cannot be freed until it is unbound. A ring the libOS
//! makes holds none of its frames' capabilities once bound, and dropping it
//! gives every frame back.
//! Filters: a duplicate, a superset and a partial overlap of an installed
//! filter are refused; a refinement needs the refined filter's capability
//! with write; malformed filters and filters reading beyond the packet
//! limit are refused; a filter on a ring that does not exist is refused;
//! a removed filter's capability is stale; an environment cannot install
//! more than `FILTERS_PER_ENV` filters.
//! The filter table: every installed filter has its row (owner, ring,
//! atoms as installed, the filter it refines); a removed filter's row is
//! freed and its refinements show the filter it refined; the table cannot
//! be written (`hostile-scribble`).
//! Transmit: nothing without a template; spoofed Ethernet source, IPv4
//! source, source port, ARP sender or an unknown Ethernet type refused; a
//! template cannot be widened (own or a child's); pieces outside their
//! frame, too many, too long, or from a slot that names no frame refused.
//! Receive is bound as transmit is: under its template of ports 4000–4009
//! the program may filter ARP, ICMP to its address and UDP or TCP to its
//! ports, and is refused a port outside them, all TCP, all IPv4 and ICMP
//! to another address (once any filter nobody held yet was granted).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::net::TxTemplate;
use oxok_libos::abi::{ANY_FRAME, Error, rights};
use oxok_libos::net::ether::{self, Udp};
use oxok_libos::net::{self, Filter, Ring, Tx, filters};
use oxok_libos::{Args, println, sys};
use oxok_tests::Checks;
use oxok_tests::unchanged::Snapshot;

oxok_libos::main!(main);

const IP: [u8; 4] = [10, 0, 2, 15];
const PORT: u16 = 4000;
/// A capability slot the program never fills.
const EMPTY_SLOT: u64 = 63;

fn bind(slots: &[u64]) -> Result<u64, Error> {
    sys::ring_bind(slots.as_ptr() as u64, slots.len() as u64).map(|[r]| r)
}

fn install(ring: u64, f: &filters::Builder, refines: u64) -> Result<u64, Error> {
    let block = f.raw().to_bytes();
    sys::filter_install(ring, block.as_ptr() as u64, refines).map(|[slot, _]| slot)
}

fn udp_frame(mac: [u8; 6], src_ip: [u8; 4], src_port: u16, out: &mut [u8]) -> usize {
    let d = Udp { src_mac: mac, src_ip, dst_ip: [10, 0, 2, 2], src_port, dst_port: 9, payload: b"hostile-net" };
    ether::build_udp(out, mac, [0xff; 6], &d).unwrap_or(0)
}

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-net");
    let Ok(mac) = net::mac() else {
        println!("hostile-net: FAIL no NIC");
        return 1;
    };
    let [child, _] = match sys::env_create() {
        Ok(v) => v,
        Err(e) => {
            println!("hostile-net: FAIL env_create: {e:?}");
            return 1;
        }
    };
    rings(&mut c, child);
    ring_lifetime(&mut c);
    filters_attacked(&mut c);
    filter_table(&mut c);
    transmit(&mut c, mac, child);
    receive_bound(&mut c);
    c.expect(sys::env_destroy(child), Ok([]), "child destroyed");
    c.finish()
}

fn rings(c: &mut Checks, child: u64) {
    let mine = [sys::frame_alloc(ANY_FRAME), sys::frame_alloc(ANY_FRAME)];
    let [Ok([h, _]), Ok([d, _])] = mine else {
        c.check(false, "frames for a ring");
        return;
    };
    // A frame the child owns, with a full capability in our list.
    let theirs = sys::frame_alloc_for(child, ANY_FRAME).map(|[s, _]| s);
    c.check(theirs.is_ok(), "frame_alloc_for the child");
    let theirs = theirs.unwrap_or(EMPTY_SLOT);
    c.expect(bind(&[h, theirs]), Err(Error::Denied), "ring into another environment's frame");
    c.expect(bind(&[theirs, d]), Err(Error::Denied), "ring header in another environment's frame");
    let ro = sys::cap_grant(d, 0, rights::READ).map(|[s]| s).unwrap_or(EMPTY_SLOT);
    c.expect(bind(&[h, ro]), Err(Error::Denied), "ring through a read-only capability");
    c.expect(bind(&[h, EMPTY_SLOT]), Err(Error::BadCap), "ring through an empty slot");
    c.expect(bind(&[h, h]), Err(Error::Invalid), "the same frame twice");
    c.expect(bind(&[h]), Err(Error::Invalid), "a ring without entry frames");
    c.expect(sys::ring_bind(0xffff_8000_0000_0000, 2).map(|_| ()), Err(Error::BadAddress), "slots in kernel memory");
    let ring = bind(&[h, d]);
    c.check(ring.is_ok(), "a ring over our own frames");
    if let Ok(ring) = ring {
        c.expect(sys::frame_free(h), Err(Error::Busy), "a bound ring's frame cannot be freed");
        c.expect(sys::ring_unbind(ring + (1 << 8)), Err(Error::NotFound), "a stale ring number");
        c.expect(sys::ring_unbind(ring), Ok([]), "unbind");
        c.expect(sys::ring_unbind(ring), Err(Error::NotFound), "unbind twice");
    }
    let _ = sys::cap_drop(ro);
    c.expect(sys::frame_free(h), Ok([]), "frame free after unbind");
    c.expect(sys::frame_free(d), Ok([]), "frame free after unbind (2)");
}

/// `Ring::new` drops its frames' capabilities after binding (a ring of 31
/// entry frames would otherwise hold half the capability list); the kernel
/// then frees the frames when the ring is unbound and unmapped.
fn ring_lifetime(c: &mut Checks) {
    let before = Snapshot::of_self();
    match Ring::new(31) {
        Ok(ring) => {
            let bound = Snapshot::of_self();
            c.expect(bound.caps, before.caps, "a bound ring holds no capabilities");
            c.expect(bound.row_frames, before.row_frames + 32, "a ring of 31 entry frames owns 32 frames");
            drop(ring);
            // The account also holds the page tables the region's mapping
            // made, which stay until the end (`row_tables`).
            let after = Snapshot::of_self();
            let charged = |s: &Snapshot| (s.caps, s.row_frames, s.frames - u64::from(s.row_tables));
            c.expect(charged(&after), charged(&before), "a dropped ring's frames are freed and uncharged");
        }
        Err(_) => c.check(false, "a ring of 31 entry frames binds"),
    }
}

fn filters_attacked(c: &mut Checks) {
    let Ok(ring) = Ring::new(1) else {
        c.check(false, "ring");
        return;
    };
    let r = ring.id();
    let listen = install(r, &filters::udp(PORT), u64::MAX);
    c.check(listen.is_ok(), "a UDP filter installs");
    let listen = listen.unwrap_or(EMPTY_SLOT);
    // The install (overlap) is `filter_install`'s last check: refused
    // there, the caller's list, account and row are as they were.
    let before = Snapshot::of_self();
    c.expect(install(r, &filters::udp(PORT), u64::MAX), Err(Error::Exists), "an exact duplicate");
    c.expect(Snapshot::of_self(), before, "a filter refused at its last check changed nothing");
    c.expect(install(r, &filters::ipv4(filters::PROTO_UDP), u64::MAX), Err(Error::Exists), "a superset (all UDP)");
    // Partial overlap: UDP from one source address, any port.
    let from_host = filters::ipv4(filters::PROTO_UDP).eq32(14 + 12, 0x0a00_0202);
    c.expect(install(r, &from_host, u64::MAX), Err(Error::Exists), "a partial overlap");
    // A refinement of the listener: UDP to PORT from the gateway.
    let conn = filters::udp(PORT).eq32(14 + 12, 0x0a00_0202);
    c.expect(install(r, &conn, u64::MAX), Err(Error::Exists), "a refinement without naming the filter");
    c.expect(install(r, &conn, 0), Err(Error::BadCap), "refining through an environment capability");
    c.expect(install(r, &conn, EMPTY_SLOT), Err(Error::BadCap), "refining through an empty slot");
    let ro = sys::cap_grant(listen, 0, rights::READ).map(|[s]| s).unwrap_or(EMPTY_SLOT);
    c.expect(install(r, &conn, ro), Err(Error::Denied), "refining through a read-only filter capability");
    c.expect(install(r, &filters::udp(PORT + 1), listen), Err(Error::Invalid), "a 'refinement' that is not a subset");
    let refined = install(r, &conn, listen);
    c.check(refined.is_ok(), "a refinement with the filter's capability");
    c.expect(install(r + (1 << 8), &filters::udp(PORT + 2), u64::MAX), Err(Error::NotFound), "a filter on no ring");
    let mut garbage = [0xa5u8; oxok_libos::abi::filter::FILTER_BYTES];
    c.expect(
        sys::filter_install(r, garbage.as_ptr() as u64, u64::MAX).map(|_| ()),
        Err(Error::Invalid),
        "a malformed filter",
    );
    garbage.fill(0);
    c.expect(
        sys::filter_install(r, garbage.as_ptr() as u64, u64::MAX).map(|_| ()),
        Err(Error::Invalid),
        "an empty filter",
    );
    let far = filters::Builder::new().eq16(3000, 7);
    c.expect(install(r, &far, u64::MAX), Err(Error::Invalid), "a filter reading beyond the packet limit");
    c.expect(sys::filter_install(r, 0x10, u64::MAX).map(|_| ()), Err(Error::BadAddress), "a filter at a bad address");
    if let Ok(refined) = refined {
        c.expect(sys::filter_remove(refined), Ok([]), "remove the refinement");
        c.expect(sys::filter_remove(refined), Err(Error::BadCap), "remove twice");
    }
    let _ = sys::cap_drop(ro);
    c.expect(sys::filter_remove(listen), Ok([]), "remove the listener");
    // With the listener gone, the wider filter is free to install.
    let wide = Filter::install(&ring, &filters::ipv4(filters::PROTO_UDP), None);
    c.check(wide.is_ok(), "all UDP installs once nothing overlaps");
    // Nobody fills the machine's filter table: a per-environment limit.
    let limit = oxok_libos::abi::net::FILTERS_PER_ENV;
    let mut many = [0u64; 40];
    let mut installed = 0;
    let mut last = Ok(0);
    for (i, slot) in many.iter_mut().enumerate() {
        last = install(r, &filters::tcp_listen(5000 + i as u16), u64::MAX);
        match last {
            Ok(s) => {
                *slot = s;
                installed += 1;
            }
            Err(_) => break,
        }
    }
    c.expect(installed, limit - 1, "filters up to the per-environment limit");
    c.expect(last, Err(Error::NoMemory), "one filter past the limit");
    for &s in &many[..installed] {
        let _ = sys::filter_remove(s);
    }
}

/// The filter table's row for filter `id`, if it shows that filter.
fn row(id: u64) -> Option<(oxok_libos::abi::net::FilterRow, oxok_libos::abi::filter::RawFilter)> {
    oxok_libos::exposed::filter_row_at(id as u32 as usize).filter(|(head, _)| head.id == id)
}

fn filter_table(c: &mut Checks) {
    use oxok_libos::abi::net::FILTER_NONE;
    let Ok(ring) = Ring::new(1) else {
        c.check(false, "ring for the table");
        return;
    };
    let wide = filters::udp(PORT + 10);
    let narrow = filters::udp(PORT + 10).eq32(14 + 12, 0x0a00_0202);
    let (Ok(a), me) = (Filter::install(&ring, &wide, None), oxok_libos::exposed::self_id()) else {
        c.check(false, "a filter for the table");
        return;
    };
    let shown = row(a.id());
    c.check(shown.is_some(), "an installed filter has its row");
    if let Some((head, atoms)) = shown {
        c.expect((head.owner, head.ring, head.refines), (me, ring.id(), FILTER_NONE), "the row's owner, ring, refines");
        // The row shows the filter's atoms, in the kernel's canonical order
        // (a conjunction: the same atoms, maybe reordered).
        let key = |a: &oxok_libos::abi::filter::RawAtom| (a.op, a.size, a.scale, a.offset, a.mask, a.value);
        let (mut shown, mut sent) = (atoms.atoms, wide.raw().atoms);
        shown.sort_unstable_by_key(key);
        sent.sort_unstable_by_key(key);
        c.expect(shown, sent, "the row's atoms are the filter's");
        c.expect(head.atoms as usize, wide.raw().atoms.iter().filter(|a| a.op != 0).count(), "the row's atom count");
    }
    let b = Filter::install(&ring, &narrow, Some(&a));
    c.check(
        b.as_ref().is_ok_and(|b| row(b.id()).is_some_and(|(h, _)| h.refines == a.id())),
        "a refinement's row names it",
    );
    let a_id = a.id();
    drop(a);
    c.check(row(a_id).is_none(), "a removed filter's row is freed");
    c.check(
        b.as_ref().is_ok_and(|b| row(b.id()).is_some_and(|(h, _)| h.refines == FILTER_NONE)),
        "its refinement's row now refines what it refined (nothing)",
    );
}

fn transmit(c: &mut Checks, mac: [u8; 6], child: u64) {
    let Ok(tx) = Tx::new() else {
        c.check(false, "transmit frame");
        return;
    };
    let mut p = [0u8; 128];
    let n = udp_frame(mac, IP, PORT, &mut p);
    c.expect(tx.send(&p[..n]), Err(Error::Denied), "sending without a template");
    let t = TxTemplate { mac, pad: [0; 2], ip: IP, port_lo: PORT, port_hi: PORT + 9 };
    c.expect(net::set_template(0, &t), Ok(()), "a boot program sets its template");
    c.expect(tx.send(&p[..n]), Ok(()), "a packet that fits the template");
    let n2 = udp_frame(mac, IP, PORT + 10, &mut p);
    c.expect(tx.send(&p[..n2]), Err(Error::Denied), "a source port outside the template");
    let n2 = udp_frame(mac, [10, 0, 2, 16], PORT, &mut p);
    c.expect(tx.send(&p[..n2]), Err(Error::Denied), "a spoofed IPv4 source");
    let mut other = mac;
    other[5] ^= 1;
    let n2 = udp_frame(other, IP, PORT, &mut p);
    p[6..12].copy_from_slice(&other);
    c.expect(tx.send(&p[..n2]), Err(Error::Denied), "a spoofed Ethernet source");
    let n2 = udp_frame(mac, IP, PORT, &mut p);
    p[12] = 0x86;
    p[13] = 0xdd;
    c.expect(tx.send(&p[..n2]), Err(Error::Denied), "an unknown Ethernet type");
    // An ARP reply claiming another address.
    let mut req = [0u8; 42];
    req[12..14].copy_from_slice(&[8, 6]);
    req[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    req[38..42].copy_from_slice(&[10, 0, 2, 16]);
    let mut reply = [0u8; 64];
    let spoof = ether::arp_reply(&req, mac, [10, 0, 2, 16], &mut reply).unwrap_or(0);
    c.expect(tx.send(&reply[..spoof]), Err(Error::Denied), "an ARP reply for another address");
    let honest = {
        req[38..42].copy_from_slice(&IP);
        ether::arp_reply(&req, mac, IP, &mut reply).unwrap_or(0)
    };
    c.expect(tx.send(&reply[..honest]), Ok(()), "an ARP reply for our address");
    // Templates only narrow.
    let wider = TxTemplate { port_hi: PORT + 100, ..t };
    c.expect(net::set_template(0, &wider), Err(Error::Denied), "widening our own template");
    c.expect(net::set_template(child, &wider), Err(Error::Denied), "a child's template wider than ours");
    let narrower = TxTemplate { port_lo: PORT + 1, port_hi: PORT + 1, ..t };
    c.expect(net::set_template(child, &narrower), Ok(()), "a narrower template for a child");
    c.expect(
        net::set_template(child, &TxTemplate { ip: [10, 0, 2, 16], ..narrower }),
        Err(Error::Denied),
        "a child's template for another address",
    );
    // Gather lists.
    let slot = tx.frame_slot();
    let piece = |frame_slot, offset, len| oxok_libos::abi::net::TxPiece { frame_slot, offset, len };
    // A spoof written into the frame, sent as a gather: checked all the same.
    let n = udp_frame(mac, [10, 0, 2, 16], PORT, &mut p);
    c.expect(tx.send(&p[..n]), Err(Error::Denied), "a spoof");
    c.expect(
        net::send_pieces(&[piece(slot, 0, 20), piece(slot, 20, (n - 20) as u32)]),
        Err(Error::Denied),
        "a spoof as a gather",
    );
    let n = udp_frame(mac, IP, PORT, &mut p);
    c.expect(tx.send(&p[..n]), Ok(()), "honest again");
    c.expect(net::send_pieces(&[piece(slot, 0, 20), piece(slot, 20, (n - 20) as u32)]), Ok(()), "a two-piece gather");
    c.expect(net::send_pieces(&[piece(slot, 4000, 200)]), Err(Error::Invalid), "a piece past its frame's end");
    c.expect(net::send_pieces(&[piece(EMPTY_SLOT, 0, 60)]), Err(Error::BadCap), "a piece from an empty slot");
    c.expect(net::send_pieces(&[piece(0, 0, 60)]), Err(Error::BadCap), "a piece from an environment capability");
    c.expect(
        net::send_pieces(&[piece(slot, 0, 1000), piece(slot, 0, 1000)]),
        Err(Error::Invalid),
        "a packet over 1514 bytes",
    );
    c.expect(net::send_pieces(&[piece(slot, 0, 6); 9]), Err(Error::Invalid), "more than 8 pieces");
    c.expect(sys::net_send(0xffff_8000_0000_0000, 1).map(|_| ()), Err(Error::BadAddress), "pieces in kernel memory");
}

/// Filters under the template `transmit` left (ports `PORT..=PORT + 9`).
fn receive_bound(c: &mut Checks) {
    let Ok(ring) = Ring::new(1) else {
        c.check(false, "ring");
        return;
    };
    let r = ring.id();
    let ip = u32::from_be_bytes(IP);
    let refused = [
        (filters::udp(PORT + 10), "UDP to a port outside the template"),
        (filters::tcp_listen(80), "TCP to another's port"),
        (filters::ipv4(filters::PROTO_TCP), "all TCP"),
        (filters::Builder::new().eq16(12, 0x0800), "all IPv4"),
        (filters::icmp(filters::ICMP_ECHO_REQUEST, 0x0a00_0210), "ICMP to another address"),
        (filters::ipv4(filters::PROTO_UDP).shift(1, 14, 0x0f, 4).eq16(16, PORT), "a port without the fragment test"),
    ];
    for (f, what) in refused {
        c.expect(install(r, &f, u64::MAX).map(|_| ()), Err(Error::Denied), what);
    }
    let allowed = [
        (filters::udp(PORT + 9), "UDP to its port"),
        (filters::tcp_listen(PORT), "TCP to its port"),
        (filters::icmp(filters::ICMP_ECHO_REQUEST, ip), "ICMP to its address"),
        (filters::arp(), "ARP"),
    ];
    for (f, what) in allowed {
        let installed = install(r, &f, u64::MAX);
        c.expect(installed.map(|_| ()), Ok(()), what);
        if let Ok(slot) = installed {
            let _ = sys::filter_remove(slot);
        }
    }
}
