//! Hostile and broken archives give typed errors, never panics.

use super::{build, fix_checksum, read_all};
use crate::{Archive, ArchiveError, Entry};
use alloc::vec;

/// The first error (or `None`) reading `data`.
fn first_error(data: &[u8]) -> Option<ArchiveError> {
    read_all(data).into_iter().find_map(Result::err)
}

/// A one-file archive whose header was edited by `edit` (checksum fixed).
fn edited(edit: impl FnOnce(&mut [u8])) -> alloc::vec::Vec<u8> {
    let mut data = build(&[("file", b"contents")]);
    edit(&mut data[..512]);
    fix_checksum(&mut data[..512]);
    data
}

#[test]
fn truncated_header() {
    let data = build(&[("file", b"contents")]);
    for len in [1, 100, 511] {
        assert_eq!(read_all(&data[..len]), vec![Err(ArchiveError::Truncated)]);
    }
}

#[test]
fn truncated_data() {
    let data = build(&[("file", b"contents")]);
    assert_eq!(first_error(&data[..512 + 7]), Some(ArchiveError::Truncated));
    assert_eq!(Archive::new(&data[..512 + 7]).find("file"), None);
    // A size far beyond the data (the largest 11-digit octal size).
    let huge = edited(|h| h[124..136].copy_from_slice(b"77777777777\0"));
    assert_eq!(first_error(&huge), Some(ArchiveError::Truncated));
}

#[test]
fn bad_checksum() {
    let mut data = build(&[("file", b"contents")]);
    data[0] = b'F';
    assert_eq!(first_error(&data), Some(ArchiveError::BadChecksum));
    for field in [&b"\0\0\0\0\0\0\0\0"[..], b"        ", b"zzzzzzzz", b"01234567"] {
        let mut data = build(&[("file", b"contents")]);
        data[148..156].copy_from_slice(field);
        assert_eq!(first_error(&data), Some(ArchiveError::BadChecksum), "{field:?}");
    }
}

#[test]
fn checksum_terminators_are_tolerated() {
    let data = build(&[("file", b"contents")]);
    let digits: [u8; 6] = data[148..154].try_into().unwrap();
    for tail in [&b"\0 "[..], b" \0", b"\0\0", b"  "] {
        let mut copy = data.clone();
        copy[154..156].copy_from_slice(tail);
        assert_eq!(Archive::new(&copy).find("file"), Some(&b"contents"[..]));
    }
    // Leading-space form used by some old tars: " 12345\0 " style.
    let mut copy = data.clone();
    copy[148] = b' ';
    copy[149..155].copy_from_slice(&digits);
    copy[155] = 0;
    if digits[0] == b'0' {
        assert_eq!(Archive::new(&copy).find("file"), Some(&b"contents"[..]));
    }
}

#[test]
fn bad_size() {
    for field in [
        &b"000000000010"[..], // no terminator
        b"\0\0\0\0\0\0\0\0\0\0\0\0",
        b"0000000001x\0",
        b"\x80\0\0\0\0\0\0\0\0\0\0\x08", // GNU base-256
        b"-0000000001\0",
    ] {
        let data = edited(|h| h[124..136].copy_from_slice(field));
        assert_eq!(first_error(&data), Some(ArchiveError::BadSize), "{field:?}");
    }
    let spaced = edited(|h| h[124..136].copy_from_slice(b"        10 \0"));
    assert_eq!(Archive::new(&spaced).find("file"), Some(&b"contents"[..]));
}

#[test]
fn bad_name() {
    let empty = edited(|h| h[..100].fill(0));
    assert_eq!(first_error(&empty), Some(ArchiveError::BadName));
    let not_utf8 = edited(|h| h[..4].copy_from_slice(b"f\xffle"));
    assert_eq!(first_error(&not_utf8), Some(ArchiveError::BadName));
    let prefixed = edited(|h| h[345..348].copy_from_slice(b"dir"));
    assert_eq!(first_error(&prefixed), Some(ArchiveError::BadName));
    // A full 100-byte name has no NUL and is still fine.
    let full = edited(|h| h[..100].fill(b'n'));
    let name = "n".repeat(100);
    assert_eq!(Archive::new(&full).find(&name), Some(&b"contents"[..]));
}

#[test]
fn not_regular_file() {
    for flag in [b'1', b'2', b'5', b'6', b'K', b'L', 0xff] {
        let data = edited(|h| h[156] = flag);
        assert_eq!(first_error(&data), Some(ArchiveError::NotRegularFile));
    }
    let old_style = edited(|h| h[156] = 0);
    assert_eq!(Archive::new(&old_style).find("file"), Some(&b"contents"[..]));
}

#[test]
fn missing_magic_is_tolerated() {
    // Without the magic the prefix field is not interpreted either.
    let data = edited(|h| {
        h[257..265].fill(0);
        h[345..348].copy_from_slice(b"dir");
    });
    assert_eq!(Archive::new(&data).find("file"), Some(&b"contents"[..]));
}

#[test]
fn nothing_after_an_error() {
    let mut data = build(&[("a", b"1"), ("b", b"2"), ("c", b"3")]);
    data[1024] ^= 1; // corrupt b's header
    let mut entries = Archive::new(&data).entries();
    assert_eq!(entries.next(), Some(Ok(Entry { name: "a", data: b"1" })));
    assert_eq!(entries.next(), Some(Err(ArchiveError::BadChecksum)));
    assert_eq!(entries.next(), None);
    assert_eq!(entries.next(), None);
    let archive = Archive::new(&data);
    assert_eq!(archive.find("a"), Some(&b"1"[..]));
    assert_eq!(archive.find("c"), None);
}

#[test]
fn zero_block_ends_the_archive() {
    let mut data = build(&[("a", b"1"), ("b", b"2")]);
    data[1024..1536].fill(0);
    assert_eq!(read_all(&data).len(), 1);
    assert_eq!(Archive::new(&data).find("b"), None);
}

#[test]
fn garbage_is_rejected() {
    assert_eq!(first_error(&[0xffu8; 4096]), Some(ArchiveError::BadChecksum));
    assert_eq!(first_error(&[b' '; 512]), Some(ArchiveError::BadChecksum));
}

/// A pax pad (page alignment) then the file "file": the pad header is at 0,
/// its 3072 bytes of data at 512, the file's header at 3584.
fn padded() -> alloc::vec::Vec<u8> {
    let mut data = alloc::vec::Vec::new();
    crate::append_aligned(&mut data, "file", b"contents", 4096).unwrap();
    crate::finish(&mut data);
    assert_eq!(data[156], b'x');
    data
}

#[test]
fn broken_pax_headers() {
    let data = padded();
    assert_eq!(Archive::new(&data).find("file"), Some(&b"contents"[..]));
    // Cut inside the pad's header, inside its data, and right after it.
    for (len, expect) in [(100, Some(ArchiveError::Truncated)), (2000, Some(ArchiveError::Truncated)), (3584, None)] {
        assert_eq!(first_error(&data[..len]), expect, "{len}");
        assert_eq!(Archive::new(&data[..len]).find("file"), None);
    }
    let mut bad_sum = data.clone();
    bad_sum[600] ^= 1; // pad data: fine, the records are not interpreted
    assert_eq!(Archive::new(&bad_sum).find("file"), Some(&b"contents"[..]));
    bad_sum[0] ^= 1; // pad header: checksum
    assert_eq!(first_error(&bad_sum), Some(ArchiveError::BadChecksum));
    for (field, expect) in [
        (&b"0000000001x\0"[..], ArchiveError::BadSize),
        (b"77777777777\0", ArchiveError::Truncated),
        (b"00000000000\0", ArchiveError::BadChecksum), // lands inside the pad's data
    ] {
        let mut copy = data.clone();
        copy[124..136].copy_from_slice(field);
        fix_checksum(&mut copy[..512]);
        assert_eq!(first_error(&copy), Some(expect), "{field:?}");
        assert_eq!(Archive::new(&copy).find("file"), None);
    }
    // The file after the pad is still checked.
    let mut dir = data.clone();
    dir[3584 + 156] = b'5';
    fix_checksum(&mut dir[3584..4096]);
    assert_eq!(first_error(&dir), Some(ArchiveError::NotRegularFile));
    // A pad pointing straight at the end marker ends the archive.
    let mut ends = data.clone();
    ends[3584..].fill(0);
    assert!(read_all(&ends).is_empty());
}
