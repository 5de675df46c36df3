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
    }
}
