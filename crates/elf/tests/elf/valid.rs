//! Well-formed images parse and expose exactly what they describe.

use crate::builder::*;
use oxok_elf::{Elf, ElfError, Flags, MAX_SEGMENTS, Segment};

#[test]
fn typical_image_parses() {
    let f = typical();
    let elf = Elf::parse(&f, LIMIT).expect("valid");
    assert_eq!(elf.entry(), 0x400100);
    assert_eq!(elf.phnum(), 3);
    assert_eq!(elf.phent(), 56);
    let segs: Vec<Segment<'_>> = elf.segments().collect();
    assert_eq!(
        segs,
        [
            Segment {
                vaddr: 0x400000,
                mem_size: 0x1800,
                data: &f[..0x1800],
                flags: Flags { read: true, write: false, exec: true },
            },
            Segment {
                vaddr: 0x402800,
                mem_size: 0x3000,
                data: &f[0x1800..0x1900],
                flags: Flags { read: true, write: true, exec: false },
            },
        ]
    );
    assert_eq!(elf.tls(), None);
    assert_eq!(elf.tls_align(), 0);
    // No PT_PHDR: the table's address in the first segment, as Linux computes it.
    assert_eq!(elf.program_headers_vaddr(), Some(0x400040));
}

#[test]
fn pt_phdr_and_pt_tls_are_reported() {
    let f = image(
        0x400000,
        &[
            Ph { kind: PT_PHDR, flags: R, offset: 64, vaddr: 0x7000_0040, filesz: 168, memsz: 168, align: 8 },
            load(R | X, 0, 0x400000, 0x1000, 0x1000),
            Ph { kind: PT_TLS, flags: R, offset: 0x1000, vaddr: 0x401000, filesz: 0x18, memsz: 0x60, align: 64 },
            load(R | W, 0x1000, 0x401000, 0x18, 0x1000),
        ],
        0x1018,
    );
    let elf = Elf::parse(&f, LIMIT).expect("valid");
    assert_eq!(elf.program_headers_vaddr(), Some(0x7000_0040));
    let tls = elf.tls().expect("tls");
    assert_eq!((tls.vaddr, tls.mem_size, tls.data), (0x401000, 0x60, &f[0x1000..0x1018]));
    assert_eq!(tls.flags, Flags { read: true, ..Flags::default() });
    assert_eq!(elf.tls_align(), 64);
    assert_eq!(elf.segments().count(), 2);
}

#[test]
fn table_outside_loaded_bytes_has_no_address() {
    let f = image(0x400000, &[load(R | X, 0x1000, 0x400000, 0x10, 0x10)], 0x1010);
    assert_eq!(Elf::parse(&f, LIMIT).unwrap().program_headers_vaddr(), None);
}

#[test]
fn segments_may_end_exactly_at_the_limit() {
    let f = image(0x1000, &[load(R | X, 0, 0x1000, 0x100, 0x1000)], 0x100);
    assert!(Elf::parse(&f, 0x2000).is_ok());
    assert_eq!(Elf::parse(&f, 0x1fff).unwrap_err(), ElfError::SegmentOutOfRange);
    // Address 0 is allowed; the kernel picks the limit.
    let z = image(0, &[load(R | X, 0, 0, 0x100, 0x100)], 0x100);
    assert!(Elf::parse(&z, 0x100).is_ok());
}

#[test]
fn adjacent_pages_and_empty_segments_do_not_overlap() {
    let f = image(
        0x400000,
        &[
            load(R | X, 0, 0x400000, 0x800, 0x1000),
            load(R, 0x800, 0x401000, 0x10, 0x10),
            load(R | W, 0, 0x401ff0, 0, 0), // empty: occupies no page
            load(R | W, 0x800, 0x402fff, 0x1, 0x1),
        ],
        0x1000,
    );
    let elf = Elf::parse(&f, LIMIT).expect("valid");
    assert_eq!(elf.segments().count(), 4);
    assert_eq!(elf.segments().nth(2).unwrap().data, &[] as &[u8]);
}

#[test]
fn max_segments_accepted_one_more_refused() {
    let make = |n: usize| {
        let phs: Vec<Ph> = (0..n as u64).map(|i| load(R | X, 0, 0x10_0000 + i * 0x1000, 0x10, 0x10)).collect();
        image(0x10_0000, &phs, 0x100)
    };
    let ok = make(MAX_SEGMENTS);
    assert_eq!(Elf::parse(&ok, LIMIT).unwrap().segments().count(), MAX_SEGMENTS);
    assert_eq!(Elf::parse(&make(MAX_SEGMENTS + 1), LIMIT).unwrap_err(), ElfError::TooManySegments);
}

#[test]
fn many_ignored_headers_are_fine() {
    let mut phs = vec![load(R | X, 0, 0x400000, 0x100, 0x100)];
    phs.extend((0..500).map(|_| Ph {
        kind: PT_GNU_STACK,
        flags: 0,
        offset: 0,
        vaddr: 0,
        filesz: 0,
        memsz: 0,
        align: 0,
    }));
    let f = image(0x400000, &phs, 0);
    let elf = Elf::parse(&f, LIMIT).expect("valid");
    assert_eq!(elf.phnum(), 501);
    assert_eq!(elf.segments().count(), 1);
}

#[test]
fn errors_display() {
    use std::string::ToString;
    let all = [
        ElfError::TooShort,
        ElfError::BadMagic,
        ElfError::NotElf64,
        ElfError::NotLittleEndian,
        ElfError::NotX86_64,
        ElfError::NotExecutable,
        ElfError::BadHeader,
        ElfError::BadProgramHeaders,
        ElfError::TooManySegments,
        ElfError::SegmentOutOfFile,
        ElfError::SegmentOutOfRange,
        ElfError::SegmentsOverlap,
        ElfError::FileBiggerThanMemory,
        ElfError::EntryOutsideSegments,
        ElfError::NoSegments,
    ];
    let texts: std::collections::BTreeSet<String> = all.iter().map(ToString::to_string).collect();
    assert_eq!(texts.len(), all.len(), "distinct messages");
}

#[test]
fn linux_toolchain_marks_are_reported() {
    let plain = image(0x400000, &[load(R | X, 0x1000, 0x400000, 0x10, 0x10)], 0x1010);
    assert!(!Elf::parse(&plain, LIMIT).expect("valid").linux_abi());
    for kind in [3u32, 4, 0x6474_e552, 0x6474_e553] {
        let f = image(
            0x400000,
            &[
                load(R | X, 0x1000, 0x400000, 0x10, 0x10),
                Ph { kind, flags: R, offset: 0x1000, vaddr: 0x400000, filesz: 8, memsz: 8, align: 1 },
            ],
            0x1010,
        );
        assert!(Elf::parse(&f, LIMIT).expect("valid").linux_abi(), "type {kind:#x}");
    }
}
