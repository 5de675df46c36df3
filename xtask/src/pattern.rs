//! Matching scenario expectations against serial output.
//!
//! An expectation is a substring, except that `*` matches any run of
//! characters within one line (never a newline): `"env * destroyed"` matches
//! `env 3 was destroyed` but not `env 3\ndestroyed`. There is no escape for
//! a literal `*`.
//!
//! An expectation made of several patterns joined by ` <&> ` is a group:
//! each of its patterns must occur after the previous expectation, in any
//! order, each at a place of its own (two equal patterns need two
//! occurrences); the next expectation is looked for after the last of them.
//! Use it only where the order is genuinely not determined (two programs
//! running at once).

/// A match of a pattern in a text: byte range `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Match {
    pub start: usize,
    pub end: usize,
}

/// The leftmost match of `pattern` in `text` that starts at or after `from`.
pub(crate) fn find(text: &str, pattern: &str, from: usize) -> Option<Match> {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    let rest: Vec<&str> = pieces.collect();
    let mut at = from;
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    while at <= text.len() {
        let start = at + text[at..].find(first)?;
        if let Some(end) = match_rest(text, start + first.len(), &rest) {
            return Some(Match { start, end });
        }
        // Try the next occurrence of the first piece.
        at = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Matches each of `pieces` in turn after `pos`, staying within the line;
/// returns where the last one ends.
fn match_rest(text: &str, mut pos: usize, pieces: &[&str]) -> Option<usize> {
    let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    for piece in pieces {
        pos += text[pos..line_end].find(piece)?;
        pos += piece.len();
    }
    Some(pos)
}

/// Joins the patterns of an expectation matched in any order.
pub(crate) const ANY_ORDER: &str = " <&> ";

/// Finds `patterns` one after another in `text`; returns the index of the
/// first pattern that does not occur after the previous one's match. A
/// pattern with [`ANY_ORDER`] is a group (see the module documentation).
pub(crate) fn first_missing_in_order(text: &str, patterns: &[&str]) -> Option<usize> {
    let mut from = 0;
    for (i, p) in patterns.iter().enumerate() {
        match find_group(text, p, from) {
            Some(end) => from = end,
            None => return Some(i),
        }
    }
    None
}

/// Matches each member of the group `group` at or after `from`, each at a
/// start of its own (leftmost first); returns where the last match ends.
fn find_group(text: &str, group: &str, from: usize) -> Option<usize> {
    let mut used: Vec<usize> = Vec::new();
    let mut end = from;
    for member in group.split(ANY_ORDER) {
        let mut at = from;
        let m = loop {
            let m = find(text, member, at)?;
            if !used.contains(&m.start) {
                break m;
            }
            at = m.start + text[m.start..].chars().next().map_or(1, char::len_utf8);
        };
        used.push(m.start);
        end = end.max(m.end);
    }
    Some(end)
}

/// The whole line of `text` around byte offset `at`, trimmed.
pub(crate) fn line_at(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    text[start..end].trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_substrings() {
        assert_eq!(find("hello world", "world", 0), Some(Match { start: 6, end: 11 }));
        assert_eq!(find("hello world", "hello", 1), None);
        assert_eq!(find("abc", "", 0), Some(Match { start: 0, end: 0 }));
        assert_eq!(find("abc", "abcd", 0), None);
    }

    #[test]
    fn star_matches_within_a_line() {
        let text = "boot\nenv 3 was destroyed: general protection\nnext";
        assert!(find(text, "env * destroyed: general protection", 0).is_some());
        assert!(find(text, "env*destroyed", 0).is_some());
        assert!(find(text, "boot*destroyed", 0).is_none(), "must not cross lines");
        assert!(find(text, "*next", 0).is_some());
        assert!(find(text, "env 3*", 0).is_some());
        assert!(find("a1 b\na2 c", "a* c", 0).is_some(), "retries later first pieces");
        assert_eq!(find("xaybz", "a*b", 0), Some(Match { start: 1, end: 4 }));
    }

    #[test]
    fn ordered_expectations() {
        let text = "Oxok 0.1\ninit: environment 1 running\ndone";
        assert_eq!(first_missing_in_order(text, &["Oxok", "init: environment", "done"]), None);
        assert_eq!(first_missing_in_order(text, &["init", "Oxok"]), Some(1));
        assert_eq!(first_missing_in_order(text, &["Oxok", "Oxok"]), Some(1));
        assert_eq!(first_missing_in_order(text, &[]), None);
    }

    #[test]
    fn groups_match_in_any_order() {
        let g = "fair: ok <&> critical: ok <&> fair: ok";
        let a = "start\nfair: ok\ncritical: ok\nfair: ok\nend";
        let b = "start\ncritical: ok\nfair: ok\nfair: ok\nend";
        let c = "start\nfair: ok\nfair: ok\ncritical: ok\nend";
        for text in [a, b, c] {
            assert_eq!(first_missing_in_order(text, &["start", g, "end"]), None, "{text}");
        }
        // Each member needs a place of its own; all after the previous expectation.
        assert_eq!(first_missing_in_order("start\ncritical: ok\nfair: ok\nend", &["start", g]), Some(1));
        assert_eq!(first_missing_in_order("fair: ok\nstart\ncritical: ok\nfair: ok", &["start", g]), Some(1));
        // The next expectation comes after the last member, whichever it was.
        assert_eq!(first_missing_in_order(b, &[g, "start"]), Some(1));
        assert_eq!(first_missing_in_order("critical: ok\nend\nfair: ok\nfair: ok", &[g, "end"]), Some(1));
        assert_eq!(first_missing_in_order("b\na", &["a <&> b"]), None);
        assert_eq!(first_missing_in_order("b\nb", &["a <&> b"]), Some(0));
    }

    #[test]
    fn lines_and_unicode() {
        let text = "é1\nKERNEL PANIC at x\n";
        let m = find(text, "PANIC", 0).unwrap();
        assert_eq!(line_at(text, m.start), "KERNEL PANIC at x");
        assert!(find("ééx", "é*x", 0).is_some());
        assert!(find("ééx", "x", 1).is_some(), "search from inside a character");
    }
}
