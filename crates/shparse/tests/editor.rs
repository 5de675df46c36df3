//! The line editor: echo, line endings, erasing, limits, UTF-8, control
//! keys, escape sequences and history.

mod common;
use common::{feed_all, lines};
use oxok_shparse::{Event, History, LineEditor};

const UP: &[u8] = b"\x1b[A";
const DOWN: &[u8] = b"\x1b[B";
const ERASE: &str = "\x08 \x08";

fn line(s: &str) -> Event {
    Event::Line(s.to_string())
}

fn text(out: &[u8]) -> String {
    String::from_utf8(out.to_vec()).unwrap()
}

#[test]
fn typing_and_enter() {
    let mut ed = LineEditor::new();
    let (ev, out) = feed_all(&mut ed, b"ls -l\r");
    assert_eq!(ev, [line("ls -l")]);
    assert_eq!(out, b"ls -l\r\n");
    assert_eq!(ed.line(), "");
    // Each byte echoes itself, and nothing completes before Enter.
    let mut out = Vec::new();
    assert_eq!(ed.feed(b'x', &mut out), None);
    assert_eq!(out, b"x");
    assert_eq!(ed.line(), "x");
}

#[test]
fn line_endings() {
    assert_eq!(lines(b"a\rb\nc\r\nd\n\re"), ["a", "b", "c", "d", ""]);
    assert_eq!(lines(b"a\r\n\r\n"), ["a", ""]);
    assert_eq!(lines(b"a\n\n"), ["a", ""]);
    assert_eq!(lines(b"a\r\r"), ["a", ""]);
    assert_eq!(lines(b"\r\n"), [""]);
    // CR then something else then LF: two lines.
    assert_eq!(lines(b"a\rb\n"), ["a", "b"]);
    let mut ed = LineEditor::new();
    let (_, out) = feed_all(&mut ed, b"a\r\n");
    assert_eq!(out, b"a\r\n", "CR LF echoes one line ending");
}

#[test]
fn backspace_and_delete() {
    let mut ed = LineEditor::new();
    let (ev, out) = feed_all(&mut ed, b"ab\x7fc\x08d\r");
    assert_eq!(ev, [line("ad")]);
    assert_eq!(text(&out), format!("ab{ERASE}c{ERASE}d\r\n"));
    // Nothing to erase: no output.
    let (ev, out) = feed_all(&mut ed, b"\x7f\x08\x7f");
    assert!(ev.is_empty() && out.is_empty());
}

#[test]
fn erase_is_utf8_safe() {
    let mut ed = LineEditor::new();
    let (_, out) = feed_all(&mut ed, "aé日🦀".as_bytes());
    assert_eq!(out, "aé日🦀".as_bytes());
    for want in ["aé日", "aé", "a", ""] {
        let (_, out) = feed_all(&mut ed, b"\x7f");
        assert_eq!(text(&out), ERASE, "one erase per character");
        assert_eq!(ed.line(), want);
    }
}

#[test]
fn kill_line_and_word() {
    let mut ed = LineEditor::new();
    let (_, out) = feed_all(&mut ed, "aé c\x15".as_bytes());
    assert_eq!(ed.line(), "");
    assert_eq!(text(&out), format!("aé c{}", ERASE.repeat(4)));
    feed_all(&mut ed, b"ls -l  \x17");
    assert_eq!(ed.line(), "ls ");
    feed_all(&mut ed, b"\x17");
    assert_eq!(ed.line(), "");
    let (_, out) = feed_all(&mut ed, b"\x17\x15");
    assert!(out.is_empty());
    feed_all(&mut ed, "x 日本\x17".as_bytes());
    assert_eq!(ed.line(), "x ");
}

#[test]
fn ctrl_c_cancels() {
    let mut ed = LineEditor::new();
    let (ev, out) = feed_all(&mut ed, b"abc\x03");
    assert_eq!(ev, [Event::Cancel]);
    assert_eq!(out, b"abc^C\r\n");
    assert_eq!(ed.line(), "");
    assert!(ed.history().is_empty(), "a cancelled line is not recorded");
    assert_eq!(feed_all(&mut ed, b"d\r").0, [line("d")]);
    assert_eq!(feed_all(&mut ed, b"\x03").0, [Event::Cancel]);
}

#[test]
fn ctrl_d_is_eof_only_on_an_empty_line() {
    let mut ed = LineEditor::new();
    let (ev, out) = feed_all(&mut ed, b"\x04");
    assert_eq!(ev, [Event::Eof]);
    assert!(out.is_empty());
    let (ev, out) = feed_all(&mut ed, b"a\x04\r");
    assert_eq!(ev, [line("a")]);
    assert_eq!(out, b"a\r\n");
    assert_eq!(feed_all(&mut ed, b"a\x7f\x04").0, [Event::Eof]);
}

#[test]
fn length_limit_rings_the_bell() {
    let mut ed = LineEditor::with_limits(4, 8);
    assert_eq!(ed.max_len(), 4);
    let (ev, out) = feed_all(&mut ed, b"abcdef\r");
    // Issue 18: a line over the limit is refused whole, never cut and run.
    assert_eq!(ev, [Event::TooLong { typed: 6 }]);
    assert_eq!(out, b"abcd\x07\x07\r\n");
    assert!(ed.history().is_empty(), "a refused line is not recalled");
    // The next line starts afresh.
    assert_eq!(feed_all(&mut ed, b"ok\r").0, [line("ok")]);
    // ^C forgets the overflow too.
    assert_eq!(feed_all(&mut ed, b"abcdef\x03ab\r").0, [Event::Cancel, line("ab")]);
    // A multi-byte character that would cross the limit is refused whole.
    let mut ed = LineEditor::with_limits(5, 8);
    let (_, out) = feed_all(&mut ed, "abcdé".as_bytes());
    assert_eq!(ed.line(), "abcd");
    assert_eq!(out, b"abcd\x07");
    // After erasing there is room again.
    feed_all(&mut ed, "\x7fé".as_bytes());
    assert_eq!(ed.line(), "abcé");
    assert_eq!(LineEditor::new().max_len(), LineEditor::DEFAULT_MAX_LEN);
    let mut ed = LineEditor::new();
    let (ev, _) = feed_all(&mut ed, &[b'x'; 5000]);
    assert!(ev.is_empty());
    assert_eq!(ed.line().len(), 1024);
}

#[test]
fn invalid_utf8_is_dropped() {
    let cases: &[(&[u8], &str)] = &[
        (b"a\xffb", "ab"),
        (b"a\x80b", "ab"),
        (b"\xc0\x80x", "x"),         // overlong NUL
        (b"\xe0\x80\x80x", "x"),     // overlong
        (b"\xed\xa0\x80x", "x"),     // surrogate
        (b"\xf4\x90\x80\x80x", "x"), // above U+10FFFF
        (b"\xf5\x80x", "x"),
        (b"\xe2\x82A", "A"), // truncated, then ASCII survives
        (b"\xe2\xe2\x82\xac", "€"),
        (b"\xc3", ""),
        (b"\xc2\x85\xc2\x9fz", "z"), // C1 controls
        (b"\xc3\xa9", "é"),
    ];
    for &(input, want) in cases {
        let mut ed = LineEditor::new();
        let (_, out) = feed_all(&mut ed, input);
        assert_eq!(ed.line(), want, "{input:?}");
        assert_eq!(out, want.as_bytes(), "{input:?}");
    }
    // A partial character does not survive Enter.
    assert_eq!(lines(b"a\xe2\x82\rb\r"), ["a", "b"]);
    // Backspace drops a partial character, not the one before it.
    let mut ed = LineEditor::new();
    feed_all(&mut ed, b"ab\xe2\x82\x7f");
    assert_eq!(ed.line(), "a");
}

#[test]
fn control_bytes_are_ignored() {
    let mut ed = LineEditor::new();
    let mut input: Vec<u8> = (0u8..0x20).filter(|b| ![3, 4, 8, 0x0a, 0x0d, 0x15, 0x17, 0x1b].contains(b)).collect();
    input.extend_from_slice(b"ok\0\t");
    let (ev, out) = feed_all(&mut ed, &input);
    assert!(ev.is_empty());
    assert_eq!(ed.line(), "ok");
    assert_eq!(out, b"ok");
}

#[test]
fn escape_sequences_are_swallowed() {
    // Right, left, Ctrl-left, Delete, F5, Home (SS3).
    let mut ed = LineEditor::new();
    let (ev, out) = feed_all(&mut ed, b"a\x1b[C\x1b[D\x1b[1;5D\x1b[3~\x1b[15~\x1bOHb");
    assert!(ev.is_empty());
    assert_eq!(ed.line(), "ab");
    assert_eq!(out, b"ab");
    // ESC followed by an ordinary key: the key counts (Alt+x).
    let mut ed = LineEditor::new();
    feed_all(&mut ed, b"\x1bx");
    assert_eq!(ed.line(), "x");
    // A control byte aborts a sequence and counts as itself.
    assert_eq!(lines(b"ab\x1b[\r"), ["ab"]);
    assert_eq!(lines(b"ab\x1b[12\r"), ["ab"]);
    assert_eq!(lines(b"ab\x1b\r"), ["ab"]);
    assert_eq!(lines(b"ab\x1bO\r"), ["ab"]);
    let mut ed = LineEditor::new();
    assert_eq!(feed_all(&mut ed, b"x\x1b[\x03").0, [Event::Cancel]);
    // A long parameter string is swallowed whole.
    let mut input = b"\x1b[".to_vec();
    input.extend(std::iter::repeat_n(b'1', 10_000));
    input.extend_from_slice(b"Cz\r");
    assert_eq!(lines(&input), ["z"]);
    // ESC ESC [ C: the second ESC starts the sequence.
    assert_eq!(lines(b"\x1b\x1b[Cq\r"), ["q"]);
    // UTF-8 interrupted by an escape sequence is dropped.
    assert_eq!(lines(b"\xe2\x1b[Cy\r"), ["y"]);
}

#[test]
fn history_up_and_down() {
    let mut ed = LineEditor::new();
    feed_all(&mut ed, b"one\rtwo\r");
    let (_, out) = feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "two");
    assert_eq!(out, b"two");
    let (_, out) = feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "one");
    assert_eq!(text(&out), format!("{}one", ERASE.repeat(3)));
    let (_, out) = feed_all(&mut ed, UP);
    assert_eq!((ed.line(), out.as_slice()), ("one", &b"\x07"[..]), "bell at the oldest");
    feed_all(&mut ed, DOWN);
    assert_eq!(ed.line(), "two");
    let (_, out) = feed_all(&mut ed, DOWN);
    assert_eq!(ed.line(), "");
    assert_eq!(text(&out), ERASE.repeat(3));
    let (_, out) = feed_all(&mut ed, DOWN);
    assert!(out.is_empty(), "down past the draft does nothing");
    // SS3 arrows and parameters work too.
    feed_all(&mut ed, b"\x1bOA");
    assert_eq!(ed.line(), "two");
    feed_all(&mut ed, b"\x1b[1;2A");
    assert_eq!(ed.line(), "one");
}

#[test]
fn history_keeps_the_draft_and_records_edits() {
    let mut ed = LineEditor::new();
    feed_all(&mut ed, b"one\r");
    let (_, out) = feed_all(&mut ed, b"dr");
    assert_eq!(out, b"dr");
    let (_, out) = feed_all(&mut ed, UP);
    assert_eq!(text(&out), format!("{}one", ERASE.repeat(2)));
    feed_all(&mut ed, DOWN);
    assert_eq!(ed.line(), "dr");
    // Recall, edit, enter: the edited line is recorded; the old one stays.
    feed_all(&mut ed, b"\x15");
    let (ev, _) = feed_all(&mut ed, b"\x1b[A\x7fe!\r");
    assert_eq!(ev, [line("one!")]);
    assert_eq!(ed.history().iter().collect::<Vec<_>>(), ["one", "one!"]);
    // Browsing ends with the line: Up starts from the newest again.
    feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "one!");
    feed_all(&mut ed, b"\x03");
    feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "one!");
}

#[test]
fn history_with_nothing_in_it() {
    let mut ed = LineEditor::new();
    let (_, out) = feed_all(&mut ed, UP);
    assert_eq!(out, b"\x07");
    let (_, out) = feed_all(&mut ed, DOWN);
    assert!(out.is_empty());
    let mut ed = LineEditor::with_limits(16, 0);
    feed_all(&mut ed, b"a\r");
    assert!(ed.history().is_empty());
    assert_eq!(feed_all(&mut ed, UP).1, b"\x07");
}

#[test]
fn recalled_lines_respect_the_limit() {
    let mut ed = LineEditor::with_limits(4, 4);
    ed.history_mut().push("abcdé");
    ed.history_mut().push("abcé");
    feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "abc", "é would end past byte 4");
    feed_all(&mut ed, UP);
    assert_eq!(ed.line(), "abcd");
}

#[test]
fn history_bookkeeping() {
    let mut h = History::new(3);
    for l in ["a", "", "b", "b", "c", "d", "c"] {
        h.push(l);
    }
    assert_eq!(h.iter().collect::<Vec<_>>(), ["c", "d", "c"]);
    assert_eq!((h.recent(0), h.recent(2), h.recent(3), h.recent(usize::MAX)), (Some("c"), Some("c"), None, None));
    assert_eq!(h.len(), 3);
    h.clear();
    assert!(h.is_empty());
    let mut ed = LineEditor::new();
    feed_all(&mut ed, b"x\r\rx\ry\r");
    assert_eq!(ed.history().iter().collect::<Vec<_>>(), ["x", "y"]);
}

#[test]
fn redraw_writes_the_line() {
    let mut ed = LineEditor::new();
    feed_all(&mut ed, "ré".as_bytes());
    let mut out = Vec::new();
    ed.redraw(&mut out);
    assert_eq!(out, "ré".as_bytes());
    assert_eq!(LineEditor::default().line(), "");
}
