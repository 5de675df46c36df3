//! Each check refuses the image that violates it, with its own error.

use crate::builder::*;
use oxok_elf::{Elf, ElfError};

/// The typical image after `edit`, parsed.
fn parse_edited(edit: impl FnOnce(&mut Vec<u8>)) -> Result<(), ElfError> {
    let mut f = typical();
    edit(&mut f);
    Elf::parse(&f, LIMIT).map(|_| ())
}

/// The data segment's program header offset in `typical()`.
const DATA: usize = 64 + 56;

#[test]
fn too_short() {
    let f = typical();
    for len in [0, 1, 4, 63] {
        assert_eq!(Elf::parse(&f[..len], LIMIT).unwrap_err(), ElfError::TooShort);
    }
}

#[test]
fn identity_fields() {
    assert_eq!(parse_edited(|f| f[0] = 0x7e), Err(ElfError::BadMagic));
    assert_eq!(parse_edited(|f| f[3] = b'f'), Err(ElfError::BadMagic));
    assert_eq!(parse_edited(|f| f[ehdr::CLASS] = 1), Err(ElfError::NotElf64));
    assert_eq!(parse_edited(|f| f[ehdr::CLASS] = 0), Err(ElfError::NotElf64));
    assert_eq!(parse_edited(|f| f[ehdr::DATA] = 2), Err(ElfError::NotLittleEndian));
    assert_eq!(parse_edited(|f| set16(f, ehdr::MACHINE, 3)), Err(ElfError::NotX86_64));
    assert_eq!(parse_edited(|f| set16(f, ehdr::MACHINE, 62 << 8)), Err(ElfError::NotX86_64));
    for t in [0, 1, 3, 4, 0xfe00] {
        assert_eq!(parse_edited(|f| set16(f, ehdr::TYPE, t)), Err(ElfError::NotExecutable));
    }
}

#[test]
fn header_fields() {
    assert_eq!(parse_edited(|f| f[ehdr::IDENT_VERSION] = 0), Err(ElfError::BadHeader));
    assert_eq!(parse_edited(|f| set32(f, ehdr::VERSION, 2)), Err(ElfError::BadHeader));
    assert_eq!(parse_edited(|f| set16(f, ehdr::EHSIZE, 52)), Err(ElfError::BadHeader));
    for size in [0, 32, 55, 57, 64, 0xffff] {
        assert_eq!(parse_edited(|f| set16(f, ehdr::PHENTSIZE, size)), Err(ElfError::BadHeader));
    }
}

#[test]
fn program_header_table_bounds() {
    let bad = Err(ElfError::BadProgramHeaders);
    assert_eq!(parse_edited(|f| set64(f, ehdr::PHOFF, 0x1900)), bad);
    assert_eq!(parse_edited(|f| set64(f, ehdr::PHOFF, 0x18f0)), bad);
    assert_eq!(parse_edited(|f| set64(f, ehdr::PHOFF, u64::MAX)), bad);
    assert_eq!(parse_edited(|f| set64(f, ehdr::PHOFF, u64::MAX - 55)), bad);
    assert_eq!(parse_edited(|f| set64(f, ehdr::PHOFF, 1 << 63)), bad);
    assert_eq!(parse_edited(|f| set16(f, ehdr::PHNUM, 200)), bad);
    assert_eq!(parse_edited(|f| set16(f, ehdr::PHNUM, 0xfffe)), bad);
    assert_eq!(parse_edited(|f| set16(f, ehdr::PHNUM, 0xffff)), bad, "PN_XNUM");
    // Truncating the file inside the table.
    let f = typical();
    assert_eq!(Elf::parse(&f[..64 + 56 * 2], LIMIT).unwrap_err(), ElfError::BadProgramHeaders);
}

#[test]
fn no_segments() {
    assert_eq!(parse_edited(|f| set16(f, ehdr::PHNUM, 0)), Err(ElfError::NoSegments));
    let f = image(0, &[], 64);
    assert_eq!(Elf::parse(&f, LIMIT).unwrap_err(), ElfError::NoSegments);
    let only_stack = |f: &mut Vec<u8>| {
        set32(f, ph_at(0) + phdr::TYPE, PT_GNU_STACK);
        set32(f, ph_at(1) + phdr::TYPE, 0);
    };
    assert_eq!(parse_edited(only_stack), Err(ElfError::NoSegments));
}

#[test]
fn segment_out_of_file() {
    let e = Err(ElfError::SegmentOutOfFile);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::OFFSET, 0x1801)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::FILESZ, 0x101)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::OFFSET, u64::MAX)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::FILESZ, u64::MAX)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::OFFSET, u64::MAX - 0x7f)), e);
    // Empty file data at the very end of the file is fine.
    assert_eq!(
        parse_edited(|f| {
            set64(f, DATA + phdr::OFFSET, 0x1900);
            set64(f, DATA + phdr::FILESZ, 0);
        }),
        Ok(())
    );
}

#[test]
fn file_bigger_than_memory() {
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::MEMSZ, 0xff)), Err(ElfError::FileBiggerThanMemory));
}

#[test]
fn segment_out_of_range() {
    let e = Err(ElfError::SegmentOutOfRange);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, LIMIT - 0x2fff)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, LIMIT)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, u64::MAX - 0xfff)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::MEMSZ, u64::MAX)), e);
    // Even with no limit at all, wrapping around is refused.
    let mut f = typical();
    set64(&mut f, DATA + phdr::VADDR, u64::MAX - 0x10);
    assert_eq!(Elf::parse(&f, u64::MAX).unwrap_err(), ElfError::SegmentOutOfRange);
    set64(&mut f, DATA + phdr::VADDR, u64::MAX - 0x3000);
    assert!(Elf::parse(&f, u64::MAX).is_ok());
}

#[test]
fn overlapping_segments() {
    let e = Err(ElfError::SegmentsOverlap);
    // Text ends at 0x401800: the data may not start in that page...
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, 0x401fff)), e);
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, 0x400000)), e);
    // ...nor contain the text...
    assert_eq!(
        parse_edited(|f| {
            set64(f, DATA + phdr::VADDR, 0x3ff000);
            set64(f, DATA + phdr::MEMSZ, 0x10000);
        }),
        e
    );
    // ...nor share a page even with equal permissions.
    assert_eq!(
        parse_edited(|f| {
            set32(f, DATA + phdr::FLAGS, R | X);
            set64(f, DATA + phdr::VADDR, 0x401800);
        }),
        e
    );
    assert_eq!(parse_edited(|f| set64(f, DATA + phdr::VADDR, 0x402000)), Ok(()));
}

#[test]
fn entry_outside_executable_segments() {
    let e = Err(ElfError::EntryOutsideSegments);
    assert_eq!(parse_edited(|f| set64(f, ehdr::ENTRY, 0x402800)), e, "in the RW segment");
    assert_eq!(parse_edited(|f| set64(f, ehdr::ENTRY, 0x401800)), e, "one past text");
    assert_eq!(parse_edited(|f| set64(f, ehdr::ENTRY, 0x3fffff)), e);
    assert_eq!(parse_edited(|f| set64(f, ehdr::ENTRY, u64::MAX)), e);
    assert_eq!(parse_edited(|f| set64(f, ehdr::ENTRY, 0x4017ff)), Ok(()));
    assert_eq!(parse_edited(|f| set32(f, ph_at(0) + phdr::FLAGS, R)), e, "text not executable");
}

#[test]
fn bad_tls() {
    let with_tls = |tls: Ph| image(0x400000, &[load(R | X, 0, 0x400000, 0x100, 0x100), tls], 0x100);
    let tls = Ph { kind: PT_TLS, flags: R, offset: 0x80, vaddr: 0x400080, filesz: 0x10, memsz: 0x20, align: 8 };
    assert!(Elf::parse(&with_tls(tls), LIMIT).is_ok());
    let cases = [
        (Ph { offset: 0xf8, ..tls }, ElfError::SegmentOutOfFile),
        (Ph { memsz: 0x8, ..tls }, ElfError::FileBiggerThanMemory),
        (Ph { vaddr: u64::MAX, ..tls }, ElfError::SegmentOutOfRange),
    ];
    for (bad, err) in cases {
        assert_eq!(Elf::parse(&with_tls(bad), LIMIT).unwrap_err(), err);
    }
    let two = image(0x400000, &[load(R | X, 0, 0x400000, 0x100, 0x100), tls, tls], 0x100);
    assert_eq!(Elf::parse(&two, LIMIT).unwrap_err(), ElfError::BadProgramHeaders);
}
