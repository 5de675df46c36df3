//! `append_aligned`: file data on page boundaries, pax padding skipped.

use super::{fix_checksum, read_all};
use crate::{Archive, ArchiveError, Entry, append, append_aligned, finish};
use alloc::string::String;
use alloc::vec::Vec;
use alloc::{format, vec};

use oxok_testrng::Rng;

const PAGE: usize = 4096;

/// An archive of `files`, each appended with `append_aligned(.., align)`.
fn build_aligned(files: &[(&str, &[u8])], align: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        append_aligned(&mut out, name, data, align).expect("append_aligned");
    }
    finish(&mut out);
    out
}

/// Where `part` starts inside `whole` (it must be a sub-slice).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    let at = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    assert!(at <= whole.len() && part.len() <= whole.len() - at, "not a sub-slice");
    at
}

/// Every header in `data` as (offset, typeflag, size), read raw block by
/// block (the writer's output is trusted here), up to the end marker.
fn raw_headers(data: &[u8]) -> Vec<(usize, u8, usize)> {
    let mut headers = Vec::new();
    let mut pos = 0;
    while pos + 512 <= data.len() && data[pos..pos + 512].iter().any(|&b| b != 0) {
        let size = crate::octal::parse(&data[pos + 124..pos + 136]).expect("size") as usize;
        headers.push((pos, data[pos + 156], size));
        pos += 512 + size.next_multiple_of(512);
    }
    headers
}

/// Checks a pad entry's data is one well-formed pax `comment` record.
fn check_pad_record(record: &[u8]) {
    if record.is_empty() {
        return;
    }
    let text = core::str::from_utf8(record).expect("pax records are UTF-8");
    let (len, rest) = text.split_once(' ').expect("length, space");
    assert_eq!(len.parse::<usize>(), Ok(record.len()), "the length counts the whole record");
    assert!(rest.starts_with("comment="), "{rest:?}");
    assert!(rest.ends_with('\n'));
    assert_eq!(rest.matches('\n').count(), 1, "exactly one record");
}

/// Random printable-ASCII name of 1 to 99 bytes, unique by its index.
fn random_name(rng: &mut Rng, i: usize) -> String {
    let mut name = format!("{i}/");
    let len = 1 + rng.index(99 - name.len());
    while name.len() < len {
        name.push(char::from(b' ' + rng.below(0x5f) as u8));
    }
    name
}

/// A size at, around or between multiples of 512 and 4096.
fn random_size(rng: &mut Rng) -> usize {
    let base = *rng.pick(&[0, 512, 1024, 3072, 3584, 4096, 8192, 12288]);
    match rng.index(4) {
        0 => base,
        1 => base + 1,
        2 => base.saturating_sub(1),
        _ => rng.index(3 * PAGE),
    }
}

#[test]
fn data_starts_on_pages_and_round_trips() {
    let mut rng = Rng::new(0x0a11_9e0d);
    for _ in 0..200 {
        let count = rng.index(8);
        let names: Vec<String> = (0..count).map(|i| random_name(&mut rng, i)).collect();
        let bodies: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let size = random_size(&mut rng);
                rng.bytes(size)
            })
            .collect();
        let files: Vec<(&str, &[u8])> =
            names.iter().map(String::as_str).zip(bodies.iter().map(Vec::as_slice)).collect();
        let data = build_aligned(&files, PAGE);
        let archive = Archive::new(&data);

        let got = read_all(&data);
        assert_eq!(got.len(), files.len());
        for (entry, (name, body)) in got.iter().zip(&files) {
            let entry = entry.expect("valid");
            assert_eq!(entry, Entry { name, data: body });
            assert_eq!(offset_in(&data, entry.data) % PAGE, 0, "{name:?} holds {} bytes", body.len());
        }
        for (name, body) in &files {
            let found = archive.find(name).expect("found");
            assert_eq!(found, *body);
            assert_eq!(offset_in(&data, found) % PAGE, 0);
        }
        assert_eq!(archive.find("missing"), None);

        // Only pad entries sit between files, and each holds one record.
        let headers = raw_headers(&data);
        let pads: Vec<_> = headers.iter().filter(|h| h.1 == b'x').collect();
        assert_eq!(headers.len() - pads.len(), files.len());
        assert!(headers.iter().all(|h| h.1 == b'x' || h.1 == b'0'));
        for &&(at, _, size) in &pads {
            assert_eq!(&data[at..at + 13], b"PaxHeader/pad");
            check_pad_record(&data[at + 512..at + 512 + size]);
            // The pad ends one block before a page: the next header is there.
            assert_eq!((at + 512 + size.next_multiple_of(512) + 512) % PAGE, 0);
        }
    }
}

#[test]
fn entries_are_found_again_at_their_offsets() {
    let files: [(&str, &[u8]); 4] = [("a", b"alpha"), ("b", &[7u8; 700]), ("c", b""), ("d", &[1u8; 3584])];
    let data = build_aligned(&files, PAGE);
    let archive = Archive::new(&data);
    let offsets = super::offsets_found_again(&archive);
    // Each offset is that of the pad before the file: the reader starts at
    // a pad header and skips it.
    assert_eq!(offsets, [0, 4608, 9216, 12288]);
    // The file headers themselves work too, one block before each page.
    for (i, (name, body)) in files.iter().enumerate() {
        let header = PAGE * (i + 1) - 512;
        assert_eq!(archive.entry_at(header), Some(Entry { name, data: body }));
    }
    for bad in [1, 512, 4097, 7680 + 1, data.len() - 1024, data.len(), usize::MAX] {
        assert_eq!(archive.entry_at(bad), None, "offset {bad}");
    }
}

#[test]
fn gap_of_one_block_gets_an_empty_pad() {
    let mut out = Vec::new();
    append(&mut out, "x", &[1u8; 2048]).unwrap(); // 2560 bytes
    append(&mut out, "y", b"").unwrap(); // 3072 bytes
    append_aligned(&mut out, "z", b"zed", PAGE).unwrap();
    assert_eq!(raw_headers(&out), [(0, b'0', 2048), (2560, b'0', 0), (3072, b'x', 0), (3584, b'0', 3)]);
    assert_eq!(&out[4096..4099], b"zed");
    assert_eq!(out.len(), 4096 + 512);
    finish(&mut out);
    assert_eq!(Archive::new(&out).find("z"), Some(&b"zed"[..]));
    assert_eq!(read_all(&out).len(), 3);
}

#[test]
fn already_aligned_gets_no_pad() {
    let mut out = Vec::new();
    append(&mut out, "x", &[1u8; 3000]).unwrap(); // 3584 bytes
    append_aligned(&mut out, "y", b"why", PAGE).unwrap();
    assert_eq!(raw_headers(&out), [(0, b'0', 3000), (3584, b'0', 3)]);
    // Alignment 512 never needs a pad.
    let data = build_aligned(&[("a", b"1"), ("b", &[2u8; 513]), ("c", b"")], 512);
    assert_eq!(data, super::build(&[("a", b"1"), ("b", &[2u8; 513]), ("c", b"")]));
}

#[test]
fn gap_sizes_for_every_position_and_alignment() {
    for align in [1024, 4096, 8192, 65536] {
        for blocks in 0..align / 512 + 2 {
            let mut out = vec![0u8; blocks * 512];
            let before = out.len();
            append_aligned(&mut out, "f", b"data", align).unwrap();
            let pad = raw_headers(&out[before..]);
            let header = out.len() - 1024; // "data" is one block
            assert_eq!((header + 512) % align, 0, "align {align}, {blocks} blocks before");
            assert_eq!(pad.last().map(|h| (before + h.0, h.1)), Some((header, b'0')));
            match pad.as_slice() {
                [_] => assert_eq!(header, before),
                [(0, b'x', size), _] => {
                    assert!(header > before && header - before < align);
                    check_pad_record(&out[before + 512..before + 512 + size]);
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(Archive::new(&out[before..]).find("f"), Some(&b"data"[..]));
        }
    }
}

#[test]
fn pax_record_length_counts_its_own_digits() {
    // Records of 512 (3 digits), 1024 and 3072 (4 digits) bytes, and one
    // with 7 digits.
    for (prefix_blocks, align, record) in
        [(5, 4096, 512), (4, 4096, 1024), (0, 4096, 3072), (0, 1 << 20, (1 << 20) - 1024)]
    {
        let mut out = vec![0u8; prefix_blocks * 512];
        append_aligned(&mut out, "f", b"", align).unwrap();
        let at = prefix_blocks * 512;
        let headers = raw_headers(&out[at..]);
        assert_eq!(headers[0], (0, b'x', record));
        let data = &out[at + 512..at + 512 + record];
        check_pad_record(data);
        assert!(data.starts_with(format!("{record} comment=").as_bytes()));
    }
}

#[test]
fn bad_alignment_leaves_output_alone() {
    let mut out = vec![0u8; 512];
    for align in [0, 1, 256, 511, 513, 1000, 1536, 3 * 4096] {
        assert_eq!(append_aligned(&mut out, "f", b"d", align), Err(ArchiveError::BadAlignment), "{align}");
        assert_eq!(out, [0u8; 512]);
    }
    let mut ragged = vec![1, 2, 3];
    assert_eq!(append_aligned(&mut ragged, "f", b"d", PAGE), Err(ArchiveError::BadAlignment));
    assert_eq!(ragged, [1, 2, 3]);
    // A bad name is refused before any pad is written.
    let long = "n".repeat(100);
    for name in ["", long.as_str(), "caf\u{e9}"] {
        assert_eq!(append_aligned(&mut out, name, b"d", PAGE), Err(ArchiveError::BadName));
        assert_eq!(out, [0u8; 512]);
    }
}

#[test]
fn output_is_deterministic() {
    let files: [(&str, &[u8]); 2] = [("p", b"abc"), ("q", &[5u8; 5000])];
    assert_eq!(build_aligned(&files, PAGE), build_aligned(&files, PAGE));
}

#[test]
fn mixed_with_plain_append() {
    let mut out = Vec::new();
    append(&mut out, "plain", b"1").unwrap();
    append_aligned(&mut out, "paged", &[2u8; 100], PAGE).unwrap();
    append(&mut out, "plain2", b"3").unwrap();
    append_aligned(&mut out, "paged2", b"", PAGE).unwrap();
    finish(&mut out);
    let names: Vec<&str> = Archive::new(&out).entries().map(|e| e.unwrap().name).collect();
    assert_eq!(names, ["plain", "paged", "plain2", "paged2"]);
    for name in ["paged", "paged2"] {
        assert_eq!(offset_in(&out, Archive::new(&out).find(name).unwrap()) % PAGE, 0);
    }
}

#[test]
fn pax_headers_from_elsewhere_are_skipped() {
    // A global header, then an extended header whose records would rename
    // the file: both skipped, records not interpreted, names not checked.
    let mut out = Vec::new();
    for (flag, record) in [(b'g', &b"19 comment=global.\n"[..]), (b'x', b"16 path=renamed\n")] {
        let at = out.len();
        append(&mut out, "hdr", record).unwrap();
        out[at + 156] = flag;
        out[at..at + 100].fill(0); // an empty name is fine on a pax header
        fix_checksum(&mut out[at..at + 512]);
    }
    append(&mut out, "file", b"contents").unwrap();
    finish(&mut out);
    assert_eq!(read_all(&out), [Ok(Entry { name: "file", data: b"contents" })]);
    assert_eq!(Archive::new(&out).entry_at(0), Some(Entry { name: "file", data: b"contents" }));
}

#[test]
fn only_pax_headers_is_an_empty_archive() {
    let mut out = Vec::new();
    for _ in 0..1000 {
        let at = out.len();
        append(&mut out, "PaxHeader/pad", b"").unwrap();
        out[at + 156] = b'x';
        fix_checksum(&mut out[at..at + 512]);
    }
    assert!(read_all(&out).is_empty());
    assert_eq!(Archive::new(&out).find("PaxHeader/pad"), None);
    finish(&mut out);
    assert!(read_all(&out).is_empty());
}
