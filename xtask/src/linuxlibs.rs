//! Linux programs built from C sources nobody here wrote, for the Linux
//! personality's conformance checks (issue 12): Lua 5.4 from the crate
//! `lua-src` (a dependency of this tool for its sources only: cargo fetches
//! and pins it, `Cargo.lock` records its checksum) with a driver of our own
//! (`apps/linux-tests/lua/driver.c`), built static with `musl-gcc` into the
//! boot archive as `lx-lua`.

use crate::json::Json;
use crate::meta::{Workspace, cargo};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags of the Lua build: C99 with POSIX functions (no dlopen, no readline).
const LUA_CFLAGS: &[&str] = &["-O2", "-static", "-std=gnu99", "-DLUA_USE_POSIX", "-w"];

/// The directory of a dependency package of this workspace, from `cargo
/// metadata` (cargo downloads it if it is not there yet).
fn package_dir(name: &str) -> Result<PathBuf, String> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--filter-platform", "x86_64-unknown-linux-gnu"])
        .output()
        .map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed:\n{}", String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    let j = Json::parse(&String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("cargo metadata: {e}"))?;
    j.get("packages")
        .items()
        .iter()
        .find(|p| p.get("name").as_str() == Some(name))
        .and_then(|p| Path::new(p.get("manifest_path").as_str()?).parent().map(Path::to_path_buf))
        .ok_or_else(|| format!("cargo metadata lists no package {name}"))
}

/// The Lua 5.4 sources inside `lua-src`.
fn lua_sources() -> Result<(PathBuf, Vec<PathBuf>), String> {
    let pkg = package_dir("lua-src")?;
    let dir = std::fs::read_dir(&pkg)
        .map_err(|e| format!("cannot read {}: {e}", pkg.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("lua-5.4")))
        .ok_or_else(|| format!("no lua-5.4 directory in {}", pkg.display()))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        // The stand-alone interpreter and compiler have their own main.
        .filter(|p| !matches!(p.file_stem().and_then(|s| s.to_str()), Some("lua" | "luac" | "onelua")))
        .collect();
    files.sort();
    Ok((dir, files))
}

/// `lx-lua` in `dir`, built unless it is newer than its driver; (name in
/// the archive, file).
pub(crate) fn lua(ws: &Workspace, dir: &Path) -> Result<(String, PathBuf), String> {
    let driver = ws.root.join("apps").join("linux-tests").join("lua").join("driver.c");
    let exe = dir.join("lua");
    let built = std::fs::metadata(&exe).and_then(|m| m.modified()).ok();
    let changed = std::fs::metadata(&driver).and_then(|m| m.modified()).ok();
    if built.is_none() || changed > built {
        let (include, sources) = lua_sources()?;
        eprintln!("xtask: building lx-lua (Lua 5.4 from lua-src, {} C files) with musl-gcc", sources.len());
        let status = Command::new("musl-gcc")
            .args(LUA_CFLAGS)
            .arg("-I")
            .arg(&include)
            .arg("-o")
            .arg(&exe)
            .arg(&driver)
            .args(&sources)
            .arg("-lm")
            .status()
            .map_err(|e| format!("could not run musl-gcc: {e}"))?;
        if !status.success() {
            let _ = std::fs::remove_file(&exe);
            return Err(format!("musl-gcc failed building lx-lua from {}", include.display()));
        }
    }
    Ok(("lx-lua".to_string(), exe))
}
