//! `cargo xtask crashtest --qemu [--depth N] [--first K] [--count M]`: crash
//! testing of the real system. Workloads (every sequence of 1..=N
//! operations of the C-FFS crash harness's pool, each in its own directory
//! after its small tree, [`PER_BOOT`] to a boot) run inside Oxok in
//! `crashrun` — C-FFS over the kernel's XN calls — on a virtio-blk disk
//! behind QEMU's `blklogwrites` driver, which logs every write and flush
//! (dm-log-writes format). A first boot (`crashrun mkfs`) makes the file
//! system; the image is kept as the state the log starts from. The host
//! tool (`cffs crashlog`, release build) then replays each log into every
//! crash state and checks it with the host harness's recovery, `fsck` and
//! oracle. A bounded subset (the 27 one-operation workloads, two boots)
//! runs in `cargo xtask test` as the step `crashlog`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::Failure;
use crate::build::Images;
use crate::hostdisk::{create, drive_args};
use crate::meta::{Workspace, cargo};
use crate::proc::run_captured;
use crate::qemu::Qemu;

use oxok_cffs::crash::guest::{DISK_MIB, PER_BOOT, count};

/// A boot's time limit.
const BOOT_SECS: u64 = 240;

/// What to run: workloads `first..first + count` of depth `depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub depth: usize,
    pub first: usize,
    pub count: usize,
}

/// Reads `--qemu [--depth N] [--first K] [--count M]` (every workload of
/// depth N, 3 by default, unless `--first`/`--count` narrow it).
pub(crate) fn options(words: &[String]) -> Result<Chosen, String> {
    let mut c = Chosen { depth: 3, first: 0, count: usize::MAX };
    let mut it = words.iter().skip_while(|w| *w == "crashtest");
    while let Some(w) = it.next() {
        if w == "--qemu" {
            continue;
        }
        let v: Option<usize> = it.next().and_then(|v| v.parse().ok());
        match (w.as_str(), v) {
            ("--depth", Some(v)) if v > 0 => c.depth = v,
            ("--first", Some(v)) => c.first = v,
            ("--count", Some(v)) if v > 0 => c.count = v,
            _ => return Err(format!("crashtest --qemu: bad option {w}")),
        }
    }
    c.count = c.count.min(count(c.depth).saturating_sub(c.first));
    Ok(c)
}

/// `cargo xtask crashtest --qemu ...`.
pub(crate) fn run(words: &[String]) -> Result<(), Failure> {
    let chosen = options(words).map_err(Failure::Setup)?;
    let ws = Workspace::load()?;
    crate::deps::ensure(&ws, &[crate::deps::Need::RustTarget, crate::deps::Need::Qemu])?;
    let images = crate::build::build_images(&ws).map_err(Failure::Failed)?;
    let out = ws.out_dir().join("crashlog");
    match run_boots(&images, &out, chosen) {
        Ok(line) => {
            println!("{line}");
            Ok(())
        }
        Err(e) => Err(Failure::Failed(e)),
    }
}

/// Runs the chosen workloads' boots under `out` and checks them; the
/// totals line, or why it failed (with the totals line when there is one).
pub(crate) fn run_boots(images: &Images, out: &Path, c: Chosen) -> Result<String, String> {
    let cffs = build_cffs()?;
    let boots = c.count.div_ceil(PER_BOOT);
    println!(
        "crashtest --qemu: {} workloads of 1..={} operations (from #{}), {boots} logged boots of up to {PER_BOOT}",
        c.count, c.depth, c.first
    );
    let mut dirs = Vec::new();
    for b in 0..boots {
        let first = c.first + b * PER_BOOT;
        let n = PER_BOOT.min(c.first + c.count - first);
        let dir = out.join(format!("d{}-{first}", c.depth));
        one_boot(images, &cffs, &dir, c.depth, first, n)?;
        dirs.push(dir);
    }
    let o = Command::new(&cffs)
        .arg("crashlog")
        .args(&dirs)
        .output()
        .map_err(|e| format!("could not run {}: {e}", cffs.display()))?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    if o.status.success() { Ok(text.trim_end().to_string()) } else { Err(text) }
}

/// Builds the host tool in release (the replay is heavy) and returns it.
fn build_cffs() -> Result<PathBuf, String> {
    let st = cargo()
        .args(["build", "--release", "--quiet", "--package", "oxok-cffs", "--bin", "cffs"])
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !st.success() {
        return Err("building the cffs host tool failed".into());
    }
    Ok(Workspace::load().map_err(|e| format!("{e:?}"))?.target_dir.join("release").join("cffs"))
}

/// QEMU arguments: `disk` as virtio-blk behind `blklogwrites`, logging to
/// `log` in 4 KiB sectors.
pub(crate) fn logged_drive_args(disk: &Path, log: &Path) -> Vec<String> {
    vec![
        "-blockdev".into(),
        format!("driver=file,filename={},node-name=disk", disk.display()),
        "-blockdev".into(),
        format!("driver=file,filename={},node-name=log", log.display()),
        "-blockdev".into(),
        "driver=blklogwrites,file=disk,log=log,log-sector-size=4096,node-name=lw".into(),
        "-device".into(),
        "virtio-blk-pci,drive=lw,write-cache=on".into(),
    ]
}

/// One workload batch: make the file system, keep the image, run the
/// script on the logged disk.
fn one_boot(images: &Images, cffs: &Path, dir: &Path, depth: usize, first: usize, n: usize) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let plan = format!("{depth} {first} {n}");
    std::fs::write(dir.join("plan"), &plan).map_err(|e| e.to_string())?;
    let o = Command::new(cffs)
        .args(["crashplan", &depth.to_string(), &first.to_string(), &n.to_string()])
        .output()
        .map_err(|e| format!("could not run {}: {e}", cffs.display()))?;
    if !o.status.success() {
        return Err(format!("crashplan {plan}: {}", String::from_utf8_lossy(&o.stderr)));
    }
    let script = o.stdout;
    let (work, log) = (dir.join("work.img"), dir.join("log.img"));
    create(&work, DISK_MIB)?;
    boot(images, "run=crashrun+mkfs", drive_args(&work), b"", &dir.join("mkfs.log"), "crashrun: made a file system")?;
    std::fs::copy(&work, dir.join("disk.img")).map_err(|e| format!("keeping the image: {e}"))?;
    std::fs::write(&log, b"").map_err(|e| format!("{}: {e}", log.display()))?;
    boot(images, "run=crashrun", logged_drive_args(&work, &log), &script, &dir.join("serial.log"), "crashrun: done")?;
    println!("crashtest --qemu: boot of workloads {first}..{} logged ({})", first + n, dir.display());
    Ok(())
}

/// Boots `cmdline` with `drive` and `input`, logging the console to
/// `log`; `Err` unless the console shows `want`.
fn boot(
    images: &Images,
    cmdline: &str,
    drive: Vec<String>,
    input: &[u8],
    log: &Path,
    want: &str,
) -> Result<(), String> {
    let mut m = Qemu::pvh(images, &format!("{cmdline} log=warn"))?;
    m.extra.extend(drive);
    let run = run_captured(m.command(), Duration::from_secs(BOOT_SECS), Some(log), input)?;
    if run.serial.contains(want) {
        Ok(())
    } else {
        Err(format!(
            "`{cmdline}` did not print {want:?} (timed out: {}; log {}){}",
            run.timed_out,
            log.display(),
            if run.stderr.is_empty() { String::new() } else { format!("; QEMU: {}", run.stderr.trim()) }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_choose_workloads() {
        let c = options(&words("crashtest --qemu --depth 1")).unwrap();
        assert_eq!(c, Chosen { depth: 1, first: 0, count: 27 });
        let c = options(&words("--qemu --depth 2 --first 20 --count 5")).unwrap();
        assert_eq!((c.first, c.count), (20, 5));
        assert_eq!(options(&words("--qemu --depth 1 --first 20")).unwrap().count, 7);
        assert!(options(&words("--qemu --depth 0")).is_err());
        assert!(options(&words("--qemu --speed 3")).is_err());
    }

    #[test]
    fn the_disk_is_logged_in_blocks() {
        let a = logged_drive_args(Path::new("/d.img"), Path::new("/l.img"));
        assert!(a.iter().any(|x| x.contains("blklogwrites") && x.contains("log-sector-size=4096")));
        assert!(a.iter().any(|x| x.starts_with("virtio-blk-pci,drive=lw")));
    }
}
