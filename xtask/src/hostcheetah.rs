//! The host side of the Cheetah scenarios: an HTTP client over the
//! forwarded port that checks every byte of the sample documents (the same
//! function of name and offset the guest wrote them with,
//! `oxok_http::samples`), and the robustness drivers.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use crate::hosthttp::connect;
use oxok_http::samples::{SAMPLES, sample_byte};

/// A parsed response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads one response from `s` (`head_only`: a `HEAD` or 304, no body).
fn read_reply(s: &mut TcpStream, head_only: bool) -> Result<Reply, String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(0) => return Err(format!("connection closed after {} bytes of head", head.len())),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("reading the head: {e}")),
        }
        if head.len() > 8192 {
            return Err("head too long".into());
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.get(9..12).and_then(|c| c.parse().ok()).ok_or_else(|| format!("bad status line: {head:?}"))?;
    let mut r = Reply { status, head, body: Vec::new() };
    if !head_only && status != 304 {
        let len: usize = r.header("content-length").and_then(|v| v.parse().ok()).ok_or("no Content-Length")?;
        r.body = vec![0; len];
        s.read_exact(&mut r.body).map_err(|e| format!("reading {len} bytes of body: {e}"))?;
    }
    Ok(r)
}

/// One request on a new connection; the reply, and whether the server
/// then closed the connection.
fn exchange(port: u16, req: &[u8], head_only: bool) -> Result<(Reply, bool), String> {
    let start = Instant::now();
    let mut s = connect(port)?;
    // Where and when, to find the connection in a capture (`OXOK_PCAP`).
    let local = s.local_addr().map_or(0, |a| a.port());
    s.write_all(req).map_err(|e| format!("send: {e}"))?;
    let r = read_reply(&mut s, head_only)
        .map_err(|e| format!("{e} (from port {local}, after {:.1} s)", start.elapsed().as_secs_f64()))?;
    let mut rest = Vec::new();
    let closed = s.read_to_end(&mut rest).is_ok() && rest.is_empty();
    Ok((r, closed))
}

fn sample(name: &str) -> Vec<u8> {
    let len = SAMPLES.iter().find(|(n, _)| *n == name).map_or(0, |(_, l)| *l);
    (0..len).map(|i| sample_byte(name, i)).collect()
}

/// Waits until the server answers (the guest may still be booting): the
/// index page first, so its links enter the cache with it (grouping).
fn wait_up(port: u16) -> Result<u32, String> {
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut tries = 0;
    loop {
        tries += 1;
        match exchange(port, b"GET / HTTP/1.0\r\n\r\n", false) {
            Ok((r, _)) if r.status == 200 => return Ok(tries),
            Ok((r, _)) => return Err(format!("first request: status {}", r.status)),
            Err(e) if Instant::now() > deadline => return Err(format!("server never answered: {e}")),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

fn check_sample(r: &Reply, name: &str) -> Result<(), String> {
    if r.status != 200 {
        return Err(format!("{name}: status {}", r.status));
    }
    if r.body != sample(name) {
        return Err(format!("{name}: body differs ({} bytes)", r.body.len()));
    }
    Ok(())
}

/// HTTP/1.0 GETs of 1 KB, 10 KB and 100 KB (each a connection the server
/// closes), keep-alive GETs, HEAD, 304 and index.html, every byte checked.
pub(crate) fn serve(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    let tries = wait_up(port)?;
    let mut n = 0;
    for _ in 0..3 {
        for (name, _) in SAMPLES {
            let (r, closed) = exchange(port, format!("GET /{name} HTTP/1.0\r\n\r\n").as_bytes(), false)?;
            check_sample(&r, name)?;
            if !closed || r.header("connection") != Some("close") {
                return Err(format!("{name}: HTTP/1.0 connection not closed"));
            }
            n += 1;
        }
    }
    // Keep-alive: HTTP/1.1 and HTTP/1.0 with keep-alive, several on one connection.
    let mut s = connect(port)?;
    for round in 0..2 {
        for (name, _) in SAMPLES {
            let req = if round == 0 {
                format!("GET /{name} HTTP/1.1\r\nHost: oxok\r\n\r\n")
            } else {
                format!("GET /{name} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            };
            s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
            let r = read_reply(&mut s, false)?;
            check_sample(&r, name)?;
            if r.header("connection") != Some("keep-alive") {
                return Err(format!("{name}: not kept alive"));
            }
            n += 1;
        }
    }
    // Pipelined: three requests in one write.
    let mut req = String::new();
    for (name, _) in SAMPLES {
        req.push_str(&format!("GET /{name} HTTP/1.1\r\nHost: oxok\r\n\r\n"));
    }
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    for (name, _) in SAMPLES {
        check_sample(&read_reply(&mut s, false)?, name)?;
        n += 1;
    }
    // HEAD: the head of a GET, no body.
    s.write_all(b"HEAD /10k.txt HTTP/1.1\r\nHost: oxok\r\n\r\n").map_err(|e| e.to_string())?;
    let h = read_reply(&mut s, true)?;
    if h.status != 200 || h.header("content-length") != Some("10240") {
        return Err(format!("HEAD: {:?}", h.head));
    }
    // 304 with the Last-Modified date; 200 with an older one.
    let lm = h.header("last-modified").ok_or("no Last-Modified")?.to_string();
    crate::hosthttp::recent(&lm)?;
    s.write_all(format!("GET /10k.txt HTTP/1.1\r\nHost: oxok\r\nIf-Modified-Since: {lm}\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let r = read_reply(&mut s, true)?;
    if r.status != 304 {
        return Err(format!("If-Modified-Since: status {}", r.status));
    }
    // index.html (its references were loaded with it) and a 404, then close.
    s.write_all(b"GET / HTTP/1.1\r\nHost: oxok\r\n\r\n").map_err(|e| e.to_string())?;
    let r = read_reply(&mut s, false)?;
    if r.status != 200 || !String::from_utf8_lossy(&r.body).contains("href=\"/100k.bin\"") {
        return Err(format!("index.html: {} {:?}", r.status, r.head));
    }
    s.write_all(b"GET /missing.html HTTP/1.1\r\nHost: oxok\r\nConnection: close\r\n\r\n").map_err(|e| e.to_string())?;
    let r = read_reply(&mut s, false)?;
    if r.status != 404 {
        return Err(format!("missing file: status {}", r.status));
    }
    let _ = s.shutdown(Shutdown::Write);
    Ok(format!(
        "host: {n} documents checked byte for byte, HEAD, 304, index and 404 right ({tries} tries to reach the guest)"
    ))
}

/// One malformed request and the status it must get (the server closes).
fn expect_status(port: u16, req: &[u8], want: u16, what: &str) -> Result<(), String> {
    let (r, closed) = exchange(port, req, false).map_err(|e| format!("{what}: {e}"))?;
    if r.status != want {
        return Err(format!("{what}: status {} (want {want})", r.status));
    }
    if !closed {
        return Err(format!("{what}: connection left open"));
    }
    Ok(())
}

/// Idle connections [`robust`] holds open at once.
const IDLE: usize = 1000;

/// Malformed requests, a slow client, a client that resets mid-response,
/// idle connections, a flood: each gets its status or is dropped, and the
/// server keeps serving (checked after each).
pub(crate) fn robust(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    wait_up(port)?;
    let ok = |what: &str| -> Result<(), String> {
        let (r, _) =
            exchange(port, b"GET /10k.txt HTTP/1.0\r\n\r\n", false).map_err(|e| format!("after {what}: {e}"))?;
        check_sample(&r, "10k.txt").map_err(|e| format!("after {what}: {e}"))
    };
    let long_uri = format!("GET /{} HTTP/1.0\r\n\r\n", "a".repeat(5000));
    let long_header = format!("GET / HTTP/1.0\r\nX-Big: {}\r\n\r\n", "b".repeat(10_000));
    let cases: [(&[u8], u16, &str); 10] = [
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n", 400, "garbage"),
        (b"GET / HTTP/1.0\n\n", 400, "missing CR"),
        (b"GET /../../etc/passwd HTTP/1.0\r\n\r\n", 400, "path traversal"),
        (b"GET /%2e%2e/%2e%2e/x HTTP/1.0\r\n\r\n", 400, "encoded traversal"),
        (b"POST /1k.txt HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 405, "POST"),
        (b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 405, "unknown method"),
        (long_uri.as_bytes(), 414, "overlong request line"),
        (long_header.as_bytes(), 431, "overlong header"),
        (b"GET / HTTP/1.0\r\nContent-Length: 999999\r\n\r\n", 413, "large body"),
        (b"GET / HTTP/3.0\r\n\r\n", 505, "HTTP/3.0"),
    ];
    for (req, want, what) in cases {
        expect_status(port, req, want, what)?;
        ok(what)?;
    }
    // A slow client: the request a byte at a time.
    let mut s = connect(port)?;
    for b in b"GET /1k.txt HTTP/1.0\r\n\r\n" {
        s.write_all(&[*b]).map_err(|e| e.to_string())?;
        std::thread::sleep(Duration::from_millis(40));
    }
    check_sample(&read_reply(&mut s, false)?, "1k.txt").map_err(|e| format!("slow client: {e}"))?;
    // Resets mid-response: read a little of 100 KB, then reset.
    for _ in 0..5 {
        let mut s = connect(port)?;
        s.write_all(b"GET /100k.bin HTTP/1.1\r\nHost: x\r\n\r\n").map_err(|e| e.to_string())?;
        let mut some = [0u8; 2000];
        s.read_exact(&mut some).map_err(|e| format!("reset case: {e}"))?;
        reset(s);
    }
    ok("clients that reset mid-response")?;
    // Idle connections held open while others are served.
    // (Paced: QEMU's forwarding listener has a backlog of one.)
    let mut idle = Vec::new();
    for i in 0..IDLE {
        std::thread::sleep(Duration::from_millis(5));
        idle.push(connect(port).map_err(|e| format!("idle connection {i}: {e}"))?);
    }
    std::thread::sleep(Duration::from_millis(1000));
    ok("idle connections")?;
    drop(idle);
    // A flood: 8 threads, 25 requests each, every reply checked.
    let served = std::thread::scope(|t| {
        let workers: Vec<_> = (0..8)
            .map(|w| {
                t.spawn(move || -> Result<u32, String> {
                    let mut n = 0;
                    for i in 0..25 {
                        let name = SAMPLES[(w + i) % 2].0;
                        let what = |e: String| format!("flood client {w}, request {i} ({name}): {e}");
                        let (r, _) =
                            exchange(port, format!("GET /{name} HTTP/1.0\r\n\r\n").as_bytes(), false).map_err(what)?;
                        check_sample(&r, name).map_err(what)?;
                        n += 1;
                    }
                    Ok(n)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("flood thread panicked".into())))
            .sum::<Result<u32, String>>()
    })?;
    // A garbage flood.
    for i in 0..50 {
        let junk: Vec<u8> = (0..200).map(|k| ((k * 31 + i * 7) % 256) as u8).collect();
        if let Ok(mut s) = connect(port) {
            let _ = s.write_all(&junk);
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
        }
    }
    ok("a garbage flood")?;
    Ok(format!(
        "host: 10 malformed requests refused with their status, slow client, 5 resets, {IDLE} idle, {served} flood requests checked, garbage flood; still serving"
    ))
}

/// Closes `s` with data it has not read in its receive buffer: the host
/// kernel then resets the connection (RFC 2525 §2.17) rather than closing
/// it, and QEMU's user network passes the reset on to the guest.
fn reset(s: TcpStream) {
    std::thread::sleep(Duration::from_millis(200)); // let more of the response arrive unread
    drop(s);
}

/// With the server losing every few data segments on purpose: 100 KB
/// documents still arrive whole (sent again from the cache).
pub(crate) fn lossy(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    wait_up(port)?;
    for _ in 0..4 {
        for (name, _) in SAMPLES {
            let (r, _) = exchange(port, format!("GET /{name} HTTP/1.0\r\n\r\n").as_bytes(), false)?;
            check_sample(&r, name)?;
        }
    }
    Ok("host: 12 documents intact through lost segments".into())
}

/// A server with 2 slots served: two held connections make the third
/// request get 503; once they close, requests are served again.
pub(crate) fn full(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    wait_up(port)?;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = connect(port)?;
        s.write_all(b"GET /1k.txt HTTP/1.1\r\nHost: x\r\n\r\n").map_err(|e| e.to_string())?;
        check_sample(&read_reply(&mut s, false)?, "1k.txt")?;
        held.push(s);
    }
    let (r, closed) = exchange(port, b"GET /1k.txt HTTP/1.1\r\nHost: x\r\n\r\n", false)?;
    if r.status != 503 || !closed {
        return Err(format!("third connection: status {} (want 503 and close)", r.status));
    }
    drop(held);
    std::thread::sleep(Duration::from_millis(1500));
    let (r, _) = exchange(port, b"GET /1k.txt HTTP/1.0\r\n\r\n", false)?;
    check_sample(&r, "1k.txt")?;
    Ok("host: 503 while full, served again after".into())
}
