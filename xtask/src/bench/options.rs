//! The command line of `cargo xtask bench`.

use std::path::PathBuf;
use std::time::Duration;

/// How time is measured inside the guests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Plain TCG: `rdtsc` reads the host's TSC, figures move with host load.
    Wall,
    /// `-icount shift=0,sleep=off`: a deterministic clock that advances one
    /// tick per guest instruction (and jumps over idle time).
    Icount,
}

impl Mode {
    /// The name used in options, tables and JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Wall => "wall",
            Mode::Icount => "icount",
        }
    }

    /// QEMU arguments this mode adds.
    pub(crate) fn qemu_args(self) -> Vec<String> {
        match self {
            Mode::Wall => Vec::new(),
            Mode::Icount => vec!["-icount".into(), "shift=0,sleep=off".into()],
        }
    }
}

/// Which operating system a guest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Oxok,
    Linux,
}

impl Side {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Oxok => "oxok",
            Side::Linux => "linux",
        }
    }
}

/// How the Linux guest's kernel is booted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinuxBoot {
    /// The ELF `vmlinux` unpacked from Debian's bzImage, entered by PVH like
    /// Oxok's kernel (falls back to the bzImage if it has no PVH note).
    Pvh,
    /// Debian's bzImage as shipped (real-mode setup, in-guest decompression).
    BzImage,
}

/// Parsed options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub quick: bool,
    pub modes: Vec<Mode>,
    pub rounds: usize,
    /// Time limit of one boot.
    pub timeout: Duration,
    /// Sides to boot (the others' figures are missing).
    pub sides: Vec<Side>,
    pub linux_boot: LinuxBoot,
    /// Boot Linux with `mitigations=off` (its speculative-execution
    /// mitigations disabled, like Oxok, which has none).
    pub linux_mitigations_off: bool,
    /// Where results go; `None`: `bench/results/` of the workspace for a
    /// full run (and the table in `bench/README.md` is refreshed), or
    /// `<target>/bench/quick/` for a quick one (`bench::out_dir`).
    pub out: Option<PathBuf>,
}

/// The usage text.
pub(crate) const USAGE: &str = "\
usage: cargo xtask bench [--quick] [--mode wall|icount|both] [--rounds N]
                         [--timeout SECS] [--only oxok|linux]
                         [--linux-boot pvh|bzimage] [--linux-mitigations on|off]
                         [--out DIR]

Boots Oxok and a Debian Linux guest under the same QEMU settings, runs the
same workloads on both, alternating the two each round, and writes
bench/results/<UTC time>.json, latest.md and latest.svg (see bench/README.md).

  --quick        fewer iterations and 2 rounds (about 3 minutes)
  --mode M       wall (default): TCG, host-time figures; icount: QEMU
                 -icount shift=0,sleep=off, deterministic; both: each round
                 runs both modes
  --rounds N     boots per side and mode (default 5, quick 2)
  --timeout S    limit of one boot in seconds (default 300, quick 120)
  --only SIDE    boot one side only; the other's figures are missing
  --linux-boot B pvh (default): Debian's kernel unpacked to ELF and entered
                 by PVH like Oxok; bzimage: the bzImage as shipped
  --fluke        instead: Fluke's tables for the two execution models
                 (both kernels, icount and wall; <target>/bench/fluke/fluke.md;
                 takes --quick, --out, --timeout)
  --disk         instead: the disk benchmark (issue 15): smallfile, sequential
                 and tree-copy phases on Oxok's C-FFS and Linux's ext4, same
                 virtio-blk settings, disk requests per operation from QEMU's
                 trace (<target>/bench/disk/ for --quick; takes --quick,
                 --rounds, --mode, --only, --timeout (default 900 s quick,
                 3600 s full), --out)
  --linux-mitigations M  on (default): Debian's defaults; off: Linux booted
                 with mitigations=off (no speculative-execution mitigations,
                 as Oxok has none)
  --out DIR      write results to DIR instead of bench/results/ (a --quick
                 run writes to <target>/bench/quick/ unless --out is given,
                 never over the committed full results)

A full run into bench/results/ then runs the HTTP and TCP benchmark too
(`cargo xtask bench --http --help`; needs root), into bench/results/http/,
and the disk benchmark, into bench/results/disk/.
";

impl Options {
    /// Parses `args` (without the `bench` word).
    pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
        let mut quick = false;
        let mut modes = vec![Mode::Wall];
        let mut rounds = None;
        let mut timeout = None;
        let mut sides = vec![Side::Oxok, Side::Linux];
        let mut linux_boot = LinuxBoot::Pvh;
        let mut linux_mitigations_off = false;
        let mut out = None;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value =
                || inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{flag} needs a value\n\n{USAGE}"));
            match flag {
                "--quick" => quick = true,
                "--mode" => {
                    modes = match value()?.as_str() {
                        "wall" => vec![Mode::Wall],
                        "icount" => vec![Mode::Icount],
                        "both" => vec![Mode::Wall, Mode::Icount],
                        m => return Err(format!("--mode must be wall, icount or both, not `{m}`")),
                    }
                }
                "--rounds" => {
                    let v = value()?;
                    rounds = Some(
                        v.parse()
                            .ok()
                            .filter(|&n: &usize| n >= 1)
                            .ok_or(format!("--rounds needs a whole number of at least 1, not `{v}`"))?,
                    );
                }
                "--timeout" => {
                    let v = value()?;
                    let secs: u64 = v
                        .parse()
                        .ok()
                        .filter(|&s| s >= 1)
                        .ok_or(format!("--timeout needs a number of seconds, not `{v}`"))?;
                    timeout = Some(Duration::from_secs(secs));
                }
                "--only" => {
                    sides = match value()?.as_str() {
                        "oxok" => vec![Side::Oxok],
                        "linux" => vec![Side::Linux],
                        s => return Err(format!("--only must be oxok or linux, not `{s}`")),
                    }
                }
                "--linux-boot" => {
                    linux_boot = match value()?.as_str() {
                        "pvh" => LinuxBoot::Pvh,
                        "bzimage" => LinuxBoot::BzImage,
                        b => return Err(format!("--linux-boot must be pvh or bzimage, not `{b}`")),
                    }
                }
                "--linux-mitigations" => {
                    linux_mitigations_off = match value()?.as_str() {
                        "on" => false,
                        "off" => true,
                        m => return Err(format!("--linux-mitigations must be on or off, not `{m}`")),
                    }
                }
                "--out" => out = Some(PathBuf::from(value()?)),
                _ => return Err(format!("unknown argument `{arg}`\n\n{USAGE}")),
            }
        }
        Ok(Options {
            quick,
            modes,
            rounds: rounds.unwrap_or(if quick { 2 } else { 5 }),
            timeout: timeout.unwrap_or(Duration::from_secs(if quick { 120 } else { 300 })),
            sides,
            linux_boot,
            linux_mitigations_off,
            out,
        })
    }

    /// Whether `args` asks for the usage text.
    pub(crate) fn wants_help(args: &[String]) -> bool {
        args.iter().any(|a| a == "-h" || a == "--help" || a == "help")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Options, String> {
        Options::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn quick_runs_never_write_the_committed_results() {
        use std::path::Path;
        let (root, target) = (Path::new("/r"), Path::new("/r/target"));
        let out = |args: &str| crate::bench::out_dir(root, target, &parse(args).unwrap());
        assert_eq!(out("--quick"), Path::new("/r/target/bench/quick"));
        assert_eq!(out(""), Path::new("/r/bench/results"));
        assert_eq!(out("--quick --out /tmp/x"), Path::new("/tmp/x"));
    }

    #[test]
    fn defaults() {
        let o = parse("").unwrap();
        assert_eq!((o.quick, o.rounds, o.timeout.as_secs()), (false, 5, 300));
        assert_eq!(o.modes, [Mode::Wall]);
        assert_eq!(o.sides, [Side::Oxok, Side::Linux]);
        assert_eq!(o.linux_boot, LinuxBoot::Pvh);
        assert!(!o.linux_mitigations_off);
        assert!(parse("--linux-mitigations off").unwrap().linux_mitigations_off);
        let q = parse("--quick").unwrap();
        assert_eq!((q.quick, q.rounds, q.timeout.as_secs()), (true, 2, 120));
    }

    #[test]
    fn every_option() {
        let o = parse("--quick --mode both --rounds 3 --timeout=40 --only linux --linux-boot bzimage --out /tmp/r")
            .unwrap();
        assert_eq!(o.modes, [Mode::Wall, Mode::Icount]);
        assert_eq!((o.rounds, o.timeout.as_secs()), (3, 40));
        assert_eq!(o.sides, [Side::Linux]);
        assert_eq!(o.linux_boot, LinuxBoot::BzImage);
        assert_eq!(o.out, Some(PathBuf::from("/tmp/r")));
        assert_eq!(parse("--mode=icount").unwrap().modes, [Mode::Icount]);
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "--linux-mitigations maybe",
            "--mode fast",
            "--rounds 0",
            "--rounds",
            "--timeout x",
            "--only bsd",
            "--frobnicate",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(Options::wants_help(&["--help".to_string()]));
    }
}
