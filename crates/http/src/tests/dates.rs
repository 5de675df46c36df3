use crate::date::{format, parse};

#[test]
fn the_three_forms() {
    assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
    assert_eq!(parse(b"Sunday, 06-Nov-94 08:49:37 GMT"), Some(784_111_777));
    assert_eq!(parse(b"Sun Nov  6 08:49:37 1994"), Some(784_111_777));
    assert_eq!(parse(b"Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
}

#[test]
fn formats_rfc_example() {
    assert_eq!(&format(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(&format(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(&format(951_782_400), b"Tue, 29 Feb 2000 00:00:00 GMT");
    assert_eq!(&format(u64::MAX), b"Fri, 31 Dec 9999 23:59:59 GMT");
}

#[test]
fn round_trip_many_times() {
    let mut t = 0u64;
    while t < 253_402_300_799 {
        let f = format(t);
        assert_eq!(parse(&f), Some(t), "{}", core::str::from_utf8(&f).unwrap_or("?"));
        t += 7_777_777 + t / 3;
    }
}

#[test]
fn malformed_dates() {
    for d in [
        &b""[..],
        b"Sun, 31 Feb 1994 08:49:37 GMT",
        b"Sun, 06 Nov 1994 24:49:37 GMT",
        b"Sun, 06 Nov 1994 08:60:37 GMT",
        b"Sun, 06 Foo 1994 08:49:37 GMT",
        b"Xyz, 06 Nov 1994 08:49:37 GMT",
        b"Sun, 06 Nov 1994 08:49:37 UTC",
        b"Sun, 06 Nov 1969 08:49:37 GMT",
        b"Sun, 29 Feb 1900 08:49:37 GMT",
        b"Sun Nov  6 08:49:37 94",
        b"Funday, 06-Nov-94 08:49:37 GMT",
    ] {
        assert_eq!(parse(d), None, "{:?}", core::str::from_utf8(d));
    }
    assert_eq!(parse(b"Tue, 29 Feb 2000 00:00:00 GMT"), Some(951_782_400));
}
