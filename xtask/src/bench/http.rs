//! `cargo xtask bench --http` (issues 13 and 14): Oxok's two web servers —
//! `httpd` on the libOS sockets and `cheetah` on its own TCP — and Debian's
//! nginx in the Linux guest, each booted in turn under the same QEMU
//! settings as every benchmark (one vCPU, TCG) behind the same virtio-net
//! device (offloads off; Linux once more with the device's default
//! offloads) on a tap device in a network namespace the tool creates
//! (`netns.rs`). The load — `ab` (HTTP/1.0, a connection per request; and
//! keep-alive) and `wrk` (keep-alive) — runs in that namespace pinned to
//! the other host core; packets per request are counted on the tap.
//! Issue 13's rows come from the same boots: TCP round trips and bulk
//! echo against Oxok's `tcpecho` and the Linux guest's `echo`, measured by
//! the same client (`netclient.rs`). Each round boots every machine once,
//! alternating the order; the table (`httptable.rs`) gives medians over the
//! rounds with the min–max spread, and ratios to nginx and Linux.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::hostidle::HostIdle;
use super::httpload::{self, Figures};
use super::httpopts::{Opts, USAGE, parse};
use super::httptable::{self, Collected};
use super::netclient::{self, EchoFigures};
use super::webguest::{self, ECHO_PORT};
use crate::build::build_images;
use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::netns::{self, GUEST_IP, Netns};
use crate::qemu::{Boot, Qemu};

/// Which system a machine boots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Os {
    /// Oxok, with the program and the line typed at its shell. The servers
    /// end after 5 idle seconds (their counters reach the log), `tcpecho`
    /// on the client's `quit`.
    Oxok { program: &'static str, line: &'static str },
    /// The Linux guest (nginx and echo); `offloads`: the device's defaults.
    Linux { offloads: bool },
}

/// One machine of a round: what it serves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Machine {
    pub name: &'static str,
    pub os: Os,
    pub http: bool,
    pub echo: bool,
}

pub(crate) const MACHINES: [Machine; 5] = [
    Machine {
        name: "httpd",
        os: Os::Oxok { program: "httpd", line: "httpd -q --samples --exit-idle 5\nexit 0\n" },
        http: true,
        echo: false,
    },
    Machine {
        name: "cheetah",
        os: Os::Oxok { program: "cheetah", line: "cheetah -q --samples --exit-idle 5\nexit 0\n" },
        http: true,
        echo: false,
    },
    Machine { name: "nginx", os: Os::Linux { offloads: false }, http: true, echo: true },
    Machine { name: "nginx, offloads", os: Os::Linux { offloads: true }, http: true, echo: true },
    Machine {
        name: "tcpecho",
        os: Os::Oxok { program: "tcpecho", line: "tcpecho 7\nexit 0\n" },
        http: false,
        echo: true,
    },
];

/// One workload: a name, the document, how it is loaded.
pub(crate) struct Workload {
    pub name: &'static str,
    pub path: &'static str,
    pub tool: Tool,
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Tool {
    /// `ab`, HTTP/1.0: a connection per request.
    Ab10,
    /// `ab -k`: keep-alive.
    AbKeepAlive,
    /// `wrk`: keep-alive, for a time.
    Wrk,
}

pub(crate) const WORKLOADS: [Workload; 7] = [
    Workload { name: "1 KB, HTTP/1.0 (ab)", path: "/1k.txt", tool: Tool::Ab10 },
    Workload { name: "10 KB, HTTP/1.0 (ab)", path: "/10k.txt", tool: Tool::Ab10 },
    Workload { name: "100 KB, HTTP/1.0 (ab)", path: "/100k.bin", tool: Tool::Ab10 },
    Workload { name: "1 KB, keep-alive (ab -k)", path: "/1k.txt", tool: Tool::AbKeepAlive },
    Workload { name: "10 KB, keep-alive (ab -k)", path: "/10k.txt", tool: Tool::AbKeepAlive },
    Workload { name: "1 KB, keep-alive (wrk)", path: "/1k.txt", tool: Tool::Wrk },
    Workload { name: "100 KB, keep-alive (wrk)", path: "/100k.bin", tool: Tool::Wrk },
];

/// Runs the HTTP benchmark.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return Ok(());
    }
    let o = parse(args)?;
    let key = |m: &Machine| m.name.replace(", ", "-");
    if let Some(bad) = o.only.iter().flatten().find(|n| !MACHINES.iter().any(|m| key(m) == **n)) {
        return Err(format!("--only: no machine `{bad}`\n{USAGE}"));
    }
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::Qemu, Need::LoadGen, Need::Netns])?;
    eprintln!("bench: building Oxok …");
    let images = build_images(&ws)?;
    eprintln!("bench: preparing the Linux guest (nginx) …");
    let guest = webguest::prepare(&ws)?;
    let mut c = Collected::default();
    let machines: Vec<Machine> = MACHINES
        .iter()
        .copied()
        .filter(|m| !(o.no_offloads_row && m.os == Os::Linux { offloads: true }))
        .filter(|m| o.only.as_ref().is_none_or(|only| only.iter().any(|n| *n == key(m))))
        .filter(|m| match m.os {
            Os::Oxok { program, .. } if !images.programs.iter().any(|q| q == program) => {
                c.notes.push(format!("Oxok's boot archive has no `{program}`: its figures are missing."));
                false
            }
            _ => true,
        })
        .collect();
    c.versions = guest.versions.clone();
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (timestamp, stamp) = super::results::utc(secs);
    let log_dir = ws.target_dir.join("bench").join("http-logs").join(&stamp);
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    let plugin = if o.counts { Some(crate::icount::build_plugin(&ws)?) } else { None };
    let ns = Netns::create("cargo xtask bench --http")?;
    // Held until the rounds end (dropped before the table is written).
    let host_idle = HostIdle::apply(o.host_idle);
    c.host_idle = host_idle.description.clone();
    eprintln!("bench: {}", c.host_idle);
    c.load.push(httptable::loadavg());
    for round in 1..=o.rounds {
        let mut order: Vec<&Machine> = machines.iter().collect();
        if round % 2 == 0 {
            order.reverse();
        }
        for m in order {
            let log = log_dir.join(format!("round{round}-{}.log", m.name.replace([' ', ','], "")));
            let mut q = machine(m, &images.kernel, &images.initrd, &guest, &ns, &o.oxok_cmdline);
            if let (Some(plugin), Os::Oxok { .. }) = (&plugin, m.os) {
                let counts = log.with_extension("counts");
                q.extra.extend(crate::icount::plugin_args(plugin, &counts));
                eprintln!("bench: {} counts to {}", m.name, counts.display());
            }
            if c.commands.iter().all(|(n, _)| n != m.name) {
                c.commands.push((m.name.to_string(), q.display()));
            }
            match measure(m, &q, &ns, &o, &log) {
                Ok((figs, echo)) => {
                    for (w, f) in figs.into_iter().enumerate() {
                        match f {
                            Ok(f) => c.http.entry(m.name, w).push(f),
                            Err(e) => c.notes.push(format!("{} round {round}, {}: {e}", m.name, WORKLOADS[w].name)),
                        }
                    }
                    match echo {
                        Some(Ok(e)) => c.echo.entry(m.name, 0).push(e),
                        Some(Err(e)) => c.notes.push(format!("{} round {round}, echo: {e}", m.name)),
                        None => {}
                    }
                    eprintln!("bench: round {round}/{} {}: measured (log {})", o.rounds, m.name, log.display());
                }
                Err(e) => {
                    eprintln!("bench: round {round}/{} {}: {e}", o.rounds, m.name);
                    c.notes.push(format!("{} round {round}: {e} (log {})", m.name, log.display()));
                }
            }
        }
    }
    drop(host_idle);
    drop(ns);
    c.load.push(httptable::loadavg());
    let md = httptable::table(&machines, &c, &o, &timestamp);
    let svg = httptable::chart(&machines, &c, &format!("{timestamp} · {} round(s)", o.rounds));
    let out = o.out.clone().unwrap_or_else(|| ws.target_dir.join("bench").join("http"));
    super::report::write_md_svg(&out, &stamp, &md, &svg)?;
    println!("{md}");
    eprintln!("bench: wrote {} (.md, .svg) and latest.md, latest.svg", out.join(&stamp).display());
    if c.http.is_empty() && c.echo.is_empty() {
        return Err("no machine produced a figure".into());
    }
    Ok(())
}

/// The QEMU machine of `m`: one vCPU, TCG, the tap NIC.
fn machine(m: &Machine, kernel: &Path, initrd: &Path, guest: &webguest::WebGuest, ns: &Netns, extra: &str) -> Qemu {
    let (boot, offloads) = match m.os {
        Os::Oxok { .. } => {
            let cmdline = format!("run=init {extra}").trim_end().to_string();
            (Boot::Pvh { kernel: kernel.into(), initrd: initrd.into(), cmdline }, false)
        }
        Os::Linux { offloads } => (
            Boot::Pvh {
                kernel: guest.kernel.clone(),
                initrd: guest.initramfs.clone(),
                cmdline: webguest::CMDLINE.into(),
            },
            offloads,
        ),
    };
    let mut q = Qemu::new(boot);
    q.extra = netns::tap_nic_args(&ns.tap, offloads);
    q
}

type Measured = (Vec<Result<Figures, String>>, Option<Result<EchoFigures, String>>);

/// Boots the machine in the namespace (pinned to core 0), waits for its
/// server, runs every workload it serves, stops it.
fn measure(m: &Machine, q: &Qemu, ns: &Netns, o: &Opts, log: &Path) -> Result<Measured, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = ns
        .pinned("0", crate::qemu::QEMU)
        .args(q.args())
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    let pid = child.id();
    let result = (|| -> Result<Measured, String> {
        if let Os::Oxok { line, .. } = m.os {
            child.stdin.as_mut().ok_or("no stdin")?.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
        }
        let mut figs = Vec::new();
        if m.http {
            wait_up(ns, &mut child, "probe-http", 80)?;
            for w in &WORKLOADS {
                let before = ns.tap_packets(pid);
                let base = format!("{GUEST_IP}:80");
                let f = match w.tool {
                    Tool::Ab10 => httpload::ab(ns, &base, w.path, o.requests, o.concurrency, false),
                    Tool::AbKeepAlive => httpload::ab(ns, &base, w.path, o.requests, o.concurrency, true),
                    Tool::Wrk => httpload::wrk(ns, &base, w.path, o.secs, o.concurrency),
                };
                std::thread::sleep(Duration::from_millis(300)); // the last packets pass the tap
                figs.push(f.map(|mut f| {
                    if let (Some(a), Some(b)) = (before, ns.tap_packets(pid)) {
                        f.packets_per_request = packets_per_request(a, b, f.completed);
                    }
                    f
                }));
            }
        }
        let echo = m.echo.then(|| {
            wait_up(ns, &mut child, "probe-tcp", ECHO_PORT)?;
            echo(ns, o)
        });
        Ok((figs, echo))
    })();
    // An Oxok server ends after its idle time and the shell with it; a
    // guest still up 30 s later — and the Linux guest at once — is stopped.
    let end = Instant::now() + Duration::from_secs(if matches!(m.os, Os::Oxok { .. }) { 30 } else { 0 });
    while Instant::now() < end && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Packets on the tap between two readings, per completed request.
pub(crate) fn packets_per_request(before: (u64, u64), after: (u64, u64), completed: u64) -> f64 {
    let n = after.0.saturating_sub(before.0) + after.1.saturating_sub(before.1);
    n as f64 / completed.max(1) as f64
}

/// `cargo xtask bench --netclient …` inside the namespace, pinned to the
/// load core.
fn netclient(ns: &Netns, args: &[String]) -> Result<Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the xtask binary: {e}"))?;
    let mut c = ns.pinned(httpload::LOAD_CORE, &exe.to_string_lossy());
    c.args(["bench", "--netclient"]).args(args);
    Ok(c)
}

/// Waits until the guest's server answers (the guest boots, the server starts).
fn wait_up(ns: &Netns, qemu: &mut Child, mode: &str, port: u16) -> Result<(), String> {
    let args = [mode.to_string(), GUEST_IP.into(), port.to_string(), "240".into()];
    let mut probe = netclient(ns, &args)?
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the probe: {e}"))?;
    loop {
        if let Ok(Some(status)) = qemu.try_wait() {
            let _ = probe.kill();
            let _ = probe.wait();
            return Err(format!("QEMU exited before the server answered ({status})"));
        }
        match probe.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(_)) => {
                let mut why = String::new();
                if let Some(mut e) = probe.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut why);
                }
                return Err(format!("the server never answered ({})", why.trim()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return Err(format!("probe: {e}")),
        }
    }
}

/// Round trips and bulk echo against the guest's echo server.
fn echo(ns: &Netns, o: &Opts) -> Result<EchoFigures, String> {
    let bytes = o.bulk_kb as u64 * 1024;
    let args =
        ["echo".to_string(), GUEST_IP.into(), ECHO_PORT.to_string(), o.roundtrips.to_string(), bytes.to_string()];
    let out = netclient(ns, &args)?.stdin(Stdio::null()).output().map_err(|e| format!("echo client: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    netclient::parse_echo(&text)
        .ok_or_else(|| format!("echo client failed: {} {}", text.trim(), String::from_utf8_lossy(&out.stderr).trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_packets_per_request() {
        assert_eq!(packets_per_request((100, 50), (160, 90), 10), 10.0);
        assert_eq!(packets_per_request((5, 5), (5, 5), 0), 0.0);
        // A counter that went backwards (never on a live tap) counts nothing.
        assert_eq!(packets_per_request((10, 10), (4, 30), 4), 5.0);
    }

    #[test]
    fn machines_alternate_sides_and_share_names_with_the_table() {
        assert!(MACHINES.iter().any(|m| matches!(m.os, Os::Linux { offloads: false }) && m.http && m.echo));
        assert!(MACHINES.iter().any(|m| matches!(m.os, Os::Oxok { program: "tcpecho", .. }) && m.echo));
        let mut names: Vec<&str> = MACHINES.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), MACHINES.len());
    }
}
