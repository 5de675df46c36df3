//! Building the boot images: one `cargo build` of the kernel and every user
//! program for the bare-metal target, then `<target>/oxok/kernel.elf` and
//! the boot archive `<target>/oxok/initrd.tar`.

use crate::deps::{self, Need};
use crate::json::Json;
use crate::meta::{KERNEL_PACKAGE, TARGET, Workspace, cargo};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The two files QEMU boots.
#[derive(Debug, Clone)]
pub(crate) struct Images {
    /// `<target>/oxok/kernel.elf`: the kernel (PVH note + Multiboot2 header).
    pub kernel: PathBuf,
    /// `<target>/oxok/initrd.tar`: ustar archive of every user program, each
    /// under its bin name (`init`, `hostile-priv`, …), its data starting on
    /// a 4096-byte boundary (pax padding headers in between).
    pub initrd: PathBuf,
    /// Names of the programs in the archive, sorted.
    pub programs: Vec<String>,
}

/// An executable cargo reported building.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Executable {
    /// Directory of the package that produced it.
    pub package_dir: PathBuf,
    /// The bin target's name.
    pub name: String,
    /// Where cargo put it.
    pub path: PathBuf,
}

/// Checks the Rust target is installed, then builds both images.
/// This is the build step shared by `run`, `test`, `iso` and `bench`.
pub(crate) fn build_images(ws: &Workspace) -> Result<Images, String> {
    deps::ensure(ws, &[Need::RustTarget])?;
    let exes = cargo_build(ws)?;
    let linux = crate::linuxprogs::prepare(ws)?;
    let mut images = write_images(ws, &exes, &linux)?;
    images.kernel = crate::model::kernel(ws, crate::model::chosen(), &images.kernel)?;
    Ok(images)
}

/// `cargo build --release --target x86_64-unknown-none -p oxok-kernel -p
/// <every app>`; returns the executables. Diagnostics go to the terminal.
fn cargo_build(ws: &Workspace) -> Result<Vec<Executable>, String> {
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics"]);
    cmd.args(["--package", KERNEL_PACKAGE]);
    for app in ws.apps() {
        cmd.args(["--package", &app.name]);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).stdin(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("could not run cargo build: {e}"))?;
    let mut exes = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("reading cargo's output: {e}"))?;
            if let Some(exe) = parse_artifact(&line) {
                exes.push(exe);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for cargo build: {e}"))?;
    if !status.success() {
        return Err("building the kernel and user programs failed (compiler output above)".into());
    }
    Ok(exes)
}

/// Reads one `--message-format=json` line: an executable bin artifact, if it is one.
pub(crate) fn parse_artifact(line: &str) -> Option<Executable> {
    if !line.starts_with('{') {
        return None;
    }
    let j = Json::parse(line).ok()?;
    if j.get("reason").as_str() != Some("compiler-artifact") {
        return None;
    }
    let target = j.get("target");
    if !target.get("kind").items().iter().any(|k| k.as_str() == Some("bin")) {
        return None;
    }
    Some(Executable {
        package_dir: Path::new(j.get("manifest_path").as_str()?).parent()?.to_path_buf(),
        name: target.get("name").as_str()?.to_string(),
        path: PathBuf::from(j.get("executable").as_str()?),
    })
}

/// Copies the kernel to `kernel.elf` and archives the programs, and the
/// Linux programs `linux` (name, file), into `initrd.tar`.
fn write_images(ws: &Workspace, exes: &[Executable], linux: &[(String, PathBuf)]) -> Result<Images, String> {
    let out = ws.out_dir();
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let kernel_dir = ws
        .packages
        .iter()
        .find(|p| p.name == KERNEL_PACKAGE)
        .map(|p| p.dir.clone())
        .ok_or(format!("the workspace has no package {KERNEL_PACKAGE}"))?;
    let kernel_exe = exes
        .iter()
        .find(|e| e.package_dir == kernel_dir)
        .ok_or(format!("cargo built no executable for {KERNEL_PACKAGE}"))?;
    let kernel = out.join("kernel.elf");
    copy_if_changed(&kernel_exe.path, &kernel)?;

    let app_dirs: Vec<&Path> = ws.apps().iter().map(|p| p.dir.as_path()).collect();
    let mut programs: Vec<&Executable> = exes.iter().filter(|e| app_dirs.contains(&e.package_dir.as_path())).collect();
    programs.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = programs.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(format!("two user programs are both called `{}`", w[0].name));
    }
    let mut tar = Vec::new();
    let files = programs.iter().map(|p| (&p.name, &p.path)).chain(linux.iter().map(|(n, p)| (n, p)));
    for (name, path) in files {
        let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let data = crate::strip::strip_debug(&data).unwrap_or(data);
        // Page-aligned data: a program's segments can be mapped from the
        // archive instead of copied.
        oxok_archive::append_aligned(&mut tar, name, &data, 4096)
            .map_err(|e| format!("cannot archive `{name}`: {e:?}"))?;
    }
    oxok_archive::finish(&mut tar);
    let initrd = out.join("initrd.tar");
    write_if_changed(&initrd, &tar)?;
    let mut names: Vec<String> =
        programs.iter().map(|p| p.name.clone()).chain(linux.iter().map(|(n, _)| n.clone())).collect();
    names.sort();
    Ok(Images { kernel, initrd, programs: names })
}

/// Copies `from` to `to` unless `to` already holds the same bytes (keeps
/// the timestamp stable for anything that depends on it).
pub(crate) fn copy_if_changed(from: &Path, to: &Path) -> Result<(), String> {
    let data = std::fs::read(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    write_if_changed(to, &data)
}

/// Writes `data` to `path` unless it already holds exactly that.
pub(crate) fn write_if_changed(path: &Path, data: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == data) {
        return Ok(());
    }
    // Write beside and rename, so a concurrent reader never sees half a file.
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, data)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bin_artifacts_only() {
        let bin = r#"{"reason":"compiler-artifact","manifest_path":"/w/apps/init/Cargo.toml","target":{"kind":["bin"],"name":"init"},"executable":"/t/release/init"}"#;
        assert_eq!(
            parse_artifact(bin),
            Some(Executable {
                package_dir: "/w/apps/init".into(),
                name: "init".into(),
                path: "/t/release/init".into()
            })
        );
        let lib = r#"{"reason":"compiler-artifact","manifest_path":"/w/abi/Cargo.toml","target":{"kind":["lib"],"name":"abi"},"executable":null}"#;
        assert_eq!(parse_artifact(lib), None);
        let script = r#"{"reason":"compiler-artifact","manifest_path":"/w/k/Cargo.toml","target":{"kind":["custom-build"],"name":"build-script-build"},"executable":null}"#;
        assert_eq!(parse_artifact(script), None);
        assert_eq!(parse_artifact(r#"{"reason":"build-finished","success":true}"#), None);
        assert_eq!(parse_artifact("Compiling foo"), None);
    }
}
