//! Linux programs built from C sources nobody here wrote, for the Linux
//! personality's conformance checks (issue 12): Lua 5.4 from the crate
//! `lua-src` and SQLite from the crate `libsqlite3-sys`, each with a driver
//! of our own (`apps/linux-tests/{lua,sqlite}/driver.c`), built static with
//! `musl-gcc` into the boot archive as `lx-lua` and `lx-sqlite`.
//!
//! The crates are dependencies of `xtask/csources`, a package that is never
//! built: `cargo metadata` on it downloads them (checksums in its
//! `Cargo.lock`) and says where they are.

use crate::json::Json;
use crate::meta::{Workspace, cargo};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One program: its name in the archive, its driver, the crate and the
/// directory in it holding the C sources, which files to leave out, flags.
struct Program {
    name: &'static str,
    driver: &'static str,
    package: &'static str,
    /// The first directory of the package whose name starts with this.
    source_dir: &'static str,
    /// C files of that directory not to compile (other programs' `main`).
    leave_out: &'static [&'static str],
    cflags: &'static [&'static str],
}

const PROGRAMS: [Program; 2] = [
    Program {
        name: "lx-lua",
        driver: "lua/driver.c",
        package: "lua-src",
        source_dir: "lua-5.4",
        leave_out: &["lua.c", "luac.c", "onelua.c"],
        // C99 with POSIX functions (no dlopen, no readline).
        cflags: &["-O2", "-static", "-std=gnu99", "-DLUA_USE_POSIX", "-w"],
    },
    Program {
        name: "lx-sqlite",
        driver: "sqlite/driver.c",
        package: "libsqlite3-sys",
        source_dir: "sqlite3",
        leave_out: &["wasm32-wasi-vfs.c"],
        // One thread, no extension loading (no dlopen), no memory statistics.
        cflags: &[
            "-O2",
            "-static",
            "-w",
            "-DSQLITE_THREADSAFE=0",
            "-DSQLITE_OMIT_LOAD_EXTENSION",
            "-DSQLITE_DEFAULT_MEMSTATUS=0",
        ],
    },
];

/// Every program, built into `dir` unless newer than its driver: (name in
/// the archive, file) each.
pub(crate) fn build_all(ws: &Workspace, dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let tests = ws.root.join("apps").join("linux-tests");
    let mut packages = None;
    let mut out = Vec::new();
    for p in &PROGRAMS {
        let driver = tests.join(p.driver);
        let exe = dir.join(p.name);
        let built = std::fs::metadata(&exe).and_then(|m| m.modified()).ok();
        let modified = |f: &Path| std::fs::metadata(f).and_then(|m| m.modified()).ok();
        let changed = modified(&driver).max(modified(&tests.join("timing.h")));
        if built.is_none() || changed > built {
            if packages.is_none() {
                packages = Some(package_dirs(ws)?);
            }
            let pkg = packages.as_ref().and_then(|all: &Vec<(String, PathBuf)>| {
                all.iter().find(|(n, _)| n == p.package).map(|(_, d)| d.clone())
            });
            let pkg = pkg.ok_or_else(|| format!("xtask/csources lists no package {}", p.package))?;
            build(p, &driver, &pkg, &exe)?;
        }
        out.push((p.name.to_string(), exe));
    }
    Ok(out)
}

/// (name, directory) of every package `xtask/csources` depends on; cargo
/// downloads them if they are not there yet.
fn package_dirs(ws: &Workspace) -> Result<Vec<(String, PathBuf)>, String> {
    let manifest = ws.root.join("xtask").join("csources").join("Cargo.toml");
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed:\n{}", String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    let j = Json::parse(&String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("cargo metadata: {e}"))?;
    Ok(j.get("packages")
        .items()
        .iter()
        .filter_map(|p| {
            let dir = Path::new(p.get("manifest_path").as_str()?).parent()?.to_path_buf();
            Some((p.get("name").as_str()?.to_string(), dir))
        })
        .collect())
}

/// Compiles `driver` with the C files of `p`'s source directory in `pkg`.
fn build(p: &Program, driver: &Path, pkg: &Path, exe: &Path) -> Result<(), String> {
    let dir = std::fs::read_dir(pkg)
        .map_err(|e| format!("cannot read {}: {e}", pkg.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|d| d.is_dir() && d.file_name().is_some_and(|n| n.to_string_lossy().starts_with(p.source_dir)))
        .ok_or_else(|| format!("no {}* directory in {}", p.source_dir, pkg.display()))?;
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|x| x == "c"))
        .filter(|f| !f.file_name().is_some_and(|n| p.leave_out.iter().any(|l| n.to_string_lossy() == *l)))
        .collect();
    sources.sort();
    eprintln!("xtask: building {} ({} C files of {}) with musl-gcc", p.name, sources.len(), dir.display());
    let status = Command::new("musl-gcc")
        .args(p.cflags)
        .arg("-I")
        .arg(&dir)
        .arg("-o")
        .arg(exe)
        .arg(driver)
        .args(&sources)
        .arg("-lm")
        .status()
        .map_err(|e| format!("could not run musl-gcc: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        let _ = std::fs::remove_file(exe);
        Err(format!("musl-gcc failed building {} (messages above)", p.name))
    }
}
