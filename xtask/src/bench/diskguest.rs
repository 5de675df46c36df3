//! The two machines of `cargo xtask bench --disk` and their disks. Both
//! are the bench's QEMU (TCG, one vCPU, 512 MiB, q35) with the same
//! virtio-blk device on a fresh raw image of [`DISK_MIB`] MiB
//! (`cache=writeback`, as `cargo xtask run --disk`), and the same trace
//! events ([`super::disktrace`]).
//!
//! Linux: the bench's Debian kernel with the modules virtio-blk and ext4
//! need (`insmod`ed by `/init`, taken from the same kernel package),
//! `busybox-static`, and `lx-bench-disk` — the file Oxok's boot archive
//! holds; the image is made on the host by `mkfs.ext4` (4 KiB blocks, inode
//! tables and journal written at once, so no lazy initialisation runs
//! during the workloads) and mounted at `/mnt`. Cached in
//! `<target>/bench/linux/disk/`.
//!
//! Oxok: `run=init` on a blank image, where `dfsd` makes its C-FFS file
//! system at its first request (the same `Fs::mkfs` as `cargo xtask mkfs`;
//! an image made on the host has no XN catalogue and belongs to principal
//! 1, so `dfsd` would not mount it), before the shell starts; the line
//! `linux lx-bench-disk /dbench …` is typed at the shell.

use super::cpio::Cpio;
use super::host::Apt;
use super::linux;
use super::webguest::{self, VIRTIO_PCI};
use crate::build::write_if_changed;
use crate::meta::Workspace;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Size of both disks.
pub(crate) const DISK_MIB: u64 = 256;

/// virtio-blk and ext4 in Debian's kernel, in load order (`depends=` of
/// each module's `.modinfo`; ext4 and jbd2 ask for `crypto-crc32c` first).
const MODULES: [(&str, &str); 11] = [
    VIRTIO_PCI[0],
    VIRTIO_PCI[1],
    VIRTIO_PCI[2],
    VIRTIO_PCI[3],
    VIRTIO_PCI[4],
    ("virtio_blk", "drivers/block"),
    ("crc16", "lib"),
    ("mbcache", "fs"),
    ("crc32c_generic", "crypto"),
    ("jbd2", "fs/jbd2"),
    ("ext4", "fs/ext4"),
];

/// The Linux kernel command line (`-- quick` passes `quick` to `/init`).
pub(crate) fn linux_cmdline(quick: bool) -> String {
    linux::Guest::cmdline(quick, false)
}

/// The benchmark program's arguments after its directory.
pub(crate) fn program_args(quick: bool, xcp: bool) -> String {
    let mut s = String::new();
    if quick {
        s.push_str(" quick");
    }
    if xcp {
        s.push_str(" xcp");
    }
    s
}

/// What is typed at Oxok's shell.
pub(crate) fn oxok_input(quick: bool, xcp: bool) -> String {
    format!("linux lx-bench-disk /dbench{}\nexit 0\n", program_args(quick, xcp))
}

/// A ready Linux guest.
pub(crate) struct DiskGuest {
    pub kernel: PathBuf,
    pub initramfs: PathBuf,
    pub versions: Vec<(String, String)>,
}

/// Builds (or reuses) the Linux guest; `program` is `lx-bench-disk`.
pub(crate) fn prepare(ws: &Workspace, program: &Path) -> Result<DiskGuest, String> {
    let cache = linux::cache_dir(ws);
    let dir = cache.join("disk");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut apt = Apt::new(cache.join("apt.log"));
    apt.ensure_program("mkfs.ext4", "e2fsprogs", "to make the Linux guest's ext4 disk")?;
    let (vmlinuz, kernel_package) = linux::kernel(&cache, &mut apt)?;
    let kernel = linux::pvh_kernel(&cache, &vmlinuz, &mut apt)?;
    let modules = webguest::modules(&dir, &kernel_package, &mut apt, &MODULES)?;
    let (busybox, busybox_version) = linux::busybox(&cache, &mut apt)?;
    let mut c = Cpio::new();
    for d in ["bin", "dev", "lib", "lib/modules", "mnt", "proc", "sys", "tmp"] {
        c.dir(d);
    }
    c.char_device("dev/console", 0o600, (5, 1));
    c.file("bin/busybox", 0o755, &read(&busybox)?);
    for applet in ["sh", "mount", "umount", "insmod", "poweroff"] {
        c.symlink(&format!("bin/{applet}"), "busybox");
    }
    for (name, _) in MODULES {
        c.file(&format!("lib/modules/{name}.ko"), 0o644, &read(&modules.join(format!("{name}.ko")))?);
    }
    c.file("lx-bench-disk", 0o755, &read(program)?);
    c.file("init", 0o755, init_script().as_bytes());
    let initramfs = dir.join("initramfs.cpio");
    write_if_changed(&initramfs, &c.finish())?;
    let mkfs = Command::new("mkfs.ext4").arg("-V").output().map(|o| {
        let text = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        text.lines().next().unwrap_or("").trim().to_string()
    });
    let versions = vec![
        ("linux_kernel".to_string(), kernel_package),
        ("busybox_static".to_string(), busybox_version),
        ("mkfs.ext4".to_string(), mkfs.unwrap_or_default()),
    ];
    Ok(DiskGuest { kernel, initramfs, versions })
}

/// `/init`: the modules, ext4 from the disk at `/mnt`, the program (with
/// the command line's words after `--`), unmount, power off.
pub(crate) fn init_script() -> String {
    let mut s = String::from("#!/bin/sh\n# Oxok disk benchmark guest (written by cargo xtask bench --disk).\n");
    s.push_str("mount -t proc proc /proc\nmount -t devtmpfs dev /dev\n");
    for (name, _) in MODULES {
        s.push_str(&format!("insmod /lib/modules/{name}.ko\n"));
    }
    s.push_str("mount -t ext4 /dev/vda /mnt\n/lx-bench-disk /mnt/dbench \"$@\"\numount /mnt\npoweroff -f\n");
    s
}

/// The fresh image of a boot: blank for Oxok, ext4 for Linux.
pub(crate) fn fresh_image(path: &Path, ext4: bool) -> Result<(), String> {
    crate::hostdisk::create(path, DISK_MIB)?;
    if !ext4 {
        return Ok(());
    }
    let out = Command::new("mkfs.ext4")
        .args(mkfs_args())
        .arg(path)
        .output()
        .map_err(|e| format!("could not run mkfs.ext4: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("mkfs.ext4 {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// `mkfs.ext4`'s options: quiet, no questions, 4 KiB blocks as C-FFS's,
/// no lazy initialisation left for the guest.
pub(crate) fn mkfs_args() -> [&'static str; 6] {
    ["-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"]
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_loads_dependencies_first_then_mounts_and_runs() {
        let s = init_script();
        let at = |w: &str| s.find(w).unwrap_or_else(|| panic!("{w} missing"));
        assert!(at("virtio_pci.ko") < at("virtio_blk.ko"));
        for dep in ["crc16.ko", "mbcache.ko", "jbd2.ko", "crc32c_generic.ko"] {
            assert!(at(dep) < at("ext4.ko"), "{dep}");
        }
        assert!(at("ext4.ko") < at("mount -t ext4 /dev/vda /mnt"));
        assert!(at("mount -t ext4") < at("/lx-bench-disk /mnt/dbench \"$@\""));
        assert!(at("umount /mnt") < at("poweroff -f"));
    }

    #[test]
    fn both_sides_get_the_same_arguments() {
        assert_eq!(oxok_input(true, true), "linux lx-bench-disk /dbench quick xcp\nexit 0\n");
        assert_eq!(oxok_input(false, false), "linux lx-bench-disk /dbench\nexit 0\n");
        assert!(linux_cmdline(true).ends_with(" -- quick"));
        assert!(mkfs_args().contains(&"4096"));
    }
}
