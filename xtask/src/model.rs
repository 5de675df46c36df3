//! The kernel's execution model, a build option (`--model process|interrupt`
//! on `build`, `run`, `iso`, `test` and `bench`): the interrupt model (one
//! kernel stack per CPU, the default) or the process model (a kernel stack
//! per environment, long calls preempted at their restart points and
//! resumed in the kernel: the kernel feature `model-process`).

use crate::build::{copy_if_changed, parse_artifact};
use crate::meta::{KERNEL_PACKAGE, TARGET, Workspace, cargo};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::OnceLock;

/// One of the two execution models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    Interrupt,
    Process,
}

impl Model {
    /// Its name on the command line and in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Model::Interrupt => "interrupt",
            Model::Process => "process",
        }
    }

    fn parse(s: &str) -> Result<Model, String> {
        match s {
            "interrupt" => Ok(Model::Interrupt),
            "process" => Ok(Model::Process),
            other => Err(format!("--model takes `process` or `interrupt`, not `{other}`")),
        }
    }
}

static CHOSEN: OnceLock<Model> = OnceLock::new();

/// The model this run builds (`--model`, default interrupt).
pub(crate) fn chosen() -> Model {
    CHOSEN.get().copied().unwrap_or(Model::Interrupt)
}

/// Removes `--model X` / `--model=X` from the arguments (before `--`) and
/// remembers the model; the rest is parsed as before.
pub(crate) fn take_option(args: Vec<String>) -> Result<Vec<String>, String> {
    let (found, rest) = split_option(args)?;
    if let Some(m) = found {
        let _ = CHOSEN.set(m);
    }
    Ok(rest)
}

fn split_option(args: Vec<String>) -> Result<(Option<Model>, Vec<String>), String> {
    let mut out = Vec::with_capacity(args.len());
    let mut found = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        let value = if a == "--model" {
            Some(it.next().ok_or("--model needs a value (process or interrupt)")?)
        } else {
            a.strip_prefix("--model=").map(str::to_string)
        };
        match value {
            Some(v) if found.is_some() => return Err(format!("--model given more than once (`{v}`)")),
            Some(v) => found = Some(Model::parse(&v)?),
            None => out.push(a),
        }
    }
    Ok((found, out))
}

/// Builds the kernel in `model` (the interrupt model's is `kernel.elf`,
/// built with everything else); returns its path,
/// `<target>/oxok/kernel-process.elf` for the process model.
pub(crate) fn kernel(ws: &Workspace, model: Model, interrupt: &std::path::Path) -> Result<PathBuf, String> {
    if model == Model::Interrupt {
        return Ok(interrupt.to_path_buf());
    }
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics"]);
    cmd.args(["--package", KERNEL_PACKAGE, "--features", "model-process"]);
    // A target directory of its own: cargo keeps one uplifted binary per
    // target directory, and a fresh build of the other feature set would
    // not copy this one back over it.
    cmd.arg("--target-dir").arg(ws.target_dir.join("model-process"));
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).stdin(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("could not run cargo build: {e}"))?;
    let mut exe = None;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("reading cargo's output: {e}"))?;
            if let Some(e) = parse_artifact(&line) {
                exe = Some(e.path);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for cargo build: {e}"))?;
    if !status.success() {
        return Err("building the process-model kernel failed (compiler output above)".into());
    }
    let exe = exe.ok_or("cargo built no process-model kernel")?;
    let path = ws.out_dir().join("kernel-process.elf");
    copy_if_changed(&exe, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_option_is_taken_anywhere_before_the_words() {
        let (m, rest) = split_option(s(&["test", "--model", "process", "--filter", "x"])).unwrap();
        assert_eq!(m, Some(Model::Process));
        assert_eq!(rest, s(&["test", "--filter", "x"]));
        let (m, rest) = split_option(s(&["run", "--model=interrupt", "--", "--model", "x"])).unwrap();
        assert_eq!(m, Some(Model::Interrupt));
        assert_eq!(rest, s(&["run", "--", "--model", "x"]));
        assert_eq!(split_option(s(&["build"])).unwrap(), (None, s(&["build"])));
        assert!(split_option(s(&["build", "--model", "threads"])).is_err());
        assert!(split_option(s(&["build", "--model"])).is_err());
        assert!(split_option(s(&["build", "--model=process", "--model", "process"])).is_err());
    }
}
