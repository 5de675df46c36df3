//! Why an ELF image was refused.

use core::fmt;

/// A reason [`crate::Elf::parse`] refused an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than an ELF64 file header (64 bytes).
    TooShort,
    /// Does not start with `\x7fELF`.
    BadMagic,
    /// Not ELFCLASS64.
    NotElf64,
    /// Not ELFDATA2LSB.
    NotLittleEndian,
    /// `e_machine` is not EM_X86_64 (62).
    NotX86_64,
    /// `e_type` is not ET_EXEC (2).
    NotExecutable,
    /// A file-header field is wrong: ELF version, `e_ehsize` or `e_phentsize`.
    BadHeader,
    /// The program header table lies (partly) outside the file, uses extended
    /// numbering, or holds more than one PT_TLS.
    BadProgramHeaders,
    /// More than [`crate::MAX_SEGMENTS`] PT_LOAD segments.
    TooManySegments,
    /// A segment's file bytes (`p_offset + p_filesz`) lie outside the file.
    SegmentOutOfFile,
    /// A segment's memory (`p_vaddr + p_memsz`) overflows or exceeds the limit.
    SegmentOutOfRange,
    /// Two PT_LOAD segments share a 4 KiB page.
    SegmentsOverlap,
    /// A segment's `p_filesz` exceeds its `p_memsz`.
    FileBiggerThanMemory,
    /// The entry point is not inside an executable PT_LOAD segment.
    EntryOutsideSegments,
    /// There is no PT_LOAD segment.
    NoSegments,
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ElfError::TooShort => "file too short for an ELF header",
            ElfError::BadMagic => "not an ELF file",
            ElfError::NotElf64 => "not a 64-bit ELF file",
            ElfError::NotLittleEndian => "not a little-endian ELF file",
            ElfError::NotX86_64 => "not an x86-64 ELF file",
            ElfError::NotExecutable => "not an ELF executable (ET_EXEC)",
            ElfError::BadHeader => "malformed ELF header",
            ElfError::BadProgramHeaders => "malformed program header table",
            ElfError::TooManySegments => "too many loadable segments",
            ElfError::SegmentOutOfFile => "segment data lies outside the file",
            ElfError::SegmentOutOfRange => "segment lies outside the allowed address range",
            ElfError::SegmentsOverlap => "loadable segments share a page",
            ElfError::FileBiggerThanMemory => "segment file size exceeds its memory size",
            ElfError::EntryOutsideSegments => "entry point is not in an executable segment",
            ElfError::NoSegments => "no loadable segments",
        };
        f.write_str(text)
    }
}
