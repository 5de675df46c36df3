//! Booting one guest and collecting what its benchmark program printed,
//! with the host time at which each serial line arrived (for boot time).

use super::parse::Report;
use crate::deps::have_program;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one boot produced.
#[derive(Debug, Clone)]
pub(crate) struct Boot {
    /// The protocol lines.
    pub report: Report,
    /// Host time from spawning QEMU to the `bench: start` line.
    pub boot_to_user: Option<Duration>,
    /// Whether the time limit ended the boot.
    pub timed_out: bool,
    /// QEMU's exit status (`None` if killed).
    pub status: Option<i32>,
    /// Host time from spawn to exit.
    pub elapsed: Duration,
    /// The last lines QEMU wrote on stderr (its own complaints).
    pub stderr_tail: String,
}

/// How long a guest may take to power off after `bench: done` before it is
/// stopped (not counted as a timeout).
const AFTER_DONE: Duration = Duration::from_secs(3);

/// Runs `cmd` (a QEMU command with the serial port on stdout), stopping it
/// after `timeout`, or shortly after `bench: done` if it does not power
/// off by itself. The serial output is copied to `log`.
pub(crate) fn boot(cmd: Command, timeout: Duration, log: &Path) -> Result<Boot, String> {
    boot_typed(cmd, timeout, log, &[])
}

/// [`boot`], with `input` typed on the serial console at once (it waits in
/// the pipe until the guest reads it; the pipe stays open until the end).
pub(crate) fn boot_typed(cmd: Command, timeout: Duration, log: &Path, input: &[u8]) -> Result<Boot, String> {
    let mut cmd = with_parent_death_signal(cmd);
    let stdin = if input.is_empty() { Stdio::null() } else { Stdio::piped() };
    cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut log_file = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("could not start QEMU: {e}"))?;
    let _typing = child.stdin.take().map(|mut i| {
        let _ = i.write_all(input);
        i
    });
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let done = &done;
        let serial = s.spawn(move || {
            let mut report = Report::default();
            let mut started_at = None;
            let Some(out) = stdout else {
                return (report, started_at);
            };
            let mut reader = BufReader::new(out);
            let mut line = Vec::new();
            while let Ok(1..) = reader.read_until(b'\n', &mut line) {
                let now = start.elapsed();
                let _ = log_file.write_all(&line);
                let text = String::from_utf8_lossy(&line);
                let was_started = report.started;
                report.add(&text);
                if report.started && !was_started {
                    started_at = Some(now);
                }
                if report.done {
                    done.store(true, Ordering::Relaxed);
                }
                line.clear();
            }
            (report, started_at)
        });
        let errors = s.spawn(move || {
            let mut all = Vec::new();
            if let Some(mut e) = stderr {
                let _ = e.read_to_end(&mut all);
            }
            all
        });
        let mut timed_out = false;
        let mut done_at = None;
        let status = loop {
            if done_at.is_none() && done.load(Ordering::Relaxed) {
                done_at = Some(Instant::now());
            }
            match child.try_wait() {
                Ok(Some(status)) => break status.code(),
                Ok(None) if done_at.is_some_and(|t| t.elapsed() >= AFTER_DONE) => {
                    let _ = child.kill();
                    break child.wait().ok().and_then(|s| s.code());
                }
                Ok(None) if start.elapsed() >= timeout => {
                    timed_out = true;
                    let _ = child.kill();
                    break child.wait().ok().and_then(|s| s.code());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("waiting for QEMU: {e}"));
                }
            }
        };
        let elapsed = start.elapsed();
        let (report, boot_to_user) = serial.join().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&errors.join().unwrap_or_default()).into_owned();
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        let stderr_tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        Ok(Boot { report, boot_to_user, timed_out, status, elapsed, stderr_tail })
    })
}

/// Wraps `cmd` in `setpriv --pdeathsig KILL` (util-linux) when available, so
/// QEMU dies with this tool (e.g. on Ctrl-C). `setpriv` executes QEMU in
/// its own process, so killing the child kills QEMU.
fn with_parent_death_signal(cmd: Command) -> Command {
    if !have_program("setpriv") {
        return cmd;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped.args(["--pdeathsig", "KILL", "--"]).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// The first line of `qemu-system-x86_64 --version`.
pub(crate) fn qemu_version() -> String {
    Command::new(crate::qemu::QEMU)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}
