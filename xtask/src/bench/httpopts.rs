//! The command line of `cargo xtask bench --http`.

use super::hostidle::Policy;
use std::path::PathBuf;

/// Parsed options.
pub(crate) struct Opts {
    pub rounds: usize,
    pub requests: u32,
    pub concurrency: u32,
    pub secs: u32,
    pub roundtrips: u32,
    pub bulk_kb: u32,
    pub out: Option<PathBuf>,
    pub quick: bool,
    pub no_offloads_row: bool,
    /// Only these machines (`--only httpd,nginx`).
    pub only: Option<Vec<String>>,
    /// Oxok boots run under the instruction-counting plugin, its counts
    /// beside each boot's log (`--counts`; for `cargo xtask icount --diff`).
    pub counts: bool,
    /// Words added to Oxok's kernel command line after `run=init`
    /// (`--oxok-cmdline 'tick_hz=1000'`), for experiments.
    pub oxok_cmdline: String,
    /// What idle host cores do during the run (`--host-idle poll|halt`;
    /// polling by default: `hostidle.rs`).
    pub host_idle: Policy,
}

/// The usage text.
pub(crate) const USAGE: &str =
    "usage: cargo xtask bench --http [--quick] [--rounds N] [--requests N] [--concurrency C] [--secs S]
                               [--roundtrips N] [--bulk-kb K] [--no-offloads-row] [--only M,M…] [--out DIR]
                               [--counts] [--oxok-cmdline WORDS] [--host-idle poll|halt]
  Machines: httpd, cheetah, tcpecho (Oxok); nginx, nginx-offloads (Linux: nginx and echo).
  --counts: every Oxok boot runs under the instruction-counting plugin and leaves
  its counts beside its log (compare two with `cargo xtask icount --diff`).
  --oxok-cmdline: words added to Oxok's kernel command line (e.g. 'tick_hz=1000');
  the results' QEMU command lines show them.
  --host-idle: poll (default): idle host cores poll during the run (a 0 µs request on
  /dev/cpu_dma_latency, dropped at the end); halt: the host's own idle setting.
  Needs root (a network namespace and a tap device are made for the run and removed after it).\n";

/// Parses the arguments after `bench` (`--http` among them).
pub(crate) fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        rounds: 3,
        requests: 1000,
        concurrency: 8,
        secs: 5,
        roundtrips: 1000,
        bulk_kb: 4096,
        out: None,
        quick: false,
        no_offloads_row: false,
        only: None,
        counts: false,
        oxok_cmdline: String::new(),
        host_idle: Policy::Poll,
    };
    let mut it = args.iter().filter(|a| *a != "--http");
    while let Some(a) = it.next() {
        let mut num = |what: &str| -> Result<u32, String> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| format!("{a} needs {what}\n{USAGE}"))
        };
        match a.as_str() {
            "--quick" => {
                o.quick = true;
                o.rounds = 1;
                o.requests = 200;
                o.secs = 3;
                o.roundtrips = 200;
                o.bulk_kb = 1024;
            }
            "--rounds" => o.rounds = num("a number")?.max(1) as usize,
            "--requests" => o.requests = num("a number")?.max(1),
            "--concurrency" => o.concurrency = num("a number")?.max(1),
            "--secs" => o.secs = num("seconds")?.max(1),
            "--roundtrips" => o.roundtrips = num("a number")?.max(1),
            "--bulk-kb" => o.bulk_kb = num("a number")?.max(1),
            "--no-offloads-row" => o.no_offloads_row = true,
            "--counts" => o.counts = true,
            "--oxok-cmdline" => o.oxok_cmdline = it.next().ok_or(USAGE)?.trim().to_string(),
            "--host-idle" => {
                o.host_idle = it
                    .next()
                    .and_then(|w| Policy::parse(w))
                    .ok_or_else(|| format!("--host-idle needs poll or halt\n{USAGE}"))?
            }
            "--only" => o.only = Some(it.next().ok_or(USAGE)?.split(',').map(String::from).collect()),
            "--out" => o.out = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Options for tests elsewhere.
#[cfg(test)]
pub(crate) fn tests_opts() -> Opts {
    parse(&[]).expect("defaults parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let a = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = parse(&a("--http --quick --rounds 2 --bulk-kb 64")).expect("parses");
        assert_eq!((o.rounds, o.requests, o.bulk_kb, o.quick), (2, 200, 64, true));
        assert!(parse(&a("--http --bogus")).is_err());
        assert_eq!(parse(&a("--http")).expect("parses").host_idle, Policy::Poll);
        assert_eq!(parse(&a("--http --host-idle halt")).expect("parses").host_idle, Policy::Halt);
        assert!(parse(&a("--http --host-idle spin")).is_err());
        assert!(parse(&a("--http --counts")).expect("parses").counts);
        assert!(parse(&a("--rounds")).is_err());
        let with = vec!["--http".to_string(), "--oxok-cmdline".to_string(), "tick_hz=1000 quiet".to_string()];
        assert_eq!(parse(&with).expect("parses").oxok_cmdline, "tick_hz=1000 quiet");
        assert!(parse(&a("--http --oxok-cmdline")).is_err());
    }
}
