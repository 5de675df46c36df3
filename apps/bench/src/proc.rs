//! `spawn_exec`: the libOS's exec (`exec::spawn`) of the tiny program
//! `true` from the boot archive, then `exec::wait` for it (which reaps it).
//! Linux's counterpart is `posix_spawn` of `/tiny` + `waitpid`.

use crate::measure;
use crate::params::Counts;
use oxok_libos::Error;
use oxok_libos::exec::{self, ExitStatus, SpawnError};

/// The tiny program (`apps/tests/src/bin/true.rs`: `main` returns 0).
const TINY: &str = "true";

pub fn run(c: &Counts) {
    measure("spawn_exec", c.spawn_exec, c.batches, spawn_exec);
}

/// A spawn failure as a kernel error (a program missing from the archive
/// as `NotFound`, anything else the loader refuses as `Invalid`).
pub fn kernel_error(e: SpawnError) -> Error {
    match e {
        SpawnError::Kernel(e) => e,
        SpawnError::NotFound => Error::NotFound,
        SpawnError::BadExecutable(_) | SpawnError::BadArguments => Error::Invalid,
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
