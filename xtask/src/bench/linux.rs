//! The Linux guest: Debian's kernel (`linux-image-amd64`), and an initramfs
//! holding `busybox-static`, the benchmark program `bench/linux/bench.c`
//! and the tiny program it spawns, both built static with `musl-gcc`.
//! Everything is cached under `<target>/bench/linux/`; the packages are
//! downloaded and unpacked there, never installed on the host. Delete that
//! directory to fetch the newest kernel.

use super::cpio::Cpio;
use super::host::{self, Apt};
use super::options::LinuxBoot;
use super::vmlinux;
use crate::build::write_if_changed;
use crate::meta::Workspace;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `/init` of the initramfs: mount /proc, run the benchmark program with
/// the kernel command line's words after `--` (`quick`), power off.
const INIT: &str = "#!/bin/sh
# Oxok benchmark guest (written by cargo xtask bench).
mount -t proc proc /proc
/bench \"$@\"
poweroff -f
";

/// Flags of every benchmark program build.
const CFLAGS: &[&str] = &["-O2", "-static", "-Wall", "-Wextra"];

/// A ready Linux guest.
#[derive(Debug, Clone)]
pub(crate) struct Guest {
    /// The kernel QEMU loads with `-kernel`.
    pub kernel: PathBuf,
    /// How it is entered.
    pub boot: LinuxBoot,
    /// The newc initramfs (`-initrd`).
    pub initramfs: PathBuf,
    /// Debian package and version of the kernel.
    pub kernel_package: String,
    /// Version of `busybox-static`.
    pub busybox: String,
    /// `musl-gcc -dumpversion` (the GCC under the musl wrapper).
    pub compiler: String,
}

impl Guest {
    /// The kernel command line: serial console, `/init` from the initramfs,
    /// panic exits QEMU, `mitigations=off` if asked; `-- quick` becomes
    /// `/init`'s argument.
    pub(crate) fn cmdline(quick: bool, mitigations_off: bool) -> String {
        let mut s = String::from("console=ttyS0 quiet panic=-1 rdinit=/init");
        if mitigations_off {
            s.push_str(" mitigations=off");
        }
        if quick {
            s.push_str(" -- quick");
        }
        s
    }
}

/// `<target>/bench/linux`.
pub(crate) fn cache_dir(ws: &Workspace) -> PathBuf {
    ws.target_dir.join("bench").join("linux")
}

/// Builds (or reuses) the guest.
pub(crate) fn prepare(ws: &Workspace, boot: LinuxBoot) -> Result<Guest, String> {
    let cache = cache_dir(ws);
    mkdir(&cache)?;
    let mut apt = Apt::new(cache.join("apt.log"));
    let (vmlinuz, kernel_package) = kernel(&cache, &mut apt)?;
    let (kernel, boot) = match boot {
        LinuxBoot::BzImage => (vmlinuz, LinuxBoot::BzImage),
        LinuxBoot::Pvh => match pvh_kernel(&cache, &vmlinuz, &mut apt) {
            Ok(elf) => (elf, LinuxBoot::Pvh),
            Err(e) => {
                eprintln!("bench: {e}; booting the bzImage instead");
                (vmlinuz, LinuxBoot::BzImage)
            }
        },
    };
    let (busybox, busybox_version) = busybox(&cache, &mut apt)?;
    apt.ensure_program("musl-gcc", "musl-tools", "to build the Linux benchmark programs")?;
    let programs = programs(ws, &cache)?;
    let mut c = Cpio::new();
    for d in ["bin", "dev", "proc", "sys", "tmp"] {
        c.dir(d);
    }
    c.char_device("dev/console", 0o600, (5, 1));
    c.file("bin/busybox", 0o755, &read(&busybox)?);
    for applet in ["sh", "mount", "poweroff"] {
        c.symlink(&format!("bin/{applet}"), "busybox");
    }
    c.file("init", 0o755, INIT.as_bytes());
    c.file("bench", 0o755, &read(&programs.join("bench"))?);
    c.file("tiny", 0o755, &read(&programs.join("tiny"))?);
    // The Lua and SQLite drivers, the same files Oxok's boot archive holds.
    let tests = ws.out_dir().join("linux-tests");
    mkdir(&tests)?;
    for (name, file) in crate::linuxlibs::build_all(ws, &tests)? {
        c.file(&name, 0o755, &read(&file)?);
    }
    // The busybox shell workload's driver, as Oxok's archive holds it.
    let bench_sh = cache.join("programs").join("lx-bench-sh");
    compile(&[&ws.root.join("apps/linux-tests/bench-sh.c")], &bench_sh)?;
    c.file("lx-bench-sh", 0o755, &read(&bench_sh)?);
    let initramfs = cache.join("initramfs.cpio");
    write_if_changed(&initramfs, &c.finish())?;
    let compiler = output("musl-gcc", &["-dumpversion"]);
    Ok(Guest { kernel, boot, initramfs, kernel_package, busybox: busybox_version, compiler })
}

/// Debian's bzImage: `kernel/vmlinuz` and `kernel/package` ("name version").
pub(crate) fn kernel(cache: &Path, apt: &mut Apt) -> Result<(PathBuf, String), String> {
    let dir = cache.join("kernel");
    let (vmlinuz, package) = (dir.join("vmlinuz"), dir.join("package"));
    if let (true, Ok(p)) = (vmlinuz.exists(), std::fs::read_to_string(&package)) {
        return Ok((vmlinuz, p.trim().to_string()));
    }
    let name = apt.kernel_package()?;
    eprintln!("bench: fetching Debian's kernel ({name}) into {} …", dir.display());
    let download = cache.join("download");
    let _ = std::fs::remove_dir_all(&download);
    let deb = apt.download(&name, &download)?;
    let unpacked = download.join("unpacked");
    host::extract_from_deb(&deb, "./boot/vmlinuz-*", &unpacked)?;
    let image = std::fs::read_dir(unpacked.join("boot"))
        .map_err(|e| format!("{name} holds no /boot: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-")))
        .ok_or(format!("{name} holds no /boot/vmlinuz-*"))?;
    let version = format!("{name} {}", host::deb_field(&deb, "Version"));
    mkdir(&dir)?;
    let _ = std::fs::remove_file(dir.join("vmlinux"));
    write_if_changed(&vmlinuz, &read(&image)?)?;
    write_if_changed(&package, version.as_bytes())?;
    let _ = std::fs::remove_dir_all(&download);
    Ok((vmlinuz, version))
}

/// The kernel to boot by PVH: the ELF unpacked from Debian's bzImage, or
/// the bzImage itself when it cannot be unpacked.
pub(crate) fn kernel_elf(cache: &Path, apt: &mut Apt) -> Result<PathBuf, String> {
    let (vmlinuz, _) = kernel(cache, apt)?;
    Ok(pvh_kernel(cache, &vmlinuz, apt).unwrap_or(vmlinuz))
}

/// `kernel/vmlinux`: the ELF unpacked from the bzImage, if it can be entered by PVH.
pub(crate) fn pvh_kernel(cache: &Path, vmlinuz: &Path, apt: &mut Apt) -> Result<PathBuf, String> {
    let elf = cache.join("kernel").join("vmlinux");
    if elf.exists() {
        return Ok(elf);
    }
    let image = read(vmlinuz)?;
    let (_, kind) = vmlinux::payload(&image)?;
    let (program, package) = kind.tool();
    apt.ensure_program(program, package, "to unpack Debian's kernel")?;
    eprintln!("bench: unpacking the kernel's ELF image for PVH boot …");
    let bytes = vmlinux::unpack(vmlinuz, &cache.join("kernel"))?;
    write_if_changed(&elf, &bytes)?;
    Ok(elf)
}

/// `busybox` from `busybox-static`, and its version.
pub(crate) fn busybox(cache: &Path, apt: &mut Apt) -> Result<(PathBuf, String), String> {
    let (bin, version) = (cache.join("busybox"), cache.join("busybox.version"));
    if let (true, Ok(v)) = (bin.exists(), std::fs::read_to_string(&version)) {
        return Ok((bin, v.trim().to_string()));
    }
    eprintln!("bench: fetching busybox-static into {} …", cache.display());
    let download = cache.join("download");
    let _ = std::fs::remove_dir_all(&download);
    let deb = apt.download("busybox-static", &download)?;
    let unpacked = download.join("unpacked");
    host::extract_from_deb(&deb, "./bin/busybox", &unpacked)?;
    let v = host::deb_field(&deb, "Version");
    write_if_changed(&bin, &read(&unpacked.join("bin/busybox"))?)?;
    make_executable(&bin)?;
    write_if_changed(&version, v.as_bytes())?;
    let _ = std::fs::remove_dir_all(&download);
    Ok((bin, v))
}

/// Builds `bench` (every `bench/linux/*.c` but `tiny.c`) and `tiny` into
/// `programs/`, unless the sources and flags are unchanged since last time.
fn programs(ws: &Workspace, cache: &Path) -> Result<PathBuf, String> {
    let src = ws.root.join("bench").join("linux");
    let out = cache.join("programs");
    mkdir(&out)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .map_err(|e| format!("cannot read {}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "h"))
        .collect();
    files.sort();
    let mut hash = Fnv::default();
    CFLAGS.iter().for_each(|f| hash.add(f.as_bytes()));
    for f in &files {
        hash.add(f.file_name().unwrap_or_default().as_encoded_bytes());
        hash.add(&read(f)?);
    }
    let stamp = out.join("sources.hash");
    let digest = format!("{:016x}", hash.0);
    let built = ["bench", "tiny"].iter().all(|p| out.join(p).exists());
    if built && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == digest) {
        return Ok(out);
    }
    eprintln!("bench: building the Linux benchmark programs with musl-gcc …");
    let is_c = |p: &&PathBuf| p.extension().is_some_and(|x| x == "c");
    let tiny = |p: &&PathBuf| p.file_name().is_some_and(|n| n == "tiny.c");
    let bench_c: Vec<&PathBuf> = files.iter().filter(is_c).filter(|p| !tiny(p)).collect();
    let tiny_c: Vec<&PathBuf> = files.iter().filter(is_c).filter(tiny).collect();
    compile(&bench_c, &out.join("bench"))?;
    compile(&tiny_c, &out.join("tiny"))?;
    write_if_changed(&stamp, digest.as_bytes())?;
    Ok(out)
}

/// `musl-gcc CFLAGS -o out sources`; compiler messages go to the terminal.
pub(crate) fn compile(sources: &[&PathBuf], out: &Path) -> Result<(), String> {
    if sources.is_empty() {
        return Err(format!("no C sources for {}", out.display()));
    }
    let status = Command::new("musl-gcc")
        .args(CFLAGS)
        .arg("-o")
        .arg(out)
        .args(sources)
        .status()
        .map_err(|e| format!("could not run musl-gcc: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("musl-gcc failed building {} (messages above)", out.display())) }
}

/// 64-bit FNV-1a, enough to notice changed sources.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&[0xff]) {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

fn mkdir(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
}

fn make_executable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_and_hash() {
        assert_eq!(Guest::cmdline(false, false), "console=ttyS0 quiet panic=-1 rdinit=/init");
        assert!(Guest::cmdline(true, false).ends_with(" -- quick"));
        assert_eq!(Guest::cmdline(true, true), "console=ttyS0 quiet panic=-1 rdinit=/init mitigations=off -- quick");
        let digest = |parts: &[&[u8]]| {
            let mut h = Fnv::default();
            parts.iter().for_each(|p| h.add(p));
            h.0
        };
        assert_ne!(digest(&[b"ab", b"c"]), digest(&[b"a", b"bc"]));
        assert_eq!(digest(&[b"x"]), digest(&[b"x"]));
    }
}
