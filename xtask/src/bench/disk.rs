//! `cargo xtask bench --disk` (issue 15): Oxok's disk — C-FFS over XN,
//! served by `dfsd` — beside Linux's ext4, the same program
//! (`apps/linux-tests/bench-disk.c`; on Oxok under the Linux personality)
//! on the same virtio-blk device settings (`diskguest.rs`). Each round
//! boots both sides once per mode on fresh images, alternating which goes
//! first; each boot's QEMU trace gives the disk requests of every phase
//! (`disktrace.rs`); the table and chart (`disktable.rs`) give medians,
//! min–max and Oxok/Linux ratios beside the goals.

use super::diskguest::{self, DiskGuest};
use super::disktable::{self, DiskBoot};
use super::disktrace;
use super::options::{Options, Side};
use super::results;
use super::run as boot;
use crate::build::build_images;
use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::qemu::{Boot, Qemu};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One boot's limit unless `--timeout` says otherwise: Oxok's smallfile
/// phases alone take minutes under TCG on a shared host.
fn default_timeout(quick: bool) -> Duration {
    Duration::from_secs(if quick { 900 } else { 3600 })
}

/// Runs the disk benchmark; `args` are `cargo xtask bench`'s with `--disk`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let rest: Vec<String> = args.iter().filter(|a| *a != "--disk").cloned().collect();
    let mut opts = Options::parse(&rest)?;
    if !rest.iter().any(|a| a.starts_with("--timeout")) {
        opts.timeout = default_timeout(opts.quick);
    }
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::Qemu])?;
    eprintln!("bench: building Oxok …");
    let images = build_images(&ws)?;
    let program = ws.out_dir().join("linux-tests").join("bench-disk");
    let xcp = images.programs.iter().any(|p| p == "xcp");
    eprintln!("bench: preparing the Linux guest (ext4) …");
    let guest = diskguest::prepare(&ws, &program)?;
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (timestamp, stamp) = results::utc(secs);
    let log_dir = ws.target_dir.join("bench").join("disk-logs").join(&stamp);
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    let mut c = disktable::Collected { timestamp, quick: opts.quick, rounds: opts.rounds, ..Default::default() };
    c.versions = guest.versions.clone();
    c.versions.push(("qemu".into(), boot::qemu_version()));
    if !xcp {
        c.notes.push("Oxok's boot archive has no `xcp`: the copy_xcp row is missing.".into());
    }
    c.load.push(super::httptable::loadavg());
    for round in 1..=opts.rounds {
        for &mode in &opts.modes {
            let mut sides = opts.sides.clone();
            if round % 2 == 0 {
                sides.reverse();
            }
            for side in sides {
                let name = format!("round{round}-{}-{}", mode.name(), side.name());
                let (image, trace) = (log_dir.join(format!("{name}.img")), log_dir.join(format!("{name}.trace")));
                let log = log_dir.join(format!("{name}.log"));
                diskguest::fresh_image(&image, side == Side::Linux)?;
                let mut q = machine(side, &images.kernel, &images.initrd, &guest, opts.quick);
                q.extra.extend(crate::hostdisk::drive_args(&image));
                q.extra.extend(disktrace::qemu_args(&trace));
                q.extra.extend(mode.qemu_args());
                if c.commands.iter().all(|(s, _)| *s != side.name()) {
                    c.commands.push((side.name(), q.display()));
                }
                let input = if side == Side::Oxok { diskguest::oxok_input(opts.quick, xcp) } else { String::new() };
                let boot = boot::boot_typed(q.command(), opts.timeout, &log, input.as_bytes())?;
                let phases =
                    std::fs::read(&trace).map(|t| disktrace::phases(&String::from_utf8_lossy(&t))).unwrap_or_default();
                eprintln!(
                    "bench: round {round}/{} {} {}: {} figures, {} phases traced, {:.0} s{}",
                    opts.rounds,
                    mode.name(),
                    side.name(),
                    boot.report.samples.len(),
                    phases.len(),
                    boot.elapsed.as_secs_f64(),
                    if boot.timed_out { " (timed out)" } else { "" }
                );
                for (w, reason) in &boot.report.skipped {
                    c.notes.push(format!("{} round {round} ({}) skipped {w}: {reason}", side.name(), mode.name()));
                }
                if boot.timed_out || !boot.report.done {
                    c.notes.push(format!(
                        "{} round {round} ({}) did not finish (log {})",
                        side.name(),
                        mode.name(),
                        log.display()
                    ));
                }
                // The images are large and say nothing the log does not.
                let _ = std::fs::remove_file(&image);
                c.boots.push(DiskBoot { side, mode, samples: boot.report.samples, phases });
            }
        }
    }
    c.load.push(super::httptable::loadavg());
    let md = disktable::table(&c);
    let svg = disktable::chart(&c);
    let out = out_dir(&ws, &opts);
    super::report::write_md_svg(&out, &stamp, &md, &svg)?;
    println!("{md}");
    eprintln!(
        "bench: wrote {} (.md, .svg), latest.md, latest.svg; logs and traces in {}",
        out.join(&stamp).display(),
        log_dir.display()
    );
    for side in &opts.sides {
        if !c.boots.iter().any(|b| b.side == *side && !b.samples.is_empty()) {
            return Err(format!("the {} guest produced no disk figure; see {}", side.name(), log_dir.display()));
        }
    }
    Ok(())
}

/// `--out DIR`; else a quick run's `<target>/bench/disk/`, a full one's
/// `bench/results/disk/`.
fn out_dir(ws: &Workspace, opts: &Options) -> PathBuf {
    match &opts.out {
        Some(d) => d.clone(),
        None if opts.quick => ws.target_dir.join("bench").join("disk"),
        None => ws.root.join("bench").join("results").join("disk"),
    }
}

/// The machine of `side`, without its disk and trace.
fn machine(side: Side, kernel: &std::path::Path, initrd: &std::path::Path, guest: &DiskGuest, quick: bool) -> Qemu {
    let boot = match side {
        Side::Oxok => Boot::Pvh { kernel: kernel.into(), initrd: initrd.into(), cmdline: "run=init".into() },
        Side::Linux => Boot::Pvh {
            kernel: guest.kernel.clone(),
            initrd: guest.initramfs.clone(),
            cmdline: diskguest::linux_cmdline(quick),
        },
    };
    Qemu::new(boot)
}
