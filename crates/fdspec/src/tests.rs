//! Specs print and parse back; malformed text is refused.

extern crate std;

use super::*;
use std::format;
use std::string::ToString;

#[test]
fn every_spec_round_trips() {
    for spec in [
        Spec::Console,
        Spec::Null,
        Spec::Pipe { side: PipeSide::Read, va: 0x4000_0000_0000 },
        Spec::Pipe { side: PipeSide::Write, va: 0x4000_0000_1000 },
        Spec::Pipe { side: PipeSide::Read, va: 0 },
        Spec::File { server: 1025, handle: 0 },
        Spec::File { server: u64::MAX, handle: u64::MAX },
    ] {
        assert_eq!(Spec::parse(&spec.to_string()), Some(spec), "{spec}");
    }
}

#[test]
fn the_text_is_what_children_have_always_read() {
    assert_eq!(Spec::Console.to_string(), "console");
    assert_eq!(Spec::Null.to_string(), "null");
    assert_eq!(Spec::Pipe { side: PipeSide::Read, va: 0x4000_0000_0000 }.to_string(), "pipe:r:0x400000000000");
    assert_eq!(Spec::File { server: 2049, handle: 3 }.to_string(), "file:2049:3");
}

#[test]
fn malformed_specs_are_refused() {
    for bad in [
        "",
        "console:",
        "console:x",
        "null:",
        "null:x",
        "pipe",
        "pipe:r",
        "pipe:x:0x1000",
        "pipe:r:1000",
        "pipe:r:0x",
        "pipe:r:0xzz",
        "pipe:r:0x1000:extra",
        "pipe:w:0x10000000000000000",
        "file",
        "file:1",
        "file:a:1",
        "file:1:-1",
        "file:1:2:3",
        "socket:1",
        "CONSOLE",
    ] {
        assert_eq!(Spec::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn kinds_route_without_parsing() {
    assert_eq!(Spec::kind_of("pipe:r:0x0"), "pipe");
    assert_eq!(Spec::kind_of("file:garbage"), "file");
    assert_eq!(Spec::kind_of("console"), "console");
    assert_eq!(Spec::kind_of(""), "");
}

#[test]
fn descriptor_variables_are_recognised_and_bounded() {
    assert!(is_fd_var("OXOK_FD0=console"));
    assert!(!is_fd_var("HOME=/"));
    assert_eq!(fd_of("OXOK_FD0", 16), Some(0));
    assert_eq!(fd_of("OXOK_FD15", 16), Some(15));
    assert_eq!(fd_of("OXOK_FD16", 16), None);
    assert_eq!(fd_of("OXOK_FD", 16), None);
    assert_eq!(fd_of("OXOK_FDx", 16), None);
    assert_eq!(fd_of("OXOK_FD-1", 16), None);
    assert_eq!(fd_of("OXOK_FSD", 16), None);
    assert_eq!(format!("{PREFIX}{}", 3), "OXOK_FD3");
}

#[test]
fn file_origin_round_trip() {
    use super::Origin;
    let o = Origin { share: 0x1234_abcd, flags: 3, path: "/dir/a:b;c.txt" };
    let text = format!("{}{}", Spec::File { server: 2049, handle: 3 }, o);
    assert_eq!(text, "file:2049:3;1234abcd:3:/dir/a:b;c.txt");
    let (base, got) = Origin::split(&text);
    assert_eq!(Spec::parse(base), Some(Spec::File { server: 2049, handle: 3 }));
    assert_eq!(got, Some(o));
}

#[test]
fn file_origin_malformed_is_none() {
    use super::Origin;
    for bad in
        ["file:1:2;", "file:1:2;0:3:/a", "file:1:2;zz:3:/a", "file:1:2;1:x:/a", "file:1:2;1:3:rel", "file:1:2;1:3"]
    {
        let (base, got) = Origin::split(bad);
        assert_eq!(base, "file:1:2", "{bad}");
        assert_eq!(got, None, "{bad}");
    }
    assert_eq!(Origin::split("file:1:2"), ("file:1:2", None));
}
