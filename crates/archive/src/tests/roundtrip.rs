//! Archives written by `append`/`finish` read back exactly.

use super::{build, read_all};
use crate::{Archive, ArchiveError, Entry, append, finish};
use alloc::vec;
use alloc::vec::Vec;

#[test]
fn empty_archive_has_no_entries() {
    let data = build(&[]);
    assert_eq!(data.len(), 1024);
    assert!(read_all(&data).is_empty());
    assert!(read_all(&[]).is_empty());
    assert_eq!(Archive::new(&data).find("x"), None);
}

#[test]
fn entries_round_trip_in_order() {
    let big: Vec<u8> = (0..1500u32).map(|i| (i * 7) as u8).collect();
    let files: [(&str, &[u8]); 4] =
        [("init", b"\x7fELF..."), ("empty", b""), ("dir/big", &big), ("exact", &[9u8; 512])];
    let data = build(&files);
    // Each entry is a header plus its data padded to 512.
    assert_eq!(data.len(), 512 * (2 + 1 + 4 + 2) + 1024);
    let got = read_all(&data);
    assert_eq!(got.len(), files.len());
    for (entry, (name, body)) in got.iter().zip(files) {
        assert_eq!(*entry, Ok(Entry { name, data: body }));
    }
    let archive = Archive::new(&data);
    assert_eq!(archive.find("dir/big"), Some(&big[..]));
    assert_eq!(archive.find("empty"), Some(&b""[..]));
    assert_eq!(archive.find("dir"), None);
    assert_eq!(archive.find("missing"), None);
}

#[test]
fn find_returns_first_of_duplicates() {
    let data = build(&[("a", b"one"), ("a", b"two")]);
    assert_eq!(Archive::new(&data).find("a"), Some(&b"one"[..]));
}

#[test]
fn unfinished_archive_ends_at_end_of_data() {
    let mut data = Vec::new();
    append(&mut data, "a", b"x").unwrap();
    assert_eq!(read_all(&data).len(), 1);
    // Without even the final data padding, the entry is still complete.
    data.truncate(513);
    assert_eq!(read_all(&data), vec![Ok(Entry { name: "a", data: b"x" })]);
}

#[test]
fn output_is_deterministic() {
    assert_eq!(build(&[("p", b"abc")]), build(&[("p", b"abc")]));
    let data = build(&[("p", b"abc")]);
    assert_eq!(&data[100..108], b"0000755\0");
    assert_eq!(&data[136..148], b"00000000000\0");
    assert_eq!(&data[257..265], b"ustar\x0000");
}

#[test]
fn append_refuses_bad_names_and_leaves_output_alone() {
    let long = "n".repeat(100);
    let ok = "n".repeat(99);
    let mut out = vec![1, 2, 3];
    for name in ["", long.as_str(), "nul\0name", "caf\u{e9}", "tab\there", "\x7f"] {
        assert_eq!(append(&mut out, name, b"d"), Err(ArchiveError::BadName), "{name:?}");
        assert_eq!(out, [1, 2, 3]);
    }
    let mut out = Vec::new();
    append(&mut out, &ok, b"d").unwrap();
    finish(&mut out);
    assert_eq!(Archive::new(&out).find(&ok), Some(&b"d"[..]));
}

#[test]
fn entries_are_found_again_at_their_offsets() {
    let files: [(&str, &[u8]); 3] = [("a", b"alpha"), ("b", &[7u8; 700]), ("c", b"")];
    let data = build(&files);
    let archive = Archive::new(&data);
    let offsets = super::offsets_found_again(&archive);
    assert_eq!(offsets, [0, 1024, 2560]);
    // Anywhere else: inside data, past the end, the end marker: nothing.
    for bad in [1, 512, 1500, data.len() - 1024, data.len(), usize::MAX] {
        assert_eq!(archive.entry_at(bad), None, "offset {bad}");
    }
}
