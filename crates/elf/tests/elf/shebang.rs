//! `#!` lines: as Linux's `binfmt_script` reads them, refusals, and any
//! bytes without a panic.

use oxok_elf::shebang::{LINE_MAX, NoExec, parse};

fn ok(image: &str) -> (&str, Option<&str>) {
    let s = parse(image.as_bytes()).expect("a script").expect("runnable");
    (s.interpreter, s.arg)
}

#[test]
fn lines_as_linux_reads_them() {
    assert_eq!(ok("#!/bin/sh\necho hi\n"), ("/bin/sh", None));
    assert_eq!(ok("#! /bin/sh -e\n"), ("/bin/sh", Some("-e")));
    assert_eq!(ok("#!\t/usr/bin/env  python3 -u \t\nx"), ("/usr/bin/env", Some("python3 -u")));
    assert_eq!(ok("#!/bin/sh\r\n"), ("/bin/sh\r", None));
    assert_eq!(ok("#!/bin/busybox sh"), ("/bin/busybox", Some("sh")));
    assert_eq!(ok("#!/bin/sh\0junk\n"), ("/bin/sh", None));
}

#[test]
fn not_scripts_and_not_runnable() {
    assert_eq!(parse(b"\x7fELF"), None);
    assert_eq!(parse(b"#"), None);
    assert_eq!(parse(b""), None);
    assert_eq!(parse(b"#!\n/bin/sh\n"), Some(Err(NoExec)));
    assert_eq!(parse(b"#!   \t\n"), Some(Err(NoExec)));
    assert_eq!(parse(b"#!/bin/\xffsh\n"), Some(Err(NoExec)));
    // The interpreter's path cut by the limit.
    let mut long = b"#!/".to_vec();
    long.resize(LINE_MAX + 10, b'a');
    assert_eq!(parse(&long), Some(Err(NoExec)));
    // The argument cut by the limit: the part read is the argument.
    let mut cut = b"#!/bin/sh ".to_vec();
    cut.resize(LINE_MAX + 10, b'b');
    let s = parse(&cut).unwrap().unwrap();
    assert_eq!((s.interpreter, s.arg.map(str::len)), ("/bin/sh", Some(LINE_MAX - 10)));
}

#[test]
fn any_bytes_are_safe() {
    let mut rng = crate::fuzz::Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let n = (rng.next() % 300) as usize;
        let mut b: Vec<u8> =
            (0..n).map(|_| [b'#', b'!', b' ', b'\t', b'\n', b'/', b'a', 0][(rng.next() % 8) as usize]).collect();
        if rng.next().is_multiple_of(2) {
            b.splice(0..0, *b"#!");
        }
        if let Some(Ok(s)) = parse(&b) {
            assert!(!s.interpreter.is_empty() && !s.interpreter.contains([' ', '\t', '\n']));
            assert!(s.arg.is_none_or(|a| !a.is_empty() && !a.contains('\n')));
        }
    }
}
