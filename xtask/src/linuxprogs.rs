//! Linux programs for the boot archive, run on Oxok by the Linux
//! personality (`apps/linux`): the test programs `apps/linux-tests/*.c`,
//! each built static with `musl-gcc` as `lx-<name>`, Lua and SQLite as
//! `lx-lua` and `lx-sqlite` (`linuxlibs.rs`), and Debian's
//! `busybox-static` as `busybox` (fetched like the benchmark guest's, into
//! `<target>/bench/linux/`). `musl-tools` is installed with apt when
//! missing.

use crate::bench::host::Apt;
use crate::deps;
use crate::meta::Workspace;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags of every test-program build.
const CFLAGS: &[&str] = &["-O2", "-static", "-Wall", "-Wextra"];

/// (name in the archive, file) of every Linux program to pack.
pub(crate) fn prepare(ws: &Workspace) -> Result<Vec<(String, PathBuf)>, String> {
    let cache = crate::bench::linux::cache_dir(ws);
    std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let mut apt = Apt::new(cache.join("apt.log"));
    let mut out = Vec::new();
    let src = ws.root.join("apps").join("linux-tests");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src)
        .map_err(|e| format!("cannot read {}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    if !sources.is_empty() && !deps::have_program("musl-gcc") {
        apt.ensure_program("musl-gcc", "musl-tools", "to build the Linux test programs")?;
    }
    let dir = ws.out_dir().join("linux-tests");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let header = src.join("check.h");
    for c in &sources {
        let stem = c.file_stem().unwrap_or_default().to_string_lossy().to_string();
        let exe = dir.join(&stem);
        if stale(&exe, &[c.as_path(), header.as_path()]) {
            compile(c, &exe, stem.ends_with("-pie"))?;
        }
        out.push((format!("lx-{stem}"), exe));
    }
    out.extend(crate::linuxlibs::build_all(ws, &dir)?);
    let (busybox, _version) = crate::bench::linux::busybox(&cache, &mut apt)?;
    out.push(("busybox".to_string(), busybox));
    // Debian's busybox test suite (`bbsuite.rs`); without it only the
    // scenario `linux-bbsuite` fails.
    match crate::bbsuite::oxok_tar(ws) {
        Ok(tar) => out.push(("bbsuite.tar".to_string(), tar)),
        Err(e) => eprintln!("bbsuite: {e}; the boot archive holds no bbsuite.tar"),
    }
    Ok(out)
}

/// True if `exe` is missing or older than any of `inputs` that exist.
fn stale(exe: &Path, inputs: &[&Path]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = modified(exe) else { return true };
    inputs.iter().filter_map(|p| modified(p)).any(|m| m > built)
}

/// Builds `source` into `out`: static with `musl-gcc`, or — for the
/// `*-pie.c` programs — a glibc static-pie with `gcc -static-pie` (musl's
/// `musl-gcc` wrapper cannot link one).
fn compile(source: &Path, out: &Path, pie: bool) -> Result<(), String> {
    let (cc, flags): (&str, &[&str]) =
        if pie { ("gcc", &["-O2", "-static-pie", "-Wall", "-Wextra"]) } else { ("musl-gcc", CFLAGS) };
    let status = Command::new(cc)
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(source)
        .status()
        .map_err(|e| format!("could not run {cc}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        let _ = std::fs::remove_file(out);
        Err(format!("{cc} failed building {} (messages above)", source.display()))
    }
}

#[cfg(test)]
/// The Linux personality's system-call table (`apps/linux/src/table.rs`)
/// as the Markdown page `docs/linux-calls.md`: one row per call, then how
/// many calls each level has.
pub(crate) fn calls_doc(table_rs: &str) -> String {
    let mut rows = Vec::new();
    let mut counts = [0usize; 3];
    for line in table_rs.lines() {
        let Some((head, rest)) = line.trim().split_once(" \"") else { continue };
        let Some((note, _handler)) = rest.rsplit_once("\" => ") else { continue };
        let words: Vec<&str> = head.split_whitespace().collect();
        let [nr, name, level] = words[..] else { continue };
        let (Ok(nr), Some(i)) = (nr.parse::<u32>(), ["Full", "Partial", "Enosys"].iter().position(|l| *l == level))
        else {
            continue;
        };
        counts[i] += 1;
        let level = ["full", "partial", "ENOSYS"][i];
        rows.push(format!("| {nr} | `{name}` | {level} | {note} |"));
    }
    let mut doc = String::from(
        "# Linux system calls of the Oxok personality\n\n\
         Generated from `apps/linux/src/table.rs` (the one table; `linux --calls` prints it on Oxok).\n\
         Numbers the table does not list return `-ENOSYS` and are logged once each.\n\n",
    );
    doc.push_str(&format!(
        "{} calls: {} full, {} partial, {} ENOSYS.\n\n| nr | call | level | note |\n| ---: | --- | --- | --- |\n",
        rows.len(),
        counts[0],
        counts[1],
        counts[2]
    ));
    for r in rows {
        doc.push_str(&r);
        doc.push('\n');
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::calls_doc;

    /// `docs/linux-calls.md` matches the table; `OXOK_BLESS=1 cargo test -p
    /// xtask` rewrites it.
    #[test]
    fn linux_calls_doc_is_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let table = std::fs::read_to_string(root.join("apps/linux/src/table.rs")).expect("the table exists");
        let doc = calls_doc(&table);
        let path = root.join("docs/linux-calls.md");
        if std::env::var_os("OXOK_BLESS").is_some() {
            std::fs::create_dir_all(root.join("docs")).expect("docs/ can be made");
            std::fs::write(&path, &doc).expect("docs/linux-calls.md can be written");
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(current == doc, "docs/linux-calls.md is out of date: run OXOK_BLESS=1 cargo test -p xtask");
    }

    #[test]
    fn reads_table_rows() {
        let doc =
            calls_doc("    0 read Full \"\" => file::read;\n    9 mmap Partial \"anonymous\" => memory::mmap;\nx\n");
        assert!(doc.contains("2 calls: 1 full, 1 partial, 0 ENOSYS."));
        assert!(doc.contains("| 9 | `mmap` | partial | anonymous |"));
    }
}
