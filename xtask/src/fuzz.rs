//! `cargo xtask fuzz [--calls N] [--seed S]`: boots the fuzzer scenario
//! (`fuzz-victim` beside `fuzz drive N S`, see `apps/tests/src/bin/fuzz.rs`)
//! with a timeout scaled to N, judges it like a test scenario, and prints
//! its figures: calls, calls per outcome, kernel panics, isolation breaks,
//! leaks. The same seed gives the same calls.

use crate::Failure;
use crate::build;
use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::qemu::Qemu;
use crate::scenario::{self, Scenario};
use crate::scenarios::{FUZZ_EXPECT, FUZZ_FORBID};

/// Options of `cargo xtask fuzz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FuzzOpts {
    /// Random calls to issue.
    pub calls: u64,
    /// The generator's seed.
    pub seed: u64,
}

impl FuzzOpts {
    /// Without options: 100000 calls, seed 1.
    pub(crate) const DEFAULT: FuzzOpts = FuzzOpts { calls: 100_000, seed: 1 };
}

/// The kernel command line of a run.
pub(crate) fn cmdline(o: &FuzzOpts) -> String {
    format!("run=fuzz-victim&fuzz+drive+{}+{}", o.calls, o.seed)
}

/// Wall-clock limit: generous for TCG on a shared machine (the short
/// run's 10000 calls and probes take about a minute there).
pub(crate) fn timeout_secs(o: &FuzzOpts) -> u64 {
    300 + o.calls / 100
}

/// The figures worth repeating from a run's serial output.
pub(crate) fn figures(serial: &str) -> Vec<String> {
    let keep = ["fuzz: ", "fuzz-victim: ", "KERNEL PANIC", "frames leaked", "none leaked"];
    serial
        .lines()
        .map(|l| l.trim_start_matches('.'))
        .filter(|l| keep.iter().any(|k| l.contains(k)))
        .filter(|l| !l.contains("checksum intact") && !l.contains("calls so far"))
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// Runs `cargo xtask fuzz`.
pub(crate) fn run(o: &FuzzOpts) -> Result<(), Failure> {
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::RustTarget, Need::Qemu])?;
    let images = build::build_images(&ws)?;
    let line: &'static str = Box::leak(cmdline(o).into_boxed_str());
    let s = Scenario {
        name: "fuzz",
        about: "cargo xtask fuzz",
        cmdline: line,
        expect: FUZZ_EXPECT,
        forbid: FUZZ_FORBID,
        timeout_secs: timeout_secs(o),
        ..Scenario::DEFAULT
    };
    let log_dir = ws.log_dir();
    std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    println!(
        "fuzz: {} calls, seed {}, timeout {} s; serial log {}",
        o.calls,
        o.seed,
        s.timeout_secs,
        log_dir.join("fuzz.log").display()
    );
    let outcomes = scenario::run_all(vec![(s, Qemu::pvh(&images, &s.kernel_cmdline()))], 1, &log_dir);
    let serial = std::fs::read(log_dir.join("fuzz.log")).map(|b| String::from_utf8_lossy(&b).into_owned());
    let serial = serial.unwrap_or_default();
    for f in figures(&serial) {
        println!("    {f}");
    }
    let panics = serial.matches("KERNEL PANIC").count();
    let leaks = usize::from(!serial.contains("none leaked"));
    let breaks = usize::from(!serial.contains("fuzz: isolation breaks 0"))
        + usize::from(!serial.contains("0 checksum changes"))
        + usize::from(serial.contains("(fuzz-victim) destroyed"));
    println!("kernel panics {panics}, isolation breaks {breaks}, leaks {leaks}");
    if outcomes.iter().all(|x| x.failures.is_empty()) {
        Ok(())
    } else {
        Err(Failure::Failed("the fuzzer run failed".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_and_figures() {
        let o = FuzzOpts { calls: 5, seed: 9 };
        assert_eq!(cmdline(&o), "run=fuzz-victim&fuzz+drive+5+9");
        assert!(timeout_secs(&FuzzOpts { calls: 1_000_000, seed: 1 }) > timeout_secs(&o));
        let serial = "[info] x\n..fuzz: ok (5 calls)\nfuzz-victim: 3 rounds, checksum intact\nnone leaked\n";
        assert_eq!(figures(serial), ["fuzz: ok (5 calls)", "none leaked"]);
    }
}
