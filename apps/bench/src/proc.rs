//! Process workloads, as `bench/linux/proc.c`:
//! * `spawn_exec`: the libOS's exec (`exec::spawn`) of the tiny program
//!   `true` from the boot archive, then `exec::wait` for it (which reaps
//!   it). Linux's counterpart is `posix_spawn` of `/tiny` + `waitpid`.
//! * `fork_exit_wait`: `vm::fork`, the child exits at once, `exec::wait`.
//! * `fork_4mb_exit_wait`: the same after the parent wrote every page of a
//!   private 4 MiB region (`vm::map_anon`), which fork shares
//!   copy-on-write.

use crate::measure;
use crate::params::Counts;
use crate::params::FORK_4MB_BYTES;
use oxok_libos::Error;
use oxok_libos::exec::{self, ExitStatus, SpawnError};
use oxok_libos::vm::{self, Fork, Prot};

/// The tiny program (`apps/tests/src/bin/true.rs`: `main` returns 0).
const TINY: &str = "true";

pub fn run(c: &Counts) {
    measure("spawn_exec", c.spawn_exec, c.batches, spawn_exec);
    measure("fork_exit_wait", c.fork_exit_wait, c.batches, fork_loop);
    match touched_region() {
        Ok(region) => {
            measure("fork_4mb_exit_wait", c.fork_4mb_exit_wait, c.batches, fork_loop);
            let _ = vm::unmap(region, FORK_4MB_BYTES);
        }
        Err(e) => crate::skip("fork_4mb_exit_wait", e),
    }
}

/// Runs workload `name`'s operation `n` times (`bench loop`), if it is
/// one of this module's.
pub fn repeat(name: &str, n: u32) -> Option<Result<u64, Error>> {
    match name {
        "fork_exit_wait" => Some(fork_loop(n)),
        "fork_4mb_exit_wait" => Some(touched_region().and_then(|region| {
            let r = fork_loop(n);
            let _ = vm::unmap(region, FORK_4MB_BYTES);
            r
        })),
        "spawn_exec" => Some(spawn_exec(n)),
        "page_map" => Some(crate::vm::repeat_page_map(n)),
        "demand_zero_fault" => Some(crate::vm::repeat_demand_zero(n)),
        "exception_upcall" => Some(crate::vm::repeat_exception(n)),
        "exception_upcall_ud2" => Some(crate::vm::repeat_ud2(n)),
        "appel_unprot100" => Some(crate::appel::repeat_unprot100(n)),
        _ => crate::ipc::repeat(name, n),
    }
}

/// A private 4 MiB region with every page written.
fn touched_region() -> Result<u64, Error> {
    let region = vm::map_anon(FORK_4MB_BYTES, Prot::READ_WRITE).map_err(vm_error)?;
    let mut va = region;
    while va < region + FORK_4MB_BYTES {
        crate::cpu::touch(va, 1);
        va += 4096;
    }
    Ok(region)
}

fn vm_error(e: vm::VmError) -> Error {
    match e {
        vm::VmError::Kernel(e) => e,
        _ => Error::Invalid,
    }
}

fn fork_loop(ops: u32) -> Result<u64, Error> {
    let t0 = crate::cpu::now();
    for _ in 0..ops {
        match vm::fork().map_err(vm_error)? {
            Fork::Child => oxok_libos::process::exit(0),
            Fork::Parent(child) => {
                if exec::wait(child)? != ExitStatus::Exited(0) {
                    return Err(Error::Invalid);
                }
            }
        }
    }
    Ok(crate::cpu::now() - t0)
}

/// A spawn failure as a kernel error (a program missing from the archive
/// as `NotFound`, anything else the loader refuses as `Invalid`).
pub fn kernel_error(e: SpawnError) -> Error {
    match e {
        SpawnError::Kernel(e) => e,
        SpawnError::NotFound => Error::NotFound,
        SpawnError::BadExecutable(_) | SpawnError::BadArguments | SpawnError::Descriptor(_) => Error::Invalid,
    }
}

fn spawn_exec(ops: u32) -> Result<u64, Error> {
    let t0 = crate::cpu::now();
    for _ in 0..ops {
        let child = exec::spawn(TINY, &[TINY]).map_err(kernel_error)?;
        if exec::wait(child)? != ExitStatus::Exited(0) {
            return Err(Error::Invalid);
        }
    }
    Ok(crate::cpu::now() - t0)
}

/// `linux_getppid`: a static Linux program (`lx-bench-getppid`, built by
/// xtask with musl) run under the Linux personality times the raw getppid
/// system call itself, as Linux's side does, and prints the result line;
/// this only starts it with the same counts and waits.
/// `lua_sort` and `sqlite_insert`: Lua and SQLite, unmodified C built for
/// Linux, through the personality; each driver prints its own `bench:`
/// line (the Linux side runs the same files, `bench/linux/bench.c`).
/// `busybox_sh`: `lx-bench-sh` times Debian's `busybox sh` running the
/// issue's shell workload (a loop, a pipeline, 100 files).
pub fn linux_programs(quick: bool) {
    let programs =
        [("lx-lua", &["lua_sort"][..]), ("lx-sqlite", &["sqlite_insert"][..]), ("lx-bench-sh", &["busybox_sh"][..])];
    for (program, workloads) in programs {
        // The shell workload's files live in a file server started for it
        // (as cat_10mb's) and stopped after it.
        let server = if program == "lx-bench-sh" {
            match oxok_libos::fs::spawn_server() {
                Ok(s) => Some(s),
                Err(_) => {
                    crate::skip(workloads[0], Error::Invalid);
                    continue;
                }
            }
        } else {
            None
        };
        let mut argv = alloc::vec!["linux", program, "--bench"];
        if quick {
            argv.push("quick");
        }
        let ran = exec::spawn("linux", &argv).map_err(kernel_error).and_then(|child| match exec::wait(child)? {
            ExitStatus::Exited(0) => Ok(()),
            _ => Err(Error::Invalid),
        });
        if let Err(e) = ran {
            for w in workloads {
                crate::skip(w, e);
            }
        }
        if let Some(s) = server {
            let _ = oxok_libos::fs::stop_server(s);
        }
    }
}

pub fn linux_getppid(c: &Counts) {
    let (ops, batches) = (alloc::format!("{}", c.null_call), alloc::format!("{}", c.batches));
    let argv = ["linux", "lx-bench-getppid", ops.as_str(), batches.as_str()];
    let ran = exec::spawn("linux", &argv).map_err(kernel_error).and_then(|child| match exec::wait(child)? {
        ExitStatus::Exited(0) => Ok(()),
        _ => Err(Error::Invalid),
    });
    if let Err(e) = ran {
        crate::skip("linux_getppid", e);
    }
}
