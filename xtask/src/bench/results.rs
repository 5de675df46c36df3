//! The results of one `cargo xtask bench` run: the settings, every boot's
//! raw figures, the per-workload summary rows, and their JSON form.

use super::jsonw::Value;
use super::options::{Mode, Side};
use super::parse::Sample;
use super::run::Boot;
use super::stats::{Summary, ratio};
use super::workloads::{self, BOOT_TO_USER};

/// What was run, where, and how.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// UTC start time, `2025-01-31T12:00:00Z`.
    pub timestamp: String,
    pub quick: bool,
    pub rounds: usize,
    pub modes: Vec<Mode>,
    pub timeout_s: u64,
    pub qemu_version: String,
    pub host_cpu: String,
    pub git_commit: String,
    /// Uncommitted changes in the work tree.
    pub git_dirty: bool,
    /// `(side, mode, QEMU command line)` of each kind of boot.
    pub commands: Vec<(Side, Mode, String)>,
    /// `(key, value)` facts about the guests (kernel package, busybox, …).
    pub guests: Vec<(String, String)>,
}

/// One boot of one side in one mode.
#[derive(Debug, Clone)]
pub(crate) struct BootRecord {
    pub round: usize,
    pub mode: Mode,
    pub side: Side,
    /// Every figure, including `boot_to_user` measured by the harness.
    pub samples: Vec<Sample>,
    /// `(workload, reason)` the program said it skipped.
    pub skipped: Vec<(String, String)>,
    pub started: bool,
    pub done: bool,
    pub timed_out: bool,
    pub status: Option<i32>,
    pub elapsed_ms: f64,
    /// Serial log of this boot.
    pub log: String,
}

impl BootRecord {
    /// Takes a boot's output, adding the harness's `boot_to_user` figure.
    pub(crate) fn new(round: usize, mode: Mode, side: Side, boot: &Boot, log: String) -> BootRecord {
        let mut samples = boot.report.samples.clone();
        if let Some(t) = boot.boot_to_user {
            samples.retain(|s| s.workload != BOOT_TO_USER);
            samples.push(Sample { workload: BOOT_TO_USER.into(), value: t.as_secs_f64() * 1e6, unit: "us".into() });
        }
        BootRecord {
            round,
            mode,
            side,
            samples,
            skipped: boot.report.skipped.clone(),
            started: boot.report.started,
            done: boot.report.done,
            timed_out: boot.timed_out,
            status: boot.status,
            elapsed_ms: boot.elapsed.as_secs_f64() * 1e3,
            log,
        }
    }
}

/// One line of the table: a workload in one mode.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub workload: String,
    pub unit: String,
    pub mode: Mode,
    pub oxok: Option<Summary>,
    pub linux: Option<Summary>,
    /// Oxok median / Linux median.
    pub ratio: Option<f64>,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Results {
    pub settings: Settings,
    pub boots: Vec<BootRecord>,
    /// Sentences for the report (missing sides, timeouts, …).
    pub notes: Vec<String>,
}

impl Results {
    /// The figures of `workload` in `unit` from every boot of `side` in `mode`.
    pub(crate) fn values(&self, side: Side, mode: Mode, workload: &str, unit: &str) -> Vec<f64> {
        self.boots
            .iter()
            .filter(|b| b.side == side && b.mode == mode)
            .flat_map(|b| b.samples.iter())
            .filter(|s| s.workload == workload && s.unit == unit)
            .map(|s| s.value)
            .collect()
    }

    /// Every known workload in every mode (workload-major), then any other
    /// workload a program reported, with the unit it used.
    pub(crate) fn rows(&self) -> Vec<Row> {
        let mut names: Vec<(String, String)> =
            workloads::ALL.iter().map(|w| (w.name.to_string(), w.unit.to_string())).collect();
        let mut extra: Vec<(String, String)> = self
            .boots
            .iter()
            .flat_map(|b| b.samples.iter())
            .filter(|s| workloads::find(&s.workload).is_none())
            .map(|s| (s.workload.clone(), s.unit.clone()))
            .collect();
        extra.sort();
        extra.dedup_by(|a, b| a.0 == b.0);
        names.extend(extra);
        let mut rows = Vec::new();
        for (workload, unit) in names {
            for &mode in &self.settings.modes {
                let oxok = Summary::of(&self.values(Side::Oxok, mode, &workload, &unit));
                let linux = Summary::of(&self.values(Side::Linux, mode, &workload, &unit));
                let ratio = ratio(oxok, linux);
                rows.push(Row { workload: workload.clone(), unit: unit.clone(), mode, oxok, linux, ratio });
            }
        }
        rows
    }

    /// Notes about figures reported in a unit other than the workload's.
    pub(crate) fn unit_mismatches(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .boots
            .iter()
            .flat_map(|b| b.samples.iter().map(move |s| (b.side, s)))
            .filter_map(|(side, s)| {
                let w = workloads::find(&s.workload)?;
                (w.unit != s.unit).then(|| {
                    format!(
                        "{} reported {} in {} instead of {}; those figures are left out.",
                        side.name(),
                        s.workload,
                        s.unit,
                        w.unit
                    )
                })
            })
            .collect();
        notes.dedup();
        notes
    }

    /// The run as a JSON document: settings, summary rows, raw boots.
    pub(crate) fn to_json(&self) -> String {
        let s = &self.settings;
        let summary = |x: Option<Summary>| match x {
            None => Value::Null,
            Some(x) => Value::obj([
                ("median", Value::num(x.median)),
                ("min", Value::num(x.min)),
                ("max", Value::num(x.max)),
                ("n", Value::num(x.n as f64)),
            ]),
        };
        let settings = Value::obj([
            ("timestamp", Value::str(&s.timestamp)),
            ("quick", Value::Bool(s.quick)),
            ("rounds", Value::num(s.rounds as f64)),
            ("modes", Value::Arr(s.modes.iter().map(|m| Value::str(m.name())).collect())),
            ("timeout_s", Value::num(s.timeout_s as f64)),
            ("qemu_version", Value::str(&s.qemu_version)),
            ("host_cpu", Value::str(&s.host_cpu)),
            ("git_commit", Value::str(&s.git_commit)),
            ("git_dirty", Value::Bool(s.git_dirty)),
            (
                "qemu_commands",
                Value::Arr(
                    s.commands
                        .iter()
                        .map(|(side, mode, cmd)| {
                            Value::obj([
                                ("side", Value::str(side.name())),
                                ("mode", Value::str(mode.name())),
                                ("command", Value::str(cmd)),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("guests", Value::Obj(s.guests.iter().map(|(k, v)| (k.clone(), Value::str(v))).collect())),
        ]);
        let rows = self
            .rows()
            .into_iter()
            .map(|r| {
                Value::obj([
                    ("workload", Value::str(r.workload)),
                    ("unit", Value::str(r.unit)),
                    ("mode", Value::str(r.mode.name())),
                    ("oxok", summary(r.oxok)),
                    ("linux", summary(r.linux)),
                    ("ratio", Value::opt(r.ratio)),
                ])
            })
            .collect();
        let boots = self
            .boots
            .iter()
            .map(|b| {
                Value::obj([
                    ("round", Value::num(b.round as f64)),
                    ("mode", Value::str(b.mode.name())),
                    ("side", Value::str(b.side.name())),
                    ("started", Value::Bool(b.started)),
                    ("done", Value::Bool(b.done)),
                    ("timed_out", Value::Bool(b.timed_out)),
                    ("status", b.status.map_or(Value::Null, |c| Value::num(c as f64))),
                    ("elapsed_ms", Value::num(b.elapsed_ms.round())),
                    ("log", Value::str(&b.log)),
                    (
                        "results",
                        Value::Obj(
                            b.samples
                                .iter()
                                .map(|x| {
                                    let v = Value::obj([("value", Value::num(x.value)), ("unit", Value::str(&x.unit))]);
                                    (x.workload.clone(), v)
                                })
                                .collect(),
                        ),
                    ),
                    ("skipped", Value::Obj(b.skipped.iter().map(|(w, r)| (w.clone(), Value::str(r))).collect())),
                ])
            })
            .collect();
        let notes = self.notes.iter().map(Value::str).collect();
        Value::obj([
            ("settings", settings),
            ("summary", Value::Arr(rows)),
            ("boots", Value::Arr(boots)),
            ("notes", Value::Arr(notes)),
        ])
        .to_pretty()
    }
}

/// `(ISO 8601 UTC, file-name form)` of a time in seconds since 1970:
/// `("2025-01-31T12:00:05Z", "20250131T120005Z")`.
pub(crate) fn utc(secs: u64) -> (String, String) {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    (format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"), format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;

    fn boot(side: Side, round: usize, figures: &[(&str, f64, &str)]) -> BootRecord {
        BootRecord {
            round,
            mode: Mode::Wall,
            side,
            samples: figures
                .iter()
                .map(|(w, v, u)| Sample { workload: w.to_string(), value: *v, unit: u.to_string() })
                .collect(),
            skipped: vec![],
            started: true,
            done: true,
            timed_out: false,
            status: Some(0),
            elapsed_ms: 1000.0,
            log: "x.log".into(),
        }
    }

    #[test]
    fn rows_summarise_both_sides() {
        let mut r = Results::default();
        r.settings.modes = vec![Mode::Wall];
        r.boots.push(boot(Side::Linux, 1, &[("null_call", 300.0, "cycles"), ("new_thing", 5.0, "ns")]));
        r.boots.push(boot(Side::Linux, 2, &[("null_call", 500.0, "cycles")]));
        r.boots.push(boot(Side::Oxok, 1, &[("null_call", 100.0, "cycles"), ("appel_trap", 9.0, "ns")]));
        let rows = r.rows();
        assert_eq!(rows.len(), workloads::ALL.len() + 1);
        let null = &rows[0];
        assert_eq!(null.workload, "null_call");
        assert_eq!(null.linux.unwrap().median, 400.0);
        assert_eq!(null.ratio, Some(0.25));
        let trap = rows.iter().find(|x| x.workload == "appel_trap").unwrap();
        assert_eq!((trap.oxok, trap.ratio), (None, None), "wrong unit is left out");
        assert_eq!(rows.last().unwrap().workload, "new_thing");
        assert_eq!(r.unit_mismatches().len(), 1);
        let j = Json::parse(&r.to_json()).unwrap();
        assert_eq!(j.get("boots").items().len(), 3);
        assert_eq!(j.get("summary").items()[0].get("ratio"), &Json::Number(0.25));
        assert_eq!(j.get("summary").items()[1].get("oxok"), &Json::Null);
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_735_689_599).1, "20241231T235959Z");
        assert_eq!(utc(1_767_225_600 + 3_661).0, "2026-01-01T01:01:01Z");
    }
}
