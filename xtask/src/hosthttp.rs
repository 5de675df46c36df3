//! The host side of the HTTP scenarios (`scenarios_http.rs`): a small
//! HTTP/1.x client over `std::net` that checks every status, header and
//! byte `httpd` sends, the robustness attacks of issue 14, and the socket
//! echo driver.

use oxok_http::samples::sample_byte;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Idle connections [`http_robust`] opens at once. (Issue 14 asks for
/// 1,000; through QEMU's user-network port forwarding, whose host listener
/// takes connections one at a time, opening that many takes minutes and
/// some are refused by QEMU itself before the guest sees them.)
const IDLE_CONNS: usize = 200;

/// How long the guest may take to boot and start serving.
const UP_SECS: u64 = 150;

fn sample(name: &str, len: usize) -> Vec<u8> {
    (0..len).map(|i| sample_byte(name, i)).collect()
}

/// The samples: (path, length, content type).
const SAMPLES: [(&str, usize, &str); 3] = [
    ("/1k.txt", 1024, "text/plain; charset=utf-8"),
    ("/10k.txt", 10 * 1024, "text/plain; charset=utf-8"),
    ("/100k.bin", 100 * 1024, "application/octet-stream"),
];

/// One response.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// How long a test client waits for the guest's next bytes. QEMU's user
/// network retransmits to the guest on BSD timers (a lost SYN or request
/// is sent again after 6–12 s, backing off), and a guest starved by host
/// load drops packets when its receive ring is full; 60 s lets a few such
/// losses pass and still ends a dead exchange.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Connects to the forwarded `port` on the host side, with
/// [`READ_TIMEOUT`] and Nagle off.
pub(crate) fn connect(port: u16) -> Result<TcpStream, String> {
    let s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(READ_TIMEOUT)).map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Reads one response from `s` (`head_only`: a response to HEAD, whose
/// Content-Length names no body). Bytes after it stay in `rest`.
fn read_response(s: &mut TcpStream, rest: &mut Vec<u8>, head_only: bool) -> Result<Response, String> {
    let mut buf = [0u8; 16384];
    let end = loop {
        if let Some(i) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).map_err(|e| format!("reading a head: {e}"))?;
        if n == 0 {
            return Err(format!("closed before a whole head ({} bytes)", rest.len()));
        }
        rest.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&rest[..end]).to_string();
    rest.drain(..end);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    if parts.next() != Some("HTTP/1.1") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status = parts.next().and_then(|c| c.parse().ok()).ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':').map(|(n, v)| (n.trim().to_string(), v.trim().to_string())))
        .collect();
    let mut r = Response { status, headers, body: Vec::new() };
    let len: usize = match r.header("content-length") {
        Some(v) => v.parse().map_err(|_| format!("bad Content-Length {v:?}"))?,
        None => 0,
    };
    let len = if head_only || status == 304 { 0 } else { len };
    while rest.len() < len {
        let n = s.read(&mut buf).map_err(|e| format!("reading a body: {e}"))?;
        if n == 0 {
            return Err(format!("closed after {} of {len} body bytes", rest.len()));
        }
        rest.extend_from_slice(&buf[..n]);
    }
    r.body = rest.drain(..len).collect();
    Ok(r)
}

/// Sends `req` on a new connection and reads one response.
fn exchange(port: u16, req: &[u8]) -> Result<Response, String> {
    let mut s = connect(port)?;
    s.write_all(req).map_err(|e| format!("send: {e}"))?;
    read_response(&mut s, &mut Vec::new(), req.starts_with(b"HEAD"))
}

/// `Last-Modified` is an HTTP date within a day of the host's clock: the
/// file's time from the file system (the guest's clock starts from the
/// host's), not a count from the guest's boot.
pub(crate) fn recent(date: &str) -> Result<(), String> {
    let secs =
        oxok_http::date::parse(date.as_bytes()).ok_or_else(|| format!("Last-Modified {date:?}: no HTTP date"))?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if secs.abs_diff(now) > 86_400 {
        return Err(format!("Last-Modified {date:?} is not within a day of the host's time"));
    }
    Ok(())
}

/// `GET path` over HTTP/1.0.
fn get10(port: u16, path: &str) -> Result<Response, String> {
    exchange(port, format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
}

/// Checks a sample's response.
fn check_sample(r: &Response, path: &str, len: usize, ctype: &str) -> Result<(), String> {
    if r.status != 200 {
        return Err(format!("GET {path}: status {}", r.status));
    }
    if r.header("content-length") != Some(len.to_string().as_str()) {
        return Err(format!("GET {path}: Content-Length {:?}", r.header("content-length")));
    }
    if r.header("content-type") != Some(ctype) {
        return Err(format!("GET {path}: Content-Type {:?}", r.header("content-type")));
    }
    if r.body != sample(path.trim_start_matches('/'), len) {
        return Err(format!("GET {path}: body differs ({} bytes)", r.body.len()));
    }
    Ok(())
}

/// Waits until the server answers `GET /` with 200.
fn wait_up(port: u16) -> Result<u32, String> {
    let deadline = Instant::now() + Duration::from_secs(UP_SECS);
    let mut tries = 0;
    loop {
        match get10(port, "/") {
            Ok(r) if r.status == 200 => return Ok(tries),
            Ok(r) => return Err(format!("GET / answered {}", r.status)),
            Err(e) if Instant::now() > deadline => return Err(format!("server not up: {e}")),
            Err(_) => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

fn expect_status(port: u16, what: &str, req: &[u8], want: u16) -> Result<(), String> {
    let r = exchange(port, req)?;
    if r.status != want {
        return Err(format!("{what}: status {} (wanted {want})", r.status));
    }
    Ok(())
}

/// GETs of the 1 KB, 10 KB and 100 KB samples over HTTP/1.0, the same
/// and HEAD over one keep-alive connection (two requests pipelined), 304
/// for `If-Modified-Since`, 404 and 405.
pub(crate) fn http_get(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    let early = wait_up(port)?;
    for (path, len, ctype) in SAMPLES {
        check_sample(&get10(port, path)?, path, len, ctype)?;
    }
    // Keep-alive: three GETs one after another, then HEAD and GET pipelined.
    let mut s = connect(port)?;
    let mut rest = Vec::new();
    let mut last_modified = String::new();
    for (path, len, ctype) in SAMPLES {
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: oxok\r\n\r\n").as_bytes()).map_err(|e| e.to_string())?;
        let r = read_response(&mut s, &mut rest, false)?;
        check_sample(&r, path, len, ctype)?;
        if r.header("connection") != Some("keep-alive") {
            return Err(format!("keep-alive GET {path}: Connection {:?}", r.header("connection")));
        }
        last_modified = r.header("last-modified").ok_or("no Last-Modified")?.to_string();
        recent(&last_modified)?;
    }
    s.write_all(
        b"HEAD /10k.txt HTTP/1.1\r\nHost: oxok\r\n\r\nGET /1k.txt HTTP/1.1\r\nHost: oxok\r\nConnection: close\r\n\r\n",
    )
    .map_err(|e| e.to_string())?;
    let head = read_response(&mut s, &mut rest, true)?;
    if head.status != 200 || head.header("content-length") != Some("10240") {
        return Err(format!("HEAD /10k.txt: {} {:?}", head.status, head.header("content-length")));
    }
    check_sample(&read_response(&mut s, &mut rest, false)?, "/1k.txt", 1024, SAMPLES[0].2)?;
    let mut tail = Vec::new();
    s.read_to_end(&mut tail).map_err(|e| format!("after Connection: close: {e}"))?;
    if !tail.is_empty() || !rest.is_empty() {
        return Err("bytes after the last response".into());
    }
    // 304 for the time the server gave; 200 for an older one.
    let ims = format!("GET /10k.txt HTTP/1.1\r\nHost: oxok\r\nIf-Modified-Since: {last_modified}\r\n\r\n");
    let r = exchange(port, ims.as_bytes())?;
    if r.status != 304 || !r.body.is_empty() {
        return Err(format!("If-Modified-Since {last_modified}: status {}", r.status));
    }
    if last_modified != "Thu, 01 Jan 1970 00:00:00 GMT" {
        let old = b"GET /10k.txt HTTP/1.1\r\nHost: oxok\r\nIf-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n";
        check_sample(&exchange(port, old)?, "/10k.txt", 10240, SAMPLES[1].2)?;
    }
    expect_status(port, "GET /missing.txt", b"GET /missing.txt HTTP/1.0\r\n\r\n", 404)?;
    expect_status(port, "POST /", b"POST / HTTP/1.1\r\nHost: oxok\r\nContent-Length: 0\r\n\r\n", 405)?;
    Ok(format!(
        "host: 3 samples over HTTP/1.0 and keep-alive, HEAD, pipelining, 304 ({last_modified}), 404, 405 checked \
         ({early} early attempts)"
    ))
}

/// Sends `req` and expects `want`, then the server's close.
fn expect_closed(port: u16, what: &str, req: &[u8], want: u16) -> Result<(), String> {
    let mut s = connect(port)?;
    // The server may answer and close before taking every byte.
    let _ = s.write_all(req);
    let mut rest = Vec::new();
    let r = read_response(&mut s, &mut rest, false).map_err(|e| format!("{what}: {e}"))?;
    if r.status != want {
        return Err(format!("{what}: status {} (wanted {want})", r.status));
    }
    if r.header("connection") != Some("close") {
        return Err(format!("{what}: the connection is not closed"));
    }
    Ok(())
}

/// Malformed requests each get their status; a slow client, many idle
/// connections, resets mid-response and a flood, while normal GETs keep
/// being served.
pub(crate) fn http_robust(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    wait_up(port)?;
    let mut notes = Vec::new();
    expect_closed(port, "garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n", 400)?;
    let long_line = format!("GET /{} HTTP/1.1\r\nHost: oxok\r\n\r\n", "a".repeat(5000));
    expect_closed(port, "overlong request line", long_line.as_bytes(), 414)?;
    let mut fat = String::from("GET / HTTP/1.1\r\nHost: oxok\r\n");
    for i in 0..40 {
        fat.push_str(&format!("X-Fill-{i}: {}\r\n", "b".repeat(300)));
    }
    fat.push_str("\r\n");
    expect_closed(port, "overlong headers", fat.as_bytes(), 431)?;
    expect_closed(port, "bare LF", b"GET / HTTP/1.1\nHost: oxok\n\n", 400)?;
    expect_closed(port, "invalid method BREW", b"BREW / HTTP/1.1\r\nHost: oxok\r\n\r\n", 405)?;
    expect_closed(port, "invalid method token", b"G(T / HTTP/1.1\r\nHost: oxok\r\n\r\n", 400)?;
    expect_closed(port, "traversal /../", b"GET /../etc/passwd HTTP/1.0\r\n\r\n", 400)?;
    expect_closed(port, "traversal %2e%2e", b"GET /%2e%2e/%2e%2e/x HTTP/1.0\r\n\r\n", 400)?;
    expect_closed(port, "traversal /a/../../", b"GET /1k.txt/../../x HTTP/1.0\r\n\r\n", 400)?;
    expect_closed(port, "body too large", b"GET / HTTP/1.1\r\nHost: oxok\r\nContent-Length: 100000\r\n\r\n", 413)?;
    expect_closed(port, "HTTP/2.0", b"GET / HTTP/2.0\r\n\r\n", 505)?;
    check_sample(&get10(port, "/1k.txt")?, "/1k.txt", 1024, SAMPLES[0].2)?;
    notes.push("11 malformed requests refused".to_string());

    // A slow client (a byte every 40 ms) while another is served.
    std::thread::scope(|t| -> Result<(), String> {
        let slow = t.spawn(|| -> Result<Response, String> {
            let mut s = connect(port)?;
            for b in b"GET /10k.txt HTTP/1.0\r\n\r\n" {
                s.write_all(&[*b]).map_err(|e| e.to_string())?;
                std::thread::sleep(Duration::from_millis(40));
            }
            read_response(&mut s, &mut Vec::new(), false)
        });
        std::thread::sleep(Duration::from_millis(200));
        check_sample(&get10(port, "/100k.bin")?, "/100k.bin", 102400, SAMPLES[2].2)?;
        let r = slow.join().map_err(|_| "slow client panicked")??;
        check_sample(&r, "/10k.txt", 10240, SAMPLES[1].2)
    })?;
    notes.push("slow client served beside a fast one".to_string());

    // Many idle connections: the server keeps serving.
    let idle: Vec<TcpStream> = (0..IDLE_CONNS).filter_map(|_| connect(port).ok()).collect();
    std::thread::sleep(Duration::from_secs(1));
    for (path, len, ctype) in SAMPLES {
        check_sample(&get10(port, path)?, path, len, ctype)?;
    }
    notes.push(format!("{} idle connections open, samples still served", idle.len()));
    drop(idle);

    // Clients that reset mid-response (unread data at close sends RST).
    for _ in 0..5 {
        let mut s = connect(port)?;
        s.write_all(b"GET /100k.bin HTTP/1.0\r\n\r\n").map_err(|e| e.to_string())?;
        let mut some = [0u8; 1000];
        s.read_exact(&mut some).map_err(|e| format!("reset client: {e}"))?;
        drop(s);
    }
    check_sample(&get10(port, "/100k.bin")?, "/100k.bin", 102400, SAMPLES[2].2)?;
    notes.push("5 resets mid-response".to_string());

    // A flood: 8 clients, 25 HTTP/1.0 requests each, as fast as they go.
    let (ok, dropped) = std::thread::scope(|t| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                t.spawn(move || {
                    let (mut ok, mut dropped) = (0u32, 0u32);
                    for _ in 0..25 {
                        match get10(port, "/1k.txt") {
                            Ok(r) if r.status == 200 && r.body == sample("1k.txt", 1024) => ok += 1,
                            Ok(r) if r.status == 503 => dropped += 1,
                            Ok(r) => return Err(format!("flood: status {} / {} bytes", r.status, r.body.len())),
                            Err(_) => dropped += 1,
                        }
                    }
                    Ok((ok, dropped))
                })
            })
            .collect();
        hs.into_iter().try_fold((0, 0), |(a, b), h| {
            let (o, d) = h.join().map_err(|_| "flood thread panicked".to_string())??;
            Ok::<_, String>((a + o, b + d))
        })
    })?;
    if ok == 0 {
        return Err("the flood got no answer at all".into());
    }
    check_sample(&get10(port, "/10k.txt")?, "/10k.txt", 10240, SAMPLES[1].2)?;
    notes.push(format!("flood: {ok} served, {dropped} dropped; served after it"));
    Ok(format!("host: {}", notes.join("; ")))
}

/// The socket echo server: the UDP exchange, then the TCP one.
pub(crate) fn sock_echo(ports: &[u16]) -> Result<String, String> {
    let (udp, tcp) = match ports {
        [u, t, ..] => (*u, *t),
        _ => return Err("two forwarded ports needed".into()),
    };
    let a = crate::hostnet::udp_echo(&[udp])?;
    let b = crate::hostnet::tcp_echo(&[tcp])?;
    Ok(format!("{a}; {b}"))
}

/// What the host answers a guest's connection with in [`connect_back`].
const BACK_REPLY: &[u8] = b"welcome, guest\n";

/// The guest as a client: a listener on a free host port, `connect PORT`
/// sent to the guest's UDP echo port until its connection comes; the host
/// checks the guest's greeting, answers [`BACK_REPLY`] and closes, and the
/// guest reports the bytes it got.
fn connect_back(udp: u16) -> Result<String, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_millis(200))).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut served = false;
    let mut answer = String::new();
    while answer.is_empty() {
        if Instant::now() > deadline {
            return Err("the guest never connected back".into());
        }
        sock.send_to(format!("connect {port}").as_bytes(), ("127.0.0.1", udp)).map_err(|e| e.to_string())?;
        let end = Instant::now() + Duration::from_millis(600);
        while Instant::now() < end && answer.is_empty() {
            if !served && let Ok((mut c, _)) = listener.accept() {
                c.set_nonblocking(false).map_err(|e| e.to_string())?;
                c.set_read_timeout(Some(READ_TIMEOUT)).map_err(|e| e.to_string())?;
                let mut greeting = Vec::new();
                c.read_to_end(&mut greeting).map_err(|e| format!("greeting: {e}"))?;
                if greeting != b"hello from sockecho\n" {
                    return Err(format!("greeting {:?}", String::from_utf8_lossy(&greeting)));
                }
                c.write_all(BACK_REPLY).map_err(|e| e.to_string())?;
                served = true; // `c` closes here
            }
            let mut buf = [0u8; 128];
            if let Ok((n, _)) = sock.recv_from(&mut buf)
                && buf[..n].starts_with(b"connect")
            {
                answer = String::from_utf8_lossy(&buf[..n]).to_string();
            }
        }
    }
    if answer != format!("connected {}", BACK_REPLY.len()) {
        return Err(format!("the guest said {answer:?}"));
    }
    Ok(format!("host: the guest connected to host port {port}, greeted and got {} bytes back", BACK_REPLY.len()))
}

/// [`sock_echo`], with the guest connecting back to the host in between.
pub(crate) fn sock_echo_and_connect(ports: &[u16]) -> Result<String, String> {
    let (udp, tcp) = match ports {
        [u, t, ..] => (*u, *t),
        _ => return Err("two forwarded ports needed".into()),
    };
    let a = crate::hostnet::udp_echo(&[udp])?;
    let b = connect_back(udp)?;
    let c = crate::hostnet::tcp_echo(&[tcp])?;
    Ok(format!("{a}; {b}; {c}"))
}
