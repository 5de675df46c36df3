//! Host prerequisites: find what is missing, install it with `apt-get` when
//! we are root on Debian, otherwise stop with a sentence saying what to do.

use crate::meta::{TARGET, Workspace};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// Something a command needs from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// The Rust target `x86_64-unknown-none` (installed with rustup).
    RustTarget,
    /// `qemu-system-x86_64`.
    Qemu,
    /// `grub-mkrescue` with its BIOS and UEFI modules, `xorriso`, `mformat`.
    IsoTools,
    /// UEFI firmware for QEMU (OVMF).
    Ovmf,
    /// The HTTP load generators `ab` and `wrk`.
    LoadGen,
    /// `ip` (iproute2): network namespaces and tap devices.
    Netns,
    /// iputils' `ping`, run by the host against the guest.
    Ping,
}

/// A missing piece that a Debian package provides.
struct Missing {
    what: String,
    package: &'static str,
    purpose: &'static str,
}

const FOR_QEMU: &str = "to boot Oxok under QEMU";
const FOR_ISO: &str = "to build the GRUB ISO";
const FOR_HTTP: &str = "to load the HTTP servers in `cargo xtask bench --http`";
const FOR_UEFI: &str = "to boot the ISO under UEFI";
const FOR_TAP: &str = "to put a guest's NIC on a tap in a private network namespace";
const FOR_PING: &str = "to ping the guest from the host in `net-ping-host`";

/// Makes sure everything in `needs` is present, installing Debian packages
/// if we can. Errors are complete sentences for the user.
pub(crate) fn ensure(ws: &Workspace, needs: &[Need]) -> Result<(), String> {
    if needs.contains(&Need::RustTarget) {
        ensure_rust_target()?;
    }
    let missing = missing_packages(needs);
    if missing.is_empty() {
        return Ok(());
    }
    let (mut packages, mut purposes): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for m in &missing {
        if !packages.contains(&m.package) {
            packages.push(m.package);
        }
        if !purposes.contains(&m.purpose) {
            purposes.push(m.purpose);
        }
    }
    let what: Vec<&str> = missing.iter().map(|m| m.what.as_str()).collect();
    let install = format!("apt-get install {}", packages.join(" "));
    if !have_program("apt-get") {
        return Err(format!(
            "missing {}; install it with your package manager (on Debian: {install})",
            what.join(", ")
        ));
    }
    if !is_root() {
        return Err(format!("missing {}; install it with: sudo {install}", what.join(", ")));
    }
    eprintln!("xtask: installing {} ({}) …", packages.join(", "), purposes.join(" and "));
    apt_install(ws, &packages)?;
    let still: Vec<String> = missing_packages(needs).into_iter().map(|m| m.what).collect();
    if !still.is_empty() {
        return Err(format!("still missing {} after `{install}`", still.join(", ")));
    }
    Ok(())
}

fn missing_packages(needs: &[Need]) -> Vec<Missing> {
    let mut out = Vec::new();
    let mut program = |name: &str, package, purpose| {
        if !have_program(name) {
            out.push(Missing { what: format!("`{name}`"), package, purpose });
        }
    };
    if needs.contains(&Need::Qemu) {
        program("qemu-system-x86_64", "qemu-system-x86", FOR_QEMU);
    }
    if needs.contains(&Need::LoadGen) {
        program("ab", "apache2-utils", FOR_HTTP);
        program("wrk", "wrk", FOR_HTTP);
    }
    if needs.contains(&Need::Netns) {
        program("ip", "iproute2", FOR_TAP);
    }
    if needs.contains(&Need::Ping) {
        program("ping", "iputils-ping", FOR_PING);
    }
    if needs.contains(&Need::IsoTools) {
        program("grub-mkrescue", "grub-common", FOR_ISO);
        program("xorriso", "xorriso", FOR_ISO);
        program("mformat", "mtools", FOR_ISO);
        for (dir, package) in [("i386-pc", "grub-pc-bin"), ("x86_64-efi", "grub-efi-amd64-bin")] {
            if !Path::new("/usr/lib/grub").join(dir).join("moddep.lst").exists() {
                out.push(Missing { what: format!("GRUB's {dir} modules"), package, purpose: FOR_ISO });
            }
        }
    }
    if needs.contains(&Need::Ovmf) && ovmf().is_none() {
        out.push(Missing { what: "UEFI firmware for QEMU (OVMF)".into(), package: "ovmf", purpose: FOR_UEFI });
    }
    out
}

/// OVMF firmware: (code, variables template). Prefers the 4 MiB builds.
pub(crate) fn ovmf() -> Option<(PathBuf, PathBuf)> {
    let dir = Path::new("/usr/share/OVMF");
    [("OVMF_CODE_4M.fd", "OVMF_VARS_4M.fd"), ("OVMF_CODE.fd", "OVMF_VARS.fd")]
        .iter()
        .map(|(c, v)| (dir.join(c), dir.join(v)))
        .find(|(c, v)| c.exists() && v.exists())
}

/// Whether `name` is an executable file on `PATH`.
pub(crate) fn have_program(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .any(|dir| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether we run as root (effective uid 0), read from `/proc/self/status`.
fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|euid| euid == "0")
}

static APT_UPDATED: AtomicBool = AtomicBool::new(false);

/// `apt-get update` (once per run) and `apt-get install`, logging to
/// `<target>/oxok/logs/apt.log`.
fn apt_install(ws: &Workspace, packages: &[&str]) -> Result<(), String> {
    let log_dir = ws.log_dir();
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    let log_path = log_dir.join("apt.log");
    let run = |args: &[&str]| -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .status()
            .map_err(|e| format!("could not run apt-get: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`apt-get {}` failed; its output is in {}", args.join(" "), log_path.display()))
        }
    };
    // Both fetch from the package mirror, which can fail for a moment.
    if !APT_UPDATED.swap(true, Ordering::SeqCst) {
        crate::bench::host::retried(3, || run(&["update", "-q"]))?;
    }
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend_from_slice(packages);
    crate::bench::host::retried(3, || run(&args))
}

/// Makes sure the standard library for [`TARGET`] is installed.
fn ensure_rust_target() -> Result<(), String> {
    if rust_target_installed()? {
        return Ok(());
    }
    if !have_program("rustup") {
        return Err(format!(
            "the Rust target {TARGET} is missing and rustup is not available to add it; \
             install Rust with rustup (https://rustup.rs), then run: rustup target add {TARGET}"
        ));
    }
    eprintln!("xtask: installing the Rust target {TARGET} (to build the kernel and its programs) …");
    let out = Command::new("rustup")
        .args(["target", "add", TARGET])
        .current_dir(crate::meta::workspace_root())
        .output()
        .map_err(|e| format!("could not run rustup: {e}"))?;
    if !out.status.success() || !rust_target_installed()? {
        return Err(format!(
            "`rustup target add {TARGET}` failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(())
}

fn rust_target_installed() -> Result<bool, String> {
    let out = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["--print", "sysroot"])
        .current_dir(crate::meta::workspace_root())
        .output()
        .map_err(|e| format!("could not run rustc ({e}); install Rust with rustup (https://rustup.rs)"))?;
    if !out.status.success() {
        return Err(format!("`rustc --print sysroot` failed:\n{}", String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(Path::new(&sysroot).join("lib/rustlib").join(TARGET).join("lib").is_dir())
}
