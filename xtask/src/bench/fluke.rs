//! `cargo xtask bench --fluke [--quick]`: Fluke's tables (OSDI'99 §5) for
//! Oxok's two execution models from one run. Builds both kernels
//! (`crate::model`), boots each under icount and wall with
//! `run=bench+fluke` (the workloads of `apps/bench/src/fluke.rs`), the
//! process model once more with the kernel word `restart_every`, both
//! models again at restart granularities 16 and 256 records
//! (`restart_records=`, only the workloads it changes: `bench fluke
//! restart`), and
//! writes `fluke.md` (and each boot's serial log) into `<target>/bench/fluke/`
//! (`--out DIR` elsewhere). The tables and what they show are copied into
//! `bench/README.md` by hand after a run.

use super::options::Mode;
use super::parse::Report;
use super::run as qemu;
use crate::meta::Workspace;
use crate::model::{self, Model};
use crate::qemu::{Boot, Qemu};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// One kernel configuration the tables compare.
struct Variant {
    name: &'static str,
    model: Model,
    words: &'static str,
    /// Records between restart points (`restart_records=`).
    records: u32,
    /// All workloads (else only `bench fluke restart`'s).
    full: bool,
}

const fn variant(name: &'static str, model: Model, words: &'static str, records: u32, full: bool) -> Variant {
    Variant { name, model, words, records, full }
}

/// The first two are the models at the default granularity (tables (b)
/// and (d) compare them); the others vary how the restart points behave.
const VARIANTS: [Variant; 7] = [
    variant("interrupt", Model::Interrupt, "", 64, true),
    variant("process", Model::Process, "", 64, true),
    variant("process, restart_every", Model::Process, " restart_every", 64, true),
    variant("interrupt, 16 records", Model::Interrupt, " restart_records=16", 16, false),
    variant("interrupt, 256 records", Model::Interrupt, " restart_records=256", 256, false),
    variant("process, 16 records", Model::Process, " restart_records=16", 16, false),
    variant("process, 256 records", Model::Process, " restart_records=256", 256, false),
];

const MODES: [Mode; 2] = [Mode::Icount, Mode::Wall];

/// Slots in the vector for these boots: the latency owner's slot comes
/// round every `SLOTS * 4` ticks.
const SLOTS: u32 = 4;

/// Runs the Fluke tables; `args` are `bench`'s (`--fluke`, `--quick`,
/// `--out DIR`, `--timeout S`).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let timeout = Duration::from_secs(value("--timeout").and_then(|v| v.parse().ok()).unwrap_or(600));
    let ws = Workspace::load()?;
    crate::deps::ensure(&ws, &[crate::deps::Need::Qemu])?;
    eprintln!("bench: building Oxok (both execution models) …");
    let images = crate::build::build_images(&ws)?;
    let interrupt = ws.out_dir().join("kernel.elf");
    let interrupt = if model::chosen() == Model::Interrupt { images.kernel.clone() } else { interrupt };
    let process = model::kernel(&ws, Model::Process, &interrupt)?;
    let out = value("--out").map(PathBuf::from).unwrap_or_else(|| ws.target_dir.join("bench").join("fluke"));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut results: Vec<(usize, Mode, Report)> = Vec::new();
    for (vi, v) in VARIANTS.iter().enumerate() {
        for &mode in &MODES {
            let kernel = if v.model == Model::Process { process.clone() } else { interrupt.clone() };
            let quick_arg = format!("{}{}", if quick { "+quick" } else { "" }, if v.full { "" } else { "+restart" });
            let cmdline = format!("run=bench+fluke{quick_arg} slots={SLOTS}{} log=info", v.words);
            let mut q = Qemu::new(Boot::Pvh { kernel, initrd: images.initrd.clone(), cmdline });
            q.extra.extend(mode.qemu_args());
            let log = out.join(format!("{}-{}.log", v.name.replace([',', ' '], ""), mode.name()));
            let boot = qemu::boot(q.command(), timeout, &log)?;
            eprintln!(
                "bench: fluke {} {}: {} figures{} in {:.1} s",
                v.name,
                mode.name(),
                boot.report.samples.len(),
                if boot.report.done { "" } else { " (did not finish)" },
                boot.elapsed.as_secs_f64()
            );
            results.push((vi, mode, boot.report));
        }
    }
    let md = tables(&results, quick);
    let path = out.join("fluke.md");
    std::fs::write(&path, &md).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("{md}");
    eprintln!("bench: wrote {}", path.display());
    Ok(())
}

fn get(results: &[(usize, Mode, Report)], v: usize, mode: Mode, w: &str) -> Option<f64> {
    results
        .iter()
        .find(|(i, m, _)| *i == v && *m == mode)
        .and_then(|(_, _, r)| r.samples.iter().find(|s| s.workload == w))
        .map(|s| s.value)
}

fn cell(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.0}"))
}

/// The four tables as markdown.
fn tables(results: &[(usize, Mode, Report)], quick: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Fluke's tables for Oxok's execution models{}\n", if quick { " (quick)" } else { "" });
    let _ = writeln!(s, "Cycles: icount = guest instructions (deterministic); wall = host TSC under TCG (noisy).\n");
    let _ = writeln!(
        s,
        "## (a) Restarting a long call: one `page_batch` of 4096 records (4096 / granularity restart points)\n"
    );
    let _ = writeln!(s, "| kernel | restart points | icount cycles | vs process | wall cycles | vs process |");
    let _ = writeln!(s, "| --- | ---: | ---: | ---: | ---: | ---: |");
    for (vi, v) in VARIANTS.iter().enumerate() {
        let mut row = format!("| {} | {} ", v.name, 4096 / v.records);
        for mode in MODES {
            let x = get(results, vi, mode, "long_batch_4096");
            let base = get(results, 1, mode, "long_batch_4096");
            let ratio = x.zip(base).map_or("—".into(), |(x, b)| format!("{:+.1}%", (x / b - 1.0) * 100.0));
            let _ = write!(row, "| {} | {} ", cell(x), ratio);
        }
        let _ = writeln!(s, "{row}|");
    }
    let _ = writeln!(
        s,
        "\n## (b) Memory-, IPC- and process-heavy workloads (cycles per operation, icount; wall in brackets)\n"
    );
    let _ = writeln!(s, "| workload | interrupt | process | process / interrupt |");
    let _ = writeln!(s, "| --- | ---: | ---: | ---: |");
    for w in
        ["demand_zero_fault", "page_batch_100", "exception_upcall", "rpc_roundtrip", "pipe_pingpong", "shm_pingpong"]
            .into_iter()
            .chain(["fork_exit_wait", "fork_4mb_exit_wait", "spawn_exec", "null_call"])
    {
        let i = get(results, 0, Mode::Icount, w);
        let p = get(results, 1, Mode::Icount, w);
        let (iw, pw) = (get(results, 0, Mode::Wall, w), get(results, 1, Mode::Wall, w));
        let ratio = i.zip(p).map_or("—".into(), |(i, p)| format!("{:.3}", p / i));
        let wr = iw.zip(pw).map_or("—".into(), |(i, p)| format!("{:.3}", p / i));
        let _ = writeln!(s, "| {w} | {} ({}) | {} ({}) | {ratio} ({wr}) |", cell(i), cell(iw), cell(p), cell(pw));
    }
    let _ = writeln!(s, "\n## (c) Preemption latency of a slot owner (cycles after its tick)\n");
    let _ = writeln!(s, "| kernel | records per step | other env | icount avg | icount max | wall avg | wall max |");
    let _ = writeln!(s, "| --- | ---: | --- | ---: | ---: | ---: | ---: |");
    for (vi, v) in VARIANTS.iter().enumerate() {
        for (load, what) in
            [("preempt_latency_user", "computes in user mode"), ("preempt_latency", "long page_batch calls")]
        {
            let f = |m, suffix: &str| cell(get(results, vi, m, &format!("{load}_{suffix}")));
            let _ = writeln!(
                s,
                "| {} | {} | {what} | {} | {} | {} | {} |",
                v.name,
                v.records,
                f(Mode::Icount, "avg"),
                f(Mode::Icount, "max"),
                f(Mode::Wall, "avg"),
                f(Mode::Wall, "max")
            );
        }
    }
    let _ = writeln!(s, "\n## (d) Kernel memory per environment (bytes; heap and frames, measured from user space)\n");
    let _ = writeln!(s, "| kernel | kernel_mem_per_env | of which frames |");
    let _ = writeln!(s, "| --- | ---: | ---: |");
    for (vi, v) in VARIANTS.iter().enumerate().take(2) {
        let m = get(results, vi, Mode::Icount, "kernel_mem_per_env");
        let f = get(results, vi, Mode::Icount, "kernel_frames_per_env");
        let _ = writeln!(s, "| {} | {} | {} |", v.name, cell(m), cell(f));
    }
    s
}
