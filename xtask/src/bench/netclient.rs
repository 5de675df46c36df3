//! The client side of `cargo xtask bench --http` that is not `ab`/`wrk`:
//! the xtask binary run again inside the benchmark's network namespace
//! (`cargo xtask bench --netclient …`, not for people) to wait for a
//! server, and to measure TCP round trips and bulk throughput against an
//! echo server (issue 13's rows) — the same client for Oxok's `tcpecho`
//! and the Linux guest's `echo`.
//!
//! `--netclient probe-http ADDR PORT SECS`: until `GET /` answers 200.
//! `--netclient probe-tcp ADDR PORT SECS`: until a connection is accepted
//! (then it says `quit`-free nothing: it closes at once).
//! `--netclient echo ADDR PORT ROUNDTRIPS BYTES`: one connection doing
//! ROUNDTRIPS 64-byte round trips, one echoing BYTES, one saying `quit`;
//! prints one line [`parse_echo`] reads.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Bytes of one round-trip message.
pub(crate) const RTT_BYTES: usize = 64;

/// What the echo client measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EchoFigures {
    /// Median and 99th percentile of the round trips, in microseconds.
    pub rtt_p50_us: f64,
    pub rtt_p99_us: f64,
    /// Bytes echoed per second (each byte went both ways), in MB/s.
    pub bulk_mb_s: f64,
}

/// Runs the client; `args` follow `--netclient`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("netclient: too few arguments".to_string());
    let num = |i: usize| arg(i)?.parse::<u64>().map_err(|_| format!("netclient: {} is not a number", args[i]));
    let addr: SocketAddr =
        format!("{}:{}", arg(1)?, arg(2)?).parse().map_err(|e| format!("netclient: bad address: {e}"))?;
    match arg(0)? {
        "probe-http" => probe(addr, Duration::from_secs(num(3)?), true),
        "probe-tcp" => probe(addr, Duration::from_secs(num(3)?), false),
        "echo" => {
            let f = echo(addr, num(3)? as usize, num(4)? as usize)?;
            println!("{}", format_echo(&f));
            Ok(())
        }
        other => Err(format!("netclient: unknown mode {other}")),
    }
}

/// Waits until the server answers (`GET /` → 200, or a connection).
fn probe(addr: SocketAddr, limit: Duration, http: bool) -> Result<(), String> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            if !http {
                return Ok(());
            }
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut reply = Vec::new();
            if s.write_all(b"GET / HTTP/1.0\r\n\r\n").is_ok()
                && s.read_to_end(&mut reply).is_ok()
                && (reply.starts_with(b"HTTP/1.1 200") || reply.starts_with(b"HTTP/1.0 200"))
            {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err(format!("netclient: {addr} never answered"))
}

/// Connects; a refusal is retried for 10 s (a server that serves one
/// connection at a time, as Oxok's `tcpecho`, refuses the next until the
/// last is closed on its side too).
fn connect(addr: SocketAddr) -> Result<TcpStream, String> {
    let end = Instant::now() + Duration::from_secs(10);
    let s = loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("connect: {e}")),
        }
    };
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(20))).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Round trips, then bulk, then `quit`.
fn echo(addr: SocketAddr, roundtrips: usize, bytes: usize) -> Result<EchoFigures, String> {
    let mut s = connect(addr)?;
    let mut times = Vec::with_capacity(roundtrips);
    let msg = [0x5au8; RTT_BYTES];
    let mut back = [0u8; RTT_BYTES];
    for _ in 0..roundtrips.max(1) {
        let t = Instant::now();
        s.write_all(&msg).map_err(|e| format!("round trip: {e}"))?;
        s.read_exact(&mut back).map_err(|e| format!("round trip: {e}"))?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
        if back != msg {
            return Err("round trip: the echo differs".into());
        }
    }
    close(s)?;
    let s = connect(addr)?;
    let data: Vec<u8> = (0..bytes).map(|i| (i * 7 + 3) as u8).collect();
    let mut w = s.try_clone().map_err(|e| e.to_string())?;
    let mut r = s;
    let t = Instant::now();
    let mut got = vec![0u8; bytes];
    std::thread::scope(|sc| {
        let writer = sc.spawn(|| w.write_all(&data));
        let read = r.read_exact(&mut got).map_err(|e| format!("bulk: {e}"));
        let wrote = writer.join().map_err(|_| "bulk: writer panicked".to_string())?.map_err(|e| format!("bulk: {e}"));
        read.and(wrote)
    })?;
    let secs = t.elapsed().as_secs_f64();
    if got != data {
        return Err("bulk: the echo differs".into());
    }
    close(r)?;
    let mut q = connect(addr)?;
    q.write_all(b"quit").map_err(|e| e.to_string())?;
    let mut rest = Vec::new();
    let _ = q.shutdown(Shutdown::Write);
    let _ = q.read_to_end(&mut rest);
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    Ok(EchoFigures { rtt_p50_us: pct(0.5), rtt_p99_us: pct(0.99), bulk_mb_s: bytes as f64 / secs / 1e6 })
}

fn close(mut s: TcpStream) -> Result<(), String> {
    s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).map_err(|e| format!("close: {e}"))?;
    Ok(())
}

/// The line the client prints.
pub(crate) fn format_echo(f: &EchoFigures) -> String {
    format!("echo-client: rtt_p50_us={:.1} rtt_p99_us={:.1} bulk_mb_s={:.3}", f.rtt_p50_us, f.rtt_p99_us, f.bulk_mb_s)
}

/// Reads the client's line back.
pub(crate) fn parse_echo(text: &str) -> Option<EchoFigures> {
    let line = text.lines().find_map(|l| l.trim().strip_prefix("echo-client:"))?;
    let get =
        |k: &str| line.split_whitespace().find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<f64>().ok());
    Some(EchoFigures { rtt_p50_us: get("rtt_p50_us")?, rtt_p99_us: get("rtt_p99_us")?, bulk_mb_s: get("bulk_mb_s")? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_line_round_trips() {
        let f = EchoFigures { rtt_p50_us: 812.5, rtt_p99_us: 2040.0, bulk_mb_s: 3.25 };
        assert_eq!(parse_echo(&format!("noise\n{}\n", format_echo(&f))), Some(f));
        assert_eq!(parse_echo("echo-client: rtt_p50_us=1"), None);
        assert_eq!(parse_echo(""), None);
    }

    #[test]
    fn echoes_against_a_local_server() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            for c in l.incoming().take(3) {
                let mut c = c.expect("accept");
                let mut buf = [0u8; 4096];
                let mut all = Vec::new();
                loop {
                    let n = c.read(&mut buf).expect("read");
                    if n == 0 {
                        break;
                    }
                    all.extend_from_slice(&buf[..n]);
                    c.write_all(&buf[..n]).expect("write");
                }
                if all == b"quit" {
                    break;
                }
            }
        });
        let f = echo(addr, 20, 100_000).expect("echo");
        assert!(f.rtt_p50_us > 0.0 && f.rtt_p99_us >= f.rtt_p50_us && f.bulk_mb_s > 0.0);
        server.join().expect("server");
    }
}
