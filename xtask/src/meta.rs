//! The workspace as `cargo metadata` describes it: where the target directory
//! is (honouring `CARGO_TARGET_DIR` and cargo configuration) and which
//! packages are the kernel, the user programs and the host-testable crates.

use crate::json::Json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Name of the kernel package.
pub(crate) const KERNEL_PACKAGE: &str = "oxok-kernel";
/// The bare-metal target everything that runs inside Oxok is built for.
pub(crate) const TARGET: &str = "x86_64-unknown-none";

/// One workspace package.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    /// Cargo package name, e.g. `oxok-init`.
    pub name: String,
    /// Directory holding the package's `Cargo.toml`.
    pub dir: PathBuf,
}

/// The Cargo workspace this tool belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    /// Directory of the workspace's root `Cargo.toml`.
    pub root: PathBuf,
    /// Cargo's target directory (`target_directory` from `cargo metadata`).
    pub target_dir: PathBuf,
    /// Every workspace member.
    pub packages: Vec<Package>,
}

/// The cargo executable: the one that started us if known, else `cargo`.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

/// The workspace root, known at compile time (xtask lives one level below it).
pub(crate) fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

impl Workspace {
    /// Runs `cargo metadata --format-version 1 --no-deps` and reads it.
    pub(crate) fn load() -> Result<Workspace, String> {
        let out = cargo()
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .map_err(|e| format!("could not run cargo ({e}); is Rust installed (https://rustup.rs)?"))?;
        if !out.status.success() {
            return Err(format!(
                "`cargo metadata` failed; the workspace manifests need fixing:\n{}",
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Self::from_json(&Json::parse(&text).map_err(|e| format!("cargo metadata: bad JSON: {e}"))?)
    }

    /// Reads the parts of `cargo metadata` output this tool needs.
    pub(crate) fn from_json(j: &Json) -> Result<Workspace, String> {
        let path =
            |key: &str| j.get(key).as_str().map(PathBuf::from).ok_or_else(|| format!("cargo metadata: no {key}"));
        let packages = j
            .get("packages")
            .items()
            .iter()
            .filter_map(|p| {
                let manifest = Path::new(p.get("manifest_path").as_str()?);
                Some(Package { name: p.get("name").as_str()?.to_string(), dir: manifest.parent()?.to_path_buf() })
            })
            .collect();
        Ok(Workspace { root: path("workspace_root")?, target_dir: path("target_directory")?, packages })
    }

    /// `<target>/oxok`: where images, ISOs and logs go.
    pub(crate) fn out_dir(&self) -> PathBuf {
        self.target_dir.join("oxok")
    }

    /// `<target>/oxok/logs`.
    pub(crate) fn log_dir(&self) -> PathBuf {
        self.out_dir().join("logs")
    }

    /// Packages whose directory is under `<root>/<top>/`.
    fn under(&self, top: &str) -> impl Iterator<Item = &Package> {
        let base = self.root.join(top);
        self.packages.iter().filter(move |p| p.dir.starts_with(&base))
    }

    /// The user programs: every package under `apps/`.
    pub(crate) fn apps(&self) -> Vec<&Package> {
        self.under("apps").collect()
    }

    /// Packages whose tests run on the host: `abi`, everything under
    /// `crates/`, and `xtask`.
    pub(crate) fn host_packages(&self) -> Vec<&Package> {
        let abi = self.root.join("abi");
        let xtask = self.root.join("xtask");
        let mut v: Vec<&Package> =
            self.packages.iter().filter(|p| p.dir == abi || p.dir == xtask).chain(self.under("crates")).collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v.dedup_by(|a, b| a.name == b.name);
        v
    }

    /// The kernel's packages: every package under `kernel/` (the kernel
    /// and its hardware crate).
    pub(crate) fn kernel_packages(&self) -> Vec<&Package> {
        self.under("kernel").collect()
    }

    /// Packages built for the bare-metal target: the kernel's packages,
    /// those under `libos/` and the apps.
    pub(crate) fn target_packages(&self) -> Vec<&Package> {
        let mut v = self.kernel_packages();
        v.extend(self.under("libos"));
        v.extend(self.apps());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Workspace {
        let text = r#"{"packages": [
            {"name": "oxok-abi", "manifest_path": "/w/abi/Cargo.toml"},
            {"name": "oxok-kernel", "manifest_path": "/w/kernel/Cargo.toml"},
            {"name": "oxok-hw", "manifest_path": "/w/kernel/hw/Cargo.toml"},
            {"name": "oxok-libos", "manifest_path": "/w/libos/Cargo.toml"},
            {"name": "oxok-init", "manifest_path": "/w/apps/init/Cargo.toml"},
            {"name": "oxok-cap", "manifest_path": "/w/crates/cap/Cargo.toml"},
            {"name": "xtask", "manifest_path": "/w/xtask/Cargo.toml"}],
            "workspace_root": "/w", "target_directory": "/t"}"#;
        Workspace::from_json(&Json::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn classifies_packages() {
        let ws = sample();
        let names = |v: Vec<&Package>| v.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(ws.apps()), ["oxok-init"]);
        assert_eq!(names(ws.host_packages()), ["oxok-abi", "oxok-cap", "xtask"]);
        assert_eq!(names(ws.kernel_packages()), ["oxok-kernel", "oxok-hw"]);
        assert_eq!(names(ws.target_packages()), ["oxok-kernel", "oxok-hw", "oxok-libos", "oxok-init"]);
        assert_eq!(ws.out_dir(), Path::new("/t/oxok"));
    }
}
