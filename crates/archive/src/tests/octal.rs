//! Octal field parsing and formatting.

use crate::octal::{format, parse};

#[test]
fn parses_terminated_fields() {
    assert_eq!(parse(b"0000755\0"), Some(0o755));
    assert_eq!(parse(b"000644 \0"), Some(0o644));
    assert_eq!(parse(b"  17 "), Some(0o17));
    assert_eq!(parse(b"7\0garbage"), Some(7));
}

#[test]
fn rejects_malformed_fields() {
    assert_eq!(parse(b""), None);
    assert_eq!(parse(b"\0\0\0"), None);
    assert_eq!(parse(b"   "), None);
    assert_eq!(parse(b"0000008\0"), None);
    assert_eq!(parse(b"12345678901"), None, "no terminator");
    assert_eq!(parse(b"-1\0"), None);
    assert_eq!(parse(&[0x80, 0, 0, 0, 0, 0, 0, 1]), None, "base-256");
    // 23 octal digits overflow a u64.
    assert_eq!(parse(b"77777777777777777777777\0"), None);
    assert_eq!(parse(b"1777777777777777777777\0"), Some(u64::MAX));
}

#[test]
fn formats_and_refuses_overflow() {
    let mut f = [0xffu8; 8];
    assert_eq!(format(&mut f, 0o755), Some(()));
    assert_eq!(&f, b"0000755\0");
    let mut g = [0xffu8; 4];
    assert_eq!(format(&mut g, 0o777), Some(()));
    assert_eq!(format(&mut g, 0o1000), None);
    assert_eq!(&g, b"777\0", "unchanged on overflow");
    let mut wide = [0u8; 30];
    assert_eq!(format(&mut wide, u64::MAX), Some(()));
    assert_eq!(parse(&wide), Some(u64::MAX));
    assert_eq!(format(&mut [], 0), None);
}
