//! The host side of disk scenarios: a fresh raw image per scenario under
//! `target/oxok/disks/`, attached as a virtio-blk PCI device, and an
//! optional second boot on the same image (the reboot test).

use crate::proc::run_captured;
use crate::qemu::{Boot, Qemu};
use crate::scenario::{Scenario, judge};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A disk for a scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DiskSpec {
    /// Size of the fresh image in MiB.
    pub mib: u64,
    /// A second boot on the same image after the first passed.
    pub reboot: Option<Reboot>,
    /// After the boots, the image must pass the host's C-FFS `fsck` (XN
    /// recovery from the superblock, then every check of `crates/cffs`).
    pub fsck: bool,
}

/// Damage done to an image between two boots.
impl DiskSpec {
    /// What most disk scenarios want: a fresh 64 MiB image, booted again
    /// with `run=init` typing `input` and expecting `expect`, then `fsck`.
    pub(crate) const fn init_again(input: &'static str, expect: &'static [&'static str]) -> DiskSpec {
        DiskSpec { mib: 64, reboot: Some(Reboot { cmdline: "run=init", expect, patch: None, input }), fsck: true }
    }
}

pub(crate) type Patch = fn(&Path) -> Result<(), String>;

/// The second boot: its command line and the lines it must show.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reboot {
    /// Kernel command line (the scenario's log level is added the same way).
    pub cmdline: &'static str,
    /// Must all appear, in order.
    pub expect: &'static [&'static str],
    /// Changes the image between the boots (a crash's damage), if set.
    pub patch: Option<Patch>,
    /// Typed on the console of the second boot.
    pub input: &'static str,
}

/// QEMU arguments attaching the raw image at `path` as virtio-blk.
pub(crate) fn drive_args(path: &Path) -> Vec<String> {
    vec![
        "-drive".into(),
        format!("file={},format=raw,if=none,id=disk0,cache=writeback", path.display()),
        "-device".into(),
        "virtio-blk-pci,drive=disk0".into(),
    ]
}

/// Creates (or empties) the raw image `path` of `mib` MiB, sparse.
pub(crate) fn create(path: &Path, mib: u64) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.set_len(mib << 20).map_err(|e| format!("{}: {e}", path.display()))
}

/// The image of scenario `name`, beside the logs (`target/oxok/disks/`).
fn image_for(log: &Path, name: &str) -> PathBuf {
    let base = log.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    base.join("disks").join(format!("{name}.img"))
}

/// `machine` with the scenario's disk (a fresh image) attached; unchanged
/// without one.
pub(crate) fn attach(machine: Qemu, s: &Scenario, log: &Path) -> Result<Qemu, String> {
    let Some(d) = s.disk else { return Ok(machine) };
    let path = image_for(log, s.name);
    create(&path, d.mib)?;
    let mut m = machine;
    m.extra.extend(drive_args(&path));
    Ok(m)
}

/// Boots `machine` again (same disk) with the reboot's command line and
/// judges it; its serial log is `NAME.reboot.log`. Then, if the scenario
/// asks, checks the image with the host's `fsck`. Returns the failures.
pub(crate) fn second_boot(s: &Scenario, machine: &Qemu, log: &Path) -> Vec<String> {
    let mut why = reboot(s, machine, log);
    if why.is_empty() && s.disk.is_some_and(|d| d.fsck) {
        why.extend(fsck(&image_for(log, s.name), log));
    }
    why
}

/// The host's C-FFS `fsck` of the image (what `cargo xtask fsck IMG`
/// prints goes to the log too).
fn fsck(image: &Path, log: &Path) -> Vec<String> {
    let result = oxok_cffs::image::load(image).and_then(|img| {
        oxok_cffs::image::check(img).map_err(|e| format!("fsck: {e}")).map(|(report, f)| {
            let line = format!(
                "host fsck: {} blocks reachable, {} directories, {} files, {} orphans, {} wrong link counts, {} duplicates, {} errors",
                f.blocks,
                f.dirs,
                f.files,
                f.orphans,
                f.bad_nlinks,
                report.duplicates.len(),
                f.errors.len()
            );
            let clean = f.clean() && report.duplicates.is_empty() && report.unreadable.is_empty();
            let errors: Vec<String> = f.errors.iter().map(|e| format!("  {e}")).collect();
            (line, errors, clean)
        })
    });
    let text = match &result {
        Ok((line, errors, _)) => format!("{line}\n{}", errors.join("\n")),
        Err(e) => e.clone(),
    };
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(log) {
        use std::io::Write;
        let _ = writeln!(f, "{text}");
    }
    match result {
        Ok((_, _, true)) => Vec::new(),
        Ok((line, _, false)) => vec![format!("image not clean: {line}")],
        Err(e) => vec![e],
    }
}

fn reboot(s: &Scenario, machine: &Qemu, log: &Path) -> Vec<String> {
    let Some(Reboot { cmdline, expect, patch, input }) = s.disk.and_then(|d| d.reboot) else { return Vec::new() };
    if let Some(patch) = patch
        && let Err(e) = patch(&image_for(log, s.name))
    {
        return vec![format!("patching the image: {e}")];
    }
    // The second boot ends in an orderly halt, whatever the first did.
    let second = Scenario { cmdline, expect, input, exit: crate::scenario::Exit::Halt, ..*s };
    let mut m = machine.clone();
    if let Boot::Pvh { cmdline: c, .. } = &mut m.boot {
        *c = second.kernel_cmdline();
    } else {
        return vec!["a reboot needs a PVH boot".into()];
    }
    let log2 = log.with_extension("reboot.log");
    match run_captured(m.command(), Duration::from_secs(s.timeout_secs), Some(&log2), input.as_bytes()) {
        Ok(run) => judge(&second, &run).into_iter().map(|w| format!("after reboot: {w}")).collect(),
        Err(e) => vec![format!("after reboot: {e}")],
    }
}

/// Writes `bytes` at byte `offset` of the image at `path`.
pub(crate) fn poke(path: &Path, offset: u64, bytes: &[u8]) -> Result<(), String> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
    f.write_all(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_is_sparse_and_sized() {
        let dir = std::env::temp_dir().join(format!("oxok-hostdisk-{}", std::process::id()));
        let p = dir.join("t.img");
        create(&p, 3).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        let args = drive_args(&p);
        assert!(args[1].contains("format=raw") && args[3].starts_with("virtio-blk-pci"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
