//! cheetah: the specialised web server (Xok/ExOS's Cheetah, SOSP'97 §7.3).
//!
//! `cheetah [-p PORT] [-r ROOT] [-q] [-c MAXCONN] [--samples] [--exit-idle SECS] [--drop N]`
//!
//! It runs its own passive-open TCP (`crates/cheetah`) on a packet ring
//! (filters: ARP unless an `arpd` answers it, and TCP to PORT, default 80)
//! and checked transmit
//! (template: the NIC's MAC, 10.0.2.15, source port PORT). A response is
//! never copied into a socket buffer: the send queue names bytes of the
//! file cache, which sends them — and sends them again after a loss —
//! straight from the cache's frames by gather lists; every maximum-size
//! segment's checksum was computed when the file entered the cache, the
//! canned response heads are stored with the file, the acknowledgment of a
//! request rides on its response, connection slots are reused, and an HTML
//! page's references enter the cache with it. HTTP (status codes, limits,
//! keep-alive) is `crates/http`'s, as in `httpd`.
//!
//! `-q` turns the access log off; `-c` is the number of connections served
//! at once (default 1024; 16 more slots answer 503; beyond those, RST). `--samples` first
//! writes the sample documents into ROOT (default `/www`). `--exit-idle
//! SECS` ends the server once no connection has been open and no packet
//! has come for SECS seconds after the first connection, printing its
//! counters; `--drop N` loses every N-th data segment on purpose (a test of
//! retransmission from the cache).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod cache;
mod canned;
mod pages;
mod site;

use alloc::string::String;
use oxok_cheetah::{Config, Server};
use oxok_http::Limits;
use oxok_http::samples::{SAMPLES, index_html, sample_byte};
use oxok_libos::abi::net::TxTemplate;
use oxok_libos::fd::IoError;
use oxok_libos::net::stack::ms_to_ticks;
use oxok_libos::net::{self, Filter, Ring, filters};
use oxok_libos::{Args, exposed, fs, println};

use cache::Cache;
use site::{Cheetah, Stream};

oxok_libos::main!(main);

/// Our address on QEMU's user network.
const IP: [u8; 4] = [10, 0, 2, 15];
/// Our maximum segment size (Ethernet).
const MSS: u16 = 1460;
/// Data frames of the packet ring (`ENTRIES_PER_FRAME` packets each).
const RING_FRAMES: usize = 31;
/// Connection slots beyond `-c` that answer 503.
const RESERVE: usize = 16;

struct Opts {
    port: u16,
    root: String,
    log: bool,
    conns: usize,
    samples: bool,
    exit_idle: u64,
    drop_every: u64,
}

fn parse_args(args: &Args) -> Result<Opts, String> {
    let mut o = Opts {
        port: 80,
        root: String::from("/www"),
        log: true,
        conns: 1024,
        samples: false,
        exit_idle: 0,
        drop_every: 0,
    };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().ok_or_else(|| alloc::format!("{a} needs {what}"));
        match a {
            "-p" => o.port = value("a port")?.parse().map_err(|_| String::from("bad port"))?,
            "-r" => o.root = String::from(value("a directory")?),
            "-q" => o.log = false,
            "-c" => o.conns = value("a number")?.parse().map_err(|_| String::from("bad -c"))?,
            "--samples" => o.samples = true,
            "--exit-idle" => o.exit_idle = value("seconds")?.parse().map_err(|_| String::from("bad --exit-idle"))?,
            "--drop" => o.drop_every = value("a number")?.parse().map_err(|_| String::from("bad --drop"))?,
            _ => return Err(alloc::format!("unknown argument {a}")),
        }
    }
    if o.conns == 0 || o.conns > 4096 {
        return Err(String::from("-c must be 1..=4096"));
    }
    Ok(o)
}

fn main(args: Args) -> i32 {
    let opts = match parse_args(&args) {
        Ok(o) => o,
        Err(why) => {
            println!("cheetah: {why}");
            println!("usage: cheetah [-p PORT] [-r ROOT] [-q] [-c MAXCONN] [--samples] [--exit-idle SECS] [--drop N]");
            return 2;
        }
    };
    match serve(&opts) {
        Ok(()) => 0,
        Err(why) => {
            println!("cheetah: {why}");
            1
        }
    }
}

/// Writes the sample documents and an index linking them into `root`.
fn write_samples(root: &str) -> Result<(), IoError> {
    match fs::mkdir(root) {
        Ok(()) | Err(IoError::Exists) => {}
        Err(e) => return Err(e),
    }
    let dir = root.trim_end_matches('/');
    for (name, len) in SAMPLES {
        let data: alloc::vec::Vec<u8> = (0..*len).map(|i| sample_byte(name, i)).collect();
        fs::write_file(&alloc::format!("{dir}/{name}"), &data)?;
    }
    fs::write_file(&alloc::format!("{dir}/index.html"), index_html("Oxok cheetah").as_bytes())
}

fn clock() -> (u64, u64) {
    exposed::clock().map_or((0, 1000), |c| (c.ticks, c.tick_hz.max(1)))
}

fn serve(o: &Opts) -> Result<(), String> {
    if o.samples {
        write_samples(&o.root).map_err(|e| alloc::format!("cannot write samples in {}: {e}", o.root))?;
    }
    let mac = net::mac().map_err(|_| "no NIC")?;
    let template = TxTemplate { mac, pad: [0; 2], ip: IP, port_lo: o.port, port_hi: o.port };
    net::set_template(0, &template).map_err(|_| "template refused")?;
    let ring = Ring::new(RING_FRAMES).map_err(|_| "cannot bind a ring")?;
    // It answers the machine's ARP unless an `arpd` does (replies go to
    // the sender's address: Cheetah itself resolves nothing).
    let _arp = match oxok_libos::fs::locate::neighbour_server() {
        Some(_) => None,
        None => Some(Filter::install(&ring, &filters::arp(), None).map_err(|_| "ARP filter refused")?),
    };
    let _tcp = Filter::install(&ring, &filters::tcp_listen(o.port), None).map_err(|_| "TCP filter refused")?;
    let (now, hz) = clock();
    let cfg = Config {
        mac,
        ip: IP,
        port: o.port,
        mss: MSS,
        max_conns: o.conns + RESERVE,
        serve_conns: o.conns,
        rto_ticks: ms_to_ticks(200),
        rto_max_ticks: ms_to_ticks(5000),
        max_retries: 12, // about 41 s of silence (200 ms doubling to 5 s) before giving up
        idle_ticks: ms_to_ticks(30_000),
        window: 16_384,
        max_pipeline: 8,
        limits: Limits::DEFAULT,
        seed: oxok_libos::time::rdtsc(),
    };
    let mut server: Server<Stream> = Server::new(cfg);
    let mut site = Cheetah::new(Cache::new(&o.root, u32::from(MSS)), ring, o.log, o.drop_every)
        .map_err(|e| alloc::format!("no memory for the cache: {e}"))?;
    site.hz = hz;
    site.now = now;
    println!("cheetah: serving {} on 10.0.2.15:{}", o.root, o.port);

    let mut last_packet = 0u64; // 0: no connection yet
    loop {
        let seen = site.ring.produced();
        site.drain();
        while let Some(pkt) = site.backlog.pop_front() {
            let (now, _) = clock();
            site.now = now;
            server.input(&pkt, now, &mut site);
            site.recycle(pkt);
            last_packet = now;
            site.drain();
        }
        let (now, _) = clock();
        site.now = now;
        server.tick(now, &mut site);
        if o.exit_idle != 0
            && last_packet != 0
            && server.open() == 0
            && now.saturating_sub(last_packet) >= o.exit_idle * hz
        {
            break;
        }
        if !site.backlog.is_empty() {
            continue;
        }
        let wake = server.next_deadline().unwrap_or(u64::MAX).min(now + hz).max(now + 1);
        site.ring.wait(seen, wake).map_err(|_| "wait failed")?;
    }
    server.shutdown(&mut site);
    report(&server, &site, site.ring.dropped());
    Ok(())
}

fn report(server: &Server<Stream>, site: &Cheetah, ring_dropped: u64) {
    let st = server.stats();
    let ss = site.stats;
    let (files, pages) = site.cache.usage();
    println!(
        "cheetah: {} connections, {} requests, {} errors, {} busy (503), {} refused (RST), {} reset by clients, {} given up \
         ({} unanswered)",
        st.accepted, st.requests, st.errors, st.unavailable, st.refused_full, st.resets, st.aborted, st.unanswered
    );
    println!(
        "cheetah: {} data segments, {} with a piggybacked ACK, {} bare ACKs, {} retransmitted, {} timeouts",
        st.data_segments, st.piggybacked_acks, st.bare_acks, st.retransmits, st.timeouts
    );
    println!(
        "cheetah: checksums {} stored, {} computed; cache {} files in {} pages, {} loaded, {} by grouping",
        ss.stored_sums, ss.computed_sums, files, pages, site.cache.loaded, site.cache.grouped
    );
    println!(
        "cheetah: {} frames sent ({} bytes), {} not sent (device busy), {} dropped on purpose, ring drops {}, \
         {} packets through the backlog ({} dropped), quit",
        ss.frames_sent, ss.bytes_sent, st.send_failures, ss.dropped, ring_dropped, ss.backlogged, ss.backlog_drops
    );
}
