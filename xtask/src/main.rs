//! `cargo xtask`: the Oxok host tool. Builds the kernel and its programs,
//! boots them under QEMU, runs the tests, builds the GRUB ISO.
//! `cargo xtask help` lists the commands.
//!
//! Exit status: 0 success, 1 a test, lint or guest failure, 2 a set-up or
//! usage problem (with a sentence saying what to do).
#![deny(unsafe_code)]

mod bench;
mod build;
mod cli;
mod deps;
mod hosttest;
mod iso;
mod json;
mod lint;
mod linuxprogs;
mod meta;
mod pattern;
mod proc;
mod profile;
mod qemu;
mod report;
mod scenario;
mod scenarios;
mod testcmd;

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
}

impl From<String> for Failure {
    fn from(msg: String) -> Failure {
        Failure::Setup(msg)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = cli::parse(&args).map_err(Failure::Setup).and_then(dispatch);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Failed(msg)) => {
            if !msg.is_empty() {
                eprintln!("xtask: {msg}");
            }
            ExitCode::from(1)
        }
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
            let cmdline = qemu::assemble_cmdline(qemu::DEFAULT_CMDLINE, &m.kernel_words);
            let machine = with_options(qemu::Qemu::pvh(&images, &cmdline)?, &m);
            boot_on_terminal(&machine)
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
            boot_on_terminal(&machine)
        }
        Cmd::Test(opts) => testcmd::run(&opts),
        Cmd::Lint => lint::run(),
        Cmd::Bench(args) => bench::run(&args).map_err(Failure::Failed),
        Cmd::Profile(args) => profile::run(&args).map_err(Failure::Failed),
    }
}

/// Applies `--memory` and `--qemu`.
fn with_options(mut machine: qemu::Qemu, m: &MachineOpts) -> qemu::Qemu {
    if let Some(mem) = &m.memory {
        machine.memory = mem.clone();
    }
    machine.extra.extend(m.qemu_args.iter().cloned());
    machine
}

/// Boots `machine` with the serial console on this terminal and says how it ended.
fn boot_on_terminal(machine: &qemu::Qemu) -> Result<(), Failure> {
    eprintln!("xtask: {}", machine.display());
    eprintln!("xtask: serial console follows; Ctrl-C quits");
    let status = proc::run_interactive(machine.command())?;
    let meaning = qemu::status_meaning(status.code());
    eprintln!("xtask: QEMU exited with {} ({meaning})", proc::describe(status));
    match status.code() {
        Some(c) if c == scenario::Exit::Halt.status() => Ok(()),
        _ => Err(Failure::Failed(String::new())),
    }
}
