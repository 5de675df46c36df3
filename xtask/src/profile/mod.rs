//! `cargo xtask profile WORKLOAD`: where the guest's instructions go while
//! the bench program (apps/bench) runs one workload.
//!
//! Oxok boots with `run=bench` under QEMU TCG with its gdbstub open on a
//! local port. This tool speaks the GDB remote protocol itself: back to
//! back (or every `--interval-us`) it stops the guest (0x03), reads `rip`
//! (`g`) and lets it run again (`c`); it boots again until `--samples` are
//! in the workload's window. The serial console splits the run into windows: the
//! workload's window is the time between the bench line before its own
//! (`bench: <previous> …`) and its own line (`bench: WORKLOAD …`), i.e. its
//! set-up, warm-up batch and timed batches. Each sample is attributed to a
//! function through the kernel ELF's symbols (upper half) or the `bench`
//! ELF's from the boot archive (lower half).
//!
//! Why the gdbstub and not the monitor: one small binary protocol on a TCP
//! socket, one round trip per register read, and no text of `info
//! registers` to parse. What a sample weighs: QEMU stops a TCG guest
//! at a block start or right after an exception (`syscall`, faults), after
//! a host-time interval, so a function's share is roughly its share of the
//! host's emulation time in the window (an I/O port write or a CR3 load
//! costs TCG far more than an `add`), leaning toward the first block after
//! each `syscall` or trap; it is not an exact instruction count.

mod gdb;
pub(crate) mod symbols;
pub(crate) mod table;

use crate::bench::oxok;
use crate::build::Images;
use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::qemu::{Boot, Qemu};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The Linux personality's ELF in the boot archive.
const PERSONALITY: &str = "linux";

/// The usage text.
pub(crate) const USAGE: &str = "\
usage: cargo xtask profile WORKLOAD [--samples N] [--boots N] [--interval-us US]
                           [--top N] [--quick] [--icount] [--timeout SECS]

Boots the bench program under QEMU TCG and samples the guest's rip through
QEMU's gdbstub while WORKLOAD runs (from the bench line before its own to its
own line); prints the hottest functions and the layers they belong to. For a
workload run through the Linux personality (`linux_getppid`, `lua_sort`,
`sqlite_insert`, `busybox_sh`) the personality's symbols are read too, and
every other user address counts as the Linux program's.
  --samples N       boot again until N samples of the window (default 1000)
  --boots N         but at most N boots (default 8)
  --interval-us US  time between samples (default 0: back to back)
  --top N           functions listed (default 25)
  --quick           the bench program's quick counts (`run=bench+quick`)
  --icount          add `-icount shift=0,sleep=off` (as `bench --mode icount`)
  --timeout SECS    give up on a boot after SECS (default 600)
";

/// Parsed options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub workload: String,
    pub samples: usize,
    /// Most boots to reach `samples`.
    pub boots: usize,
    pub interval: Duration,
    pub top: usize,
    pub quick: bool,
    pub icount: bool,
    pub timeout: Duration,
}

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            workload: String::new(),
            samples: 1000,
            boots: 8,
            interval: Duration::ZERO,
            top: 25,
            quick: false,
            icount: false,
            timeout: Duration::from_secs(600),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            let mut num = |what: &str| -> Result<u64, String> {
                let v = inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{what} needs a value"))?;
                v.parse().map_err(|_| format!("{what} takes a number, not `{v}`"))
            };
            match name {
                "--samples" => o.samples = num(name)?.max(1) as usize,
                "--interval-us" => o.interval = Duration::from_micros(num(name)?),
                "--boots" => o.boots = num(name)?.max(1) as usize,
                "--top" => o.top = num(name)?.max(1) as usize,
                "--timeout" => o.timeout = Duration::from_secs(num(name)?.max(1)),
                "--quick" => o.quick = true,
                "--icount" => o.icount = true,
                w if !w.starts_with('-') && o.workload.is_empty() => o.workload = w.to_string(),
                other => return Err(format!("`cargo xtask profile` does not take `{other}`\n{USAGE}")),
            }
        }
        if o.workload.is_empty() {
            return Err(format!("which workload? e.g. `cargo xtask profile null_call`\n{USAGE}"));
        }
        Ok(o)
    }
}

/// What the serial console has shown so far.
#[derive(Default)]
struct Console {
    /// `bench:` result lines seen: the window number.
    window: AtomicUsize,
    /// The workload's own line has been seen.
    finished: AtomicBool,
    /// The console closed, or the program printed `bench: done`.
    ended: AtomicBool,
}

/// Whether `line` is a bench result (or skip) line, and whether it is `workload`'s.
fn result_line(line: &str, workload: &str) -> Option<bool> {
    let rest = line.trim().strip_prefix("bench: ")?;
    let rest = rest.strip_prefix("skip ").unwrap_or(rest);
    let name = rest.split_whitespace().next()?;
    if name == "start" || name == "done" {
        return None;
    }
    Some(name == workload)
}

/// Kills QEMU however the run ends.
struct Guard(Child);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cargo xtask profile <args>`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(());
    }
    let opts = Options::parse(args)?;
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::Qemu])?;
    let images = oxok::prepare(&ws)??;
    let (kernel, tar) = symbols::boot_files(&images.kernel, &images.initrd)?;
    let program_elf = oxok_archive::Archive::new(&tar)
        .find(oxok::PROGRAM)
        .ok_or(format!("the boot archive has no `{}`", oxok::PROGRAM))?;
    let program = symbols::Table::from_elf(program_elf).map_err(|e| format!("{}: {e}", oxok::PROGRAM))?;
    // A workload run through the Linux personality: its symbols too.
    let runs_linux =
        crate::bench::workloads::find(&opts.workload).is_some_and(|w| w.what.contains("Linux personality"));
    let personality = match runs_linux {
        true => {
            let elf = oxok_archive::Archive::new(&tar)
                .find(PERSONALITY)
                .ok_or(format!("the boot archive has no `{PERSONALITY}`"))?;
            Some(symbols::Table::from_elf(elf).map_err(|e| format!("{PERSONALITY}: {e}"))?)
        }
        false => None,
    };

    std::fs::create_dir_all(ws.log_dir()).map_err(|e| format!("cannot create {}: {e}", ws.log_dir().display()))?;
    let mut samples = Vec::new();
    let mut boots = 0;
    while samples.len() < opts.samples && boots < opts.boots {
        boots += 1;
        let got = boot_once(&ws, &images, &opts, opts.samples - samples.len(), boots)?;
        eprintln!("profile: boot {boots}: {} samples in the window of {}", got.len(), opts.workload);
        samples.extend(got);
    }
    let p = table::aggregate(&samples, &kernel, &table::User { program: &program, personality: personality.as_ref() });
    println!(
        "profile of {} ({} samples in its window over {boots} boots; kernel: {} symbols, {}: {} symbols)\n",
        opts.workload,
        samples.len(),
        kernel.len(),
        oxok::PROGRAM,
        program.len()
    );
    print!("{}", table::render(&p, opts.top));
    Ok(())
}

/// Boots the bench program once and returns at most `want` samples of the
/// workload's window.
fn boot_once(ws: &Workspace, images: &Images, opts: &Options, want: usize, n: usize) -> Result<Vec<u64>, String> {
    let port = free_port()?;
    let mut q = Qemu::new(Boot::Pvh {
        kernel: images.kernel.clone(),
        initrd: images.initrd.clone(),
        cmdline: oxok::cmdline(opts.quick),
    });
    // nodelay: without it each stop reply waits on Nagle and delayed acks,
    // and the stub manages ~60 samples a second instead of thousands.
    q.extra.extend(["-gdb".to_string(), format!("tcp:127.0.0.1:{port},server=on,wait=off,nodelay=on")]);
    if opts.icount {
        q.extra.extend(["-icount".to_string(), "shift=0,sleep=off".to_string()]);
    }
    if n == 1 {
        eprintln!("profile: {}", q.display());
    }
    let mut cmd = q.command();
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut guard = Guard(cmd.spawn().map_err(|e| format!("could not start QEMU: {e}"))?);
    let stdout = guard.0.stdout.take().ok_or("QEMU's serial console is not readable")?;
    let log_path = ws.log_dir().join("profile.log");
    let console = Console::default();
    let workload = opts.workload.clone();
    let samples = std::thread::scope(|s| {
        let console = &console;
        let log = &log_path;
        s.spawn(move || watch_console(stdout, &workload, console, log));
        let result = sample(port, opts, want, console);
        // Ends the console thread too (its pipe closes).
        let _ = guard.0.kill();
        result
    })?;
    drop(guard);
    if !console.finished.load(Ordering::Relaxed) {
        return Err(format!(
            "the bench program never printed a `bench: {}` line (serial log: {}); is it a workload it runs?",
            opts.workload,
            log_path.display()
        ));
    }
    Ok(samples)
}

/// A local TCP port nobody listens on (at the time of asking).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free local port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| format!("no free local port: {e}"))
}

/// Copies the console to `log` and keeps `console` up to date.
fn watch_console(out: std::process::ChildStdout, workload: &str, console: &Console, log: &std::path::Path) {
    let mut log = std::fs::File::create(log).ok();
    let mut reader = BufReader::new(out);
    let mut line = Vec::new();
    while let Ok(1..) = reader.read_until(b'\n', &mut line) {
        if let Some(f) = log.as_mut() {
            let _ = std::io::Write::write_all(f, &line);
        }
        let text = String::from_utf8_lossy(&line);
        match result_line(&text, workload) {
            Some(true) => console.finished.store(true, Ordering::SeqCst),
            Some(false) => {
                console.window.fetch_add(1, Ordering::SeqCst);
            }
            None if text.trim() == "bench: done" => console.ended.store(true, Ordering::SeqCst),
            None => {}
        }
        line.clear();
    }
    console.ended.store(true, Ordering::SeqCst);
}

/// Samples `rip` until the workload's line (or the end); returns the
/// first `want` samples of the last window.
fn sample(port: u16, opts: &Options, want: usize, console: &Console) -> Result<Vec<u64>, String> {
    let mut gdb = gdb::Client::connect(port, Duration::from_secs(10))?;
    gdb.resume()?;
    let start = Instant::now();
    let mut window = 0;
    let mut samples = Vec::with_capacity(want);
    loop {
        std::thread::sleep(opts.interval);
        if console.finished.load(Ordering::SeqCst) || console.ended.load(Ordering::SeqCst) {
            break;
        }
        if start.elapsed() >= opts.timeout {
            return Err(format!("no `bench: {}` line within {} s", opts.workload, opts.timeout.as_secs()));
        }
        let now = console.window.load(Ordering::SeqCst);
        if now != window {
            window = now;
            samples.clear();
        }
        if samples.len() >= want {
            continue;
        }
        if gdb.interrupt()? == gdb::Stop::Gone {
            break;
        }
        let rip = gdb.rip()?;
        // The console is only read while the guest runs: a line that
        // arrived meanwhile ends the window before this sample.
        if console.window.load(Ordering::SeqCst) == window && !console.finished.load(Ordering::SeqCst) {
            samples.push(rip);
        }
        gdb.resume()?;
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let a = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = Options::parse(&a("null_call --samples 100 --interval-us=0 --icount")).unwrap();
        assert_eq!((o.workload.as_str(), o.samples, o.interval, o.icount), ("null_call", 100, Duration::ZERO, true));
        assert!(Options::parse(&a("--samples 5")).is_err());
        assert!(Options::parse(&a("null_call --samples")).is_err());
        assert!(Options::parse(&a("null_call --bogus")).is_err());
        assert!(Options::parse(&a("null_call libos_call")).is_err());
    }

    #[test]
    fn result_lines() {
        assert_eq!(result_line("bench: null_call 248 cycles\r\n", "null_call"), Some(true));
        assert_eq!(result_line("bench: skip null_call error 3 (x)", "null_call"), Some(true));
        assert_eq!(result_line("bench: kernel_mem_per_env 26802 bytes", "null_call"), Some(false));
        assert_eq!(result_line("bench: start", "null_call"), None);
        assert_eq!(result_line("bench: done", "null_call"), None);
        assert_eq!(result_line("oxok: booted", "null_call"), None);
    }
}
