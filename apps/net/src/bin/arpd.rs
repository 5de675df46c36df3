//! arpd [--while-others]: the machine's ARP, for every network stack on it.
//!
//! Filters may not overlap, so one program receives the machine's ARP
//! packets. `arpd` is that program, and shares what it hears (ExOS kept
//! its ARP table in shared memory the same way):
//!
//! 1. Its address is its transmit template's (inherited from the shell; a
//!    boot program without one sets its NIC's MAC and 10.0.2.15).
//! 2. Binds a ring and installs the ARP filter (`ether.type=0x0806`); if
//!    another program owns ARP it ends with status 1.
//! 3. Keeps the neighbour table (`oxok_neigh::table`) in a page it owns,
//!    mapped writable only here. Every stack that finds it (`fs::locate`:
//!    an ancestor's, or a boot program) asks once by protected control
//!    transfer (`net::neigh::OP_TABLE`) and gets a read-only capability
//!    for the page (`pct_grant`, read only: nobody else can write it).
//! 4. Sleeps on the ring's predicate; answers every request for its
//!    address to the sender, and learns every sender (requests and
//!    replies — the replies to the requests the stacks send themselves).
//! 5. `SIGUSR1` prints its counts (`arpd: N requests answered, M
//!    neighbours learned, T tables handed out, D dropped`). It runs until a
//!    signal ends it, or, with `--while-others`, until it is the only
//!    environment left (for boot-time tests).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::net::PACKET_MAX;
use oxok_libos::abi::{ANY_FRAME, ENV_FREE, ENV_ZOMBIE, Error, rights};
use oxok_libos::net::neigh::{OP_TABLE, SERVER_VA};
use oxok_libos::net::{self, Filter, Ring, Tx, filters};
use oxok_libos::rt::page::SharedPage;
use oxok_libos::time::ticks;
use oxok_libos::{Args, exposed, pct, println, signal, sys};
use oxok_neigh::arp;
use oxok_neigh::table::Writer;

oxok_libos::main!(main);

/// The address a boot program without a template takes.
const DEFAULT_IP: [u8; 4] = [10, 0, 2, 15];
/// How often `--while-others` looks whether anyone else is left, in
/// milliseconds.
const LOOK_MS: u64 = 100;

static ANSWERED: AtomicU64 = AtomicU64::new(0);
static LEARNED: AtomicU64 = AtomicU64::new(0);
static GRANTED: AtomicU64 = AtomicU64::new(0);
/// The ring's number, for the report's drop count (`u64::MAX`: none yet).
static RING: AtomicU64 = AtomicU64::new(u64::MAX);
/// The capability slot of the table's frame (`u64::MAX`: none yet).
static TABLE: AtomicU64 = AtomicU64::new(u64::MAX);

fn main(args: Args) -> i32 {
    let while_others = args.get(1) == Some("--while-others");
    match serve(while_others) {
        Ok(()) => {
            report(0);
            0
        }
        Err(why) => {
            println!("arpd: {why}");
            1
        }
    }
}

/// The `SIGUSR1` handler (and the last words): the counts so far.
fn report(_sig: i32) {
    let ring = RING.load(Ordering::Relaxed);
    let dropped = exposed::ring_row(ring).map_or(0, |r| r.dropped);
    println!(
        "arpd: {} requests answered, {} neighbours learned, {} tables handed out, {dropped} dropped",
        ANSWERED.load(Ordering::Relaxed),
        LEARNED.load(Ordering::Relaxed),
        GRANTED.load(Ordering::Relaxed),
    );
}

/// A stack's request for the table: a read-only capability for its page.
fn hand_out(_caller: u64, _sync: bool, msg: &mut pct::Msg) {
    let table = TABLE.load(Ordering::Acquire);
    let result = if msg[0] != OP_TABLE {
        Err(Error::Invalid)
    } else if table == u64::MAX {
        Err(Error::WouldBlock)
    } else {
        sys::pct_grant(table, rights::READ).map(|[slot]| slot)
    };
    *msg = [0; pct::WORDS];
    match result {
        Ok(slot) => {
            GRANTED.fetch_add(1, Ordering::Relaxed);
            msg[1] = slot;
        }
        Err(e) => msg[0] = e.code(),
    }
}

/// The table's page: a fresh frame of ours, mapped writable only here.
fn table_page() -> Result<(u64, SharedPage), &'static str> {
    let [slot, _] = sys::frame_alloc(ANY_FRAME).map_err(|_| "no frame for the table")?;
    if sys::page_map(0, slot, SERVER_VA, pte::WRITABLE | pte::NO_EXECUTE).is_err() {
        let _ = sys::frame_free(slot);
        return Err("cannot map the table");
    }
    let page = SharedPage::writable(SERVER_VA).ok_or("the table is not mapped")?;
    Ok((slot, page))
}

fn serve(while_others: bool) -> Result<(), &'static str> {
    let (mac, ip) = net::address_or(DEFAULT_IP).map_err(|e| match e {
        Error::NotFound => "no NIC",
        _ => "template refused",
    })?;
    let [a, b, c, d] = ip;
    let mut ring = Ring::new(2).map_err(|_| "cannot bind a ring")?;
    let _arp = Filter::install(&ring, &filters::arp(), None)
        .map_err(|_| "the ARP filter was refused: another program owns ARP")?;
    RING.store(ring.id(), Ordering::Relaxed);
    let (slot, page) = table_page()?;
    let table = Writer::format(page.words()).ok_or("the table page is too small")?;
    TABLE.store(slot, Ordering::Release);
    const _: () = assert!(oxok_neigh::table::WORDS as u64 * 8 == PAGE_SIZE);
    signal::set_handler(signal::SIGUSR1, report).map_err(|_| "cannot handle SIGUSR1")?;
    pct::serve(hand_out).map_err(|_| "cannot serve")?;
    let tx = Tx::new().map_err(|_| "no transmit frame")?;
    println!("arpd: answering ARP for {a}.{b}.{c}.{d}, sharing what it hears");
    let mut packet = [0u8; PACKET_MAX];
    let mut reply = [0u8; PACKET_MAX];
    loop {
        let seen = ring.produced();
        while let Some(len) = ring.recv(&mut packet) {
            let p = &packet[..len.min(PACKET_MAX)];
            let Some(m) = arp::parse(p) else { continue };
            if table.learn(m.spa, m.sha) {
                LEARNED.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(n) = arp::answer(p, mac, ip, &mut reply)
                && tx.send_retrying(&reply[..n], 1000).is_ok()
            {
                ANSWERED.fetch_add(1, Ordering::Relaxed);
            }
        }
        if while_others && alone() {
            return Ok(());
        }
        let until = if while_others { ticks() + oxok_libos::time::ms_to_ticks(LOOK_MS) } else { 0 };
        ring.wait(seen, until).map_err(|_| "wait failed")?;
    }
}

/// True when no other environment is alive.
fn alone() -> bool {
    let me = exposed::self_id();
    !exposed::env_rows().any(|r| u64::from(r.id) != me && r.id != 0 && r.status != ENV_FREE && r.status != ENV_ZOMBIE)
}
