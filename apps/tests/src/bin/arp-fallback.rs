//! arp-fallback: a stack outlives the `arpd` it took ARP from
//! (`net-arpd-ends` scenario; run alone on a machine with a NIC).
//!
//! 1. It starts `arpd`, maps its table (`net::neigh::Table::attach`) and
//!    keeps the mapping past the server's end, as a forked child keeps its
//!    parent's: the ended server's table is not live and answers nothing.
//!    It starts another; attaching again must map the new server's page,
//!    not keep the ended one's.
//! 2. It opens a socket, whose stack takes ARP from the second `arpd`'s
//!    table (no ARP filter of its own), and ends that `arpd` too: within
//!    the stack's retry period the stack notices the table's server is
//!    gone and takes the ARP filter itself (the filter table shows it).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::Error;
use oxok_libos::abi::net::FILTER_ROWS_MAX;
use oxok_libos::exec::{self, Child};
use oxok_libos::net::neigh::{OP_TABLE, TABLE_VA, Table};
use oxok_libos::net::socket::{Kind, SockAddr, Socket, pump};
use oxok_libos::net::{self, filters};
use oxok_libos::{Args, exposed, pct, println, sys, time};
use oxok_neigh::table::Answer;
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Longer than the stack's ARP retry period (one second).
const RETRY_WAIT_MS: u64 = 1_500;

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("arp-fallback");
    // The machine's address and every port (its UDP socket receives on
    // one: a filter must lie within the template, as a sent packet must).
    let Ok(mac) = net::mac() else {
        println!("arp-fallback: FAIL no NIC");
        return 1;
    };
    let t = oxok_libos::abi::net::TxTemplate { mac, pad: [0; 2], ip: [10, 0, 2, 15], port_lo: 0, port_hi: u16::MAX };
    c.expect(net::set_template(0, &t), Ok(()), "a template of my own");
    let Some(first) = start(&mut c) else { return c.finish() };
    match Table::attach() {
        Ok(t) => {
            c.check(owner_of_table() == Some(first.id), "the first server's page");
            c.check(t.lookup([10, 0, 2, 99]) == Answer::Unknown, "the first table answers");
            // `t` keeps its page mapped past its server's end, as a fork
            // child's copy would.
            end(&mut c, first);
            c.check(!t.live(), "an ended server's table is not live");
            c.check(t.lookup([10, 0, 2, 99]) == Answer::NotATable, "an ended server's table answers nothing");
        }
        Err(e) => {
            println!("arp-fallback: attach: {e:?}");
            c.check(false, "the first table");
            end(&mut c, first);
        }
    }
    c.check(oxok_libos::fs::locate::neighbour_server().is_none(), "no server once it ended");
    let Some(second) = start(&mut c) else { return c.finish() };
    let table = Table::attach();
    c.check(table.as_ref().is_ok_and(Table::live), "the second table attached and live");
    c.check(owner_of_table() == Some(second.id), "the second server's page, not the ended one's");

    // A stack on the second server's table.
    let sock = Socket::new(Kind::Udp);
    let bound = sock.as_ref().is_ok_and(|s| s.bind(SockAddr::new([0; 4], 9999)).is_ok());
    c.check(bound, "a socket bound");
    c.check(!holds_arp(), "the stack takes ARP from the table, not the filter");
    end(&mut c, second);
    let _ = time::sleep_ms(RETRY_WAIT_MS);
    pump();
    c.check(holds_arp(), "the stack took the ARP filter once its server ended");
    drop(sock);
    c.finish()
}

/// Starts `arpd` and waits until it hands out its table.
fn start(c: &mut Checks) -> Option<Child> {
    match exec::spawn("arpd", &["arpd"]) {
        Ok(child) => {
            // Asked for something else, a serving arpd says `Invalid`
            // (this leaves the table's address alone).
            let mut msg = [0u64; pct::WORDS];
            msg[0] = OP_TABLE ^ 1;
            let serving = (0..200).any(|_| {
                let ok = pct::call(child.id, &msg).is_ok_and(|(_, r)| r[0] == Error::Invalid.code());
                if !ok {
                    let _ = time::sleep_ms(10);
                }
                ok
            });
            c.check(serving, "arpd serves its table");
            Some(child)
        }
        Err(e) => {
            println!("arp-fallback: spawn arpd: {e}");
            c.check(false, "arpd started");
            None
        }
    }
}

/// Ends `arpd` (its creator destroys it: no zombie).
fn end(c: &mut Checks, child: Child) {
    c.check(sys::env_destroy(child.slot).is_ok(), "arpd ended");
}

/// The environment owning the frame mapped at the table's address.
fn owner_of_table() -> Option<u64> {
    exposed::frame_of(TABLE_VA).and_then(exposed::frame_entry).map(|f| u64::from(f.owner))
}

/// True if this process owns an installed ARP filter (the filter table).
fn holds_arp() -> bool {
    let me = exposed::self_id();
    let arp = filters::arp().raw();
    (0..FILTER_ROWS_MAX).filter_map(exposed::filter_row_at).any(|(row, raw)| row.owner == me && raw == arp)
}
