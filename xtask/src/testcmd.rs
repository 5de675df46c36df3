//! `cargo xtask test`: host unit tests, then the QEMU scenarios, then one
//! line `N passed, N failed`.

use crate::Failure;
use crate::build::{self, Images};
use crate::cli::TestOpts;
use crate::deps::{self, Need};
use crate::hosttest;
use crate::iso;
use crate::meta::Workspace;
use crate::model::Model;
use crate::qemu::Qemu;
use crate::report::Tally;
use crate::scenario::{self, Boot, Scenario};
use crate::scenarios::SCENARIOS;
use crate::scenarios_bbsuite::LONG_SCENARIOS;
use crate::scenarios_model::{PROCESS_ONLY, PROCESS_SUBSET};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The scenarios whose name contains `filter` (all without one); on the
/// process-model kernel (`--model process`) also those only it runs; with
/// `long`, also the long ones.
pub(crate) fn select(filter: Option<&str>, long: bool) -> Vec<Scenario> {
    let only = if crate::model::chosen() == Model::Process { &PROCESS_ONLY[..] } else { &[] };
    let long = if long { &LONG_SCENARIOS[..] } else { &[] };
    SCENARIOS.iter().chain(only).chain(long).filter(|s| filter.is_none_or(|f| s.name.contains(f))).copied().collect()
}

/// The default run's second pass: [`PROCESS_SUBSET`] and [`PROCESS_ONLY`]
/// on the process-model kernel (logs in `<target>/oxok/logs-process/`).
fn process_pass(ws: &Workspace, images: &Images, jobs: usize, tally: &mut Tally) {
    let chosen: Vec<Scenario> =
        SCENARIOS.iter().filter(|s| PROCESS_SUBSET.contains(&s.name)).chain(PROCESS_ONLY.iter()).copied().collect();
    println!("the same kernel in the {} model: {} scenarios ...", Model::Process.name(), chosen.len());
    let kernel = match crate::model::kernel(ws, Model::Process, &images.kernel) {
        Ok(k) => k,
        Err(e) => {
            println!("build of the process-model kernel FAILED: {e}");
            tally.fail(chosen.len(), "process-model-build");
            return;
        }
    };
    let images = Images { kernel, ..images.clone() };
    let log_dir = ws.out_dir().join("logs-process");
    if let Err(e) = std::fs::create_dir_all(&log_dir) {
        println!("cannot create {}: {e}", log_dir.display());
        tally.fail(chosen.len(), "process-model-logs");
        return;
    }
    let outcomes = scenario::run_all(machines(ws, &images, &chosen), jobs, &log_dir);
    let failed = count_outcomes(tally, &outcomes, "(process)");
    if !failed.is_empty() {
        println!("failed in the process model: {} (logs in {})", failed.join(" "), log_dir.display());
    }
}

/// Runs `cargo xtask test`.
pub(crate) fn run(opts: &TestOpts) -> Result<(), Failure> {
    let chosen = select(opts.filter.as_deref(), opts.long);
    if opts.list {
        let width = chosen.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for s in &chosen {
            println!("{:width$}  {}", s.name, s.about);
        }
        return Ok(());
    }
    // The logged-disk crash test runs as one step beside the scenarios.
    let crash_step =
        opts.filter.as_deref().is_none_or(|f| CRASH_STEP.contains(f)) && crate::model::chosen() == Model::Interrupt;
    if chosen.is_empty() && opts.filter.is_some() && !crash_step {
        return Err(Failure::Setup(format!(
            "no scenario name contains `{}`; `cargo xtask test --list` lists them",
            opts.filter.as_deref().unwrap_or_default()
        )));
    }
    let ws = Workspace::load()?;
    deps::ensure(&ws, &needs(&chosen))?;
    let mut tally = Tally::default();
    if !opts.no_host {
        hosttest::run(&ws, &mut tally)?;
    }
    if !chosen.is_empty() || crash_step {
        let log_dir = match crate::model::chosen() {
            Model::Interrupt => ws.log_dir(),
            Model::Process => ws.out_dir().join("logs-process"),
        };
        std::fs::create_dir_all(&log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
        match build::build_images(&ws) {
            Ok(images) => {
                for round in 1..=opts.repeat {
                    if opts.repeat > 1 {
                        println!("round {round} of {}", opts.repeat);
                    }
                    let runs = machines(&ws, &images, &chosen);
                    let outcomes = scenario::run_all(runs, opts.jobs, &log_dir);
                    let names: Vec<&str> = outcomes.iter().map(|o| o.name).collect();
                    crate::bbsuite::print_counts(&log_dir, &names);
                    let failed = count_outcomes(&mut tally, &outcomes, "");
                    if !failed.is_empty() {
                        println!("failed scenarios: {} (logs in {})", failed.join(" "), log_dir.display());
                    }
                    if opts.repeat > 1 {
                        // The next round overwrites NAME.log: keep the failing ones.
                        for name in &failed {
                            let from = log_dir.join(format!("{name}.log"));
                            let _ = std::fs::copy(&from, log_dir.join(format!("{name}.round{round}.log")));
                        }
                    }
                }
                if opts.filter.is_none() && crate::model::chosen() == Model::Interrupt {
                    process_pass(&ws, &images, opts.jobs, &mut tally);
                }
                if crash_step {
                    crash_subset(&ws, &images, &mut tally);
                }
            }
            Err(e) => {
                println!("build FAILED: {e}");
                println!("    so {} scenarios could not run and count as failed", chosen.len());
                tally.fail(chosen.len(), "build");
            }
        }
    }
    if opts.filter.is_none() && !opts.no_bench {
        bench_smoke(&ws, &mut tally);
    }
    if opts.filter.is_none() && !opts.no_host {
        // rustfmt and clippy are part of "done": a lint failure fails the run.
        match crate::lint::run() {
            Ok(()) => {
                println!("lint ... ok");
                tally.passed += 1;
            }
            Err(_) => {
                println!("lint ... FAILED (see above; `cargo xtask lint` reruns it)");
                tally.fail(1, "lint");
            }
        }
    }
    for why in tally.reasons() {
        println!("why: {why}");
    }
    println!("{}", tally.summary());
    if tally.failed == 0 { Ok(()) } else { Err(Failure::Failed(String::new())) }
}

/// The name of the logged-disk crash-test step (`--filter crashlog`).
const CRASH_STEP: &str = "crashlog";

/// The bounded subset of `cargo xtask crashtest --qemu`: the 27
/// one-operation workloads in one logged boot, every crash state checked.
fn crash_subset(ws: &Workspace, images: &Images, tally: &mut Tally) {
    let chosen = crate::crashlog::Chosen { depth: 1, first: 0, count: oxok_cffs::crash::guest::count(1) };
    println!(
        "{CRASH_STEP}: workloads on Oxok, disk logged by QEMU's blklogwrites, crash states checked on the host ..."
    );
    match crate::crashlog::run_boots(images, &ws.out_dir().join("crashlog-test"), chosen) {
        Ok(line) => {
            println!("{CRASH_STEP} ... ok ({})", line.lines().last().unwrap_or_default());
            tally.passed += 1;
        }
        Err(e) => {
            println!("{CRASH_STEP} ... FAILED\n{e}");
            tally.fail(1, CRASH_STEP);
        }
    }
}

/// Runs the bench harness once, quick, into a scratch folder, so it cannot
/// rot. The numbers are not judged here (benchmarks are not tests); only
/// that both sides boot and the report is written.
fn bench_smoke(ws: &Workspace, tally: &mut Tally) {
    let out = ws.target_dir.join("bench").join("selftest");
    let args: Vec<String> = ["--quick", "--rounds", "1", "--out"]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect();
    println!("bench harness (one quick round, numbers not judged) ...");
    match crate::bench::run(&args) {
        Ok(()) if out.join("latest.md").exists() => {
            println!("bench-smoke ... ok (report in {})", out.display());
            tally.passed += 1;
        }
        Ok(()) => {
            println!("bench-smoke ... FAILED (no report written in {})", out.display());
            tally.fail(1, "bench-smoke");
        }
        Err(e) => {
            println!("bench-smoke ... FAILED ({e})");
            tally.fail(1, "bench-smoke");
        }
    }
}

/// What the chosen scenarios need from the host.
fn needs(chosen: &[Scenario]) -> Vec<Need> {
    let mut needs = vec![Need::RustTarget, Need::Qemu];
    if chosen.iter().any(|s| matches!(s.boot, Boot::IsoBios | Boot::IsoUefi)) {
        needs.push(Need::IsoTools);
    }
    if chosen.iter().any(|s| s.boot == Boot::IsoUefi) {
        needs.push(Need::Ovmf);
    }
    // A tap NIC: the namespace, and the host pinging the guest over it.
    if chosen.iter().any(|s| s.net.is_some_and(|n| n.tap)) {
        needs.extend([Need::Netns, Need::Ping]);
    }
    needs
}

/// The machine for each scenario. ISOs are built once per distinct command
/// line; a failure to prepare one becomes that scenario's failure.
fn machines(ws: &Workspace, images: &Images, chosen: &[Scenario]) -> Vec<(Scenario, Result<Qemu, String>)> {
    let mut isos: BTreeMap<String, Result<PathBuf, String>> = BTreeMap::new();
    chosen
        .iter()
        .map(|s| {
            let cmdline = s.kernel_cmdline();
            let machine = match s.boot {
                Boot::Pvh => Qemu::pvh(images, &cmdline),
                Boot::Linux => crate::bbsuite::linux_machine(ws, s.cmdline),
                Boot::IsoBios | Boot::IsoUefi => {
                    let iso = isos.entry(cmdline.clone()).or_insert_with(|| {
                        let path = if cmdline == crate::qemu::DEFAULT_CMDLINE {
                            iso::default_iso_path(ws)
                        } else {
                            ws.out_dir().join(format!("{}.iso", s.name))
                        };
                        iso::build_iso(ws, images, &cmdline, &path).map(|()| path)
                    });
                    let vars = ws.out_dir().join(format!("{}.OVMF_VARS.fd", s.name));
                    iso.clone().and_then(|iso| iso::machine(&iso, s.boot == Boot::IsoUefi, &vars))
                }
            };
            let machine = machine.map(|mut m| {
                if let Some(mem) = s.memory {
                    m.memory = mem.to_string();
                }
                m.extra.extend(s.qemu_args.iter().map(|a| a.to_string()));
                m
            });
            (*s, machine)
        })
        .collect()
}

/// Counts scenario outcomes into `tally` (a failure named with `suffix`
/// after its scenario's name, its reasons kept); the failed ones' names.
fn count_outcomes<'a>(tally: &mut Tally, outcomes: &'a [scenario::Outcome], suffix: &str) -> Vec<&'a str> {
    let mut failed = Vec::new();
    for o in outcomes {
        if o.failures.is_empty() {
            tally.passed += 1;
        } else {
            tally.fail_because(&format!("{}{suffix}", o.name), &o.failures);
            failed.push(o.name);
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_by_name() {
        assert_eq!(select(None, false).len(), SCENARIOS.len());
        assert_eq!(select(None, true).len(), SCENARIOS.len() + LONG_SCENARIOS.len());
        assert!(select(Some("bc-long"), false).is_empty());
        assert!(select(Some("iso-"), false).iter().all(|s| s.name.contains("iso-")));
        assert!(select(Some("no such scenario"), false).is_empty());
        assert!(needs(&select(Some("iso-uefi"), false)).contains(&Need::Ovmf));
        assert_eq!(needs(&select(Some("boot-banner"), false)), [Need::RustTarget, Need::Qemu]);
        assert!(needs(&select(Some("net-ping-host"), false)).contains(&Need::Ping));
        assert!(!needs(&select(Some("net-ping"), false)[..1]).contains(&Need::Ping));
    }
}
