//! A person at the console: a scenario's `typist` types on the guest's
//! serial console (QEMU's stdin) while the machine runs, waits for what
//! the guest prints and times its keys — control keys included — as a
//! person would, where a scenario's `input` is written all at once.

use std::io::Write;
use std::process::ChildStdin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A typist: types, pauses and waits; `Ok` is a line for the log, `Err`
/// fails the scenario.
pub(crate) type Typing = fn(&mut Typist<'_>) -> Result<String, String>;

/// The keyboard and the screen of a running machine.
pub(crate) struct Typist<'a> {
    keys: &'a mut ChildStdin,
    screen: &'a Mutex<Vec<u8>>,
    /// Screen bytes already waited past.
    read: usize,
    /// The network namespace the machine runs in (a tap NIC).
    netns: Option<&'a str>,
}

impl<'a> Typist<'a> {
    pub(crate) fn new(keys: &'a mut ChildStdin, screen: &'a Mutex<Vec<u8>>) -> Typist<'a> {
        Typist { keys, screen, read: 0, netns: None }
    }

    /// The typist of a machine running in network namespace `netns`.
    pub(crate) fn with_netns(self, netns: Option<&'a str>) -> Typist<'a> {
        Typist { netns, ..self }
    }

    /// Waits up to `secs` for a whole line that holds `start` and, after
    /// it, `then` (after what earlier waits found), and returns the rest of
    /// that line from `start` on, without `start`; the next wait starts
    /// after the line.
    pub(crate) fn line_after(&mut self, start: &str, then: &str, secs: u64) -> Result<String, String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            {
                let screen = self.screen.lock().unwrap_or_else(|e| e.into_inner());
                let new = screen.get(self.read..).unwrap_or_default();
                let mut at = 0;
                for line in new.split_inclusive(|&b| b == b'\n').filter(|l| l.ends_with(b"\n")) {
                    at += line.len();
                    let text = String::from_utf8_lossy(line);
                    if let Some(rest) = text.split_once(start).map(|(_, r)| r)
                        && rest.contains(then)
                    {
                        self.read += at;
                        return Ok(rest.trim_end().to_string());
                    }
                }
            }
            if Instant::now() >= end {
                return Err(format!("no line with {start:?} then {then:?} within {secs} s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs `program args` on the host inside the machine's network
    /// namespace and returns its standard output; `Err` if the machine has
    /// none, the program cannot start, or it fails (its output and error
    /// output in the message).
    pub(crate) fn in_netns(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let ns = self.netns.ok_or("the machine has no network namespace (NetSpec::tap)")?;
        let out = crate::netns::exec(ns, program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("could not run ip netns exec {program}: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(text)
        } else {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(format!("`{program} {}` failed ({}): {} {}", args.join(" "), out.status, text.trim(), err.trim()))
        }
    }

    /// Types `bytes` (`\x03` is ^C).
    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.keys.write_all(bytes).and_then(|()| self.keys.flush()).map_err(|e| format!("typing: {e}"))
    }

    /// Waits up to `secs` for `text` on the screen after what earlier waits
    /// found; then the next wait starts after it.
    pub(crate) fn wait_for(&mut self, text: &str, secs: u64) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            {
                let screen = self.screen.lock().unwrap_or_else(|e| e.into_inner());
                let new = screen.get(self.read..).unwrap_or_default();
                if let Some(at) = new.windows(text.len().max(1)).position(|w| w == text.as_bytes()) {
                    self.read += at + text.len();
                    return Ok(());
                }
            }
            if Instant::now() >= end {
                return Err(format!("{text:?} did not appear within {secs} s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A small deterministic generator of pauses (xorshift), so a typist's
/// timing varies from key to key but every run types the same way.
pub(crate) struct Pauses(u64);

impl Pauses {
    pub(crate) fn new(seed: u64) -> Pauses {
        Pauses(seed | 1)
    }

    /// Sleeps between 0 and `max_ms` milliseconds.
    pub(crate) fn pause(&mut self, max_ms: u64) {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        std::thread::sleep(Duration::from_millis(self.0 % (max_ms + 1)));
    }
}

/// ^C at every moment of a shell loop of programs: the loop ends with
/// status 130 each time and the shell answers again. (A signal's default
/// action arriving in a program's exit path while it held the network
/// stack's lock deadlocked the program — and the shell waiting for it —
/// in about 1 of 100 such keys; this catches that only by chance.)
pub(crate) fn interrupt_loops(t: &mut Typist<'_>) -> Result<String, String> {
    const ROUNDS: usize = 40;
    let mut pauses = Pauses::new(0x5eed);
    t.wait_for("oxok$ ", 60)?;
    for round in 0..ROUNDS {
        t.send(b"while true; do echo spinning > /loop-file; done\n")?;
        pauses.pause(300);
        t.send(format!("\x03echo stopped {round} $?\n").as_bytes())?;
        t.wait_for(&format!("stopped {round} 130"), 30).map_err(|e| format!("round {round}: {e}"))?;
    }
    t.send(b"exit 0\n")?;
    Ok(format!("typist: ^C ended {ROUNDS} loops, each at its own moment"))
}

/// For `shell-kill`: the kill is typed only once the background job has
/// said it started (typed all at once, it could arrive first).
pub(crate) fn kill_started_job(t: &mut Typist<'_>) -> Result<String, String> {
    t.wait_for("oxok$ ", 60)?;
    t.send(b"spin bg 100000 &\n")?;
    t.wait_for("spin bg: start", 30)?;
    t.send(b"kill -TERM 1027\nwait\nexit 0\n")?;
    Ok("typist: killed the job after its start line".into())
}

/// For `lx-ttyread`: nothing for its first read (a signal ends it), a line
/// two seconds into the second (the read restarts after the handler), then
/// half a line, a pause, and the rest.
pub(crate) fn tty_reads(t: &mut Typist<'_>) -> Result<String, String> {
    t.wait_for("lx-ttyread: type hello in two seconds", 60)?;
    std::thread::sleep(Duration::from_secs(2));
    t.send(b"hello\r")?;
    t.wait_for("lx-ttyread: type half a line", 30)?;
    t.send(b"par")?;
    t.wait_for("lx-ttyread: finish the line", 30)?;
    t.send(b"tial\r")?;
    t.wait_for("checks, ", 30)?;
    t.send(b"exit 0\n")?;
    Ok("typist: typed hello, then partial in two pieces".into())
}

/// For `linux-sh-interrupt`: an interactive `busybox sh` that owns the
/// console runs `sleep 30` in the foreground; ^C a moment later ends the
/// job (status 130) and the shell answers again; typing ahead during a
/// job stays for the shell.
pub(crate) fn busybox_sh_interrupt(t: &mut Typist<'_>) -> Result<String, String> {
    t.wait_for("oxok$ ", 60)?;
    t.send(b"linux busybox sh\r")?;
    t.wait_for("# ", 30)?;
    t.send(b"busybox sleep 30\r")?;
    std::thread::sleep(Duration::from_millis(1500));
    t.send(b"\x03")?;
    t.wait_for("# ", 10).map_err(|e| format!("after ^C: {e}"))?;
    t.send(b"echo after ^C $?\r")?;
    t.wait_for("after ^C 130", 10)?;
    t.send(b"busybox sleep 2\r")?;
    std::thread::sleep(Duration::from_millis(500));
    t.send(b"echo typed ahead\r")?;
    t.wait_for("typed ahead\r\n", 20).or_else(|_| t.wait_for("typed ahead\n", 1))?;
    t.send(b"exit\r")?;
    t.wait_for("oxok$ ", 20)?;
    t.send(b"exit 0\n")?;
    Ok("typist: ^C ended busybox sh's foreground job; typing ahead during a job reached the shell".into())
}
