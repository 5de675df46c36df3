//! icmpd: answers ICMP echo requests (`ping`) to this machine's address.
//! In an exokernel the kernel answers nothing; this daemon owns the filter
//! for echo requests to the address and answers through checked transmit.
//!
//! 1. Its address is its transmit template's (inherited from the shell;
//!    a boot program without one sets its NIC's MAC and 10.0.2.15).
//! 2. Binds a ring in frames of its own and installs one filter on it:
//!    `ether.type=0x0800 ip.proto=icmp ip.dst=ADDRESS +ihl icmp.type=8`
//!    (`oxok_dpf::build::icmp`). Like anyone's, it is refused if it could
//!    accept a packet another filter accepts: a second icmpd, or a program
//!    holding all ICMP, makes it end with status 1. Echo replies to the
//!    address stay free for `ping`; ARP is not its business (whoever owns
//!    the ARP filter answers it, or the peer knows the MAC).
//! 3. Sleeps on the ring's predicate, and answers each request
//!    (`oxok_icmpecho::answer`: checksums, type, sender, fragments checked;
//!    the reply echoes identifier, sequence number and data) to the
//!    sender's MAC; counts what it answered and what it refused.
//! 4. `SIGUSR1` prints the counts (`icmpd: N echo requests answered, M
//!    refused, U unsent, D dropped`: refused by the checks, replies the
//!    kernel did not take, and — from the kernel's ring counters — requests
//!    lost to a full ring); it runs until a signal ends it.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::Error;
use oxok_libos::abi::net::PACKET_MAX;
use oxok_libos::net::{self, Filter, Ring, Tx, filters};
use oxok_libos::{Args, println, signal};

oxok_libos::main!(main);

/// The address a boot program without a template takes.
const DEFAULT_IP: [u8; 4] = [10, 0, 2, 15];

static ANSWERED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);
/// Replies the kernel would not take (every transmit buffer busy too long).
static UNSENT: AtomicU64 = AtomicU64::new(0);
/// The ring's number, for the report's drop count (`u64::MAX`: none yet).
static RING: AtomicU64 = AtomicU64::new(u64::MAX);

fn main(_args: Args) -> i32 {
    match serve() {
        Ok(()) => 0,
        Err(why) => {
            println!("icmpd: {why}");
            1
        }
    }
}

/// The `SIGUSR1` handler: the counts so far.
fn report(_sig: i32) {
    let ring = RING.load(Ordering::Relaxed);
    let dropped = oxok_libos::exposed::ring_row(ring).map_or(0, |r| r.dropped);
    println!(
        "icmpd: {} echo requests answered, {} refused, {} unsent, {dropped} dropped",
        ANSWERED.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
        UNSENT.load(Ordering::Relaxed)
    );
}

fn serve() -> Result<(), &'static str> {
    let (mac, ip) = net::address_or(DEFAULT_IP).map_err(|e| match e {
        Error::NotFound => "no NIC",
        _ => "template refused",
    })?;
    let [a, b, c, d] = ip;
    let mut ring = Ring::new(4).map_err(|_| "cannot bind a ring")?;
    let filter = filters::icmp(filters::ICMP_ECHO_REQUEST, u32::from_be_bytes(ip));
    let _echo = Filter::install(&ring, &filter, None)
        .map_err(|_| "the filter for echo requests was refused: another program takes them")?;
    RING.store(ring.id(), Ordering::Relaxed);
    signal::set_handler(signal::SIGUSR1, report).map_err(|_| "cannot handle SIGUSR1")?;
    let tx = Tx::new().map_err(|_| "no transmit frame")?;
    println!("icmpd: answering echo requests to {a}.{b}.{c}.{d}");
    let mut packet = [0u8; PACKET_MAX];
    let mut reply = [0u8; PACKET_MAX];
    loop {
        let seen = ring.produced();
        while let Some(len) = ring.recv(&mut packet) {
            match oxok_icmpecho::answer(&packet[..len.min(PACKET_MAX)], mac, ip, &mut reply) {
                Ok(n) => {
                    let count = if tx.send_retrying(&reply[..n], 1000).is_ok() { &ANSWERED } else { &UNSENT };
                    count.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    REFUSED.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        ring.wait(seen, 0).map_err(|_| "wait failed")?;
    }
}
