//! Running guest machines as child processes: interactively on the terminal,
//! or captured with a time limit. A captured machine runs in its own process
//! group, is killed with that group at its deadline, and (through
//! `setpriv --pdeathsig`) dies with this tool, e.g. on Ctrl-C.

use crate::deps::have_program;
use crate::symbolize::Symbolizer;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The result of a captured run.
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    /// Exit status; `None` if killed by a signal (e.g. at the deadline).
    pub status: Option<i32>,
    /// Whether the deadline passed and the run was killed.
    pub timed_out: bool,
    /// Whether the run was killed on purpose when its serial output showed
    /// the `cut` text ([`Drive`]): a power cut.
    pub cut: bool,
    /// What the typist ([`Drive`]) reported, if there was one.
    pub typist: Option<Result<String, String>>,
    /// Everything the guest wrote on its serial port (QEMU's stdout).
    pub serial: String,
    /// QEMU's own messages (stderr).
    pub stderr: String,
    /// Wall-clock time from start to exit.
    pub elapsed: Duration,
}

/// Runs `cmd` with stdout/stderr captured, killing its process group after
/// `timeout`; `input` is written to its stdin (the guest's serial console),
/// which is closed when `input` is empty. The serial output is also written
/// to `log` as it arrives, if given. Call this from the thread that waits for
/// the result: the child is tied to the calling thread's life.
pub(crate) fn run_captured(
    cmd: Command,
    timeout: Duration,
    log: Option<&Path>,
    input: &[u8],
) -> Result<Captured, String> {
    run_driven(cmd, timeout, log, input, Drive::default())
}

/// What drives a captured run besides its `input`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Drive<'a> {
    /// The machine is killed (its power cut: no more disk writes, no
    /// orderly halt) as soon as its serial output shows this text.
    pub cut: Option<&'a str>,
    /// Types on the console while the machine runs, after `input`.
    pub typist: Option<crate::typist::Typing>,
    /// The network namespace the machine runs in, if any: the typist may
    /// run host programs there.
    pub netns: Option<&'a str>,
}

/// As [`run_captured`], driven by `drive`.
pub(crate) fn run_driven(
    cmd: Command,
    timeout: Duration,
    log: Option<&Path>,
    input: &[u8],
    drive: Drive<'_>,
) -> Result<Captured, String> {
    let cut = drive.cut;
    let cut_seen = std::sync::atomic::AtomicBool::new(false);
    let seen = &cut_seen;
    let screen = std::sync::Mutex::new(Vec::new());
    let screen = &screen;
    let mut cmd = with_parent_death_signal(cmd, "KILL");
    cmd.stdin(if input.is_empty() && drive.typist.is_none() { Stdio::null() } else { Stdio::piped() });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
    let mut log_file = match log {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?),
        None => None,
    };
    let start = Instant::now();
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd.spawn().map_err(|e| format!("could not start {program}: {e}"))?;
    let pgid = child.id();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    // QEMU reads stdin only as fast as the guest's UART accepts bytes, so
    // everything can be written at once; the pipe stays open until the end.
    let mut stdin = child.stdin.take();
    if let Some(pipe) = stdin.as_mut() {
        let _ = pipe.write_all(input);
        let _ = pipe.flush();
    }
    std::thread::scope(|s| {
        let serial = s.spawn(move || {
            let mut buf = [0u8; 4096];
            while let Some(Ok(n @ 1..)) = stdout.as_mut().map(|o| o.read(&mut buf)) {
                let mut all = screen.lock().unwrap_or_else(|e| e.into_inner());
                all.extend_from_slice(&buf[..n]);
                if let Some(c) = cut {
                    // Only the new bytes and a text's length before them.
                    let from = all.len().saturating_sub(n + c.len());
                    if all[from..].windows(c.len().max(1)).any(|w| w == c.as_bytes()) {
                        seen.store(true, std::sync::atomic::Ordering::Release);
                    }
                }
                if let Some(f) = log_file.as_mut() {
                    let _ = f.write_all(&buf[..n]);
                }
            }
        });
        let typist = match (drive.typist, stdin.as_mut()) {
            (Some(typing), Some(keys)) => {
                let netns = drive.netns;
                Some(s.spawn(move || typing(&mut crate::typist::Typist::new(keys, screen).with_netns(netns))))
            }
            _ => None,
        };
        let errors = s.spawn(move || {
            let mut all = Vec::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.read_to_end(&mut all);
            }
            all
        });
        let mut timed_out = false;
        let mut was_cut = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if seen.load(std::sync::atomic::Ordering::Acquire) => {
                    was_cut = true;
                    kill_group(&mut child, pgid);
                    break child.wait();
                }
                Ok(None) if start.elapsed() >= timeout => {
                    timed_out = true;
                    kill_group(&mut child, pgid);
                    break child.wait();
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    kill_group(&mut child, pgid);
                    let _ = child.wait();
                    break Err(e);
                }
            }
        };
        let elapsed = start.elapsed();
        let _ = serial.join();
        let typist = typist.map(|t| t.join().unwrap_or_else(|_| Err("the typist panicked".into())));
        let serial = std::mem::take(&mut *screen.lock().unwrap_or_else(|e| e.into_inner()));
        let stderr = errors.join().unwrap_or_default();
        let status = status.map_err(|e| format!("waiting for {program}: {e}"))?;
        Ok(Captured {
            status: status.code(),
            timed_out,
            cut: was_cut,
            typist,
            serial: String::from_utf8_lossy(&serial).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            elapsed,
        })
    })
}

/// Runs `cmd` on the terminal (stdio inherited) and returns its status. If
/// this tool dies first the child gets SIGTERM, which lets QEMU restore the
/// terminal's settings. When standard input is not a terminal (`< file`,
/// `< /dev/null`, a pipe), it is copied to the guest and its end becomes
/// the console's end of input ([`forward_then_eof`]), so the shell ends
/// and the machine halts instead of waiting at the prompt forever. The
/// console's output passes through `symbols` (backtraces get their
/// function names, [`crate::symbolize`]) on its way to this terminal.
pub(crate) fn run_interactive(cmd: Command, symbols: Symbolizer) -> Result<ExitStatus, String> {
    use std::io::IsTerminal;
    let mut cmd = with_parent_death_signal(cmd, "TERM");
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdout(Stdio::piped());
    let terminal = std::io::stdin().is_terminal();
    if !terminal {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().map_err(|e| format!("could not start {program}: {e}"))?;
    if let Some(mut out) = child.stdout.take() {
        // Not joined: it ends with QEMU's output.
        std::thread::spawn(move || copy_symbolized(&mut out, &mut std::io::stdout(), symbols));
    }
    if terminal {
        return child.wait().map_err(|e| format!("waiting for {program}: {e}"));
    }
    let Some(mut pipe) = child.stdin.take() else {
        return child.wait().map_err(|e| format!("waiting for {program}: {e}"));
    };
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    // Not joined: it may be blocked reading a standard input that never ends.
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        forward_then_eof(&mut input, &mut pipe, &flag, EOF_REPEAT);
    });
    let status = child.wait().map_err(|e| format!("waiting for {program}: {e}"));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    status
}

/// Copies the console `input` to `out` as it arrives, adding a symbol to
/// each backtrace line before its line end (a trailing `\r` is held back
/// until the next byte shows whether a line ends there).
pub(crate) fn copy_symbolized(input: &mut impl Read, out: &mut impl Write, mut symbols: Symbolizer) {
    let mut lines = crate::symbolize::Lines::default();
    let mut line: Vec<u8> = Vec::new();
    let mut held_cr = false;
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = input.read(&mut buf) {
        let mut chunk: Vec<u8> = Vec::with_capacity(n + 1);
        if std::mem::take(&mut held_cr) {
            chunk.push(b'\r');
        }
        chunk.extend_from_slice(&buf[..n]);
        if chunk.last() == Some(&b'\r') {
            chunk.pop();
            held_cr = true;
        }
        let mut rest = chunk.as_slice();
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            let (seg, tail) = rest.split_at(at);
            let body = seg.strip_suffix(b"\r").unwrap_or(seg);
            line.extend_from_slice(body);
            let _ = out.write_all(body);
            if let Some(note) = lines.note(&mut symbols, &String::from_utf8_lossy(&line)) {
                let _ = out.write_all(note.as_bytes());
            }
            let _ = out.write_all(&seg[body.len()..]);
            let _ = out.write_all(b"\n");
            line.clear();
            rest = &tail[1..];
        }
        line.extend_from_slice(rest);
        if line.len() > 4096 {
            line.clear();
        }
        let _ = out.write_all(rest);
        let _ = out.flush();
    }
    if held_cr {
        let _ = out.write_all(b"\r");
    }
    let _ = out.flush();
}

/// How often the end of input is typed again once standard input ended.
const EOF_REPEAT: Duration = Duration::from_secs(1);
/// The console's end-of-input key (`^D`).
const EOT: u8 = 0x04;

/// Copies `input` to the guest's console `out`; at its end, a newline if the
/// last line had none, then `^D` (the console's end of input) — and again
/// every `every` until `done`, as reading an ended input gives its end on
/// every read (a program reading the keyboard takes one, the shell the next).
pub(crate) fn forward_then_eof(
    input: &mut impl Read,
    out: &mut impl Write,
    done: &std::sync::atomic::AtomicBool,
    every: Duration,
) {
    let mut buf = [0u8; 4096];
    let mut last = b'\n';
    while let Ok(n @ 1..) = input.read(&mut buf) {
        last = buf[n - 1];
        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
            return;
        }
    }
    if last != b'\n' && out.write_all(b"\n").is_err() {
        return;
    }
    loop {
        if out.write_all(&[EOT]).and_then(|()| out.flush()).is_err() {
            return;
        }
        if done.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(every);
    }
}

/// Readable exit status: code or signal.
pub(crate) fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown status".into(),
    }
}

/// Wraps `cmd` in `setpriv --pdeathsig SIGNAL` (util-linux) when available,
/// so the child gets `signal` if this tool dies first.
fn with_parent_death_signal(cmd: Command, signal: &str) -> Command {
    if !have_program("setpriv") {
        return cmd;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped.args(["--pdeathsig", signal, "--"]).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// Kills `child` (not yet reaped, so its pid is still ours) and then the rest
/// of its process group with the shell's `kill -9 -PGID`, ignoring "no such
/// process".
fn kill_group(child: &mut std::process::Child, pgid: u32) {
    let _ = child.kill();
    let _ = Command::new("sh")
        .args(["-c", "kill -9 \"-$1\" 2>/dev/null", "sh", &pgid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn end_of_standard_input_is_the_consoles_end_of_input() {
        let done = AtomicBool::new(true);
        let mut out = Vec::new();
        forward_then_eof(&mut &b"echo hi\nexit 3"[..], &mut out, &done, Duration::ZERO);
        assert_eq!(out, b"echo hi\nexit 3\n\x04");
        let mut out = Vec::new();
        forward_then_eof(&mut &b""[..], &mut out, &done, Duration::ZERO);
        assert_eq!(out, b"\x04", "< /dev/null: end of input at once");
    }
}
