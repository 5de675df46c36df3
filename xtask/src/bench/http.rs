//! `cargo xtask bench --http` (issue 14): Oxok's two web servers — `httpd`
//! on the libOS sockets and `cheetah` on its own TCP — booted in turn under
//! the same QEMU settings as every benchmark (one vCPU, TCG), each behind a
//! virtio-net NIC with offloads off on QEMU's user network, loaded from
//! the host by `ab` (HTTP/1.0, a connection per request; and keep-alive)
//! and `wrk` (keep-alive), pinned to the other host core. Packets per
//! request are counted in a capture of the guest's NIC. Each round boots
//! every server once, alternating the order; the table gives medians over
//! the rounds with the min–max spread.
//!
//! Not here yet (reported as such): nginx in the Linux guest, the tap
//! device in a network namespace (the user network stands in for it), the
//! plot.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::httpload::{self, Figures};
use super::stats::Summary;
use crate::build::build_images;
use crate::deps::{self, Need};
use crate::hostnet::{free_tcp_port, nic_args};
use crate::meta::Workspace;
use crate::qemu::{Boot, Qemu};

/// The servers, each with the line typed at the shell to start it.
/// They end after 5 idle seconds, so their own counters reach the log.
const SERVERS: [(&str, &str); 2] = [
    ("httpd", "httpd -q --samples --exit-idle 5\nexit 0\n"),
    ("cheetah", "cheetah -q --samples --exit-idle 5\nexit 0\n"),
];

/// One workload: a name, the document, how it is loaded.
struct Workload {
    name: &'static str,
    path: &'static str,
    tool: Tool,
}

#[derive(Clone, Copy)]
enum Tool {
    /// `ab`, HTTP/1.0: a connection per request.
    Ab10,
    /// `ab -k`: keep-alive.
    AbKeepAlive,
    /// `wrk`: keep-alive, for a time.
    Wrk,
}

const WORKLOADS: [Workload; 6] = [
    Workload { name: "1 KB, HTTP/1.0 (ab)", path: "/1k.txt", tool: Tool::Ab10 },
    Workload { name: "10 KB, HTTP/1.0 (ab)", path: "/10k.txt", tool: Tool::Ab10 },
    Workload { name: "100 KB, HTTP/1.0 (ab)", path: "/100k.bin", tool: Tool::Ab10 },
    Workload { name: "1 KB, keep-alive (ab -k)", path: "/1k.txt", tool: Tool::AbKeepAlive },
    Workload { name: "1 KB, keep-alive (wrk)", path: "/1k.txt", tool: Tool::Wrk },
    Workload { name: "100 KB, keep-alive (wrk)", path: "/100k.bin", tool: Tool::Wrk },
];

struct Opts {
    rounds: usize,
    requests: u32,
    concurrency: u32,
    secs: u32,
    out: Option<PathBuf>,
    quick: bool,
}

const USAGE: &str =
    "usage: cargo xtask bench --http [--quick] [--rounds N] [--requests N] [--concurrency C] [--secs S] [--out DIR]\n";

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts { rounds: 3, requests: 1000, concurrency: 8, secs: 5, out: None, quick: false };
    let mut it = args.iter().filter(|a| *a != "--http");
    while let Some(a) = it.next() {
        let mut num = |what: &str| -> Result<u32, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("{a} needs {what}\n{USAGE}"))
        };
        match a.as_str() {
            "--quick" => {
                o.quick = true;
                o.rounds = 1;
                o.requests = 200;
                o.secs = 3;
            }
            "--rounds" => o.rounds = num("a number")?.max(1) as usize,
            "--requests" => o.requests = num("a number")?.max(1),
            "--concurrency" => o.concurrency = num("a number")?.max(1),
            "--secs" => o.secs = num("seconds")?.max(1),
            "--out" => o.out = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Runs the HTTP benchmark.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return Ok(());
    }
    let o = parse(args)?;
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::Qemu, Need::LoadGen])?;
    eprintln!("bench: building Oxok …");
    let images = build_images(&ws)?;
    let mut notes = Vec::new();
    let servers: Vec<(&str, &str)> =
        SERVERS.iter().copied().filter(|(p, _)| images.programs.iter().any(|q| q == p)).collect();
    for (p, _) in SERVERS.iter().filter(|(p, _)| !servers.iter().any(|(q, _)| q == p)) {
        notes.push(format!("Oxok's boot archive has no `{p}`: its figures are missing."));
    }
    notes.push("nginx in the Linux guest is not measured yet: its column and the ratios are missing.".into());
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (_, stamp) = super::results::utc(secs);
    let log_dir = ws.target_dir.join("bench").join("http-logs").join(&stamp);
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    // results[server][workload] = figures of each round
    let mut results: Vec<Vec<Vec<Figures>>> = vec![vec![Vec::new(); WORKLOADS.len()]; servers.len()];
    for round in 1..=o.rounds {
        let mut order: Vec<usize> = (0..servers.len()).collect();
        if round % 2 == 0 {
            order.reverse();
        }
        for i in order {
            let (name, line) = servers[i];
            let log = log_dir.join(format!("round{round}-{name}.log"));
            match measure(&images.kernel, &images.initrd, line, &o, &log) {
                Ok(figs) => {
                    for (w, f) in figs.into_iter().enumerate() {
                        match f {
                            Ok(f) => results[i][w].push(f),
                            Err(e) => notes.push(format!("{name} round {round}, {}: {e}", WORKLOADS[w].name)),
                        }
                    }
                    eprintln!("bench: round {round}/{} {name}: measured (log {})", o.rounds, log.display());
                }
                Err(e) => {
                    eprintln!("bench: round {round}/{} {name}: {e}", o.rounds);
                    notes.push(format!("{name} round {round}: {e} (log {})", log.display()));
                }
            }
        }
    }
    let md = table(&servers, &results, &o, &notes);
    let out = o.out.clone().unwrap_or_else(|| ws.target_dir.join("bench").join("http"));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for name in [format!("{stamp}.md"), "latest.md".to_string()] {
        std::fs::write(out.join(&name), &md).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    println!("{md}");
    eprintln!("bench: wrote {} and latest.md", out.join(format!("{stamp}.md")).display());
    if results.iter().all(|s| s.iter().all(Vec::is_empty)) {
        return Err("no server produced a figure".into());
    }
    Ok(())
}

/// Boots Oxok, starts the server from the shell, runs every workload.
fn measure(
    kernel: &Path,
    initrd: &Path,
    line: &str,
    o: &Opts,
    log: &Path,
) -> Result<Vec<Result<Figures, String>>, String> {
    let port = free_tcp_port()?;
    let pcap = log.with_extension("pcap");
    let mut q =
        Qemu::new(Boot::Pvh { kernel: kernel.to_path_buf(), initrd: initrd.to_path_buf(), cmdline: "run=init".into() });
    q.extra = nic_args(&[("tcp", port, 80)]);
    q.extra.extend(["-object".into(), format!("filter-dump,id=cap0,netdev=n0,file={}", pcap.display())]);
    let out = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut cmd: Command = q.command();
    if deps::have_program("taskset") {
        let mut t = Command::new("taskset");
        t.args(["-c", "0"]).arg(cmd.get_program()).args(cmd.get_args());
        cmd = t;
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    let result = (|| {
        child.stdin.as_mut().ok_or("no stdin")?.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
        wait_up(port, &mut child)?;
        Ok(WORKLOADS
            .iter()
            .map(|w| {
                let before = httpload::pcap_packets(&pcap);
                let mut f = match w.tool {
                    Tool::Ab10 => httpload::ab(port, w.path, o.requests, o.concurrency, false),
                    Tool::AbKeepAlive => httpload::ab(port, w.path, o.requests, o.concurrency, true),
                    Tool::Wrk => httpload::wrk(port, w.path, o.secs, o.concurrency),
                }?;
                std::thread::sleep(Duration::from_millis(300)); // the last packets reach the capture
                let packets = httpload::pcap_packets(&pcap) - before;
                f.packets_per_request = packets as f64 / f.completed.max(1) as f64;
                Ok(f)
            })
            .collect())
    })();
    // The server ends after its idle time and the shell with it; a guest
    // that is still up 30 s later is stopped.
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Waits until `GET /` answers 200 (the guest boots, the server starts).
fn wait_up(port: u16, child: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(180);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("QEMU exited before the server answered ({status})"));
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut reply = Vec::new();
            if s.write_all(b"GET / HTTP/1.0\r\n\r\n").is_ok()
                && s.read_to_end(&mut reply).is_ok()
                && reply.starts_with(b"HTTP/1.1 200")
            {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err("the server never answered".into())
}

fn cell(values: &[f64], digits: usize) -> String {
    match Summary::of(values) {
        None => "missing".into(),
        Some(s) if s.n == 1 => format!("{:.*}", digits, s.median),
        Some(s) => format!("{:.*} ({:.*}–{:.*})", digits, s.median, digits, s.min, digits, s.max),
    }
}

/// The markdown table: per workload and server, medians (min–max).
fn table(servers: &[(&str, &str)], results: &[Vec<Vec<Figures>>], o: &Opts, notes: &[String]) -> String {
    let mut md = String::from("# HTTP benchmark: Oxok's servers\n\n");
    md.push_str(&format!(
        "{} round(s); ab: {} requests, concurrency {}; wrk: {} s, {} connections, 1 thread; load pinned to host core {}, \
         QEMU to core 0; virtio-net offloads off, QEMU user network (hostfwd). Medians (min–max).\n\n",
        o.rounds,
        o.requests,
        o.concurrency,
        o.secs,
        o.concurrency,
        httpload::LOAD_CORE
    ));
    md.push_str("| workload | server | requests/s | MB/s | p50 ms | p90 ms | p99 ms | packets/request | failed |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (w, wl) in WORKLOADS.iter().enumerate() {
        for (i, (name, _)) in servers.iter().enumerate() {
            let f = &results[i][w];
            let col = |g: fn(&Figures) -> f64| f.iter().map(g).collect::<Vec<f64>>();
            md.push_str(&format!(
                "| {} | {name} | {} | {} | {} | {} | {} | {} | {} |\n",
                wl.name,
                cell(&col(|f| f.requests_per_s), 1),
                cell(&col(|f| f.mb_per_s), 2),
                cell(&col(|f| f.p50_ms), 1),
                cell(&col(|f| f.p90_ms), 1),
                cell(&col(|f| f.p99_ms), 1),
                cell(&col(|f| f.packets_per_request), 2),
                f.iter().map(|f| f.failed).sum::<u64>(),
            ));
        }
    }
    if !notes.is_empty() {
        md.push_str("\nNotes:\n");
        for n in notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    md
}
