//! Layer 2 of `cargo xtask test`: boot Oxok under QEMU once per scenario,
//! capture the serial port, and judge the run by its output and exit status.
//! The scenarios themselves are listed in `scenarios.rs`.

use crate::hostnet;
use crate::netns::Netns;
use crate::pattern::{find, first_missing_in_order, line_at};
use crate::proc::{Captured, Drive, run_driven};
use crate::qemu::{Qemu, status_meaning};
use crate::report::{printable, tail};
use oxok_abi::boot::{EXIT_HALT, EXIT_PANIC, qemu_status};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// One QEMU run and what it must show. Write new ones in `scenarios.rs` as
/// `Scenario { name, about, cmdline, expect, ..Scenario::DEFAULT }`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scenario {
    /// Short unique name (also the log file's name): `hostile-map`.
    pub name: &'static str,
    /// One line: what the scenario proves.
    pub about: &'static str,
    /// Kernel command line, e.g. `run=init` or `ktest run=hostile-map,victim`.
    pub cmdline: &'static str,
    /// Must all appear in the serial output, in this order. `*` matches any
    /// run of characters within a line (see `pattern.rs`).
    pub expect: &'static [&'static str],
    /// Must not appear anywhere. `KERNEL PANIC` is always forbidden unless
    /// `exit` is [`Exit::Panic`].
    pub forbid: &'static [&'static str],
    /// How the run must end.
    pub exit: Exit,
    /// Wall-clock limit; the machine is killed and the scenario fails after it.
    pub timeout_secs: u64,
    /// How the machine boots.
    pub boot: Boot,
    /// Guest memory if not the default (`512M`), QEMU syntax: `Some("64M")`.
    pub memory: Option<&'static str>,
    /// Bytes typed on the serial console (QEMU's stdin) once the machine
    /// starts; empty for none.
    pub input: &'static str,
    /// A virtio-net NIC, host ports forwarded to it and a host program to
    /// run against it (see `hostnet.rs`); `None`: no NIC.
    pub net: Option<hostnet::NetSpec>,
    /// The kernel log level the harness adds to `cmdline` (as `log=LEVEL`)
    /// unless `cmdline` names one; `None` boots at the kernel's default
    /// (`warn`, what `cargo xtask run` shows). Scenarios read `[info]` lines
    /// such as `env N (x) exited with status 0`, so the default is `info`.
    pub log: Option<&'static str>,
    /// A virtio-blk disk (a fresh raw image) and an optional second boot on
    /// it (see `hostdisk.rs`); `None`: no disk.
    pub disk: Option<crate::hostdisk::DiskSpec>,
    /// Further QEMU arguments (e.g. `-rtc base=…` to pin the clock).
    pub qemu_args: &'static [&'static str],
    /// A second machine the scenario moves a process to (`scenarios_ckpt.rs`).
    pub second: Option<&'static crate::scenarios_ckpt::Second>,
    /// Types on the console as a person would, timing its keys and waiting
    /// for what the guest prints (`typist.rs`); its error fails the scenario.
    pub typist: Option<crate::typist::Typing>,
}

impl Scenario {
    /// Defaults for the fields a scenario does not set.
    pub(crate) const DEFAULT: Scenario = Scenario {
        name: "",
        about: "",
        cmdline: "run=init",
        expect: &[],
        forbid: &[],
        exit: Exit::Halt,
        timeout_secs: 30,
        boot: Boot::Pvh,
        memory: None,
        input: "",
        net: None,
        log: Some("info"),
        disk: None,
        qemu_args: &[],
        second: None,
        typist: None,
    };

    /// The kernel command line the machine boots with: `cmdline` plus
    /// `log=LEVEL` when [`Scenario::log`] asks for one and `cmdline` has
    /// no `log=` word.
    pub(crate) fn kernel_cmdline(&self) -> String {
        match self.log {
            Some(level) if !self.cmdline.split_whitespace().any(|w| w.starts_with("log=")) => {
                format!("{} log={level}", self.cmdline)
            }
            _ => self.cmdline.to_string(),
        }
    }
}

/// The expected end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The kernel halted with nothing left to run (QEMU status 33).
    Halt,
    /// The kernel panicked on purpose (QEMU status 35).
    #[allow(dead_code)] // for deliberate-panic scenarios
    Panic,
    /// With `halt_status` on the command line: the kernel halted after the
    /// last boot program exited with this status (1..=63).
    Status(u32),
    /// A Linux guest powered off (QEMU status 0): [`Boot::Linux`].
    PowerOff,
    /// The harness cuts the power — kills QEMU, no orderly halt, no further
    /// disk write — as soon as the serial output shows this text; a disk
    /// scenario's second boot then sees what was durable.
    Cut(&'static str),
}

impl Exit {
    /// The QEMU exit status this stands for (`None`: killed, a cut).
    pub(crate) fn status(self) -> Option<i32> {
        match self {
            Exit::Halt => Some(qemu_status(EXIT_HALT)),
            Exit::Panic => Some(qemu_status(EXIT_PANIC)),
            Exit::Status(n) => Some(qemu_status(oxok_abi::boot::EXIT_STATUS_BASE + n)),
            Exit::PowerOff => Some(0),
            Exit::Cut(_) => None,
        }
    }
}

/// How a scenario's machine boots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boot {
    /// QEMU `-kernel`/`-initrd`/`-append` (fast).
    Pvh,
    /// The GRUB ISO under SeaBIOS.
    IsoBios,
    /// The GRUB ISO under OVMF (UEFI).
    IsoUefi,
    /// Not Oxok: the bench's Linux guest running Debian's busybox test
    /// suite (`bbsuite.rs`), the reference for `linux-bbsuite`.
    Linux,
}

/// Always forbidden unless the scenario expects a panic.
const PANIC_LINE: &str = "KERNEL PANIC";

/// The reasons a captured run fails `s`; empty if it passes.
pub(crate) fn judge(s: &Scenario, run: &Captured) -> Vec<String> {
    let mut why = Vec::new();
    if run.timed_out {
        why.push(format!("timeout after {} s", s.timeout_secs));
    } else if let Exit::Cut(line) = s.exit {
        if !run.cut {
            let shown = run.status.map_or("none".to_string(), |c| c.to_string());
            why.push(format!(
                "the machine ended (exit status {shown}) before showing {line:?}, where its power was to be cut"
            ));
        }
    } else if run.status != s.exit.status() {
        let shown = run.status.map_or("none".to_string(), |c| c.to_string());
        why.push(format!("exit status {shown}, meaning: {}", status_meaning(run.status)));
    }
    if let Some(i) = first_missing_in_order(&run.serial, s.expect) {
        let after = if i > 0 { format!(" (after {:?})", s.expect[i - 1]) } else { String::new() };
        why.push(format!("missing expectation {:?}{after}", s.expect[i]));
    }
    let implicit = (s.exit != Exit::Panic).then_some(PANIC_LINE);
    for f in s.forbid.iter().copied().chain(implicit) {
        if let Some(m) = find(&run.serial, f, 0) {
            why.push(format!("forbidden {f:?} found: {}", printable(line_at(&run.serial, m.start))));
        }
    }
    why
}

/// The result of one scenario.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub name: &'static str,
    /// Empty when the scenario passed.
    pub failures: Vec<String>,
}

/// Runs each `(scenario, machine)` with up to `jobs` at once, printing one
/// line per scenario as it finishes (plus details on failure). Serial logs
/// go to `log_dir/NAME.log`.
pub(crate) fn run_all(
    runs: Vec<(Scenario, Result<Qemu, String>)>,
    jobs: usize,
    log_dir: &std::path::Path,
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    let print = Mutex::new(());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, runs.len().max(1)) {
            s.spawn(|| {
                while let Some((scenario, machine)) = runs.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let log = log_dir.join(format!("{}.log", scenario.name));
                    let (failures, report) = run_one(scenario, machine, &log);
                    let _guard = print.lock().unwrap_or_else(|e| e.into_inner());
                    println!("{report}");
                    outcomes.lock().unwrap_or_else(|e| e.into_inner()).push(Outcome { name: scenario.name, failures });
                }
            });
        }
    });
    outcomes.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Runs one scenario; returns its failures and the text to print.
fn run_one(s: &Scenario, machine: &Result<Qemu, String>, log: &Path) -> (Vec<String>, String) {
    let head = format!("scenario {} ...", s.name);
    let machine = match machine {
        Ok(m) => m,
        Err(e) => return (vec![e.clone()], format!("{head} FAILED ({e})")),
    };
    if let Some(second) = s.second {
        return crate::scenarios_ckpt::run_pair(s, second, machine, log);
    }
    let (machine, ports, netns) = match with_nic(machine, s) {
        Ok(m) => m,
        Err(e) => return (vec![e.clone()], format!("{head} FAILED ({e})")),
    };
    let machine = match crate::hostdisk::attach(machine, s, log) {
        Ok(m) => m,
        Err(e) => return (vec![e.clone()], format!("{head} FAILED ({e})")),
    };
    let timeout = Duration::from_secs(s.timeout_secs);
    let (run, host) = std::thread::scope(|scope| {
        let ports = &ports;
        let host = s.net.and_then(|n| n.host).map(|f| scope.spawn(move || f(ports)));
        let cut = match s.exit {
            Exit::Cut(line) => Some(line),
            _ => None,
        };
        let drive = Drive { cut, typist: s.typist, netns: netns.as_ref().map(|n| n.name.as_str()) };
        let command = match &netns {
            Some(ns) => {
                let mut c = ns.command(crate::qemu::QEMU);
                c.args(machine.args());
                c
            }
            None => machine.command(),
        };
        let run = run_driven(command, timeout, Some(log), s.input.as_bytes(), drive);
        (run, host.map(|h| h.join().unwrap_or_else(|_| Err("the host program panicked".into()))))
    });
    let run = match run {
        Ok(run) => run,
        Err(e) => return (vec![e.clone()], format!("{head} FAILED ({e})")),
    };
    let mut run = run;
    symbolize_log(&machine, log, &mut run.serial);
    let mut why = judge(s, &run);
    match host {
        Some(Ok(text)) => append_log(log, &text),
        Some(Err(e)) => {
            append_log(log, &format!("host: {e}"));
            why.push(format!("host program: {e}"));
        }
        None => {}
    }
    match run.typist.take() {
        Some(Ok(text)) => append_log(log, &text),
        Some(Err(e)) => {
            append_log(log, &format!("typist: {e}"));
            why.push(format!("typist: {e}"));
        }
        None => {}
    }
    if why.is_empty() {
        why = crate::hostdisk::second_boot(s, &machine, log);
    }
    let secs = run.elapsed.as_secs_f64();
    if why.is_empty() {
        return (why, format!("{head} ok ({secs:.1} s)"));
    }
    let mut text = format!("{head} FAILED ({}) ({secs:.1} s)\n", why[0]);
    for w in &why[1..] {
        text.push_str(&format!("    also: {w}\n"));
    }
    text.push_str(&format!("    machine: {}\n", machine.display()));
    if !run.stderr.trim().is_empty() {
        text.push_str(&format!("    QEMU said:\n{}\n", tail(&run.stderr, 10)));
    }
    text.push_str(&format!("    last serial output:\n{}\n", tail(&run.serial, 40)));
    text.push_str(&format!("    full serial log: {}", log.display()));
    (why, text)
}

/// `machine` with the NIC scenario `s` asks for (free host ports forwarded
/// to its guest ports, returned in order; or a tap in a namespace made for
/// the run, returned to be kept until the machine is gone); unchanged
/// without one.
fn with_nic(machine: &Qemu, s: &Scenario) -> Result<(Qemu, Vec<u16>, Option<Netns>), String> {
    let mut m = machine.clone();
    let Some(net) = s.net.as_ref() else { return Ok((m, Vec::new(), None)) };
    if net.tap {
        if !net.udp.is_empty() || !net.tcp.is_empty() {
            return Err("a tap NIC forwards no ports".into());
        }
        let ns = Netns::create(&format!("scenario {}", s.name))?;
        m.extra.extend(crate::netns::tap_nic_args(&ns.tap, false));
        return Ok((m, Vec::new(), Some(ns)));
    }
    let mut ports = Vec::new();
    let mut forwards = Vec::new();
    for &guest in net.udp {
        let host = hostnet::free_udp_port()?;
        ports.push(host);
        forwards.push(("udp", host, guest));
    }
    for &guest in net.tcp {
        let host = hostnet::free_tcp_port()?;
        ports.push(host);
        forwards.push(("tcp", host, guest));
    }
    m.extra.extend(hostnet::nic_args(&forwards));
    Ok((m, ports, None))
}

/// Symbolises the backtraces in `serial` (if there are any) and rewrites
/// the log with them.
fn symbolize_log(machine: &Qemu, log: &Path, serial: &mut String) {
    let crate::qemu::Boot::Pvh { kernel, initrd, .. } = &machine.boot else { return };
    if !serial.contains("backtrace (") && !serial.contains(") destroyed: ") {
        return;
    }
    *serial = crate::symbolize::Symbolizer::new(kernel, initrd).annotate(serial);
    let _ = std::fs::write(log, serial.as_bytes());
}

fn append_log(log: &Path, text: &str) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(log) {
        let _ = writeln!(f, "{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(serial: &str, status: Option<i32>, timed_out: bool) -> Captured {
        Captured {
            status,
            timed_out,
            cut: false,
            typist: None,
            serial: serial.into(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
        }
    }

    const S: Scenario =
        Scenario { name: "t", expect: &["Oxok", "env * destroyed"], forbid: &["oops"], ..Scenario::DEFAULT };

    #[test]
    fn harness_log_level() {
        assert_eq!(S.kernel_cmdline(), "run=init log=info");
        let quiet = Scenario { log: None, ..S };
        assert_eq!(quiet.kernel_cmdline(), "run=init");
        let own = Scenario { cmdline: "log=debug run=x", ..S };
        assert_eq!(own.kernel_cmdline(), "log=debug run=x");
    }

    #[test]
    fn a_cut_must_happen() {
        let cut = Scenario { exit: Exit::Cut("cut now"), ..S };
        let seen = Captured { cut: true, ..captured("Oxok\nenv 2 destroyed\ncut now\n", None, false) };
        assert!(judge(&cut, &seen).is_empty());
        // The machine halted by itself: the power was never cut.
        let why = judge(&cut, &captured("Oxok\nenv 2 destroyed\n", Some(33), false));
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("where its power was to be cut"), "{why:?}");
    }

    #[test]
    fn passes_on_halt_with_expectations() {
        assert!(judge(&S, &captured("Oxok\nenv 2 destroyed\n", Some(33), false)).is_empty());
    }

    #[test]
    fn reports_each_failure() {
        let why = judge(&S, &captured("env 2 destroyed\nOxok\noops\nKERNEL PANIC: x\n", Some(35), false));
        assert_eq!(why.len(), 4, "{why:?}");
        assert_eq!(why[0], "exit status 35, meaning: kernel panic");
        assert!(why[1].starts_with("missing expectation \"env * destroyed\" (after \"Oxok\")"));
        assert_eq!(why[2], "forbidden \"oops\" found: oops");
        assert_eq!(why[3], "forbidden \"KERNEL PANIC\" found: KERNEL PANIC: x");
        let why = judge(&S, &captured("Oxok\nenv 1 destroyed", None, true));
        assert_eq!(why, ["timeout after 30 s"]);
        let why = judge(&S, &captured("Oxok\nenv 1 destroyed", Some(0), false));
        assert_eq!(why, ["exit status 0, meaning: triple fault or reset"]);
    }

    #[test]
    fn deliberate_panic() {
        let p = Scenario { exit: Exit::Panic, expect: &["KERNEL PANIC"], ..Scenario::DEFAULT };
        assert!(judge(&p, &captured("KERNEL PANIC: on purpose\n", Some(35), false)).is_empty());
        assert_eq!(judge(&p, &captured("KERNEL PANIC\n", Some(33), false)).len(), 1);
    }
}
