//! Command-line parsing for `cargo xtask` (hand-rolled, no dependencies).

/// The help text of `cargo xtask help`.
pub(crate) const HELP: &str = "\
cargo xtask: build, boot and test Oxok

USAGE: cargo xtask <command> [options]

COMMANDS
  run [options] [-- <kernel words>]
        Build everything and boot Oxok under QEMU with the serial console on
        this terminal. Ctrl-C goes to Oxok (it interrupts the running program);
        quit with Ctrl-A X, or `exit N` in the shell (this command then exits
        with status N). Only warnings from the kernel show unless asked:
        `-- log=info`, `-- log=warn,sched=debug`.
          --gdb                QEMU waits for GDB on localhost:1234 (-s -S);
                               the gdb command to type is printed first
          --append \"<words>\"   extra kernel command-line words, e.g. \"log=debug\"
                               (also: words after --); `run=a,b` replaces the
                               default `run=init`; other words: `ktest`, `log=<level>`
          --memory <size>      guest memory (default 512M)
          --qemu \"<args>\"      extra QEMU arguments
          --net                a virtio-net NIC; host 127.0.0.1:5555 (UDP, TCP)
                               is forwarded to guest port 7
          --disk               a 64 MiB virtio-blk disk, target/oxok/disks/run.img,
                               kept across runs (XN; the `xn` shell view)
  test [options]
        Host unit tests of every host crate, then the QEMU scenarios.
        Ends with `N passed, N failed`; exits non-zero on any failure.
          --filter <text>      run only scenarios whose name contains <text>
          --no-host            skip the host unit tests
          --no-bench           skip the one quick run of the bench harness
          --list               list the scenarios and what each proves
          -j, --jobs <n>       scenarios run at once (default 2)
          --repeat <n>         run the chosen scenarios n times (flakiness check);
                               any failing round fails the run
          --long               also the scenarios too long for the usual run
                               (bc's number sweeps of the busybox suite, both
                               sides: about 30 minutes)
  iso [options] [-- <kernel words>]
        Build <target>/oxok/oxok.iso (GRUB, BIOS and UEFI).
          --boot bios|uefi     then boot it under QEMU on this terminal
          --append \"<words>\"   as for run
          --memory <size>, --qemu \"<args>\"   as for run
  fuzz [options]
        The system-call fuzzer: random calls with hostile arguments from a
        sandbox under a small account, then directed probes; fails on a
        kernel panic, a hang, a frozen or changed victim, or a leak.
          --calls <n>          random calls (default 100000)
          --seed <s>           the generator's seed (default 1; same seed, same calls)
  crashtest [--depth N] [--jobs J]
        The C-FFS crash harness over every workload of up to N (default 3)
        operations: every crash state recovered and checked (crates/cffs).
  crashtest --qemu [--depth N] [--first K] [--count M]
        The same workloads run inside Oxok (crashrun: C-FFS over the kernel's
        XN) on a disk QEMU's blklogwrites logs; every crash state of each
        boot's log replayed and checked on the host (xtask/src/crashlog.rs).
  mkfs IMG [BLOCKS]    A fresh C-FFS disk image (default 16384 blocks of 4 KiB).
  fsck IMG     Recover and check a C-FFS disk image.
  build        Build kernel.elf and initrd.tar in <target>/oxok/ and print their paths.
  lint         cargo fmt --check, and clippy -D warnings for host and bare-metal crates.
  docs         Write docs/calls.md from the call table (a host test fails when it is stale).
  bench [...]  Benchmarks (see `cargo xtask bench --help`).
  profile WORKLOAD [...]
               Where the guest's instructions go in one bench workload
               (see `cargo xtask profile --help`).
  icount COMMAND...
               Every guest instruction a shell command costs, per function,
               counted by a QEMU plugin (see `cargo xtask icount --help`).
  symbolize LOG...
               Print serial logs with their backtraces symbolised (kernel
               panics and programs ended by a fault), from the last build.
  help         This text.

OPTIONS OF build, run, iso, test AND bench
  --model process|interrupt
        The kernel's execution model: `interrupt` (default; one kernel stack
        per CPU) or `process` (a kernel stack per environment; long calls
        preempted at their restart points and resumed in the kernel).

ENVIRONMENT
  OXOK_ACCEL=tcg|kvm   QEMU accelerator (default: kvm only if the CPU shows vmx/svm)
  CARGO_TARGET_DIR     honoured; outputs go to <target>/oxok/
";

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cmd {
    Help,
    Build,
    Run(MachineOpts),
    Test(TestOpts),
    Iso {
        boot: Option<Firmware>,
        machine: MachineOpts,
    },
    Lint,
    Docs,
    Bench(Vec<String>),
    Fuzz(crate::fuzz::FuzzOpts),
    Profile(Vec<String>),
    Icount(Vec<String>),
    Symbolize(Vec<String>),
    /// `crashtest`, `mkfs`, `fsck`: the command word and its arguments.
    Cffs(Vec<String>),
}

/// Options shared by the commands that boot a machine on the terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MachineOpts {
    /// Extra kernel command-line words.
    pub kernel_words: Vec<String>,
    /// Guest memory, if not the default.
    pub memory: Option<String>,
    /// Extra QEMU arguments.
    pub qemu_args: Vec<String>,
    /// A virtio-net NIC with host ports forwarded (`--net`).
    pub net: bool,
    /// Start QEMU halted with its GDB server on (`--gdb`).
    pub gdb: bool,
    /// A virtio-blk disk kept across runs (`--disk`).
    pub disk: bool,
}

/// Options of `cargo xtask test`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TestOpts {
    pub filter: Option<String>,
    pub no_host: bool,
    /// Skip the one quick run of the bench harness (`--no-bench`).
    pub no_bench: bool,
    pub list: bool,
    pub jobs: usize,
    /// Rounds of the scenarios (`--repeat N`, default 1).
    pub repeat: usize,
    /// Also the long scenarios (`--long`).
    pub long: bool,
}

/// Firmware for booting the ISO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Firmware {
    Bios,
    Uefi,
}

/// Parses the arguments after `cargo xtask`.
pub(crate) fn parse(args: &[String]) -> Result<Cmd, String> {
    let Some((cmd, rest)) = args.split_first() else {
        return Ok(Cmd::Help);
    };
    if cmd == "bench" {
        return Ok(Cmd::Bench(rest.to_vec()));
    }
    if cmd == "profile" {
        return Ok(Cmd::Profile(rest.to_vec()));
    }
    if cmd == "icount" {
        return Ok(Cmd::Icount(rest.to_vec()));
    }
    if cmd == "symbolize" {
        return Ok(Cmd::Symbolize(rest.to_vec()));
    }
    if crate::crashtest::is_ours(cmd) {
        return Ok(Cmd::Cffs(args.to_vec()));
    }
    let mut a = Args::new(rest);
    let parsed = match cmd.as_str() {
        "help" | "-h" | "--help" => Cmd::Help,
        _ if a.flag(&["-h", "--help"]) => Cmd::Help,
        "build" => Cmd::Build,
        "lint" => Cmd::Lint,
        "docs" => Cmd::Docs,
        "run" => Cmd::Run(machine_opts(&mut a)?),
        "iso" => {
            let boot = match a.value(&["--boot"])?.as_deref() {
                None => None,
                Some("bios") => Some(Firmware::Bios),
                Some("uefi") => Some(Firmware::Uefi),
                Some(other) => return Err(format!("--boot takes `bios` or `uefi`, not `{other}`")),
            };
            Cmd::Iso { boot, machine: machine_opts(&mut a)? }
        }
        "test" => {
            let jobs = match a.value(&["-j", "--jobs"])? {
                None => 2,
                Some(n) => n.parse().ok().filter(|&n| n > 0).ok_or(format!("-j takes a positive number, not `{n}`"))?,
            };
            let repeat = match a.value(&["--repeat"])? {
                None => 1,
                Some(n) => {
                    n.parse().ok().filter(|&n| n > 0).ok_or(format!("--repeat takes a positive number, not `{n}`"))?
                }
            };
            Cmd::Test(TestOpts {
                repeat,
                filter: a.value(&["--filter"])?,
                no_host: a.flag(&["--no-host"]),
                no_bench: a.flag(&["--no-bench"]),
                list: a.flag(&["--list"]),
                long: a.flag(&["--long"]),
                jobs,
            })
        }
        "fuzz" => {
            let mut o = crate::fuzz::FuzzOpts::DEFAULT;
            if let Some(n) = a.value(&["--calls"])? {
                o.calls = n.parse().map_err(|_| format!("--calls takes a number, not `{n}`"))?;
            }
            if let Some(s) = a.value(&["--seed"])? {
                o.seed = s.parse().map_err(|_| format!("--seed takes a number, not `{s}`"))?;
            }
            Cmd::Fuzz(o)
        }
        other => {
            return Err(format!("unknown command `{other}`; `cargo xtask help` lists the commands"));
        }
    };
    a.finish(cmd)?;
    Ok(parsed)
}

fn machine_opts(a: &mut Args) -> Result<MachineOpts, String> {
    let mut kernel_words = a.values(&["--append"])?;
    kernel_words.append(&mut a.trailing);
    let qemu_args = a.values(&["--qemu"])?.iter().flat_map(|s| s.split_whitespace()).map(String::from).collect();
    let net = a.flag(&["--net"]);
    let gdb = a.flag(&["--gdb"]);
    let disk = a.flag(&["--disk"]);
    Ok(MachineOpts { kernel_words, memory: a.value(&["--memory"])?, qemu_args, net, gdb, disk })
}

/// Options not yet consumed, and the words after `--`.
struct Args {
    opts: Vec<String>,
    trailing: Vec<String>,
}

impl Args {
    fn new(args: &[String]) -> Args {
        match args.iter().position(|a| a == "--") {
            Some(i) => Args { opts: args[..i].to_vec(), trailing: args[i + 1..].to_vec() },
            None => Args { opts: args.to_vec(), trailing: Vec::new() },
        }
    }

    /// Removes a flag given by any of `names`; whether it was there.
    fn flag(&mut self, names: &[&str]) -> bool {
        let before = self.opts.len();
        self.opts.retain(|o| !names.contains(&o.as_str()));
        self.opts.len() != before
    }

    /// Removes every `NAME VALUE` / `NAME=VALUE` (and `-jN` for short names).
    fn values(&mut self, names: &[&str]) -> Result<Vec<String>, String> {
        let mut found = Vec::new();
        let mut i = 0;
        while i < self.opts.len() {
            let o = &self.opts[i];
            if names.contains(&o.as_str()) {
                if i + 1 >= self.opts.len() {
                    return Err(format!("{o} needs a value"));
                }
                found.push(self.opts.remove(i + 1));
                self.opts.remove(i);
                continue;
            }
            let inline = names.iter().find_map(|n| {
                let v = o.strip_prefix(n)?;
                if n.starts_with("--") { v.strip_prefix('=') } else { Some(v.strip_prefix('=').unwrap_or(v)) }
            });
            if let Some(v) = inline {
                found.push(v.to_string());
                self.opts.remove(i);
                continue;
            }
            i += 1;
        }
        Ok(found)
    }

    /// Like [`Args::values`], but at most once.
    fn value(&mut self, names: &[&str]) -> Result<Option<String>, String> {
        let mut v = self.values(names)?;
        if v.len() > 1 {
            return Err(format!("{} given more than once", names[names.len() - 1]));
        }
        Ok(v.pop())
    }

    /// Fails on anything not consumed.
    fn finish(self, cmd: &str) -> Result<(), String> {
        if let Some(o) = self.opts.first() {
            return Err(format!("`cargo xtask {cmd}` does not take `{o}`; see `cargo xtask help`"));
        }
        if !self.trailing.is_empty() {
            return Err(format!("`cargo xtask {cmd}` takes no words after `--`"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Cmd, String> {
        parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn commands_and_options() {
        assert_eq!(p(""), Ok(Cmd::Help));
        assert_eq!(p("lint"), Ok(Cmd::Lint));
        assert_eq!(p("run --help"), Ok(Cmd::Help));
        assert_eq!(
            p("run --append log=debug --memory 1G -- ktest run=a"),
            Ok(Cmd::Run(MachineOpts {
                kernel_words: vec!["log=debug".into(), "ktest".into(), "run=a".into()],
                memory: Some("1G".into()),
                qemu_args: vec![],
                net: false,
                gdb: false,
                disk: false,
            }))
        );
        assert_eq!(p("run --net"), Ok(Cmd::Run(MachineOpts { net: true, ..Default::default() })));
        assert_eq!(
            p("test -j1 --filter=iso --no-host"),
            Ok(Cmd::Test(TestOpts {
                filter: Some("iso".into()),
                no_host: true,
                no_bench: false,
                list: false,
                jobs: 1,
                repeat: 1,
                long: false,
            }))
        );
        assert_eq!(
            p("test --jobs 3 --list --long"),
            Ok(Cmd::Test(TestOpts {
                filter: None,
                no_host: false,
                no_bench: false,
                list: true,
                jobs: 3,
                repeat: 1,
                long: true
            }))
        );
        assert_eq!(
            p("iso --boot uefi --qemu=-s"),
            Ok(Cmd::Iso {
                boot: Some(Firmware::Uefi),
                machine: MachineOpts { qemu_args: vec!["-s".into()], ..Default::default() }
            })
        );
        assert_eq!(p("run --gdb"), Ok(Cmd::Run(MachineOpts { gdb: true, ..Default::default() })));
        assert!(matches!(p("test --repeat 20"), Ok(Cmd::Test(TestOpts { repeat: 20, .. }))));
        assert_eq!(
            p("fuzz --calls 1000000 --seed=7"),
            Ok(Cmd::Fuzz(crate::fuzz::FuzzOpts { calls: 1_000_000, seed: 7 }))
        );
        assert_eq!(p("fuzz"), Ok(Cmd::Fuzz(crate::fuzz::FuzzOpts::DEFAULT)));
        assert_eq!(p("bench --x -- y"), Ok(Cmd::Bench(vec!["--x".into(), "--".into(), "y".into()])));
    }

    #[test]
    fn usage_errors() {
        for bad in [
            "fuzz --calls x",
            "fuzz --seed",
            "frobnicate",
            "test -j 0",
            "test -j",
            "test --bogus",
            "iso --boot efi",
            "lint -- x",
            "run --memory",
            "test --repeat 0",
            "test --repeat x",
        ] {
            assert!(p(bad).is_err(), "{bad} should be refused");
        }
    }
}
