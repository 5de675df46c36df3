//! The report of `cargo xtask bench --http`: the markdown table (medians
//! and min–max over the rounds, ratios to nginx on Linux with offloads off
//! — the reference — and the goals of issues 13 and 14 beside them) and
//! the chart of those ratios.

use super::http::{Machine, Os, Tool, WORKLOADS};
use super::httpload::{Figures, LOAD_CORE};
use super::httpopts::Opts;
use super::netclient::{EchoFigures, RTT_BYTES};
use super::options::Mode;
use super::results::Row;
use super::stats::Summary;
use super::svg::{self, Style};

/// The machine every ratio is taken against.
const REFERENCE: &str = "nginx";

/// Figures per (machine, index), in the order first seen.
pub(crate) struct Series<T>(Vec<((&'static str, usize), Vec<T>)>);

impl<T> Default for Series<T> {
    fn default() -> Self {
        Series(Vec::new())
    }
}

impl<T> Series<T> {
    pub(crate) fn entry(&mut self, name: &'static str, i: usize) -> &mut Vec<T> {
        let at = match self.0.iter().position(|(k, _)| *k == (name, i)) {
            Some(at) => at,
            None => {
                self.0.push(((name, i), Vec::new()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    pub(crate) fn get(&self, name: &str, i: usize) -> &[T] {
        self.0.iter().find(|((n, k), _)| *n == name && *k == i).map_or(&[], |(_, v)| v)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|(_, v)| v.is_empty())
    }
}

/// Everything a run collected.
#[derive(Default)]
pub(crate) struct Collected {
    pub http: Series<Figures>,
    pub echo: Series<EchoFigures>,
    pub notes: Vec<String>,
    /// Package versions of the Linux guest.
    pub versions: Vec<(String, String)>,
    /// Each machine's QEMU command line.
    pub commands: Vec<(String, String)>,
    /// The host's load averages (`/proc/loadavg`) at the start and the end.
    pub load: Vec<String>,
    /// What idle host cores did during the run (`hostidle.rs`).
    pub host_idle: String,
}

/// The host's 1/5/15-minute load averages now.
pub(crate) fn loadavg() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// How a machine is named in the table.
pub(crate) fn label(m: &Machine, echo: bool) -> String {
    match (m.os, echo) {
        (Os::Oxok { program, .. }, _) => format!("{program} (Oxok)"),
        (Os::Linux { offloads: false }, false) => "nginx (Linux)".into(),
        (Os::Linux { offloads: true }, false) => "nginx (Linux, default offloads)".into(),
        (Os::Linux { offloads: false }, true) => "echo (Linux)".into(),
        (Os::Linux { offloads: true }, true) => "echo (Linux, default offloads)".into(),
    }
}

/// A short name for the chart's labels.
fn short(m: &Machine) -> &'static str {
    match m.os {
        Os::Oxok { program, .. } => program,
        Os::Linux { offloads: false } => "Linux",
        Os::Linux { offloads: true } => "Linux+offloads",
    }
}

fn summary<T>(v: &[T], f: impl Fn(&T) -> f64) -> Option<Summary> {
    Summary::of(&v.iter().map(f).collect::<Vec<f64>>())
}

fn cell(s: Option<Summary>, digits: usize) -> String {
    match s {
        None => "missing".into(),
        Some(s) if s.n == 1 => format!("{:.*}", digits, s.median),
        Some(s) => format!("{:.*} ({:.*}–{:.*})", digits, s.median, digits, s.min, digits, s.max),
    }
}

fn over(a: Option<Summary>, b: Option<Summary>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b.median > 0.0).then(|| a.median / b.median)
}

fn times(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| format!("{r:.2}×"))
}

/// The figure a workload is judged by: MB/s for 100 KB, requests/s otherwise.
fn headline(w: usize) -> (fn(&Figures) -> f64, &'static str) {
    if WORKLOADS[w].path.starts_with("/100k") { (|f| f.mb_per_s, "MB/s") } else { (|f| f.requests_per_s, "requests/s") }
}

/// The markdown report.
pub(crate) fn table(machines: &[Machine], c: &Collected, o: &Opts, timestamp: &str) -> String {
    let mut md = String::from("# HTTP and TCP: Oxok's servers and nginx on Linux\n\n");
    md.push_str(&format!(
        "{timestamp}; {} round(s), machines in alternating order; ab: {} requests, concurrency {}; \
         wrk: {} s, {} connections, 1 thread; echo: {} round trips of {RTT_BYTES} bytes, {} KB bulk. \
         Every machine: QEMU TCG, one vCPU, the same virtio-net device (offloads off unless the row says \
         otherwise) on a tap device in a private network namespace; the load pinned to host core {LOAD_CORE}, \
         QEMU to core 0. Medians (min–max); × = ratio of medians to nginx (or echo) on Linux with offloads off.\n\n",
        o.rounds, o.requests, o.concurrency, o.secs, o.concurrency, o.roundtrips, o.bulk_kb
    ));
    if !c.load.is_empty() {
        md.push_str(&format!(
            "Host: 2 cores shared with whatever else runs; load averages (1/5/15 min) {}; {}.\n\n",
            c.load.join(" → "),
            c.host_idle
        ));
    }
    md.push_str("## HTTP (issue 14)\n\n");
    md.push_str("| workload | server | requests/s | × nginx | MB/s | p50 ms | p90 ms | p99 ms | packets/request | × nginx | failed |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let reference = c.http.get(REFERENCE, w);
        for m in machines.iter().filter(|m| m.http) {
            let f = c.http.get(m.name, w);
            let rps = summary(f, |f| f.requests_per_s);
            let ppr = summary(f, |f| f.packets_per_request);
            let (is_ref, rr, pr) = (
                m.name == REFERENCE,
                summary(reference, |f| f.requests_per_s),
                summary(reference, |f| f.packets_per_request),
            );
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                wl.name,
                label(m, false),
                cell(rps, 1),
                if is_ref && rps.is_some() { "1".into() } else { times(over(rps, rr)) },
                cell(summary(f, |f| f.mb_per_s), 2),
                cell(summary(f, |f| f.p50_ms), 1),
                cell(summary(f, |f| f.p90_ms), 1),
                cell(summary(f, |f| f.p99_ms), 1),
                cell(ppr, 2),
                if is_ref && ppr.is_some() { "1".into() } else { times(over(ppr, pr)) },
                f.iter().map(|f| f.failed).sum::<u64>(),
            ));
        }
    }
    md.push_str("\n## TCP echo (issue 13)\n\n");
    md.push_str("| server | round trip p50 µs | p99 µs | × Linux (p50) | bulk echo MB/s | × Linux |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- |\n");
    let eref = c.echo.get(REFERENCE, 0);
    for m in machines.iter().filter(|m| m.echo) {
        let e = c.echo.get(m.name, 0);
        let (rtt, bulk) = (summary(e, |e| e.rtt_p50_us), summary(e, |e| e.bulk_mb_s));
        let is_ref = m.name == REFERENCE;
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            label(m, true),
            cell(rtt, 0),
            cell(summary(e, |e| e.rtt_p99_us), 0),
            if is_ref && rtt.is_some() { "1".into() } else { times(over(rtt, summary(eref, |e| e.rtt_p50_us))) },
            cell(bulk, 2),
            if is_ref && bulk.is_some() { "1".into() } else { times(over(bulk, summary(eref, |e| e.bulk_mb_s))) },
        ));
    }
    md.push_str("\n## Against the goals (ratios of medians)\n\n");
    for g in goals(c) {
        md.push_str(&format!("- {g}\n"));
    }
    md.push_str("\n## Machines\n\n");
    for (name, cmd) in &c.commands {
        md.push_str(&format!("- {name}: `{}`\n", cmd.replace('`', "'")));
    }
    for (k, v) in &c.versions {
        md.push_str(&format!("- {k}: {v}\n"));
    }
    if !c.notes.is_empty() {
        md.push_str("\nNotes:\n");
        for n in &c.notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    md
}

/// The goals of issues 13 and 14 with what this run measured.
pub(crate) fn goals(c: &Collected) -> Vec<String> {
    let w = |tool: Tool, path: &str| WORKLOADS.iter().position(|x| x.tool == tool && x.path == path).unwrap_or(0);
    let (small, big) = (w(Tool::Ab10, "/1k.txt"), w(Tool::Ab10, "/100k.bin"));
    let http = |name: &str, i: usize, f: fn(&Figures) -> f64| {
        over(summary(c.http.get(name, i), f), summary(c.http.get(REFERENCE, i), f))
    };
    let echo =
        |f: fn(&EchoFigures) -> f64| over(summary(c.echo.get("tcpecho", 0), f), summary(c.echo.get(REFERENCE, 0), f));
    vec![
        format!(
            "cheetah / nginx, 1 KB HTTP/1.0 requests/s: {} (goal ≥ 4×)",
            times(http("cheetah", small, |f| f.requests_per_s))
        ),
        format!("cheetah / nginx, 100 KB HTTP/1.0 MB/s: {} (goal ≥ 2×)", times(http("cheetah", big, |f| f.mb_per_s))),
        format!(
            "cheetah / nginx, packets per 1 KB HTTP/1.0 request: {} (goal ≤ 0.80×)",
            times(http("cheetah", small, |f| f.packets_per_request))
        ),
        format!(
            "httpd / nginx, 1 KB HTTP/1.0 requests/s: {} (goal ≥ 1.7×)",
            times(http("httpd", small, |f| f.requests_per_s))
        ),
        format!("tcpecho / Linux, TCP round trip (p50): {} (goal ≤ 0.5×)", times(echo(|e| e.rtt_p50_us))),
        format!("tcpecho / Linux, bulk echo throughput: {} (goal ≥ 1.0×)", times(echo(|e| e.bulk_mb_s))),
    ]
}

/// The chart: every server's headline figure over nginx's, and the echo
/// rows (round-trip speed as Linux's time over Oxok's), higher is better.
pub(crate) fn chart(machines: &[Machine], c: &Collected, subtitle: &str) -> String {
    let mut rows = Vec::new();
    let row = |workload: String, mine: Option<Summary>, theirs: Option<Summary>, ratio: Option<f64>| Row {
        workload,
        unit: String::new(),
        mode: Mode::Wall,
        oxok: mine,
        linux: theirs,
        ratio,
    };
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let (f, unit) = headline(w);
        let theirs = summary(c.http.get(REFERENCE, w), f);
        for m in machines.iter().filter(|m| m.http && m.name != REFERENCE) {
            let mine = summary(c.http.get(m.name, w), f);
            let unit = if unit == "MB/s" { " MB/s" } else { "" };
            rows.push(row(format!("{}: {}{unit}", short(m), wl.name), mine, theirs, over(mine, theirs)));
        }
    }
    for m in machines.iter().filter(|m| m.echo && m.name != REFERENCE) {
        let e = c.echo.get(m.name, 0);
        let r = c.echo.get(REFERENCE, 0);
        let (mine, theirs) = (summary(e, |e| e.rtt_p50_us), summary(r, |e| e.rtt_p50_us));
        rows.push(row(format!("{}: TCP round-trip speed (echo)", short(m)), mine, theirs, over(theirs, mine)));
        let (mine, theirs) = (summary(e, |e| e.bulk_mb_s), summary(r, |e| e.bulk_mb_s));
        rows.push(row(format!("{}: bulk echo MB/s", short(m)), mine, theirs, over(mine, theirs)));
    }
    let style = Style {
        title: "Oxok's servers / nginx (echo) on Linux, offloads off (ratio of medians, log scale; higher is better)",
        higher_is_better: true,
        good: "faster than Linux",
        bad: "slower than Linux",
    };
    svg::render_styled(&rows, subtitle, &style)
}

#[cfg(test)]
mod tests {
    use super::super::http::MACHINES;
    use super::*;

    fn fig(rps: f64, ppr: f64) -> Figures {
        Figures {
            requests_per_s: rps,
            mb_per_s: rps / 10.0,
            packets_per_request: ppr,
            completed: 100,
            ..Figures::default()
        }
    }

    fn collected() -> Collected {
        let mut c = Collected::default();
        for (name, rps, ppr) in [("cheetah", 400.0, 6.0), ("httpd", 150.0, 9.0), ("nginx", 100.0, 10.0)] {
            for w in 0..WORKLOADS.len() {
                c.http.entry(name, w).extend([fig(rps, ppr), fig(rps * 1.5, ppr)]);
            }
        }
        c.echo.entry("nginx", 0).push(EchoFigures { rtt_p50_us: 1000.0, rtt_p99_us: 3000.0, bulk_mb_s: 2.0 });
        c.echo.entry("tcpecho", 0).push(EchoFigures { rtt_p50_us: 400.0, rtt_p99_us: 900.0, bulk_mb_s: 3.0 });
        c
    }

    #[test]
    fn ratios_against_nginx_and_linux() {
        let g = goals(&collected());
        assert!(g[0].contains("4.00×"), "{}", g[0]);
        assert!(g[2].contains("0.60×"), "{}", g[2]);
        assert!(g[3].contains("1.50×"), "{}", g[3]);
        assert!(g[4].contains("0.40×") && g[5].contains("1.50×"), "{g:?}");
        // Missing sides give no ratio.
        assert!(goals(&Collected::default()).iter().all(|g| g.contains(": – (")));
    }

    #[test]
    fn table_has_every_machine_and_median_spread() {
        let o = super::super::httpopts::tests_opts();
        let md = table(&MACHINES, &collected(), &o, "2026-11-24 08:00 UTC");
        assert!(md.contains("| 1 KB, HTTP/1.0 (ab) | cheetah (Oxok) | 500.0 (400.0–600.0) | 4.00× |"), "{md}");
        assert!(md.contains("| echo (Linux) | 1000 | 3000 | 1 | 2.00 | 1 |"), "{md}");
        assert!(md.contains("| tcpecho (Oxok) | 400 | 900 | 0.40× | 3.00 | 1.50× |"), "{md}");
        assert!(md.contains("nginx (Linux, default offloads) | missing"));
        let svg = chart(&MACHINES, &collected(), "t");
        assert!(svg.contains("tcpecho: TCP round-trip speed (echo)") && svg.contains(">2.50×<"));
    }

    #[test]
    fn series_keeps_rounds_apart_by_machine_and_index() {
        let mut s: Series<u32> = Series::default();
        s.entry("a", 0).push(1);
        s.entry("a", 1).push(2);
        s.entry("a", 0).push(3);
        assert_eq!(s.get("a", 0), [1, 3]);
        assert_eq!(s.get("b", 0), [] as [u32; 0]);
        assert!(!s.is_empty());
    }
}
