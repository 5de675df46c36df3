//! The report of `cargo xtask bench --disk`: one row per phase with both
//! sides' times (median, min–max over the rounds), the Oxok/Linux ratio
//! of the medians beside the goal, and each side's disk requests
//! per operation (reads / writes / flushes); and the ratios as a chart.

use super::disktrace::Requests;
use super::options::{Mode, Side};
use super::parse::Sample;
use super::report::{format_ratio, format_value};
use super::results::Row;
use super::stats::{Summary, ratio};

/// One boot's figures.
#[derive(Debug, Clone)]
pub(crate) struct DiskBoot {
    pub side: Side,
    pub mode: Mode,
    /// `bench: NAME MICROSECONDS us` lines.
    pub samples: Vec<Sample>,
    /// Disk requests per phase, from the trace.
    pub phases: Vec<(String, Requests)>,
}

/// Everything a run collected.
#[derive(Debug, Clone, Default)]
pub(crate) struct Collected {
    pub timestamp: String,
    pub quick: bool,
    pub rounds: usize,
    pub boots: Vec<DiskBoot>,
    /// (side, QEMU command line) of the first boot of each side.
    pub commands: Vec<(&'static str, String)>,
    pub versions: Vec<(String, String)>,
    /// Load averages at the start and the end.
    pub load: Vec<String>,
    pub notes: Vec<String>,
}

/// A row: Oxok's phase against Linux's phase, and the goal.
pub(crate) struct Phase {
    pub label: &'static str,
    pub oxok: &'static str,
    pub linux: &'static str,
    /// Oxok/Linux time at most this (reported, never asserted).
    pub goal: Option<f64>,
}

pub(crate) const PHASES: [Phase; 7] = [
    Phase { label: "smallfile: create (+ sync)", oxok: "smallfile_create", linux: "smallfile_create", goal: Some(0.5) },
    Phase { label: "smallfile: read", oxok: "smallfile_read", linux: "smallfile_read", goal: Some(0.5) },
    Phase { label: "smallfile: unlink (+ sync)", oxok: "smallfile_unlink", linux: "smallfile_unlink", goal: Some(0.5) },
    Phase { label: "sequential write (+ fsync)", oxok: "seq_write", linux: "seq_write", goal: Some(1.0) },
    Phase { label: "sequential read", oxok: "seq_read", linux: "seq_read", goal: Some(1.0) },
    Phase { label: "tree copy: `cp -r` + sync, both sides", oxok: "copy_cp", linux: "copy_cp", goal: None },
    Phase {
        label: "tree copy: Oxok `xcp` vs Linux `cp -r` + sync",
        oxok: "copy_xcp",
        linux: "copy_cp",
        goal: Some(0.33),
    },
];

impl Collected {
    /// Microseconds of `phase` on `side` in `mode`, one per boot that reported it.
    fn times(&self, side: Side, mode: Mode, phase: &str) -> Vec<f64> {
        let boots = self.boots.iter().filter(|b| b.side == side && b.mode == mode);
        boots
            .filter_map(|b| b.samples.iter().find(|s| s.workload == phase && s.unit == "us").map(|s| s.value))
            .collect()
    }

    /// The requests of `phase` on `side` in `mode`, one per boot that traced it.
    fn requests(&self, side: Side, mode: Mode, phase: &str) -> Vec<Requests> {
        let boots = self.boots.iter().filter(|b| b.side == side && b.mode == mode);
        boots.filter_map(|b| b.phases.iter().find(|(n, _)| n == phase).map(|(_, r)| r.clone())).collect()
    }

    fn modes(&self) -> Vec<Mode> {
        let mut m: Vec<Mode> = Vec::new();
        for b in &self.boots {
            if !m.contains(&b.mode) {
                m.push(b.mode);
            }
        }
        m
    }

    /// One chart row per phase and mode: time ratio.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for mode in self.modes() {
            for p in &PHASES {
                let (o, l) = (
                    Summary::of(&self.times(Side::Oxok, mode, p.oxok)),
                    Summary::of(&self.times(Side::Linux, mode, p.linux)),
                );
                rows.push(Row {
                    workload: p.label.to_string(),
                    unit: "us".into(),
                    mode,
                    oxok: o,
                    linux: l,
                    ratio: ratio(o, l),
                });
            }
        }
        rows
    }
}

/// "median (min–max)" of microseconds, in milliseconds.
fn ms(s: Option<Summary>) -> String {
    match s {
        None => "missing".into(),
        Some(s) if s.n == 1 => format_value(s.median / 1000.0),
        Some(s) => format!(
            "{} ({}–{})",
            format_value(s.median / 1000.0),
            format_value(s.min / 1000.0),
            format_value(s.max / 1000.0)
        ),
    }
}

/// Median requests per operation: "total (reads / writes / flushes)".
pub(crate) fn per_op(reqs: &[Requests]) -> String {
    let med = |f: &dyn Fn(&Requests) -> f64| Summary::of(&reqs.iter().map(f).collect::<Vec<f64>>()).map(|s| s.median);
    let ops = |r: &Requests| r.ops.max(1) as f64;
    let (Some(all), Some(rd), Some(wr), Some(fl)) = (
        med(&|r| r.per_op()),
        med(&|r| r.reads as f64 / ops(r)),
        med(&|r| r.writes as f64 / ops(r)),
        med(&|r| r.flushes() as f64 / ops(r)),
    ) else {
        return "missing".into();
    };
    format!("{all:.2} ({rd:.2} / {wr:.2} / {fl:.2})")
}

/// The operations of a phase as traced ("1,000 file"), or "–".
fn ops(reqs: &[Requests]) -> String {
    reqs.first().map_or("–".into(), |r| format!("{} {}", format_value(r.ops as f64), r.unit))
}

/// The markdown report.
pub(crate) fn table(c: &Collected) -> String {
    let mut md = String::from("# Disk: Oxok (C-FFS over XN, dfsd) and Linux (ext4)\n\n");
    md.push_str(&format!(
        "{} · {} · {} round(s), sides alternating. Both machines: QEMU TCG, one vCPU, 512 MiB, the same \
         virtio-blk device on a fresh raw image of {} MiB (`cache=writeback`); the same static program \
         (`apps/linux-tests/bench-disk.c`; on Oxok under the Linux personality, files on `dfsd`). Times are \
         host wall time of the whole phase in ms, median (min–max); Oxok/Linux is the ratio of the medians \
         (lower is better for Oxok). Requests per operation (per file, or per MiB) are the guest's \
         virtio-blk requests seen by QEMU's trace in the phase: total (reads / writes / flushes).\n\n",
        c.timestamp,
        if c.quick { "quick" } else { "full" },
        c.rounds,
        super::diskguest::DISK_MIB
    ));
    if c.modes().contains(&Mode::Icount) {
        md.push_str(
            "In icount rows the times are the guest's own clock under `-icount shift=0,sleep=off`: one \
             nanosecond per guest instruction, and a halted guest's clock jumps to its next timer, so a \
             phase's time is its instructions plus the time it waited for the disk or a timer.\n\n",
        );
    }
    if !c.load.is_empty() {
        md.push_str(&format!(
            "Host: 2 cores shared with other work; load averages (1/5/15 min) {}.\n\n",
            c.load.join(" → ")
        ));
    }
    md.push_str(
        "| phase | mode | ops | Oxok ms | Linux ms | Oxok/Linux | goal | Oxok requests/op | Linux requests/op |\n",
    );
    md.push_str("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n");
    for mode in c.modes() {
        for p in &PHASES {
            let (o, l) =
                (Summary::of(&c.times(Side::Oxok, mode, p.oxok)), Summary::of(&c.times(Side::Linux, mode, p.linux)));
            let (ro, rl) = (c.requests(Side::Oxok, mode, p.oxok), c.requests(Side::Linux, mode, p.linux));
            let r = ratio(o, l);
            let verdict = match (r, p.goal) {
                (Some(r), Some(g)) => format!("≤ {g}× ({})", if r <= g { "met" } else { "not met" }),
                (None, Some(g)) => format!("≤ {g}×"),
                (_, None) => "–".into(),
            };
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {verdict} | {} | {} |\n",
                p.label,
                mode.name(),
                ops(if ro.is_empty() { &rl } else { &ro }),
                ms(o),
                ms(l),
                r.map_or("–".into(), format_ratio),
                per_op(&ro),
                per_op(&rl)
            ));
        }
    }
    if !c.notes.is_empty() {
        md.push_str("\nNotes:\n\n");
        for n in &c.notes {
            md.push_str(&format!("- {n}\n"));
        }
    }
    md.push_str("\nVersions:\n\n");
    for (k, v) in &c.versions {
        md.push_str(&format!("- {k}: {v}\n"));
    }
    md.push_str("\nQEMU command lines (first boot of each side):\n\n");
    for (side, cmd) in &c.commands {
        md.push_str(&format!("- {side}: `{cmd}`\n"));
    }
    md
}

/// The time ratios as a bar chart (log scale, lower is better).
pub(crate) fn chart(c: &Collected) -> String {
    let subtitle =
        format!("{} · {} · {} round(s) · disk phases", c.timestamp, if c.quick { "quick" } else { "full" }, c.rounds);
    super::svg::render(&c.rows(), &subtitle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(side: Side, times: &[(&str, f64)], reqs: &[(&str, u64, u64, u64, u64)]) -> DiskBoot {
        DiskBoot {
            side,
            mode: Mode::Wall,
            samples: times
                .iter()
                .map(|(w, v)| Sample { workload: w.to_string(), value: *v, unit: "us".into() })
                .collect(),
            phases: reqs
                .iter()
                .map(|(n, ops, r, w, done)| {
                    let q = Requests {
                        ops: *ops,
                        unit: "file".into(),
                        reads: *r,
                        writes: *w,
                        completed: *done,
                        ..Requests::default()
                    };
                    (n.to_string(), q)
                })
                .collect(),
        }
    }

    fn collected() -> Collected {
        let mut c = Collected { timestamp: "T".into(), rounds: 2, ..Default::default() };
        c.boots.push(boot(
            Side::Oxok,
            &[("smallfile_create", 2000.0), ("copy_xcp", 300.0)],
            &[("smallfile_create", 10, 10, 20, 40)],
        ));
        c.boots.push(boot(
            Side::Oxok,
            &[("smallfile_create", 4000.0), ("copy_xcp", 500.0)],
            &[("smallfile_create", 10, 0, 20, 20)],
        ));
        c.boots.push(boot(
            Side::Linux,
            &[("smallfile_create", 10000.0), ("copy_cp", 1000.0)],
            &[("smallfile_create", 10, 0, 5, 6)],
        ));
        c
    }

    #[test]
    fn ratios_of_medians_and_xcp_against_linux_cp() {
        let rows = collected().rows();
        let create = rows.iter().find(|r| r.workload.starts_with("smallfile: create")).unwrap();
        assert_eq!(create.oxok.unwrap().median, 3000.0);
        assert_eq!(create.ratio, Some(0.3));
        let xcp = rows.iter().find(|r| r.workload.contains("xcp")).unwrap();
        assert_eq!(xcp.ratio, Some(0.4));
        // No side measured it: no ratio, never an estimate.
        let read = rows.iter().find(|r| r.workload == "smallfile: read").unwrap();
        assert!(read.ratio.is_none() && read.oxok.is_none());
    }

    #[test]
    fn table_shows_requests_per_op_and_goals() {
        let md = table(&collected());
        let row = md.lines().find(|l| l.starts_with("| smallfile: create")).unwrap();
        // Oxok: per op (1+2+1, 0+2+0) → medians 3 total, 0.5 reads, 2 writes, 0.5 flushes.
        assert!(row.contains("| 3.00 (0.50 / 2.00 / 0.50) |"), "{row}");
        // Linux: 5 writes and 1 flush over 10 files.
        assert!(row.contains("| 0.60 (0.00 / 0.50 / 0.10) |"), "{row}");
        assert!(row.contains("0.300×") && row.contains("≤ 0.5× (met)") && row.contains("| 3 (2–4) | 10 |"), "{row}");
        let xcp = md.lines().find(|l| l.contains("xcp")).unwrap();
        assert!(xcp.contains("≤ 0.33× (not met)"), "{xcp}");
        let read = md.lines().find(|l| l.starts_with("| smallfile: read")).unwrap();
        assert!(read.contains("missing") && read.contains("| – |"), "{read}");
        assert!(chart(&collected()).starts_with("<svg"));
    }
}
