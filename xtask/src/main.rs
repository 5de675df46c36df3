//! `cargo xtask`: the Oxok host tool. Builds the kernel and its programs,
//! boots them under QEMU, runs the tests, builds the GRUB ISO.
//! `cargo xtask help` lists the commands.
//!
//! Exit status: 0 success, 1 a test, lint or guest failure, 2 a set-up or
//! usage problem (with a sentence saying what to do).
#![deny(unsafe_code)]

mod bbsuite;
mod bench;
mod build;
mod calldocs;
mod cli;
mod confine;
mod crashlog;
mod crashtest;
mod deps;
mod fuzz;
mod hostcheetah;
mod hostdisk;
mod hosthttp;
mod hostnet;
mod hostping;
mod hosttest;
mod icount;
mod iso;
mod json;
mod lint;
mod linuxlibs;
mod linuxprogs;
mod meta;
mod model;
mod netns;
mod pattern;
mod proc;
mod profile;
mod progimage;
mod qemu;
mod report;
mod scenario;
mod scenarios;
mod scenarios_bbsuite;
mod scenarios_cheetah;
mod scenarios_ckpt;
mod scenarios_disk;
mod scenarios_http;
mod scenarios_lxproc;
mod scenarios_model;
mod scenarios_net;
mod scenarios_prot;
mod scenarios_vocab;
mod scenarios_xnfs;
mod strip;
mod switchpages;
mod symbolize;
mod testcmd;
mod typist;

use cli::{Cmd, Firmware, MachineOpts};
use deps::Need;
use meta::Workspace;
use std::process::ExitCode;

/// Why a command did not succeed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Set-up or usage problem (exit 2); the message says what to do.
    Setup(String),
    /// Tests, lints or the guest failed (exit 1); already reported unless
    /// the message is non-empty.
    Failed(String),
    /// The guest halted with this exit status (`exit N` in the shell):
    /// `cargo xtask run` exits with it.
    Status(u8),
}

impl From<String> for Failure {
    fn from(msg: String) -> Failure {
        Failure::Setup(msg)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = model::take_option(args).map_err(Failure::Setup).and_then(|a| cli::parse(&a).map_err(Failure::Setup));
    let result = result.and_then(dispatch);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Failed(msg)) => {
            if !msg.is_empty() {
                eprintln!("xtask: {msg}");
            }
            ExitCode::from(1)
        }
        Err(Failure::Status(n)) => ExitCode::from(n),
        Err(Failure::Setup(msg)) => {
            eprintln!("xtask: {msg}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(cmd: Cmd) -> Result<(), Failure> {
    match cmd {
        Cmd::Help => {
            print!("{}", cli::HELP);
            Ok(())
        }
        Cmd::Build => {
            let ws = Workspace::load()?;
            let images = build::build_images(&ws)?;
            println!("kernel: {}", images.kernel.display());
            println!("initrd: {} ({})", images.initrd.display(), images.programs.join(", "));
            Ok(())
        }
        Cmd::Run(m) => {
            let ws = Workspace::load()?;
            deps::ensure(&ws, &[Need::RustTarget, Need::Qemu])?;
            let images = build::build_images(&ws)?;
            let cmdline = qemu::assemble_cmdline(qemu::RUN_CMDLINE, &m.kernel_words);
            let mut machine = with_options(qemu::Qemu::pvh(&images, &cmdline)?, &m);
            if m.disk {
                // One image kept across runs, so files survive a reboot.
                let path = ws.out_dir().join("disks").join("run.img");
                if !path.exists() {
                    hostdisk::create(&path, 64)?;
                }
                machine.extra.extend(hostdisk::drive_args(&path));
                eprintln!("xtask: disk {} (virtio-blk; delete it for a fresh disk)", path.display());
            }
            if m.gdb {
                eprintln!("xtask: QEMU waits for GDB on localhost:1234; in another terminal type:");
                eprintln!("xtask:   {}", gdb_command(&images.kernel));
            }
            boot_on_terminal(&machine, &images)
        }
        Cmd::Iso { boot, machine: m } => {
            let ws = Workspace::load()?;
            let mut needs = vec![Need::RustTarget, Need::IsoTools];
            if boot.is_some() {
                needs.push(Need::Qemu);
            }
            if boot == Some(Firmware::Uefi) {
                needs.push(Need::Ovmf);
            }
            deps::ensure(&ws, &needs)?;
            let images = build::build_images(&ws)?;
            let cmdline = qemu::assemble_cmdline(qemu::DEFAULT_CMDLINE, &m.kernel_words);
            let path = iso::default_iso_path(&ws);
            iso::build_iso(&ws, &images, &cmdline, &path)?;
            eprintln!("xtask: built {} (kernel command line: {cmdline})", path.display());
            let Some(fw) = boot else { return Ok(()) };
            let vars = ws.out_dir().join("OVMF_VARS.fd");
            let machine = with_options(iso::machine(&path, fw == Firmware::Uefi, &vars)?, &m);
            boot_on_terminal(&machine, &images)
        }
        Cmd::Test(opts) => testcmd::run(&opts),
        Cmd::Lint => lint::run(),
        Cmd::Docs => calldocs::run().map_err(Failure::Setup),
        Cmd::Fuzz(o) => fuzz::run(&o),
        Cmd::Bench(args) => bench::run(&args).map_err(Failure::Failed),
        Cmd::Profile(args) => profile::run(&args).map_err(Failure::Failed),
        Cmd::Icount(args) => icount::run(&args).map_err(Failure::Failed),
        Cmd::Symbolize(logs) => symbolize::run(&Workspace::load()?, &logs).map_err(Failure::Failed),
        Cmd::Cffs(words) => crashtest::run(&words),
    }
}

/// Applies `--memory`, `--gdb` and `--qemu`, and marks the machine as on
/// a person's terminal (Ctrl-C to the guest, Ctrl-A X quits).
fn with_options(mut machine: qemu::Qemu, m: &MachineOpts) -> qemu::Qemu {
    if let Some(mem) = &m.memory {
        machine.memory = mem.clone();
    }
    machine.interactive = true;
    if m.gdb {
        machine.extra.extend(["-s".to_string(), "-S".to_string()]);
    }
    if m.net {
        // Host UDP and TCP port 5555 reach the guest's port 7 (echo), host
        // TCP 8080 the guest's port 80 (httpd).
        machine.extra.extend(hostnet::nic_args(&[("udp", NET_PORT, 7), ("tcp", NET_PORT, 7), ("tcp", HTTP_PORT, 80)]));
        eprintln!("xtask: NIC on user networking; host 127.0.0.1:{NET_PORT} (udp, tcp) -> guest port 7");
        eprintln!(
            "xtask: host 127.0.0.1:{HTTP_PORT} (tcp) -> guest port 80: `httpd --samples` at the prompt, then `curl http://127.0.0.1:{HTTP_PORT}/`"
        );
        eprintln!(
            "xtask: servers send only with a template, which boot programs set: try `-- run=tcpecho` or `run=udpecho`"
        );
    }
    machine.extra.extend(m.qemu_args.iter().cloned());
    machine
}

/// The host port `run --net` forwards to the guest.
const NET_PORT: u16 = 5555;
/// The host port `run --net` forwards to the guest's HTTP port 80.
const HTTP_PORT: u16 = 8080;

/// The gdb command line that attaches to a machine started with `--gdb`.
fn gdb_command(kernel: &std::path::Path) -> String {
    format!("gdb {} -ex 'target remote localhost:1234' -ex 'hbreak kernel_main' -ex continue", kernel.display())
}

/// Boots `machine` with the serial console on this terminal and says how it ended.
fn boot_on_terminal(machine: &qemu::Qemu, images: &build::Images) -> Result<(), Failure> {
    eprintln!("xtask: {}", machine.display());
    eprintln!("xtask: serial console follows; Ctrl-C goes to Oxok, Ctrl-A X quits QEMU");
    let symbols = symbolize::Symbolizer::new(&images.kernel, &images.initrd);
    let status = proc::run_interactive(machine.command(), symbols)?;
    let meaning = qemu::status_meaning(status.code());
    match status.code().and_then(oxok_abi::boot::guest_status) {
        Some(n) if n > 0 => eprintln!("xtask: Oxok halted; the last boot program exited with status {n}"),
        None if status.code() == Some(0) => {
            eprintln!("xtask: QEMU exited with status 0 (quit with Ctrl-A X, or a triple fault or reset)")
        }
        _ => eprintln!("xtask: QEMU exited with {} ({meaning})", proc::describe(status)),
    }
    match status.code().and_then(oxok_abi::boot::guest_status) {
        Some(0) => Ok(()),
        Some(n) => Err(Failure::Status(n as u8)),
        None => Err(Failure::Failed(String::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_options_make_an_interactive_machine_and_gdb_waits() {
        let q = qemu::Qemu::new(qemu::Boot::Pvh { kernel: "k".into(), initrd: "i".into(), cmdline: "run=init".into() });
        let m = with_options(q, &MachineOpts { gdb: true, memory: Some("1G".into()), ..Default::default() });
        let line = m.display();
        assert!(line.contains("-m 1G") && line.contains("signal=off"), "{line}");
        assert!(line.ends_with(" -s -S"), "QEMU must wait for GDB: {line}");
        let gdb = gdb_command(std::path::Path::new("/t/kernel.elf"));
        assert!(gdb.starts_with("gdb /t/kernel.elf -ex 'target remote localhost:1234'"), "{gdb}");
        assert_eq!(qemu::assemble_cmdline(qemu::RUN_CMDLINE, &["log=info".into()]), "run=init halt_status log=info");
    }
}
