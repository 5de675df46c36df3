//! What the Linux guest needs from the host: Debian packages fetched with
//! `apt-get download` and unpacked into the cache (never installed), and
//! host tools (`musl-gcc`, `xz`) installed with `apt-get install`.

use crate::deps::have_program;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `apt-get`/`apt-cache` commands, logging their output.
pub(crate) struct Apt {
    /// Log of every command's output.
    pub log: PathBuf,
    updated: bool,
}

impl Apt {
    pub(crate) fn new(log: PathBuf) -> Apt {
        Apt { log, updated: false }
    }

    /// Runs `program args` in `dir` with output appended to the log.
    fn run(&self, program: &str, args: &[&str], dir: Option<&Path>) -> Result<(), String> {
        let out = self.output(program, args, dir)?;
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("cannot write {}: {e}", self.log.display()))?;
        use std::io::Write;
        let _ = writeln!(log, "$ {program} {}", args.join(" "));
        let _ = log.write_all(&out.stdout);
        let _ = log.write_all(&out.stderr);
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("`{program} {}` failed; its output is in {}", args.join(" "), self.log.display()))
        }
    }

    fn output(&self, program: &str, args: &[&str], dir: Option<&Path>) -> Result<std::process::Output, String> {
        if !have_program(program) {
            return Err(format!(
                "`{program}` is not available: the Linux guest is built from Debian packages, \
                 so `cargo xtask bench` needs a Debian-like host with apt"
            ));
        }
        let mut cmd = Command::new(program);
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive").stdin(Stdio::null());
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        cmd.output().map_err(|e| format!("could not run {program}: {e}"))
    }

    /// `apt-get update`, at most once per run (needs root).
    fn update(&mut self) -> Result<(), String> {
        if self.updated {
            return Ok(());
        }
        self.updated = true;
        if !is_root() {
            return Err("the package lists need `apt-get update`, which needs root: \
                        run `sudo apt-get update`, then try again"
                .into());
        }
        eprintln!("bench: updating the package lists (apt-get update) …");
        retried(3, || self.run("apt-get", &["update", "-q"], None))
    }

    /// The package `linux-image-amd64` depends on, e.g. `linux-image-6.1.0-56-amd64`.
    pub(crate) fn kernel_package(&mut self) -> Result<String, String> {
        for attempt in 0..2 {
            let out = self.output("apt-cache", &["depends", "linux-image-amd64"], None)?;
            if let Some(p) = versioned_kernel(&String::from_utf8_lossy(&out.stdout)) {
                return Ok(p);
            }
            if attempt == 0 {
                self.update()?;
            }
        }
        Err("apt knows no package `linux-image-amd64` (is this Debian with its main archive?)".into())
    }

    /// Downloads the `.deb` of `package` into `dir`; returns its path.
    pub(crate) fn download(&mut self, package: &str, dir: &Path) -> Result<PathBuf, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // The sandbox user `_apt` may not write into our cache: download as ourselves.
        let args = ["-q", "-o", "APT::Sandbox::User=root", "download", package];
        if self.run("apt-get", &args, Some(dir)).is_err() {
            self.update()?;
            retried(3, || self.run("apt-get", &args, Some(dir)))?;
        }
        let prefix = format!("{package}_");
        std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                name.starts_with(&prefix) && name.ends_with(".deb")
            })
            .ok_or(format!("apt-get download {package} left no .deb in {}", dir.display()))
    }

    /// Makes sure `program` exists, installing Debian `package` if not.
    pub(crate) fn ensure_program(&mut self, program: &str, package: &str, purpose: &str) -> Result<(), String> {
        if have_program(program) {
            return Ok(());
        }
        if !is_root() {
            return Err(format!("`{program}` is missing ({purpose}); install it with: sudo apt-get install {package}"));
        }
        eprintln!("bench: installing {package} ({purpose}) …");
        let install = ["install", "-y", "-q", "--no-install-recommends", package];
        if self.run("apt-get", &install, None).is_err() {
            self.update()?;
            self.run("apt-get", &install, None)?;
        }
        if have_program(program) {
            Ok(())
        } else {
            Err(format!("`{program}` is still missing after `apt-get install {package}`"))
        }
    }
}

/// `attempt()` until it succeeds, at most `times` times, waiting 5, 10,
/// … seconds between tries and saying so: for fetches from a package
/// mirror, which fail now and then for a moment. The last error if none
/// succeeds.
pub(crate) fn retried<T>(times: u32, attempt: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    retried_every(times, std::time::Duration::from_secs(5), attempt)
}

/// [`retried`] with the first wait `step` (the n-th is n × `step`).
fn retried_every<T>(
    times: u32,
    step: std::time::Duration,
    mut attempt: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    let mut tried = 1;
    loop {
        match attempt() {
            Ok(v) => return Ok(v),
            Err(e) if tried < times => {
                let wait = step * tried;
                eprintln!("{e}; trying again in {} s ({tried} of {times} tries failed)", wait.as_secs());
                std::thread::sleep(wait);
                tried += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The field `field` of a `.deb`'s control file (`dpkg-deb -f`).
pub(crate) fn deb_field(deb: &Path, field: &str) -> String {
    Command::new("dpkg-deb")
        .arg("-f")
        .arg(deb)
        .arg(field)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Unpacks the members of `deb` whose paths match `pattern` (a `tar`
/// wildcard such as `./boot/vmlinuz-*`) into `dir`.
pub(crate) fn extract_from_deb(deb: &Path, pattern: &str, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run dpkg-deb: {e}"))?;
    let tar_in = dpkg.stdout.take().ok_or("dpkg-deb gave no output")?;
    let tar = Command::new("tar")
        .args(["-x", "--wildcards", "-f", "-", "-C"])
        .arg(dir)
        .arg(pattern)
        .stdin(tar_in)
        .status()
        .map_err(|e| format!("could not run tar: {e}"));
    let dpkg_ok = dpkg.wait().is_ok_and(|s| s.success());
    if tar?.success() && dpkg_ok { Ok(()) } else { Err(format!("could not unpack {pattern} from {}", deb.display())) }
}

/// Reads `Depends: linux-image-<version>-amd64` from `apt-cache depends`.
pub(crate) fn versioned_kernel(apt_cache_depends: &str) -> Option<String> {
    apt_cache_depends.lines().find_map(|l| {
        let dep = l.trim().strip_prefix("Depends:")?.trim();
        let name = dep.split_whitespace().next()?;
        (name.starts_with("linux-image-") && name != "linux-image-amd64").then(|| name.to_string())
    })
}

/// Whether we run as root (effective uid 0), read from `/proc/self/status`.
pub(crate) fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|euid| euid == "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_are_tried_again_up_to_their_count() {
        let zero = std::time::Duration::ZERO;
        let mut calls = 0;
        let third = retried_every(3, zero, || {
            calls += 1;
            if calls < 3 { Err(format!("fail {calls}")) } else { Ok(calls) }
        });
        assert_eq!(third, Ok(3));
        calls = 0;
        let never = retried_every(2, zero, || -> Result<(), String> {
            calls += 1;
            Err(format!("fail {calls}"))
        });
        assert_eq!((never, calls), (Err("fail 2".to_string()), 2));
    }

    #[test]
    fn finds_the_versioned_kernel_package() {
        let out = "linux-image-amd64\n  Depends: linux-image-6.1.0-56-amd64\n";
        assert_eq!(versioned_kernel(out).as_deref(), Some("linux-image-6.1.0-56-amd64"));
        assert_eq!(versioned_kernel("linux-image-amd64\n"), None);
        assert_eq!(versioned_kernel("x\n  Depends: libc6 (>= 2.3)\n"), None);
    }
}
