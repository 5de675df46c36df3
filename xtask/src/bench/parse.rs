//! Reading a benchmark program's output: `bench: start`, then one
//! `bench: <workload> <value> <unit>` line per result, then `bench: done`.
//! Other lines (kernel messages, `bench: skip …` notes) are not results.

/// Units a result may carry.
pub(crate) const UNITS: [&str; 5] = ["cycles", "ns", "us", "ms", "bytes"];

/// One line of the benchmark protocol.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    /// `bench: start`: the program's first action.
    Start,
    /// `bench: done`: the program finished.
    Done,
    /// `bench: <workload> <value> <unit>`.
    Result(Sample),
    /// `bench: skip <workload> <reason…>`: the program could not run it.
    Skip { workload: String, reason: String },
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    pub workload: String,
    pub value: f64,
    pub unit: String,
}

/// Parses one line of serial output (trailing `\r` and spaces ignored).
/// `None` for anything that is not a well-formed protocol line.
pub(crate) fn parse_line(line: &str) -> Option<Line> {
    let rest = line.trim_end().strip_prefix("bench:")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        ["start"] => Some(Line::Start),
        ["done"] => Some(Line::Done),
        ["skip", workload, reason @ ..] if valid_name(workload) => {
            Some(Line::Skip { workload: workload.to_string(), reason: reason.join(" ") })
        }
        [workload, value, unit] if valid_name(workload) && UNITS.contains(unit) => {
            let value: f64 = value.parse().ok()?;
            value
                .is_finite()
                .then(|| Line::Result(Sample { workload: workload.to_string(), value, unit: unit.to_string() }))
        }
        _ => None,
    }
}

/// Workload names are lower-case words joined by `_` (digits allowed).
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !matches!(s, "start" | "done" | "skip")
}

/// Everything one boot reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Report {
    /// Whether `bench: start` appeared.
    pub started: bool,
    /// Whether `bench: done` appeared.
    pub done: bool,
    /// The results in order; a workload reported twice keeps its last value.
    pub samples: Vec<Sample>,
    /// `(workload, reason)` of every `bench: skip` line.
    pub skipped: Vec<(String, String)>,
}

impl Report {
    /// Reads a whole serial log.
    #[cfg(test)]
    pub(crate) fn from_serial(text: &str) -> Report {
        let mut r = Report::default();
        for line in text.lines() {
            r.add(line);
        }
        r
    }

    /// Takes one line into account.
    pub(crate) fn add(&mut self, line: &str) {
        match parse_line(line) {
            Some(Line::Start) => self.started = true,
            Some(Line::Done) => self.done = true,
            Some(Line::Result(s)) => {
                self.samples.retain(|o| o.workload != s.workload);
                self.samples.push(s);
            }
            Some(Line::Skip { workload, reason }) => self.skipped.push((workload, reason)),
            None => {}
        }
    }

    /// The sample of `workload`, if reported.
    #[cfg(test)]
    pub(crate) fn get(&self, workload: &str) -> Option<&Sample> {
        self.samples.iter().find(|s| s.workload == workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(w: &str, v: f64, u: &str) -> Line {
        Line::Result(Sample { workload: w.into(), value: v, unit: u.into() })
    }

    #[test]
    fn parses_protocol_lines() {
        assert_eq!(parse_line("bench: start"), Some(Line::Start));
        assert_eq!(parse_line("bench: done\r"), Some(Line::Done));
        assert_eq!(parse_line("bench: null_call 318 cycles"), Some(sample("null_call", 318.0, "cycles")));
        assert_eq!(parse_line("bench: appel_prot100 1.5e3 ns\r"), Some(sample("appel_prot100", 1500.0, "ns")));
        assert_eq!(
            parse_line("bench:  kernel_mem_per_env  66304  bytes "),
            Some(sample("kernel_mem_per_env", 66304.0, "bytes"))
        );
        assert_eq!(
            parse_line("bench: skip appel_dirty no pagemap"),
            Some(Line::Skip { workload: "appel_dirty".into(), reason: "no pagemap".into() })
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "",
            "[    4.54] reboot: Power down",
            "bench: null_call",
            "bench: null_call 12",
            "bench: null_call twelve cycles",
            "bench: null_call 12 parsecs",
            "bench: null_call nan cycles",
            "bench: Null-Call 12 cycles",
            "bench: done 12 cycles",
            "bench: null_call 12 cycles extra",
            "xbench: null_call 12 cycles",
            "bench: start now",
        ] {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn collects_a_serial_log() {
        let log = "SeaBIOS\r\nbench: start\r\nbench: null_call 300 cycles\r\n[ 1.0] noise\r\n\
                   bench: skip appel_dirty no-pagemap\r\nbench: null_call 310 cycles\r\n";
        let r = Report::from_serial(log);
        assert!(r.started && !r.done);
        assert_eq!(r.samples.len(), 1);
        assert_eq!(r.get("null_call").unwrap().value, 310.0);
        assert_eq!(r.skipped, [("appel_dirty".to_string(), "no-pagemap".to_string())]);
        assert!(Report::from_serial("bench: start\nbench: done\n").done);
    }
}
