//! The GRUB ISO (BIOS and UEFI, Multiboot2) and the machines that boot it.

use crate::build::{Images, copy_if_changed};
use crate::deps;
use crate::meta::Workspace;
use crate::qemu::{Boot, Qemu};
use crate::report::tail;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// GRUB's configuration: no menu, console on the serial port too, then
/// Multiboot2 with the boot archive as a module named `initrd`. Loading the
/// video drivers keeps GRUB on UEFI from printing "no suitable video mode"
/// and "no console will be available to OS" (the kernel uses the serial port).
pub(crate) fn grub_cfg(cmdline: &str) -> String {
    format!(
        "set timeout=0\n\
         serial --unit=0 --speed=115200\n\
         terminal_input serial console\n\
         terminal_output serial console\n\
         insmod all_video\n\
         multiboot2 /boot/kernel.elf {cmdline}\n\
         module2 /boot/initrd.tar initrd\n\
         boot\n"
    )
}

/// `<target>/oxok/oxok.iso`: the ISO `cargo xtask iso` builds.
pub(crate) fn default_iso_path(ws: &Workspace) -> PathBuf {
    ws.out_dir().join("oxok.iso")
}

/// Builds a GRUB rescue ISO at `iso` that boots `images` with `cmdline`,
/// under both BIOS and UEFI. Needs [`deps::Need::IsoTools`].
pub(crate) fn build_iso(ws: &Workspace, images: &Images, cmdline: &str, iso: &Path) -> Result<(), String> {
    let stem = iso.file_stem().and_then(|s| s.to_str()).unwrap_or("oxok");
    let root = ws.out_dir().join(format!("{stem}.iso-root"));
    let boot = root.join("boot");
    let io = |e: std::io::Error| format!("preparing {}: {e}", root.display());
    std::fs::create_dir_all(boot.join("grub")).map_err(io)?;
    copy_if_changed(&images.kernel, &boot.join("kernel.elf"))?;
    copy_if_changed(&images.initrd, &boot.join("initrd.tar"))?;
    std::fs::write(boot.join("grub/grub.cfg"), grub_cfg(cmdline)).map_err(io)?;
    let out = Command::new("grub-mkrescue")
        .arg("-o")
        .arg(iso)
        .arg(&root)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not run grub-mkrescue: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(format!("grub-mkrescue failed to build {}:\n{}", iso.display(), tail(&said, 20)));
    }
    Ok(())
}

/// A machine booting `iso` under BIOS, or under UEFI when `uefi`; for UEFI a
/// fresh writable copy of OVMF's variable store is made at `vars`.
pub(crate) fn machine(iso: &Path, uefi: bool, vars: &Path) -> Result<Qemu, String> {
    let boot = if uefi {
        let (code, template) = deps::ovmf().ok_or("no OVMF firmware in /usr/share/OVMF (apt-get install ovmf)")?;
        std::fs::copy(&template, vars)
            .map_err(|e| format!("cannot copy {} to {}: {e}", template.display(), vars.display()))?;
        Boot::CdromUefi { iso: iso.to_path_buf(), ovmf_code: code, ovmf_vars: vars.to_path_buf() }
    } else {
        Boot::CdromBios { iso: iso.to_path_buf() }
    };
    Qemu::new(boot).detect_accel()
}

#[cfg(test)]
mod tests {
    #[test]
    fn grub_cfg_boots_multiboot2_on_serial() {
        let cfg = super::grub_cfg("run=init");
        assert!(cfg.starts_with("set timeout=0\n"));
        assert!(cfg.contains("serial --unit=0 --speed=115200\nterminal_input serial console\n"));
        assert!(cfg.ends_with("multiboot2 /boot/kernel.elf run=init\nmodule2 /boot/initrd.tar initrd\nboot\n"));
    }
}
