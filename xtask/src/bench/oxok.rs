//! The Oxok guest: the images `cargo xtask build` makes, booted with
//! `run=bench` (quick: `run=bench+quick`, i.e. argv `[bench, quick]`).

use crate::build::{Images, build_images};
use crate::meta::Workspace;

/// The program the boot archive must hold.
pub(crate) const PROGRAM: &str = "bench";

/// How the note on a failed Oxok build begins.
pub(crate) const BUILD_FAILED: &str = "Oxok did not build";

/// The kernel command line that runs the benchmark program.
pub(crate) fn cmdline(quick: bool) -> String {
    if quick { format!("run={PROGRAM}+quick") } else { format!("run={PROGRAM}") }
}

/// The kernel command line of the second Oxok boot of each round: the
/// kernel switches no x87/SSE state (`fpu=off`, measurement only) and the
/// program measures the workloads switching could slow (null call,
/// exception upcalls, PCT round trip) as `<workload>_fpu_off`, which the
/// report shows beside the same workloads of the normal boot.
pub(crate) fn cmdline_fpu_off(quick: bool) -> String {
    let program = if quick { format!("{PROGRAM}+quick") } else { PROGRAM.to_string() };
    format!("run={program}+fpu-off fpu=off")
}

/// True if `cmdline` is that of the `fpu=off` boot.
pub(crate) fn is_fpu_off(cmdline: &str) -> bool {
    cmdline.contains("fpu=off")
}

/// Builds the images. `Ok(Err(note))` when they hold no benchmark program
/// yet, so every Oxok figure is missing (not an error).
pub(crate) fn prepare(ws: &Workspace) -> Result<Result<Images, String>, String> {
    eprintln!("bench: building Oxok …");
    let images = build_images(ws)?;
    if images.programs.iter().any(|p| p == PROGRAM) {
        Ok(Ok(images))
    } else {
        Ok(Err(format!(
            "Oxok's boot archive has no `{PROGRAM}` program yet (it holds {}), so every Oxok figure is missing.",
            images.programs.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_lines() {
        assert_eq!(super::cmdline(false), "run=bench");
        assert_eq!(super::cmdline(true), "run=bench+quick");
        assert_eq!(super::cmdline_fpu_off(true), "run=bench+quick+fpu-off fpu=off");
        assert_eq!(super::cmdline_fpu_off(false), "run=bench+fpu-off fpu=off");
        assert!(super::is_fpu_off(&super::cmdline_fpu_off(true)) && !super::is_fpu_off(&super::cmdline(true)));
    }
}
