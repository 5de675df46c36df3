//! The checkpointer's scenarios (issue 16): `ckpt` (`apps/ckpt`) saves a
//! running process tree — a counter holding a pipe to a child and an open
//! file of the file server, stopped mid-sleep — and restores it in fresh
//! environments; the output is the uninterrupted run's (`ckpt-move` runs
//! the uninterrupted one first). `scenarios.rs` lists them with the others.
//!
//! Across machines the counter also sleeps on the clock: each machine's
//! clock counts from its own boot, so a sleep in progress keeps the time
//! it had left at the cut (`ckpt-reboot` restores early in a fresh boot an
//! image cut 1.5 s into the first: with the old clock's deadline the rest
//! of the sleep would be longer than the sleep).

use crate::proc::{Captured, run_captured};
use crate::qemu::{Boot, Qemu};
use crate::report::tail;
use crate::scenario::{Scenario, judge};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every checkpointer scenario, in the order `scenarios.rs` lists them.
pub(crate) const CKPT_SCENARIOS: [Scenario; 9] = [MOVE, TWICE, HOSTILE, REBOOT, MIGRATE, WAIT, PCT, SHELL, SHARE];

const MOVE: Scenario = Scenario {
    name: "ckpt-move",
    about: "a counter with a pipe to a child and an open file is stopped mid-sleep, saved, destroyed and restored in fresh environments; it finishes with the uninterrupted run's output (run first), the file re-opened at its position",
    cmdline: "run=ckpt+run+ckpt-counter+12+30+0+/count.txt,ckpt+move+100+ckpt-counter+12+30+0+/count.txt",
    expect: &[
        "count 12",
        "file lines 12 sum 78 bytes 127",
        "child sum 78 lines 12",
        "counter done 12 child 0",
        "count 1",
        "ckpt: saved 2 processes, * frames, 1 open files, * bytes",
        "ckpt: restored 2 processes, 1 open files",
        "count 12",
        "file lines 12 sum 78 bytes 127",
        "child sum 78 lines 12",
        "counter done 12 child 0",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed", "revoked"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const SHARE: Scenario = Scenario {
    name: "ckpt-share",
    about: "a parent and a child writing in turn through one inherited open file (one record, one position) and the \
            parent part-way through a directory listing are stopped, saved and restored: the record comes back \
            shared (no line overwritten: 12 lines, 6 of each) and the cursor where it was (the listing goes on \
            after its third entry); the output is the uninterrupted run's (run first)",
    cmdline: "run=ckpt+run+ckpt-share+6+60+/share.txt+/sdir,ckpt+move+150+ckpt-share+6+60+/share.txt+/sdir",
    expect: &[
        "share: dir abcdef",
        "share: file lines 12 parent 6 child 6 bytes 36 child status 0",
        "ckpt: saved 2 processes, * frames, 3 open files, * bytes",
        "ckpt: restored 2 processes, 3 open files",
        "share: dir abcdef",
        "share: file lines 12 parent 6 child 6 bytes 36 child status 0",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed", "revoked"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const WAIT: Scenario = Scenario {
    name: "ckpt-wait",
    about: "checkpointed while the counter waits for its child and the child sleeps: the restored counter re-derives its child's id and reaps it",
    cmdline: "run=ckpt+move+400+ckpt-counter+3+20+1500",
    expect: &[
        "count 3",
        "ckpt: saved 2 processes, * frames, * bytes",
        "ckpt: restored 2 processes",
        "child sum 6 lines 3",
        "counter done 3 child 0",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed", "wait:"],
    timeout_secs: 90,
    ..Scenario::DEFAULT
};

const PCT: Scenario = Scenario {
    name: "ckpt-pct",
    about: "a parent stopped while it waits for its child's reply to a synchronous PCT (the child's handler asleep mid-transfer) is saved and restored: the transfer is bound again (pct_owe: a new ticket in the caller's pct_wait restart, the callee replying to PCT_OWED) and the reply reaches the restored parent; the output is the uninterrupted run's (run first)",
    cmdline: "run=ckpt+run+ckpt-pct+6+100,ckpt+move+250+ckpt-pct+6+100",
    expect: &[
        "pct 6 -> 12",
        "pct done 6 sum 42",
        "ckpt: saved 2 processes, * frames, 0 open files, 1 transfers in progress, * bytes",
        "ckpt: restored 2 processes, 0 open files",
        "pct 6 -> 12",
        "pct done 6 sum 42",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "refused", "failed", "pct: "],
    timeout_secs: 240, // 66 s seen under a loaded 20-round run
    ..Scenario::DEFAULT
};

const SHELL: Scenario = Scenario {
    name: "ckpt-shell",
    about: "ckpt from the shell: the file server is init's (outside the checkpointer's tree, reached through the call capability the shell passed on); the counter's open file is re-opened there at its position, its call capability for the server carried, nothing revoked",
    cmdline: "run=init",
    input: "ckpt move 100 ckpt-counter 6 30 0 /c.txt\nwc -l /c.txt\nexit 0\n",
    expect: &[
        "ckpt: saved 2 processes, * frames, 1 open files, 0 transfers in progress, * bytes",
        "ckpt: restored 2 processes, 1 open files",
        "count 6",
        "file lines 6 sum 21 bytes 112",
        "child sum 21 lines 6",
        "counter done 6 child 0",
        "ckpt: restored tree ended with 0",
        "7 /c.txt",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "refused", "failed", "revoked", "counter: file"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const TWICE: Scenario = Scenario {
    name: "ckpt-twice",
    about: "one image restored twice gives two independent trees: each counts to the end with its own pipe, child and open-file record of the same file",
    cmdline: "run=ckpt+twice+100+ckpt-counter+12+30+0+/count.txt",
    expect: &[
        "ckpt: saved 2 processes, * frames, 1 open files, * bytes",
        "ckpt: restored 2 processes, 1 open files",
        "ckpt: restored 2 processes, 1 open files",
        // The two trees' lines interleave: each copy prints its file's
        // read-back before its child's sum.
        "file lines 12 sum 78 bytes 127",
        "child sum 78 lines 12",
        "child sum 78 lines 12",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed", "revoked", "counter: file"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const HOSTILE: Scenario = Scenario {
    name: "ckpt-hostile",
    about: "without write (call-only, read-only, none) a process cannot be stopped, read or have its capabilities copied; forged and truncated images are refused and nothing half-built is left; open files that cannot be carried (inherited, removed, missing on the target, other content there, forged records) are refused by name; a capability for an environment outside the tree is carried if the checkpointer holds one, else visibly revoked",
    cmdline: "run=ckpt-hostile",
    expect: &["counter: revoked capability slots 0x", "ckpt-hostile: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic"],
    timeout_secs: 90,
    ..Scenario::DEFAULT
};

const REBOOT: Scenario = Scenario {
    name: "ckpt-reboot",
    about: "a counter tree with an open file checkpointed mid-sleep 1.5 s into one boot (image printed as CKPT lines, the file's content in it), restored early in a fresh boot from the boot archive (the file re-created at its position, the sleep's deadline rebased to the new clock: the rest within the sleep's length); it finishes with the uninterrupted run's output",
    cmdline: "run=ckpt+send+1500+ckpt-counter+12+300+0+/count.txt",
    expect: &[
        "count 1",
        "ckpt: saved 2 processes, * frames, 1 open files, * bytes",
        "CKPT-BEGIN *",
        "CKPT-END",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "count 12", "child sum"],
    timeout_secs: 120,
    second: Some(&Second {
        link: Link::Archive,
        cmdline: "run=ckpt+load+ckpt.img",
        expect: &[
            "ckpt: restored 2 processes, 1 open files",
            "count 12",
            "file lines 12 sum 78 bytes 127",
            "child sum 78 lines 12",
            "counter done 12 child 0",
            "counter: restored mid-sleep, the rest of the sleep within its length",
            "ckpt: restored tree ended with 0",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "refused", "count 1\r", "revoked", "ticks left of a"],
    }),
    ..Scenario::DEFAULT
};

const MIGRATE: Scenario = Scenario {
    name: "ckpt-migrate",
    about: "live migration: a counter tree with a pipe and an open file checkpointed on one machine goes over a socket joining both machines' second serial ports and continues on the other, its console output and its file (content and position) following it",
    cmdline: "run=ckpt+migrate+150+ckpt-counter+12+30+0+/count.txt",
    expect: &[
        "count 1",
        "ckpt: saved 2 processes, * frames, 1 open files, * bytes",
        "ckpt: migrated 2 processes",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "count 12", "child sum"],
    timeout_secs: 240,
    second: Some(&Second {
        link: Link::Socket,
        cmdline: "run=ckpt+receive",
        expect: &[
            "ckpt: received * bytes",
            "ckpt: restored 2 processes, 1 open files",
            "count 12",
            "file lines 12 sum 78 bytes 127",
            "child sum 78 lines 12",
            "counter done 12 child 0",
            "ckpt: restored tree ended with 0",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "refused", "failed", "revoked", "ticks left of a"],
    }),
    ..Scenario::DEFAULT
};

/// A scenario's second machine: what carries the image there, how it
/// boots and what it must show. The first machine is the scenario itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Second {
    pub link: Link,
    /// Kernel command line of the second machine (`log=info` added).
    pub cmdline: &'static str,
    pub expect: &'static [&'static str],
    pub forbid: &'static [&'static str],
}

/// How the image moves from the first machine to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Link {
    /// Live: both machines' second serial ports joined by a Unix socket
    /// (`-chardev socket`), the second machine started first and waiting.
    Socket,
    /// A reboot: the `CKPT` lines the first machine printed are decoded and
    /// put in the second machine's boot archive as `ckpt.img`.
    Archive,
}

/// Runs a two-machine scenario; the failures and the text to print.
pub(crate) fn run_pair(s: &Scenario, second: &Second, machine: &Qemu, log: &Path) -> (Vec<String>, String) {
    let head = format!("scenario {} ...", s.name);
    let log2 = log.with_extension("second.log");
    let timeout = Duration::from_secs(s.timeout_secs);
    let cmdline2 = format!("{} log=info", second.cmdline);
    let both = match second.link {
        Link::Socket => live(machine, &cmdline2, timeout, log, &log2),
        Link::Archive => reboot(machine, &cmdline2, timeout, log, &log2),
    };
    let (first, other) = match both {
        Ok(x) => x,
        Err(e) => return (vec![e.clone()], format!("{head} FAILED ({e})")),
    };
    let mut why = judge(s, &first);
    let s2 = Scenario { expect: second.expect, forbid: second.forbid, ..*s };
    why.extend(judge(&s2, &other).into_iter().map(|w| format!("second machine: {w}")));
    let secs = first.elapsed.as_secs_f64().max(other.elapsed.as_secs_f64());
    if why.is_empty() {
        return (why, format!("{head} ok ({secs:.1} s)"));
    }
    let mut text = format!("{head} FAILED ({}) ({secs:.1} s)\n", why[0]);
    for w in &why[1..] {
        text.push_str(&format!("    also: {w}\n"));
    }
    text.push_str(&format!("    first machine, last serial output:\n{}\n", tail(&first.serial, 20)));
    text.push_str(&format!("    second machine, last serial output:\n{}\n", tail(&other.serial, 20)));
    text.push_str(&format!("    full serial logs: {} and {}", log.display(), log2.display()));
    (why, text)
}

/// `machine` booting `cmdline` (and `initrd`, if given) instead.
fn rebooted(machine: &Qemu, cmdline: Option<&str>, initrd: Option<PathBuf>) -> Result<Qemu, String> {
    let mut m = machine.clone();
    match &mut m.boot {
        Boot::Pvh { initrd: i, cmdline: c, .. } => {
            if let Some(cmd) = cmdline {
                *c = cmd.to_string();
            }
            if let Some(path) = initrd {
                *i = path;
            }
        }
        _ => return Err("two-machine scenarios boot by PVH".into()),
    }
    Ok(m)
}

/// Both machines at once, their second serial ports joined.
fn live(
    machine: &Qemu,
    cmdline2: &str,
    timeout: Duration,
    log: &Path,
    log2: &Path,
) -> Result<(Captured, Captured), String> {
    let sock = log.with_extension("sock");
    let _ = std::fs::remove_file(&sock);
    let path = sock.display().to_string();
    let mut receiver = rebooted(machine, Some(cmdline2), None)?;
    receiver.extra.extend(["-chardev".into(), format!("socket,id=aux,path={path},server=on,wait=off")]);
    receiver.extra.extend(["-serial".into(), "chardev:aux".into()]);
    let mut sender = machine.clone();
    sender.extra.extend(["-chardev".into(), format!("socket,id=aux,path={path}")]);
    sender.extra.extend(["-serial".into(), "chardev:aux".into()]);
    let out = std::thread::scope(|scope| {
        let second = scope.spawn(|| run_captured(receiver.command(), timeout, Some(log2), b""));
        // The receiver listens once its socket exists.
        let start = Instant::now();
        while !sock.exists() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let first = run_captured(sender.command(), timeout, Some(log), b"");
        let second = second.join().unwrap_or_else(|_| Err("the receiving machine's thread panicked".into()));
        (first, second)
    });
    let _ = std::fs::remove_file(&sock);
    Ok((out.0?, out.1?))
}

/// The first machine, then a fresh boot with its image in the archive.
fn reboot(
    machine: &Qemu,
    cmdline2: &str,
    timeout: Duration,
    log: &Path,
    log2: &Path,
) -> Result<(Captured, Captured), String> {
    let first = run_captured(machine.command(), timeout, Some(log), b"")?;
    let packed = match image_lines(&first.serial) {
        Ok(p) => p,
        // No image: the second machine is not started; the first's
        // expectations say what went wrong.
        Err(e) => return Ok((first, not_run(&e))),
    };
    let Boot::Pvh { initrd, .. } = &machine.boot else { return Err("two-machine scenarios boot by PVH".into()) };
    let old = std::fs::read(initrd).map_err(|e| format!("cannot read {}: {e}", initrd.display()))?;
    let mut tar = Vec::new();
    for entry in oxok_archive::Archive::new(&old).entries() {
        let entry = entry.map_err(|e| format!("boot archive: {e:?}"))?;
        oxok_archive::append(&mut tar, entry.name, entry.data).map_err(|e| format!("archive: {e:?}"))?;
    }
    oxok_archive::append(&mut tar, "ckpt.img", &packed).map_err(|e| format!("archive: {e:?}"))?;
    oxok_archive::finish(&mut tar);
    let path = log.with_extension("initrd.tar");
    std::fs::write(&path, &tar).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let second = rebooted(machine, Some(cmdline2), Some(path))?;
    let other = run_captured(second.command(), timeout, Some(log2), b"")?;
    Ok((first, other))
}

/// A run that did not happen, judged as such.
fn not_run(why: &str) -> Captured {
    Captured {
        status: None,
        timed_out: false,
        cut: false,
        typist: None,
        serial: format!("(not started: {why})"),
        stderr: String::new(),
        elapsed: Duration::ZERO,
    }
}

/// The packed image the `CKPT` lines of `serial` carry (`ckpt send`).
pub(crate) fn image_lines(serial: &str) -> Result<Vec<u8>, String> {
    let mut lines = serial.lines().map(str::trim_end);
    let begin = lines.find(|l| l.starts_with("CKPT-BEGIN ")).ok_or("no CKPT-BEGIN line")?;
    let len: usize = begin["CKPT-BEGIN ".len()..].trim().parse().map_err(|_| "bad CKPT-BEGIN line")?;
    let mut bytes = Vec::with_capacity(len);
    for l in lines {
        if l == "CKPT-END" {
            return if bytes.len() == len {
                Ok(bytes)
            } else {
                Err(format!("{} image bytes, {len} announced", bytes.len()))
            };
        }
        let Some(hex) = l.strip_prefix("CKPT ") else { continue };
        if hex.len() % 2 != 0 {
            return Err("odd CKPT line".into());
        }
        for i in (0..hex.len()).step_by(2) {
            bytes.push(u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| "bad hex in a CKPT line")?);
        }
    }
    Err("no CKPT-END line".into())
}

#[cfg(test)]
mod tests {
    use super::image_lines;

    #[test]
    fn image_lines_decode_and_check_the_length() {
        let log = "noise\r\nCKPT-BEGIN 3\r\nCKPT 0a0b\r\n[info] a kernel line\nCKPT ff\nCKPT-END\r\n";
        assert_eq!(image_lines(log), Ok(vec![0x0a, 0x0b, 0xff]));
        assert!(image_lines("CKPT-BEGIN 4\nCKPT 0a0b\nCKPT-END\n").is_err());
        assert!(image_lines("CKPT-BEGIN 1\nCKPT 0\nCKPT-END\n").is_err());
        assert!(image_lines("CKPT-BEGIN 1\nCKPT 00\n").is_err());
    }
}
