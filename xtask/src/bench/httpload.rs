//! The load side of `cargo xtask bench --http`: `ab` and `wrk` run inside
//! the benchmark's network namespace against the guest's address (pinned
//! to the host core QEMU does not use, when `taskset` exists), and their
//! figures parsed.

use crate::netns::Netns;

/// What one load run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Figures {
    pub requests_per_s: f64,
    pub mb_per_s: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub failed: u64,
    pub completed: u64,
    /// Packets on the tap (both ways) per request.
    pub packets_per_request: f64,
}

/// The core the load generator runs on (QEMU's single vCPU thread is left
/// the other one).
pub(crate) const LOAD_CORE: &str = "1";

/// Runs `ab` (HTTP/1.0: a connection per request; `keep_alive`: `-k`).
pub(crate) fn ab(
    ns: &Netns,
    base: &str,
    path: &str,
    requests: u32,
    concurrency: u32,
    keep_alive: bool,
) -> Result<Figures, String> {
    let url = format!("http://{base}{path}");
    let mut args: Vec<String> = vec!["-q".into(), "-s".into(), "30".into(), "-n".into(), requests.to_string()];
    args.extend(["-c".into(), concurrency.to_string()]);
    if keep_alive {
        args.push("-k".into());
    }
    args.push(url);
    let out = pinned(ns, "ab", &args)?;
    parse_ab(&out)
        .ok_or_else(|| format!("cannot read ab's output: {}", out.lines().take(12).collect::<Vec<_>>().join(" / ")))
}

/// Runs `wrk` (keep-alive) for `secs` seconds with `connections`.
pub(crate) fn wrk(ns: &Netns, base: &str, path: &str, secs: u32, connections: u32) -> Result<Figures, String> {
    let url = format!("http://{base}{path}");
    let args: Vec<String> = vec![
        "-t1".into(),
        format!("-c{connections}"),
        format!("-d{secs}s"),
        "--latency".into(),
        "--timeout".into(),
        "20s".into(),
        url,
    ];
    let out = pinned(ns, "wrk", &args)?;
    parse_wrk(&out)
        .ok_or_else(|| format!("cannot read wrk's output: {}", out.lines().take(12).collect::<Vec<_>>().join(" / ")))
}

fn pinned(ns: &Netns, program: &str, args: &[String]) -> Result<String, String> {
    let out = ns.pinned(LOAD_CORE, program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!("{program} failed: {} {}", text.trim(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(text)
}

fn field<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.trim_start().strip_prefix(label)).map(str::trim)
}

fn first_number(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

/// `ab`'s report: requests per second, transfer rate, failures, latency
/// percentiles (ms).
pub(crate) fn parse_ab(text: &str) -> Option<Figures> {
    let pct = |p: &str| {
        text.lines().find_map(|l| {
            let l = l.trim_start();
            l.strip_prefix(p).and_then(|r| r.split_whitespace().next()).and_then(|v| v.parse::<f64>().ok())
        })
    };
    let non2xx = field(text, "Non-2xx responses:").and_then(first_number).unwrap_or(0.0);
    Some(Figures {
        requests_per_s: first_number(field(text, "Requests per second:")?)?,
        mb_per_s: first_number(field(text, "Transfer rate:")?)? / 1024.0,
        completed: first_number(field(text, "Complete requests:")?)? as u64,
        failed: first_number(field(text, "Failed requests:")?)? as u64 + non2xx as u64,
        p50_ms: pct("50%")?,
        p90_ms: pct("90%")?,
        p99_ms: pct("99%")?,
        packets_per_request: 0.0,
    })
}

/// A wrk duration (`1.23ms`, `450.00us`, `2.1s`) in milliseconds.
fn wrk_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic())?);
    let v: f64 = num.parse().ok()?;
    Some(match unit {
        "us" => v / 1000.0,
        "ms" => v,
        "s" => v * 1000.0,
        "m" => v * 60_000.0,
        _ => return None,
    })
}

/// A wrk size (`1.23MB`, `456.00KB`, `12B`) in MB.
fn wrk_mb(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic())?);
    let v: f64 = num.parse().ok()?;
    Some(match unit {
        "B" => v / 1_048_576.0,
        "KB" => v / 1024.0,
        "MB" => v,
        "GB" => v * 1024.0,
        _ => return None,
    })
}

/// `wrk --latency`'s report.
pub(crate) fn parse_wrk(text: &str) -> Option<Figures> {
    let pct = |p: &str| text.lines().find_map(|l| l.trim_start().strip_prefix(p).and_then(wrk_ms));
    let completed = text.lines().find_map(|l| {
        let l = l.trim();
        l.contains("requests in").then(|| first_number(l)).flatten()
    })?;
    let errors: f64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Socket errors:"))
        .map(|r| r.split(',').filter_map(|p| p.split_whitespace().nth(1)?.parse::<f64>().ok()).sum())
        .unwrap_or(0.0)
        + field(text, "Non-2xx or 3xx responses:").and_then(first_number).unwrap_or(0.0);
    Some(Figures {
        requests_per_s: first_number(field(text, "Requests/sec:")?)?,
        mb_per_s: wrk_mb(field(text, "Transfer/sec:")?)?,
        completed: completed as u64,
        failed: errors as u64,
        p50_ms: pct("50%")?,
        p90_ms: pct("90%")?,
        p99_ms: pct("99%")?,
        packets_per_request: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AB: &str = "Server Software:        oxok
Document Length:        1024 bytes
Concurrency Level:      8
Time taken for tests:   2.345 seconds
Complete requests:      2000
Failed requests:        0
Total transferred:      2400000 bytes
Requests per second:    852.88 [#/sec] (mean)
Time per request:       9.380 [ms] (mean)
Transfer rate:          999.47 [Kbytes/sec] received

Percentage of the requests served within a certain time (ms)
  50%      9
  66%     10
  90%     12
  99%     30
 100%     41 (longest request)
";

    const WRK: &str = "Running 5s test @ http://127.0.0.1:8080/1k.txt
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.10ms  500.00us   9.00ms   90.00%
  Latency Distribution
     50%    2.00ms
     75%    2.30ms
     90%  800.00us
     99%    1.20s
  19000 requests in 5.00s, 22.00MB read
Requests/sec:   3800.00
Transfer/sec:      4.40MB
";

    #[test]
    fn reads_ab() {
        let f = parse_ab(AB).expect("parses");
        assert_eq!((f.requests_per_s, f.completed, f.failed), (852.88, 2000, 0));
        assert_eq!((f.p50_ms, f.p90_ms, f.p99_ms), (9.0, 12.0, 30.0));
        assert!((f.mb_per_s - 999.47 / 1024.0).abs() < 1e-9);
    }

    #[test]
    fn reads_wrk() {
        let f = parse_wrk(WRK).expect("parses");
        assert_eq!((f.requests_per_s, f.completed, f.failed), (3800.0, 19000, 0));
        assert_eq!((f.p50_ms, f.p90_ms, f.p99_ms), (2.0, 0.8, 1200.0));
        assert_eq!(f.mb_per_s, 4.4);
    }
}
