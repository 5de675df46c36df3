//! The Markdown report: a short header, the table (workload, Oxok, Linux,
//! ratio, spread, mode, unit) and notes. Missing figures read "missing" and
//! get no ratio.

use super::results::{Results, Row};
use super::stats::Summary;
use super::workloads::BOOT_TO_USER;

/// Marks the generated table inside `bench/README.md`.
pub(crate) const README_START: &str = "<!-- bench-results:start -->";
pub(crate) const README_END: &str = "<!-- bench-results:end -->";

/// The whole `latest.md`.
pub(crate) fn markdown(r: &Results) -> String {
    let s = &r.settings;
    let mut out = String::from("# Oxok vs Linux: benchmark results\n\n");
    let dirty = if s.git_dirty { " (with uncommitted changes)" } else { "" };
    let modes: Vec<&str> = s.modes.iter().map(|m| m.name()).collect();
    out.push_str(&format!(
        "Run {} · {} · {} round{} per side and mode · modes: {} · commit {}{} · {} · host CPU: {}\n\n",
        s.timestamp,
        if s.quick { "quick" } else { "full" },
        s.rounds,
        if s.rounds == 1 { "" } else { "s" },
        modes.join(", "),
        s.git_commit,
        dirty,
        s.qemu_version,
        s.host_cpu,
    ));
    out.push_str(&table(&r.rows()));
    out.push_str(
        "\nOxok/Linux is the ratio of the medians over the rounds: **lower is better** \
         (less time, or less memory) for Oxok. Spread is the minimum–maximum over the rounds \
         of each side. Mode `wall`: plain TCG, cycles are host TSC cycles and move with host \
         load; mode `icount`: QEMU `-icount shift=0,sleep=off`, cycles are ticks of a virtual \
         clock advancing one per guest instruction, deterministic. `boot_to_user` is host time \
         in both modes. See bench/README.md for what each workload does.\n",
    );
    let notes: Vec<String> = r.notes.iter().cloned().chain(r.unit_mismatches()).collect();
    if !notes.is_empty() {
        out.push_str("\nNotes:\n\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    out
}

/// The Markdown table of `rows`.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | Oxok | Linux | Oxok/Linux | spread (min–max) | mode | unit |\n\
         | --- | ---: | ---: | ---: | --- | --- | --- |\n",
    );
    for row in rows {
        let spread = match (row.oxok, row.linux) {
            (None, None) => "—".to_string(),
            (o, l) => format!("Oxok {} · Linux {}", range(o), range(l)),
        };
        let mode = if row.workload == BOOT_TO_USER {
            format!("{} (host time)", row.mode.name())
        } else {
            row.mode.name().into()
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            row.workload,
            median(row.oxok),
            median(row.linux),
            row.ratio.map_or("—".to_string(), format_ratio),
            spread,
            mode,
            row.unit
        ));
    }
    out
}

fn median(s: Option<Summary>) -> String {
    s.map_or("missing".to_string(), |s| format_value(s.median))
}

fn range(s: Option<Summary>) -> String {
    s.map_or("missing".to_string(), |s| format!("{}–{}", format_value(s.min), format_value(s.max)))
}

/// A figure for people: whole numbers with thousands separators, small
/// ones with up to three significant digits.
pub(crate) fn format_value(v: f64) -> String {
    if v.abs() < 100.0 && v.fract() != 0.0 {
        let digits = if v.abs() < 1.0 {
            3
        } else if v.abs() < 10.0 {
            2
        } else {
            1
        };
        return format!("{v:.digits$}");
    }
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if n < 0 { format!("-{grouped}") } else { grouped }
}

/// A ratio with three significant digits and a `×`.
pub(crate) fn format_ratio(r: f64) -> String {
    let digits = if r >= 100.0 {
        0
    } else if r >= 10.0 {
        1
    } else if r >= 1.0 {
        2
    } else if r >= 0.1 {
        3
    } else {
        4
    };
    format!("{r:.digits$}×")
}

/// Writes a run's report into `out` (made if missing) as `<stamp>.md`,
/// `<stamp>.svg`, `latest.md` and `latest.svg`.
pub(crate) fn write_md_svg(out: &std::path::Path, stamp: &str, md: &str, svg: &str) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (name, text) in [
        (format!("{stamp}.md"), md),
        ("latest.md".into(), md),
        (format!("{stamp}.svg"), svg),
        ("latest.svg".into(), svg),
    ] {
        std::fs::write(out.join(&name), text).map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    Ok(())
}

/// Replaces the text between the README markers with `table` (the
/// markers stay). `None` if the markers are missing or out of order.
pub(crate) fn splice_readme(readme: &str, table: &str) -> Option<String> {
    let start = readme.find(README_START)? + README_START.len();
    let end = readme[start..].find(README_END)? + start;
    Some(format!("{}\n{}\n{}", &readme[..start], table.trim_end(), &readme[end..]))
}

#[cfg(test)]
mod tests {
    use super::super::options::Mode;
    use super::*;

    fn row(w: &str, o: Option<f64>, l: Option<f64>) -> Row {
        let s = |v: Option<f64>| v.and_then(|v| Summary::of(&[v, v * 2.0, v * 0.5]));
        let (oxok, linux) = (s(o), s(l));
        Row {
            workload: w.into(),
            unit: "cycles".into(),
            mode: Mode::Wall,
            oxok,
            linux,
            ratio: super::super::stats::ratio(oxok, linux),
        }
    }

    #[test]
    fn table_shows_missing_without_ratio() {
        let t = table(&[row("null_call", Some(300.0), Some(1200.0)), row("appel_trap", None, Some(2500.0))]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[2], "| `null_call` | 300 | 1,200 | 0.250× | Oxok 150–600 · Linux 600–2,400 | wall | cycles |");
        assert_eq!(
            lines[3],
            "| `appel_trap` | missing | 2,500 | — | Oxok missing · Linux 1,250–5,000 | wall | cycles |"
        );
    }

    #[test]
    fn number_formats() {
        assert_eq!(format_value(3_580_123.4), "3,580,123");
        assert_eq!(format_value(318.0), "318");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(0.5), "0.500");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(-1234.0), "-1,234");
        assert_eq!(format_ratio(0.25), "0.250×");
        assert_eq!(format_ratio(1.5), "1.50×");
        assert_eq!(format_ratio(123.4), "123×");
        assert_eq!(format_ratio(0.01234), "0.0123×");
    }

    #[test]
    fn splices_between_markers() {
        let readme = format!("# X\n{README_START}\nold\n{README_END}\nafter\n");
        let new = splice_readme(&readme, "| t |\n").unwrap();
        assert_eq!(new, format!("# X\n{README_START}\n| t |\n{README_END}\nafter\n"));
        assert_eq!(splice_readme("no markers", "t"), None);
    }
}
