//! bench [quick] [fpu-off] | bench fluke [quick] [restart] | bench owner N NAME | bench loop WORKLOAD N:
//! the Oxok side of the benchmark protocol of
//! `bench/README.md`. Prints `bench: start`, one `bench: <workload> <value>
//! <unit>` line per result (or `bench: skip <workload> <reason>` when a
//! call fails), and `bench: done`.
//!
//! Timing follows the README: one warm-up batch, then `BATCHES` batches of
//! `OPS` operations; each batch gives its `lfence; rdtsc` cycles divided by
//! `OPS`, and the median of the batches is printed. Where an operation
//! needs untimed set-up, only the operation itself is timed and the times
//! are added up. The counts mirror `bench/linux/bench_params.h`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod appel;
mod cpu;
mod envs;
mod files;
mod fluke;
mod ipc;
mod params;
mod proc;
mod vm;

use core::hint::black_box;
use core::sync::atomic::{AtomicBool, Ordering};
use oxok_libos::{Args, Error, exposed, println, sys};
use params::Counts;

oxok_libos::main!(main);

/// Appended to every workload name: `_fpu_off` when the kernel was booted
/// with `fpu=off` (argument `fpu-off`), empty otherwise.
static SUFFIX: AtomicBool = AtomicBool::new(false);

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("owner") => {
            let starts = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
            return fluke::owner(starts, args.get(3).unwrap_or("preempt_latency"));
        }
        Some("loop") => {
            // One workload's operation N times, untimed: for counting
            // instructions (`cargo xtask icount --program bench`).
            let n = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
            let name = args.get(2).unwrap_or("");
            return match proc::repeat(name, n) {
                Some(Ok(_)) => 0,
                Some(Err(e)) => {
                    skip(name, e);
                    1
                }
                None => {
                    println!(
                        "bench: loop knows fork_exit_wait, fork_4mb_exit_wait, spawn_exec, page_map, demand_zero_fault, exception_upcall, exception_upcall_ud2, appel_unprot100, rpc_roundtrip, shm_pingpong"
                    );
                    2
                }
            };
        }
        Some("mem") => {
            // `kernel_mem_per_env` alone, for looking at one change.
            envs::kernel_mem_per_env(Counts::new(true).kernel_mem_envs);
            return 0;
        }
        Some("fluke") => {
            println!("bench: start");
            let quick = args.iter().any(|a| a == "quick");
            let c = Counts::new(quick);
            if args.iter().any(|a| a == "restart") {
                // Only the workloads the restart granularity changes.
                fluke::restart_workloads(&c, quick);
            } else {
                measure("null_call", c.null_call, c.batches, null_call);
                fluke::run(&c, quick);
            }
            println!("bench: done");
            return 0;
        }
        _ => {}
    }
    println!("bench: start");
    let quick = args.get(1) == Some("quick");
    let c = Counts::new(quick);
    if args.iter().any(|a| a == "fpu-off") {
        // The kernel switches no x87/SSE state (`fpu=off`): only what
        // switching could cost is measured again, under other names, to
        // set beside the same workloads of the normal boot.
        SUFFIX.store(true, Ordering::Relaxed);
        measure("null_call", c.null_call, c.batches, null_call);
        vm::run(&c);
        ipc::run(&c);
        println!("bench: done");
        return 0;
    }
    envs::kernel_mem_per_env(c.kernel_mem_envs);
    measure("null_call", c.null_call, c.batches, null_call);
    measure("libos_call", c.libos_call, c.batches, libos_call);
    proc::linux_getppid(&c);
    vm::run(&c);
    appel::run(&c);
    ipc::run(&c);
    proc::run(&c);
    files::run(&c);
    proc::linux_programs(quick);
    println!("bench: done");
    0
}

/// Most batches a workload runs.
pub const MAX_BATCHES: usize = 64;

/// Runs one warm-up batch and `batches` batches of `ops` operations of
/// `batch` (which returns the cycles its operations took) and reports the
/// median cycles per operation; a failing batch reports a skip instead.
pub fn measure(name: &str, ops: u32, batches: u32, mut batch: impl FnMut(u32) -> Result<u64, Error>) {
    match median_of(ops, batches, &mut batch) {
        Ok(m) => report(name, m, "cycles"),
        Err(e) => skip(name, e),
    }
}

/// The median per-operation cycles over `batches` batches after a warm-up.
pub fn median_of(ops: u32, batches: u32, batch: &mut dyn FnMut(u32) -> Result<u64, Error>) -> Result<f64, Error> {
    let n = (batches as usize).clamp(1, MAX_BATCHES);
    let ops = ops.max(1);
    batch(ops)?;
    let mut per_op = [0f64; MAX_BATCHES];
    for slot in per_op.iter_mut().take(n) {
        *slot = batch(ops)? as f64 / f64::from(ops);
    }
    Ok(median(&mut per_op[..n]))
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One result line.
pub fn report(name: &str, value: f64, unit: &str) {
    println!("bench: {name}{} {value:.0} {unit}", suffix());
}

fn suffix() -> &'static str {
    if SUFFIX.load(Ordering::Relaxed) { "_fpu_off" } else { "" }
}

/// A workload that could not run: which call failed and how.
pub fn skip(name: &str, e: Error) {
    println!("bench: skip {name}{} error {} ({})", suffix(), e.code(), e.text());
}

/// The kernel's null call.
fn null_call(ops: u32) -> Result<u64, Error> {
    let t0 = cpu::now();
    for _ in 0..ops {
        sys::null()?;
    }
    Ok(cpu::now() - t0)
}

/// A libOS procedure call: the environment id, cached in the libOS after
/// the first system call (called through a pointer, so not inlined away).
fn libos_call(ops: u32) -> Result<u64, Error> {
    let getpid: fn() -> u64 = black_box(exposed::self_id);
    if getpid() == 0 {
        return Err(Error::BadEnv);
    }
    let t0 = cpu::now();
    for _ in 0..ops {
        black_box(getpid());
    }
    Ok(cpu::now() - t0)
}
