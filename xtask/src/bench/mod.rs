//! `cargo xtask bench`: boots Oxok and a Debian Linux guest under the same
//! QEMU settings, runs the same workloads on both (alternating the sides
//! each round), and writes `bench/results/<UTC>.json`, `latest.md` and
//! `latest.svg`. The workloads and their iteration counts are documented in
//! `bench/README.md`; the Linux programs are in `bench/linux/`.
//!
//! A figure a side did not produce (Oxok cannot run the workload yet, or a
//! boot timed out) is reported as missing, never estimated.

pub(crate) mod cpio;
mod disk;
mod diskguest;
mod disktable;
mod disktrace;
mod fluke;
pub(crate) mod host;
mod hostidle;
mod http;
mod httpload;
mod httpopts;
mod httptable;
mod jsonw;
pub(crate) mod linux;
mod netclient;
mod options;
pub(crate) mod oxok;
mod parse;
mod report;
mod results;
mod run;
mod stats;
mod svg;
mod vmlinux;
mod webguest;
pub(crate) mod workloads;

use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::qemu::{Boot, Qemu};
use options::{Mode, Options, Side, USAGE};
use results::{BootRecord, Results, Settings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Runs `cargo xtask bench <args>`.
pub fn run(args: &[String]) -> Result<(), String> {
    if args.first().is_some_and(|a| a == "--netclient") {
        return netclient::run(&args[1..]);
    }
    if args.iter().any(|a| a == "--http") {
        return http::run(args);
    }
    if args.iter().any(|a| a == "--disk") && !Options::wants_help(args) {
        return disk::run(args);
    }
    if args.iter().any(|a| a == "--fluke") {
        return fluke::run(args);
    }
    if Options::wants_help(args) {
        print!("{USAGE}");
        return Ok(());
    }
    let opts = Options::parse(args)?;
    let began = Instant::now();
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::Qemu])?;
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (timestamp, stamp) = results::utc(secs);
    let mut res = Results {
        settings: Settings {
            timestamp,
            quick: opts.quick,
            rounds: opts.rounds,
            modes: opts.modes.clone(),
            timeout_s: opts.timeout.as_secs(),
            qemu_version: run::qemu_version(),
            host_cpu: host_cpu(),
            ..Settings::default()
        },
        ..Results::default()
    };
    (res.settings.git_commit, res.settings.git_dirty) = git_state(&ws.root);

    let machines = prepare_guests(&ws, &opts, &mut res)?;
    let log_dir = ws.target_dir.join("bench").join("logs").join(&stamp);
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    for round in 1..=opts.rounds {
        for &mode in &opts.modes {
            // Alternate which side goes first, so slow drift favours neither.
            let mut order = machines.clone();
            if round % 2 == 0 {
                order.reverse();
            }
            for (side, machine) in order {
                let mut q = machine;
                q.extra.extend(mode.qemu_args());
                let label = if oxok::is_fpu_off(&q.display()) { "-fpu-off" } else { "" };
                let log = log_dir.join(format!("round{round}-{}-{}{label}.log", mode.name(), side.name()));
                let boot = run::boot(q.command(), opts.timeout, &log)?;
                eprintln!("{}", progress(round, opts.rounds, mode, side, &boot));
                if !boot.report.started && !boot.stderr_tail.is_empty() {
                    eprintln!("bench: QEMU said: {}", boot.stderr_tail);
                }
                res.boots.push(BootRecord::new(round, mode, side, &boot, log.display().to_string()));
            }
        }
    }
    add_boot_notes(&mut res);
    let out = write_outputs(&ws, &opts, &res, &stamp)?;
    println!("{}", report::table(&res.rows()));
    for n in &res.notes {
        println!("- {n}");
    }
    eprintln!(
        "bench: wrote {} and latest.md, latest.svg in {} ({:.0} s in all)",
        out.join(format!("{stamp}.json")).display(),
        out.display(),
        began.elapsed().as_secs_f64()
    );
    let ran = check_sides_ran(&res, &machines);
    if opts.out.is_none() && !opts.quick && opts.sides.len() == 2 {
        // A full run into bench/results/ includes the HTTP benchmark (which
        // needs root for its network namespace) and the disk benchmark; a
        // quick one neither.
        eprintln!("bench: now the HTTP and TCP benchmark (as `cargo xtask bench --http`) …");
        let dir = out.join("http").display().to_string();
        let http = http::run(&["--http".to_string(), "--out".to_string(), dir]);
        eprintln!("bench: now the disk benchmark (as `cargo xtask bench --disk`) …");
        let dir = out.join("disk").display().to_string();
        // In the run's modes: the disk's rows in guest instructions too
        // with `--mode both`.
        let mode = match opts.modes.as_slice() {
            [Mode::Wall] => "wall",
            [Mode::Icount] => "icount",
            _ => "both",
        };
        let disk = disk::run(&["--disk", "--mode", mode, "--out", &dir].map(String::from));
        return ran.and(http).and(disk);
    }
    ran
}

/// Builds the guests that were asked for; returns their machines (TCG,
/// identical settings) without the mode's arguments.
fn prepare_guests(ws: &Workspace, opts: &Options, res: &mut Results) -> Result<Vec<(Side, Qemu)>, String> {
    let mut machines = Vec::new();
    if opts.sides.contains(&Side::Oxok) {
        match oxok::prepare(ws) {
            Err(e) => {
                // Measure Linux all the same; the run fails at the end.
                eprintln!("bench: {e}");
                res.notes.push(format!("{}: every Oxok figure is missing.", oxok::BUILD_FAILED));
            }
            Ok(Ok(images)) => {
                let boot = Boot::Pvh {
                    kernel: images.kernel.clone(),
                    initrd: images.initrd.clone(),
                    cmdline: oxok::cmdline(opts.quick),
                };
                machines.push((Side::Oxok, Qemu::new(boot)));
                // What x87/SSE switching costs: the same kernel with
                // switching off (its `_fpu_off` rows).
                let off = Boot::Pvh {
                    kernel: images.kernel.clone(),
                    initrd: images.initrd.clone(),
                    cmdline: oxok::cmdline_fpu_off(opts.quick),
                };
                machines.push((Side::Oxok, Qemu::new(off)));
            }
            Ok(Err(note)) => {
                eprintln!("bench: {note}");
                res.notes.push(note);
            }
        }
    } else {
        res.notes.push("Oxok was not booted (--only linux): every Oxok figure is missing.".into());
    }
    if opts.sides.contains(&Side::Linux) {
        let guest = linux::prepare(ws, opts.linux_boot)?;
        let boot = match guest.boot {
            options::LinuxBoot::Pvh => "PVH entry of the ELF vmlinux unpacked from the bzImage",
            options::LinuxBoot::BzImage => "bzImage as shipped",
        };
        res.settings.guests.extend([
            ("linux_kernel".to_string(), guest.kernel_package.clone()),
            ("linux_boot".to_string(), boot.to_string()),
            ("busybox_static".to_string(), guest.busybox.clone()),
            ("musl_gcc".to_string(), guest.compiler.clone()),
        ]);
        let boot = Boot::Pvh {
            kernel: guest.kernel.clone(),
            initrd: guest.initramfs.clone(),
            cmdline: linux::Guest::cmdline(opts.quick, opts.linux_mitigations_off),
        };
        machines.push((Side::Linux, Qemu::new(boot)));
    } else {
        res.notes.push("Linux was not booted (--only oxok): every Linux figure is missing.".into());
    }
    for (side, q) in &machines {
        for &mode in &opts.modes {
            let mut q = q.clone();
            q.extra.extend(mode.qemu_args());
            res.settings.commands.push((*side, mode, q.display()));
        }
    }
    Ok(machines)
}

/// One line per boot for the terminal.
fn progress(round: usize, rounds: usize, mode: Mode, side: Side, b: &run::Boot) -> String {
    let user = b.boot_to_user.map_or("never reached the benchmark program".to_string(), |t| {
        format!("user code at {:.2} s", t.as_secs_f64())
    });
    let end = if b.timed_out {
        format!("timed out after {:.0} s", b.elapsed.as_secs_f64())
    } else if b.report.done {
        format!("done in {:.1} s", b.elapsed.as_secs_f64())
    } else {
        format!("stopped early after {:.1} s (exit status {:?})", b.elapsed.as_secs_f64(), b.status)
    };
    format!(
        "bench: round {round}/{rounds} {} {:<5}: {} figures, {user}, {end}",
        mode.name(),
        side.name(),
        b.report.samples.len()
    )
}

/// Notes on boots that timed out or stopped early, and skipped workloads.
fn add_boot_notes(res: &mut Results) {
    let mut notes = Vec::new();
    for b in &res.boots {
        let which = format!("{} round {} ({})", b.side.name(), b.round, b.mode.name());
        if b.timed_out {
            notes.push(format!("{which} timed out; workloads it had not reported are missing (log: {}).", b.log));
        } else if !b.done {
            notes.push(format!("{which} ended before `bench: done` (log: {}).", b.log));
        }
        for (w, reason) in &b.skipped {
            let n = format!("{} skipped {w}: {reason}.", b.side.name());
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    res.notes.extend(notes);
}

/// Where results go: `--out DIR` if given; a quick run's under
/// `<target>/bench/quick/`, so it never replaces the committed figures of
/// a full run in `bench/results/`; a full run's in `bench/results/`.
pub(crate) fn out_dir(root: &std::path::Path, target: &std::path::Path, opts: &Options) -> PathBuf {
    match &opts.out {
        Some(dir) => dir.clone(),
        None if opts.quick => target.join("bench").join("quick"),
        None => root.join("bench").join("results"),
    }
}

/// Writes `<stamp>.json`, `latest.md`, `latest.svg`, and after a full run
/// into `bench/results/` the table in `bench/README.md`. Returns the directory.
fn write_outputs(ws: &Workspace, opts: &Options, res: &Results, stamp: &str) -> Result<PathBuf, String> {
    let out = out_dir(&ws.root, &ws.target_dir, opts);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let md = report::markdown(res);
    for (name, text) in [
        (format!("{stamp}.json"), res.to_json()),
        ("latest.md".to_string(), md.clone()),
        ("latest.svg".to_string(), svg::chart(res)),
    ] {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if opts.out.is_none() && !opts.quick {
        let readme = ws.root.join("bench").join("README.md");
        let section: String = md.lines().skip(2).map(|l| format!("{l}\n")).collect();
        match std::fs::read_to_string(&readme).ok().and_then(|t| report::splice_readme(&t, &section)) {
            Some(new) => std::fs::write(&readme, new).map_err(|e| format!("cannot write {}: {e}", readme.display()))?,
            None => eprintln!("bench: {} has no result markers; its table was not updated", readme.display()),
        }
    }
    Ok(out)
}

/// Fails when Oxok did not build, or a side that was booted never reached
/// its benchmark program (the harness or the guest is broken, whatever the
/// numbers).
fn check_sides_ran(res: &Results, machines: &[(Side, Qemu)]) -> Result<(), String> {
    if res.notes.iter().any(|n| n.starts_with(oxok::BUILD_FAILED)) {
        return Err(format!("{} (compiler output above); the Linux figures were written", oxok::BUILD_FAILED));
    }
    for (side, _) in machines {
        if !res.boots.iter().any(|b| b.side == *side && b.started) {
            return Err(format!(
                "the {} guest never started its benchmark program; see the serial logs listed in the notes",
                side.name()
            ));
        }
    }
    Ok(())
}

/// `(short commit, dirty)` of the work tree; `"none"` before the first commit.
fn git_state(root: &Path) -> (String, bool) {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "none".into());
    let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    (commit, dirty)
}

/// The host CPU's model name from `/proc/cpuinfo`.
fn host_cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| "unknown".into())
}
