extern crate std;

use super::*;
use std::vec::Vec;

/// Feeds `typed` under `t`; returns the events, the lines taken, and the echo.
fn run(t: &Termios, typed: &[u8]) -> (Vec<Ready>, Vec<Vec<u8>>, Vec<u8>) {
    let mut d = Discipline::new();
    let mut echo = Vec::new();
    let mut events = Vec::new();
    let mut lines = Vec::new();
    for &b in typed {
        let mut out = |bytes: &[u8]| echo.extend_from_slice(bytes);
        if let Some(r) = d.feed(t, b, &mut out) {
            events.push(r);
            if r == Ready::Input {
                lines.push(d.line().to_vec());
                d.consume();
            }
        }
    }
    (events, lines, echo)
}

#[test]
fn enter_gives_a_new_line_and_echoes() {
    let (events, lines, echo) = run(&Termios::sane(), b"hi\r");
    assert_eq!(events, [Ready::Input]);
    assert_eq!(lines, [b"hi\n".to_vec()]);
    assert_eq!(echo, b"hi\n");
}

#[test]
fn erase_kill_and_word_erase() {
    let (_, lines, echo) = run(&Termios::sane(), b"ab\x7fc\r");
    assert_eq!(lines, [b"ac\n".to_vec()]);
    assert_eq!(echo, b"ab\x08 \x08c\n");
    let (_, lines, _) = run(&Termios::sane(), b"junk\x15ok\x08k\n");
    assert_eq!(lines, [b"ok\n".to_vec()]);
    let (_, lines, _) = run(&Termios::sane(), b"one two  \x17three\n");
    assert_eq!(lines, [b"one three\n".to_vec()]);
    // Erasing past the start does nothing.
    let (_, lines, echo) = run(&Termios::sane(), b"\x7f\x7fx\n");
    assert_eq!(lines, [b"x\n".to_vec()]);
    assert_eq!(echo, b"x\n");
}

#[test]
fn ctrl_d_ends_input_or_hands_over_a_partial_line() {
    let (events, lines, _) = run(&Termios::sane(), b"\x04");
    assert_eq!(events, [Ready::Eof]);
    assert!(lines.is_empty());
    let (events, lines, _) = run(&Termios::sane(), b"part\x04\x04");
    assert_eq!(events, [Ready::Input, Ready::Eof]);
    assert_eq!(lines, [b"part".to_vec()]);
}

#[test]
fn signal_keys_flush_the_line_and_echo() {
    let (events, lines, echo) = run(&Termios::sane(), b"abc\x03x\x1a\x1c\n");
    assert_eq!(events, [Ready::Signal(SIGINT), Ready::Signal(SIGTSTP), Ready::Signal(SIGQUIT), Ready::Input]);
    // Each signal key discarded what was typed before it.
    assert_eq!(lines, [b"\n".to_vec()]);
    assert!(echo.starts_with(b"abc^C\nx^Z\n"));
    let mut t = Termios::sane();
    t.lflag &= !ISIG;
    let (events, lines, _) = run(&t, b"a\x03\n");
    assert_eq!(events, [Ready::Input]);
    assert_eq!(lines, [b"a\x03\n".to_vec()]);
}

#[test]
fn raw_mode_hands_over_every_byte_unchanged() {
    let mut t = Termios::sane();
    t.make_raw();
    let (events, lines, echo) = run(&t, b"a\r\x03\x7f\x04");
    assert_eq!(events.len(), 5);
    assert!(events.iter().all(|e| *e == Ready::Input));
    assert_eq!(lines.concat(), b"a\r\x03\x7f\x04");
    assert!(echo.is_empty());
}

#[test]
fn long_lines_are_refused_not_cut() {
    let mut typed = std::vec![b'x'; LINE_MAX + 10];
    typed.push(b'\n');
    let (events, lines, echo) = run(&Termios::sane(), &typed);
    assert_eq!(events, [Ready::Input]);
    assert_eq!(lines[0].len(), LINE_MAX);
    assert!(lines[0].ends_with(b"x\n"));
    assert!(echo.contains(&0x07));
}

#[test]
fn termios_bytes_match_linux_layout() {
    let t = Termios::sane();
    let b = t.to_bytes();
    assert_eq!(Termios::from_bytes(&b), t);
    // c_lflag is the fourth word; c_cc[VINTR] at offset 17 (after c_line).
    assert_eq!(u32::from_le_bytes([b[12], b[13], b[14], b[15]]), t.lflag);
    assert_eq!(b[17 + VINTR], 0x03);
    assert_eq!(b[17 + VEOF], 0x04);
    assert_eq!((ICANON, ECHO, ISIG, ICRNL), (2, 8, 1, 0o400));
}
