//! The QEMU command line, in one place: `run`, `test`, `iso` and `bench`
//! all start the same machine (see PLATFORM.md for why these settings).

use crate::build::Images;
use oxok_abi::boot::{EXIT_HALT, EXIT_PANIC, qemu_status};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The QEMU executable.
pub(crate) const QEMU: &str = "qemu-system-x86_64";
/// Memory given to the guest unless the caller says otherwise.
pub(crate) const DEFAULT_MEMORY: &str = "512M";
/// The kernel command line when nothing else is asked for.
pub(crate) const DEFAULT_CMDLINE: &str = "run=init";
/// The kernel command line of `cargo xtask run`: the default, and the halt
/// carries the shell's exit status to the host (`exit 3` → status 3).
pub(crate) const RUN_CMDLINE: &str = "run=init halt_status";

/// QEMU's accelerator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accel {
    Tcg,
    Kvm,
}

impl Accel {
    /// `OXOK_ACCEL=tcg|kvm` if set, else KVM only when the CPU shows `vmx` or
    /// `svm` (the `/dev/kvm` on machines without them is a slow fallback).
    pub(crate) fn detect() -> Result<Accel, String> {
        match std::env::var("OXOK_ACCEL").ok().as_deref() {
            Some("tcg") => return Ok(Accel::Tcg),
            Some("kvm") => return Ok(Accel::Kvm),
            Some(other) => return Err(format!("OXOK_ACCEL must be `tcg` or `kvm`, not `{other}`")),
            None => {}
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Ok(Self::from_cpuinfo(&cpuinfo))
    }

    /// KVM if a `flags` line lists `vmx` or `svm`.
    pub(crate) fn from_cpuinfo(cpuinfo: &str) -> Accel {
        let hw = cpuinfo
            .lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "vmx" || f == "svm"));
        if hw && Path::new("/dev/kvm").exists() { Accel::Kvm } else { Accel::Tcg }
    }

    fn name(self) -> &'static str {
        match self {
            Accel::Tcg => "tcg",
            Accel::Kvm => "kvm",
        }
    }
}

/// What the machine boots.
#[derive(Debug, Clone)]
pub(crate) enum Boot {
    /// PVH: `-kernel`, `-initrd`, `-append`.
    Pvh { kernel: PathBuf, initrd: PathBuf, cmdline: String },
    /// A CD-ROM image with legacy BIOS (SeaBIOS).
    CdromBios { iso: PathBuf },
    /// A CD-ROM image with UEFI: OVMF code (read-only) and a writable copy of its variables.
    CdromUefi { iso: PathBuf, ovmf_code: PathBuf, ovmf_vars: PathBuf },
}

/// A QEMU invocation: the common machine plus what it boots.
#[derive(Debug, Clone)]
pub(crate) struct Qemu {
    pub boot: Boot,
    /// Guest memory, QEMU syntax (`512M`, `1G`).
    pub memory: String,
    pub accel: Accel,
    /// Further QEMU arguments, appended last.
    pub extra: Vec<String>,
    /// On a person's terminal: the serial port shares stdio with QEMU's
    /// monitor through a multiplexer, with the terminal's signal keys off, so
    /// Ctrl-C reaches the guest and Ctrl-A X quits ([`INTERACTIVE_SERIAL`]).
    /// Captured runs (tests) keep plain `-serial stdio`.
    pub interactive: bool,
}

/// The serial console on a person's terminal: stdio multiplexed between
/// the guest's serial port and QEMU's monitor (Ctrl-A C switches, Ctrl-A X
/// quits, Ctrl-A H lists the keys), and `signal=off`, so Ctrl-C and Ctrl-Z
/// are bytes for the guest rather than signals for QEMU.
pub(crate) const INTERACTIVE_SERIAL: [&str; 6] =
    ["-chardev", "stdio,id=con0,mux=on,signal=off", "-serial", "chardev:con0", "-mon", "chardev=con0,mode=readline"];

impl Qemu {
    /// A machine booting `images` by PVH with kernel command line `cmdline`;
    /// accelerator from [`Accel::detect`], [`DEFAULT_MEMORY`].
    pub(crate) fn pvh(images: &Images, cmdline: &str) -> Result<Qemu, String> {
        Qemu::new(Boot::Pvh {
            kernel: images.kernel.clone(),
            initrd: images.initrd.clone(),
            cmdline: cmdline.to_string(),
        })
        .detect_accel()
    }

    /// A machine booting `boot`, with TCG and the default memory.
    pub(crate) fn new(boot: Boot) -> Qemu {
        Qemu { boot, memory: DEFAULT_MEMORY.into(), accel: Accel::Tcg, extra: Vec::new(), interactive: false }
    }

    /// Sets the accelerator from [`Accel::detect`].
    pub(crate) fn detect_accel(mut self) -> Result<Qemu, String> {
        self.accel = Accel::detect()?;
        Ok(self)
    }

    /// The arguments after `qemu-system-x86_64`.
    pub(crate) fn args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |s: &str| a.push(s.into());
        for s in ["-machine", "q35", "-cpu", "max", "-m", &self.memory, "-smp", "1"] {
            push(s);
        }
        for s in ["-accel", self.accel.name(), "-no-reboot", "-display", "none"] {
            push(s);
        }
        if self.interactive {
            for s in INTERACTIVE_SERIAL {
                push(s);
            }
        } else {
            for s in ["-serial", "stdio", "-monitor", "none"] {
                push(s);
            }
        }
        push("-device");
        push("isa-debug-exit,iobase=0xf4,iosize=0x04");
        match &self.boot {
            Boot::Pvh { kernel, initrd, cmdline } => {
                a.extend(["-kernel".into(), kernel.into(), "-initrd".into(), initrd.into()]);
                a.extend(["-append".into(), cmdline.into()]);
            }
            Boot::CdromBios { iso } => a.extend(["-cdrom".into(), iso.into()]),
            Boot::CdromUefi { iso, ovmf_code, ovmf_vars } => {
                a.extend(["-cdrom".into(), iso.into()]);
                a.push("-drive".into());
                a.push(pflash(ovmf_code, true));
                a.push("-drive".into());
                a.push(pflash(ovmf_vars, false));
            }
        }
        a.extend(self.extra.iter().map(OsString::from));
        a
    }

    /// The full command, ready to spawn (stdio is left to the caller).
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(QEMU);
        cmd.args(self.args());
        cmd
    }

    /// The command as one shell-like line, for messages.
    pub(crate) fn display(&self) -> String {
        let mut s = String::from(QEMU);
        for a in self.args() {
            let a = a.to_string_lossy();
            s.push(' ');
            if a.contains(' ') || a.is_empty() {
                s.push_str(&format!("\"{a}\""));
            } else {
                s.push_str(&a);
            }
        }
        s
    }
}

fn pflash(file: &Path, readonly: bool) -> OsString {
    let mut s = OsString::from("if=pflash,format=raw,");
    if readonly {
        s.push("readonly=on,");
    }
    s.push("file=");
    s.push(file);
    s
}

/// What a QEMU exit status means for Oxok (`None`: killed by a signal).
pub(crate) fn status_meaning(status: Option<i32>) -> &'static str {
    match status {
        Some(s) if s == qemu_status(EXIT_HALT) => "halt: nothing left to run",
        Some(s) if oxok_abi::boot::guest_status(s).is_some() => "halt: the last boot program exited with this status",
        Some(s) if s == qemu_status(EXIT_PANIC) => "kernel panic",
        Some(0) => "triple fault or reset",
        Some(1) => "QEMU error",
        Some(_) => "unexpected debug-exit value",
        None => "killed by a signal",
    }
}

/// Joins the default command line with the user's extra words: a word
/// `key=value` or `key` replaces a default word with the same key, others
/// are appended. So `run=a,b` replaces the default `run=init`.
pub(crate) fn assemble_cmdline(default: &str, extra: &[String]) -> String {
    let key = |w: &str| w.split('=').next().unwrap_or("").to_string();
    let extra_words: Vec<&str> = extra.iter().flat_map(|e| e.split_whitespace()).collect();
    let mut words: Vec<&str> =
        default.split_whitespace().filter(|d| !extra_words.iter().any(|e| key(e) == key(d))).collect();
    words.extend(extra_words);
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_assembly() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(assemble_cmdline("run=init", &[]), "run=init");
        assert_eq!(assemble_cmdline("run=init", &s(&["log=debug"])), "run=init log=debug");
        assert_eq!(assemble_cmdline("run=init", &s(&["ktest", "run=a,b"])), "ktest run=a,b");
        assert_eq!(assemble_cmdline("run=init log=info", &s(&["log=debug ktest"])), "run=init log=debug ktest");
    }

    #[test]
    fn accel_from_cpuinfo() {
        assert_eq!(Accel::from_cpuinfo("flags\t: fpu sse2 hypervisor\n"), Accel::Tcg);
        assert_eq!(Accel::from_cpuinfo("model name: vmx-like\nflags: fpu\n"), Accel::Tcg);
    }

    #[test]
    fn pvh_and_uefi_arguments() {
        let mut q = Qemu::new(Boot::Pvh { kernel: "k".into(), initrd: "i".into(), cmdline: "run=init ktest".into() });
        q.extra.push("-s".into());
        let line = q.display();
        assert!(line.starts_with("qemu-system-x86_64 -machine q35 -cpu max -m 512M -smp 1 -accel tcg -no-reboot"));
        assert!(line.contains("-serial stdio -monitor none -device isa-debug-exit,iobase=0xf4,iosize=0x04"));
        assert!(line.ends_with("-kernel k -initrd i -append \"run=init ktest\" -s"));
        let q = Qemu::new(Boot::CdromUefi { iso: "o.iso".into(), ovmf_code: "c.fd".into(), ovmf_vars: "v.fd".into() });
        assert!(q.display().ends_with(
            "-cdrom o.iso -drive if=pflash,format=raw,readonly=on,file=c.fd -drive if=pflash,format=raw,file=v.fd"
        ));
        assert_eq!(status_meaning(Some(33)), "halt: nothing left to run");
        assert_eq!(status_meaning(Some(35)), "kernel panic");
        assert_eq!(status_meaning(Some(0)), "triple fault or reset");
    }

    #[test]
    fn interactive_serial_passes_ctrl_c_to_the_guest() {
        let mut q = Qemu::new(Boot::Pvh { kernel: "k".into(), initrd: "i".into(), cmdline: "run=init".into() });
        q.interactive = true;
        let line = q.display();
        assert!(line.contains("-chardev stdio,id=con0,mux=on,signal=off -serial chardev:con0"), "{line}");
        assert!(!line.contains("-serial stdio"));
        assert_eq!(
            status_meaning(Some(oxok_abi::boot::qemu_status(0x43))),
            "halt: the last boot program exited with this status"
        );
    }
}
