//! Counting and presenting results: the final `N passed, N failed` line and
//! readable tails of captured output.

/// At most this many reasons of one failed scenario are repeated at the end.
const WHY_PER_STEP: usize = 8;

/// Passed and failed tests of one `cargo xtask test` run, and what failed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    pub passed: usize,
    pub failed: usize,
    /// The name of each failed step (a scenario, a host package, `lint`),
    /// so the last line says what failed even when only it is kept.
    pub failing: Vec<String>,
    /// Why each failed scenario failed (its judge's lines), printed again
    /// just before the last line: a log that keeps only its tail (CI's)
    /// still says which check broke.
    pub why: Vec<String>,
}

impl Tally {
    /// Counts `count` failed tests of the step called `what`.
    pub(crate) fn fail(&mut self, count: usize, what: &str) {
        self.failed += count;
        self.failing.push(what.to_string());
    }

    /// Counts one failed scenario called `what` and keeps its reasons.
    pub(crate) fn fail_because(&mut self, what: &str, reasons: &[String]) {
        self.fail(1, what);
        self.why.extend(reasons.iter().take(WHY_PER_STEP).map(|r| format!("{what}: {r}")));
    }

    /// The lines printed before the summary: each failed scenario's reasons.
    pub(crate) fn reasons(&self) -> impl Iterator<Item = &str> {
        self.why.iter().map(String::as_str)
    }

    /// The line that ends `cargo xtask test`: the counts, then the failed
    /// steps' names when there are any.
    pub(crate) fn summary(&self) -> String {
        let counts = format!("{} passed, {} failed", self.passed, self.failed);
        if self.failing.is_empty() { counts } else { format!("{counts} ({})", self.failing.join(" ")) }
    }
}

/// Makes captured serial or tool output safe for a terminal: drops ANSI
/// escape sequences (GRUB draws with them), carriage returns and other
/// control characters except newline and tab.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ params final-byte(0x40..=0x7e); otherwise ESC + one char.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The last `n` non-empty lines of `text`, made printable and indented.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let clean = printable(text);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    let skip = lines.len().saturating_sub(n);
    let mut out = String::new();
    if skip > 0 {
        out.push_str(&format!("    … ({skip} earlier lines)\n"));
    }
    for l in &lines[skip..] {
        out.push_str("    | ");
        out.push_str(l.trim_end());
        out.push('\n');
    }
    if lines.is_empty() {
        out.push_str("    (no output)\n");
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_escapes_and_controls() {
        assert_eq!(printable("\u{1b}[2J\u{1b}[1;1Hhello\r\n\u{7}x\u{1b}c"), "hello\nx");
    }

    #[test]
    fn tails_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), "    … (1 earlier lines)\n    | b\n    | c");
        assert_eq!(tail("", 3), "    (no output)");
    }

    #[test]
    fn tallies_name_what_failed() {
        assert_eq!(Tally { passed: 3, ..Tally::default() }.summary(), "3 passed, 0 failed");
        let mut t = Tally { passed: 3, ..Tally::default() };
        t.fail(2, "host-test oxok-xn");
        t.fail(1, "disk-fs-closes");
        assert_eq!(t.summary(), "3 passed, 3 failed (host-test oxok-xn disk-fs-closes)");
    }

    #[test]
    fn keeps_a_failed_scenarios_reasons() {
        let mut t = Tally::default();
        let many: Vec<String> = (0..20).map(|i| format!("missing {i}")).collect();
        t.fail_because("slots-hostile", &many[..2]);
        t.fail_because("big", &many);
        assert_eq!(t.summary(), "0 passed, 2 failed (slots-hostile big)");
        let why: Vec<&str> = t.reasons().collect();
        assert_eq!(why[..2], ["slots-hostile: missing 0", "slots-hostile: missing 1"]);
        assert_eq!(why.len(), 2 + WHY_PER_STEP);
    }
}
