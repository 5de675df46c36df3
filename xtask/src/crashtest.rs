//! `cargo xtask crashtest [--depth N] [--jobs J]`, `cargo xtask mkfs IMG
//! [BLOCKS]`, `cargo xtask fsck IMG`: run the C-FFS host tool
//! (`crates/cffs/src/bin/cffs.rs`, built in release) — the full crash
//! harness over every workload of up to N operations, or mkfs/fsck of a
//! disk image.

use crate::Failure;
use crate::meta::cargo;

/// Runs `cffs <words>`; image paths are taken relative to the current
/// directory.
pub(crate) fn run(words: &[String]) -> Result<(), Failure> {
    if words.first().map(String::as_str) == Some("crashtest") && words.iter().any(|w| w == "--qemu") {
        return crate::crashlog::run(words);
    }
    let here = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let mut args: Vec<String> = words.to_vec();
    if matches!(args.first().map(String::as_str), Some("mkfs" | "fsck"))
        && let Some(img) = args.get_mut(1)
    {
        *img = here.join(&*img).display().to_string();
    }
    let status = cargo()
        .args(["run", "--release", "--quiet", "--package", "oxok-cffs", "--bin", "cffs", "--"])
        .args(&args)
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(Failure::Failed(String::new())) }
}

/// Whether `cmd` is one of the commands this module runs.
pub(crate) fn is_ours(cmd: &str) -> bool {
    matches!(cmd, "crashtest" | "mkfs" | "fsck")
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_its_commands() {
        assert!(super::is_ours("crashtest") && super::is_ours("mkfs") && super::is_ours("fsck"));
        assert!(!super::is_ours("test"));
    }
}
