//! httpd: an HTTP/1.0 and 1.1 file server on the libOS's sockets — what
//! any program gets, with no tricks (issue 14's baseline beside Cheetah).
//!
//! `httpd [-p PORT] [-r ROOT] [-q] [-c MAXCONN] [--samples] [--exit-idle SECS]`
//!
//! GET and HEAD of files under ROOT (default `/www`; a directory serves its
//! `index.html`), keep-alive (HTTP/1.1 by default, 1.0 when asked),
//! `Content-Length`, `Content-Type` by extension, `Last-Modified` and 304
//! for `If-Modified-Since`, and 400/404/405/413/414/431/501/505 as
//! `oxok_http` decides. One access-log line per response (`-q`: none).
//! PORT defaults to 80 (`cargo xtask run --net` forwards host 8080 to it).
//! `--samples` first writes `index.html`, `1k.txt`, `10k.txt` and
//! `100k.bin` into ROOT. With no file server named in the environment
//! httpd starts its own.
//!
//! One loop over non-blocking sockets and `socket::poll`: at most MAXCONN
//! (default 128) connections; at the limit a new one closes the connection
//! idle longest (no request begun), and when none is idle it is answered
//! 503 and closed. A
//! connection idle for [`IDLE_SECS`] between requests, or taking more than
//! [`REQUEST_SECS`] to send one request, is closed. With `--exit-idle`,
//! the server ends once it has served someone and then had no connection
//! for SECS seconds, printing its counts.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod conn;
mod files;

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use conn::{Conn, Phase};
use oxok_http::Status;
use oxok_libos::fd::IoError;
use oxok_libos::net::socket::{self, Kind, Ready, SockAddr, Socket};
use oxok_libos::net::stack::ms_to_ticks;
use oxok_libos::time::ticks;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

/// Seconds a kept-alive connection may wait for its next request.
const IDLE_SECS: u64 = 15;
/// Seconds a client may take to send one whole request.
const REQUEST_SECS: u64 = 30;
/// The listening socket's backlog.
const BACKLOG: usize = 32;

/// What the command line says.
pub struct Config {
    pub port: u16,
    pub root: String,
    pub log: bool,
    pub max_conns: usize,
    pub samples: bool,
    pub exit_idle: u64,
}

/// Counts for the last line.
#[derive(Default)]
pub struct Stats {
    pub conns: u64,
    pub refused: u64,
    pub timed_out: u64,
    pub evicted: u64,
    pub broken: u64,
    pub bytes: u64,
    /// Responses by status code.
    pub by_status: Vec<(u16, u64)>,
}

impl Stats {
    pub fn count(&mut self, s: Status) {
        let code = s.code();
        match self.by_status.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => {
                self.by_status.push((code, 1));
                self.by_status.sort_unstable();
            }
        }
    }
}

fn parse_args(args: &Args) -> Result<Config, String> {
    let mut cfg =
        Config { port: 80, root: String::from("/www"), log: true, max_conns: 128, samples: false, exit_idle: 0 };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().ok_or_else(|| alloc::format!("{a} needs {what}"));
        match a {
            "-p" => cfg.port = value("a port")?.parse().map_err(|_| String::from("bad port"))?,
            "-r" => cfg.root = String::from(value("a directory")?),
            "-q" => cfg.log = false,
            "-c" => cfg.max_conns = value("a count")?.parse().map_err(|_| String::from("bad count"))?,
            "--samples" => cfg.samples = true,
            "--exit-idle" => cfg.exit_idle = value("seconds")?.parse().map_err(|_| String::from("bad seconds"))?,
            _ => return Err(alloc::format!("unknown argument {a}")),
        }
    }
    if cfg.port == 0 || cfg.max_conns == 0 {
        return Err(String::from("port and connection limit must be positive"));
    }
    Ok(cfg)
}

fn main(args: Args) -> i32 {
    let cfg = match parse_args(&args) {
        Ok(c) => c,
        Err(e) => {
            println!("httpd: {e}");
            println!("usage: httpd [-p PORT] [-r ROOT] [-q] [-c MAXCONN] [--samples] [--exit-idle SECS]");
            return 2;
        }
    };
    let own_fsd = match oxok_libos::fs::server_stats() {
        Ok(_) => None,
        Err(_) => match oxok_libos::fs::spawn_server() {
            Ok(c) => Some(c),
            Err(e) => {
                println!("httpd: no file server ({e})");
                return 1;
            }
        },
    };
    let r = run(&cfg);
    if let Some(c) = own_fsd {
        let _ = oxok_libos::fs::stop_server(c);
    }
    match r {
        Ok(stats) => {
            let codes: Vec<String> = stats.by_status.iter().map(|(c, n)| alloc::format!("{c}x{n}")).collect();
            println!(
                "httpd: exit: {} connections, {} refused, {} timed out, {} evicted, {} broken, {} bytes sent, responses {}",
                stats.conns,
                stats.refused,
                stats.timed_out,
                stats.evicted,
                stats.broken,
                stats.bytes,
                codes.join(" ")
            );
            0
        }
        Err(e) => {
            println!("httpd: {e}");
            1
        }
    }
}

fn run(cfg: &Config) -> Result<Stats, String> {
    if cfg.samples {
        files::write_samples(&cfg.root).map_err(|e| alloc::format!("cannot write samples in {}: {e}", cfg.root))?;
    }
    let listener = Socket::new(Kind::Tcp).map_err(|e| alloc::format!("no network: {e}"))?;
    listener.bind(SockAddr::new([0; 4], cfg.port)).map_err(|e| alloc::format!("bind: {e}"))?;
    listener.listen(BACKLOG).map_err(|e| alloc::format!("listen on port {}: {e}", cfg.port))?;
    listener.set_nonblocking(true);
    let local = listener.local_addr().map_err(|e| alloc::format!("{e}"))?;
    println!("httpd: serving {} on {local}", cfg.root);

    let mut cache = files::Cache::default();
    let mut stats = Stats::default();
    let mut conns: Vec<Conn> = Vec::new();
    let idle_ticks = ms_to_ticks(IDLE_SECS * 1000);
    let request_ticks = ms_to_ticks(REQUEST_SECS * 1000);
    let mut empty_since = 0u64;
    loop {
        let now = ticks();
        // Time limits.
        for c in conns.iter_mut() {
            let slow = c.began != 0 && now.saturating_sub(c.began) > request_ticks;
            let idle = now.saturating_sub(c.last) > idle_ticks;
            if idle || (c.phase == Phase::Reading && slow) {
                stats.timed_out += 1;
                c.phase = Phase::Done;
            }
        }
        conns.retain(|c| c.phase != Phase::Done);
        if conns.is_empty() {
            if empty_since == 0 {
                empty_since = now;
            }
            if cfg.exit_idle != 0 && stats.conns > 0 && now - empty_since >= ms_to_ticks(cfg.exit_idle * 1000) {
                break;
            }
        } else {
            empty_since = 0;
        }

        let mut set: Vec<(&Socket, Ready)> = Vec::with_capacity(conns.len() + 1);
        set.push((&listener, Ready { read: true, write: false, hangup: false }));
        for c in &conns {
            set.push((&c.sock, c.interest()));
        }
        let ready = socket::poll(&set, Some(1000)).map_err(|e| alloc::format!("poll: {e}"))?;
        drop(set);
        let now = ticks();
        for (c, r) in conns.iter_mut().zip(ready.iter().skip(1)) {
            if r.write {
                c.on_write(now, cfg, &mut cache, &mut stats);
            } else if r.read {
                c.on_read(now, cfg, &mut cache, &mut stats);
            } else if r.hangup {
                c.phase = Phase::Done;
            }
        }
        if ready.first().is_some_and(|r| r.read) {
            accept_all(&listener, &mut conns, cfg, &mut stats, now);
        }
    }
    drop(conns);
    drop(listener);
    socket::drain(2000);
    Ok(stats)
}

/// Takes every completed connection; over the limit, answers 503 and
/// closes.
fn accept_all(listener: &Socket, conns: &mut Vec<Conn>, cfg: &Config, stats: &mut Stats, now: u64) {
    loop {
        match listener.accept() {
            Ok((sock, peer)) => {
                stats.conns += 1;
                if conns.len() >= cfg.max_conns {
                    // Make room by closing the connection idle longest (no
                    // request begun, nothing to send); if none, refuse.
                    let oldest = conns.iter().enumerate().filter(|(_, c)| c.idle()).min_by_key(|(_, c)| c.last);
                    match oldest.map(|(i, _)| i) {
                        Some(i) => {
                            conns.swap_remove(i);
                            stats.evicted += 1;
                        }
                        None => {
                            refuse(&sock, stats);
                            continue;
                        }
                    }
                }
                conns.push(Conn::new(sock, peer, now));
            }
            Err(IoError::WouldBlock) => return,
            Err(e) => {
                println!("httpd: accept: {e}");
                return;
            }
        }
    }
}

fn refuse(sock: &Arc<Socket>, stats: &mut Stats) {
    let mut out = Vec::new();
    oxok_http::response::error(&mut out, Status::Unavailable, oxok_http::response::Connection::Close, None);
    sock.set_nonblocking(true);
    // Corked: the answer and the FIN leave in one segment.
    let _ = sock.send_more(&out);
    let _ = sock.shutdown(socket::Shutdown::Write);
    stats.refused += 1;
    stats.count(Status::Unavailable);
}
