//! The host side of network scenarios: the guest's NIC (QEMU user
//! networking with host ports forwarded to guest ports, or a tap in a
//! private namespace, `netns.rs`) and the host programs that talk to the
//! guest while a scenario runs.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// A guest NIC for a scenario: guest UDP ports to reach from the host, and
/// a host program to run against them while the machine runs; or a NIC on
/// a tap in a private network namespace (`tap`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NetSpec {
    /// The NIC on a tap device in a network namespace made for the run
    /// (`netns.rs`: the host side is 10.0.2.2, the guest 10.0.2.15), QEMU
    /// run inside it, instead of QEMU's user network: the host reaches the
    /// guest's address directly (ICMP too), nothing is forwarded (`udp` and
    /// `tcp` must be empty), and the scenario's typist runs host programs
    /// in the namespace ([`crate::typist::Typist::in_netns`]). Needs root:
    /// without it the scenario fails saying so.
    pub tap: bool,
    /// Guest UDP ports forwarded from free host ports on 127.0.0.1.
    pub udp: &'static [u16],
    /// Guest TCP ports forwarded likewise (their host ports come after the
    /// UDP ones).
    pub tcp: &'static [u16],
    /// Runs on the host while the machine runs, with the host ports (in
    /// `udp`'s order); its error fails the scenario, its text goes to the log.
    pub host: Option<HostProgram>,
}

/// A host program: given the host ports, a line for the log or an error.
pub(crate) type HostProgram = fn(&[u16]) -> Result<String, String>;

/// The virtio-net device options that turn every offload off (the
/// benchmarks' and scenarios' setting on both sides).
pub(crate) const VIRTIO_NET_OFFLOADS_OFF: &str = "csum=off,guest_csum=off,host_tso4=off,guest_tso4=off,host_ecn=off,guest_ecn=off,host_ufo=off,guest_ufo=off,mrg_rxbuf=off";

/// QEMU arguments for a virtio-net NIC on user networking with `forwards`
/// (`(protocol, host port, guest port)`), offloads off as on Linux guests
/// in the benchmarks.
pub(crate) fn nic_args(forwards: &[(&str, u16, u16)]) -> Vec<String> {
    let mut netdev = String::from("user,id=n0");
    for (proto, host, guest) in forwards {
        netdev.push_str(&format!(",hostfwd={proto}:127.0.0.1:{host}-:{guest}"));
    }
    let device = format!("virtio-net-pci,netdev=n0,{VIRTIO_NET_OFFLOADS_OFF}");
    let mut args = vec!["-netdev".into(), netdev, "-device".into(), device];
    args.extend(capture_args(&forwards.first().map_or(0, |f| f.1).to_string()));
    args
}

/// A packet capture of netdev `n0`'s traffic on request (both directions,
/// the first 200 bytes of each frame): `OXOK_PCAP=/tmp/cap` writes
/// `/tmp/cap.<tag>.pcap` for each boot (the tag: the first forwarded host
/// port, or the tap's name).
pub(crate) fn capture_args(tag: &str) -> Vec<String> {
    match std::env::var("OXOK_PCAP") {
        Ok(prefix) => {
            vec!["-object".into(), format!("filter-dump,id=capture,netdev=n0,file={prefix}.{tag}.pcap,maxlen=200")]
        }
        Err(_) => Vec::new(),
    }
}

/// A UDP port on 127.0.0.1 that is free right now.
pub(crate) fn free_udp_port() -> Result<u16, String> {
    let s = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("no free UDP port: {e}"))?;
    s.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// A TCP port on 127.0.0.1 that is free right now.
pub(crate) fn free_tcp_port() -> Result<u16, String> {
    let s = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free TCP port: {e}"))?;
    s.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// Datagrams [`udp_echo`] sends.
const ECHO_COUNT: usize = 20;

/// Sends numbered datagrams to the echo server behind `ports[0]`, each
/// until its echo comes back (the guest may still be booting; lost
/// datagrams are sent again), checks every echo byte for byte, then sends
/// `quit` until that is echoed too (the server ends on it).
pub(crate) fn udp_echo(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_millis(300))).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut sizes = Vec::new();
    let exchange = |msg: &[u8]| -> Result<(), String> {
        let mut buf = [0u8; 2048];
        loop {
            if Instant::now() > deadline {
                return Err(format!("no echo of {:?} in time", String::from_utf8_lossy(&msg[..msg.len().min(24)])));
            }
            sock.send_to(msg, ("127.0.0.1", port)).map_err(|e| e.to_string())?;
            let resend = Instant::now() + Duration::from_millis(600);
            while Instant::now() < resend {
                match sock.recv_from(&mut buf) {
                    Ok((n, _)) if &buf[..n] == msg => return Ok(()),
                    Ok((n, _)) if buf[..n].starts_with(b"oxok-echo") || &buf[..n] == b"quit" => continue, // a late echo of an earlier resend
                    Ok((n, _)) => return Err(format!("wrong echo: {:?}", String::from_utf8_lossy(&buf[..n]))),
                    Err(_) => break,
                }
            }
        }
    };
    for i in 0..ECHO_COUNT {
        // Sizes from a few bytes to a full 1472-byte UDP payload.
        let len = [9, 64, 512, 1472][i % 4];
        let mut msg = format!("oxok-echo {i:03} ").into_bytes();
        msg.resize(len.max(msg.len()), b'a' + (i % 26) as u8);
        exchange(&msg)?;
        sizes.push(msg.len());
    }
    exchange(b"quit")?;
    Ok(format!("host: {} datagrams echoed ({} bytes)", sizes.len(), sizes.iter().sum::<usize>()))
}

/// Floods the guest's never-draining receiver behind `ports[1]` with
/// datagrams (one a millisecond) while [`udp_echo`] runs against
/// `ports[0]`, and for 800 more after it: the echo server must be
/// unaffected, and the flood ends with the receiver's ring long full.
pub(crate) fn flood_and_echo(ports: &[u16]) -> Result<String, String> {
    let (echo, sink) = match ports {
        [e, s, ..] => (*e, *s),
        _ => return Err("two forwarded ports needed".into()),
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let flood = |stop: &std::sync::atomic::AtomicBool| -> Result<u64, String> {
        let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let mut sent = 0u64;
        let mut after = 0;
        while after < 800 {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                after += 1;
            }
            sock.send_to(format!("flood {sent}").as_bytes(), ("127.0.0.1", sink)).map_err(|e| e.to_string())?;
            sent += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(sent)
    };
    let (echoed, flooded) = std::thread::scope(|s| {
        let f = s.spawn(|| flood(&done));
        let r = udp_echo(&[echo]);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (r, f.join().unwrap_or_else(|_| Err("flood thread panicked".into())))
    });
    Ok(format!("{}; host: {} flood datagrams sent", echoed?, flooded?))
}

/// One TCP exchange with the echo server behind host port `port`: sends
/// `data` (from a second thread, so a large echo never stalls on full
/// windows), reads back as many bytes, closes its side and waits for the
/// server's close. `Err` if the connection broke first (e.g. the guest was
/// not up yet and QEMU closed it).
fn tcp_exchange(port: u16, data: &[u8]) -> Result<(), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let mut w = s.try_clone().map_err(|e| e.to_string())?;
    let mut back = vec![0u8; data.len()];
    std::thread::scope(|t| {
        let writer = t.spawn(move || w.write_all(data));
        let read = s.read_exact(&mut back).map_err(|e| format!("echo: {e}"));
        let wrote = writer.join().map_err(|_| "writer panicked".to_string())?.map_err(|e| format!("send: {e}"));
        read.and(wrote)
    })?;
    if back != data {
        return Err("echo differs from what was sent".into());
    }
    s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).map_err(|e| format!("close: {e}"))?;
    if rest.is_empty() { Ok(()) } else { Err(format!("{} bytes after the echo", rest.len())) }
}

/// Three TCP connections to the echo server behind `ports[0]` (12 bytes,
/// 20 kB and 200 kB, each checked byte for byte; a connection that breaks
/// before the guest is up is retried), then one that says `quit`.
pub(crate) fn tcp_echo(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut total = 0;
    let mut retries = 0;
    for (i, len) in [12usize, 20_000, 200_000].into_iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|k| (k * 7 + i * 13) as u8).collect();
        loop {
            match tcp_exchange(port, &data) {
                Ok(()) => break,
                Err(_) if Instant::now() < deadline => {
                    retries += 1;
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(e) => return Err(e),
            }
        }
        total += len;
    }
    loop {
        match tcp_exchange(port, b"quit") {
            Ok(()) => break,
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(300)),
        }
    }
    Ok(format!("host: 3 TCP connections echoed ({total} bytes), then quit ({retries} early attempts retried)"))
}

/// Two stacks at once (`net-arpd`): the sockets echo server's UDP and TCP
/// ports and its connection back (`ports[0]`, `ports[1]`), then `tcpecho`
/// on `ports[2]`.
pub(crate) fn two_stacks(ports: &[u16]) -> Result<String, String> {
    let [udp, tcp, second, ..] = ports else { return Err("three forwarded ports needed".into()) };
    let a = crate::hosthttp::sock_echo_and_connect(&[*udp, *tcp])?;
    let b = tcp_echo(&[*second])?;
    Ok(format!("{a}; {b}"))
}

/// Seconds [`blast_and_echo`] floods for (issue 13's hostile tests: "a
/// flood of packets from the host for 30 s").
const BLAST_SECS: u64 = 30;

/// Floods `ports[1]` (a port no guest filter claims) with full-size
/// datagrams as fast as the host sends them for [`BLAST_SECS`] seconds, and
/// in the middle of it runs [`udp_echo`] against `ports[0]`: the echo
/// server must answer while the kernel sheds the flood.
pub(crate) fn blast_and_echo(ports: &[u16]) -> Result<String, String> {
    let (echo, blast) = match ports {
        [e, b, ..] => (*e, *b),
        _ => return Err("two forwarded ports needed".into()),
    };
    let blaster = || send_for(blast, &[0x5au8; 1472], BLAST_SECS);
    let (echoed, blasted) = std::thread::scope(|s| {
        let b = s.spawn(blaster);
        std::thread::sleep(Duration::from_secs(BLAST_SECS / 2));
        let r = udp_echo(&[echo]);
        (r, b.join().unwrap_or_else(|_| Err("blast thread panicked".into())))
    });
    Ok(format!("{}; host: {} datagrams of 1472 bytes blasted at an unclaimed port", echoed?, blasted?))
}

/// Seconds [`blast`] sends for: the guest boots meanwhile, and its
/// receiver takes what comes once its filter is in.
const DRAIN_BLAST_SECS: u64 = 15;

/// Sends small datagrams to `ports[0]` (the receiver of `net-ring-keeps-up`)
/// as fast as the host can for [`DRAIN_BLAST_SECS`] seconds.
pub(crate) fn blast(ports: &[u16]) -> Result<String, String> {
    let [port, ..] = ports else { return Err("a forwarded port needed".into()) };
    let sent = send_for(*port, &[0xa5u8; 64], DRAIN_BLAST_SECS)?;
    Ok(format!("host: {sent} datagrams of 64 bytes blasted"))
}

/// Sends `payload` to local UDP port `port` as fast as the host can for
/// `secs` seconds; returns the datagrams sent.
fn send_for(port: u16, payload: &[u8], secs: u64) -> Result<u64, String> {
    let sock = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let end = Instant::now() + Duration::from_secs(secs);
    let mut sent = 0u64;
    while Instant::now() < end {
        if sock.send_to(payload, ("127.0.0.1", port)).is_ok() {
            sent += 1;
        }
    }
    Ok(sent)
}

/// The `i`th byte of `net-cork`'s stream: the guest's test stream,
/// `oxok_tests::stream::byte`.
fn cork_byte(i: usize) -> u8 {
    let i = i as u64;
    (i.wrapping_mul(7) ^ (i >> 12).wrapping_mul(13)) as u8
}

/// Reads exactly `from..to` of `net-cork`'s stream from `s`.
fn cork_expect(s: &mut TcpStream, from: usize, to: usize) -> Result<(), String> {
    let mut got = vec![0u8; to - from];
    s.read_exact(&mut got).map_err(|e| format!("bytes {from}..{to}: {e}"))?;
    match (from..to).zip(&got).find(|(i, b)| cork_byte(*i) != **b) {
        Some((i, _)) => Err(format!("byte {i} differs")),
        None => Ok(()),
    }
}

/// The host side of `net-cork` (guest port `ports[0]`): one connection
/// reads the guest's corked pieces in turn, each checked byte for byte,
/// answering each so the guest goes on (`go`, `next`, `more`, `last`), then
/// the end of the stream, and says `bye`; a second says `close` and
/// closes while the guest holds corked bytes. The first connection is
/// retried until the guest listens.
pub(crate) fn cork_client(ports: &[u16]) -> Result<String, String> {
    let port = *ports.first().ok_or("no forwarded port")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut s = loop {
        let attempt = TcpStream::connect(("127.0.0.1", port)).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(20)))?;
            s.write_all(b"go\n")?;
            let mut first = [0u8; 1];
            s.peek(&mut first).and_then(|n| if n == 1 { Ok(s) } else { Err(std::io::ErrorKind::UnexpectedEof.into()) })
        });
        match attempt {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(300)),
            Err(e) => return Err(format!("connect: {e}")),
        }
    };
    cork_expect(&mut s, 0, 300)?;
    s.write_all(b"next\n").map_err(|e| e.to_string())?;
    cork_expect(&mut s, 300, 310)?;
    s.write_all(b"more\n").map_err(|e| e.to_string())?;
    cork_expect(&mut s, 310, 5310)?;
    s.write_all(b"last\n").map_err(|e| e.to_string())?;
    cork_expect(&mut s, 5310, 5460)?;
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).map_err(|e| format!("end: {e}"))?;
    if !rest.is_empty() {
        return Err(format!("{} bytes after the stream", rest.len()));
    }
    s.write_all(b"bye\n").map_err(|e| e.to_string())?;
    drop(s);
    let mut s2 = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("second connect: {e}"))?;
    s2.write_all(b"reset\n").map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(50));
    drop(s2);
    Ok("host: 5,460 corked bytes checked, a connection closed while bytes waited".into())
}

/// The typist of `net-blast`: starts the echo server from the shell, then
/// asks the shell for its `net` view every 4 s while the host blasts (the
/// blast began when the machine did, as this typist): each must answer
/// within 20 s, and the kernel's count of unclaimed packets (the blast's)
/// must grow from one answer to the next; once more after the blast. Then
/// waits for the echo server, which the host's echo check ends, and leaves
/// the shell.
pub(crate) fn shell_through_blast(t: &mut crate::typist::Typist<'_>) -> Result<String, String> {
    let began = Instant::now();
    t.wait_for("oxok$ ", 60)?;
    t.send(b"udpecho &\n")?;
    t.wait_for("udpecho: listening on 10.0.2.15:7", 30)?;
    let net = |t: &mut crate::typist::Typist<'_>| -> Result<(u64, u128), String> {
        let asked = Instant::now();
        t.send(b"net\n")?;
        let line = t.line_after("received ", "unclaimed ", 20)?;
        let unclaimed = line
            .split("unclaimed ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("the net view's header unreadable: {line:?}"))?;
        Ok((unclaimed, asked.elapsed().as_millis()))
    };
    // Every 4 s until a second before the blast ends (a slow boot leaves
    // fewer looks; two are needed to see the count grow).
    let mut during = Vec::new();
    loop {
        std::thread::sleep(Duration::from_secs(4));
        if began.elapsed() + Duration::from_secs(1) >= Duration::from_secs(BLAST_SECS) {
            break;
        }
        during.push(net(t)?);
    }
    if during.len() < 2 || !during.windows(2).all(|w| w[1].0 > w[0].0) {
        return Err(format!("the unclaimed count did not grow between the shell's answers (count, ms): {during:?}"));
    }
    std::thread::sleep(Duration::from_secs(BLAST_SECS).saturating_sub(began.elapsed()) + Duration::from_secs(1));
    let after = net(t)?;
    t.send(b"wait\nexit 0\n")?;
    Ok(format!(
        "typist: the shell answered `net` {} times during the blast (unclaimed packets, ms to answer): {during:?}; after it: {after:?}",
        during.len()
    ))
}
