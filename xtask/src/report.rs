//! Counting and presenting results: the final `N passed, N failed` line and
//! readable tails of captured output.

/// Passed and failed tests of one `cargo xtask test` run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    pub passed: usize,
    pub failed: usize,
}

impl Tally {
    /// The line that ends `cargo xtask test`.
    pub(crate) fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
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
        assert_eq!(Tally { passed: 3, failed: 1 }.summary(), "3 passed, 1 failed");
    }
}
