//! Layer 1 of `cargo xtask test`: `cargo test` for every workspace package
//! that runs on the host, counting individual tests from libtest's summaries.

use crate::meta::{Workspace, cargo};
use crate::report::{Tally, tail};
use std::process::Stdio;
use std::time::Instant;

/// Test counts summed over libtest's `test result:` lines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub passed: usize,
    pub failed: usize,
}

/// Sums every `test result: ok. X passed; Y failed; …` line in `output`
/// (unit tests, integration tests and doc-tests each print one).
pub(crate) fn parse_summaries(output: &str) -> Counts {
    let mut c = Counts::default();
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        // "ok. 3 passed; 0 failed; 1 ignored; …" or "FAILED. 1 passed; 2 failed; …"
        let Some((_, fields)) = rest.split_once(". ") else {
            continue;
        };
        for field in fields.split(';') {
            let mut words = field.split_whitespace();
            let (Some(n), Some(kind)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<usize>() else { continue };
            match kind {
                "passed" => c.passed += n,
                "failed" => c.failed += n,
                _ => {}
            }
        }
    }
    c
}

/// Runs the host tests of every host package, one `cargo test -p` each, and
/// prints one line per package. A package that fails to build, or whose
/// tests fail without a summary, counts as one failure.
pub(crate) fn run(ws: &Workspace, tally: &mut Tally) -> Result<(), String> {
    for pkg in ws.host_packages() {
        let label = format!("host-test {} ...", pkg.name);
        print!("{label} ");
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let start = Instant::now();
        let out = cargo()
            .args(["test", "--package", &pkg.name])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("could not run cargo test: {e}"))?;
        let secs = start.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut counts = parse_summaries(&stdout);
        if !out.status.success() && counts.failed == 0 {
            counts.failed = 1;
        }
        tally.passed += counts.passed;
        if counts.failed == 0 {
            println!("ok: {} passed ({secs:.1} s)", counts.passed);
        } else {
            tally.fail(counts.failed, &format!("host-test {}", pkg.name));
            println!("FAILED: {} passed, {} failed ({secs:.1} s)", counts.passed, counts.failed);
            let stderr = String::from_utf8_lossy(&out.stderr);
            println!("{}", tail(&format!("{stderr}\n{stdout}"), 60));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_all_summaries() {
        let out = "\
running 3 tests
test a ... ok
test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
   Doc-tests x
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
test result: garbage
";
        assert_eq!(parse_summaries(out), Counts { passed: 4, failed: 2 });
        assert_eq!(parse_summaries(""), Counts::default());
    }
}
