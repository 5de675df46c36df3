//! hostile-arp: the shared neighbour table attacked by one of its readers
//! (`net-arpd-hostile` scenario, beside `arpd`).
//!
//! The table is `arpd`'s page; a reader gets a capability to read it and
//! nothing more: it cannot map it writable, derive a writable capability
//! from it, or ask `arpd` anything but the table. It cannot feed `arpd` a
//! lie either: an ARP packet naming another sender (its Ethernet or IPv4
//! address) is refused by the transmit template before it leaves, and
//! nothing this machine sends comes back to `arpd`'s ring. Through it all
//! the table keeps answering (the libOS's resolver attaches and reads it).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::pte;
use oxok_libos::abi::net::TxTemplate;
use oxok_libos::abi::{Error, cap_kind, rights};
use oxok_libos::net::neigh::{self, OP_TABLE, TABLE_VA};
use oxok_libos::net::{self, Tx};
use oxok_libos::{Args, pct, println, sys};
use oxok_neigh::arp::{self, Arp, REPLY};
use oxok_neigh::table::Answer;
use oxok_tests::Checks;
use oxok_tests::cpu::wait_peer;

oxok_libos::main!(main);

const GATEWAY: [u8; 4] = [10, 0, 2, 2];
/// Where this program maps the table itself (not the resolver's place).
const MINE: u64 = TABLE_VA + 16 * 4096;

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-arp");
    let Some(arpd) = wait_peer("arpd", 5_000) else {
        println!("hostile-arp: no arpd");
        return 1;
    };
    // Asked for anything else, arpd refuses (once it serves at all).
    let mut msg = [0u64; pct::WORDS];
    msg[0] = OP_TABLE ^ 1;
    let mut reply = call(arpd, &msg);
    for _ in 0..100 {
        if reply != Err(Error::Denied) {
            break;
        }
        let _ = oxok_libos::time::sleep_ms(10);
        reply = call(arpd, &msg);
    }
    c.expect(reply.map(|r| r[0]), Ok(Error::Invalid.code()), "another request refused");
    // The table: a capability to read it, and nothing more.
    msg[0] = OP_TABLE;
    let Ok(r) = call(arpd, &msg) else {
        println!("hostile-arp: FAIL no table");
        return 1;
    };
    c.expect(r[0], 0, "the table handed out");
    let slot = r[1];
    let info = sys::cap_info(slot);
    c.check(info.is_ok_and(|[k, _, r]| k == cap_kind::FRAME && r == rights::READ), "a read-only frame capability");
    c.expect(sys::page_map(0, slot, MINE, pte::WRITABLE | pte::NO_EXECUTE), Err(Error::Denied), "mapped writable");
    c.expect(sys::cap_derive(slot, rights::READ | rights::WRITE).map(|_| ()), Err(Error::Denied), "write derived");
    c.check(sys::page_map(0, slot, MINE, pte::NO_EXECUTE).is_ok(), "mapped read-only");
    let _ = sys::page_unmap(0, MINE);
    let _ = sys::cap_drop(slot);
    // Lies in ARP packets do not leave: another sender's addresses.
    let Ok(mac) = net::mac() else {
        println!("hostile-arp: FAIL no NIC");
        return 1;
    };
    let t = TxTemplate { mac, pad: [0; 2], ip: [10, 0, 2, 15], port_lo: 0, port_hi: 0 };
    c.check(net::set_template(0, &t).is_ok(), "a template of its own");
    let Ok(tx) = Tx::new() else {
        println!("hostile-arp: FAIL no transmit frame");
        return 1;
    };
    let mut frame = [0u8; 64];
    let lie = |sha, spa| Arp { op: REPLY, sha, spa, tha: t.mac, tpa: t.ip };
    let mut send = |m: Arp| {
        let n = arp::build(&mut frame, [0xff; 6], &m).unwrap_or(0);
        // Ethernet's shortest frame: padded.
        tx.send(&frame[..n.max(60)])
    };
    c.expect(send(lie(t.mac, GATEWAY)), Err(Error::Denied), "a reply claiming the gateway's address");
    c.expect(send(lie([2, 0, 0, 0, 0, 66], t.ip)), Err(Error::Denied), "a reply from another Ethernet address");
    // And the table still answers its readers.
    match neigh::Table::attach() {
        Ok(table) => {
            c.check(table.lookup([10, 0, 2, 99]) == Answer::Unknown, "nobody at 10.0.2.99");
            c.check(!matches!(table.lookup(GATEWAY), Answer::At(m) if m == t.mac), "the gateway is not us");
        }
        Err(e) => {
            println!("hostile-arp: attach failed: {e:?}");
            c.check(false, "the table attaches");
        }
    }
    c.finish()
}

fn call(target: u64, msg: &pct::Msg) -> Result<pct::Msg, Error> {
    pct::call(target, msg).map(|(_, r)| r)
}
