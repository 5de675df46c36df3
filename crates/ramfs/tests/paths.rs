//! Path resolution: absolute and relative, `.`, `..`, slashes, length
//! limits, hostile traversal.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind, NAME_MAX, PATH_MAX};

fn tree() -> (Fs, Ino, Ino, Ino) {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "a").unwrap();
    let b = fs.mkdir(a, "b").unwrap();
    let f = fs.create(b, "f", Kind::File).unwrap();
    (fs, a, b, f)
}

#[test]
fn absolute_relative_dots_and_slashes() {
    let (fs, a, b, f) = tree();
    for (cwd, p, want) in [
        (ROOT, "/", ROOT),
        (ROOT, "//", ROOT),
        (ROOT, ".", ROOT),
        (ROOT, "/a/b/f", f),
        (ROOT, "a/b/f", f),
        (ROOT, "///a//b///f", f),
        (ROOT, "./a/./b/./f", f),
        (ROOT, "a/b/../b/f", f),
        (a, "b/f", f),
        (a, "/a", a),
        (b, "..", a),
        (b, "../..", ROOT),
        (b, ".", b),
        (b, "./", b),
        (b, "f", f),
        (b, "../../a/b/../../a/b/f", f),
        (f, "/a", a), // absolute paths ignore the cwd, even a file
    ] {
        assert_eq!(fs.lookup(cwd, p), Ok(want), "{p}");
    }
}

#[test]
fn dotdot_never_climbs_above_root() {
    let (fs, a, b, f) = tree();
    assert_eq!(fs.lookup(ROOT, "/.."), Ok(ROOT));
    assert_eq!(fs.lookup(ROOT, "../../../../.."), Ok(ROOT));
    assert_eq!(fs.lookup(ROOT, "/../../a/../../a"), Ok(a));
    assert_eq!(fs.lookup(b, "../../../../../../a/b/f"), Ok(f));
    let deep = "../".repeat(PATH_MAX / 3 - 1);
    assert_eq!(fs.lookup(b, &deep), Ok(ROOT));
    assert_eq!(fs.lookup(b, format!("{deep}a")), Ok(a));
    assert_eq!(fs.path_of(fs.lookup(b, "../../../..").unwrap()).unwrap(), b"/");
}

#[test]
fn trailing_slash_demands_a_directory() {
    let (mut fs, a, _b, f) = tree();
    assert_eq!(fs.lookup(ROOT, "a/"), Ok(a));
    assert_eq!(fs.lookup(ROOT, "a/b/f"), Ok(f));
    assert_eq!(fs.lookup(ROOT, "a/b/f/"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "a/b/f/."), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "a/b/f/.."), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "a/b/f/x"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "a/b/nope/"), Err(FsError::NotFound));
    assert_eq!(fs.unlink(ROOT, "a/b/f/"), Err(FsError::NotADirectory));
    assert_eq!(fs.unlink(ROOT, "a/b/nope/"), Err(FsError::NotFound));
    assert_eq!(fs.rmdir(ROOT, "a/b/f/"), Err(FsError::NotADirectory));
    assert_eq!(fs.create(ROOT, "a/g/", Kind::File), Err(FsError::IsADirectory));
    fs.create(ROOT, "a/g/", Kind::Dir).unwrap();
    fs.rmdir(ROOT, "a/g//").unwrap();
    ok(&fs);
}

#[test]
fn relative_to_a_bad_cwd() {
    let (mut fs, a, b, f) = tree();
    assert_eq!(fs.lookup(f, "x"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(f, "."), Err(FsError::NotADirectory));
    assert_eq!(fs.create(f, "x", Kind::File), Err(FsError::NotADirectory));
    let bogus = Ino::from_raw(0xdead_beef_0000_0042);
    assert_eq!(fs.lookup(bogus, "a"), Err(FsError::BadInode));
    assert_eq!(fs.lookup(bogus, "/a"), Ok(a));
    // A stale handle: b freed, its slot reused.
    fs.unlink(b, "f").unwrap();
    fs.rmdir(a, "b").unwrap();
    let b2 = fs.mkdir(a, "b2").unwrap();
    assert_eq!(b2.number(), b.number(), "slot reused");
    assert_ne!(b2, b);
    assert_eq!(fs.lookup(b, "."), Err(FsError::BadInode));
    assert_eq!(fs.mkdir(b, "x"), Err(FsError::BadInode));
    assert_eq!(fs.lookup(b2, ".."), Ok(a));
    ok(&fs);
}

#[test]
fn malformed_paths() {
    let (mut fs, _a, b, _f) = tree();
    assert_eq!(fs.lookup(ROOT, ""), Err(FsError::NotFound));
    assert_eq!(fs.create(ROOT, "", Kind::File), Err(FsError::NotFound));
    assert_eq!(fs.lookup(ROOT, "a\0/b"), Err(FsError::InvalidName));
    assert_eq!(fs.create(ROOT, "x\0", Kind::File), Err(FsError::InvalidName));
    assert_eq!(fs.create(ROOT, b"\0".as_slice(), Kind::Dir), Err(FsError::InvalidName));
    assert_eq!(fs.rename(ROOT, "a", "\0"), Err(FsError::InvalidName));
    // Names of exactly NAME_MAX bytes are fine; one more is too long.
    let max = "n".repeat(NAME_MAX);
    let over = "n".repeat(NAME_MAX + 1);
    let ino = fs.create(b, &max, Kind::File).unwrap();
    assert_eq!(fs.lookup(ROOT, format!("/a/b/{max}")), Ok(ino));
    assert_eq!(fs.create(b, &over, Kind::File), Err(FsError::TooLong));
    assert_eq!(fs.mkdir(b, &over), Err(FsError::TooLong));
    assert_eq!(fs.lookup(b, &over), Err(FsError::TooLong));
    assert_eq!(fs.rename(b, &max, &over), Err(FsError::TooLong));
    assert_eq!(fs.lookup(ROOT, format!("{over}/../a")), Err(FsError::TooLong));
    // Paths: PATH_MAX - 1 bytes is the longest accepted.
    let long_ok = format!("/{}", "/".repeat(PATH_MAX - 3) + "a");
    assert_eq!(long_ok.len(), PATH_MAX - 1);
    assert!(fs.lookup(ROOT, &long_ok).is_ok());
    let too_long = format!("/{long_ok}");
    assert_eq!(fs.lookup(ROOT, &too_long), Err(FsError::TooLong));
    assert_eq!(fs.lookup(ROOT, "/".repeat(1 << 20)), Err(FsError::TooLong));
    // Weird but legal names.
    for name in ["...", ".hidden", "..x", " ", "\u{fffd}", "a\\b", "-"] {
        let ino = fs.create(ROOT, name, Kind::File).unwrap();
        assert_eq!(fs.lookup(ROOT, format!("/{name}")), Ok(ino), "{name:?}");
    }
    let bytes: Vec<u8> = (1..=255u8).filter(|&c| c != b'/').take(NAME_MAX).collect();
    fs.create(ROOT, &bytes, Kind::File).unwrap();
    assert_eq!(fs.readdir(ROOT).unwrap().iter().filter(|e| e.name == bytes).count(), 1);
    ok(&fs);
}
