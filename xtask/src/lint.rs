//! `cargo xtask lint`: formatting, clippy with `-D warnings` for the host
//! crates and (for `x86_64-unknown-none`) the kernel, libOS and programs,
//! and the source checks of `confine` (no `unsafe` in the libOS policy
//! crate, no call written by hand outside the generated stubs).

use crate::Failure;
use crate::deps::{self, Need};
use crate::meta::{Package, TARGET, Workspace, cargo};

/// Runs every check, reporting each; fails if any failed.
pub(crate) fn run() -> Result<(), Failure> {
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::RustTarget])?;
    let with_packages = |args: &[&str], pkgs: Vec<&Package>| {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        for p in pkgs {
            v.push("--package".into());
            v.push(p.name.clone());
        }
        v.extend(["--".into(), "-D".into(), "warnings".into()]);
        v
    };
    let checks: Vec<(&str, Vec<String>)> = vec![
        ("rustfmt", vec!["fmt".into(), "--all".into(), "--check".into()]),
        ("clippy (host crates, tests too)", with_packages(&["clippy", "--all-targets"], ws.host_packages())),
        ("clippy (bare-metal crates)", with_packages(&["clippy", "--target", TARGET], ws.target_packages())),
        (
            "clippy (the kernel in the process model)",
            with_packages(&["clippy", "--target", TARGET, "--features", "model-process"], ws.kernel_packages()),
        ),
    ];
    let mut failed = Vec::new();
    let findings = crate::confine::check(&ws.root)?;
    for (file, line, what) in &findings {
        eprintln!("xtask: lint: {}:{line}: {what}", file.display());
    }
    eprintln!(
        "xtask: lint: confinement (no `unsafe` in libos/src, no hand-written calls): {} finding(s)",
        findings.len()
    );
    if !findings.is_empty() {
        failed.push("confinement");
    }
    for (name, args) in checks {
        eprintln!("xtask: lint: {name}: cargo {}", args.join(" "));
        let ok = cargo().args(&args).status().map_err(|e| format!("could not run cargo: {e}"))?.success();
        if !ok {
            failed.push(name);
        }
    }
    if failed.is_empty() {
        eprintln!("xtask: lint: all clean");
        Ok(())
    } else {
        Err(Failure::Failed(format!("lint failed: {}", failed.join(", "))))
    }
}
